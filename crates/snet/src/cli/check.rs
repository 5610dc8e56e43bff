//! `snet check PROG.snet`.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `snet check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The S-Net program.
    pub(crate) program: PathBuf,
}

/// Runs `snet check`.
pub(crate) fn run(args: CheckArgs) -> ExitCode {
    eprintln!("snet check {}: not yet available", args.program.display());
    ExitCode::from(1)
}
