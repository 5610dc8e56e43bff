//! Printing for the CLI that never panics (the `print!`/`println!`/`eprint!`/`eprintln!`
//! macros of this crate call these). Standard output is written through its lock; the
//! first failed write is kept, later writes are skipped, and `main` turns it into exit
//! status 1 with a message. Standard error failures are ignored.

use std::fmt::Arguments;
use std::io::Write;
use std::sync::OnceLock;

/// The first error writing standard output, if any.
static STDOUT_ERROR: OnceLock<String> = OnceLock::new();

/// Writes to standard output (and flushes, so that an error surfaces here rather than
/// at exit); remembers the first failure.
pub(crate) fn out(args: Arguments<'_>) {
    if STDOUT_ERROR.get().is_some() {
        return;
    }
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args).and_then(|()| o.flush()) {
        let _ = STDOUT_ERROR.set(e.to_string());
    }
}

/// Writes to standard error, ignoring failures.
pub(crate) fn err(args: Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// The first error writing standard output.
pub(crate) fn stdout_error() -> Option<&'static str> {
    STDOUT_ERROR.get().map(String::as_str)
}
