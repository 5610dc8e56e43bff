//! Filters, guarded patterns and tag expressions: the local checks of spec §9 items
//! 9–12, and conversion to the `snet_core` forms.

use super::resolve::{show_label, Resolver};
use crate::ast::{self, BinOp, TagExprKind, UnOp};
use crate::diag::Diagnostic;
use crate::span::Span;
use snet_core::net::{Filter, GuardedPattern, OutItem, Variant};
use snet_core::{Label, LabelKind, TagExpr};

/// Interns a written label.
pub(crate) fn label(l: &ast::LabelRef) -> Label {
    Label::new(l.kind, &l.name)
}

/// Static type of a tag expression (§6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Int,
    Bool,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Bool => "bool",
        }
    }
}

/// Where an expression sits, for the "tag not in pattern" message.
#[derive(Clone, Copy)]
enum Site<'p> {
    Filter(&'p ast::RecType),
    Pattern(&'p ast::RecType),
}

impl Site<'_> {
    fn rec(&self) -> &ast::RecType {
        match self {
            Site::Filter(r) | Site::Pattern(r) => r,
        }
    }
}

/// Type-checks `e` on `site` and converts it; `None` if it has errors.
fn tagexpr(
    r: &mut Resolver<'_>,
    e: &ast::TagExpr,
    pattern: &Variant,
    site: Site<'_>,
) -> Option<(TagExpr, Ty)> {
    crate::grow(|| tagexpr_inner(r, e, pattern, site))
}

fn tagexpr_inner(
    r: &mut Resolver<'_>,
    e: &ast::TagExpr,
    pattern: &Variant,
    site: Site<'_>,
) -> Option<(TagExpr, Ty)> {
    match &e.kind {
        TagExprKind::Int(v) => Some((TagExpr::Int(i32::try_from(*v).ok()?), Ty::Int)),
        TagExprKind::Tag(name) | TagExprKind::BTag(name) => {
            let btag = matches!(e.kind, TagExprKind::BTag(_));
            let l = if btag {
                Label::btag(name)
            } else {
                Label::tag(name)
            };
            if !pattern.contains(&l) {
                missing_tag(r, e.span, name, btag, site);
                return None;
            }
            Some((TagExpr::Label(l), Ty::Int))
        }
        TagExprKind::Unary(op, a) => {
            let want = match op {
                UnOp::Not => Ty::Bool,
                UnOp::Abs => Ty::Int,
            };
            let (x, t) = tagexpr(r, a, pattern, site)?;
            if t != want {
                operand_mismatch(
                    r,
                    a.span,
                    if *op == UnOp::Not { "!" } else { "abs" },
                    want,
                    t,
                );
                return None;
            }
            Some((TagExpr::Unary(*op, Box::new(x)), want))
        }
        TagExprKind::Binary(op, a, b) => {
            let x = tagexpr(r, a, pattern, site);
            let y = tagexpr(r, b, pattern, site);
            let ((x, tx), (y, ty)) = (x?, y?);
            let (want, result) = match op {
                BinOp::Or | BinOp::And => (Some(Ty::Bool), Ty::Bool),
                BinOp::Eq | BinOp::Ne => (None, Ty::Bool),
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => (Some(Ty::Int), Ty::Bool),
                _ => (Some(Ty::Int), Ty::Int),
            };
            match want {
                Some(w) => {
                    let mut ok = true;
                    if tx != w {
                        operand_mismatch(r, a.span, op.symbol(), w, tx);
                        ok = false;
                    }
                    if ty != w {
                        operand_mismatch(r, b.span, op.symbol(), w, ty);
                        ok = false;
                    }
                    if !ok {
                        return None;
                    }
                }
                None => {
                    if tx != ty {
                        r.diags.push(
                            Diagnostic::error(
                                "E0401",
                                format!(
                                    "`{}` compares an {} with a {}",
                                    op.symbol(),
                                    tx.name(),
                                    ty.name()
                                ),
                            )
                            .primary(e.span, "operands of different types")
                            .note("there is no implicit conversion between int and bool"),
                        );
                        return None;
                    }
                }
            }
            Some((TagExpr::Binary(*op, Box::new(x), Box::new(y)), result))
        }
        TagExprKind::Cond(c, a, b) => {
            let c = tagexpr(r, c, pattern, site);
            let x = tagexpr(r, a, pattern, site);
            let y = tagexpr(r, b, pattern, site);
            let ((c, tc), (x, tx), (y, ty)) = (c?, x?, y?);
            if tc != Ty::Bool {
                if let TagExprKind::Cond(ce, _, _) = &e.kind {
                    operand_mismatch(r, ce.span, "?", Ty::Bool, tc);
                }
                return None;
            }
            if tx != ty {
                r.diags.push(
                    Diagnostic::error(
                        "E0401",
                        format!(
                            "the branches of `? :` have different types ({} and {})",
                            tx.name(),
                            ty.name()
                        ),
                    )
                    .primary(e.span, "branches must both be int or both be bool"),
                );
                return None;
            }
            Some((TagExpr::Cond(Box::new(c), Box::new(x), Box::new(y)), tx))
        }
        TagExprKind::Error => None,
    }
}

