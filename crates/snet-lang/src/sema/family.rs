//! Routing types as variant families: spec §8's input types computed on lists of
//! [`Family`] (labels every variant has, labels each variant may have) instead of lists
//! of variants. These are the types routing uses (the `routes` of a lowered parallel
//! composition); [`super::infer`] keeps the variant lists for signatures and warnings.
//!
//! §8 is exponential in the length of a chain whose stages may or may not produce a
//! label: `b0 .. b1 .. ...` with `bi((xi) -> (xi+1) | (err))` has `2^(n-1)` input
//! variants, so a fourteen-stage pipeline with an error exit could not be a branch of
//! `|`. Those variants are one family, and routing needs only the best score over a
//! branch's variants, which a family gives directly
//! ([`snet_core::pattern::family_score`]).
//!
//! # Exactness
//!
//! A family list stands for the variants of its families; every rule gives exactly the
//! variants the §8 rule gives on the expanded lists (the test below compares them with
//! [`super::infer::Infer`] on random programs):
//!
//! * Union and difference of *independent* families are families, label by label:
//!   in `F ∪ G` a label is required if either requires it, optional if either may have
//!   it; in `W − O` it is required if `W` requires it and `O` cannot have it, optional
//!   if `W` may have it and `O` does not require it.
//! * In `in(A .. B) = {v ∪ (w − o)}` the variant `v ∈ in(A)`, the output
//!   `o ∈ out(A, v)` and `w ∈ in(B)` are independent unless `out(A, v)` depends on
//!   `v`, which it does only through the identity, synchrocells and declared signatures
//!   (best match) at `A`'s front ([`independent`]); a family that reaches such an `A`
//!   is expanded into its variants first. The same holds for `p ∈ out(B, w)` in
//!   `out(A .. B, v)`.
//! * After each rule, families `(R, O)` and `(R ∪ {l}, O)` merge into `(R, O ∪ {l})`,
//!   and a family whose variants another family has is dropped.

use super::infer::{leaf_input, leaf_output, minus, union, Query, Ty};
use super::ir::*;
use snet_core::net::{Family, Variant};
use std::collections::HashMap;
use std::rc::Rc;

/// A list of families.
pub(crate) type FTy = Vec<Family>;

/// Most optional labels of a family expanded into its variants (where the rules need
/// single variants).
const MAX_EXPAND_BITS: usize = 12;

/// The family input types of the branches of parallel compositions (and of what they
/// are computed from), and outputs on demand. Types are computed when first needed: the
/// rest of the program (nets with declared signatures, chains outside any choice) is
/// never visited.
pub(crate) struct FamInfer<'ir> {
    ir: &'ir Ir,
    /// `in(id)` once computed, and whether it hit a limit (or was computed from a type
    /// that did).
    ins: Vec<Option<(Rc<FTy>, bool)>>,
    /// `out(id, v)` is the same for every `v` ([`independent`]).
    indep: Vec<bool>,
    outs: Vec<HashMap<Variant, (Rc<FTy>, bool)>>,
    /// The query under way.
    q: Query,
}

/// Whether `out(id, v)` is the same list for every `v`, given the answer for the nodes
/// before `id` (children have smaller ids). Boxes, filters and stars give fixed
/// outputs; the identity and synchrocells pass `v` on; a declared signature picks
/// mappings by best match with `v`.
fn independent(ir: &Ir, indep: &[bool], id: IrId) -> bool {
    match &ir.nodes[id].kind {
        IrKind::Box(_) | IrKind::Filter(_) | IrKind::Star { .. } => true,
        IrKind::Identity | IrKind::Error | IrKind::Sync(_) => false,
        IrKind::Net(n) => ir.nets[*n].sig.is_none() && indep[ir.nets[*n].body],
        IrKind::Serial(a, _) => indep[*a],
        IrKind::Par { branches, .. } => branches.iter().all(|b| indep[*b]),
        IrKind::Split { body, .. } | IrKind::Feedback { body, .. } | IrKind::At { body, .. } => {
            indep[*body]
        }
    }
}

/// `F ∪ G` for independent families.
pub(crate) fn fam_union(f: &Family, g: &Family) -> Family {
    let labels = union(&f.labels, &g.labels);
    let optional = minus(&union(&f.optional, &g.optional), &labels);
    Family { labels, optional }
}

