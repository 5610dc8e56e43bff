//! Recursive-descent parser for the S-Net language (spec §3).
//!
//! Naming rule: `parse_x` parses an `x` that the caller knows is there (or that may be
//! absent, returning `None`/an empty list); `expect_x` reports an error if the next
//! token is not an `x`. Every function that fails has already reported why and returns
//! `Err(Fail)`; callers recover at the nearest delimiter (`]`, `|]`, `)`, `;`, `}` or the
//! next definition keyword), so one run reports several errors.
//!
//! Nesting (parentheses, nested nets, tag-expression depth) is limited to
//! [`MAX_NESTING`] levels, so no input can overflow the stack.

mod expr;
mod metadata;

use crate::ast::*;
use crate::diag::Diagnostic;
use crate::lexer::{Lexer, Tok, Token, INT_OVERFLOW};
use crate::span::Span;
use std::collections::VecDeque;

/// Maximum nesting depth of parentheses, nets and tag expressions.
pub const MAX_NESTING: u32 = 256;

/// The error was reported; unwind to a recovery point.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fail;

pub(crate) type PResult<T> = Result<T, Fail>;

/// Parses a whole source file. Always returns a (possibly partial) program; errors are
/// in the returned list.
pub fn parse(src: &str) -> (Program, Vec<Diagnostic>) {
    let mut p = Parser::new(src);
    let defs = p.parse_defs(false);
    if p.peek().tok != Tok::Eof {
        // `parse_defs` only stops early at a stray `}`.
        let t = p.bump();
        p.error(
            Diagnostic::error("E0201", "unexpected `}` at top level")
                .primary(t.span, "no net body to close"),
        );
    }
    let mut diags = std::mem::take(&mut p.lx.errors);
    diags.append(&mut p.diags);
    (
        Program {
            defs,
            rejected: p.rejected,
        },
        diags,
    )
}

pub(crate) struct Parser<'s> {
    lx: Lexer<'s>,
    buf: VecDeque<Token>,
    diags: Vec<Diagnostic>,
    depth: u32,
    prev_end: usize,
    depth_reported: bool,
    /// See [`Program::rejected`].
    rejected: Vec<String>,
}

