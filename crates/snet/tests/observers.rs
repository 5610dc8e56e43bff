//! Observers (spec §13.1) on every engine: file observers report exactly the records
//! that entered / left a box or net, in order and in the §13.1 format; socket
//! observers reach a loopback client, interactive ones wait for its acknowledgements;
//! observers never change the output.

use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Program, Record, RunOptions, Value};
use snet_core::BoxFailure;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

fn inc(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    let a = i.int("A").ok_or_else(|| BoxFailure("no A".into()))?;
    o.emit(1, vec![Arg::int(a + 1)])
}

/// `split2`: {A} → {A} and {A+100} (two records per call, so order shows).
fn split2(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    let a = i.int("A").ok_or_else(|| BoxFailure("no A".into()))?;
    o.emit(1, vec![Arg::int(a)])?;
    o.emit(1, vec![Arg::int(a + 100)])
}

fn program(metadata: &str) -> Program {
    let src = format!(
        "{metadata}\nnet obs {{ box inc((A) -> (A)); box split2((A) -> (A)); }}\n\
         connect [{{A}} -> {{A, <k=1>}}] .. inc .. split2 .. [{{A, <k>}} -> {{A, <k=k+1>}}];"
    );
    let mut p = Program::from_source("obs.snet", &src).unwrap_or_else(|e| panic!("{e}"));
    p.bind("inc", inc).unwrap();
    p.bind("split2", split2).unwrap();
    p
}

fn inputs(n: i32) -> Vec<Record> {
    (0..n)
        .map(|i| Record::new().with_field("A", Value::int(i)))
        .collect()
}

/// `(oid, position, type, body)` of each report of an observer file or stream.
fn reports(text: &str) -> Vec<(u32, String, String, String)> {
    let mut out = Vec::new();
    for doc in text
        .split("<?xml version=\"1.0\"?>\n")
        .filter(|d| !d.is_empty())
    {
        let attr = |name: &str| {
            let k = format!(" {name}=\"");
            let s = doc.find(&k).unwrap_or_else(|| panic!("no {name} in {doc}")) + k.len();
            doc[s..s + doc[s..].find('"').unwrap()].to_owned()
        };
        assert!(
            doc.starts_with("<observer xmlns=\"snet-home.org\" oid=\""),
            "{doc}"
        );
        assert!(doc.ends_with("</record>\n</observer>\n"), "{doc}");
        let body = doc[doc.find("<record").unwrap()..].to_owned();
        out.push((
            attr("oid").parse().unwrap(),
            attr("position"),
            attr("type"),
            body,
        ));
    }
    out
}

fn field_record(a: i32, k: Option<i32>) -> String {
    let tag = k.map_or(String::new(), |k| format!("<tag label=\"k\" >{k}</tag>\n"));
    format!(
        "<record type=\"data\" mode=\"textual\" >\n<field label=\"A\" interface=\"C4SNet\" >(int){a}</field>\n{tag}</record>\n</observer>\n"
    )
}

fn workers(engine: EngineKind) -> &'static [usize] {
    if engine == EngineKind::Seq {
        &[1]
    } else {
        &[1, 2]
    }
}

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("snet-observers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn file_observer_md(file: &Path, which: &str) -> String {
    format!(
        "<metadata><box name=\"split2\"><observer /><observer_type value=\"{which}\"/>\
         <observer_data value=\"allvalues\"/><observer_file value=\"{}\"/></box></metadata>",
        file.display()
    )
}

#[test]
fn a_file_observer_on_a_box_reports_exactly_what_entered_and_left_it_in_order() {
    const N: i32 = 300;
    for &engine in EngineKind::ALL {
        for &w in workers(engine) {
            let file = tmp(&format!("box-{}-{w}.xml", engine.name()));
            let p = program(&file_observer_md(&file, "both"));
            let mut src = inputs(N).into_iter().fuse();
            let mut out: Vec<Record> = Vec::new();
            p.run(engine, &mut src, &mut out, &RunOptions::new(w))
                .unwrap();
            assert_eq!(out.len(), 2 * N as usize);
            let text = std::fs::read_to_string(&file).unwrap();
            let reps = reports(&text);
            let before: Vec<&String> = reps
                .iter()
                .filter(|r| r.2 == "before")
                .map(|r| &r.3)
                .collect();
            let after: Vec<&String> = reps
                .iter()
                .filter(|r| r.2 == "after")
                .map(|r| &r.3)
                .collect();
            // Entering split2: inc's outputs, input order (a FIFO path), tag k=1.
            let want_before: Vec<String> = (0..N).map(|i| field_record(i + 1, Some(1))).collect();
            assert_eq!(
                before,
                want_before.iter().collect::<Vec<_>>(),
                "[{} -w {w}]",
                engine.name()
            );
            // Leaving split2: two records per call, in emission order.
            let want_after: Vec<String> = (0..N)
                .flat_map(|i| [field_record(i + 1, Some(1)), field_record(i + 101, Some(1))])
                .collect();
            assert_eq!(
                after,
                want_after.iter().collect::<Vec<_>>(),
                "[{} -w {w}]",
                engine.name()
            );
            for r in &reps {
                assert_eq!(r.1, "split2");
                assert_eq!(
                    r.0,
                    if r.2 == "before" { 0 } else { 1 },
                    "oids in creation order"
                );
            }
        }
    }
}

