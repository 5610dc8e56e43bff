//! Forward reachability (W0106): the record types that the records entering the entry
//! network have at every node, following routing (§7.8) and flow inheritance (§7.2),
//! and the parallel branches that none of them reaches.
//!
//! The §8 input type of a network lists, besides what its first element accepts, the
//! variants that bring labels for later elements by flow inheritance (`a .. b` with `b`
//! wanting a label `a` does not produce). This pass starts from the records the network
//! is meant for: the declared input type, or else the *head* type (what the first
//! element of each chain accepts). A parallel branch that none of them reaches is
//! reported when the network declares its signature, or when the records that reach the
//! choice carry a label similar to one the branch wants (a tag `<k>` where it wants a
//! field `k`, `txt` for `text`): the slip that sends records down an identity branch
//! into a star for ever. A box in a serial position that none of the records reaching
//! it fits is reported for that slip only.
//!
//! Every variant set the pass builds is a superset of the types real records can have
//! (guards are taken as either outcome; a synchrocell forwards and merges), so a branch
//! it finds unreached is unreached for those inputs. It gives up, silently, past a
//! budget of variants or when a routing type is incomplete.

use super::infer::{accept_score, push_unique, show_type, union, Infer, Ty};
use super::ir::*;
use crate::diag::{closest, Diagnostic};
use snet_core::net::{GuardedPattern, Variant};
use snet_core::{Label, LabelKind};

/// Most variants one node may see before the pass gives up.
const MAX_SET: usize = 256;
/// Most variant steps the whole pass may take.
const MAX_STEPS: usize = 1 << 18;

struct Flow<'a, 'ir> {
    ir: &'ir Ir,
    inf: &'a Infer<'ir>,
    /// The variants that arrived at each node (before the node accepted them).
    arrive: Vec<Ty>,
    /// Per serial replication: whether a record that came out of its operand matched
    /// an exit pattern (so the replication ends for some records).
    exit_reached: Vec<bool>,
    steps: usize,
    gave_up: bool,
}

/// Whether some record of type `x` matches pattern `p` (its labels), and whether every
/// one does (no guard).
fn pattern_match(p: &GuardedPattern, x: &[Label]) -> (bool, bool) {
    let m = p.labels.iter().all(|l| x.contains(l));
    (m, m && p.guard.is_none())
}

/// `(some, all)` over a list of patterns.
fn any_match(ps: &[GuardedPattern], x: &[Label]) -> (bool, bool) {
    let mut r = (false, false);
    for p in ps {
        let (m, sure) = pattern_match(p, x);
        r.0 |= m;
        r.1 |= sure;
    }
    r
}

/// `x` without `drop` and binding tags: what flow inheritance attaches.
fn inherited(x: &[Label], drop: &[Label]) -> Variant {
    x.iter()
        .filter(|l| l.kind() != LabelKind::BTag && !drop.contains(l))
        .copied()
        .collect()
}

impl<'a, 'ir> Flow<'a, 'ir> {
    fn new(ir: &'ir Ir, inf: &'a Infer<'ir>) -> Self {
        Flow {
            ir,
            inf,
            arrive: vec![Ty::new(); ir.nodes.len()],
            exit_reached: vec![false; ir.nodes.len()],
            steps: 0,
            gave_up: false,
        }
    }

    fn spend(&mut self, n: usize) -> bool {
        self.steps += n;
        if self.steps > MAX_STEPS {
            self.gave_up = true;
        }
        !self.gave_up
    }

    fn push(&mut self, t: &mut Ty, v: Variant) {
        push_unique(t, v);
        if t.len() > MAX_SET {
            self.gave_up = true;
        }
    }

    /// The variants leaving node `id` for records of types `ins`.
    fn flow(&mut self, id: IrId, ins: &[Variant]) -> Ty {
        if ins.is_empty() || !self.spend(ins.len()) {
            return Ty::new();
        }
        let mut seen = std::mem::take(&mut self.arrive[id]);
        for x in ins {
            self.push(&mut seen, x.clone());
        }
        self.arrive[id] = seen;
        crate::grow(|| self.flow_in(id, ins))
    }

