//! `snet graph`: the DOT output is accepted by Graphviz (`dot -Tsvg`) and shows the
//! network's nodes, clusters and typed edges.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn dot_to_svg(dot: &[u8]) -> Option<String> {
    use std::io::Write;
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(dot).ok()?;
    let out = child.wait_with_output().ok()?;
    assert!(
        out.status.success(),
        "dot rejected the graph: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn graph_renders_with_graphviz() {
    let tmp = std::env::temp_dir().join(format!("snet-graph-{}.dot", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_snet"))
        .args(["graph", "examples/lang/state/state.snet", "-o"])
        .arg(&tmp)
        .current_dir(root())
        .output()
        .expect("run snet");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dot = std::fs::read(&tmp).expect("dot file written");
    let _ = std::fs::remove_file(&tmp);
    let text = String::from_utf8_lossy(&dot);
    assert!(text.starts_with("digraph \"state\" {"));
    assert!(
        text.contains("label=\"* {outval}\""),
        "star cluster: {text}"
    );
    assert!(text.contains("label=\"|\""), "choice cluster: {text}");
    assert!(text.contains("[| {state}, {inval} |]") || text.contains("[| {inval}, {state} |]"));
    assert!(text.contains("add\\n(state, inval) -> (state) | (outval)"));
    assert!(
        text.contains("label=\"{inval, state}\""),
        "typed route edge: {text}"
    );
    match dot_to_svg(&dot) {
        Some(svg) => assert!(svg.contains("<svg")),
        None => panic!("graphviz `dot` is required for this test (apt-get install graphviz)"),
    }
}

#[test]
fn graph_of_every_language_example_is_valid_dot() {
    let dir = root().join("examples/lang");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("examples/lang")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for n in names {
        let prog = format!("examples/lang/{n}/{n}.snet");
        let out = Command::new(env!("CARGO_BIN_EXE_snet"))
            .args(["graph", &prog])
            .current_dir(root())
            .output()
            .expect("run snet");
        assert_eq!(out.status.code(), Some(0), "{prog}");
        let svg = dot_to_svg(&out.stdout).expect("graphviz `dot`");
        assert!(svg.contains("<svg"), "{prog}");
    }
}

#[test]
fn graph_of_a_bad_program_fails() {
    let out = Command::new(env!("CARGO_BIN_EXE_snet"))
        .args(["graph", "tests/check_errors/E0305_undefined_net.snet"])
        .current_dir(root())
        .output()
        .expect("run snet");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}

#[test]
fn an_output_file_that_cannot_be_written_is_a_failure_not_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_snet"))
        .args([
            "graph",
            "examples/lang/state/state.snet",
            "-o",
            "/nonexistent-dir/net.dot",
        ])
        .current_dir(root())
        .output()
        .expect("run snet");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write") && err.contains("net.dot"),
        "{err}"
    );
}