/// `W − O` for independent families.
pub(crate) fn fam_minus(w: &Family, o: &Family) -> Family {
    let labels = minus(&minus(&w.labels, &o.labels), &o.optional);
    let possible = union(&w.labels, &w.optional);
    let optional = minus(&minus(&possible, &o.labels), &labels);
    Family { labels, optional }
}

/// The variants of `f`, or `None` if it has more than [`MAX_EXPAND_BITS`] optional
/// labels.
pub(crate) fn expand(f: &Family) -> Option<Vec<Variant>> {
    if f.optional.len() > MAX_EXPAND_BITS {
        return None;
    }
    Some(
        (0u32..1 << f.optional.len())
            .map(|bits| {
                let picked = f
                    .optional
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| bits & (1 << i) != 0)
                    .map(|(_, l)| *l);
                let mut v: Variant = f.labels.iter().copied().chain(picked).collect();
                v.sort_unstable();
                v
            })
            .collect(),
    )
}

/// Whether every variant of `a` is a variant of `b`.
fn within(a: &Family, b: &Family) -> bool {
    let b_all = union(&b.labels, &b.optional);
    b.labels.iter().all(|l| a.labels.contains(l))
        && a.labels
            .iter()
            .chain(&a.optional)
            .all(|l| b_all.contains(l))
}

