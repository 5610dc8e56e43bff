//! Source files and byte spans.
//!
//! A [`Span`] is a small `Copy` pair of byte offsets; line and column are computed only
//! when a diagnostic is printed (STYLE "Diagnostics").

use std::fmt;

/// A half-open byte range `start..end` in one source file.
///
/// Spans never take part in AST equality: two syntax trees are equal when they have the
/// same structure, wherever they were written (this is what the pretty-print round-trip
/// property compares). Compare `start`/`end` explicitly where positions matter.
#[derive(Clone, Copy, Default, Eq)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl PartialEq for Span {
    fn eq(&self, _other: &Span) -> bool {
        true
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: clamp_u32(start),
            end: clamp_u32(end.max(start)),
        }
    }

    /// The smallest span covering `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// An empty span at the end of `self`.
    pub fn end_point(self) -> Span {
        Span {
            start: self.end,
            end: self.end,
        }
    }

    /// Length in bytes.
    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether the span is empty.
    pub fn is_empty(self) -> bool {
        self.end == self.start
    }
}

fn clamp_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// A source file: its name (as given by the user) and text, with a line index.
#[derive(Debug)]
pub struct SourceFile {
    name: String,
    text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// Indexes `text` under `name`.
    pub fn new(name: &str, text: &str) -> SourceFile {
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        SourceFile {
            name: name.to_owned(),
            text: text.to_owned(),
            line_starts,
        }
    }

    /// The file name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text under `span` (empty if the span is not on character boundaries).
    pub fn slice(&self, span: Span) -> &str {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    /// 1-based line and column (in bytes) of byte offset `pos`.
    pub fn line_col(&self, pos: u32) -> (usize, usize) {
        let pos = (pos as usize).min(self.text.len());
        let line = match self.line_starts.binary_search(&pos) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        (line + 1, pos - self.line_starts[line] + 1)
    }

    /// The byte offset where 1-based line `line` starts (the end of the text past the
    /// last line).
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or(self.text.len())
    }

    /// The text of 1-based line `line`, without its line terminator.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self.line_starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len());
        let s = self.text.get(start..end).unwrap_or("");
        // The terminator is `\n` or `\r\n`; a lone `\r` is whitespace of the line (spec
        // §2.1), which columns count.
        match s.strip_suffix('\n') {
            Some(s) => s.strip_suffix('\r').unwrap_or(s),
            None => s,
        }
    }

    /// Number of lines.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// `file:line:col` of `span`'s start.
    pub fn location(&self, span: Span) -> String {
        let (l, c) = self.line_col(span.start);
        format!("{}:{}:{}", self.name, l, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based() {
        let f = SourceFile::new("x.snet", "ab\ncd\n\nef");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(4), (2, 2));
        assert_eq!(f.line_col(7), (4, 1));
        assert_eq!(f.line_text(2), "cd");
        assert_eq!(f.line_text(3), "");
        assert_eq!(f.location(Span::new(8, 9)), "x.snet:4:2");
    }

    #[test]
    fn a_lone_carriage_return_is_part_of_its_line() {
        // CRLF ends a line; a CR alone is whitespace that columns count (the fuzz
        // campaign's file of one CR put its end past the end of an empty line).
        let f = SourceFile::new("x.snet", "a\r\nb\rc\r");
        assert_eq!(f.line_text(1), "a");
        assert_eq!(f.line_text(2), "b\rc\r");
        assert_eq!(f.line_col(7), (2, 5));
        let f = SourceFile::new("x.snet", "\r");
        assert_eq!(f.line_text(1), "\r");
        assert_eq!(f.line_col(1), (1, 2));
    }
}
