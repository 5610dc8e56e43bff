//! The integration tests of `snet-c4snet`, gathered into one test binary (one link instead of
//! one per file; `autotests = false` in Cargo.toml). Each file of this directory is a
//! module here named after it; `#[path]` makes a file's own `mod common;` resolve in
//! this directory, as when the file was a test crate of its own. One file's tests:
//! `cargo test -p snet-c4snet --test all NAME::`. A new test file must be listed here
//! (`every_test_file_is_in_its_crates_test_binary` in `crates/snet/tests/all.rs`
//! checks that none is left out).

// Files that share helpers (`common/`) each declare them as they did as crates of their
// own, so each has its own copy, private to it: the files stay unchanged and buildable
// alone, at the cost of compiling a few small helpers more than once.
#![allow(clippy::duplicate_mod)]

#[path = "boxes.rs"]
mod boxes;
#[path = "build.rs"]
mod build;
#[path = "crash.rs"]
mod crash;
#[path = "errors.rs"]
mod errors;
#[path = "examples.rs"]
mod examples;
