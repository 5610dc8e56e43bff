//! The integration tests of `snet`, gathered into one test binary (one link instead of
//! one per file; `autotests = false` in Cargo.toml). Each file of this directory is a
//! module here named after it; `#[path]` makes a file's own `mod common;` resolve in
//! this directory, as when the file was a test crate of its own. One file's tests:
//! `cargo test -p snet --test all NAME::`. A new test file must be listed here
//! (`every_test_file_is_in_its_crates_test_binary` in `crates/snet/tests/all.rs`
//! checks that none is left out).

// Files that share helpers (`common/`) each declare them as they did as crates of their
// own, so each has its own copy, private to it: the files stay unchanged and buildable
// alone, at the cost of compiling a few small helpers more than once.
#![allow(clippy::duplicate_mod)]

#[path = "bounded_outputs.rs"]
mod bounded_outputs;
#[path = "cli_bench.rs"]
mod cli_bench;
#[path = "cli_check.rs"]
mod cli_check;
#[path = "cli_graph.rs"]
mod cli_graph;
#[path = "cli_observe.rs"]
mod cli_observe;
#[path = "cli_run.rs"]
mod cli_run;
#[path = "cli_trace.rs"]
mod cli_trace;
#[path = "computations.rs"]
mod computations;
#[path = "dist_agreement.rs"]
mod dist_agreement;
#[path = "distributed.rs"]
mod distributed;
#[path = "engine_agreement.rs"]
mod engine_agreement;
#[path = "fuzz_regressions.rs"]
mod fuzz_regressions;
#[path = "golden.rs"]
mod golden;
#[path = "guide.rs"]
mod guide;
#[path = "hostile.rs"]
mod hostile;
#[path = "lpel_engine.rs"]
mod lpel_engine;
#[path = "observers.rs"]
mod observers;
#[path = "scaling.rs"]
mod scaling;
#[path = "semantics.rs"]
mod semantics;
#[path = "threads_engine.rs"]
mod threads_engine;

/// Every `.rs` file directly in a crate's `tests/` directory is a module of that crate's
/// `tests/all.rs`, the crate's one test target (`autotests = false`): a file left out
/// would silently not run.
#[test]
fn every_test_file_is_in_its_crates_test_binary() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut problems = Vec::new();
    let mut files = 0;
    for krate in std::fs::read_dir(&crates).unwrap().flatten() {
        let tests = krate.path().join("tests");
        let Ok(entries) = std::fs::read_dir(&tests) else {
            continue;
        };
        let manifest = std::fs::read_to_string(krate.path().join("Cargo.toml")).unwrap();
        if !manifest.contains("autotests = false") || !manifest.contains("path = \"tests/all.rs\"")
        {
            problems.push(format!(
                "{}: not `autotests = false` with one [[test]] at tests/all.rs",
                krate.path().join("Cargo.toml").display()
            ));
        }
        let all = std::fs::read_to_string(tests.join("all.rs")).unwrap_or_default();
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".rs") || name == "all.rs" {
                continue;
            }
            files += 1;
            if !all.contains(&format!("#[path = \"{name}\"]")) {
                problems.push(format!(
                    "{}: not a module of tests/all.rs",
                    tests.join(&name).display()
                ));
            }
        }
    }
    assert!(
        files >= 40,
        "only {files} test files found under {}",
        crates.display()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
