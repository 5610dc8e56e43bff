//! The pure S-Net examples (`examples/lang/*/` with `input.xml` and `expected.xml`) run
//! on the `seq` reference engine and produce the hand-computed expected output: a check
//! of the lowering (and of the expected files) independent of `snet run`.
//!
//! The XML here is the simple layout those files use (one element per line); the real
//! reader lives in `snet-io`.

use snet_core::value::text::{parse_value, value_to_text};
use snet_core::{BoxTable, Engine, Record, RunOptions, SeqEngine};
use std::path::Path;

fn attr<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("{name}=\"");
    let start = line.find(&key)? + key.len();
    let len = line[start..].find('"')?;
    Some(&line[start..start + len])
}

fn content(line: &str) -> &str {
    let start = line.find('>').map_or(0, |i| i + 1);
    let end = line.rfind("</").unwrap_or(line.len());
    &line[start..end]
}

/// Records of a file as (kind, label, text) lists, in file order.
fn read(path: &Path) -> Vec<Vec<(char, String, String)>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut recs = Vec::new();
    let mut cur: Option<Vec<(char, String, String)>> = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with("<record") && line.contains("type=\"data\"") {
            cur = Some(Vec::new());
        } else if line.starts_with("</record") {
            recs.extend(cur.take());
        } else if let Some(r) = cur.as_mut() {
            let kind = if line.starts_with("<field") {
                'f'
            } else if line.starts_with("<tag") {
                't'
            } else if line.starts_with("<btag") {
                'b'
            } else {
                continue;
            };
            let label = attr(line, "label").unwrap().to_owned();
            r.push((kind, label, content(line).trim().to_owned()));
        }
    }
    recs
}

fn to_record(r: &[(char, String, String)]) -> Record {
    let mut rec = Record::new();
    for (k, l, v) in r {
        rec = match k {
            'f' => rec.with_field(l, parse_value(v.as_bytes()).unwrap().0),
            't' => rec.with_tag(l, v.parse().unwrap()),
            _ => rec.with_btag(l, v.parse().unwrap()),
        };
    }
    rec
}

fn canon_expected(r: &[(char, String, String)]) -> String {
    let mut parts: Vec<String> = r.iter().map(|(k, l, v)| format!("{k}:{l}={v}")).collect();
    parts.sort();
    parts.join(" ")
}

fn canon_record(rec: &Record) -> String {
    let mut parts = Vec::new();
    for (l, f) in rec.fields() {
        let v = f
            .as_ref()
            .map(|v| String::from_utf8_lossy(&value_to_text(v)).into_owned())
            .unwrap_or_default();
        parts.push(format!("f:{}={v}", l.name()));
    }
    for (l, v) in rec.tags() {
        parts.push(format!("t:{}={v}", l.name()));
    }
    for (l, v) in rec.btags() {
        parts.push(format!("b:{}={v}", l.name()));
    }
    parts.sort();
    parts.join(" ")
}

/// Runs `net` on `input` with the seq engine; the outputs in canonical form.
fn run_seq(net: &snet_core::Net, boxes: &BoxTable, input: Vec<Record>) -> Vec<String> {
    let mut output: Vec<Record> = Vec::new();
    SeqEngine
        .run(
            net,
            boxes,
            &mut input.into_iter().fuse(),
            &mut output,
            &RunOptions::default(),
        )
        .unwrap();
    output.iter().map(canon_record).collect()
}

