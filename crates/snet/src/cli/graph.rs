//! `snet graph PROG.snet [--profile RUN.json] [-o FILE]`: the static network as
//! Graphviz DOT (standard output, or `-o x.dot`) or as an SVG picture (`-o x.svg`,
//! laid out in-process by `snet_lang`, no external program), optionally with the
//! figures of a `snet run --profile` drawn on it.
//!
//! Exit status as for `snet check`: 1 when the program has errors or the output file
//! cannot be written, 2 for usage errors (among them an output name for a bitmap or
//! document format, `-o x.png`: snet draws SVG only).

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `snet graph`.
#[derive(Debug, Args)]
pub(crate) struct GraphArgs {
    /// The S-Net program.
    pub(crate) program: PathBuf,
    /// Output file (default: DOT on standard output). A name ending in `.svg` gets an
    /// SVG picture, any other name DOT; a bitmap or document name (`.png`, `.pdf`,
    /// ...) is refused.
    #[arg(short = 'o', long = "output")]
    pub(crate) output: Option<PathBuf>,
    /// Draw the figures of a `snet run --profile RUN.json` on the network: box fill
    /// colour by share of busy time, edge width by records, a label with the numbers.
    #[arg(long, value_name = "RUN.json")]
    pub(crate) profile: Option<PathBuf>,
}

/// Output names `snet graph` refuses: bitmap and document formats it cannot write
/// (writing DOT text under such a name would make a file no viewer opens).
const IMAGE_FORMATS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "bmp", "webp", "tif", "tiff", "pdf", "ps", "eps",
];

/// Runs `snet graph`.
pub(crate) fn run(args: GraphArgs) -> ExitCode {
    let ext = args
        .output
        .as_ref()
        .and_then(|p| p.extension())
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    if let Some(e) = ext.as_deref().filter(|e| IMAGE_FORMATS.contains(e)) {
        return super::usage(format!(
            "snet graph draws SVG (`-o NAME.svg`) or writes DOT (any other name), not {}; \
             draw an SVG and convert it, e.g. `chromium --headless --screenshot=NAME.{e} NAME.svg`",
            e.to_ascii_uppercase()
        ));
    }
    let compiled = match super::compile_reporting("graph", &args.program) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let heat = match &args.profile {
        None => Default::default(),
        Some(p) => {
            let rows = std::fs::read_to_string(p)
                .map_err(|e| e.to_string())
                .and_then(|t| super::profile::load(&t));
            match rows {
                Ok((rows, problems)) => {
                    for w in problems {
                        eprintln!("warning: `{}`: {w}", p.display());
                    }
                    let known: std::collections::HashSet<&str> =
                        compiled.net.boxes.iter().map(|b| &*b.name).collect();
                    let unknown: Vec<&str> = rows
                        .iter()
                        .map(|r| r.name.as_str())
                        .filter(|n| !known.contains(n))
                        .collect();
                    if !unknown.is_empty() {
                        eprintln!(
                            "warning: `{}` has figures for {} `{}` does not have: {} \
                             (a profile of another program?); they are not drawn",
                            p.display(),
                            if unknown.len() == 1 { "a box" } else { "boxes" },
                            args.program.display(),
                            unknown.join(", ")
                        );
                    }
                    super::profile::heat(&rows)
                }
                Err(e) => return super::fail(format!("cannot read `{}`: {e}", p.display())),
            }
        }
    };
    match &args.output {
        None => {
            print!("{}", compiled.to_dot_with(&heat));
            ExitCode::SUCCESS
        }
        Some(path) => {
            let text = if ext.as_deref() == Some("svg") {
                compiled.to_svg_with(&heat)
            } else {
                compiled.to_dot_with(&heat)
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