fn operand_mismatch(r: &mut Resolver<'_>, span: Span, op: &str, want: Ty, found: Ty) {
    let mut d = Diagnostic::error(
        "E0401",
        format!(
            "mismatched types: `{op}` expects {} operands, found {}",
            want.name(),
            found.name()
        ),
    )
    .primary(span, format!("this is {}", found.name()));
    d = match (want, found) {
        (Ty::Bool, Ty::Int) => d.help("compare the value, e.g. `t != 0`"),
        (Ty::Int, Ty::Bool) => d.help("use a conditional, e.g. `(c ? 1 : 0)`"),
        _ => d,
    };
    d = d.note("there is no implicit conversion between int and bool");
    r.diags.push(d);
}

fn missing_tag(r: &mut Resolver<'_>, span: Span, name: &str, btag: bool, site: Site<'_>) {
    let shown = if btag {
        format!("<#{name}>")
    } else {
        format!("<{name}>")
    };
    let rec = site.rec();
    let other = rec.labels.iter().find(|l| l.name == name);
    let (code, msg, label) = match site {
        Site::Filter(_) => (
            "E0404",
            format!("tag `{shown}` is read but not in the filter's pattern"),
            "the filter's pattern",
        ),
        Site::Pattern(_) => (
            "E0406",
            format!("the guard reads tag `{shown}`, which its pattern does not contain"),
            "the pattern",
        ),
    };
    let mut d = Diagnostic::error(code, msg)
        .primary(span, "not in the pattern")
        .secondary(rec.span, label);
    d = match other {
        Some(l) if l.kind == LabelKind::Field => d.note(format!(
            "`{name}` in the pattern is a field; tag expressions read tags (`<{name}>`)"
        )),
        Some(l) if l.kind == LabelKind::BTag && !btag => d.help(format!(
            "the pattern has binding tag `<#{name}>`: write `#{name}`"
        )),
        Some(l) if l.kind == LabelKind::Tag && btag => {
            d.help(format!("the pattern has tag `<{name}>`: write `{name}`"))
        }
        _ => d.help(format!("add `{shown}` to the pattern")),
    };
    r.diags.push(d);
}

fn guard(
    r: &mut Resolver<'_>,
    g: &ast::TagExpr,
    pattern: &Variant,
    site: Site<'_>,
) -> Option<TagExpr> {
    let (e, t) = tagexpr(r, g, pattern, site)?;
    if t != Ty::Bool {
        r.diags.push(
            Diagnostic::error("E0402", "a guard must be a bool expression, found int")
                .primary(g.span, "this is an int")
                .help("compare the value, e.g. `<t != 0>`"),
        );
        return None;
    }
    Some(e)
}

