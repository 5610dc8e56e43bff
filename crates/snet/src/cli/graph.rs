//! `snet graph PROG.snet [-o FILE]`: the static network as Graphviz DOT.
//!
//! Exit status as for `snet check`: 1 when the program has errors, 2 for usage errors
//! and when the output file cannot be written.

use clap::Args;
use std::io::IsTerminal;
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
    let color = std::io::stderr().is_terminal();
    let compiled = match snet_lang::compile_file(&args.program) {
        Ok(c) => c,
        Err(diags) => {
            eprint!("{}", diags.render_styled(color));
            return ExitCode::from(1);
        }
    };
    if !compiled.warnings.is_empty() {
        eprint!("{}", compiled.warnings.render_styled(color));
    }
    let dot = compiled.to_dot();
    match &args.output {
        None => {
            print!("{dot}");
            ExitCode::SUCCESS
        }
        Some(path) => match std::fs::write(path, dot) {
            Ok(()) => ExitCode::SUCCESS,
            // Not a usage error: the command could not do its work (as `snet run`'s
            // "cannot create output").
            Err(e) => super::fail(format!("cannot write `{}`: {e}", path.display())),
        },
    }
}
