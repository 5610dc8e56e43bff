//! Routing-type inference (spec §8): `in(E)` for every node (bottom-up, in id order)
//! and `out(E, v)` on demand, memoised.
//!
//! Type lists are capped at [`MAX_VARIANTS`] variants and every query (the `in` of one
//! node, one warning, the printed signature) at [`WORK_BUDGET`] steps. A type that hits
//! either limit is *incomplete*, and so is every type computed from it. Only the input
//! types of parallel branches decide routing: an incomplete one is an error (the
//! program gets an error instead of a compile that never ends); anywhere else (the
//! type of a long chain as a whole, warnings, the signature `snet check` prints) the
//! limit only costs information. The §8 rules are exponential in the length of a
//! chain of choices such as `(f | []) .. (g | []) .. ...`, whose routing needs only
//! the small types of its branches.

use super::ir::*;
use snet_core::net::Variant;
use snet_core::{Label, LabelKind};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Most variants one inferred type may have.
pub(crate) const MAX_VARIANTS: usize = 4096;

/// Most steps (variants built or copied) one query may take.
pub(crate) const WORK_BUDGET: u64 = 1 << 21;

/// The limits of one query (the `in` of one node, one warning, the printed signature):
/// the steps left of its budget and whether it used or produced an incomplete type.
#[derive(Debug)]
pub(crate) struct Query {
    /// Set when the computation under way used or produced an incomplete type.
    pub(crate) tainted: bool,
    /// Steps left.
    pub(crate) budget: u64,
}

impl Query {
    /// A fresh query: the whole budget, no taint.
    pub(crate) fn new() -> Query {
        Query {
            tainted: false,
            budget: WORK_BUDGET,
        }
    }

    /// Takes `n` steps of the budget; false (and the query tainted) once it is spent.
    pub(crate) fn spend(&mut self, n: u64) -> bool {
        if self.budget < n {
            self.budget = 0;
            self.tainted = true;
            return false;
        }
        self.budget -= n;
        true
    }

    /// Truncates a list to [`MAX_VARIANTS`] entries, tainting the query if it was longer.
    pub(crate) fn cap<T>(&mut self, mut t: Vec<T>) -> Vec<T> {
        if t.len() > MAX_VARIANTS {
            t.truncate(MAX_VARIANTS);
            self.tainted = true;
        }
        t
    }
}

/// A list of variants (a type), de-duplicated, first occurrence kept.
pub(crate) type Ty = Vec<Variant>;

