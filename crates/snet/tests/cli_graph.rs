//! `snet graph`: the DOT output shows the network's nodes, clusters and typed edges
//! and is valid DOT (checked with the layout crate's DOT parser); `-o x.svg` draws the
//! picture in-process; `--profile` draws a run's figures on it, checked in headless
//! Chromium.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Parses DOT with the layout crate's own DOT parser (no external program), returning
/// the error text if it rejects the graph.
fn parse_dot(dot: &str) -> Result<(), String> {
    let mut p = layout::gv::DotParser::new(dot);
    p.process().map(drop)
}

fn snet(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_snet"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run snet")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("snet-graph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn graph_dot_shows_clusters_nodes_and_typed_edges() {
    let file = tmp("state.dot");
    let out = snet(&[
        "graph",
        "examples/lang/state/state.snet",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).expect("dot file written");
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
    parse_dot(&text).unwrap();
}

/// Issue 24 item 1: the tests needed Graphviz's `dot`; `snet graph -o x.svg` draws the
/// picture itself, with no program on the PATH at all.
#[test]
fn graph_svg_needs_no_external_program() {
    let file = tmp("state.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_snet"))
        .args(["graph", "examples/lang/state/state.snet", "-o"])
        .arg(&file)
        .current_dir(root())
        .env("PATH", "")
        .output()
        .expect("run snet");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&file).unwrap();
    assert!(
        svg.contains("<svg") && svg.trim_end().ends_with("</svg>"),
        "{svg}"
    );
    for name in ["add", "in", "out"] {
        assert!(svg.contains(&format!(">{name}<")), "{name} in {svg}");
    }
    assert!(svg.contains("<rect") || svg.contains("<path"), "{svg}");
}

#[test]
fn graph_of_every_language_example_is_valid_dot_and_renders_as_svg() {
    let dir = root().join("examples/lang");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("examples/lang")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for n in names {
        let prog = format!("examples/lang/{n}/{n}.snet");
        let out = snet(&["graph", &prog]);
        assert_eq!(out.status.code(), Some(0), "{prog}");
        let dot = String::from_utf8(out.stdout).unwrap();
        parse_dot(&dot).unwrap_or_else(|e| panic!("{prog}: {e}"));
        let svg = tmp(&format!("{n}.svg"));
        let out = snet(&["graph", &prog, "-o", svg.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{prog}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            std::fs::read_to_string(&svg).unwrap().contains("<svg"),
            "{prog}"
        );
    }
}

/// `snet run --profile` then `snet graph --profile`: the box gets its figures, a fill
/// colour and wide edges; then headless Chromium renders the picture (skipped with a
/// notice only when `chromium` is not installed; `.ci/run` installs it): the page shows
/// the box names and the screenshot is not blank.
#[test]
fn a_profile_picture_shows_the_figures_and_renders_in_a_browser() {
    let prof = tmp("prof.json");
    let svg = tmp("prof.svg");
    let out = snet(&[
        "run",
        "examples/c/matrix/matrix.snet",
        "examples/c/matrix/gen.c",
        "examples/c/matrix/transpose.c",
        "examples/c/matrix/mult.c",
        "examples/c/matrix/trace.c",
        "-i",
        "examples/c/matrix/input.xml",
        "-o",
        "/dev/null",
        "--engine",
        "seq",
        "--profile",
        prof.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = std::fs::read_to_string(&prof).unwrap();
    assert!(json.contains("\"engine\": \"seq\""), "{json}");
    let out = snet(&[
        "graph",
        "examples/c/matrix/matrix.snet",
        "--profile",
        prof.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains(" calls, "), "figures on the boxes: {text}");
    assert!(text.contains("#ff"), "a heat colour: {text}");
    let Some(chromium) = ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }) else {
        eprintln!("NOTICE: chromium is not installed; the browser rendering check is skipped");
        return;
    };
    let png = tmp("prof.png");
    let shot = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1200,800")
        .arg(format!("file://{}", svg.display()))
        .output()
        .expect("run chromium");
    assert!(
        shot.status.success(),
        "{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let dom = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}", svg.display()))
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&dom.stdout);
    for name in box_names(&text) {
        assert!(dom.contains(&name), "{name} on the page");
    }
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = &buf[..info.buffer_size()];
    let step = info.color_type.samples();
    let first = &px[..step];
    let differing = px.chunks(step).filter(|p| *p != first).count();
    assert!(
        differing > 500,
        "the screenshot is (nearly) one colour: {differing} pixels differ"
    );
    let reddish = px
        .chunks(step)
        .filter(|p| p.len() >= 3 && p[0] > 200 && p[1] < 240 && p[2] < 240 && p[1] == p[2])
        .count();
    assert!(reddish > 100, "the heat colour is drawn: {reddish} pixels");
}

/// The box names in an SVG written by `snet graph` (the first line of each box label).
fn box_names(svg: &str) -> Vec<String> {
    let mut names = Vec::new();
    for part in svg.split("<tspan").skip(1) {
        let Some(start) = part.find('>') else {
            continue;
        };
        let text = &part[start + 1..];
        let Some(end) = text.find('<') else { continue };
        let t = &text[..end];
        if !t.is_empty()
            && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && t != "in"
            && t != "out"
        {
            names.push(t.to_owned());
        }
    }
    names.sort();
    names.dedup();
    assert!(!names.is_empty(), "no box names in {svg}");
    names
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
