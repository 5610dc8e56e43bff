//! Tag expressions (spec §3.10): precedence climbing, with the embedded-expression rule
//! of §3.10.3 for the closing `>`.

use super::{Fail, PResult, Parser, MAX_NESTING};
use crate::ast::{BinOp, TagExpr, TagExprKind, UnOp};
use crate::diag::Diagnostic;
use crate::lexer::Tok;

/// Binding power of the conditional `? :` (lowest).
const BP_COND: u8 = 1;
/// Binding power of prefix operators (highest).
const BP_PREFIX: u8 = 9;

fn binop(p: &mut Parser<'_>, tok: Tok, text: &str) -> Option<(BinOp, u8)> {
    let _ = p;
    Some(match tok {
        Tok::BarBar => (BinOp::Or, 2),
        Tok::AndAnd => (BinOp::And, 3),
        Tok::EqEq => (BinOp::Eq, 4),
        Tok::Ne => (BinOp::Ne, 4),
        Tok::Lt => (BinOp::Lt, 5),
        Tok::Le => (BinOp::Le, 5),
        Tok::Gt => (BinOp::Gt, 5),
        Tok::Ge => (BinOp::Ge, 5),
        Tok::Plus => (BinOp::Add, 6),
        Tok::Minus => (BinOp::Sub, 6),
        Tok::Star => (BinOp::Mul, 7),
        Tok::Slash => (BinOp::Div, 7),
        Tok::Percent => (BinOp::Mod, 7),
        Tok::Ident if text == "min" => (BinOp::Min, 8),
        Tok::Ident if text == "max" => (BinOp::Max, 8),
        _ => return None,
    })
}

