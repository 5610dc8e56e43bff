//! Regressions of the hostile test campaign (issue 24) that concern the `snet` binary
//! and the run path: bad arguments, outputs that cannot be written, input that is not
//! records, long chains, box error messages. Each test failed before its fix.

use snet::{BoxInput, BoxOutput, EngineKind, Program, Record};
use snet_core::BoxFailure;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn tmp(name: &str, contents: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("snet-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

fn snet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_snet"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Runs `snet ARGS` with standard output (or error) on `/dev/full`.
fn snet_to_full(args: &[&str], stderr_full: bool) -> Output {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let mut c = Command::new(env!("CARGO_BIN_EXE_snet"));
    c.args(args).stdin(Stdio::null());
    if stderr_full {
        c.stderr(full()).stdout(Stdio::piped());
    } else {
        c.stdout(full()).stderr(Stdio::piped());
    }
    c.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const HEAD: &str = "<?xml version=\"1.0\" ?>\n";
const TERM: &str = "<record type=\"terminate\" />\n";

fn rec(n: i32) -> String {
    format!("<record xmlns=\"snet-home.org\" type=\"data\" mode=\"textual\"><tag label=\"n\">{n}</tag></record>\n")
}

#[test]
fn a_huge_worker_count_is_a_usage_error_not_a_panic() {
    let prog = tmp("w.snet", b"net w connect [{<n>} -> {<n=n+1>}];");
    let input = tmp("w.xml", format!("{HEAD}{}{TERM}", rec(1)).as_bytes());
    for engine in ["front", "lpel", "threads"] {
        let out = snet(&[
            "run",
            prog.to_str().unwrap(),
            "-i",
            input.to_str().unwrap(),
            "--engine",
            engine,
            "-w",
            "100000",
        ]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{engine}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("at most 1024 workers"),
            "{}",
            text(&out.stderr)
        );
    }
    let out = snet(&["bench", "deep", "10", "-w", "100000"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn a_full_standard_output_or_error_is_an_error_not_a_panic() {
    let prog = tmp("full.snet", b"net full connect [{<n>} -> {<n=n+1>}];");
    let p = prog.to_str().unwrap();
    for args in [vec!["check", p], vec!["graph", p]] {
        let out = snet_to_full(&args, false);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let e = text(&out.stderr);
        assert!(
            e.contains("cannot write to standard output"),
            "{args:?}: {e}"
        );
        assert!(!e.contains("panicked"), "{e}");
    }
    // Diagnostics to a full standard error: the status still says what happened.
    let bad = tmp("bad.snet", b"net bad connect nope;");
    let out = snet_to_full(&["check", bad.to_str().unwrap()], true);
    assert_eq!(out.status.code(), Some(1));
    let ok = snet_to_full(&["check", p], true);
    assert_eq!(ok.status.code(), Some(0));
    assert!(text(&ok.stdout).contains("net full"));
}

#[test]
fn a_tcp_output_closed_by_the_peer_is_reported_every_time() {
    let prog = tmp("tcp.snet", b"net tcp connect [];");
    let mut input = String::from(HEAD);
    for i in 0..20_000 {
        input.push_str(&rec(i));
    }
    input.push_str(TERM);
    let input = tmp("tcp.xml", input.as_bytes());
    for _ in 0..6 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let reader = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 1000];
            let _ = s.read_exact(&mut buf);
            // Dropped: the connection closes while snet still writes.
        });
        let addr = format!("127.0.0.1:{port}");
        let out = snet(&[
            "run",
            prog.to_str().unwrap(),
            "-i",
            input.to_str().unwrap(),
            "-O",
            &addr,
        ]);
        reader.join().unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "killed by a signal? {:?}",
            out.status
        );
        assert!(text(&out.stderr).contains("error"), "{}", text(&out.stderr));
    }
}

#[test]
fn an_unwritable_trace_path_stops_the_run_before_it_starts() {
    let prog = tmp("trace.snet", b"net trace connect [{<n>} -> {<n=n+1>}];");
    let input = tmp("trace.xml", format!("{HEAD}{}{TERM}", rec(1)).as_bytes());
    let out_file =
        std::env::temp_dir().join(format!("snet-hostile-trace-out-{}", std::process::id()));
    let _ = std::fs::remove_file(&out_file);
    let out = snet(&[
        "run",
        prog.to_str().unwrap(),
        "-i",
        input.to_str().unwrap(),
        "-o",
        out_file.to_str().unwrap(),
        "--trace",
        "/nonexistent-dir/t.json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("trace file"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !out_file.exists(),
        "the run started before the trace path was checked"
    );
}

#[test]
fn input_that_is_not_records_is_an_error() {
    let prog = tmp("inp.snet", b"net inp connect [];");
    let p = prog.to_str().unwrap();
    let passwd = tmp(
        "passwd",
        b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin\n",
    );
    let garbage: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let garbage = tmp("garbage.bin", &garbage);
    for f in [&passwd, &garbage, &prog] {
        let out = snet(&["run", p, "-i", f.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}: {}",
            f.display(),
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("no S-Net record")
                || text(&out.stderr).contains("discarded"),
            "{}: {}",
            f.display(),
            text(&out.stderr)
        );
    }
    // Records with fields but no interface are discarded: said, and exit 1.
    let no_iface = format!(
        "{HEAD}<record xmlns=\"snet-home.org\" type=\"data\" mode=\"textual\"><field label=\"x\">(int)1</field></record>\n{TERM}"
    );
    let f = tmp("noiface.xml", no_iface.as_bytes());
    let out = snet(&["run", p, "-i", f.to_str().unwrap(), "--stats"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let e = text(&out.stderr);
    assert!(
        e.contains("1 input record was malformed and discarded"),
        "{e}"
    );
    assert!(e.contains("input discarded   1"), "{e}");
    // An empty input and one with only a terminate record are fine.
    for ok in ["", "<record type=\"terminate\" />\n"] {
        let f = tmp("empty.xml", ok.as_bytes());
        let out = snet(&["run", p, "-i", f.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{ok:?}: {}", text(&out.stderr));
    }
}

#[test]
fn long_static_chains_run_to_the_end_on_every_engine() {
    // 30 000 filters: correct output, exit 0, no stack overflow when the instance tree
    // is freed (front crashed at 10 000-20 000).
    let n = 30_000;
    let body = vec!["[{<n>} -> {<n=n+1>}]"; n].join(" .. ");
    let prog = tmp(
        "chain.snet",
        format!("net chain connect {body};").as_bytes(),
    );
    let input = tmp("chain.xml", format!("{HEAD}{}{TERM}", rec(0)).as_bytes());
    for engine in ["seq", "front", "lpel", "threads"] {
        let out = snet(&[
            "run",
            prog.to_str().unwrap(),
            "-i",
            input.to_str().unwrap(),
            "--engine",
            engine,
        ]);
        assert!(
            out.status.success(),
            "{engine}: {:?} {}",
            out.status,
            text(&out.stderr)
        );
        assert!(
            text(&out.stdout).contains(&format!(">{n}</tag>")),
            "{engine}"
        );
    }
}

fn failing(inp: &BoxInput<'_>, _out: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    Err(BoxFailure(format!(
        "cannot handle t={}",
        inp.tag("t").unwrap_or(-1)
    )))
}

#[test]
fn a_box_error_shows_the_record_the_box_received() {
    let mut p = Program::from_source(
        "err.snet",
        "net err { box bad((x, <t>) -> (y)); } connect bad;",
    )
    .unwrap();
    p.bind("bad", failing).unwrap();
    let input = Record::new()
        .with_field("x", snet::Value::int(7))
        .with_tag("t", 42)
        .with_tag("keep", 5);
    for e in EngineKind::ALL {
        let err = p
            .run_records(*e, vec![input.clone()])
            .unwrap_err()
            .to_string();
        // The record as received: the inherited tag, the input tag with its value and
        // the input field by name (not the empty rest, `{}`).
        assert!(err.contains("<keep>=5"), "{e:?}: {err}");
        assert!(err.contains("<t>=42"), "{e:?}: {err}");
        assert!(err.contains("x=<given to the box>"), "{e:?}: {err}");
        assert!(err.contains("cannot handle t=42"), "{e:?}: {err}");
    }
}
