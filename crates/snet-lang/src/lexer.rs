//! The lexer (spec §2). It is driven by the parser, one token at a time, so that the
//! parser can switch to the metadata sub-language (§2.6) at definition positions and
//! re-lex from an earlier position.

use crate::diag::Diagnostic;
use crate::span::Span;

/// Token kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok {
    /// An identifier.
    Ident,
    /// An integer literal and its value; [`INT_OVERFLOW`] if it does not fit in 64
    /// bits (the parser checks the 32-bit range).
    Int(u64),
    /// `box`
    KwBox,
    /// `net`
    KwNet,
    /// `connect`
    KwConnect,
    /// `type`
    KwType,
    /// `typesig`
    KwTypesig,
    /// `if`
    KwIf,
    /// `then`
    KwThen,
    /// `else`
    KwElse,
    /// `..`
    DotDot,
    /// `...`
    Ellipsis,
    /// `->`
    Arrow,
    /// `||`
    BarBar,
    /// `|]`
    BarRBracket,
    /// `[|`
    LBracketBar,
    /// `**`
    StarStar,
    /// `!!`
    BangBang,
    /// `::`
    ColonColon,
    /// `<<< ... >>>` inline code, lexed as one token.
    InlineCode,
    /// `==`
    EqEq,
    /// `!=`
    Ne,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `&&`
    AndAnd,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `,`
    Comma,
    /// `;`
    Semi,
    /// `:`
    Colon,
    /// `=`
    Eq,
    /// `|`
    Bar,
    /// `*`
    Star,
    /// `!`
    Bang,
    /// `@`
    At,
    /// `\`
    Backslash,
    /// `#`
    Hash,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `?`
    Question,
    /// A character that starts no token (already reported).
    Error,
    /// End of input.
    Eof,
}

impl Tok {
    /// How the token is shown in "expected ..., found ..." messages.
    pub fn describe(self) -> &'static str {
        match self {
            Tok::Ident => "identifier",
            Tok::Int(_) => "integer",
            Tok::KwBox => "`box`",
            Tok::KwNet => "`net`",
            Tok::KwConnect => "`connect`",
            Tok::KwType => "`type`",
            Tok::KwTypesig => "`typesig`",
            Tok::KwIf => "`if`",
            Tok::KwThen => "`then`",
            Tok::KwElse => "`else`",
            Tok::DotDot => "`..`",
            Tok::Ellipsis => "`...`",
            Tok::Arrow => "`->`",
            Tok::BarBar => "`||`",
            Tok::BarRBracket => "`|]`",
            Tok::LBracketBar => "`[|`",
            Tok::StarStar => "`**`",
            Tok::BangBang => "`!!`",
            Tok::ColonColon => "`::`",
            Tok::InlineCode => "inline code `<<< ... >>>`",
            Tok::EqEq => "`==`",
            Tok::Ne => "`!=`",
            Tok::Le => "`<=`",
            Tok::Ge => "`>=`",
            Tok::AndAnd => "`&&`",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::LBrace => "`{`",
            Tok::RBrace => "`}`",
            Tok::Lt => "`<`",
            Tok::Gt => "`>`",
            Tok::Comma => "`,`",
            Tok::Semi => "`;`",
            Tok::Colon => "`:`",
            Tok::Eq => "`=`",
            Tok::Bar => "`|`",
            Tok::Star => "`*`",
            Tok::Bang => "`!`",
            Tok::At => "`@`",
            Tok::Backslash => "`\\`",
            Tok::Hash => "`#`",
            Tok::Plus => "`+`",
            Tok::Minus => "`-`",
            Tok::Slash => "`/`",
            Tok::Percent => "`%`",
            Tok::Question => "`?`",
            Tok::Error => "invalid character",
            Tok::Eof => "end of file",
        }
    }
}

/// A token and where it is.
#[derive(Debug, Clone, Copy)]
pub struct Token {
    /// Kind (and literal value).
    pub tok: Tok,
    /// Where.
    pub span: Span,
}

/// Marks an integer literal that does not fit in 64 bits.
pub const INT_OVERFLOW: u64 = u64::MAX;

/// Stands for a byte of the file that is not valid UTF-8 (ASCII SUB, one byte, so byte
/// offsets stay those of the file). Never part of a token; diagnostics show it as `\u{fffd}`.
pub const INVALID_BYTE: char = '\u{1a}';

/// The lexer: a position in the source plus the errors found so far.
#[derive(Debug)]
pub struct Lexer<'s> {
    src: &'s str,
    bytes: &'s [u8],
    pos: usize,
    /// Lexical errors; positions below `reported_to` are not reported again after a
    /// re-lex.
    pub errors: Vec<Diagnostic>,
    reported_to: usize,
}

