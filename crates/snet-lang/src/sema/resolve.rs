//! Name resolution and scopes (spec §4), building the [`Ir`].
//!
//! Definitions are processed in textual order; a name is visible after its definition
//! has been read, in its scope and the scopes nested in it. Boxes and nets share one
//! namespace per scope; types and typesigs have their own. Box names are global.

use super::convert;
use super::ir::*;
use crate::ast::{self, Def, Expr, ExprKind, InAlt, OutAlt, OutSpec, PostOp, SigItem};
use crate::diag::{closest, Diagnostic};
use crate::span::Span;
use snet_core::net::Variant;
use snet_core::observe::{Detail, ObserverSpec, Side, Target};
use snet_core::{Label, LabelKind};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy)]
enum Entity {
    Box(usize),
    Net(usize),
}

#[derive(Debug, Default)]
struct Scope {
    parent: Option<usize>,
    nets: HashMap<String, (Entity, Span)>,
    types: HashMap<String, (Vec<Variant>, Span)>,
    typesigs: HashMap<String, (Sig, Span)>,
    /// Names of everything defined in this scope (for "defined later" notes).
    all_names: Vec<(String, Span, &'static str)>,
    /// Net names defined here → their body scope.
    net_scopes: HashMap<String, usize>,
}

/// Metadata rules of one scope (§13).
#[derive(Debug, Default, Clone)]
pub(crate) struct MdRules {
    /// `<box name=B>` → interface.
    pub(crate) box_iface: HashMap<String, String>,
    /// `<boxdefault>` interface.
    pub(crate) box_default: Option<String>,
    /// `<default>` interface.
    pub(crate) default: Option<String>,
    /// `<box name=B>` → its observers (§13.1).
    pub(crate) box_obs: HashMap<String, Vec<ObserverSpec>>,
    /// `<boxdefault>` observers.
    pub(crate) box_default_obs: Vec<ObserverSpec>,
    /// `<net name=N>` → its observers.
    pub(crate) net_obs: HashMap<String, Vec<ObserverSpec>>,
    /// `<netdefault>` observers.
    pub(crate) net_default_obs: Vec<ObserverSpec>,
}

pub(crate) struct Resolver<'a> {
    pub(crate) ir: Ir,
    pub(crate) diags: Vec<Diagnostic>,
    scopes: Vec<Scope>,
    /// Metadata blocks per scope, applied after resolution.
    md_pending: Vec<(usize, &'a ast::Metadata)>,
    pub(crate) md_rules: Vec<MdRules>,
    all_boxes: HashMap<String, Span>,
    /// Nets being defined (for the "no recursion" note).
    defining: Vec<String>,
    /// Box and net names whose definition was rejected with an error of its own: a use
    /// is not reported as undefined as well.
    rejected: std::collections::HashSet<String>,
}

impl<'a> Resolver<'a> {
    pub(crate) fn new() -> Resolver<'a> {
        Resolver {
            ir: Ir::default(),
            diags: Vec::new(),
            scopes: vec![Scope::default()],
            md_pending: Vec::new(),
            md_rules: Vec::new(),
            all_boxes: HashMap::new(),
            defining: Vec::new(),
            rejected: Default::default(),
        }
    }

    /// Resolves the whole program.
    pub(crate) fn program(&mut self, prog: &'a ast::Program) {
        self.rejected.extend(prog.rejected.iter().cloned());
        self.defs(0, &prog.defs, true);
        self.apply_metadata();
    }

    fn defs(&mut self, scope: usize, defs: &'a [Def], top: bool) {
        // Pre-scan names for "defined later" notes.
        for d in defs {
            let (name, span, what) = match d {
                Def::Box(b) => (&b.name, b.span, "box"),
                Def::Net(n) => (&n.name, n.span, "net"),
                Def::Type(t) => (&t.name, t.span, "type"),
                Def::Typesig(t) => (&t.name, t.span, "typesig"),
                Def::Metadata(_) => continue,
            };
            self.scopes[scope]
                .all_names
                .push((name.name.clone(), span, what));
        }
        for d in defs {
            match d {
                Def::Box(b) => self.box_def(scope, b),
                Def::Net(n) => {
                    if let Some(id) = self.net_def(scope, n) {
                        if top {
                            self.ir.top_nets.push(id);
                        }
                    }
                }
                Def::Type(t) => {
                    let alts = self.in_type(scope, &t.alts);
                    if let Some((_, prev)) = self.scopes[scope].types.get(&t.name.name) {
                        let prev = *prev;
                        self.duplicate(&t.name, prev, "type");
                    } else {
                        self.scopes[scope]
                            .types
                            .insert(t.name.name.clone(), (alts, t.name.span));
                    }
                }
                Def::Typesig(t) => {
                    let sig = self.sig(scope, &t.sig);
                    if let Some((_, prev)) = self.scopes[scope].typesigs.get(&t.name.name) {
                        let prev = *prev;
                        self.duplicate(&t.name, prev, "typesig");
                    } else {
                        self.scopes[scope]
                            .typesigs
                            .insert(t.name.name.clone(), (sig, t.name.span));
                    }
                }
                Def::Metadata(m) => self.md_pending.push((scope, m)),
            }
        }
    }

