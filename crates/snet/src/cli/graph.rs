//! `snet graph PROG.snet [-o FILE]`.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `snet graph`.
#[derive(Debug, Args)]
pub(crate) struct GraphArgs {
    /// The S-Net program.
    pub(crate) program: PathBuf,
    /// Output file (default: standard output).
    #[arg(short = 'o', long = "output")]
    pub(crate) output: Option<PathBuf>,
}

/// Runs `snet graph`.
pub(crate) fn run(args: GraphArgs) -> ExitCode {
    eprintln!("snet graph {}: not yet available", args.program.display());
    ExitCode::from(1)
}
