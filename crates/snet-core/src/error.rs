//! Run-time errors (spec §10): each names the entity and the offending record.

use std::fmt;

/// A fatal run-time error. Stops the run; the CLI prints it and exits non-zero.
///
/// One pointer wide (its parts are boxed, read and written through `Deref`): every
/// function on the record path returns a `Result<_, RunError>`, and an error of three
/// strings made each of those results a 72-byte value returned through memory.
#[derive(Clone, PartialEq, Eq)]
pub struct RunError(Box<RunErrorParts>);

/// What a [`RunError`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunErrorParts {
    /// The entity: box name, or combinator/filter/synchrocell with its source position.
    pub entity: String,
    /// The offending record (its labels and values), if any.
    pub record: Option<String>,
    /// What went wrong.
    pub message: String,
}

impl RunError {
    /// A new error.
    #[cold]
    pub fn new(
        entity: impl Into<String>,
        record: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        RunError(Box::new(RunErrorParts {
            entity: entity.into(),
            record,
            message: message.into(),
        }))
    }
}

impl std::ops::Deref for RunError {
    type Target = RunErrorParts;
    fn deref(&self) -> &RunErrorParts {
        &self.0
    }
}

impl std::ops::DerefMut for RunError {
    fn deref_mut(&mut self) -> &mut RunErrorParts {
        &mut self.0
    }
}

impl fmt::Debug for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // As the struct of three fields it was (tests and logs print it so).
        f.debug_struct("RunError")
            .field("entity", &self.entity)
            .field("record", &self.record)
            .field("message", &self.message)
            .finish()
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.entity, self.message)?;
        if let Some(r) = &self.record {
            write!(f, "\n  record: {r}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RunError {}

/// `msg` with every quoted stretch (`"..."`, `` `...` ``) and every run of non-blank
/// characters longer than `limit` (plus a little slack) cut to its first `limit` bytes,
/// followed by `... (N bytes)`: input text quoted in a message (a 35 KB value, a 40 KB
/// name) must not fill standard error.
pub fn cut_long(msg: &str, limit: usize) -> String {
    let slack = limit + 16;
    if msg.len() <= slack {
        return msg.to_owned();
    }
    let b = msg.as_bytes();
    let mut out = String::with_capacity(msg.len().min(1024));
    let mut i = 0;
    while i < b.len() {
        // The stretch starting at `i`: a quoted one, or a run of non-blanks.
        let end = match b[i] {
            q @ (b'"' | b'`') => match msg[i + 1..].find(q as char) {
                Some(k) => i + k + 2,
                None => msg.len(),
            },
            c if !c.is_ascii_whitespace() => {
                let mut j = i;
                while j < b.len() && !b[j].is_ascii_whitespace() {
                    j += 1;
                }
                j
            }
            c => {
                out.push(c as char);
                i += 1;
                continue;
            }
        };
        let piece = &msg[i..end];
        if piece.len() > slack {
            let mut k = limit;
            while !piece.is_char_boundary(k) {
                k -= 1;
            }
            out.push_str(&piece[..k]);
            out.push_str(&format!("... ({} bytes)", piece.len()));
        } else {
            out.push_str(piece);
        }
        i = end;
    }
    out
}
