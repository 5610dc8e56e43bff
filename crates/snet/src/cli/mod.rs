//! Subcommand implementations; each returns the process exit code.

pub(crate) mod bench;
pub(crate) mod check;
pub(crate) mod graph;
pub(crate) mod observe;
pub(crate) mod output;
pub(crate) mod prefetch;
pub(crate) mod profile;
pub(crate) mod progress;
pub(crate) mod run;
pub(crate) mod stubs;
pub(crate) mod term;
pub(crate) mod trace;

use std::process::ExitCode;

/// A usage error (bad arguments): the message on standard error, exit 2.
pub(crate) fn usage(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// A failure (the command could not do its work): the message on standard error,
/// exit 1.
pub(crate) fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(1)
}
