//! `snet check PROG.snet`: type-check a program and print the entry network's
//! signature.
//!
//! Exit status: 0 when the program is accepted (warnings go to standard error), 1 when
//! it has errors (diagnostics on standard error). Usage errors exit 2 (clap).

use clap::Args;
use std::io::IsTerminal;
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
    if let Err(code) = super::not_box_code("check", &args.program) {
        return code;
    }
    let color = std::io::stderr().is_terminal();
    match snet_lang::compile_file(&args.program) {
        Ok(c) => {
            if !c.warnings.is_empty() {
                eprint!("{}", c.warnings.render_styled(color));
                eprintln!();
            }
            println!("{}", c.signature_text());
            ExitCode::SUCCESS
        }
        Err(diags) => {
            eprint!("{}", diags.render_styled(color));
            let n = diags.error_count();
            eprintln!(
                "\nerror: could not compile `{}` due to {n} previous error{}",
                args.program.display(),
                if n == 1 { "" } else { "s" }
            );
            ExitCode::from(1)
        }
    }
}
