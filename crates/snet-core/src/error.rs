//! Run-time errors (spec §10): each names the entity and the offending record.

use std::fmt;

/// A fatal run-time error. Stops the run; the CLI prints it and exits non-zero.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    /// The entity: box name, or combinator/filter/synchrocell with its source position.
    pub entity: String,
    /// The offending record (its labels and values), if any.
    pub record: Option<String>,
    /// What went wrong.
    pub message: String,
}

impl RunError {
    /// A new error.
    pub fn new(
        entity: impl Into<String>,
        record: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        RunError {
            entity: entity.into(),
            record,
            message: message.into(),
        }
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
