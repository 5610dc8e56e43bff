//! Subcommand implementations; each returns the process exit code.

pub(crate) mod bench;
pub(crate) mod check;
pub(crate) mod graph;
pub(crate) mod output;
pub(crate) mod prefetch;
pub(crate) mod run;
pub(crate) mod trace;
