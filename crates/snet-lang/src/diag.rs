//! Diagnostics: errors and warnings with spans, rendered in rustc style.
//!
//! ```text
//! error[E0401]: undefined network or box `foo`
//!  --> prog.snet:3:12
//!   |
//! 3 | connect a .. foo;
//!   |              ^^^ not defined in this scope
//!   |
//!   = help: did you mean `fo`?
//! ```
//!
//! Every error kind has a code; `tests/check_errors/` holds one program per code (the
//! file name starts with the code) and pins the rendered message.

use crate::span::{SourceFile, Span};
use std::fmt::Write as _;
use std::sync::Arc;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The program is rejected.
    Error,
    /// The program is accepted, but something looks wrong.
    Warning,
}

/// A labelled span of a diagnostic.
#[derive(Debug, Clone)]
pub struct SpanLabel {
    /// Where.
    pub span: Span,
    /// What to say there (may be empty).
    pub text: String,
    /// The primary label gets `^` carets, secondary ones `-`.
    pub primary: bool,
}

/// One error or warning.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Stable code, e.g. `E0401` (see the crate docs for the table).
    pub code: &'static str,
    /// One-line message.
    pub message: String,
    /// Labelled spans; the first primary label gives the reported location.
    pub labels: Vec<SpanLabel>,
    /// Notes (`= note: ...`).
    pub notes: Vec<String>,
    /// A one-line suggestion (`= help: ...`).
    pub help: Option<String>,
    file: Option<Arc<SourceFile>>,
}

/// Longest name or value a diagnostic quotes in full (a longer one is cut, with its
/// length: a 40 KB metadata value must not fill the message).
const SHOWN_BYTES: usize = 200;

fn cut(s: String) -> String {
    if s.len() <= SHOWN_BYTES + 16 {
        s
    } else {
        snet_core::error::cut_long(&s, SHOWN_BYTES)
    }
}