impl<'s> Lexer<'s> {
    /// A lexer at the start of `src`.
    pub fn new(src: &'s str) -> Lexer<'s> {
        Lexer {
            src,
            bytes: src.as_bytes(),
            pos: 0,
            errors: Vec::new(),
            reported_to: 0,
        }
    }

    /// The source text.
    pub fn source(&self) -> &'s str {
        self.src
    }

    /// Moves to byte offset `pos` (used to re-lex a metadata block).
    pub fn reset(&mut self, pos: usize) {
        self.pos = pos.min(self.bytes.len());
    }

    /// Current byte offset.
    pub fn pos(&self) -> usize {
        self.pos
    }

    fn error(&mut self, d: Diagnostic, at: usize) {
        if at >= self.reported_to {
            self.reported_to = at + 1;
            self.errors.push(d);
        }
    }

    fn peek_byte(&self, off: usize) -> u8 {
        self.bytes.get(self.pos + off).copied().unwrap_or(0)
    }

    /// Skips whitespace and comments.
    pub fn skip_trivia(&mut self) {
        loop {
            let b = self.peek_byte(0);
            if b == b' ' || b == b'\t' || b == b'\n' || b == b'\r' || b == 0x0c {
                self.pos += 1;
            } else if b == b'/' && self.peek_byte(1) == b'/' {
                while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                    self.pos += 1;
                }
            } else if b == b'/' && self.peek_byte(1) == b'*' {
                let start = self.pos;
                match self.src[self.pos + 2..].find("*/") {
                    Some(i) => self.pos += 2 + i + 2,
                    None => {
                        self.pos = self.bytes.len();
                        self.error(
                            Diagnostic::error("E0102", "unterminated block comment")
                                .primary(Span::new(start, start + 2), "comment starts here")
                                .help("close it with `*/`"),
                            start,
                        );
                    }
                }
            } else {
                return;
            }
        }
    }

    /// Whether the source at the next token starts with `text`.
    pub fn at_text(&mut self, text: &str) -> bool {
        self.skip_trivia();
        self.src[self.pos..].starts_with(text)
    }

    /// The next token.
    pub fn next_token(&mut self) -> Token {
        self.skip_trivia();
        let start = self.pos;
        if start >= self.bytes.len() {
            return Token {
                tok: Tok::Eof,
                span: Span::new(start, start),
            };
        }
        let b = self.bytes[start];
        let tok = if b.is_ascii_alphabetic() || b == b'_' {
            self.lex_ident()
        } else if b.is_ascii_digit() {
            self.lex_int()
        } else {
            self.lex_punct()
        };
        Token {
            tok,
            span: Span::new(start, self.pos),
        }
    }

    fn lex_ident(&mut self) -> Tok {
        let start = self.pos;
        while self.pos < self.bytes.len()
            && (self.bytes[self.pos].is_ascii_alphanumeric() || self.bytes[self.pos] == b'_')
        {
            self.pos += 1;
        }
        match &self.src[start..self.pos] {
            "box" => Tok::KwBox,
            "net" => Tok::KwNet,
            "connect" => Tok::KwConnect,
            "type" => Tok::KwType,
            "typesig" => Tok::KwTypesig,
            "if" => Tok::KwIf,
            "then" => Tok::KwThen,
            "else" => Tok::KwElse,
            _ => Tok::Ident,
        }
    }

    fn lex_int(&mut self) -> Tok {
        let start = self.pos;
        let (radix, digits_start) = if self.peek_byte(0) == b'0'
            && (self.peek_byte(1) == b'x' || self.peek_byte(1) == b'X')
        {
            (16, start + 2)
        } else if self.peek_byte(0) == b'0' {
            (8, start + 1)
        } else {
            (10, start)
        };
        self.pos = digits_start;
        while self.peek_byte(0).is_ascii_alphanumeric() || self.peek_byte(0) == b'_' {
            self.pos += 1;
        }
        let text = &self.src[digits_start..self.pos];
        let mut value: u64 = 0;
        for (i, c) in text.char_indices() {
            match c.to_digit(radix) {
                Some(d) => {
                    value = value
                        .checked_mul(u64::from(radix))
                        .and_then(|v| v.checked_add(u64::from(d)))
                        .unwrap_or(INT_OVERFLOW);
                }
                None => {
                    let at = digits_start + i;
                    let what = match radix {
                        16 => "hexadecimal",
                        8 => "octal",
                        _ => "decimal",
                    };
                    let mut d = Diagnostic::error(
                        "E0103",
                        format!("invalid digit `{c}` in {what} integer literal"),
                    )
                    .primary(Span::new(at, at + c.len_utf8()), "invalid digit");
                    if radix == 8 && c.is_ascii_digit() {
                        d = d.note("a literal with a leading `0` is octal (C rules)");
                    } else if c.is_ascii_alphabetic() || c == '_' {
                        d = d.help("separate the number from the following name");
                    }
                    self.error(d, at);
                    return Tok::Int(0);
                }
            }
            if value == INT_OVERFLOW {
                break;
            }
        }
        if radix == 16 && text.is_empty() {
            self.error(
                Diagnostic::error("E0103", "hexadecimal literal has no digits")
                    .primary(Span::new(start, self.pos), "expected digits after `0x`"),
                start,
            );
            return Tok::Int(0);
        }
        Tok::Int(value)
    }

    fn lex_punct(&mut self) -> Tok {
        let start = self.pos;
        let rest = &self.bytes[start..];
        let three: &[(&[u8], Tok)] = &[(b"...", Tok::Ellipsis)];
        for (t, k) in three {
            if rest.starts_with(t) {
                self.pos += 3;
                return *k;
            }
        }
        if rest.starts_with(b"<<<") {
            return self.lex_inline_code();
        }
        let two: &[(&[u8], Tok)] = &[
            (b"..", Tok::DotDot),
            (b"->", Tok::Arrow),
            (b"||", Tok::BarBar),
            (b"|]", Tok::BarRBracket),
            (b"[|", Tok::LBracketBar),
            (b"**", Tok::StarStar),
            (b"!!", Tok::BangBang),
            (b"::", Tok::ColonColon),
            (b"==", Tok::EqEq),
            (b"!=", Tok::Ne),
            (b"<=", Tok::Le),
            (b">=", Tok::Ge),
            (b"&&", Tok::AndAnd),
        ];
        for (t, k) in two {
            if rest.starts_with(t) {
                self.pos += 2;
                return *k;
            }
        }
        self.pos += 1;
        match rest[0] {
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b'[' => Tok::LBracket,
            b']' => Tok::RBracket,
            b'{' => Tok::LBrace,
            b'}' => Tok::RBrace,
            b'<' => Tok::Lt,
            b'>' => Tok::Gt,
            b',' => Tok::Comma,
            b';' => Tok::Semi,
            b':' => Tok::Colon,
            b'=' => Tok::Eq,
            b'|' => Tok::Bar,
            b'*' => Tok::Star,
            b'!' => Tok::Bang,
            b'@' => Tok::At,
            b'\\' => Tok::Backslash,
            b'#' => Tok::Hash,
            b'+' => Tok::Plus,
            b'-' => Tok::Minus,
            b'/' => Tok::Slash,
            b'%' => Tok::Percent,
            b'?' => Tok::Question,
            _ => {
                // Skip the whole (possibly multi-byte) character.
                let ch = self.src[start..].chars().next().unwrap_or('?');
                self.pos = start + ch.len_utf8();
                let what = if ch == INVALID_BYTE {
                    "byte: not valid UTF-8 (S-Net source is ASCII)".to_owned()
                } else {
                    format!("character `{}`", ch.escape_default())
                };
                let mut d = Diagnostic::error("E0101", format!("unexpected {what}"))
                    .primary(Span::new(start, self.pos), "not part of any S-Net token");
                if ch == '&' {
                    d = d.help("the logical and is `&&`");
                } else if ch == '.' {
                    d = d.help("serial composition is `..`");
                } else if ch == '"' {
                    d = d.note("strings occur only inside `<metadata>` blocks");
                }
                self.error(d, start);
                Tok::Error
            }
        }
    }

    fn lex_inline_code(&mut self) -> Tok {
        let start = self.pos;
        match self.src[start + 3..].find(">>>") {
            Some(i) => self.pos = start + 3 + i + 3,
            None => {
                self.pos = self.bytes.len();
                self.error(
                    Diagnostic::error("E0104", "unterminated inline code block")
                        .primary(Span::new(start, start + 3), "starts here")
                        .help("close it with `>>>`"),
                    start,
                );
            }
        }
        Tok::InlineCode
    }
}

