//! Input and output errors.

use snet_core::value::text::ValueParseError;
use std::fmt;

/// A problem found while reading global input.
///
/// `record` is the 1-based number of the `<record` element (for JSON lines: the line
/// number) the problem is in, or 0 when it is outside any record (I/O errors, XML read as JSON lines);
/// `offset` is the byte offset in the input where the problem was found (for a record
/// that a new `<record` interrupts, where that record starts: the message names where
/// the new one starts), `line` and `column` the same position as a 1-based line and
/// byte column (0 when unknown).
///
/// A recoverable error ([`InputError::is_fatal`] false) means the record was discarded
/// and the reader has resynchronised: the caller prints a warning and keeps reading
/// (spec §11.2 rule 11). After a fatal error the reader yields nothing more.
#[derive(Debug)]
pub struct InputError {
    /// 1-based record number (JSON lines: line number); 0 outside records.
    pub record: u64,
    /// Byte offset of the problem in the input.
    pub offset: u64,
    /// 1-based line of `offset` (JSON lines: the line number); 0 if unknown.
    pub line: u64,
    /// 1-based byte column of `offset` in its line; 0 if unknown.
    pub column: u64,
    /// What went wrong.
    pub kind: InputErrorKind,
}

/// What went wrong in the input. The variants documented as *fatal* end the input;
/// every other variant discards one record.
#[derive(Debug)]
pub enum InputErrorKind {
    /// Reading failed. *Fatal.*
    Io(std::io::Error),
    /// Malformed markup (bad attribute syntax, missing closing tag, unexpected element,
    /// end of input inside a record, a `<record` before the previous one was closed...).
    Syntax(String),
    /// `xmlns` is present but not `snet-home.org` (§11.2 rule 2). *Fatal*, as in the
    /// reference: such a file is not S-Net input.
    Namespace(String),
    /// A record without `type` (rule 3).
    MissingType,
    /// `type` is not `data`, `terminate` or a reserved name (rule 3).
    UnknownType(String),
    /// `type` is `collect`, `sort_begin`, `sort_end` or `trigger_initializer`: reserved
    /// control records the reference aborts on ("not implemented"). *Fatal.*
    ReservedType(String),
    /// `mode` is neither `textual` nor `binary` (rule 4).
    UnknownMode(String),
    /// A field in a binary-mode record (rule 4: `mode` absent means binary). Binary field
    /// encoding (§12.7) is optional and not implemented, so such input cannot be run as
    /// the reference would run it. *Fatal*: continuing without these records would
    /// silently change the program's output. Records with no fields (tags only) have
    /// nothing to decode and are accepted in either mode.
    BinaryUnsupported {
        /// The first field found.
        label: String,
    },
    /// A record or field names an interface other than `C4SNet` (rule 5).
    UnsupportedInterface(String),
    /// A field's `interface` differs from the record's (rule 5).
    InterfaceMismatch {
        /// The record's interface.
        record: String,
        /// The field's interface.
        field: String,
    },
    /// A field in a record that has no interface (neither on the record nor on the
    /// field, rule 5).
    NoInterface {
        /// The field.
        label: String,
    },
    /// A `<field>`, `<tag>` or `<btag>` without a `label` attribute (rules 6, 7).
    MissingLabel(&'static str),
    /// `<field .../>` with no value: fatal in the reference (rule 6). *Fatal.*
    FieldWithoutValue {
        /// The field.
        label: String,
    },
    /// A field value that is not valid §12.6 text (rule 6).
    Value {
        /// The field.
        label: String,
        /// The problem, with its offset inside the value.
        error: ValueParseError,
    },
    /// An XML declaration (`<?xml`) or comment (`<!--`) between records that is never
    /// closed: the rest of the input is inside it. *Fatal*: records after it would
    /// otherwise be lost silently.
    Unterminated {
        /// `<?xml` or `<!--`.
        what: &'static str,
        /// 1-based line where it starts.
        line: u64,
        /// 1-based byte column where it starts.
        column: u64,
    },
    /// JSON lines: the line is not a valid record object.
    Json(String),
    /// JSON lines: the first line that is not blank starts with `<`, so the input is
    /// XML records read as JSON. *Fatal*: every line would be a malformed record.
    XmlNotJson,
}

impl InputError {
    /// True if reading cannot go on after this error.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self.kind,
            InputErrorKind::Io(_)
                | InputErrorKind::Namespace(_)
                | InputErrorKind::ReservedType(_)
                | InputErrorKind::BinaryUnsupported { .. }
                | InputErrorKind::FieldWithoutValue { .. }
                | InputErrorKind::Unterminated { .. }
                | InputErrorKind::XmlNotJson
        )
    }
}

