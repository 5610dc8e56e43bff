//! Golden tests of `snet check` and `snet graph` on the real binary.
//!
//! * every program under `examples/` is accepted (exit 0) and its signature printed;
//! * every program in `tests/check_errors/` is rejected (exit 1) with exactly the
//!   diagnostics pinned in the `.stderr` file next to it (the file name starts with
//!   the diagnostic's code). Set `SNET_BLESS=1` to rewrite the pinned files after an
//!   intended change, and review the diff.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn snet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_snet"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run snet")
}

fn snet_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            snet_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "snet") {
            out.push(p);
        }
    }
}

/// `p` relative to the workspace root (the paths are built from `root()`).
fn relative(p: &Path) -> String {
    p.strip_prefix(root())
        .expect("under the workspace root")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn every_example_is_accepted_and_its_signature_printed() {
    let mut files = Vec::new();
    snet_files(&root().join("examples"), &mut files);
    assert!(files.len() >= 30, "only {} example programs", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let rel = relative(f);
        let out = snet(&["check", &rel]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stem = f.file_stem().unwrap().to_string_lossy();
        if out.status.code() != Some(0) || !stdout.starts_with(&format!("net {stem} (")) {
            failures.push(format!("{rel}: {:?}\n{stdout}{stderr}", out.status));
        }
        // The language examples are written to compile without warnings.
        if rel.starts_with("examples/lang/") && !stderr.is_empty() {
            failures.push(format!("{rel}: unexpected warnings\n{stderr}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_malformed_program_is_rejected_with_its_pinned_diagnostic() {
    let dir = root().join("tests/check_errors");
    let mut files = Vec::new();
    snet_files(&dir, &mut files);
    assert!(files.len() >= 40, "only {} malformed programs", files.len());
    let bless = std::env::var_os("SNET_BLESS").is_some();
    let mut failures = Vec::new();
    let mut codes = std::collections::BTreeSet::new();
    for f in &files {
        let rel = relative(f);
        let out = snet(&["check", &rel]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let code = f.file_stem().unwrap().to_string_lossy()[..5].to_owned();
        codes.insert(code.clone());
        if out.status.code() != Some(1) {
            failures.push(format!("{rel}: exit {:?}, expected 1", out.status.code()));
        }
        if !out.stdout.is_empty() {
            failures.push(format!("{rel}: printed to stdout"));
        }
        if !stderr.contains(&format!("error[{code}]")) {
            failures.push(format!("{rel}: no error[{code}] in\n{stderr}"));
        }
        let pinned = f.with_extension("stderr");
        if bless {
            std::fs::write(&pinned, &stderr).expect("write .stderr");
            continue;
        }
        match std::fs::read_to_string(&pinned) {
            Ok(want) if want == stderr => {}
            Ok(want) => failures.push(format!(
                "{rel}: diagnostics changed\n--- pinned\n{want}--- now\n{stderr}"
            )),
            Err(_) => failures.push(format!("{rel}: no pinned {}", pinned.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // One program per error kind of the language front end.
    for code in [
        "E0101", "E0102", "E0103", "E0104", "E0201", "E0202", "E0203", "E0204", "E0205", "E0206",
        "E0207", "E0208", "E0209", "E0210", "E0301", "E0302", "E0303", "E0304", "E0305", "E0307",
        "E0308", "E0309", "E0311", "E0312", "E0401", "E0402", "E0403", "E0404", "E0405", "E0406",
        "E0407", "E0501", "E0502", "E0503", "E0504",
    ] {
        assert!(
            codes.contains(code),
            "no program in tests/check_errors for {code}"
        );
    }
}

#[test]
fn missing_file_and_usage_errors() {
    let out = snet(&["check", "no/such/file.snet"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read `no/such/file.snet`"));
    let out = snet(&["check"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A box source given where the program belongs is named as such, not parsed as S-Net
/// (whose errors about `#include` and `&` would say nothing useful).
#[test]
fn check_graph_and_stubs_of_box_code_say_it_is_not_a_program() {
    for cmd in ["check", "graph", "stubs"] {
        let out = snet(&[cmd, "examples/c/hello/greet.c"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!(
                "error: `examples/c/hello/greet.c` is box code, not an S-Net program: `snet {cmd}` takes the program (`snet {cmd} PROG.snet`)"
            ),
            "{cmd}"
        );
        assert!(out.stdout.is_empty(), "{cmd}");
    }
}

/// Issue 33 item 5: a signature too long for one line (market's is 6 inputs times 9
/// outputs, 1 300 characters on one line) is printed one variant per line, and an
/// inferred one that large comes with the suggestion to declare it.
#[test]
fn check_wraps_a_long_signature_one_variant_per_line() {
    let out = snet(&["check", "examples/c/market/market.snet"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "net market (");
    assert_eq!(
        lines[1],
        "    {buy, sell, <item>, <px>, <qty>} -> {deal, rejected}"
    );
    assert_eq!(
        lines[2],
        "                                      | {deal, <void>}"
    );
    // 54 output variants, one per line, then `)` and the two-line suggestion.
    assert_eq!(lines.len(), 1 + 54 + 1 + 2, "{stdout}");
    assert_eq!(lines[55], ")");
    assert!(
        lines[56].starts_with("// inferred from the body: 6 input variants, 54 output variants")
    );
    assert!(lines[57].contains("declare the one you mean"), "{stdout}");
    assert!(lines.iter().all(|l| l.len() <= 100), "{stdout}");
}

#[test]
fn check_prints_the_inferred_signature() {
    let out = snet(&["check", "examples/lang/wchain/wchain.snet"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "net wchain ({a, b} -> {z}, {} -> {})\n"
    );
    let out = snet(&["check", "examples/lang/triangle/triangle.snet"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "net triangle ({<N>} -> {<S>})\n"
    );
}

#[test]
fn stubs_print_each_c_box_with_its_prototype_and_a_body_that_builds_and_runs() {
    let out = snet(&["stubs", "examples/c/matrix/matrix.snet"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("#include <C4SNet.h>\n"), "{text}");
    assert!(
        text.contains("/* box transpose (A, <n>) -> (A, B, <n>) */\nvoid *transpose(void *hnd, c4snet_data_t *A, int n)\n{"),
        "{text}"
    );
    assert!(
        text.contains("// C4SNetOut(hnd, 1, /* C: c4snet_data_t * */, /* <n>: int */);"),
        "{text}"
    );
    // The skeletons compile, link and run (emitting nothing).
    let dir = std::env::temp_dir().join(format!("snet-stubs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("boxes.c");
    std::fs::write(&src, &text).unwrap();
    let input = dir.join("in.xml");
    std::fs::write(
        &input,
        "<record type=\"data\"><tag label=\"n\">2</tag></record>\n",
    )
    .unwrap();
    let out = snet(&[
        "run",
        "examples/c/matrix/matrix.snet",
        src.to_str().unwrap(),
        "-i",
        input.to_str().unwrap(),
        "--cflags",
        "-Wall -Werror",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let _ = std::fs::remove_dir_all(&dir);
    // A program with errors: exit 1 with the diagnostics.
    let out = snet(&["stubs", "tests/does-not-exist.snet"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}