impl Diagnostic {
    /// An error with a message.
    pub fn error(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: cut(message.into()),
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
            file: None,
        }
    }

    /// A warning with a message.
    pub fn warning(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    /// Adds the primary label.
    pub fn primary(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.labels.push(SpanLabel {
            span,
            text: cut(text.into()),
            primary: true,
        });
        self
    }

    /// Adds a secondary label.
    pub fn secondary(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.labels.push(SpanLabel {
            span,
            text: cut(text.into()),
            primary: false,
        });
        self
    }

    /// Adds a note.
    pub fn note(mut self, text: impl Into<String>) -> Diagnostic {
        self.notes.push(cut(text.into()));
        self
    }

    /// Sets the help line.
    pub fn help(mut self, text: impl Into<String>) -> Diagnostic {
        self.help = Some(cut(text.into()));
        self
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The primary span, if any.
    pub fn span(&self) -> Option<Span> {
        self.labels
            .iter()
            .find(|l| l.primary)
            .or(self.labels.first())
            .map(|l| l.span)
    }

    /// `file:line:col` of the primary span (empty if there is no file or span).
    pub fn location(&self) -> String {
        match (&self.file, self.span()) {
            (Some(f), Some(s)) => f.location(s),
            (Some(f), None) => f.name().to_owned(),
            _ => String::new(),
        }
    }

    /// Renders without colour.
    pub fn render(&self) -> String {
        self.render_styled(false)
    }

    /// Renders, with ANSI colour if `color`.
    pub fn render_styled(&self, color: bool) -> String {
        let st = Style { on: color };
        let mut out = String::new();
        let (word, col) = match self.severity {
            Severity::Error => ("error", RED),
            Severity::Warning => ("warning", YELLOW),
        };
        let _ = writeln!(
            out,
            "{}{}",
            st.paint(&format!("{word}[{}]", self.code), col),
            st.paint(&format!(": {}", self.message), BOLD)
        );
        let Some(file) = &self.file else {
            for n in &self.notes {
                let _ = writeln!(out, "  = note: {n}");
            }
            if let Some(h) = &self.help {
                let _ = writeln!(out, "  = help: {h}");
            }
            return out;
        };
        // Lines to show: each label's first line, sorted, with their labels.
        let mut lines: Vec<(usize, Vec<&SpanLabel>)> = Vec::new();
        for l in &self.labels {
            let (line, _) = file.line_col(l.span.start);
            match lines.iter_mut().find(|(n, _)| *n == line) {
                Some((_, v)) => v.push(l),
                None => lines.push((line, vec![l])),
            }
        }
        lines.sort_by_key(|(n, _)| *n);
        let max_line = lines.last().map(|(n, _)| *n).unwrap_or(1);
        let gutter = max_line.to_string().len();
        let pad = " ".repeat(gutter);
        let bar = st.paint("|", BLUE);
        let _ = writeln!(
            out,
            "{pad}{} {}",
            st.paint("-->", BLUE),
            match self.span() {
                Some(s) => file.location(s),
                None => file.name().to_owned(),
            }
        );
        if !lines.is_empty() {
            let _ = writeln!(out, "{pad} {bar}");
        }
        let mut prev: Option<usize> = None;
        for (line, labels) in &lines {
            if let Some(p) = prev {
                if *line > p + 1 {
                    let _ = writeln!(out, "{}", st.paint("...", BLUE));
                }
            }
            prev = Some(*line);
            let full = file.line_text(*line);
            // A very long line (minified or generated source, binary garbage) is cut to
            // a window around its first label, marked with `...` at each cut end.
            let line_start = file.line_start(*line);
            let first = labels
                .iter()
                .min_by_key(|l| (!l.primary, l.span.start))
                .map(|l| (l.span.start as usize).saturating_sub(line_start))
                .unwrap_or(0);
            let (cut, text, lead) = window(full, first);
            let shown = format!(
                "{lead}{}{}",
                expand_tabs(text),
                if cut + text.len() < full.len() {
                    "..."
                } else {
                    ""
                }
            );
            let _ = writeln!(
                out,
                "{} {bar} {}",
                st.paint(&format!("{line:>gutter$}"), BLUE),
                shown
            );
            // One caret row per label, primary first, in column order.
            let mut ls: Vec<&&SpanLabel> = labels.iter().collect();
            ls.sort_by_key(|l| (!l.primary, l.span.start));
            for l in ls {
                let (_, c0) = file.line_col(l.span.start);
                // A label outside the shown part of a cut line is left out.
                if c0 - 1 < cut || c0 - 1 > cut + text.len() {
                    continue;
                }
                let line_len = text.len();
                let start = (c0 - 1).saturating_sub(cut).min(line_len);
                let end_in_line = {
                    let (el, ec) = file.line_col(l.span.end);
                    if el == *line {
                        (ec - 1).saturating_sub(cut).min(line_len)
                    } else {
                        line_len
                    }
                };
                let col0 = lead.len() + display_width(&text[..floor_char(text, start)]);
                let width = display_width(
                    text.get(floor_char(text, start)..floor_char(text, end_in_line))
                        .unwrap_or(""),
                )
                .max(1);
                let ch = if l.primary { "^" } else { "-" };
                let marks = ch.repeat(width);
                let colour = if l.primary { col } else { BLUE };
                let label = if l.text.is_empty() {
                    String::new()
                } else {
                    format!(" {}", l.text)
                };
                let _ = writeln!(
                    out,
                    "{pad} {bar} {}{}",
                    " ".repeat(col0),
                    st.paint(&format!("{marks}{label}"), colour)
                );
            }
        }
        if !self.notes.is_empty() || self.help.is_some() {
            let _ = writeln!(out, "{pad} {bar}");
        }
        for n in &self.notes {
            let _ = writeln!(out, "{pad} {} {n}", st.paint("= note:", BOLD));
        }
        if let Some(h) = &self.help {
            let _ = writeln!(out, "{pad} {} {h}", st.paint("= help:", BOLD));
        }
        out
    }
}

/// Bytes of a source line shown around a label before the line is cut.
const LINE_WINDOW: usize = 120;

/// The part of `line` to show for a label at byte `at`: `(cut, text, lead)`, where
/// `text` starts at byte `cut` of `line` and `lead` is `"..."` when `cut > 0`. Lines of
/// up to [`LINE_WINDOW`] bytes are shown whole.
fn window(line: &str, at: usize) -> (usize, &str, &'static str) {
    if line.len() <= LINE_WINDOW {
        return (0, line, "");
    }
    let start = floor_char(line, at.saturating_sub(LINE_WINDOW / 3));
    let end = floor_char(line, start + LINE_WINDOW);
    (start, &line[start..end], if start > 0 { "..." } else { "" })
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A source line as shown in a snippet: a tab as four spaces, a carriage return inside
/// the line as a space, any other control character (and a byte that is not UTF-8) as
/// U+FFFD, so that a terminal shows every character in one column and the carets line up.
fn expand_tabs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push_str("    "),
            '\r' => out.push(' '),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

fn display_width(s: &str) -> usize {
    s.chars().map(|c| if c == '\t' { 4 } else { 1 }).sum()
}

const RED: &str = "\x1b[1;31m";
const YELLOW: &str = "\x1b[1;33m";
const BLUE: &str = "\x1b[1;34m";
const BOLD: &str = "\x1b[1m";

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, s: &str, code: &str) -> String {
        if self.on {
            format!("{code}{s}\x1b[0m")
        } else {
            s.to_owned()
        }
    }
}

