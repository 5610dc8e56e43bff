//! The observing side of the CLI: `snet observe` against a run with an interactive
//! socket observer, the single warning of an unreachable observer, `--progress` as
//! plain lines when standard error is not a terminal, and `--trace` on engines that
//! write none (issue 24 item 12).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("snet-cli-observe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn snet_in(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_snet"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run snet");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn records(xs: &[i32]) -> String {
    let mut s = String::new();
    for x in xs {
        s.push_str(&format!(
            "<record type=\"data\"><tag label=\"x\">{x}</tag></record>\n"
        ));
    }
    s.push_str("<record type=\"terminate\"/>\n");
    s
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn program(name: &str, metadata: &str) -> PathBuf {
    let p = tmp(name);
    std::fs::write(
        &p,
        format!("{metadata}\nnet twice {{ net step connect [{{<x>}} -> {{<x=x+1>}}]; }} connect step .. step;\n"),
    )
    .unwrap();
    p
}

#[test]
fn snet_observe_prints_and_acknowledges_interactive_reports() {
    let port = free_port();
    let prog = program(
        "interactive.snet",
        &format!(
            "<metadata><net name=\"twice\"><net name=\"step\"><observer />\
             <observer_interactive value=\"true\"/><observer_port value=\"{port}\"/>\
             </net></net></metadata>"
        ),
    );
    let mut observer = Command::new(env!("CARGO_BIN_EXE_snet"))
        .args(["observe", &port.to_string(), "--once"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until it listens (it says so on standard error).
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(observer.stderr.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert!(line.contains("listening on 127.0.0.1:"), "{line}");
    let out = snet_in(&["run", prog.to_str().unwrap()], &records(&[1, 10, 100]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("<tag label=\"x\">102</tag>"));
    // The observer ends when the run's connection closes; a run that never connected
    // would leave it waiting.
    let pid = observer.id();
    let guard = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(30));
        let _ = Command::new("kill").arg(pid.to_string()).status();
    });
    let seen = observer.wait_with_output().unwrap();
    drop(guard);
    let lines: Vec<String> = text(&seen.stdout).lines().map(str::to_owned).collect();
    // Two passes through `step` per record, in order.
    let want: Vec<String> = [2, 3, 11, 12, 101, 102]
        .iter()
        .map(|x| format!("oid 0 step after: {{<x>={x}}}"))
        .collect();
    assert_eq!(lines, want);
}

#[test]
fn an_unreachable_observer_is_one_warning_and_the_run_goes_on() {
    let port = free_port();
    let prog = program(
        "unreachable.snet",
        &format!("<metadata><netdefault><observer /><observer_type value=\"both\"/><observer_port value=\"{port}\"/></netdefault></metadata>"),
    );
    for engine in ["seq", "threads", "front", "lpel"] {
        let out = snet_in(
            &["run", prog.to_str().unwrap(), "--engine", engine],
            &records(&[1, 2, 3]),
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout).matches("type=\"data\"").count(), 3);
        let err = text(&out.stderr);
        assert_eq!(err.matches("warning:").count(), 1, "[{engine}] {err}");
        assert!(
            err.contains(&format!(
                "cannot connect to the observer at 127.0.0.1:{port}"
            )),
            "{err}"
        );
    }
}

#[test]
fn progress_is_plain_lines_on_standard_error_when_it_is_not_a_terminal() {
    let prog = program("progress.snet", "");
    let xs: Vec<i32> = (0..500).collect();
    let out = snet_in(
        &["run", prog.to_str().unwrap(), "--progress"],
        &records(&xs),
    );
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("progress"), "nothing on standard output");
    assert_eq!(stdout.matches("type=\"data\"").count(), 500);
    let err = text(&out.stderr);
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("progress: ")
            && last.contains(" in 500 (")
            && last.contains(" out 500 (")
            && last.contains(" in flight 0 "),
        "{err}"
    );
    assert!(
        !err.contains('\r') && !err.contains('\u{1b}'),
        "no redrawing: {err:?}"
    );
}

#[test]
fn trace_on_an_engine_that_writes_none_is_a_warning() {
    let prog = program("trace.snet", "");
    for engine in ["seq", "threads"] {
        let file = tmp(&format!("trace-{engine}.json"));
        let out = snet_in(
            &[
                "run",
                prog.to_str().unwrap(),
                "--engine",
                engine,
                "--trace",
                file.to_str().unwrap(),
            ],
            &records(&[1]),
        );
        assert_eq!(out.status.code(), Some(0));
        let err = text(&out.stderr);
        assert!(
            err.contains("warning: --trace is written by the front and lpel engines only"),
            "[{engine}] {err}"
        );
        assert!(!file.exists());
    }
}

#[test]
fn a_trace_of_a_run_without_box_calls_says_why_it_has_no_events() {
    let prog = program("filters.snet", "");
    let file = tmp("filters.json");
    let out = snet_in(
        &[
            "run",
            prog.to_str().unwrap(),
            "--engine",
            "front",
            "--trace",
            file.to_str().unwrap(),
        ],
        &records(&[1, 2]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let sum = Command::new(env!("CARGO_BIN_EXE_snet"))
        .args(["trace", file.to_str().unwrap()])
        .output()
        .unwrap();
    let s = text(&sum.stdout);
    assert!(s.contains("0 timed events"), "{s}");
    assert!(s.contains("this run invoked no box"), "{s}");
}
