//! The integration tests of `snet-core`, gathered into one test binary (one link instead of
//! one per file; `autotests = false` in Cargo.toml). Each file of this directory is a
//! module here named after it; `#[path]` makes a file's own `mod common;` resolve in
//! this directory, as when the file was a test crate of its own. One file's tests:
//! `cargo test -p snet-core --test all NAME::`. A new test file must be listed here
//! (`every_test_file_is_in_its_crates_test_binary` in `crates/snet/tests/all.rs`
//! checks that none is left out).

#[path = "model.rs"]
mod model;
