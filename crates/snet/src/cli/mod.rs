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

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A usage message if the arguments of `snet run PROG SOURCES...` look swapped: the
/// program is box code (`.c`, `.h`, `.o`, `.a`, `.so`), or a `.snet` file comes after it.
pub(crate) fn program_first(program: &Path, sources: &[PathBuf]) -> Option<String> {
    let boxcode = is_box_code(program);
    let snet = sources.iter().find(|s| ext(s) == "snet");
    match (boxcode, snet) {
        (true, Some(s)) => Some(format!(
            "the program comes first: `snet run {} {} ...` (box code after it)",
            s.display(),
            program.display()
        )),
        (true, None) => Some(format!(
            "`{}` is box code, not an S-Net program: the program comes first (`snet run PROG.snet {} ...`)",
            program.display(),
            program.display()
        )),
        (false, Some(s)) => Some(format!(
            "one program per run: `{}` is a second S-Net program (box code is C: .c, .h, .o, .a, .so)",
            s.display()
        )),
        (false, None) => None,
    }
}

/// The extension of `path` ("" if none).
fn ext(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether `path` names box code (`.c`, `.h`, `.o`, `.a`, `.so`) rather than a program.
fn is_box_code(path: &Path) -> bool {
    ["c", "h", "o", "a", "so"].contains(&ext(path).as_str())
}

/// The usage message for an engine name that is not one, with the name meant when it
/// is a slip (`snet run --engine`, `snet bench -e`).
pub(crate) fn unknown_engine(name: &str) -> String {
    let names: Vec<&str> = snet::EngineKind::ALL.iter().map(|e| e.name()).collect();
    let guess = snet_core::label::closest(name, names.iter().copied())
        .map(|g| format!("; did you mean `{g}`?"))
        .unwrap_or_default();
    format!(
        "unknown engine `{name}` (available: {}){guess}",
        names.join(", ")
    )
}

/// A usage error (exit 2) if the program `snet CMD` was given is box code: the S-Net
/// parser would otherwise report C's `#include` and `&` as S-Net syntax errors.
pub(crate) fn not_box_code(cmd: &str, program: &Path) -> Result<(), ExitCode> {
    if !is_box_code(program) {
        return Ok(());
    }
    Err(usage(format!(
        "`{}` is box code, not an S-Net program: `snet {cmd}` takes the program (`snet {cmd} PROG.snet`)",
        program.display()
    )))
}

/// Says on standard error that records are read from standard input, if that is a
/// terminal (a run started without `-i` would otherwise sit there silently).
pub(crate) fn note_terminal_input() {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        eprintln!(
            "snet: reading input records from standard input (the terminal); end with Ctrl-D, or pass -i FILE"
        );
    }
}

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

/// Compiles `program`, printing its warnings (and, on failure, its diagnostics, then
/// exit status 1) on standard error, in colour on a terminal.
pub(crate) fn compile_reporting(
    cmd: &str,
    program: &std::path::Path,
) -> Result<snet_lang::Compiled, ExitCode> {
    use std::io::IsTerminal;
    not_box_code(cmd, program)?;
    let color = std::io::stderr().is_terminal();
    let compiled = snet_lang::compile_file(program).map_err(|diags| {
        eprint!("{}", diags.render_styled(color));
        ExitCode::from(1)
    })?;
    if !compiled.warnings.is_empty() {
        eprint!("{}", compiled.warnings.render_styled(color));
    }
    Ok(compiled)
}