impl fmt::Display for InputErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputErrorKind::Io(e) => write!(f, "cannot read input: {e}"),
            InputErrorKind::Syntax(m) => f.write_str(m),
            InputErrorKind::Namespace(ns) => write!(
                f,
                "xmlns is \"{ns}\" but S-Net records must use xmlns=\"snet-home.org\""
            ),
            InputErrorKind::MissingType => write!(f, "record has no `type` attribute"),
            InputErrorKind::UnknownType(t) => write!(
                f,
                "unknown record type \"{t}\" (expected \"data\" or \"terminate\")"
            ),
            InputErrorKind::ReservedType(t) => write!(
                f,
                "record type \"{t}\" is a runtime control record and cannot be given as input"
            ),
            InputErrorKind::UnknownMode(m) => write!(
                f,
                "unknown mode \"{m}\" (expected \"textual\" or \"binary\")"
            ),
            InputErrorKind::BinaryUnsupported { label } => write!(
                f,
                "field {label} is in a binary-mode record, and binary field encoding is not \
                 supported (a record without a `mode` attribute is binary); \
                 add mode=\"textual\" and write the values as text, e.g. (int)10"
            ),
            InputErrorKind::UnsupportedInterface(i) => write!(
                f,
                "unsupported language interface \"{i}\" (only C4SNet is available)"
            ),
            InputErrorKind::InterfaceMismatch { record, field } => write!(
                f,
                "field interface \"{field}\" differs from the record's interface \"{record}\""
            ),
            InputErrorKind::NoInterface { label } => write!(
                f,
                "field {label} has no language interface (add interface=\"C4SNet\" to the \
                 record or the field)"
            ),
            InputErrorKind::MissingLabel(elem) => {
                write!(f, "<{elem}> has no `label` attribute")
            }
            InputErrorKind::FieldWithoutValue { label } => {
                write!(f, "field {label} has no value (<field .../>)")
            }
            InputErrorKind::Value { label, error } => {
                write!(f, "bad value of field {label}: {error}")
            }
            InputErrorKind::Unterminated { what, line, column } => write!(
                f,
                "the `{what}` at line {line}, column {column} is never closed \
                 (no `{}`), so the rest of the input is inside it",
                if *what == "<!--" { "-->" } else { "?>" }
            ),
            InputErrorKind::Json(m) => write!(f, "invalid JSON record: {m}"),
            InputErrorKind::XmlNotJson => f.write_str(
                "the input looks like XML, not JSON lines (it starts with `<`): \
                 read it without --format json",
            ),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.line > 0 {
            format!(
                "line {}, column {}, byte {}",
                self.line, self.column, self.offset
            )
        } else {
            format!("byte {}", self.offset)
        };
        // Input text quoted in a message (a JSON string, an element name) is cut: a
        // 35 KB value must not fill standard error.
        let kind = cut_long(&self.kind.to_string());
        if self.record > 0 {
            write!(f, "input record {} ({at}): {kind}", self.record)
        } else {
            write!(f, "input ({at}): {kind}")
        }
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            InputErrorKind::Io(e) => Some(e),
            InputErrorKind::Value { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// A problem writing global output.
#[derive(Debug)]
pub enum OutputError {
    /// Writing failed.
    Io(std::io::Error),
    /// A `NULL` field (spec §12.5 rule 4) reached global output (§10).
    NullField {
        /// The field's label.
        label: String,
        /// The record's labels, e.g. `{A, <T>}`.
        record: String,
    },
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputError::Io(e) => write!(f, "cannot write output: {e}"),
            OutputError::NullField { label, record } => write!(
                f,
                "field {label} of output record {record} is NULL (a box emitted NULL for it); \
                 NULL fields cannot be written"
            ),
        }
    }
}

impl std::error::Error for OutputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OutputError::Io(e) => Some(e),
            OutputError::NullField { .. } => None,
        }
    }
}

impl From<std::io::Error> for OutputError {
    fn from(e: std::io::Error) -> Self {
        OutputError::Io(e)
    }
}

/// Longest piece of input text a message quotes in full.
const SHOWN_BYTES: usize = 64;

/// [`snet_core::error::cut_long`] at [`SHOWN_BYTES`].
pub(crate) fn cut_long(msg: &str) -> String {
    snet_core::error::cut_long(msg, SHOWN_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 33 item 6: a 40 KB JSON string quoted by the parser's message is cut.
    #[test]
    fn long_quoted_input_is_cut_in_messages() {
        let e = InputError {
            record: 2,
            offset: 10,
            line: 2,
            column: 1,
            kind: InputErrorKind::Json(format!(
                "invalid type: string \"{}\", expected i32 at line 1 column 40011",
                "z".repeat(40000)
            )),
        };
        let shown = e.to_string();
        assert!(shown.len() < 250, "{} bytes: {shown}", shown.len());
        assert!(shown.contains("\"zzzz"), "{shown}");
        assert!(shown.contains("... (40002 bytes)"), "{shown}");
        assert!(
            shown.ends_with("expected i32 at line 1 column 40011"),
            "{shown}"
        );
        // Short messages are left alone.
        assert_eq!(cut_long("a `b` c"), "a `b` c");
    }
}
