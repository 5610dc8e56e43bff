//! Routing-type inference (spec §8): `in(E)` for every node (bottom-up, in id order)
//! and `out(E, v)` on demand, memoised.
//!
//! Type lists are capped at [`MAX_VARIANTS`] variants; a program that needs more gets
//! an error instead of a compile that never ends.

use super::ir::*;
use snet_core::net::Variant;
use snet_core::{Label, LabelKind};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Most variants one inferred type may have.
pub(crate) const MAX_VARIANTS: usize = 4096;

/// A list of variants (a type), de-duplicated, first occurrence kept.
pub(crate) type Ty = Vec<Variant>;

pub(crate) struct Infer<'ir> {
    ir: &'ir Ir,
    ins: Vec<Rc<Ty>>,
    /// Memo of `out(E, v)`, per node.
    outs: Vec<HashMap<Variant, Ty>>,
    outs_precise: Vec<HashMap<Variant, Ty>>,
    /// Set when a type hit [`MAX_VARIANTS`] (at the node given).
    pub(crate) overflow: Option<IrId>,
    /// `out(A | B, v)` follows routing (only the branch `v` goes to) instead of the
    /// §8 rule `out(A, v) ++ out(B, v)`. Used only to print signatures; routing types
    /// always follow §8.
    precise: bool,
}

/// Builds a type list with O(1) de-duplication.
#[derive(Default)]
struct TyBuilder {
    list: Ty,
    seen: HashSet<Variant>,
}

impl TyBuilder {
    fn push(&mut self, v: Variant) {
        if self.seen.insert(v.clone()) {
            self.list.push(v);
        }
    }

    fn full(&self) -> bool {
        self.list.len() > MAX_VARIANTS
    }
}

pub(crate) fn push_unique(list: &mut Ty, v: Variant) {
    if !list.contains(&v) {
        list.push(v);
    }
}