/// De-duplicates `list`, merges `(R, O)` with `(R ∪ {l}, O)` into `(R, O ∪ {l})` until
/// no pair merges, and drops families contained in another. Keeps the variant set.
pub(crate) fn compress(list: Vec<Family>) -> FTy {
    if list.len() <= 1 {
        return list;
    }
    let mut slots: Vec<Option<Family>> = Vec::with_capacity(list.len());
    let mut pos: HashMap<Family, usize> = HashMap::new();
    for f in list {
        if !pos.contains_key(&f) {
            pos.insert(f.clone(), slots.len());
            slots.push(Some(f));
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..slots.len() {
            let Some(f) = slots[i].clone() else { continue };
            for k in 0..f.labels.len() {
                let mut g = f.clone();
                let l = g.labels.remove(k);
                let Some(&j) = pos.get(&g) else { continue };
                pos.remove(&f);
                pos.remove(&g);
                slots[i] = None;
                slots[j] = None;
                g.optional = union(&g.optional, &[l]);
                let keep = i.min(j);
                if !pos.contains_key(&g) {
                    pos.insert(g.clone(), keep);
                    slots[keep] = Some(g);
                }
                changed = true;
                break;
            }
        }
    }
    let list: Vec<Family> = slots.into_iter().flatten().collect();
    if list.len() > 512 {
        return list;
    }
    let mut out: Vec<Family> = Vec::with_capacity(list.len());
    for (i, f) in list.iter().enumerate() {
        // Of two equal-variant families (impossible after de-duplication: the
        // representation is unique) keep the first; drop `f` if another contains it.
        let contained = list
            .iter()
            .enumerate()
            .any(|(j, g)| j != i && within(f, g) && !(within(g, f) && j > i));
        if !contained {
            out.push(f.clone());
        }
    }
    out
}

fn exact(t: Ty) -> FTy {
    t.into_iter().map(Family::exact).collect()
}

impl<'ir> FamInfer<'ir> {
    /// Computes the family input type of every branch of a parallel composition.
    pub(crate) fn new(ir: &'ir Ir) -> FamInfer<'ir> {
        let n = ir.nodes.len();
        let mut indep = Vec::with_capacity(n);
        for id in 0..n {
            let i = independent(ir, &indep, id);
            indep.push(i);
        }
        let mut inf = FamInfer {
            ir,
            ins: vec![None; n],
            indep,
            outs: vec![HashMap::new(); n],
            q: Query::new(),
        };
        for node in &ir.nodes {
            if let IrKind::Par { branches, .. } = &node.kind {
                for b in branches {
                    inf.ensure_in(*b);
                }
            }
        }
        inf
    }

    /// `in(id)` as families, for a branch of a parallel composition.
    /// (Computed in [`FamInfer::new`] for every branch; empty for other nodes.)
    pub(crate) fn input(&self, id: IrId) -> &[Family] {
        self.ins[id].as_ref().map_or(&[], |e| &e.0[..])
    }

    /// A parallel branch whose routing type hit a limit, if any.
    pub(crate) fn routing_overflow(&self) -> Option<IrId> {
        self.ir.nodes.iter().find_map(|n| match &n.kind {
            IrKind::Par { branches, .. } => branches
                .iter()
                .copied()
                .find(|b| self.ins[*b].as_ref().is_some_and(|e| e.1)),
            _ => None,
        })
    }

    /// Computes `in(id)` unless known, as a query of its own (fresh budget and taint).
    fn ensure_in(&mut self, id: IrId) {
        if self.ins[id].is_some() {
            return;
        }
        let ir = self.ir;
        let shared = match &ir.nodes[id].kind {
            IrKind::Net(k) if ir.nets[*k].sig.is_none() => Some(ir.nets[*k].body),
            IrKind::Feedback { body, .. } | IrKind::At { body, .. } => Some(*body),
            _ => None,
        };
        let entry = match shared {
            Some(b) => {
                crate::grow(|| self.ensure_in(b));
                self.known(b)
            }
            None => {
                let saved = std::mem::replace(&mut self.q, Query::new());
                let t = crate::grow(|| self.compute_in(id));
                let t = self.q.cap(t);
                let entry = (Rc::new(t), self.q.tainted);
                self.q = saved;
                entry
            }
        };
        self.ins[id] = Some(entry);
    }

    /// `in(id)` after [`FamInfer::ensure_in`] (an incomplete empty type if it was not
    /// computed, which cannot happen).
    fn known(&self, id: IrId) -> (Rc<FTy>, bool) {
        self.ins[id]
            .clone()
            .unwrap_or_else(|| (Rc::new(FTy::new()), true))
    }

    fn in_of(&mut self, id: IrId) -> Rc<FTy> {
        self.ensure_in(id);
        let (t, incomplete) = self.known(id);
        self.q.tainted |= incomplete;
        t
    }

    /// The variants to feed a node whose outputs depend on them: `f` itself (with its
    /// required labels as the representative) when they do not, else every variant.
    fn feed(&mut self, f: &Family, independent: bool) -> Vec<(Family, Variant)> {
        if independent || f.optional.is_empty() {
            return vec![(f.clone(), f.labels.clone())];
        }
        match expand(f) {
            Some(vs) if self.q.spend(vs.len() as u64) => vs
                .into_iter()
                .map(|v| (Family::exact(v.clone()), v))
                .collect(),
            _ => {
                self.q.tainted = true;
                Vec::new()
            }
        }
    }

    fn compute_in(&mut self, id: IrId) -> FTy {
        let ir = self.ir;
        if self.q.tainted || !self.q.spend(1) {
            return vec![Family::default()];
        }
        if let Some(t) = leaf_input(ir, id) {
            return exact(t);
        }
        match &ir.nodes[id].kind {
            IrKind::Net(n) => self.in_of(ir.nets[*n].body).to_vec(),
            IrKind::Serial(a, b) => {
                let (a, b) = (*a, *b);
                let in_b = self.in_of(b);
                let empty = vec![Family::default()];
                let in_b: &FTy = if in_b.is_empty() { &empty } else { &in_b };
                let in_a = self.in_of(a);
                let mut t = Vec::new();
                for f in in_a.iter() {
                    for (fv, v) in self.feed(f, self.indep[a]) {
                        let outs = self.output(a, &v);
                        if outs.is_empty() {
                            t.push(fv);
                            continue;
                        }
                        if !self.q.spend((outs.len() * in_b.len()) as u64) {
                            break;
                        }
                        for o in outs.iter() {
                            for w in in_b {
                                t.push(fam_union(&fv, &fam_minus(w, o)));
                            }
                        }
                    }
                    if self.q.tainted {
                        break;
                    }
                }
                compress(t)
            }
            IrKind::Par { branches, .. } => {
                let mut t = Vec::new();
                for b in branches {
                    t.extend(self.in_of(*b).iter().cloned());
                }
                compress(t)
            }
            IrKind::Star { body, exits, .. } => {
                let mut t = self.in_of(*body).to_vec();
                t.extend(exits.iter().map(|p| Family::exact(p.labels.clone())));
                compress(t)
            }
            IrKind::Split { body, index, .. } => {
                let inb = self.in_of(*body);
                if inb.is_empty() {
                    return vec![Family::exact(vec![*index])];
                }
                let t = inb
                    .iter()
                    .map(|f| Family {
                        labels: union(&f.labels, &[*index]),
                        optional: minus(&f.optional, &[*index]),
                    })
                    .collect();
                compress(t)
            }
            IrKind::Feedback { body, .. } | IrKind::At { body, .. } => self.in_of(*body).to_vec(),
            IrKind::Box(_)
            | IrKind::Identity
            | IrKind::Error
            | IrKind::Filter(_)
            | IrKind::Sync(_) => unreachable!("leaf_input covers it"),
        }
    }

    /// `out(id, v)` as families (§8 rule, never the routing-precise variant).
    fn output(&mut self, id: IrId, v: &Variant) -> Rc<FTy> {
        if let Some((t, incomplete)) = self.outs[id].get(v) {
            let t = Rc::clone(t);
            self.q.tainted |= *incomplete;
            self.q.spend(t.len() as u64);
            return t;
        }
        let outer = std::mem::replace(&mut self.q.tainted, false);
        let t = crate::grow(|| self.compute_out(id, v));
        let t = Rc::new(self.q.cap(t));
        let incomplete = self.q.tainted;
        self.outs[id].insert(v.clone(), (Rc::clone(&t), incomplete));
        self.q.tainted |= outer;
        t
    }

    fn compute_out(&mut self, id: IrId, v: &Variant) -> FTy {
        let ir = self.ir;
        if !self.q.spend(1) {
            return FTy::new();
        }
        if let Some(t) = leaf_output(ir, id, v) {
            return exact(t);
        }
        match &ir.nodes[id].kind {
            IrKind::Net(n) => self.output(ir.nets[*n].body, v).to_vec(),
            IrKind::Serial(a, b) => {
                let (a, b) = (*a, *b);
                let outs_a = self.output(a, v);
                let in_b = self.in_of(b);
                if in_b.is_empty() {
                    return outs_a.to_vec();
                }
                if self.q.tainted {
                    return FTy::new();
                }
                let empty = vec![Family::default()];
                let outs_a: &FTy = if outs_a.is_empty() { &empty } else { &outs_a };
                let mut t = Vec::new();
                for o in outs_a {
                    for wf in in_b.iter() {
                        for (w, wv) in self.feed(wf, self.indep[b]) {
                            let outs_b = self.output(b, &wv);
                            if !self.q.spend(outs_b.len() as u64) {
                                break;
                            }
                            let keep = fam_minus(o, &w);
                            for p in outs_b.iter() {
                                t.push(fam_union(p, &keep));
                            }
                        }
                    }
                    if self.q.tainted {
                        break;
                    }
                }
                compress(t)
            }
            IrKind::Par { branches, .. } => {
                let mut t = Vec::new();
                for b in branches.clone() {
                    t.extend(self.output(b, v).iter().cloned());
                }
                compress(t)
            }
            IrKind::Split { body, .. }
            | IrKind::Feedback { body, .. }
            | IrKind::At { body, .. } => self.output(*body, v).to_vec(),
            IrKind::Box(_)
            | IrKind::Identity
            | IrKind::Error
            | IrKind::Filter(_)
            | IrKind::Sync(_)
            | IrKind::Star { .. } => unreachable!("leaf_output covers it"),
        }
    }
}

/// The variants of a family list, `None` past `limit`.
#[cfg(test)]
pub(crate) fn variants(t: &[Family], limit: usize) -> Option<std::collections::HashSet<Variant>> {
    let mut set = std::collections::HashSet::new();
    for f in t {
        for v in expand(f)? {
            set.insert(v);
            if set.len() > limit {
                return None;
            }
        }
    }
    Some(set)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::infer::Infer;
    use snet_core::Label;
    use std::collections::HashSet;

    fn fam(labels: &[&str], optional: &[&str]) -> Family {
        let v = |ls: &[&str]| snet_core::net::variant(ls.iter().map(|l| Label::field(l)).collect());
        Family {
            labels: v(labels),
            optional: v(optional),
        }
    }

    #[test]
    fn union_and_difference_are_exact_on_independent_families() {
        // Check every label state pair against the expanded sets.
        let ws = [
            fam(&["a"], &["b"]),
            fam(&["a", "c"], &[]),
            fam(&[], &["a", "b", "c"]),
        ];
        let os = [fam(&["b"], &["c"]), fam(&[], &["a"]), fam(&["a", "b"], &[])];
        for w in &ws {
            for o in &os {
                let mut want_minus = HashSet::new();
                let mut want_union = HashSet::new();
                for wv in expand(w).unwrap() {
                    for ov in expand(o).unwrap() {
                        want_minus.insert(minus(&wv, &ov));
                        want_union.insert(union(&wv, &ov));
                    }
                }
                assert_eq!(
                    variants(&[fam_minus(w, o)], 64).unwrap(),
                    want_minus,
                    "{w} - {o}"
                );
                assert_eq!(
                    variants(&[fam_union(w, o)], 64).unwrap(),
                    want_union,
                    "{w} + {o}"
                );
            }
        }
    }

    #[test]
    fn compress_keeps_the_variant_set_and_merges_a_power_set() {
        let list: Vec<Family> = expand(&fam(&["x"], &["a", "b", "c", "d"]))
            .unwrap()
            .into_iter()
            .map(Family::exact)
            .collect();
        let c = compress(list.clone());
        assert_eq!(c, vec![fam(&["x"], &["a", "b", "c", "d"])]);
        let odd = vec![
            Family::exact(vec![Label::field("a")]),
            fam(&[], &["a", "b"]),
            Family::exact(vec![Label::field("c")]),
        ];
        let c = compress(odd.clone());
        assert_eq!(variants(&c, 64), variants(&odd, 64));
        assert_eq!(c.len(), 2, "{c:?}");
    }

    /// Deterministic xorshift.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    const LABELS: [&str; 7] = ["a", "b", "c", "d", "<t>", "<u>", "<#k>"];

    fn labels(r: &mut Rng, min: usize) -> String {
        let n = min + r.next(3);
        let mut ls: Vec<&str> = (0..n).map(|_| LABELS[r.next(LABELS.len())]).collect();
        ls.sort_unstable();
        ls.dedup();
        ls.join(", ")
    }

    fn expr(r: &mut Rng, depth: usize, boxes: usize) -> String {
        let leaf = depth == 0 || r.next(4) == 0;
        if leaf {
            return match r.next(8) {
                0 => "[]".to_owned(),
                1 => format!("[{{{}}} -> {{{}}}]", labels(r, 1), labels(r, 0)),
                2 => format!("[| {{{}}}, {{{}}} |]", labels(r, 1), labels(r, 1)),
                _ => format!("b{}", r.next(boxes)),
            };
        }
        let a = expr(r, depth - 1, boxes);
        match r.next(10) {
            0..=2 => format!("({a} .. {})", expr(r, depth - 1, boxes)),
            3 | 4 => format!("({a} | {})", expr(r, depth - 1, boxes)),
            5 => format!("({a} || {})", expr(r, depth - 1, boxes)),
            6 => format!("({a} ** {{{}}})", labels(r, 1)),
            7 => format!("({a} !! <t>)"),
            8 => format!("({a} \\ {{{}}})", labels(r, 1)),
            _ => format!("({a} @ 1)"),
        }
    }

    /// The family rules give the variant sets of the list rules on random programs
    /// (every node whose variant list is complete).
    #[test]
    fn families_expand_to_the_variant_lists_of_random_programs() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let mut compared = 0;
        let mut with_optional = 0;
        for _ in 0..1500 {
            let nb = 4;
            let mut src = String::from("net t { ");
            for i in 0..nb {
                let outs: Vec<String> = (0..1 + r.next(3))
                    .map(|_| format!("({})", labels(&mut r, 1)))
                    .collect();
                src.push_str(&format!(
                    "box b{i}(({}) -> {});",
                    labels(&mut r, 1),
                    outs.join(" | ")
                ));
            }
            let e = expr(&mut r, 4, nb);
            src.push_str(&format!(" }} connect {e};"));
            let (prog, pd) = crate::parser::parse(&src);
            let (ir, rd) = crate::sema::resolve(&prog);
            if pd.iter().chain(&rd).any(|d| d.is_error()) {
                continue;
            }
            let inf = Infer::new(&ir);
            let mut fi = FamInfer::new(&ir);
            for id in 0..ir.nodes.len() {
                fi.ensure_in(id);
                if inf.input_incomplete(id) || fi.ins[id].as_ref().unwrap().1 {
                    continue;
                }
                let want: HashSet<Variant> = inf.input(id).iter().cloned().collect();
                let got = variants(fi.input(id), 1 << 16).expect("small");
                assert_eq!(got, want, "node {id} of {src}\nfamilies {:?}", fi.input(id));
                compared += 1;
                with_optional += fi.input(id).iter().any(|f| !f.optional.is_empty()) as usize;
            }
        }
        assert!(compared > 6000, "{compared}");
        assert!(with_optional > 1000, "{with_optional}");
    }
}
