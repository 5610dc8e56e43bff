//! Errors of building and loading C boxes. They are values; only the CLI prints them.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Why C boxes could not be built or loaded.
#[derive(Debug)]
#[non_exhaustive]
pub enum C4SNetError {
    /// A box name that cannot be a C function name (not an identifier, a C keyword, or a
    /// name reserved by the interface such as `C4SNetOut`).
    InvalidBoxName {
        /// The S-Net box name.
        name: String,
        /// Why it is rejected.
        reason: &'static str,
    },
    /// The same box name was given twice with different signatures.
    ConflictingSignatures {
        /// The box name.
        name: String,
    },
    /// A source file whose kind is unknown (expected `.c`, `.o`, `.a` or `.so`).
    UnsupportedSource {
        /// The file.
        path: PathBuf,
    },
    /// A file could not be read or written.
    Io {
        /// What was being done.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The C compiler could not be started.
    CompilerNotFound {
        /// The compiler command.
        compiler: String,
        /// The underlying error.
        source: io::Error,
    },
    /// A C source did not compile; `output` is the compiler's own diagnostics.
    Compile {
        /// The source file.
        file: PathBuf,
        /// The command line that failed.
        command: String,
        /// The compiler's standard error and output.
        output: String,
    },
    /// Linking the box library failed.
    Link {
        /// The command line that failed.
        command: String,
        /// The linker's diagnostics.
        output: String,
    },
    /// The compiled library could not be loaded.
    Load {
        /// The library.
        path: PathBuf,
        /// The dynamic loader's message.
        message: String,
    },
    /// No C function of the box's name was found in the given files.
    MissingSymbol {
        /// The box (= C symbol) name.
        name: String,
        /// The files searched.
        searched: Vec<PathBuf>,
        /// Where a symbol of that name was found instead (e.g. the C library), if anywhere.
        found_elsewhere: Option<PathBuf>,
        /// The function of the C sources whose name is closest to the box's, if one is
        /// close (a misspelt box or function name).
        closest: Option<String>,
        /// The functions of the C sources that take a handle first (`void *`), as box
        /// functions do: shown when no name is close.
        defined: Vec<String>,
    },
    /// A library's box table does not match the box's signature (a stale prebuilt
    /// library, for example).
    SignatureMismatch {
        /// The box name.
        name: String,
        /// What differs.
        message: String,
    },
}

fn join_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "(no files)".to_owned();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for C4SNetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            C4SNetError::InvalidBoxName { name, reason } => {
                write!(f, "box `{name}` cannot be bound to a C function: {reason}")
            }
            C4SNetError::ConflictingSignatures { name } => write!(
                f,
                "box `{name}` is declared twice with different signatures; a C function \
                 has one calling convention"
            ),
            C4SNetError::UnsupportedSource { path } => write!(
                f,
                "{}: unsupported box source (expected a .c, .h, .o, .a or .so file)",
                path.display()
            ),
            C4SNetError::Io {
                action,
                path,
                source,
            } => write!(f, "cannot {action} {}: {source}", path.display()),
            C4SNetError::CompilerNotFound { compiler, source } => {
                write!(f, "cannot run the C compiler `{compiler}`: {source}")
            }
            C4SNetError::Compile {
                file,
                command,
                output,
            } => write!(
                f,
                "{}: C compilation failed\n  command: {command}\n{}",
                file.display(),
                output.trim_end()
            ),
            C4SNetError::Link { command, output } => write!(
                f,
                "linking the C boxes failed\n  command: {command}\n{}",
                output.trim_end()
            ),
            C4SNetError::Load { path, message } => {
                write!(f, "cannot load {}: {message}", path.display())
            }
            C4SNetError::MissingSymbol {
                name,
                searched,
                found_elsewhere,
                closest,
                defined,
            } => {
                write!(
                    f,
                    "box `{name}`: no C function `{name}` defined in {}",
                    join_paths(searched)
                )?;
                if let Some(other) = found_elsewhere {
                    write!(
                        f,
                        " (a symbol `{name}` exists in {}, which is not box code)",
                        other.display()
                    )?;
                }
                if let Some(c) = closest {
                    write!(
                        f,
                        "; did you mean `{c}`? (the box name is the C function's name)"
                    )?;
                } else if !defined.is_empty() && found_elsewhere.is_none() {
                    let list: Vec<String> = defined.iter().map(|d| format!("`{d}`")).collect();
                    let (noun, verb) = if list.len() == 1 {
                        ("function", "is")
                    } else {
                        ("functions", "are")
                    };
                    write!(
                        f,
                        "; the box {noun} there {verb} {} (the box name is the C function's name)",
                        list.join(", ")
                    )?;
                }
                Ok(())
            }
            C4SNetError::SignatureMismatch { name, message } => {
                write!(
                    f,
                    "box `{name}`: library does not match the declaration: {message}"
                )
            }
        }
    }
}

impl std::error::Error for C4SNetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            C4SNetError::Io { source, .. } | C4SNetError::CompilerNotFound { source, .. } => {
                Some(source)
            }
            _ => None,
        }
    }
}