    fn duplicate(&mut self, name: &ast::Ident, prev: Span, what: &str) {
        self.diags.push(
            Diagnostic::error(
                "E0301",
                format!("the name `{}` is defined twice in this scope", name.name),
            )
            .primary(name.span, format!("{what} `{}` redefined here", name.name))
            .secondary(prev, "first defined here")
            .help("rename one of them"),
        );
    }

    fn box_def(&mut self, scope: usize, b: &ast::BoxDef) {
        let input = b.input.as_ref().map(|ls| {
            let mut out = Vec::new();
            for l in ls {
                self.check_qualifiers(l);
                out.push(l.label.clone());
            }
            out
        });
        if let Some(ls) = &input {
            self.check_dup_labels(ls, "box input type");
        }
        for o in &b.outputs {
            self.check_dup_labels(o, "box output variant");
        }
        let intern = |ls: &[ast::LabelRef]| ls.iter().map(convert::label).collect::<Vec<Label>>();
        let passthrough = b
            .input
            .iter()
            .flatten()
            .filter(|l| l.qualifiers == 1 && l.label.kind != LabelKind::BTag)
            .map(|l| convert::label(&l.label))
            .collect();
        let info = BoxInfo {
            name: b.name.name.clone(),
            span: b.name.span,
            input: input.as_deref().map(intern),
            outputs: b.outputs.iter().map(|o| intern(o)).collect(),
            scope,
            interface: None,
            passthrough,
            observers: Vec::new(),
        };
        if let Some((_, prev)) = self.scopes[scope].nets.get(&b.name.name) {
            let prev = *prev;
            self.duplicate(&b.name, prev, "box");
            return;
        }
        if let Some(prev) = self.all_boxes.get(&b.name.name) {
            self.diags.push(
                Diagnostic::error(
                    "E0302",
                    format!("box `{}` is defined twice in the program", b.name.name),
                )
                .primary(b.name.span, "second box with this name")
                .secondary(*prev, "first defined here")
                .note("box names are global: each box is bound to the C function of the same name"),
            );
            self.rejected.insert(b.name.name.clone());
            return;
        }
        self.all_boxes.insert(b.name.name.clone(), b.name.span);
        self.ir.boxes.push(info);
        let id = self.ir.boxes.len() - 1;
        self.scopes[scope]
            .nets
            .insert(b.name.name.clone(), (Entity::Box(id), b.name.span));
    }

    fn check_qualifiers(&mut self, l: &ast::BoxInLabel) {
        if l.qualifiers == 0 {
            return;
        }
        let d = if l.label.kind == LabelKind::BTag {
            Diagnostic::error(
                "E0308",
                format!(
                    "pass-through qualifier on binding tag `<#{}>`",
                    l.label.name
                ),
            )
            .primary(l.qualifier_span, "not allowed on a binding tag")
            .note("binding tags are never passed through (spec §3.3)")
        } else if l.qualifiers > 1 {
            Diagnostic::error(
                "E0309",
                format!(
                    "label `{}` has more than one qualifier",
                    show_label(&l.label)
                ),
            )
            .primary(l.qualifier_span, "a label can carry at most one `=`")
        } else {
            return;
        };
        self.diags.push(d);
    }

    pub(crate) fn check_dup_labels(&mut self, ls: &[ast::LabelRef], what: &str) {
        for (i, l) in ls.iter().enumerate() {
            if let Some(first) = ls[..i]
                .iter()
                .find(|p| p.kind == l.kind && p.name == l.name)
            {
                self.diags.push(
                    Diagnostic::error(
                        "E0311",
                        format!("label `{}` listed twice in a {what}", show_label(l)),
                    )
                    .primary(l.span, "duplicate label")
                    .secondary(first.span, "first listed here")
                    .help("remove one of them"),
                );
            }
        }
    }

