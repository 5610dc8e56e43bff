//! `snet graph PROG.snet [--profile RUN.json] [-o FILE]`: the static network as
//! Graphviz DOT (standard output, or `-o x.dot`) or as an SVG picture (`-o x.svg`,
//! laid out in-process, no external program), optionally with the figures of a
//! `snet run --profile` drawn on it.
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
    /// Output file (default: DOT on standard output). A name ending in `.svg` gets an
    /// SVG picture, any other name DOT.
    #[arg(short = 'o', long = "output")]
    pub(crate) output: Option<PathBuf>,
    /// Draw the figures of a `snet run --profile RUN.json` on the network: box fill
    /// colour by share of busy time, edge width by records, a label with the numbers.
    #[arg(long, value_name = "RUN.json")]
    pub(crate) profile: Option<PathBuf>,
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
    let heat = match &args.profile {
        None => Default::default(),
        Some(p) => {
            let rows = std::fs::read_to_string(p)
                .map_err(|e| e.to_string())
                .and_then(|t| super::profile::load(&t));
            match rows {
                Ok(rows) => super::profile::heat(&rows),
                Err(e) => return super::fail(format!("cannot read `{}`: {e}", p.display())),
            }
        }
    };
    let dot = compiled.to_dot_with(&heat);
    match &args.output {
        None => {
            print!("{dot}");
            ExitCode::SUCCESS
        }
        Some(path) => {
            let svg = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
            let text = if svg {
                match super::svg::dot_to_svg(&dot) {
                    Ok(s) => s,
                    Err(e) => return super::fail(e),
                }
            } else {
                dot
            };
            match std::fs::write(path, text) {
                Ok(()) => ExitCode::SUCCESS,
                // Not a usage error: the command could not do its work (as `snet run`'s
                // "cannot create output").
                Err(e) => super::fail(format!("cannot write `{}`: {e}", path.display())),
            }
        }
    }
}