    fn flow_in(&mut self, id: IrId, ins: &[Variant]) -> Ty {
        let ir = self.ir;
        let mut out = Ty::new();
        match &ir.nodes[id].kind {
            IrKind::Box(b) => {
                let bx = &ir.boxes[*b];
                let outs: Vec<Variant> = bx.outputs.iter().map(|o| variant_of(o)).collect();
                match &bx.input {
                    // An initialiser: `ins` is the creation of its branch.
                    None => outs,
                    Some(i) => {
                        let i = variant_of(i);
                        let consumed: Variant = i
                            .iter()
                            .filter(|l| !bx.passthrough.contains(l))
                            .copied()
                            .collect();
                        for x in ins {
                            // A box in a serial position takes any record that has its
                            // input labels (extra binding tags are not an obstacle).
                            if !i.iter().all(|l| x.contains(l)) {
                                continue;
                            }
                            let rest = inherited(x, &consumed);
                            for o in &outs {
                                self.push(&mut out, union(o, &rest));
                            }
                        }
                        out
                    }
                }
            }
            IrKind::Net(n) => self.flow(ir.nets[*n].body, ins),
            IrKind::Identity | IrKind::Error => ins.to_vec(),
            IrKind::Filter(f) => {
                let outs: Vec<Variant> = filter_outputs(f).collect();
                for x in ins {
                    if !f.pattern.iter().all(|l| x.contains(l)) {
                        continue;
                    }
                    let rest = inherited(x, &f.pattern);
                    for o in &outs {
                        self.push(&mut out, union(o, &rest));
                    }
                }
                out
            }
            IrKind::Sync(ps) => {
                // Forwarded as it is (no pattern, a failing guard, a fired cell), or
                // merged: the record of the first pattern with the labels of the others.
                let mut all = Vec::new();
                for p in ps {
                    all = union(&all, &p.labels);
                }
                for x in ins {
                    self.push(&mut out, x.clone());
                    if ps.first().is_some_and(|p| pattern_match(p, x).0) {
                        self.push(&mut out, union(x, &all));
                    }
                }
                out
            }
            IrKind::Serial(a, b) => {
                let mid = self.flow(*a, ins);
                self.flow(*b, &mid)
            }
            IrKind::Par { branches, .. } => {
                let mut per: Vec<Ty> = vec![Ty::new(); branches.len()];
                for x in ins {
                    let mut best: Option<(usize, usize)> = None;
                    for (i, b) in branches.iter().enumerate() {
                        if self.inf.input_incomplete(*b) {
                            self.gave_up = true;
                            return out;
                        }
                        let s = self
                            .inf
                            .input(*b)
                            .iter()
                            .filter_map(|w| accept_score(w, x))
                            .max();
                        if let Some(s) = s {
                            if best.is_none_or(|(_, bs)| s > bs) {
                                best = Some((i, s));
                            }
                        }
                    }
                    if let Some((i, _)) = best {
                        per[i].push(x.clone());
                    }
                }
                for (i, b) in branches.iter().enumerate() {
                    // A branch without input type starts with an initialiser: it runs
                    // when the composition is created.
                    let ins_b = if self.inf.input(*b).is_empty() {
                        vec![Variant::new()]
                    } else {
                        std::mem::take(&mut per[i])
                    };
                    for o in self.flow(*b, &ins_b) {
                        self.push(&mut out, o);
                    }
                }
                out
            }
            IrKind::Star { body, exits, .. } => {
                let mut seen = Ty::new();
                let mut todo = ins.to_vec();
                // The first round is the records entering; later ones left a stage.
                let mut from_body = false;
                while !todo.is_empty() && !self.gave_up {
                    let mut into = Ty::new();
                    for x in todo {
                        let (m, sure) = any_match(exits, &x);
                        // (Before the check below: a stage may give back a type seen.)
                        self.exit_reached[id] |= m && from_body;
                        if seen.contains(&x) {
                            continue;
                        }
                        self.push(&mut seen, x.clone());
                        if m {
                            self.push(&mut out, x.clone());
                        }
                        if !sure {
                            into.push(x);
                        }
                    }
                    todo = self.flow(*body, &into);
                    from_body = true;
                }
                out
            }
            IrKind::Split { body, index, .. } => {
                let with: Ty = ins.iter().filter(|x| x.contains(index)).cloned().collect();
                self.flow(*body, &with)
            }
            IrKind::Feedback { body, back } => {
                let mut seen = Ty::new();
                let mut todo = ins.to_vec();
                while !todo.is_empty() && !self.gave_up {
                    let mut again = Ty::new();
                    for o in self.flow(*body, &todo) {
                        let (m, sure) = any_match(back, &o);
                        if !sure {
                            self.push(&mut out, o.clone());
                        }
                        if m && !seen.contains(&o) {
                            self.push(&mut seen, o.clone());
                            again.push(o);
                        }
                    }
                    todo = again;
                }
                out
            }
            IrKind::At { body, .. } => self.flow(*body, ins),
        }
    }
}