    fn net_def(&mut self, scope: usize, n: &'a ast::NetDef) -> Option<usize> {
        let sig = n.sig.as_ref().map(|s| self.sig(scope, s));
        let body_scope = self.scopes.len();
        self.scopes.push(Scope {
            parent: Some(scope),
            ..Scope::default()
        });
        self.scopes[scope]
            .net_scopes
            .insert(n.name.name.clone(), body_scope);
        if let Some(defs) = &n.body {
            crate::grow(|| self.defs(body_scope, defs, false));
        }
        self.defining.push(n.name.name.clone());
        let body = self.expr(body_scope, &n.expr);
        self.defining.pop();
        if let Some((_, prev)) = self.scopes[scope].nets.get(&n.name.name) {
            let prev = *prev;
            self.duplicate(&n.name, prev, "net");
            return None;
        }
        self.ir.nets.push(NetInfo {
            name: n.name.name.clone(),
            name_span: n.name.span,
            sig,
            body,
            scope: Some(scope),
            observers: Vec::new(),
        });
        let id = self.ir.nets.len() - 1;
        self.scopes[scope]
            .nets
            .insert(n.name.name.clone(), (Entity::Net(id), n.name.span));
        Some(id)
    }

    // ----- types and signatures ----------------------------------------------------------

    fn lookup_type(&self, scope: usize, name: &str) -> Option<&Vec<Variant>> {
        let mut s = Some(scope);
        while let Some(i) = s {
            if let Some((t, _)) = self.scopes[i].types.get(name) {
                return Some(t);
            }
            s = self.scopes[i].parent;
        }
        None
    }

    fn lookup_typesig(&self, scope: usize, name: &str) -> Option<&Sig> {
        let mut s = Some(scope);
        while let Some(i) = s {
            if let Some((t, _)) = self.scopes[i].typesigs.get(name) {
                return Some(t);
            }
            s = self.scopes[i].parent;
        }
        None
    }