#[test]
fn pure_examples_give_their_expected_output_on_seq() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/lang");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("input.xml").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 20, "only {} pure examples", dirs.len());
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let prog = dir.join(format!("{name}.snet"));
        let src = std::fs::read_to_string(&prog).unwrap();
        let compiled = snet_lang::compile_str(&format!("{name}.snet"), &src)
            .unwrap_or_else(|d| panic!("{}", d.render()));
        let input: Vec<Record> = read(&dir.join("input.xml"))
            .iter()
            .map(|r| to_record(r))
            .collect();
        let mut output: Vec<Record> = Vec::new();
        let run = SeqEngine.run(
            &compiled.net,
            &BoxTable::new(),
            &mut input.into_iter().fuse(),
            &mut output,
            &RunOptions::default(),
        );
        if let Err(e) = run {
            failures.push(format!("{name}: run failed: {e}"));
            continue;
        }
        let mut got: Vec<String> = output.iter().map(canon_record).collect();
        let mut want: Vec<String> = read(&dir.join("expected.xml"))
            .iter()
            .map(|r| canon_expected(r))
            .collect();
        if !src.starts_with("// deterministic") {
            got.sort();
            want.sort();
        }
        if got != want {
            failures.push(format!("{name}:\n  got  {got:?}\n  want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn pass_through_labels_come_back_on_seq() {
    use snet_core::{Arg, BoxFailure, Emitter, Value};
    use std::sync::Arc;
    let src = "<metadata><default><interface value=\"C4SNet\"/></default></metadata>
        net p { box f((a =, <t>=, c) -> (b) | (a, x)); } connect f;";
    let c = snet_lang::compile_str("p.snet", src).unwrap_or_else(|d| panic!("{}", d.render()));
    let mut boxes = BoxTable::new();
    // f(a, t, c): emits {b = c} and {a = 70, x = t}.
    let f = |args: snet_core::Args, out: &mut dyn Emitter| -> Result<(), BoxFailure> {
        let (Arg::Field(_), Arg::Tag(t), Arg::Field(cv)) = (&args[0], &args[1], &args[2]) else {
            return Err(BoxFailure("bad arguments".into()));
        };
        out.emit(1, snet_core::args![Arg::Field(cv.clone())])?;
        out.emit(
            2,
            snet_core::args![
                Arg::Field(Some(Value::int(70))),
                Arg::Field(Some(Value::int(*t))),
            ],
        )
    };
    boxes.insert("f", Arc::new(f));
    let input = vec![Record::new()
        .with_field("a", Value::int(1))
        .with_tag("t", 5)
        .with_field("c", Value::int(3))
        .with_tag("z", 9)];
    let got = run_seq(&c.net, &boxes, input);
    assert_eq!(
        got,
        vec![
            "f:a=(int)1 f:b=(int)3 t:t=5 t:z=9".to_owned(),
            "f:a=(int)70 f:x=(int)5 t:t=5 t:z=9".to_owned(),
        ]
    );
}

#[test]
fn pass_through_boxes_keep_binding_tags_of_their_types() {
    // A box with a pass-through field and a binding tag in its input and in one output
    // variant: the binding tag reaches the box and the variant that names it keeps it;
    // the pass-through field comes back on both outputs, the tag <t> is inherited.
    use snet_core::{Arg, BoxFailure, Emitter, Value};
    use std::sync::Arc;
    let src = "<metadata><default><interface value=\"C4SNet\"/></default></metadata>
        net p { box f((a =, <#k>) -> (b, <#k>) | (b)); } connect f;";
    let c = snet_lang::compile_str("p.snet", src).unwrap_or_else(|d| panic!("{}", d.render()));
    assert!(c.warnings.is_empty(), "{}", c.warnings.render());
    let mut boxes = BoxTable::new();
    // f(a, k): emits {b = a + k, <#k> = k + 1} and {b = k}.
    let f = |args: snet_core::Args, out: &mut dyn Emitter| -> Result<(), BoxFailure> {
        let (Arg::Field(Some(a)), Arg::Tag(k)) = (&args[0], &args[1]) else {
            return Err(BoxFailure("bad arguments".into()));
        };
        let a = a.as_i32().ok_or_else(|| BoxFailure("a is no int".into()))?;
        out.emit(
            1,
            snet_core::args![Arg::Field(Some(Value::int(a + k))), Arg::Tag(k + 1)],
        )?;
        out.emit(2, snet_core::args![Arg::Field(Some(Value::int(*k)))])
    };
    boxes.insert("f", Arc::new(f));
    let input = vec![Record::new()
        .with_field("a", Value::int(5))
        .with_btag("k", 2)
        .with_tag("t", 9)];
    let got = run_seq(&c.net, &boxes, input);
    assert_eq!(
        got,
        vec![
            "b:k=3 f:a=(int)5 f:b=(int)7 t:t=9".to_owned(),
            "f:a=(int)5 f:b=(int)2 t:t=9".to_owned(),
        ]
    );
}