/// Records of `start` followed through `body`; `None` when there are none or the flow
/// gave up (too many variants).
fn flow_from<'a, 'ir>(
    ir: &'ir Ir,
    inf: &'a Infer<'ir>,
    body: IrId,
    start: &[Variant],
) -> Option<Flow<'a, 'ir>> {
    if start.is_empty() {
        return None;
    }
    let mut f = Flow::new(ir, inf);
    f.flow(body, start);
    (!f.gave_up).then_some(f)
}

/// The records a network is meant for: the declared input type, or else its *head*
/// type: what the first element of each serial chain accepts (a parallel composition's
/// is its branches', a replication's its operand's with the exit patterns or the index
/// tag), without the labels the §8 type adds for later elements.
fn start_variants(ir: &Ir, inf: &Infer<'_>, entry: usize) -> Ty {
    let n = &ir.nets[entry];
    match &n.sig {
        Some(sig) => Infer::sig_inputs(sig),
        None => head(ir, inf, n.body),
    }
}

fn head(ir: &Ir, inf: &Infer<'_>, id: IrId) -> Ty {
    crate::grow(|| head_in(ir, inf, id))
}

fn head_in(ir: &Ir, inf: &Infer<'_>, id: IrId) -> Ty {
    let mut t = Ty::new();
    match &ir.nodes[id].kind {
        IrKind::Net(n) if ir.nets[*n].sig.is_none() => head(ir, inf, ir.nets[*n].body),
        IrKind::Serial(a, _) => head(ir, inf, *a),
        IrKind::Par { branches, .. } => {
            for b in branches {
                for v in head(ir, inf, *b) {
                    push_unique(&mut t, v);
                }
            }
            t
        }
        IrKind::Star { body, exits, .. } => {
            t = head(ir, inf, *body);
            for p in exits {
                push_unique(&mut t, p.labels.clone());
            }
            t
        }
        IrKind::Split { body, index, .. } => {
            for v in head(ir, inf, *body) {
                push_unique(&mut t, union(&v, &[*index]));
            }
            t
        }
        IrKind::Feedback { body, .. } | IrKind::At { body, .. } => head(ir, inf, *body),
        _ => inf.input(id).clone(),
    }
}

/// The nodes of the entry network (nets expanded), parents before children.
fn nodes_of(ir: &Ir, root: IrId) -> Vec<IrId> {
    let mut out = Vec::new();
    let mut seen = vec![false; ir.nodes.len()];
    let mut todo = vec![root];
    while let Some(id) = todo.pop() {
        if std::mem::replace(&mut seen[id], true) {
            continue;
        }
        out.push(id);
        match &ir.nodes[id].kind {
            IrKind::Net(n) => todo.push(ir.nets[*n].body),
            IrKind::Serial(a, b) => todo.extend([*b, *a]),
            IrKind::Par { branches, .. } => todo.extend(branches.iter().rev()),
            IrKind::Star { body, .. }
            | IrKind::Split { body, .. }
            | IrKind::Feedback { body, .. }
            | IrKind::At { body, .. } => todo.push(*body),
            _ => {}
        }
    }
    out
}

fn kind_name(l: Label) -> &'static str {
    match l.kind() {
        LabelKind::Field => "field",
        LabelKind::Tag => "tag",
        LabelKind::BTag => "binding tag",
    }
}

/// A label of `have` similar to `want`: the same name as another kind, or a close
/// spelling of the same kind.
fn similar(want: Label, have: &[Label]) -> Option<Label> {
    if let Some(l) = have.iter().find(|l| l.name() == want.name() && **l != want) {
        return Some(*l);
    }
    let same: Vec<&str> = have
        .iter()
        .filter(|l| l.kind() == want.kind())
        .map(|l| l.name())
        .collect();
    let c = closest(want.name(), same.into_iter())?;
    have.iter()
        .find(|l| l.kind() == want.kind() && l.name() == c)
        .copied()
}