#[test]
fn a_net_observer_with_labels_only_reports_the_entry_and_exit_of_the_net() {
    for &engine in EngineKind::ALL {
        let file = tmp(&format!("net-{}.xml", engine.name()));
        let md = format!(
            "<metadata><netdefault><observer /><observer_type value=\"both\"/>\
             <observer_data value=\"labels\"/><observer_code value=\"here\"/>\
             <observer_file value=\"{}\"/></netdefault></metadata>",
            file.display()
        );
        let p = program(&md);
        let out = p.run_records(engine, inputs(5)).unwrap();
        assert_eq!(out.len(), 10);
        let text = std::fs::read_to_string(&file).unwrap();
        let reps = reports(&text);
        assert_eq!(reps.iter().filter(|r| r.2 == "before").count(), 5);
        assert_eq!(reps.iter().filter(|r| r.2 == "after").count(), 10);
        assert!(reps.iter().all(|r| r.1 == "obs"));
        assert!(text.contains(" code=\"here\" >"), "{text}");
        let entering = "<record type=\"data\" mode=\"textual\" >\n<field label=\"A\" />\n</record>\n</observer>\n";
        let leaving = "<record type=\"data\" mode=\"textual\" >\n<field label=\"A\" />\n<tag label=\"k\" />\n</record>\n</observer>\n";
        for r in &reps {
            assert_eq!(r.3, if r.2 == "before" { entering } else { leaving });
        }
    }
}

#[test]
fn an_interactive_socket_observer_waits_for_each_acknowledgement() {
    for &engine in EngineKind::ALL {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // The client: reads each report, answers it, and keeps them.
        let client = std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            let mut w = s.try_clone().unwrap();
            let mut r = BufReader::new(s);
            let mut text = String::new();
            let mut line = String::new();
            while r.read_line(&mut line).unwrap() > 0 {
                text.push_str(&line);
                if line == "</observer>\n" {
                    let oid = reports(&text).last().unwrap().0;
                    // Sometimes with the optional prolog, once in two writes.
                    write!(w, "<?xml version=\"1.0\"?>\n<observer ").unwrap();
                    w.flush().unwrap();
                    writeln!(w, "oid=\"{oid}\"/>").unwrap();
                }
                line.clear();
            }
            text
        });
        let md = format!(
            "<metadata><box name=\"inc\"><observer /><observer_interactive value=\"true\"/>\
             <observer_port value=\"{port}\"/></box></metadata>"
        );
        let p = program(&md);
        let out = p.run_records(engine, inputs(20)).unwrap();
        assert_eq!(out.len(), 40);
        drop(p);
        let text = client.join().unwrap();
        let reps = reports(&text);
        assert_eq!(reps.len(), 20, "[{}]", engine.name());
        for (i, r) in reps.iter().enumerate() {
            assert_eq!((r.0, r.1.as_str(), r.2.as_str()), (0, "inc", "after"));
            // tagvalues: labels and tags, no field values.
            assert_eq!(
                r.3,
                "<record type=\"data\" mode=\"textual\" >\n<field label=\"A\" />\n<tag label=\"k\" >1</tag>\n</record>\n</observer>\n",
                "report {i}"
            );
        }
    }
}

#[test]
fn an_unreachable_socket_observer_does_not_stop_the_run() {
    // A port nobody listens on: bind, note the port, close.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let md = format!(
        "<metadata><boxdefault><observer /><observer_port value=\"{port}\"/></boxdefault></metadata>"
    );
    for &engine in EngineKind::ALL {
        let p = program(&md);
        let out = p.run_records(engine, inputs(7)).unwrap();
        assert_eq!(out.len(), 14);
    }
}

#[test]
fn observers_are_nodes_only_where_declared() {
    let plain = program("");
    assert!(!plain
        .net()
        .nodes
        .iter()
        .any(|n| matches!(n.kind, snet_core::NodeKind::Observe(_))));
    let file = tmp("count.xml");
    let both = program(&file_observer_md(&file, "both"));
    let n = both
        .net()
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, snet_core::NodeKind::Observe(_)))
        .count();
    assert_eq!(n, 2);
}
