//! Pretty-printer: renders a syntax tree as S-Net source that parses back to the same
//! tree (spans aside). Parentheses are written exactly where the tree nests a chain
//! inside a chain of the same or a weaker operator, and around every compound operand
//! of a tag expression.
//!
//! One shape cannot be written: a split directly after a serial replication or feedback
//! whose last pattern has a guard (`A * {x} if <g> ! <t>`): by §3.10.3 the `>` before
//! `!` is a comparison. The printer writes it anyway; such a tree is never produced by
//! the parser.

use crate::ast::*;
use std::fmt::Write as _;

/// Renders a whole program.
pub fn program(p: &Program) -> String {
    let mut out = String::new();
    for d in &p.defs {
        def(&mut out, d, 0);
    }
    out
}

/// Renders a network expression.
pub fn expr(e: &Expr) -> String {
    let mut out = String::new();
    expr_at(&mut out, e, 0);
    out
}

/// Renders a tag expression.
pub fn tagexpr(e: &TagExpr) -> String {
    let mut out = String::new();
    texpr(&mut out, e);
    out
}

fn indent(out: &mut String, n: usize) {
    for _ in 0..n {
        out.push_str("  ");
    }
}

fn def(out: &mut String, d: &Def, ind: usize) {
    indent(out, ind);
    match d {
        Def::Box(b) => {
            let _ = write!(out, "box {}(", b.name.name);
            if let Some(ins) = &b.input {
                out.push('(');
                for (i, l) in ins.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    label(out, &l.label);
                    for _ in 0..l.qualifiers {
                        out.push_str(" =");
                    }
                }
                out.push_str(") ");
            }
            out.push_str("->");
            for (i, o) in b.outputs.iter().enumerate() {
                out.push_str(if i == 0 { " " } else { " | " });
                out.push('(');
                labels(out, o);
                out.push(')');
            }
            out.push_str(");\n");
        }
        Def::Net(n) => {
            let _ = write!(out, "net {}", n.name.name);
            if let Some(s) = &n.sig {
                out.push_str(" (");
                sig(out, s);
                out.push(')');
            }
            if let Some(body) = &n.body {
                out.push_str(" {\n");
                for d in body {
                    def(out, d, ind + 1);
                }
                indent(out, ind);
                out.push('}');
            }
            out.push_str(" connect ");
            expr_at(out, &n.expr, 0);
            out.push_str(";\n");
        }
        Def::Type(t) => {
            let _ = write!(out, "type {} = ", t.name.name);
            inalts(out, &t.alts);
            out.push_str(";\n");
        }
        Def::Typesig(t) => {
            let _ = write!(out, "typesig {} = ", t.name.name);
            sig(out, &t.sig);
            out.push_str(";\n");
        }
        Def::Metadata(m) => {
            out.push_str("<metadata>");
            for e in &m.elems {
                md(out, e);
            }
            out.push_str("</metadata>\n");
        }
    }
}

fn md(out: &mut String, e: &MdElem) {
    let _ = write!(out, "<{}", e.name);
    for (k, v) in &e.attrs {
        let _ = write!(out, " {k}=\"{v}\"");
    }
    if e.children.is_empty() && e.text.is_empty() {
        out.push_str("/>");
        return;
    }
    out.push('>');
    out.push_str(&e.text);
    for c in &e.children {
        md(out, c);
    }
    let _ = write!(out, "</{}>", e.name);
}

fn label(out: &mut String, l: &LabelRef) {
    match l.kind {
        LabelKind::Field => out.push_str(&l.name),
        LabelKind::Tag => {
            let _ = write!(out, "<{}>", l.name);
        }
        LabelKind::BTag => {
            let _ = write!(out, "<#{}>", l.name);
        }
    }
}

fn labels(out: &mut String, ls: &[LabelRef]) {
    for (i, l) in ls.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        label(out, l);
    }
}

fn rectype(out: &mut String, r: &RecType) {
    out.push('{');
    labels(out, &r.labels);
    out.push('}');
}

fn inalts(out: &mut String, alts: &[InAlt]) {
    for (i, a) in alts.iter().enumerate() {
        if i > 0 {
            out.push_str(" | ");
        }
        match a {
            InAlt::Rec(r) => rectype(out, r),
            InAlt::Named(id) => out.push_str(&id.name),
        }
    }
}