/// Reports the parallel branches of the entry network that no record it is meant for
/// reaches (W0106).
pub(crate) fn check(ir: &Ir, inf: &Infer<'_>, entry: usize, diags: &mut Vec<Diagnostic>) {
    let body = ir.nets[entry].body;
    if inf.input_incomplete(body) {
        return;
    }
    let start = start_variants(ir, inf, entry);
    let Some(f) = flow_from(ir, inf, body, &start) else {
        return;
    };
    let declared = ir.nets[entry].sig.is_some();
    let nodes = nodes_of(ir, body);
    for &id in &nodes {
        let IrKind::Par { branches, det } = &ir.nodes[id].kind else {
            continue;
        };
        let arrived = &f.arrive[id];
        if arrived.is_empty() {
            continue;
        }
        for (i, b) in branches.iter().enumerate() {
            let wants = inf.input(*b);
            if wants.is_empty() || !f.arrive[*b].is_empty() {
                continue;
            }
            // The label the branch wants that the arriving records lack, with a similar
            // one they have.
            let miss = near_miss_under(declared, arrived, wants);
            if miss.is_none() && !declared {
                continue;
            }
            let what = if *det { "||" } else { "|" };
            let mut d = Diagnostic::warning(
                "W0106",
                format!(
                    "branch {} of `{what}` ({}) receives no record",
                    i + 1,
                    ir.describe(*b)
                ),
            )
            .primary(ir.nodes[*b].span, format!("wants {}", show_type(wants)))
            .note(format!(
                "the records reaching the `{what}` are {}{}",
                show_type(arrived),
                if declared {
                    " (from the declared input type)"
                } else {
                    ""
                }
            ));
            match miss {
                Some((want, got)) => d = hint(ir, &nodes, d, want, got),
                None => {
                    d = d.help(format!(
                        "records of the declared input type {} never take this branch",
                        show_type(&start)
                    ));
                }
            }
            diags.push(d);
        }
    }
    // A box in a serial position that none of the arriving records fits (it would stop
    // the run with "record lacks input label"): reported for the near-miss slip only,
    // W0101 covers labels consumed upstream.
    for &id in &nodes {
        let IrKind::Box(b) = &ir.nodes[id].kind else {
            continue;
        };
        let Some(input) = &ir.boxes[*b].input else {
            continue;
        };
        let arrived = &f.arrive[id];
        let wants = vec![variant_of(input)];
        if arrived.is_empty()
            || arrived
                .iter()
                .any(|x| wants[0].iter().all(|l| x.contains(l)))
        {
            continue;
        }
        let span = ir.nodes[id].span;
        let covered = diags
            .iter()
            .any(|d| d.code == "W0101" && d.span() == Some(span));
        let miss = near_miss_under(declared, arrived, &wants);
        let Some((want, got)) = miss else {
            continue;
        };
        if covered {
            continue;
        }
        let d = Diagnostic::warning(
            "W0106",
            format!(
                "{} accepts none of the records that reach it",
                ir.describe(id)
            ),
        )
        .primary(span, format!("wants {}", show_type(&wants)))
        .note(format!(
            "the records reaching it are {}",
            show_type(arrived)
        ));
        diags.push(hint(ir, &nodes, d, want, got));
    }
}

/// A label that `wants` has and none of `arrived` has, with a similar label they have
/// (same name as another kind, or a close spelling) that the wanting side does not want
/// itself.
fn near_miss(arrived: &Ty, wants: &Ty) -> Option<(Label, Label)> {
    // Labels the branch wants itself are no alternative to the one it lacks.
    let mut have: Vec<Label> = Vec::new();
    for l in arrived.iter().flatten() {
        if !have.contains(l) && !wants.iter().any(|w| w.contains(l)) {
            have.push(*l);
        }
    }
    wants.iter().flatten().find_map(|l| {
        let missing = l.kind() != LabelKind::BTag && !arrived.iter().any(|x| x.contains(l));
        if missing {
            similar(*l, &have).map(|s| (*l, s))
        } else {
            None
        }
    })
}

/// The near miss W0106 reports: [`near_miss`] under a declared input type,
/// [`real_near_miss`] under an inferred one.
fn near_miss_under(declared: bool, arrived: &Ty, wants: &Ty) -> Option<(Label, Label)> {
    if declared {
        near_miss(arrived, wants)
    } else {
        real_near_miss(arrived, wants)
    }
}