impl Parser<'_> {
    /// Parses `< expr >` (guards); the `<` is the next token.
    pub(super) fn parse_embedded(&mut self) -> PResult<TagExpr> {
        if !self.at(Tok::Lt) {
            return Err(self.unexpected("`<` to start the guard expression"));
        }
        self.bump();
        let e = self.parse_tagexpr_until_gt()?;
        if !self.at(Tok::Gt) {
            return Err(self.unexpected("`>` to end the expression"));
        }
        self.bump();
        Ok(e)
    }

    /// Parses an embedded expression that ends at a `>` (not consumed), per §3.10.3.
    pub(super) fn parse_tagexpr_until_gt(&mut self) -> PResult<TagExpr> {
        let mut ctx = ExprCtx { parens: 0 };
        let (e, _) = self.tagexpr(0, &mut ctx)?;
        Ok(e)
    }

    /// Whether the token after a `>` can begin an operand, making the `>` a
    /// greater-than operator (§3.10.3: `Ident`, `#`, `Int`, `-`, `(`, `!`, `abs`). The
    /// `!!` token is not in that list: `A * {<t>} if <t < 0> !! <k>` ends the guard
    /// and replicates, although `!!x` is accepted as a double negation elsewhere.
    fn gt_is_operator(&mut self) -> bool {
        let next = self.peek_nth(1);
        matches!(
            next.tok,
            Tok::Ident | Tok::Hash | Tok::Int(_) | Tok::Minus | Tok::LParen | Tok::Bang
        )
    }

    /// Precedence climbing. Returns the expression and its tree depth.
    fn tagexpr(&mut self, min_bp: u8, ctx: &mut ExprCtx) -> PResult<(TagExpr, u32)> {
        let start = self.peek().span;
        self.enter(start)?;
        let r = crate::grow(|| self.tagexpr_inner(min_bp, ctx));
        self.leave();
        r
    }

    fn tagexpr_inner(&mut self, min_bp: u8, ctx: &mut ExprCtx) -> PResult<(TagExpr, u32)> {
        let (mut lhs, mut depth) = self.tagexpr_prefix(ctx)?;
        loop {
            let t = self.peek();
            if t.tok == Tok::Question {
                if BP_COND < min_bp {
                    break;
                }
                self.bump();
                let (mid, d1) = self.tagexpr(0, ctx)?;
                if !self.at(Tok::Colon) {
                    return Err(self.unexpected("`:` of the conditional `c ? a : b`"));
                }
                self.bump();
                let (rhs, d2) = self.tagexpr(BP_COND + 1, ctx)?;
                let span = lhs.span.to(rhs.span);
                depth = 1 + depth.max(d1).max(d2);
                lhs = TagExpr {
                    kind: TagExprKind::Cond(Box::new(lhs), Box::new(mid), Box::new(rhs)),
                    span,
                };
                self.check_depth(depth, span)?;
                continue;
            }
            let text = self.text(t.span).to_owned();
            let Some((op, bp)) = binop(self, t.tok, &text) else {
                if t.tok == Tok::Ident && text == "abs" {
                    self.error(
                        Diagnostic::error("E0201", "`abs` is a prefix operator").primary(
                            t.span,
                            "expected a binary operator or the end of the expression",
                        ),
                    );
                    return Err(Fail);
                }
                break;
            };
            if bp < min_bp {
                break;
            }
            if t.tok == Tok::Gt && ctx.parens == 0 && !self.gt_is_operator() {
                break;
            }
            // `> !` reads as greater-than-not (§3.10.3); when the operand after it
            // fails, the author most likely meant the guard to end before a `!`.
            let gt_bang = t.tok == Tok::Gt && ctx.parens == 0 && self.peek_nth(1).tok == Tok::Bang;
            self.bump();
            let errors = self.diags.len();
            let rhs = self.tagexpr(bp + 1, ctx);
            if gt_bang && rhs.is_err() && self.diags.len() > errors {
                if let Some(d) = self.diags.pop() {
                    self.diags.push(d.help(
                        "a `>` followed by `!` continues the expression as greater-than-not \
                         (spec §3.10.3); to end the guard before a replication `! <t>`, put \
                         the starred network in parentheses: `(A * {...} if <...>) ! <t>`",
                    ));
                }
            }
            let (rhs, d) = rhs?;
            let span = lhs.span.to(rhs.span);
            depth = 1 + depth.max(d);
            lhs = TagExpr {
                kind: TagExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
            self.check_depth(depth, span)?;
        }
        Ok((lhs, depth))
    }

    fn check_depth(&mut self, depth: u32, span: crate::span::Span) -> PResult<()> {
        if depth > MAX_NESTING {
            if !self.depth_reported {
                self.depth_reported = true;
                self.error(
                    Diagnostic::error(
                        "E0203",
                        format!(
                            "tag expression nested too deeply (more than {MAX_NESTING} levels)"
                        ),
                    )
                    .primary(span.end_point(), "nesting limit reached here")
                    .help(
                        "a chain of n terms is n levels (`a + b + c` is 3): group a long \
                         chain in balanced parentheses (`(a + b) + (c + d)`), or split the \
                         computation over several filters",
                    ),
                );
            }
            return Err(Fail);
        }
        Ok(())
    }

    fn tagexpr_prefix(&mut self, ctx: &mut ExprCtx) -> PResult<(TagExpr, u32)> {
        let t = self.peek();
        match t.tok {
            Tok::Bang => {
                self.bump();
                let (e, d) = self.tagexpr(BP_PREFIX, ctx)?;
                let span = t.span.to(e.span);
                Ok((
                    TagExpr {
                        kind: TagExprKind::Unary(UnOp::Not, Box::new(e)),
                        span,
                    },
                    d + 1,
                ))
            }
            Tok::BangBang => {
                // `!!x` is two negations.
                self.bump();
                let (e, d) = self.tagexpr(BP_PREFIX, ctx)?;
                let span = t.span.to(e.span);
                let inner = TagExpr {
                    kind: TagExprKind::Unary(UnOp::Not, Box::new(e)),
                    span,
                };
                Ok((
                    TagExpr {
                        kind: TagExprKind::Unary(UnOp::Not, Box::new(inner)),
                        span,
                    },
                    d + 2,
                ))
            }
            Tok::Ident => {
                let text = self.text(t.span);
                match text {
                    "abs" => {
                        self.bump();
                        let (e, d) = self.tagexpr(BP_PREFIX, ctx)?;
                        let span = t.span.to(e.span);
                        Ok((
                            TagExpr {
                                kind: TagExprKind::Unary(UnOp::Abs, Box::new(e)),
                                span,
                            },
                            d + 1,
                        ))
                    }
                    "min" | "max" => {
                        let msg = format!("`{text}` is an infix operator (`a {text} b`)");
                        self.error(
                            Diagnostic::error("E0201", msg)
                                .primary(t.span, "expected an operand")
                                .note("`abs`, `min` and `max` are reserved inside tag expressions"),
                        );
                        Err(Fail)
                    }
                    _ => {
                        self.bump();
                        Ok((
                            TagExpr {
                                kind: TagExprKind::Tag(text.to_owned()),
                                span: t.span,
                            },
                            1,
                        ))
                    }
                }
            }
            Tok::Hash => {
                self.bump();
                let id = self.expect_ident("a binding-tag name after `#`")?;
                Ok((
                    TagExpr {
                        kind: TagExprKind::BTag(id.name),
                        span: t.span.to(id.span),
                    },
                    1,
                ))
            }
            Tok::Int(v) => {
                self.bump();
                let v = self.check_int_range(v, t.span, false)?;
                Ok((
                    TagExpr {
                        kind: TagExprKind::Int(v),
                        span: t.span,
                    },
                    1,
                ))
            }
            Tok::Minus => {
                self.bump();
                let n = self.peek();
                if let Tok::Int(v) = n.tok {
                    self.bump();
                    let span = t.span.to(n.span);
                    let v = self.check_int_range(v, span, true)?;
                    return Ok((
                        TagExpr {
                            kind: TagExprKind::Int(v),
                            span,
                        },
                        1,
                    ));
                }
                self.error(
                    Diagnostic::error("E0204", "unary minus applies only to integer literals")
                        .primary(t.span.to(n.span), "negation of a non-literal")
                        .help("write `0 - x` to negate an expression"),
                );
                Err(Fail)
            }
            Tok::LParen => {
                self.bump();
                ctx.parens += 1;
                let r = self.tagexpr(0, ctx);
                ctx.parens -= 1;
                let (mut e, d) = r?;
                if !self.at(Tok::RParen) {
                    return Err(self.unexpected("`)` or an operator"));
                }
                let close = self.bump();
                e.span = t.span.to(close.span);
                Ok((e, d))
            }
            _ => {
                Err(self
                    .unexpected("a tag expression operand (a tag name, `#b`, an integer or `(`)"))
            }
        }
    }
}

struct ExprCtx {
    parens: u32,
}