fn sig(out: &mut String, items: &[SigItem]) {
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match it {
            SigItem::Named(id) => out.push_str(&id.name),
            SigItem::Map(m) => {
                inalts(out, &m.input);
                if !m.input.is_empty() {
                    out.push(' ');
                }
                out.push_str("->");
                match &m.output {
                    OutSpec::Unspecified(_) => out.push_str(" ..."),
                    OutSpec::Alts(alts) => {
                        for (j, a) in alts.iter().enumerate() {
                            out.push_str(if j == 0 { " " } else { " | " });
                            match a {
                                OutAlt::Named(id) => out.push_str(&id.name),
                                OutAlt::Rec(ls, _) => {
                                    out.push('{');
                                    for (k, (pass, l)) in ls.iter().enumerate() {
                                        if k > 0 {
                                            out.push_str(", ");
                                        }
                                        if *pass {
                                            out.push('=');
                                        }
                                        label(out, l);
                                    }
                                    out.push('}');
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Binding strength of an expression: 1 `|`, 2 `||`, 3 `..`, 4 postfix, 5 primary.
fn level(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Choice { det: false, .. } => 1,
        ExprKind::Choice { det: true, .. } => 2,
        ExprKind::Serial(_) => 3,
        ExprKind::Postfix(..) => 4,
        _ => 5,
    }
}

/// Writes `e`, parenthesised if it binds more weakly than `need` (or equally, for
/// chains, whose nesting the parentheses record).
fn expr_at(out: &mut String, e: &Expr, need: u8) {
    crate::grow(|| {
        let l = level(e);
        let paren = l < need;
        if paren {
            out.push('(');
        }
        expr_inner(out, e);
        if paren {
            out.push(')');
        }
    });
}

fn expr_inner(out: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::Ref(id) => out.push_str(&id.name),
        ExprKind::Identity => out.push_str("[]"),
        ExprKind::Error => out.push_str("[/* error */]"),
        ExprKind::Filter(f) => filter(out, f),
        ExprKind::Sync(ps) => {
            out.push_str("[| ");
            pats(out, ps);
            out.push_str(" |]");
        }
        ExprKind::Serial(elems) => {
            for (i, x) in elems.iter().enumerate() {
                if i > 0 {
                    out.push_str(" .. ");
                }
                expr_at(out, x, 4);
            }
        }
        ExprKind::Choice { det, branches } => {
            for (i, x) in branches.iter().enumerate() {
                if i > 0 {
                    out.push_str(if *det { " || " } else { " | " });
                }
                expr_at(out, x, if *det { 3 } else { 2 });
            }
        }
        ExprKind::Postfix(base, ops) => {
            expr_at(out, base, 5);
            for op in ops {
                match op {
                    PostOp::Star { det, exits, .. } => {
                        out.push_str(if *det { " ** " } else { " * " });
                        pats(out, exits);
                    }
                    PostOp::Split {
                        det, placed, index, ..
                    } => {
                        out.push_str(if *det { " !!" } else { " !" });
                        if *placed {
                            out.push('@');
                        }
                        out.push(' ');
                        label(out, index);
                    }
                    PostOp::Feedback { back, .. } => {
                        out.push_str(" \\ ");
                        pats(out, back);
                    }
                    PostOp::At { location, .. } => {
                        let _ = write!(out, " @ {location}");
                    }
                }
            }
        }
    }
}

fn pats(out: &mut String, ps: &[GuardedPat]) {
    for (i, p) in ps.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        rectype(out, &p.pat);
        if let Some(g) = &p.guard {
            out.push_str(" if <");
            texpr(out, g);
            out.push('>');
        }
    }
}

fn filter(out: &mut String, f: &Filter) {
    out.push('[');
    rectype(out, &f.pattern);
    out.push_str(" ->");
    for (g, a) in &f.guards {
        out.push_str(" if <");
        texpr(out, g);
        out.push_str("> then");
        action(out, a);
        out.push_str(" else");
    }
    action(out, &f.default);
    out.push(']');
}

fn action(out: &mut String, a: &[RecOut]) {
    for (i, r) in a.iter().enumerate() {
        out.push_str(if i == 0 { " " } else { "; " });
        out.push('{');
        for (j, it) in r.items.iter().enumerate() {
            if j > 0 {
                out.push_str(", ");
            }
            match it {
                OutItem::Field { to, from } => {
                    out.push_str(&to.name);
                    if let Some(f) = from {
                        let _ = write!(out, " = {}", f.name);
                    }
                }
                OutItem::Tag {
                    kind, to, value, ..
                } => {
                    out.push('<');
                    if *kind == LabelKind::BTag {
                        out.push('#');
                    }
                    out.push_str(&to.name);
                    if let Some(v) = value {
                        out.push_str(" = ");
                        texpr(out, v);
                    }
                    out.push('>');
                }
            }
        }
        out.push('}');
    }
}

fn is_atom(e: &TagExpr) -> bool {
    matches!(
        e.kind,
        TagExprKind::Int(_) | TagExprKind::Tag(_) | TagExprKind::BTag(_) | TagExprKind::Error
    )
}

fn operand(out: &mut String, e: &TagExpr) {
    if is_atom(e) {
        texpr(out, e);
    } else {
        out.push('(');
        texpr(out, e);
        out.push(')');
    }
}

fn texpr(out: &mut String, e: &TagExpr) {
    crate::grow(|| match &e.kind {
        TagExprKind::Int(v) => {
            let _ = write!(out, "{v}");
        }
        TagExprKind::Tag(n) => out.push_str(n),
        TagExprKind::BTag(n) => {
            let _ = write!(out, "#{n}");
        }
        TagExprKind::Error => out.push('0'),
        TagExprKind::Unary(op, a) => {
            out.push_str(match op {
                UnOp::Not => "!",
                UnOp::Abs => "abs ",
            });
            operand(out, a);
        }
        TagExprKind::Binary(op, a, b) => {
            operand(out, a);
            let _ = write!(out, " {} ", op.symbol());
            operand(out, b);
        }
        TagExprKind::Cond(c, a, b) => {
            operand(out, c);
            out.push_str(" ? ");
            operand(out, a);
            out.push_str(" : ");
            operand(out, b);
        }
    })
}