pub(crate) fn union(a: &[Label], b: &[Label]) -> Variant {
    let mut v: Vec<Label> = a.iter().chain(b).copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

pub(crate) fn minus(a: &[Label], b: &[Label]) -> Variant {
    a.iter().filter(|l| !b.contains(l)).copied().collect()
}

/// §7.8 acceptability of a record of type `x` by variant `v`, with its score.
pub(crate) fn accept_score(v: &[Label], x: &[Label]) -> Option<usize> {
    let mut score = 0;
    for l in v {
        if l.kind() != LabelKind::BTag {
            if !x.contains(l) {
                return None;
            }
            score += 1;
        }
    }
    for l in x {
        if l.kind() == LabelKind::BTag {
            if !v.contains(l) {
                return None;
            }
            score += 1;
        }
    }
    Some(score)
}

impl<'ir> Infer<'ir> {
    /// Computes `in` of every node.
    pub(crate) fn new(ir: &'ir Ir) -> Infer<'ir> {
        let mut inf = Infer {
            ir,
            ins: Vec::with_capacity(ir.nodes.len()),
            outs: vec![HashMap::new(); ir.nodes.len()],
            outs_precise: vec![HashMap::new(); ir.nodes.len()],
            overflow: None,
            precise: false,
        };
        for id in 0..ir.nodes.len() {
            // Nodes whose input type is their operand's share it.
            let shared = match &ir.nodes[id].kind {
                IrKind::Net(n) if ir.nets[*n].sig.is_none() => Some(ir.nets[*n].body),
                IrKind::Feedback { body, .. } | IrKind::At { body } => Some(*body),
                _ => None,
            };
            let t = match shared {
                Some(b) if inf.overflow.is_none() => Rc::clone(&inf.ins[b]),
                _ => Rc::new(inf.compute_in(id)),
            };
            inf.ins.push(t);
        }
        inf
    }

    /// Switches `out` of parallel compositions to follow routing (for printing
    /// signatures) or back to the §8 rule.
    pub(crate) fn set_precise(&mut self, precise: bool) {
        if precise != self.precise {
            std::mem::swap(&mut self.outs, &mut self.outs_precise);
            self.precise = precise;
        }
    }

    /// `in(E)` of node `id`.
    pub(crate) fn input(&self, id: IrId) -> &Ty {
        &self.ins[id]
    }

    fn cap(&mut self, id: IrId, mut t: Ty) -> Ty {
        if t.len() > MAX_VARIANTS {
            t.truncate(MAX_VARIANTS);
            self.overflow.get_or_insert(id);
        }
        t
    }

    /// The input variants of a declared signature.
    pub(crate) fn sig_inputs(sig: &Sig) -> Ty {
        let mut t = Ty::new();
        for m in &sig.maps {
            for v in &m.inputs {
                push_unique(&mut t, v.clone());
            }
        }
        t
    }

    fn compute_in(&mut self, id: IrId) -> Ty {
        let ir = self.ir;
        if self.overflow.is_some() {
            // An error is reported; keep the rest cheap.
            return vec![Vec::new()];
        }
        let t = match &ir.nodes[id].kind {
            IrKind::Box(b) => match &ir.boxes[*b].input {
                Some(ls) => vec![variant_of(ls)],
                None => Vec::new(),
            },
            IrKind::Net(n) => match &ir.nets[*n].sig {
                Some(sig) => Self::sig_inputs(sig),
                None => self.ins[ir.nets[*n].body].to_vec(),
            },
            IrKind::Identity | IrKind::Error => vec![Vec::new()],
            IrKind::Filter(f) => vec![f.pattern.clone()],
            IrKind::Sync(ps) => {
                let mut t = Ty::new();
                let mut all = Vec::new();
                for p in ps {
                    push_unique(&mut t, p.labels.clone());
                    all = union(&all, &p.labels);
                }
                push_unique(&mut t, all);
                t
            }
            IrKind::Serial(a, b) => {
                let (a, b) = (*a, *b);
                let mut t = TyBuilder::default();
                let in_b = Rc::clone(&self.ins[b]);
                let empty = vec![Vec::new()];
                let in_b: &Ty = if in_b.is_empty() { &empty } else { &in_b };
                let in_a = Rc::clone(&self.ins[a]);
                for v in in_a.iter() {
                    let outs = self.output(a, v);
                    if outs.is_empty() {
                        t.push(v.clone());
                        continue;
                    }
                    for o in &outs {
                        for w in in_b {
                            t.push(union(v, &minus(w, o)));
                        }
                    }
                    if t.full() {
                        break;
                    }
                }
                t.list
            }
            IrKind::Par { branches, .. } => {
                let mut t = TyBuilder::default();
                for b in branches {
                    for v in self.ins[*b].iter() {
                        t.push(v.clone());
                    }
                }
                t.list
            }
            IrKind::Star { body, exits, .. } => {
                let mut t = self.ins[*body].to_vec();
                for p in exits {
                    push_unique(&mut t, p.labels.clone());
                }
                t
            }
            IrKind::Split { body, index, .. } => {
                let inb = &self.ins[*body];
                if inb.is_empty() {
                    vec![vec![*index]]
                } else {
                    let mut t = Ty::new();
                    for v in inb.iter() {
                        push_unique(&mut t, union(v, &[*index]));
                    }
                    t
                }
            }
            IrKind::Feedback { body, .. } | IrKind::At { body, .. } => self.ins[*body].to_vec(),
        };
        self.cap(id, t)
    }

    /// `out(E, v)`: the explicitly produced variants for input variant `v`.
    pub(crate) fn output(&mut self, id: IrId, v: &Variant) -> Ty {
        if let Some(t) = self.outs[id].get(v) {
            return t.clone();
        }
        let t = crate::grow(|| self.compute_out(id, v));
        let t = self.cap(id, t);
        self.outs[id].insert(v.clone(), t.clone());
        t
    }

    fn compute_out(&mut self, id: IrId, v: &Variant) -> Ty {
        let ir = self.ir;
        if self.overflow.is_some() {
            return Ty::new();
        }
        match &ir.nodes[id].kind {
            IrKind::Box(b) => {
                let mut t = Ty::new();
                for o in &ir.boxes[*b].outputs {
                    push_unique(&mut t, variant_of(o));
                }
                t
            }
            IrKind::Net(n) => match &ir.nets[*n].sig {
                Some(sig) => Self::sig_output(sig, v),
                None => self.output(ir.nets[*n].body, v),
            },
            IrKind::Identity | IrKind::Error => vec![v.clone()],
            IrKind::Filter(f) => {
                let mut t = Ty::new();
                let actions = f.guards.iter().map(|(_, a)| a).chain([&f.default]);
                for a in actions {
                    for rec in a {
                        // An empty `{}` contributes the empty variant: §8's worked
                        // check `[{<Decipher>} -> {}] .. KeyInvert` needs it (the
                        // reference's signature dumps left it out).
                        let labels: Vec<Label> = rec
                            .iter()
                            .map(|it| match it {
                                snet_core::net::OutItem::Field { to, .. }
                                | snet_core::net::OutItem::Tag { to, .. } => *to,
                            })
                            .collect();
                        push_unique(&mut t, variant_of(&labels));
                    }
                }
                t
            }
            IrKind::Sync(ps) => {
                let mut all = Vec::new();
                for p in ps {
                    all = union(&all, &p.labels);
                }
                let mut t = vec![v.clone()];
                push_unique(&mut t, all);
                t
            }
            IrKind::Serial(a, b) => {
                let (a, b) = (*a, *b);
                let outs_a = self.output(a, v);
                let in_b = Rc::clone(&self.ins[b]);
                if in_b.is_empty() {
                    return outs_a;
                }
                let outs_a = if outs_a.is_empty() {
                    vec![Vec::new()]
                } else {
                    outs_a
                };
                let per_w: Vec<(&Variant, Ty)> = in_b
                    .iter()
                    .map(|w| {
                        let o = self.output(b, w);
                        (w, o)
                    })
                    .collect();
                let mut t = TyBuilder::default();
                for o in &outs_a {
                    for (w, outs_b) in &per_w {
                        let keep = minus(o, w);
                        for p in outs_b {
                            t.push(union(p, &keep));
                        }
                    }
                    if t.full() {
                        break;
                    }
                }
                t.list
            }
            IrKind::Par { branches, .. } if self.precise => {
                let mut best: Option<(usize, IrId)> = None;
                for b in branches {
                    let s = self.ins[*b].iter().filter_map(|w| accept_score(w, v)).max();
                    if let Some(s) = s {
                        if best.is_none_or(|(bs, _)| s > bs) {
                            best = Some((s, *b));
                        }
                    }
                }
                match best {
                    Some((_, b)) => self.output(b, v),
                    None => Ty::new(),
                }
            }
            IrKind::Par { branches, .. } => {
                let mut t = Ty::new();
                for b in branches.clone() {
                    for o in self.output(b, v) {
                        push_unique(&mut t, o);
                    }
                }
                t
            }
            IrKind::Star { exits, .. } => {
                let mut t = Ty::new();
                for p in exits {
                    push_unique(&mut t, p.labels.clone());
                }
                t
            }
            IrKind::Split { body, .. }
            | IrKind::Feedback { body, .. }
            | IrKind::At { body, .. } => self.output(*body, v),
        }
    }

    /// Outputs of the mappings whose input variant matches `v` best (§8).
    pub(crate) fn sig_output(sig: &Sig, v: &Variant) -> Ty {
        let mut best: Option<usize> = None;
        let mut scores = Vec::new();
        for m in &sig.maps {
            let s = m.inputs.iter().filter_map(|u| accept_score(u, v)).max();
            if let Some(s) = s {
                best = Some(best.map_or(s, |b: usize| b.max(s)));
            }
            scores.push(s);
        }
        let mut t = Ty::new();
        let Some(best) = best else { return t };
        for (m, s) in sig.maps.iter().zip(scores) {
            if s == Some(best) {
                if let Some(outs) = &m.outputs {
                    for o in outs {
                        push_unique(&mut t, o.clone());
                    }
                }
            }
        }
        t
    }

    /// All output variants of node `id` over its input variants.
    pub(crate) fn all_outputs(&mut self, id: IrId) -> Ty {
        let mut t = Ty::new();
        let ins = Rc::clone(&self.ins[id]);
        let empty = vec![Vec::new()];
        let ins: &Ty = if ins.is_empty() { &empty } else { &ins };
        for v in ins {
            for o in self.output(id, v) {
                push_unique(&mut t, o);
            }
        }
        t
    }
}

/// Shows a variant as `{a, <t>, <#b>}`: fields, then tags, then binding tags, each by
/// name.
pub(crate) fn show_variant(v: &[Label]) -> String {
    let mut ls: Vec<Label> = v.to_vec();
    ls.sort_by(|a, b| (a.kind(), a.name()).cmp(&(b.kind(), b.name())));
    let parts: Vec<String> = ls.iter().map(|l| l.to_string()).collect();
    format!("{{{}}}", parts.join(", "))
}

/// Shows a type as `{a} | {b}`.
pub(crate) fn show_type(t: &[Variant]) -> String {
    t.iter()
        .map(|v| show_variant(v))
        .collect::<Vec<_>>()
        .join(" | ")
}
