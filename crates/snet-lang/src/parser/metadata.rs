//! The `<metadata>` sub-language (spec §2.6, §3.11): a small XML-like element tree.

use crate::ast::{MdElem, Metadata};
use crate::diag::Diagnostic;
use crate::span::Span;

/// Parses the metadata block starting at byte `start` (which holds `<metadata>`).
/// Returns the block and the offset just after `</metadata>` (or the end of input).
pub(crate) fn parse_metadata(
    src: &str,
    start: usize,
    diags: &mut Vec<Diagnostic>,
) -> (Metadata, usize) {
    let mut p = MdParser {
        src,
        b: src.as_bytes(),
        pos: start + "<metadata>".len(),
        diags,
    };
    let mut elems = Vec::new();
    loop {
        p.skip_ws_and_comments();
        if p.pos >= p.b.len() {
            p.diags.push(
                Diagnostic::error("E0206", "unterminated metadata block")
                    .primary(
                        Span::new(start, start + 10),
                        "this `<metadata>` is never closed",
                    )
                    .help("end the block with `</metadata>`"),
            );
            break;
        }
        if p.rest().starts_with("</metadata>") {
            p.pos += "</metadata>".len();
            break;
        }
        if p.rest().starts_with("</") {
            let s = p.pos;
            let name = p.end_tag_name();
            p.diags.push(
                Diagnostic::error(
                    "E0205",
                    format!("closing tag `</{name}>` without a matching opening tag"),
                )
                .primary(Span::new(s, p.pos), "nothing to close here"),
            );
            continue;
        }
        if p.peek() == b'<' {
            if let Some(e) = p.element(0) {
                elems.push(e);
            }
        } else {
            let s = p.pos;
            p.skip_text();
            p.diags.push(
                Diagnostic::error("E0206", "text outside a metadata element").primary(
                    Span::new(s, p.pos),
                    "expected an element such as `<default>`",
                ),
            );
        }
    }
    let end = p.pos;
    (
        Metadata {
            elems,
            span: Span::new(start, end),
        },
        end,
    )
}

struct MdParser<'a, 'd> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    diags: &'d mut Vec<Diagnostic>,
}

const MAX_MD_DEPTH: usize = 64;

impl MdParser<'_, '_> {
    fn rest(&self) -> &str {
        self.src.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> u8 {
        self.b.get(self.pos).copied().unwrap_or(0)
    }

    fn skip_ws(&mut self) {
        while self.pos < self.b.len() && self.b[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn skip_ws_and_comments(&mut self) {
        loop {
            self.skip_ws();
            if self.rest().starts_with("<!--") {
                match self.rest().find("-->") {
                    Some(i) => self.pos += i + 3,
                    None => {
                        self.diags.push(
                            Diagnostic::error("E0206", "unterminated comment in metadata")
                                .primary(Span::new(self.pos, self.pos + 4), "starts here"),
                        );
                        self.pos = self.b.len();
                    }
                }
            } else {
                return;
            }
        }
    }

    fn skip_text(&mut self) {
        while self.pos < self.b.len() && self.b[self.pos] != b'<' {
            self.pos += 1;
        }
    }

    fn name(&mut self) -> String {
        let s = self.pos;
        while self.pos < self.b.len()
            && (self.b[self.pos].is_ascii_alphanumeric()
                || matches!(self.b[self.pos], b'_' | b'-' | b'.' | b':'))
        {
            self.pos += 1;
        }
        self.src[s..self.pos].to_owned()
    }

    fn end_tag_name(&mut self) -> String {
        self.pos += 2;
        self.skip_ws();
        let n = self.name();
        self.skip_ws();
        if self.peek() == b'>' {
            self.pos += 1;
        }
        n
    }

    fn malformed(&mut self, at: usize, what: &str) {
        self.diags.push(
            Diagnostic::error("E0206", format!("malformed metadata: {what}"))
                .primary(Span::new(at, (at + 1).min(self.b.len()).max(at)), ""),
        );
    }

    /// Parses `<name attrs> ... </name>` or `<name attrs/>` at `pos`.
    fn element(&mut self, depth: usize) -> Option<MdElem> {
        let start = self.pos;
        self.pos += 1;
        let name = self.name();
        if name.is_empty() {
            self.malformed(start, "expected an element name after `<`");
            self.skip_past(b'>');
            return None;
        }
        let mut attrs = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                b'/' if self.rest().starts_with("/>") => {
                    self.pos += 2;
                    return Some(MdElem {
                        name,
                        attrs,
                        children: Vec::new(),
                        text: String::new(),
                        span: Span::new(start, self.pos),
                    });
                }
                b'>' => {
                    self.pos += 1;
                    break;
                }
                0 => {
                    self.malformed(start, "element is never closed");
                    return None;
                }
                _ => {
                    let at = self.pos;
                    let key = self.name();
                    if key.is_empty() {
                        self.malformed(at, "expected an attribute name, `>` or `/>`");
                        self.skip_past(b'>');
                        return None;
                    }
                    self.skip_ws();
                    if self.peek() != b'=' {
                        self.malformed(self.pos, "expected `=` after the attribute name");
                        self.skip_past(b'>');
                        return None;
                    }
                    self.pos += 1;
                    self.skip_ws();
                    let q = self.peek();
                    if q != b'"' && q != b'\'' {
                        self.malformed(self.pos, "attribute values must be quoted");
                        self.skip_past(b'>');
                        return None;
                    }
                    self.pos += 1;
                    let vs = self.pos;
                    while self.pos < self.b.len() && self.b[self.pos] != q {
                        self.pos += 1;
                    }
                    let value = self.src[vs..self.pos].to_owned();
                    if self.pos < self.b.len() {
                        self.pos += 1;
                    }
                    attrs.push((key, value));
                }
            }
        }
        let head = Span::new(start, self.pos);
        let mut children = Vec::new();
        let mut text = String::new();
        loop {
            self.skip_ws_and_comments();
            if self.pos >= self.b.len() || self.rest().starts_with("</metadata>") {
                self.diags.push(
                    Diagnostic::error("E0205", format!("element `<{name}>` is never closed"))
                        .primary(head, "opened here")
                        .help(format!("add `</{name}>`")),
                );
                return Some(MdElem {
                    name,
                    attrs,
                    children,
                    text,
                    span: head,
                });
            }
            if self.rest().starts_with("</") {
                let es = self.pos;
                let end_name = self.end_tag_name();
                if end_name != name {
                    self.diags.push(
                        Diagnostic::error(
                            "E0205",
                            format!(
                                "mismatched metadata element: `<{name}>` is closed by `</{end_name}>`"
                            ),
                        )
                        .primary(Span::new(es, self.pos), format!("expected `</{name}>`"))
                        .secondary(head, "opened here"),
                    );
                }
                return Some(MdElem {
                    name,
                    attrs,
                    children,
                    text: text.trim().to_owned(),
                    span: head,
                });
            }
            if self.peek() == b'<' {
                if depth >= MAX_MD_DEPTH {
                    self.malformed(self.pos, "elements nested too deeply");
                    self.pos = self.b.len();
                    continue;
                }
                if let Some(c) = self.element(depth + 1) {
                    children.push(c);
                }
            } else {
                let s = self.pos;
                self.skip_text();
                text.push_str(&self.src[s..self.pos]);
            }
        }
    }

    fn skip_past(&mut self, b: u8) {
        while self.pos < self.b.len() && self.b[self.pos] != b {
            self.pos += 1;
        }
        if self.pos < self.b.len() {
            self.pos += 1;
        }
    }
}