impl<'s> Parser<'s> {
    fn new(src: &'s str) -> Parser<'s> {
        Parser {
            lx: Lexer::new(src),
            buf: VecDeque::new(),
            diags: Vec::new(),
            depth: 0,
            prev_end: 0,
            depth_reported: false,
            rejected: Vec::new(),
        }
    }

    // ----- token plumbing -------------------------------------------------------

    fn fill(&mut self, n: usize) {
        while self.buf.len() <= n {
            let t = self.lx.next_token();
            self.buf.push_back(t);
        }
    }

    fn peek(&mut self) -> Token {
        self.peek_nth(0)
    }

    fn peek_nth(&mut self, n: usize) -> Token {
        self.fill(n);
        self.buf[n]
    }

    fn at(&mut self, tok: Tok) -> bool {
        self.peek().tok == tok
    }

    fn bump(&mut self) -> Token {
        self.fill(0);
        let t = self.buf.pop_front().unwrap_or(Token {
            tok: Tok::Eof,
            span: Span::new(self.lx.pos(), self.lx.pos()),
        });
        if t.tok != Tok::Eof {
            self.prev_end = t.span.end as usize;
        }
        t
    }

    fn eat(&mut self, tok: Tok) -> Option<Token> {
        if self.at(tok) {
            Some(self.bump())
        } else {
            None
        }
    }

    fn text(&self, span: Span) -> &'s str {
        self.lx
            .source()
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    fn prev_span(&self) -> Span {
        Span::new(self.prev_end, self.prev_end)
    }

    /// Reports `d`, unless the last error was reported at the same place: a second
    /// syntax error at one token is the parser's recovery talking, not the program.
    fn error(&mut self, d: Diagnostic) {
        let at = |d: &Diagnostic| d.labels.iter().find(|l| l.primary).map(|l| l.span.start);
        if let Some(last) = self.diags.last() {
            if last.is_error() && d.is_error() && at(last).is_some() && at(last) == at(&d) {
                return;
            }
        }
        self.diags.push(d);
    }

    fn describe(&self, t: Token) -> String {
        match t.tok {
            Tok::Ident => format!("identifier `{}`", self.text(t.span)),
            Tok::Int(_) => format!("integer `{}`", self.text(t.span)),
            Tok::Error => "an invalid character".to_owned(),
            other => other.describe().to_owned(),
        }
    }

    /// Reports "expected `what`, found ...", at the unexpected token.
    fn unexpected(&mut self, what: &str) -> Fail {
        if let Some((d, t)) = self.expected_found(what) {
            let d = self.hint(d, what, t);
            self.error(d);
        }
        Fail
    }

    /// "expected `what`, found ..." at the next token, and the token; `None` if the
    /// token is a lexical error (the lexer already reported it).
    fn expected_found(&mut self, what: &str) -> Option<(Diagnostic, Token)> {
        let t = self.peek();
        if t.tok == Tok::Error {
            return None;
        }
        let found = self.describe(t);
        let d = Diagnostic::error("E0201", format!("expected {what}, found {found}"))
            .primary(t.span, format!("expected {what}"));
        Some((d, t))
    }

    fn hint(&self, d: Diagnostic, what: &str, t: Token) -> Diagnostic {
        match (what, t.tok) {
            ("`;`", _) => d.help("definitions end with `;`"),
            (_, Tok::Ident) if self.text(t.span) == "connect" => d,
            ("`->`", Tok::Arrow) => d,
            (_, Tok::Gt) if what.contains("network") => {
                d.note("`>` closes a tag or a tag expression here")
            }
            ("`>`", Tok::StarStar) => {
                d.help("tag expressions have no power operator; multiply (`a * a`)")
            }
            _ => d,
        }
    }

    fn expect(&mut self, tok: Tok) -> PResult<Token> {
        if self.at(tok) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(tok.describe()))
        }
    }

    fn expect_ident(&mut self, what: &str) -> PResult<Ident> {
        let t = self.peek();
        if t.tok == Tok::Ident {
            self.bump();
            Ok(Ident {
                name: self.text(t.span).to_owned(),
                span: t.span,
            })
        } else if is_keyword_tok(t.tok) {
            let found = self.describe(t);
            self.error(
                Diagnostic::error("E0201", format!("expected {what}, found keyword {found}"))
                    .primary(t.span, "reserved word")
                    .note(
                        "`box net connect type typesig if then else` are reserved and cannot be names",
                    ),
            );
            Err(Fail)
        } else {
            Err(self.unexpected(what))
        }
    }

    fn enter(&mut self, span: Span) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            self.depth -= 1;
            if !self.depth_reported {
                self.depth_reported = true;
                self.error(
                    Diagnostic::error(
                        "E0203",
                        format!("nesting too deep (more than {MAX_NESTING} levels)"),
                    )
                    .primary(span, "nesting limit reached here")
                    .help("split the construct into named networks"),
                );
            }
            return Err(Fail);
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    // ----- recovery --------------------------------------------------------------

    /// Skips to the end of the current definition: past a `;` at bracket depth 0, or up
    /// to a definition keyword, a metadata block, or (in a body) a closing `}`.
    fn recover_def(&mut self, in_body: bool) {
        let mut depth: i32 = 0;
        loop {
            let t = self.peek();
            match t.tok {
                Tok::Eof => return,
                Tok::Semi if depth <= 0 => {
                    self.bump();
                    return;
                }
                Tok::KwBox | Tok::KwNet | Tok::KwType | Tok::KwTypesig if depth <= 0 => return,
                Tok::RBrace if depth <= 0 && in_body => return,
                Tok::Lt if self.at_metadata() => return,
                Tok::LParen | Tok::LBracket | Tok::LBrace | Tok::LBracketBar => depth += 1,
                Tok::RParen | Tok::RBracket | Tok::RBrace | Tok::BarRBracket => depth -= 1,
                _ => {}
            }
            self.bump();
        }
    }

    /// Skips to just after the token `close` that matches an already consumed opener.
    fn recover_to_close(&mut self, close: Tok) {
        let mut depth: i32 = 0;
        loop {
            let t = self.peek();
            match t.tok {
                Tok::Eof | Tok::Semi => return,
                Tok::KwBox | Tok::KwNet | Tok::KwType | Tok::KwTypesig | Tok::KwConnect => return,
                tok if tok == close && depth <= 0 => {
                    self.bump();
                    return;
                }
                Tok::LParen | Tok::LBracket | Tok::LBrace | Tok::LBracketBar => depth += 1,
                // A stray closer at depth 0 belongs to an inner construct that
                // failed: skip it.
                Tok::RParen | Tok::RBracket | Tok::RBrace | Tok::BarRBracket => {
                    depth = (depth - 1).max(0)
                }
                _ => {}
            }
            self.bump();
        }
    }

    fn at_metadata(&mut self) -> bool {
        let t = self.peek();
        t.tok == Tok::Lt && self.lx.source()[t.span.start as usize..].starts_with("<metadata>")
    }

    // ----- definitions ---------------------------------------------------------------

    fn parse_defs(&mut self, in_body: bool) -> Vec<Def> {
        let mut defs = Vec::new();
        loop {
            let t = self.peek();
            // The name a failed box or net definition would have defined.
            let named = self.peek_nth(1);
            let r = match t.tok {
                Tok::Eof => break,
                Tok::RBrace => break,
                Tok::KwBox => self.parse_box().map(Def::Box),
                Tok::KwNet => self.parse_net().map(Def::Net),
                Tok::KwType => self.parse_typedef().map(Def::Type),
                Tok::KwTypesig => self.parse_typesigdef().map(Def::Typesig),
                Tok::Lt if self.at_metadata() => Ok(Def::Metadata(self.parse_metadata())),
                Tok::KwConnect if in_body => {
                    // End of the body without `}`: let the caller report it.
                    break;
                }
                _ => {
                    let found = self.describe(t);
                    if t.tok != Tok::Error {
                        let mut d = Diagnostic::error(
                            "E0201",
                            format!("expected a definition, found {found}"),
                        )
                        .primary(
                            t.span,
                            "expected `box`, `net`, `type`, `typesig` or `<metadata>`",
                        );
                        if t.tok == Tok::Ident {
                            let word = self.text(t.span);
                            if let Some(k) = crate::diag::closest(
                                word,
                                ["box", "net", "connect", "type", "typesig"].into_iter(),
                            ) {
                                d = d.help(format!("did you mean `{k}`?"));
                            }
                        }
                        self.error(d);
                    }
                    self.bump();
                    Err(Fail)
                }
            };
            match r {
                Ok(d) => defs.push(d),
                Err(Fail) => {
                    // (Only behind an error: a program with a rejected definition
                    // must not compile.)
                    let failed = self
                        .diags
                        .iter()
                        .chain(&self.lx.errors)
                        .any(|d| d.is_error());
                    if failed && matches!(t.tok, Tok::KwBox | Tok::KwNet) && named.tok == Tok::Ident
                    {
                        self.rejected.push(self.text(named.span).to_owned());
                    }
                    self.recover_def(in_body)
                }
            }
        }
        defs
    }

    fn parse_metadata(&mut self) -> Metadata {
        let start = self.peek().span.start as usize;
        self.buf.clear();
        let (md, end) = metadata::parse_metadata(self.lx.source(), start, &mut self.diags);
        self.lx.reset(end);
        self.prev_end = end;
        md
    }

    fn parse_box(&mut self) -> PResult<BoxDef> {
        let kw = self.bump();
        let name = self.expect_ident("a box name")?;
        if self.at(Tok::Ident) {
            let t = self.peek();
            self.error(stage_only(
                t.span,
                "a box with an internal and an external name (`box a b (...)`)",
            ));
            return Err(Fail);
        }
        self.expect(Tok::LParen)?;
        let input = if self.at(Tok::LParen) {
            self.bump();
            let mut labels = Vec::new();
            if !self.at(Tok::RParen) {
                loop {
                    labels.push(self.parse_box_in_label()?);
                    if self.eat(Tok::Comma).is_none() {
                        break;
                    }
                }
            }
            self.expect(Tok::RParen)?;
            Some(labels)
        } else {
            None
        };
        if !self.at(Tok::Arrow) {
            let what = if input.is_none() {
                "`(` or `->`"
            } else {
                "`->`"
            };
            if input.is_none() && self.at_label_start() {
                return Err(self.unexpected_in_box(
                    what,
                    "the input labels are a list in parentheses of their own: `box f((a, <t>) -> (b));`",
                ));
            }
            return Err(self.unexpected(what));
        }
        self.bump();
        let mut outputs = Vec::new();
        if self.at(Tok::LParen) {
            loop {
                self.expect(Tok::LParen)?;
                let mut labels = Vec::new();
                if !self.at(Tok::RParen) {
                    loop {
                        let (l, fused) = self.parse_label()?;
                        if fused || self.at(Tok::Eq) {
                            let sp = if fused {
                                l.span.end_point()
                            } else {
                                self.peek().span
                            };
                            self.error(
                                Diagnostic::error(
                                    "E0201",
                                    "pass-through qualifier `=` on a box output label",
                                )
                                .primary(sp, "qualifiers are only allowed on input labels"),
                            );
                            return Err(Fail);
                        }
                        labels.push(l);
                        if self.eat(Tok::Comma).is_none() {
                            break;
                        }
                    }
                }
                self.expect(Tok::RParen)?;
                outputs.push(labels);
                if self.eat(Tok::Bar).is_none() {
                    break;
                }
            }
        } else if self.at_label_start() {
            return Err(self.unexpected_in_box(
                "`(` or `)`",
                "each output variant is a list of labels in parentheses: `-> (b)`, or `-> (b) | (c, <t>)`",
            ));
        }
        if self.at(Tok::LParen) {
            return Err(self.unexpected_in_box(
                "`|` or `)`",
                "output variants are separated by `|`: `-> (b) | (c)`",
            ));
        }
        self.expect(Tok::RParen)?;
        if self.at(Tok::LBrace) {
            let open = self.bump();
            let code = self.peek();
            if code.tok == Tok::InlineCode {
                self.bump();
                self.error(
                    Diagnostic::error("E0208", "inline box code `<<< ... >>>` is not supported")
                        .primary(code.span.to(open.span), "inline code")
                        .help("declare the box with `;` and give its code in a C source file"),
                );
                self.eat(Tok::RBrace);
                return Err(Fail);
            }
            return Err(self.unexpected("`<<<` (inline box code)"));
        }
        self.expect(Tok::Semi)?;
        Ok(BoxDef {
            name,
            input,
            outputs,
            span: kw.span.to(self.prev_span()),
        })
    }

    /// Whether the next token starts a label (`x`, `<t>`, `<#b>`).
    fn at_label_start(&mut self) -> bool {
        matches!(self.peek().tok, Tok::Ident | Tok::Lt)
    }

    /// "expected `what`, found ..." in a box signature, with `help`.
    fn unexpected_in_box(&mut self, what: &str, help: &str) -> Fail {
        if let Some((d, _)) = self.expected_found(what) {
            self.error(d.help(help));
        }
        Fail
    }

    fn parse_box_in_label(&mut self) -> PResult<BoxInLabel> {
        let (label, fused) = self.parse_label()?;
        let mut qualifiers = u8::from(fused);
        let mut qualifier_span = if fused {
            Span::new(label.span.end as usize - 1, label.span.end as usize + 1)
        } else {
            label.span.end_point()
        };
        loop {
            let t = self.peek();
            let n = match t.tok {
                Tok::Eq => 1,
                Tok::EqEq => 2,
                _ => break,
            };
            self.bump();
            if qualifiers == 0 {
                qualifier_span = t.span;
            } else {
                qualifier_span = qualifier_span.to(t.span);
            }
            qualifiers = qualifiers.saturating_add(n);
        }
        Ok(BoxInLabel {
            label,
            qualifiers,
            qualifier_span,
        })
    }

    /// Parses `x`, `<t>` or `<#b>`. The flag is set if the closing `>` was fused with a
    /// following `=` (`<t>=` lexes as `<` `t` `>=`, §2.5).
    fn parse_label(&mut self) -> PResult<(LabelRef, bool)> {
        let t = self.peek();
        match t.tok {
            Tok::Ident => {
                self.bump();
                if self.at(Tok::ColonColon) {
                    let c = self.peek();
                    self.error(stage_only(c.span, "a qualified label (`pkg::x`)"));
                    return Err(Fail);
                }
                Ok((
                    LabelRef {
                        kind: LabelKind::Field,
                        name: self.text(t.span).to_owned(),
                        span: t.span,
                    },
                    false,
                ))
            }
            Tok::Lt => {
                self.bump();
                let kind = if self.eat(Tok::Hash).is_some() {
                    LabelKind::BTag
                } else {
                    LabelKind::Tag
                };
                let name = self.expect_ident(if kind == LabelKind::BTag {
                    "a binding-tag name"
                } else {
                    "a tag name"
                })?;
                if self.at(Tok::ColonColon) {
                    let c = self.peek();
                    self.error(stage_only(c.span, "a qualified label (`pkg::x`)"));
                    return Err(Fail);
                }
                let close = self.peek();
                let fused = match close.tok {
                    Tok::Gt => false,
                    Tok::Ge => true,
                    _ => return Err(self.unexpected("`>`")),
                };
                self.bump();
                Ok((
                    LabelRef {
                        kind,
                        name: name.name,
                        span: t.span.to(close.span),
                    },
                    fused,
                ))
            }
            _ => Err(self.unexpected("a label (`x`, `<t>` or `<#b>`)")),
        }
    }

    /// Parses a label in a record type, where no qualifier may follow.
    fn parse_plain_label(&mut self) -> PResult<LabelRef> {
        let (l, fused) = self.parse_label()?;
        if fused {
            let sp = Span::new(l.span.end as usize, l.span.end as usize + 1);
            self.error(
                Diagnostic::error("E0201", "expected `,` or `}`, found `=`").primary(
                    sp,
                    "pass-through qualifiers are only allowed on box input labels",
                ),
            );
            return Err(Fail);
        }
        Ok(l)
    }

    fn parse_rectype(&mut self) -> PResult<RecType> {
        let open = self.expect(Tok::LBrace)?;
        let mut labels = Vec::new();
        if !self.at(Tok::RBrace) {
            loop {
                labels.push(self.parse_plain_label()?);
                if self.eat(Tok::Comma).is_none() {
                    break;
                }
            }
        }
        let close = self.expect(Tok::RBrace)?;
        Ok(RecType {
            labels,
            span: open.span.to(close.span),
        })
    }

    fn parse_net(&mut self) -> PResult<NetDef> {
        let kw = self.bump();
        let name = self.expect_ident("a net name")?;
        match self.peek().tok {
            Tok::Bang => {
                let t = self.peek();
                self.error(stage_only(t.span, "a net marked `!`"));
                return Err(Fail);
            }
            Tok::ColonColon => {
                let t = self.peek();
                self.error(stage_only(t.span, "a qualified net name (`pkg::N`)"));
                return Err(Fail);
            }
            _ => {}
        }
        let sig = if self.at(Tok::LParen) {
            self.bump();
            let s = self.parse_netsig()?;
            self.expect(Tok::RParen)?;
            Some(s)
        } else {
            None
        };
        if self.at(Tok::Semi) {
            let t = self.peek();
            self.error(
                stage_only(t.span, "a declaration of an external net (`net N;`)")
                    .help("give the net a body: `net N connect ...;`"),
            );
            self.bump();
            return Err(Fail);
        }
        let body = if self.at(Tok::LBrace) {
            let open = self.bump();
            self.enter(open.span)?;
            let defs = crate::grow(|| self.parse_defs(true));
            self.leave();
            if self.at(Tok::RBrace) {
                self.bump();
            } else {
                let t = self.peek();
                let found = self.describe(t);
                self.error(
                    Diagnostic::error("E0201", format!("expected `}}`, found {found}"))
                        .primary(t.span, "expected `}` to close the net body")
                        .secondary(open.span, "body opened here"),
                );
                if t.tok != Tok::KwConnect {
                    return Err(Fail);
                }
            }
            Some(defs)
        } else {
            None
        };
        if !self.at(Tok::KwConnect) {
            return Err(self.missing_connect(&name, body.as_deref()));
        }
        self.bump();
        let expr = self.parse_expr_recovering();
        if !self.at(Tok::Semi) {
            let t = self.peek();
            let found = self.describe(t);
            if t.tok != Tok::Error {
                let sp = self.prev_span();
                self.error(
                    Diagnostic::error("E0201", format!("expected `;`, found {found}"))
                        .primary(t.span, "expected `;` or an operator")
                        .secondary(sp, "the connect expression ends here?"),
                );
            }
            return Err(Fail);
        }
        self.bump();
        Ok(NetDef {
            name,
            sig,
            body,
            expr,
            span: kw.span.to(self.prev_span()),
        })
    }

    /// "expected `connect`" after a net's name, signature or body, with the fix: every
    /// net ends with `connect EXPR;`. An expression written without the keyword gets
    /// it put in front; otherwise the help names the last box or net of the body.
    fn missing_connect(&mut self, name: &Ident, body: Option<&[Def]>) -> Fail {
        let Some((d, t)) = self.expected_found("`connect`") else {
            return Fail;
        };
        let starts_expr = matches!(t.tok, Tok::Ident | Tok::LBracket | Tok::LParen);
        let last = body.unwrap_or_default().iter().rev().find_map(|d| match d {
            Def::Box(b) => Some(&b.name.name),
            Def::Net(n) => Some(&n.name.name),
            _ => None,
        });
        let word = self.text(t.span);
        let help = if t.tok == Tok::Ident
            && crate::diag::closest(word, std::iter::once("connect")).is_some()
        {
            "did you mean `connect`?".to_owned()
        } else if starts_expr {
            format!("the network expression follows the keyword: `connect {word}`")
        } else {
            let example = last.map_or("[]", String::as_str);
            format!(
                "every net ends with `connect EXPR;`, the network it stands for: `net {} ... connect {example};`",
                name.name
            )
        };
        self.error(d.help(help));
        Fail
    }

    fn parse_netsig(&mut self) -> PResult<Vec<SigItem>> {
        let mut items = Vec::new();
        loop {
            items.push(self.parse_sigitem()?);
            if self.eat(Tok::Comma).is_none() {
                break;
            }
        }
        Ok(items)
    }

    fn parse_sigitem(&mut self) -> PResult<SigItem> {
        let t = self.peek();
        if t.tok == Tok::Ident && !matches!(self.peek_nth(1).tok, Tok::Arrow | Tok::Bar) {
            let id = self.expect_ident("a typesig name")?;
            return Ok(SigItem::Named(id));
        }
        let start = t.span;
        let mut input = Vec::new();
        if !self.at(Tok::Arrow) {
            loop {
                input.push(self.parse_inalt()?);
                if self.eat(Tok::Bar).is_none() {
                    break;
                }
            }
        }
        if !self.at(Tok::Arrow) {
            return Err(self.unexpected("`->` or `|`"));
        }
        self.bump();
        let output = if let Some(e) = self.eat(Tok::Ellipsis) {
            OutSpec::Unspecified(e.span)
        } else if matches!(self.peek().tok, Tok::LBrace | Tok::Ident) {
            let mut alts = Vec::new();
            loop {
                alts.push(self.parse_outalt()?);
                if self.eat(Tok::Bar).is_none() {
                    break;
                }
            }
            OutSpec::Alts(alts)
        } else {
            OutSpec::Alts(Vec::new())
        };
        Ok(SigItem::Map(TypeMap {
            input,
            output,
            span: start.to(self.prev_span()),
        }))
    }

    fn parse_inalt(&mut self) -> PResult<InAlt> {
        if self.at(Tok::Ident) {
            Ok(InAlt::Named(self.expect_ident("a type name")?))
        } else if self.at(Tok::LBrace) {
            Ok(InAlt::Rec(self.parse_rectype()?))
        } else {
            Err(self.unexpected("a record type `{...}` or a type name"))
        }
    }

    fn parse_outalt(&mut self) -> PResult<OutAlt> {
        if self.at(Tok::Ident) {
            return Ok(OutAlt::Named(self.expect_ident("a type name")?));
        }
        let open = self.expect(Tok::LBrace)?;
        let mut labels = Vec::new();
        if !self.at(Tok::RBrace) {
            loop {
                if self.at(Tok::Backslash) {
                    let t = self.peek();
                    self.error(stage_only(
                        t.span,
                        "a discard qualifier `\\x` in an output type",
                    ));
                    return Err(Fail);
                }
                let pass = self.eat(Tok::Eq).is_some();
                labels.push((pass, self.parse_plain_label()?));
                if self.eat(Tok::Comma).is_none() {
                    break;
                }
            }
        }
        let close = self.expect(Tok::RBrace)?;
        Ok(OutAlt::Rec(labels, open.span.to(close.span)))
    }

    fn parse_typedef(&mut self) -> PResult<TypeDef> {
        let kw = self.bump();
        let name = self.expect_ident("a type name")?;
        self.expect(Tok::Eq)?;
        let mut alts = Vec::new();
        loop {
            alts.push(self.parse_inalt()?);
            if self.eat(Tok::Bar).is_none() {
                break;
            }
        }
        self.expect(Tok::Semi)?;
        Ok(TypeDef {
            name,
            alts,
            span: kw.span.to(self.prev_span()),
        })
    }

    fn parse_typesigdef(&mut self) -> PResult<TypesigDef> {
        let kw = self.bump();
        let name = self.expect_ident("a typesig name")?;
        self.expect(Tok::Eq)?;
        let sig = self.parse_netsig()?;
        self.expect(Tok::Semi)?;
        Ok(TypesigDef {
            name,
            sig,
            span: kw.span.to(self.prev_span()),
        })
    }

    // ----- network expressions -------------------------------------------------------

    /// Parses a connect expression; on error, skips to the end of the definition's
    /// expression (`;`) and returns an error node.
    fn parse_expr_recovering(&mut self) -> Expr {
        let start = self.peek().span;
        match self.parse_choice() {
            Ok(e) => e,
            Err(Fail) => {
                self.recover_to_close(Tok::Semi);
                Expr {
                    kind: ExprKind::Error,
                    span: start.to(self.prev_span()),
                }
            }
        }
    }

    fn parse_choice(&mut self) -> PResult<Expr> {
        let first = self.parse_detchoice()?;
        if !self.at(Tok::Bar) {
            return Ok(first);
        }
        let mut branches = vec![first];
        while self.eat(Tok::Bar).is_some() {
            branches.push(self.parse_detchoice()?);
        }
        let span = branches[0].span.to(self.prev_span());
        Ok(Expr {
            kind: ExprKind::Choice {
                det: false,
                branches,
            },
            span,
        })
    }

    fn parse_detchoice(&mut self) -> PResult<Expr> {
        let first = self.parse_serial()?;
        if !self.at(Tok::BarBar) {
            return Ok(first);
        }
        let mut branches = vec![first];
        while self.eat(Tok::BarBar).is_some() {
            branches.push(self.parse_serial()?);
        }
        let span = branches[0].span.to(self.prev_span());
        Ok(Expr {
            kind: ExprKind::Choice {
                det: true,
                branches,
            },
            span,
        })
    }

    fn parse_serial(&mut self) -> PResult<Expr> {
        let first = self.parse_postfix()?;
        if !self.at(Tok::DotDot) {
            return Ok(first);
        }
        let mut elems = vec![first];
        while self.eat(Tok::DotDot).is_some() {
            elems.push(self.parse_postfix()?);
        }
        let span = elems[0].span.to(self.prev_span());
        Ok(Expr {
            kind: ExprKind::Serial(elems),
            span,
        })
    }

    fn parse_postfix(&mut self) -> PResult<Expr> {
        let base = self.parse_primary()?;
        let mut ops = Vec::new();
        loop {
            let t = self.peek();
            let op = match t.tok {
                Tok::Star | Tok::StarStar => {
                    self.bump();
                    let exits = self.parse_term()?;
                    PostOp::Star {
                        det: t.tok == Tok::StarStar,
                        exits,
                        span: t.span.to(self.prev_span()),
                    }
                }
                Tok::Bang | Tok::BangBang => {
                    self.bump();
                    let placed = self.eat(Tok::At).is_some();
                    let index = self.parse_range()?;
                    PostOp::Split {
                        det: t.tok == Tok::BangBang,
                        placed,
                        index,
                        span: t.span.to(self.prev_span()),
                    }
                }
                Tok::Backslash => {
                    self.bump();
                    let back = self.parse_term()?;
                    PostOp::Feedback {
                        back,
                        span: t.span.to(self.prev_span()),
                    }
                }
                Tok::At => {
                    self.bump();
                    let n = self.peek();
                    let location = match n.tok {
                        Tok::Int(v) => {
                            self.bump();
                            self.check_int_range(v, n.span, false)?
                        }
                        Tok::Minus => {
                            self.bump();
                            let i = self.peek();
                            let v = match i.tok {
                                Tok::Int(v) => v,
                                _ => return Err(self.unexpected("a node number")),
                            };
                            self.bump();
                            self.error(
                                Diagnostic::error(
                                    "E0210",
                                    format!("negative placement location `@ -{v}`"),
                                )
                                .primary(n.span.to(i.span), "must be a non-negative node number")
                                .help("compute nodes are numbered from 0"),
                            );
                            return Err(Fail);
                        }
                        _ => return Err(self.unexpected("a node number after `@`")),
                    };
                    PostOp::At {
                        location,
                        span: t.span.to(n.span),
                    }
                }
                _ => break,
            };
            ops.push(op);
        }
        if ops.is_empty() {
            return Ok(base);
        }
        let span = base.span.to(self.prev_span());
        Ok(Expr {
            kind: ExprKind::Postfix(Box::new(base), ops),
            span,
        })
    }

    fn check_int_range(&mut self, v: u64, span: Span, negative: bool) -> PResult<i64> {
        let limit: u64 = if negative { 1 << 31 } else { (1 << 31) - 1 };
        if v > limit {
            let shown = if v == INT_OVERFLOW {
                self.text(span).to_owned()
            } else {
                format!("{}{v}", if negative { "-" } else { "" })
            };
            self.error(
                Diagnostic::error(
                    "E0202",
                    format!("integer literal `{shown}` does not fit in a 32-bit int"),
                )
                .primary(span, "out of range")
                .note("the range is -2147483648 to 2147483647"),
            );
            return Err(Fail);
        }
        let v = v as i64;
        Ok(if negative { -v } else { v })
    }

    fn parse_range(&mut self) -> PResult<LabelRef> {
        let t = self.peek();
        if t.tok != Tok::Lt {
            return Err(self.unexpected("`<` (the index tag of a split, e.g. `<t>`)"));
        }
        let (l, fused) = self.parse_label()?;
        if fused {
            return Err(self.unexpected("`>`"));
        }
        if self.at(Tok::Colon) {
            let c = self.peek();
            self.error(stage_only(c.span, "a range split `! <a>:<b>`"));
            return Err(Fail);
        }
        Ok(l)
    }

    /// `GuardedPat { "," GuardedPat }`: a comma continues the list only when a `{`
    /// follows.
    fn parse_term(&mut self) -> PResult<Vec<GuardedPat>> {
        let mut pats = vec![self.parse_guarded_pat()?];
        while self.at(Tok::Comma) && self.peek_nth(1).tok == Tok::LBrace {
            self.bump();
            pats.push(self.parse_guarded_pat()?);
        }
        Ok(pats)
    }

    fn parse_guarded_pat(&mut self) -> PResult<GuardedPat> {
        if !self.at(Tok::LBrace) {
            return Err(self.unexpected("a pattern `{...}`"));
        }
        let pat = self.parse_rectype()?;
        let guard = if self.eat(Tok::KwIf).is_some() {
            Some(self.parse_embedded()?)
        } else {
            None
        };
        Ok(GuardedPat { pat, guard })
    }

    fn parse_primary(&mut self) -> PResult<Expr> {
        let t = self.peek();
        match t.tok {
            Tok::Ident => {
                let id = self.expect_ident("a network name")?;
                if self.at(Tok::ColonColon) {
                    let c = self.peek();
                    self.error(stage_only(c.span, "a qualified net name (`pkg::N`)"));
                    return Err(Fail);
                }
                Ok(Expr {
                    span: id.span,
                    kind: ExprKind::Ref(id),
                })
            }
            Tok::LParen => {
                self.bump();
                self.enter(t.span)?;
                let r = crate::grow(|| self.parse_choice());
                self.leave();
                let mut e = r?;
                let close = self.peek();
                if close.tok != Tok::RParen {
                    let found = self.describe(close);
                    if close.tok != Tok::Error {
                        self.error(
                            Diagnostic::error("E0201", format!("expected `)`, found {found}"))
                                .primary(close.span, "expected `)` or an operator")
                                .secondary(t.span, "to close this parenthesis"),
                        );
                    }
                    return Err(Fail);
                }
                self.bump();
                // Keep the parenthesised span for better messages.
                e.span = t.span.to(close.span);
                Ok(e)
            }
            Tok::LBracket => self.parse_filter(),
            Tok::LBracketBar => self.parse_sync(),
            Tok::Lt => {
                self.error(stage_only(t.span, "a typed branch (`<{...}> E`)"));
                Err(Fail)
            }
            _ => Err(self.unexpected("a network (a name, `[...]`, `[|...|]` or `(...)`)")),
        }
    }

    fn parse_filter(&mut self) -> PResult<Expr> {
        let open = self.bump();
        if let Some(close) = self.eat(Tok::RBracket) {
            return Ok(Expr {
                kind: ExprKind::Identity,
                span: open.span.to(close.span),
            });
        }
        if self.at(Tok::LParen) {
            let sp = open.span.to(self.peek().span);
            self.error(stage_only(sp, "a translate filter `[(a) -> (b)]`"));
            self.recover_to_close(Tok::RBracket);
            return Ok(Expr {
                kind: ExprKind::Error,
                span: open.span.to(self.prev_span()),
            });
        }
        match self.parse_filter_body(open.span) {
            Ok(f) => Ok(Expr {
                kind: ExprKind::Filter(f),
                span: open.span.to(self.prev_span()),
            }),
            Err(Fail) => {
                self.recover_to_close(Tok::RBracket);
                Ok(Expr {
                    kind: ExprKind::Error,
                    span: open.span.to(self.prev_span()),
                })
            }
        }
    }

    fn parse_filter_body(&mut self, open: Span) -> PResult<Filter> {
        if !self.at(Tok::LBrace) {
            return Err(self.unexpected("a pattern `{...}` or `]`"));
        }
        let pattern = self.parse_rectype()?;
        if !self.at(Tok::Arrow) {
            return Err(self.unexpected("`->`"));
        }
        self.bump();
        let mut guards = Vec::new();
        let default;
        loop {
            if self.eat(Tok::KwIf).is_some() {
                let cond = self.parse_embedded()?;
                if !self.at(Tok::KwThen) {
                    return Err(self.unexpected("`then`"));
                }
                self.bump();
                let action = self.parse_action()?;
                if !self.at(Tok::KwElse) {
                    let t = self.peek();
                    let found = self.describe(t);
                    self.error(
                        Diagnostic::error("E0201", format!("expected `else`, found {found}"))
                            .primary(t.span, "expected `else`")
                            .note("a guard chain always ends with `else` and a final action, which may be empty")
                            .help("write `else` before `]` to emit nothing otherwise"),
                    );
                    return Err(Fail);
                }
                self.bump();
                guards.push((cond, action));
            } else {
                default = self.parse_action()?;
                break;
            }
        }
        if !self.at(Tok::RBracket) {
            let t = self.peek();
            let found = self.describe(t);
            if t.tok != Tok::Error {
                self.error(
                    Diagnostic::error("E0201", format!("expected `]`, found {found}"))
                        .primary(t.span, "expected `;`, `]` or `{`")
                        .secondary(open, "filter starts here"),
                );
            }
            return Err(Fail);
        }
        self.bump();
        Ok(Filter {
            pattern,
            guards,
            default,
        })
    }

    fn parse_action(&mut self) -> PResult<Vec<RecOut>> {
        let mut outs = Vec::new();
        if !self.at(Tok::LBrace) {
            return Ok(outs);
        }
        loop {
            outs.push(self.parse_recout()?);
            if self.eat(Tok::Semi).is_none() {
                break;
            }
        }
        Ok(outs)
    }

    fn parse_recout(&mut self) -> PResult<RecOut> {
        let open = self.expect(Tok::LBrace)?;
        let mut items = Vec::new();
        if !self.at(Tok::RBrace) {
            loop {
                items.push(self.parse_outitem()?);
                if self.eat(Tok::Comma).is_none() {
                    break;
                }
            }
        }
        let close = self.expect(Tok::RBrace)?;
        Ok(RecOut {
            items,
            span: open.span.to(close.span),
        })
    }

    fn parse_outitem(&mut self) -> PResult<OutItem> {
        let t = self.peek();
        match t.tok {
            Tok::Ident => {
                let to = self.expect_ident("a field name")?;
                let from = if self.eat(Tok::Eq).is_some() {
                    if self.at(Tok::Lt) {
                        let l = self.peek();
                        self.error(
                            Diagnostic::error("E0201", "a field cannot be assigned a tag")
                                .primary(l.span, "expected a field name")
                                .help("fields are copied from fields (`f = g`); tags get values inside brackets (`<t = e>`)"),
                        );
                        return Err(Fail);
                    }
                    Some(self.expect_ident("a field name")?)
                } else {
                    None
                };
                Ok(OutItem::Field { to, from })
            }
            Tok::Lt => {
                self.bump();
                let kind = if self.eat(Tok::Hash).is_some() {
                    LabelKind::BTag
                } else {
                    LabelKind::Tag
                };
                let to = self.expect_ident("a tag name")?;
                let value = if self.eat(Tok::Eq).is_some() {
                    Some(self.parse_tagexpr_until_gt()?)
                } else {
                    None
                };
                let close = self.peek();
                if close.tok != Tok::Gt {
                    return Err(self.unexpected("`>`"));
                }
                self.bump();
                Ok(OutItem::Tag {
                    kind,
                    to,
                    value,
                    span: t.span.to(close.span),
                })
            }
            _ => Err(self.unexpected("an output label (`f`, `f = g`, `<t>` or `<t = e>`)")),
        }
    }

    fn parse_sync(&mut self) -> PResult<Expr> {
        let open = self.bump();
        let r = (|| -> PResult<Vec<GuardedPat>> {
            let mut pats = vec![self.parse_guarded_pat()?];
            while self.eat(Tok::Comma).is_some() {
                pats.push(self.parse_guarded_pat()?);
            }
            if !self.at(Tok::BarRBracket) {
                return Err(self.unexpected("`,` or `|]`"));
            }
            Ok(pats)
        })();
        match r {
            Ok(pats) => {
                let close = self.bump();
                let span = open.span.to(close.span);
                if pats.len() < 2 {
                    self.error(
                        Diagnostic::error("E0209", "a synchrocell needs at least two patterns")
                            .primary(span, "only one pattern")
                            .help("to wait for a single pattern, use a filter or `[]`"),
                    );
                }
                Ok(Expr {
                    kind: ExprKind::Sync(pats),
                    span,
                })
            }
            Err(Fail) => {
                self.recover_to_close(Tok::BarRBracket);
                Ok(Expr {
                    kind: ExprKind::Error,
                    span: open.span.to(self.prev_span()),
                })
            }
        }
    }
}

fn is_keyword_tok(t: Tok) -> bool {
    matches!(
        t,
        Tok::KwBox
            | Tok::KwNet
            | Tok::KwConnect
            | Tok::KwType
            | Tok::KwTypesig
            | Tok::KwIf
            | Tok::KwThen
            | Tok::KwElse
    )
}

/// Diagnostic for [INTERNAL] compiler-stage syntax (spec §3.12, §9 item 8).
fn stage_only(span: Span, what: &str) -> Diagnostic {
    Diagnostic::error(
        "E0207",
        format!("{what} is compiler-stage syntax, not allowed in a source program"),
    )
    .primary(
        span,
        "only accepted in dumps of the reference compiler's stages",
    )
    .note("see spec §3.12: this syntax appears only after a `//!snet <stage>` pragma")
}

#[cfg(test)]
mod tests;