    fn visible_names<'s>(
        &'s self,
        scope: usize,
        pick: impl Fn(&'s Scope) -> Vec<&'s str>,
    ) -> Vec<&'s str> {
        let mut out = Vec::new();
        let mut s = Some(scope);
        while let Some(i) = s {
            out.extend(pick(&self.scopes[i]));
            s = self.scopes[i].parent;
        }
        out
    }

    fn in_type(&mut self, scope: usize, alts: &[InAlt]) -> Vec<Variant> {
        let mut out = Vec::new();
        for a in alts {
            match a {
                InAlt::Rec(r) => out.push(self.rectype(r)),
                InAlt::Named(id) => match self.lookup_type(scope, &id.name) {
                    Some(t) => out.extend(t.iter().cloned()),
                    None => self.unknown_type(scope, id, "type"),
                },
            }
        }
        out
    }

    pub(crate) fn rectype(&mut self, r: &ast::RecType) -> Variant {
        self.check_dup_labels(&r.labels, "record type");
        variant_of(&r.labels.iter().map(convert::label).collect::<Vec<_>>())
    }

    fn unknown_type(&mut self, scope: usize, id: &ast::Ident, what: &'static str) {
        let names = if what == "type" {
            self.visible_names(scope, |s| s.types.keys().map(String::as_str).collect())
        } else {
            self.visible_names(scope, |s| s.typesigs.keys().map(String::as_str).collect())
        };
        let mut d = Diagnostic::error("E0303", format!("unknown {what} `{}`", id.name))
            .primary(id.span, format!("no {what} of this name is visible here"));
        if what == "typesig" {
            d.code = "E0304";
        }
        if let Some(c) = closest(&id.name, names.into_iter()) {
            d = d.help(format!("did you mean `{c}`?"));
        } else if what == "typesig" && self.lookup_type(scope, &id.name).is_some() {
            d = d.note(format!(
                "`{}` is a type; a signature item needs a mapping such as `{} -> {{...}}`",
                id.name, id.name
            ));
        } else if what == "type" && self.lookup_typesig(scope, &id.name).is_some() {
            d = d.note(format!("`{}` is a typesig, not a type", id.name));
        } else if let Some(n) = self.defined_later(scope, &id.name) {
            d = d.note(n);
        }
        self.diags.push(d);
    }

    fn sig(&mut self, scope: usize, items: &[SigItem]) -> Sig {
        let mut sig = Sig::default();
        for it in items {
            match it {
                SigItem::Named(id) => match self.lookup_typesig(scope, &id.name) {
                    Some(s) => sig.maps.extend(s.maps.iter().cloned()),
                    None => self.unknown_type(scope, id, "typesig"),
                },
                SigItem::Map(m) => {
                    let inputs = self.in_type(scope, &m.input);
                    let outputs = match &m.output {
                        OutSpec::Unspecified(_) => None,
                        OutSpec::Alts(alts) => {
                            let mut out = Vec::new();
                            for a in alts {
                                match a {
                                    OutAlt::Rec(ls, _) => {
                                        let labels: Vec<ast::LabelRef> =
                                            ls.iter().map(|(_, l)| l.clone()).collect();
                                        self.check_dup_labels(&labels, "record type");
                                        out.push(variant_of(
                                            &labels.iter().map(convert::label).collect::<Vec<_>>(),
                                        ));
                                    }
                                    OutAlt::Named(id) => match self.lookup_type(scope, &id.name) {
                                        Some(t) => out.extend(t.iter().cloned()),
                                        None => self.unknown_type(scope, id, "type"),
                                    },
                                }
                            }
                            Some(out)
                        }
                    };
                    sig.maps.push(SigMap { inputs, outputs });
                }
            }
        }
        sig
    }

    // ----- network expressions -----------------------------------------------------

    fn lookup_net(&self, scope: usize, name: &str) -> Option<Entity> {
        let mut s = Some(scope);
        while let Some(i) = s {
            if let Some((e, _)) = self.scopes[i].nets.get(name) {
                return Some(*e);
            }
            s = self.scopes[i].parent;
        }
        None
    }

    fn defined_later(&self, scope: usize, name: &str) -> Option<String> {
        let mut s = Some(scope);
        while let Some(i) = s {
            if let Some((_, _, what)) = self.scopes[i].all_names.iter().find(|(n, _, _)| n == name)
            {
                return Some(format!(
                    "a {what} `{name}` is defined later; names must be defined before they are used"
                ));
            }
            s = self.scopes[i].parent;
        }
        None
    }

    pub(crate) fn expr(&mut self, scope: usize, e: &Expr) -> IrId {
        crate::grow(|| self.expr_inner(scope, e))
    }

    fn expr_inner(&mut self, scope: usize, e: &Expr) -> IrId {
        match &e.kind {
            ExprKind::Ref(id) => match self.lookup_net(scope, &id.name) {
                Some(Entity::Box(b)) if !self.ir.boxes[b].passthrough.is_empty() => {
                    self.passthrough_box(b, e.span)
                }
                Some(Entity::Box(b)) => self.ir.push(IrKind::Box(b), e.span),
                Some(Entity::Net(n)) => self.ir.push(IrKind::Net(n), e.span),
                None => {
                    self.undefined_net(scope, id);
                    self.ir.push(IrKind::Error, e.span)
                }
            },
            ExprKind::Identity => self.ir.push(IrKind::Identity, e.span),
            ExprKind::Filter(f) => {
                let kind = match convert::filter(self, f) {
                    Some(f)
                        if f.pattern.is_empty()
                            && f.guards.is_empty()
                            && f.default.len() == 1
                            && f.default[0].is_empty() =>
                    {
                        IrKind::Identity
                    }
                    Some(f) => IrKind::Filter(f),
                    None => IrKind::Error,
                };
                self.ir.push(kind, e.span)
            }
            ExprKind::Sync(pats) => {
                let ps = convert::guarded_pats(self, pats);
                self.ir.push(IrKind::Sync(ps), e.span)
            }
            ExprKind::Serial(elems) => {
                // Right-nested: a .. (b .. (c .. d)); build from the right so that
                // operands get smaller ids than the nodes using them.
                let ids: Vec<IrId> = elems.iter().map(|x| self.expr(scope, x)).collect();
                let mut acc = ids[ids.len() - 1];
                for k in (0..ids.len() - 1).rev() {
                    let span = elems[k].span.to(e.span.end_point());
                    acc = self.ir.push(IrKind::Serial(ids[k], acc), span);
                }
                // The outermost node spans the whole chain.
                self.ir.nodes[acc].span = e.span;
                acc
            }
            ExprKind::Choice { det, branches } => {
                let bs = branches.iter().map(|b| self.expr(scope, b)).collect();
                self.ir.push(
                    IrKind::Par {
                        det: *det,
                        branches: bs,
                    },
                    e.span,
                )
            }
            ExprKind::Postfix(base, ops) => {
                let mut acc = self.expr(scope, base);
                for op in ops {
                    let span = base.span.to(op.span());
                    let kind = match op {
                        PostOp::Star { det, exits, .. } => IrKind::Star {
                            det: *det,
                            body: acc,
                            exits: convert::guarded_pats(self, exits),
                        },
                        PostOp::Split {
                            det, index, placed, ..
                        } => IrKind::Split {
                            det: *det,
                            body: acc,
                            index: convert::label(index),
                            placed: *placed,
                        },
                        PostOp::Feedback { back, .. } => IrKind::Feedback {
                            body: acc,
                            back: convert::guarded_pats(self, back),
                        },
                        PostOp::At { location, .. } => IrKind::At {
                            body: acc,
                            // Non-negative and below 2^31: checked by the parser.
                            node: u32::try_from(*location).unwrap_or(0),
                        },
                    };
                    acc = self.ir.push(kind, span);
                }
                acc
            }
            ExprKind::Error => self.ir.push(IrKind::Error, e.span),
        }
    }

    /// A box with pass-through input labels `P` (`(a=, <t>=)`, spec §7.3.6): the box
    /// receives them, and every output gets them back unless it emits them itself. The
    /// box itself does that at run time (`BoxSig::passthrough`: it does not consume
    /// them, so flow inheritance re-attaches them); here it is wrapped in a net whose
    /// declared signature adds `P` to each output variant, for inference and routing.
    /// (It used to be lowered as filters around the box, which dropped the binding tags
    /// of the box's input and output types: filters never inherit binding tags.)
    fn passthrough_box(&mut self, b: usize, span: Span) -> IrId {
        let labels = self.ir.boxes[b].passthrough.clone();
        let body = self.ir.push(IrKind::Box(b), span);
        let bx_info = &self.ir.boxes[b];
        let input = variant_of(bx_info.input.as_deref().unwrap_or(&[]));
        let outputs = bx_info
            .outputs
            .iter()
            .map(|o| variant_of(&[o.as_slice(), labels.as_slice()].concat()))
            .collect();
        self.ir.nets.push(NetInfo {
            name: bx_info.name.clone(),
            name_span: bx_info.span,
            sig: Some(Sig {
                maps: vec![SigMap {
                    inputs: vec![input],
                    outputs: Some(outputs),
                }],
            }),
            body,
            scope: None,
            observers: Vec::new(),
        });
        let net = self.ir.nets.len() - 1;
        self.ir.push(IrKind::Net(net), span)
    }

    fn undefined_net(&mut self, scope: usize, id: &ast::Ident) {
        if self.rejected.contains(&id.name) {
            // Its definition was rejected, with an error that says why.
            return;
        }
        let mut d = Diagnostic::error("E0305", format!("undefined network or box `{}`", id.name))
            .primary(id.span, "not defined in this scope");
        let names = self.visible_names(scope, |s| s.nets.keys().map(String::as_str).collect());
        if self.defining.iter().any(|n| n == &id.name) {
            d = d
                .note("a net cannot refer to itself: S-Net has no recursive networks")
                .help("use `*` (serial replication) or `\\` (feedback) to repeat a network");
        } else if let Some(c) = closest(&id.name, names.into_iter()) {
            d = d.help(format!("did you mean `{c}`?"));
        } else if self.lookup_type(scope, &id.name).is_some()
            || self.lookup_typesig(scope, &id.name).is_some()
        {
            d = d.note(format!("`{}` is a type or typesig, not a network", id.name));
        } else if let Some(n) = self.defined_later(scope, &id.name) {
            d = d.note(n);
        } else {
            d = d.note("separately compiled (external) networks are not supported");
        }
        self.diags.push(d);
    }

    // ----- metadata (§13) ----------------------------------------------------------------

    fn apply_metadata(&mut self) {
        self.md_rules = vec![MdRules::default(); self.scopes.len()];
        let pending = std::mem::take(&mut self.md_pending);
        for (scope, md) in pending {
            for e in &md.elems {
                self.md_construct(scope, e, true);
            }
        }
        for b in 0..self.ir.boxes.len() {
            let scope = self.ir.boxes[b].scope;
            let name = self.ir.boxes[b].name.clone();
            self.ir.boxes[b].interface = self.interface_of(scope, &name);
            self.ir.boxes[b].observers = self.observers_of(scope, &name, true);
        }
        for n in 0..self.ir.nets.len() {
            if let Some(scope) = self.ir.nets[n].scope {
                let name = self.ir.nets[n].name.clone();
                self.ir.nets[n].observers = self.observers_of(scope, &name, false);
            }
        }
    }

    /// The observers of box (`is_box`) or net `name` defined in `scope`: those of the
    /// nearest `<box name=...>` / `<net name=...>` that declares any, else those of the
    /// nearest `<boxdefault>` / `<netdefault>` that declares any.
    fn observers_of(&self, scope: usize, name: &str, is_box: bool) -> Vec<ObserverSpec> {
        let mut s = Some(scope);
        while let Some(i) = s {
            let r = &self.md_rules[i];
            let named = if is_box { &r.box_obs } else { &r.net_obs };
            if let Some(v) = named.get(name) {
                return v.clone();
            }
            s = self.scopes[i].parent;
        }
        let mut s = Some(scope);
        while let Some(i) = s {
            let r = &self.md_rules[i];
            let d = if is_box {
                &r.box_default_obs
            } else {
                &r.net_default_obs
            };
            if !d.is_empty() {
                return d.clone();
            }
            s = self.scopes[i].parent;
        }
        Vec::new()
    }

    /// The observers a construct's keys declare (§13.1): none without an `observer`
    /// key, two for `observer_type="both"`. Bad values are warned about and ignored.
    fn md_observers(&mut self, e: &ast::MdElem) -> Vec<ObserverSpec> {
        let keys = &e.children;
        if !keys.iter().any(|k| k.name == "observer") {
            if let Some(k) = keys.iter().find(|k| k.name.starts_with("observer_")) {
                self.diags.push(
                    Diagnostic::warning(
                        "W0003",
                        format!(
                            "`{}` without `<observer/>` in the same block is ignored",
                            k.name
                        ),
                    )
                    .primary(e.span, "")
                    .note("each block with `<observer/>` is one observer, with its own options"),
                );
            }
            return Vec::new();
        }
        let val = |name: &str| {
            keys.iter().find(|k| k.name == name).map(|k| {
                k.attr("value")
                    .map(str::to_owned)
                    .unwrap_or_else(|| k.text.clone())
            })
        };
        let sides = match val("observer_type").as_deref() {
            None | Some("after") => vec![Side::After],
            Some("before") => vec![Side::Before],
            Some("both") => vec![Side::Before, Side::After],
            Some(other) => {
                self.md_observer_warn(
                    e,
                    &format!("`observer_type` `{other}` is not `before`, `after` or `both`; the observer is ignored"),
                    "`observer_type` says which records are reported: those entering (`before`), leaving (`after`, the default) or both",
                );
                return Vec::new();
            }
        };
        let detail = match val("observer_data").as_deref() {
            None | Some("tagvalues") => Detail::TagValues,
            Some("labels") => Detail::Labels,
            Some("allvalues") => Detail::AllValues,
            Some(other) => {
                self.md_observer_warn(
                    e,
                    &format!("`observer_data` `{other}` is not `labels`, `tagvalues` or `allvalues`; the observer is ignored"),
                    "`observer_data` says how much of a record a report shows (`tagvalues` is the default)",
                );
                return Vec::new();
            }
        };
        let interactive = match val("observer_interactive").as_deref() {
            None => false,
            Some(v) => !matches!(v.trim(), "false" | "0" | "no"),
        };
        let target = match (val("observer_file"), val("observer_port")) {
            (Some(f), _) => Target::File(f.into()),
            (None, Some(p)) => {
                match p
                    .trim()
                    .parse::<u16>()
                    .ok()
                    .filter(|&port| port != 0)
                    .ok_or(())
                {
                    Ok(port) => Target::Socket {
                        address: val("observer_address").unwrap_or_else(|| "127.0.0.1".into()),
                        port,
                    },
                    Err(_) => {
                        self.md_observer_warn(
                            e,
                            &format!("`observer_port` `{p}` is not a port number; the observer is ignored"),
                            "a TCP port is a whole number from 1 to 65535",
                        );
                        return Vec::new();
                    }
                }
            }
            (None, None) => {
                self.md_observer_warn(
                    e,
                    "an observer needs `observer_file` or `observer_port`; the observer is ignored",
                    "`<observer_file value=\"FILE\"/>` writes the reports to FILE; `<observer_port value=\"PORT\"/>` sends them to a TCP listener such as `snet observe PORT`",
                );
                return Vec::new();
            }
        };
        let interactive = interactive && matches!(target, Target::Socket { .. });
        sides
            .into_iter()
            .map(|side| ObserverSpec {
                oid: 0,
                position: String::new(),
                side,
                detail,
                code: val("observer_code"),
                target: target.clone(),
                interactive,
            })
            .collect()
    }

    fn md_construct(&mut self, scope: usize, e: &ast::MdElem, top: bool) {
        match e.name.as_str() {
            "default" => {
                if let Some(i) = md_interface(&e.children) {
                    self.md_rules[scope].default = Some(i);
                }
            }
            "boxdefault" => {
                if let Some(i) = md_interface(&e.children) {
                    self.md_rules[scope].box_default = Some(i);
                }
                let obs = self.md_observers(e);
                if !obs.is_empty() {
                    self.md_rules[scope].box_default_obs = obs;
                }
            }
            "netdefault" => {
                let obs = self.md_observers(e);
                if !obs.is_empty() {
                    self.md_rules[scope].net_default_obs = obs;
                }
            }
            "box" => match e.attr("name") {
                Some(n) => {
                    if !self.all_boxes.contains_key(n) {
                        let names: Vec<String> = self.all_boxes.keys().cloned().collect();
                        self.md_unknown(
                            e,
                            &format!("box `{n}`, which the program does not define"),
                            n,
                            &names,
                            None,
                        );
                    } else if let Some(b) = self.ir.boxes.iter().find(|b| b.name == n) {
                        let home = b.scope;
                        if !self.encloses(scope, home) {
                            self.md_out_of_scope(e, &format!("box `{n}`"), scope, home);
                        }
                    }
                    if let Some(i) = md_interface(&e.children) {
                        self.md_rules[scope].box_iface.insert(n.to_owned(), i);
                    }
                    let obs = self.md_observers(e);
                    if !obs.is_empty() {
                        // (A second block for the same box adds its observers.)
                        self.md_rules[scope]
                            .box_obs
                            .entry(n.to_owned())
                            .or_default()
                            .extend(obs);
                    }
                }
                None => self.md_warn(e, "`<box>` without a `name` attribute is ignored"),
            },
            "net" => match e.attr("name") {
                Some(n) => match self.scopes[scope].net_scopes.get(n).copied() {
                    Some(inner) => {
                        let obs = self.md_observers(e);
                        if !obs.is_empty() {
                            self.md_rules[scope]
                                .net_obs
                                .entry(n.to_owned())
                                .or_default()
                                .extend(obs);
                        }
                        for c in &e.children {
                            if is_construct(&c.name) {
                                self.md_construct(inner, c, false);
                            }
                        }
                    }
                    None if self.net_home(n).is_some() => {
                        let home = self.net_home(n).unwrap_or(0);
                        self.md_out_of_scope(e, &format!("net `{n}`"), scope, home);
                    }
                    None => {
                        let names: Vec<String> =
                            self.scopes[scope].net_scopes.keys().cloned().collect();
                        self.md_unknown(
                            e,
                            &format!("net `{n}`, which is not defined in this scope"),
                            n,
                            &names,
                            Some("`<net name=...>` applies to a net defined in the same scope as the metadata block"),
                        );
                    }
                },
                None => self.md_warn(e, "`<net>` without a `name` attribute is ignored"),
            },
            other if top => {
                self.md_warn(
                    e,
                    &format!("unknown metadata element `<{other}>` is ignored"),
                );
            }
            _ => {}
        }
    }

    /// W0003 for metadata naming `what` (a box or net `n` that is not there): the
    /// closest of `names` as a help, else `note`.
    fn md_unknown(
        &mut self,
        e: &ast::MdElem,
        what: &str,
        n: &str,
        names: &[String],
        note: Option<&str>,
    ) {
        let mut d =
            Diagnostic::warning("W0003", format!("metadata for {what}")).primary(e.span, "");
        match closest(n, names.iter().map(String::as_str)) {
            Some(c) => d = d.help(format!("did you mean `{c}`?")),
            None => {
                if let Some(t) = note {
                    d = d.note(t);
                }
            }
        }
        self.diags.push(d);
    }

    /// True if scope `outer` is `inner` or encloses it.
    fn encloses(&self, outer: usize, inner: usize) -> bool {
        let mut s = Some(inner);
        while let Some(i) = s {
            if i == outer {
                return true;
            }
            s = self.scopes[i].parent;
        }
        false
    }

    /// The scope a net named `n` is defined in (the outermost such, if several).
    fn net_home(&self, n: &str) -> Option<usize> {
        (0..self.scopes.len()).find(|i| self.scopes[*i].net_scopes.contains_key(n))
    }

    /// The name of the net whose body is scope `s` (`None` for the top level).
    fn scope_owner(&self, s: usize) -> Option<(&str, usize)> {
        let parent = self.scopes[s].parent?;
        self.scopes[parent]
            .net_scopes
            .iter()
            .find(|(_, c)| **c == s)
            .map(|(n, _)| (n.as_str(), parent))
    }

    /// "at the top level" or "in the body of net `N`".
    fn scope_desc(&self, s: usize) -> String {
        match self.scope_owner(s) {
            Some((n, _)) => format!("in the body of net `{n}`"),
            None => "at the top level".to_owned(),
        }
    }

    /// W0003 for a `<box name=...>` or `<net name=...>` block naming something defined
    /// in scope `home`, which the block's scope `scope` does not enclose: the block has
    /// no effect. Says where it would (the one rule: a block applies to what is defined
    /// in its own scope and in the nets nested in it; `<net name=...>` blocks nest).
    fn md_out_of_scope(&mut self, e: &ast::MdElem, what: &str, scope: usize, home: usize) {
        let here = self.scope_desc(scope);
        let there = self.scope_desc(home);
        let mut d = Diagnostic::warning(
            "W0003",
            format!("metadata for {what} has no effect: the block is {here}, and {what} is defined {there}"),
        )
        .primary(e.span, "")
        .note("a metadata block applies to the boxes and nets defined where it is written (the top level, or a net's body) and in the nets nested there");
        // For a net: the enclosing nets from the block's scope down, to nest blocks.
        let mut path = Vec::new();
        let mut s = home;
        let nestable = self.encloses(scope, home);
        while nestable && s != scope {
            match self.scope_owner(s) {
                Some((n, p)) => {
                    path.push(n.to_owned());
                    s = p;
                }
                None => break,
            }
        }
        path.reverse();
        let help = if nestable && !path.is_empty() {
            let open: String = path.iter().map(|n| format!("<net name=\"{n}\">")).collect();
            let close = "</net>".repeat(path.len());
            let name = e.attr("name").unwrap_or_default();
            format!(
                "move the block into a `<metadata>` {there}, or nest it here: `{open}<{0} name=\"{name}\">...</{0}>{close}`",
                e.name
            )
        } else {
            format!("move the block into a `<metadata>` {there}")
        };
        d = d.help(help);
        self.diags.push(d);
    }

    fn md_warn(&mut self, e: &ast::MdElem, msg: &str) {
        self.diags.push(
            Diagnostic::warning("W0003", msg.to_owned())
                .primary(e.span, "")
                .note("metadata constructs are `<default>`, `<boxdefault>`, `<netdefault>`, `<box name=...>` and `<net name=...>`"),
        );
    }

    /// W0003 for an observer's value that cannot be used, with a note on what would be
    /// (not the note on metadata constructs, which says nothing about it).
    fn md_observer_warn(&mut self, e: &ast::MdElem, msg: &str, note: &str) {
        self.diags.push(
            Diagnostic::warning("W0003", msg.to_owned())
                .primary(e.span, "")
                .note(note.to_owned()),
        );
    }

    fn interface_of(&self, scope: usize, name: &str) -> Option<String> {
        let mut s = Some(scope);
        while let Some(i) = s {
            if let Some(v) = self.md_rules[i].box_iface.get(name) {
                return Some(v.clone());
            }
            s = self.scopes[i].parent;
        }
        let mut s = Some(scope);
        while let Some(i) = s {
            let r = &self.md_rules[i];
            if let Some(v) = r.box_default.as_ref().or(r.default.as_ref()) {
                return Some(v.clone());
            }
            s = self.scopes[i].parent;
        }
        None
    }
}

fn is_construct(name: &str) -> bool {
    matches!(
        name,
        "default" | "boxdefault" | "netdefault" | "box" | "net"
    )
}

/// The `interface` key among the keys of a construct: `<interface value="X"/>` or
/// `<interface>X</interface>`.
fn md_interface(keys: &[ast::MdElem]) -> Option<String> {
    keys.iter().find(|k| k.name == "interface").map(|k| {
        k.attr("value")
            .map(str::to_owned)
            .unwrap_or_else(|| k.text.clone())
    })
}

/// A label as written: `x`, `<t>` or `<#b>`.
pub(crate) fn show_label(l: &ast::LabelRef) -> String {
    match l.kind {
        LabelKind::Field => l.name.clone(),
        LabelKind::Tag => format!("<{}>", l.name),
        LabelKind::BTag => format!("<#{}>", l.name),
    }
}