/// [`near_miss`] for an inferred input type, where the records reaching a node may
/// lack labels that come with the input by flow inheritance: a near miss only if some
/// arriving variant, with its labels similar to the missing ones taken as those (the
/// suggested renames, one label each), would satisfy a variant of `wants`. A record
/// `{b}` is no near miss of a branch that wants `{B, D}`: renamed it still lacks `D`.
fn real_near_miss(arrived: &Ty, wants: &Ty) -> Option<(Label, Label)> {
    let wanted = |l: &Label| wants.iter().any(|w| w.contains(l));
    for w in wants {
        'x: for x in arrived {
            // Labels the branch wants itself are no alternative to the one it lacks.
            let have: Vec<Label> = x.iter().filter(|l| !wanted(l)).copied().collect();
            let mut renamed = x.clone();
            let mut used: Vec<Label> = Vec::new();
            let mut first = None;
            for l in w {
                if l.kind() == LabelKind::BTag || x.contains(l) {
                    continue;
                }
                let Some(s) = similar(*l, &have).filter(|s| !used.contains(s)) else {
                    continue 'x;
                };
                used.push(s);
                renamed.retain(|y| *y != s);
                renamed = union(&renamed, &[*l]);
                if first.is_none() && !arrived.iter().any(|y| y.contains(l)) {
                    first = Some((*l, s));
                }
            }
            if first.is_some() && accept_score(w, &renamed).is_some() {
                return first;
            }
        }
    }
    None
}

/// Adds the near-miss note, the producer of the similar label and the help to `d`.
fn hint(ir: &Ir, nodes: &[IrId], mut d: Diagnostic, want: Label, got: Label) -> Diagnostic {
    if let Some(p) = producer(ir, nodes, got) {
        d = d.secondary(
            ir.nodes[p].span,
            format!("produces {} `{got}`", kind_name(got)),
        );
    }
    d.note(format!(
        "none of them has {} `{want}`; they have {} `{got}`",
        kind_name(want),
        kind_name(got)
    ))
    .help(format!(
        "did you mean {} `{got}`? (unless the input records bring `{want}` along by flow inheritance)",
        kind_name(got)
    ))
}

/// The first box or filter of the entry network that produces label `l`.
fn producer(ir: &Ir, nodes: &[IrId], l: Label) -> Option<IrId> {
    let mut ids: Vec<IrId> = nodes.to_vec();
    ids.sort_by_key(|id| ir.nodes[*id].span.start);
    ids.into_iter().find(|id| match &ir.nodes[*id].kind {
        IrKind::Box(b) => ir.boxes[*b].outputs.iter().any(|o| o.contains(&l)),
        IrKind::Filter(f) => filter_outputs(f).any(|o| o.contains(&l)),
        _ => false,
    })
}

/// Withdraws W0103 (a serial replication no record can leave) where the records the
/// entry network is for do leave it: W0103 looks at the operand's outputs alone, and an
/// exit label may come from outside by flow inheritance, as in the state idiom of spec
/// §7.17 (`([| {state}, {in} |] .. step) * {state, <n>, <last>}` with `<last>` on the
/// state record). The flow starts from the declared input type or else the full §8
/// input type (with the labels later elements take by flow inheritance); a replication
/// that no record reaches, or a flow that gave up, keeps its warning.
pub(crate) fn withdraw_leavable_stars(
    ir: &Ir,
    inf: &Infer<'_>,
    entry: usize,
    diags: &mut Vec<Diagnostic>,
) {
    if !diags.iter().any(|d| d.code == "W0103") {
        return;
    }
    let body = ir.nets[entry].body;
    if inf.input_incomplete(body) {
        return;
    }
    let start = match &ir.nets[entry].sig {
        Some(sig) => Infer::sig_inputs(sig),
        None => inf.input(body).clone(),
    };
    let Some(f) = flow_from(ir, inf, body, &start) else {
        return;
    };
    let leavable: Vec<_> = nodes_of(ir, body)
        .into_iter()
        .filter(|&id| matches!(ir.nodes[id].kind, IrKind::Star { .. }) && f.exit_reached[id])
        .map(|id| ir.nodes[id].span)
        .collect();
    diags.retain(|d| !(d.code == "W0103" && d.span().is_some_and(|s| leavable.contains(&s))));
}