/// Errors shown by [`Diagnostics::render_styled`]; the rest are counted.
pub const MAX_SHOWN_ERRORS: usize = 50;
/// Warnings of one code shown by [`Diagnostics::render_styled`]; the rest are counted.
pub const MAX_SHOWN_PER_WARNING: usize = 10;

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// A list of diagnostics, in the order they were found (sorted by position for output).
#[derive(Debug, Clone, Default)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// No diagnostics.
    pub fn new() -> Diagnostics {
        Diagnostics::default()
    }

    /// Adds one.
    pub fn push(&mut self, d: Diagnostic) {
        self.items.push(d);
    }

    /// Appends all of `other`.
    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether any is an error.
    pub fn has_errors(&self) -> bool {
        self.items.iter().any(Diagnostic::is_error)
    }

    /// Number of errors.
    pub fn error_count(&self) -> usize {
        self.items.iter().filter(|d| d.is_error()).count()
    }

    /// The diagnostics.
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }

    /// Attaches `file` to every diagnostic that has none, and sorts by position
    /// (stable: diagnostics at the same position keep their order).
    pub(crate) fn finish(&mut self, file: &Arc<SourceFile>) {
        for d in &mut self.items {
            if d.file.is_none() {
                d.file = Some(Arc::clone(file));
            }
        }
        self.items
            .sort_by_key(|d| d.span().map(|s| s.start).unwrap_or(u32::MAX));
    }

    /// Renders all diagnostics, rustc style, without colour; separated by blank lines.
    pub fn render(&self) -> String {
        self.render_styled(false)
    }

    /// Renders the diagnostics, with ANSI colour if `color`: at most
    /// [`MAX_SHOWN_ERRORS`] errors and [`MAX_SHOWN_PER_WARNING`] warnings of each code
    /// (a garbage file or a generated program would otherwise flood the terminal),
    /// then a line saying how many more there are.
    pub fn render_styled(&self, color: bool) -> String {
        let mut out = String::new();
        let mut errors = 0usize;
        let mut per_code: std::collections::HashMap<&str, usize> = Default::default();
        let (mut hidden_errors, mut hidden_warnings) = (0usize, 0usize);
        for d in &self.items {
            let show = if d.is_error() {
                errors += 1;
                let show = errors <= MAX_SHOWN_ERRORS;
                hidden_errors += usize::from(!show);
                show
            } else {
                let n = per_code.entry(d.code).or_default();
                *n += 1;
                let show = *n <= MAX_SHOWN_PER_WARNING;
                hidden_warnings += usize::from(!show);
                show
            };
            if !show {
                continue;
            }
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&d.render_styled(color));
        }
        if hidden_errors + hidden_warnings > 0 {
            let mut parts = Vec::new();
            if hidden_errors > 0 {
                parts.push(plural(hidden_errors, "more error"));
            }
            if hidden_warnings > 0 {
                parts.push(plural(hidden_warnings, "more warning"));
            }
            let _ = writeln!(
                out,
                "\nnote: {} not shown (at most {MAX_SHOWN_ERRORS} errors and {MAX_SHOWN_PER_WARNING} warnings of each kind are shown; fix these first)",
                parts.join(" and ")
            );
        }
        out
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl std::fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Diagnostics {}

/// "Did you mean" candidate: the closest name within a small edit distance
/// ([`snet_core::label::closest`]).
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    snet_core::label::closest(name, candidates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_rustc_style_with_caret_under_span() {
        let f = Arc::new(SourceFile::new("p.snet", "net p\nconnect a .. foo;\n"));
        let mut ds = Diagnostics::new();
        ds.push(
            Diagnostic::error("E0401", "undefined network or box `foo`")
                .primary(Span::new(19, 22), "not defined")
                .help("define it"),
        );
        ds.finish(&f);
        assert_eq!(
            ds.render(),
            "error[E0401]: undefined network or box `foo`\n --> p.snet:2:14\n  |\n2 | connect a .. foo;\n  |              ^^^ not defined\n  |\n  = help: define it\n"
        );
    }

    #[test]
    fn suggests_close_names_only() {
        let names = ["merge", "split", "foo"];
        assert_eq!(closest("mrege", names.iter().copied()), Some("merge"));
        assert_eq!(closest("zzzzzz", names.iter().copied()), None);
    }
}