/// Whether `name` is a reserved word (§2.2).
pub fn is_keyword(name: &str) -> bool {
    matches!(
        name,
        "box" | "net" | "connect" | "type" | "typesig" | "if" | "then" | "else"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        let mut lx = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let t = lx.next_token();
            if t.tok == Tok::Eof {
                return out;
            }
            out.push(t.tok);
        }
    }

    #[test]
    fn longest_match_and_fused_qualifier() {
        assert_eq!(
            toks("<t>= [| |] ... .. !!@"),
            vec![
                Tok::Lt,
                Tok::Ident,
                Tok::Ge,
                Tok::LBracketBar,
                Tok::BarRBracket,
                Tok::Ellipsis,
                Tok::DotDot,
                Tok::BangBang,
                Tok::At
            ]
        );
    }

    #[test]
    fn c_integer_literals() {
        assert_eq!(
            toks("0 0xa 030 42"),
            vec![Tok::Int(0), Tok::Int(10), Tok::Int(24), Tok::Int(42)]
        );
        let mut lx = Lexer::new("09");
        lx.next_token();
        assert_eq!(lx.errors.len(), 1);
    }

    #[test]
    fn comments_and_pragma_are_trivia() {
        assert_eq!(toks("//!snet core\n/* x */ net // y\n"), vec![Tok::KwNet]);
    }
}