pub(crate) struct Infer<'ir> {
    ir: &'ir Ir,
    ins: Vec<Rc<Ty>>,
    /// `ins[id]` is incomplete (it hit a limit, or was computed from a type that did).
    in_incomplete: Vec<bool>,
    /// Memo of `out(E, v)`, per node, with its incompleteness.
    outs: Vec<HashMap<Variant, (Ty, bool)>>,
    outs_precise: Vec<HashMap<Variant, (Ty, bool)>>,
    /// The query under way.
    q: Query,
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
            in_incomplete: Vec::with_capacity(ir.nodes.len()),
            outs: vec![HashMap::new(); ir.nodes.len()],
            outs_precise: vec![HashMap::new(); ir.nodes.len()],
            q: Query::new(),
            precise: false,
        };
        for id in 0..ir.nodes.len() {
            // Nodes whose input type is their operand's share it.
            let shared = match &ir.nodes[id].kind {
                IrKind::Net(n) if ir.nets[*n].sig.is_none() => Some(ir.nets[*n].body),
                IrKind::Feedback { body, .. } | IrKind::At { body, .. } => Some(*body),
                _ => None,
            };
            let (t, incomplete) = match shared {
                Some(b) => (Rc::clone(&inf.ins[b]), inf.in_incomplete[b]),
                None => {
                    inf.begin();
                    let t = inf.compute_in(id);
                    let t = inf.q.cap(t);
                    (Rc::new(t), inf.q.tainted)
                }
            };
            inf.ins.push(t);
            inf.in_incomplete.push(incomplete);
        }
        inf.begin();
        inf
    }

    /// Starts a new query: a fresh work budget and no taint.
    pub(crate) fn begin(&mut self) {
        self.q = Query::new();
    }

    /// Whether the current query (since [`Infer::begin`]) used an incomplete type.
    pub(crate) fn tainted(&self) -> bool {
        self.q.tainted
    }

    /// Whether `in(id)` is incomplete.
    pub(crate) fn input_incomplete(&self, id: IrId) -> bool {
        self.in_incomplete[id]
    }

    /// `in(id)` for use in a computation (taints it if incomplete).
    fn in_of(&mut self, id: IrId) -> Rc<Ty> {
        self.q.tainted |= self.in_incomplete[id];
        Rc::clone(&self.ins[id])
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
        if self.q.tainted || !self.q.spend(1) {
            // The result is incomplete anyway; keep the rest cheap.
            return vec![Vec::new()];
        }
        if let Some(t) = leaf_input(ir, id) {
            return t;
        }
        match &ir.nodes[id].kind {
            IrKind::Net(n) => self.in_of(ir.nets[*n].body).to_vec(),
            IrKind::Serial(a, b) => {
                let (a, b) = (*a, *b);
                let mut t = TyBuilder::default();
                let in_b = self.in_of(b);
                let empty = vec![Vec::new()];
                let in_b: &Ty = if in_b.is_empty() { &empty } else { &in_b };
                let in_a = self.in_of(a);
                for v in in_a.iter() {
                    let outs = self.output(a, v);
                    if outs.is_empty() {
                        t.push(v.clone());
                        continue;
                    }
                    for o in &outs {
                        if !self.q.spend(in_b.len() as u64) {
                            break;
                        }
                        for w in in_b {
                            t.push(union(v, &minus(w, o)));
                        }
                    }
                    if t.full() || self.q.tainted {
                        break;
                    }
                }
                t.list
            }
            IrKind::Par { branches, .. } => {
                let mut t = TyBuilder::default();
                for b in branches {
                    for v in self.in_of(*b).iter() {
                        t.push(v.clone());
                    }
                }
                t.list
            }
            IrKind::Star { body, exits, .. } => {
                let mut t = self.in_of(*body).to_vec();
                for p in exits {
                    push_unique(&mut t, p.labels.clone());
                }
                t
            }
            IrKind::Split { body, index, .. } => {
                let inb = self.in_of(*body);
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
            IrKind::Feedback { body, .. } | IrKind::At { body, .. } => self.in_of(*body).to_vec(),
            IrKind::Box(_)
            | IrKind::Identity
            | IrKind::Error
            | IrKind::Filter(_)
            | IrKind::Sync(_) => unreachable!("leaf_input covers it"),
        }
    }

    /// `out(E, v)`: the explicitly produced variants for input variant `v`.
    /// Taints the current query if the result is incomplete.
    pub(crate) fn output(&mut self, id: IrId, v: &Variant) -> Ty {
        if let Some((t, incomplete)) = self.outs[id].get(v) {
            let (t, incomplete) = (t.clone(), *incomplete);
            self.q.tainted |= incomplete;
            self.q.spend(t.len() as u64);
            return t;
        }
        let outer = std::mem::replace(&mut self.q.tainted, false);
        let t = crate::grow(|| self.compute_out(id, v));
        let t = self.q.cap(t);
        let incomplete = self.q.tainted;
        self.outs[id].insert(v.clone(), (t.clone(), incomplete));
        self.q.tainted |= outer;
        t
    }

    fn compute_out(&mut self, id: IrId, v: &Variant) -> Ty {
        let ir = self.ir;
        if !self.q.spend(1) {
            return Ty::new();
        }
        if let Some(t) = leaf_output(ir, id, v) {
            return t;
        }
        match &ir.nodes[id].kind {
            IrKind::Net(n) => self.output(ir.nets[*n].body, v),
            IrKind::Serial(a, b) => {
                let (a, b) = (*a, *b);
                let outs_a = self.output(a, v);
                let in_b = self.in_of(b);
                if in_b.is_empty() {
                    return outs_a;
                }
                if self.q.tainted {
                    return Ty::new();
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
                        if !self.q.spend(outs_b.len() as u64) {
                            break;
                        }
                        let keep = minus(o, w);
                        for p in outs_b {
                            t.push(union(p, &keep));
                        }
                    }
                    if t.full() || self.q.tainted {
                        break;
                    }
                }
                t.list
            }
            IrKind::Par { branches, .. } if self.precise => {
                let mut best: Option<(usize, IrId)> = None;
                for b in branches {
                    let s = self
                        .in_of(*b)
                        .iter()
                        .filter_map(|w| accept_score(w, v))
                        .max();
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
            IrKind::Split { body, .. }
            | IrKind::Feedback { body, .. }
            | IrKind::At { body, .. } => self.output(*body, v),
            IrKind::Box(_)
            | IrKind::Identity
            | IrKind::Error
            | IrKind::Filter(_)
            | IrKind::Sync(_)
            | IrKind::Star { .. } => unreachable!("leaf_output covers it"),
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
        let ins = self.in_of(id);
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

/// `in(E)` of the nodes whose input type is given, not computed from other nodes':
/// boxes, nets with a declared signature, the identity, filters and synchrocells
/// (spec §8's first table). `None` for every other node.
pub(crate) fn leaf_input(ir: &Ir, id: IrId) -> Option<Ty> {
    Some(match &ir.nodes[id].kind {
        IrKind::Box(b) => match &ir.boxes[*b].input {
            Some(ls) => vec![variant_of(ls)],
            None => Vec::new(),
        },
        IrKind::Net(n) => Infer::sig_inputs(ir.nets[*n].sig.as_ref()?),
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
        _ => return None,
    })
}

/// `out(E, v)` of the nodes whose outputs are given, not computed from other nodes':
/// boxes, nets with a declared signature, the identity, filters, synchrocells and
/// serial replication (spec §8's second table). `None` for every other node.
pub(crate) fn leaf_output(ir: &Ir, id: IrId, v: &Variant) -> Option<Ty> {
    Some(match &ir.nodes[id].kind {
        IrKind::Box(b) => {
            let mut t = Ty::new();
            for o in &ir.boxes[*b].outputs {
                push_unique(&mut t, variant_of(o));
            }
            t
        }
        IrKind::Net(n) => Infer::sig_output(ir.nets[*n].sig.as_ref()?, v),
        IrKind::Identity | IrKind::Error => vec![v.clone()],
        IrKind::Filter(f) => {
            // An empty `{}` contributes the empty variant: §8's worked check
            // `[{<Decipher>} -> {}] .. KeyInvert` needs it (the reference's signature
            // dumps left it out).
            let mut t = Ty::new();
            for v in filter_outputs(f) {
                push_unique(&mut t, v);
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
        IrKind::Star { exits, .. } => {
            let mut t = Ty::new();
            for p in exits {
                push_unique(&mut t, p.labels.clone());
            }
            t
        }
        _ => return None,
    })
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

/// Shows a family list like [`show_type`], each optional label with a `?`:
/// `{a, b?} | {c}` stands for `{a} | {a, b} | {c}`.
pub(crate) fn show_families(t: &[snet_core::net::Family]) -> String {
    t.iter()
        .map(|f| {
            let mut ls: Vec<(Label, bool)> = f
                .labels
                .iter()
                .map(|l| (*l, false))
                .chain(f.optional.iter().map(|l| (*l, true)))
                .collect();
            ls.sort_by(|a, b| (a.0.kind(), a.0.name()).cmp(&(b.0.kind(), b.0.name())));
            let parts: Vec<String> = ls
                .iter()
                .map(|(l, opt)| if *opt { format!("{l}?") } else { l.to_string() })
                .collect();
            format!("{{{}}}", parts.join(", "))
        })
        .collect::<Vec<_>>()
        .join(" | ")
}
