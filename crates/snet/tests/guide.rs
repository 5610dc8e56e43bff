//! The user guide runs as written: every fenced `sh` block of `docs/guide/*.md` is run
//! with bash from the repository root, with this build's `snet` first on the PATH,
//! and must exit 0; a `text` block right after an `sh` block is the output the guide
//! shows, and standard output must be exactly that (trailing blanks aside).
//! (`console` blocks are cargo commands that build things; they are not run here.)

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `(file, line, code, expected output)` of every `sh` block.
fn blocks(file: &Path) -> Vec<(String, usize, String, Option<String>)> {
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    // Reads the fenced block opening at line `i`: (info string, body, line after it).
    let fence = |i: usize| -> Option<(String, String, usize)> {
        let info = lines.get(i)?.strip_prefix("```")?.trim().to_owned();
        let mut body = String::new();
        let mut j = i + 1;
        while j < lines.len() && lines[j] != "```" {
            body.push_str(lines[j]);
            body.push('\n');
            j += 1;
        }
        Some((info, body, j + 1))
    };
    while i < lines.len() {
        let start = i + 1;
        match fence(i) {
            Some((info, body, next)) if info == "sh" => {
                let mut k = next;
                while k < lines.len() && lines[k].trim().is_empty() {
                    k += 1;
                }
                let expected = match fence(k) {
                    Some((info, out, after)) if info == "text" => {
                        i = after;
                        Some(out)
                    }
                    _ => {
                        i = next;
                        None
                    }
                };
                out.push((file.display().to_string(), start, body, expected));
            }
            Some((_, _, next)) => i = next,
            None => i += 1,
        }
    }
    out
}

fn trim(s: &str) -> String {
    s.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_owned()
}

#[test]
fn every_shell_command_of_the_guide_runs_as_written() {
    let dir = root().join("docs/guide");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("docs/guide")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let bin = Path::new(env!("CARGO_BIN_EXE_snet"))
        .parent()
        .unwrap()
        .to_owned();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    let mut failures = Vec::new();
    for f in &files {
        for (file, line, code, expected) in blocks(f) {
            ran += 1;
            // A block that hangs fails after two minutes instead of holding the suite.
            let out = Command::new("timeout")
                .args(["120", "bash", "-euo", "pipefail", "-c", &code])
                .current_dir(root())
                .env("PATH", &path)
                .output()
                .expect("run bash");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let where_ = format!("{file}:{line}");
            if !out.status.success() {
                failures.push(format!(
                    "{where_}: exit {:?}\n{code}\nstdout:\n{stdout}\nstderr:\n{}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            } else if let Some(want) = expected {
                if trim(&stdout) != trim(&want) {
                    failures.push(format!(
                        "{where_}: output differs\n{code}\nguide shows:\n{want}\ngot:\n{stdout}"
                    ));
                }
            }
        }
    }
    assert!(ran >= 20, "only {ran} sh blocks found in docs/guide");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The Rust-boxes chapter's whole program, compiled into this test, so that a change of
/// the `snet` API that breaks it fails here (its `main` is private: it runs below as
/// the example binary).
#[path = "../../../examples/rust/first_box.rs"]
#[allow(dead_code)]
mod first_box;

#[test]
fn the_rust_chapter_shows_its_example_file_word_for_word_and_it_runs() {
    let chapter = std::fs::read_to_string(root().join("docs/guide/04-rust-boxes.md")).unwrap();
    let file = std::fs::read_to_string(root().join("examples/rust/first_box.rs")).unwrap();
    let start = chapter.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let end = start + chapter[start..].find("\n```\n").expect("closed") + 1;
    assert_eq!(
        &chapter[start..end],
        file,
        "docs/guide/04-rust-boxes.md must show examples/rust/first_box.rs as it is"
    );
    // The Cargo.toml lines name this repository's `snet` crate.
    assert!(chapter.contains("snet = { path = \"/path/to/snet/crates/snet\" }"));
    // It runs and prints what the chapter shows (the example binary exists when `cargo
    // test` built the examples, as a whole-workspace run does).
    let want = chapter
        .split("```console\ncargo run --release\n```\n\n```text\n")
        .nth(1)
        .and_then(|t| t.split("\n```").next())
        .expect("the output block after `cargo run --release`");
    let exe = Path::new(env!("CARGO_BIN_EXE_snet"))
        .parent()
        .unwrap()
        .join("examples/first_box");
    if exe.exists() {
        let out = Command::new(&exe).output().expect("run the example");
        assert!(out.status.success());
        assert_eq!(trim(&String::from_utf8_lossy(&out.stdout)), trim(want));
    }
}