/// Converts guarded patterns (§9 items 9, 11, 12).
pub(crate) fn guarded_pats(r: &mut Resolver<'_>, pats: &[ast::GuardedPat]) -> Vec<GuardedPattern> {
    pats.iter()
        .map(|p| {
            let labels = r.rectype(&p.pat);
            let guard = p
                .guard
                .as_ref()
                .and_then(|g| guard(r, g, &labels, Site::Pattern(&p.pat)));
            GuardedPattern { labels, guard }
        })
        .collect()
}

/// Checks and converts a filter (§9 items 9, 10, 12). `None` if it has errors.
pub(crate) fn filter(r: &mut Resolver<'_>, f: &ast::Filter) -> Option<Filter> {
    let errors_before = r.diags.len();
    let pattern = r.rectype(&f.pattern);
    let site = Site::Filter(&f.pattern);
    let mut guards = Vec::new();
    for (g, action) in &f.guards {
        let ge = guard(r, g, &pattern, site);
        let a = self::action(r, action, &pattern, site);
        if let Some(ge) = ge {
            guards.push((ge, a));
        }
    }
    let default = action(r, &f.default, &pattern, site);
    if r.diags[errors_before..].iter().any(Diagnostic::is_error) {
        return None;
    }
    Some(Filter {
        pattern,
        guards,
        default,
    })
}

fn action(
    r: &mut Resolver<'_>,
    outs: &[ast::RecOut],
    pattern: &Variant,
    site: Site<'_>,
) -> Vec<Vec<OutItem>> {
    let mut result = Vec::new();
    for o in outs {
        let mut items = Vec::new();
        let mut seen: Vec<(Label, Span)> = Vec::new();
        for it in &o.items {
            let (to, span) = match it {
                ast::OutItem::Field { to, from } => {
                    let src = from.as_ref().unwrap_or(to);
                    let from_l = Label::field(&src.name);
                    if !pattern.contains(&from_l) {
                        let mut d = Diagnostic::error(
                            "E0405",
                            format!("field `{}` is not in the filter's pattern", src.name),
                        )
                        .primary(src.span, "not in the pattern")
                        .secondary(site.rec().span, "the filter's pattern");
                        d = if site
                            .rec()
                            .labels
                            .iter()
                            .any(|l| l.name == src.name && l.kind == LabelKind::Tag)
                        {
                            d.help(format!(
                                "the pattern has tag `<{0}>`: write `<{0}>`",
                                src.name
                            ))
                        } else {
                            d.note("a filter can only copy fields it consumes").help(format!(
                                "add `{}` to the pattern, or leave it out: it flows through unchanged",
                                src.name
                            ))
                        };
                        r.diags.push(d);
                    }
                    let to_l = Label::field(&to.name);
                    items.push(OutItem::Field {
                        to: to_l,
                        from: from_l,
                    });
                    (to_l, to.span.to(src.span))
                }
                ast::OutItem::Tag {
                    kind,
                    to,
                    value,
                    span,
                } => {
                    let to_l = Label::new(*kind, &to.name);
                    let v = value.as_ref().and_then(|e| {
                        let (x, t) = tagexpr(r, e, pattern, site)?;
                        if t != Ty::Int {
                            r.diags.push(
                                Diagnostic::error(
                                    "E0403",
                                    format!(
                                        "the value of tag `{}` must be an int expression, found bool",
                                        show_label(&ast::LabelRef {
                                            kind: *kind,
                                            name: to.name.clone(),
                                            span: *span
                                        })
                                    ),
                                )
                                .primary(e.span, "this is a bool")
                                .help("use a conditional, e.g. `(c ? 1 : 0)`"),
                            );
                            return None;
                        }
                        Some(x)
                    });
                    items.push(OutItem::Tag { to: to_l, value: v });
                    (to_l, *span)
                }
            };
            if let Some((_, first)) = seen.iter().find(|(l, _)| *l == to) {
                r.diags.push(
                    Diagnostic::error(
                        "E0407",
                        format!("label `{to}` produced twice in one output record"),
                    )
                    .primary(span, "duplicate")
                    .secondary(*first, "first produced here")
                    .help("to emit two records, separate them with `;`"),
                );
            } else {
                seen.push((to, span));
            }
        }
        result.push(items);
    }
    result
}
