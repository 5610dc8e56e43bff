//! Whole-network checks that need inferred types: initialiser placement (spec §9 item
//! 13) and the recommended warnings of items 15–19.

use super::infer::{accept_score, show_type, show_variant, Infer};
use super::ir::*;
use crate::diag::Diagnostic;
use snet_core::net::Variant;
use snet_core::{Label, LabelKind};

/// Reports misplaced initialisers (errors) and the §9 warnings.
pub(crate) fn check(ir: &Ir, inf: &mut Infer<'_>, diags: &mut Vec<Diagnostic>) {
    for id in 0..ir.nodes.len() {
        let span = ir.nodes[id].span;
        match &ir.nodes[id].kind {
            IrKind::Serial(a, b) => {
                if inf.input(*b).is_empty() {
                    misplaced_init(
                        ir,
                        *b,
                        "can only be the first element of a serial chain",
                        diags,
                    );
                } else if !inf.input(*a).is_empty() {
                    serial_mismatch(ir, inf, *a, *b, diags);
                }
            }
            IrKind::Star { body, exits, det } => {
                if inf.input(*body).is_empty() {
                    let what = if *det { "`**`" } else { "`*`" };
                    misplaced_init(
                        ir,
                        *body,
                        &format!("cannot be replicated with {what}"),
                        diags,
                    );
                    continue;
                }
                inf.begin();
                let outs = inf.all_outputs(*body);
                if outs.is_empty() || inf.tainted() {
                    continue;
                }
                // An exit pattern matches a record whose labels include the pattern's
                // (§5.3): it can match only if some output variant holds all of them.
                let hopeless = exits.iter().all(|p| {
                    !p.labels.is_empty()
                        && !outs.iter().any(|o| p.labels.iter().all(|l| o.contains(l)))
                });
                if hopeless {
                    let pats: Vec<String> = exits.iter().map(|p| show_variant(&p.labels)).collect();
                    diags.push(
                        Diagnostic::warning(
                            "W0103",
                            "no record leaving the replicated network can match an exit pattern",
                        )
                        .primary(
                            span,
                            "this replication never ends for records that enter it",
                        )
                        .note(format!(
                            "{} produces {} but the exit patterns are {}",
                            ir.describe(*body),
                            show_type(&outs),
                            pats.join(", ")
                        ))
                        .help("an exit pattern matches a record that has all of its labels; records that bring a missing label from outside the replication (flow inheritance) could still leave it"),
                    );
                }
            }
            IrKind::Split { body, det, .. } if inf.input(*body).is_empty() => {
                let what = if *det { "`!!`" } else { "`!`" };
                misplaced_init(
                    ir,
                    *body,
                    &format!("cannot be replicated with {what}"),
                    diags,
                );
            }
            IrKind::Feedback { body, .. } if inf.input(*body).is_empty() => {
                misplaced_init(ir, *body, "cannot be the operand of a feedback loop", diags);
            }
            IrKind::Par { branches, .. } => {
                if branches.iter().all(|b| inf.input(*b).is_empty()) {
                    diags.push(
                        Diagnostic::error(
                            "E0502",
                            "every branch of this parallel composition is an initialiser",
                        )
                        .primary(span, "no branch can receive a record")
                        .help("add a branch that accepts records, e.g. `| []`"),
                    );
                } else {
                    routing_tie(ir, inf, id, branches, diags);
                }
            }
            _ => {}
        }
    }
    for n in &ir.nets {
        if let Some(sig) = &n.sig {
            let body_in = inf.input(n.body).clone();
            if body_in.is_empty() || inf.input_incomplete(n.body) {
                continue;
            }
            for d in Infer::sig_inputs(sig) {
                if !body_in.iter().any(|w| accept_score(w, &d).is_some()) {
                    diags.push(
                        Diagnostic::warning(
                            "W0105",
                            format!(
                                "net `{}` declares input {}, which its body does not accept",
                                n.name,
                                show_variant(&d)
                            ),
                        )
                        .primary(n.name_span, "declared signature")
                        .secondary(
                            ir.nodes[n.body].span,
                            format!("accepts {}", show_type(&body_in)),
                        ),
                    );
                }
            }
            declared_outputs(ir, inf, n, sig, diags);
        }
    }
}

/// W0105 for the output side: a declared output variant with a label that no output
/// of the body has and that no declared input brings along (flow inheritance).
fn declared_outputs(
    ir: &Ir,
    inf: &mut Infer<'_>,
    n: &NetInfo,
    sig: &Sig,
    diags: &mut Vec<Diagnostic>,
) {
    inf.begin();
    let outs = inf.all_outputs(n.body);
    if inf.tainted() {
        return;
    }
    let ins = Infer::sig_inputs(sig);
    for m in &sig.maps {
        for o in m.outputs.iter().flatten() {
            let lacking: Vec<Label> = o
                .iter()
                .filter(|l| {
                    !outs.iter().any(|p| p.contains(l)) && !ins.iter().any(|v| v.contains(l))
                })
                .copied()
                .collect();
            let Some(first) = lacking.first() else {
                continue;
            };
            let mut d = Diagnostic::warning(
                "W0105",
                format!(
                    "net `{}` declares output {}, which its body does not produce",
                    n.name,
                    show_variant(o)
                ),
            )
            .primary(n.name_span, "declared signature")
            .secondary(
                ir.nodes[n.body].span,
                format!("produces {}", show_type(&outs)),
            )
            .note(format!(
                "no output of the body has `{first}`, and no declared input brings it along"
            ));
            let names: Vec<String> = outs.iter().flatten().map(|l| l.to_string()).collect();
            if let Some(c) =
                crate::diag::closest(&first.to_string(), names.iter().map(|s| s.as_str()))
            {
                d = d.help(format!("did you mean `{c}`?"));
            }
            diags.push(d);
        }
    }
}

/// The initialiser box at the head of `id`, if any.
fn head_init(ir: &Ir, id: IrId) -> Option<&str> {
    let mut id = id;
    loop {
        match &ir.nodes[id].kind {
            IrKind::Box(b) if ir.boxes[*b].input.is_none() => return Some(&ir.boxes[*b].name),
            IrKind::Net(n) if ir.nets[*n].sig.is_none() => id = ir.nets[*n].body,
            IrKind::Serial(a, _) | IrKind::At { body: a, .. } => id = *a,
            _ => return None,
        }
    }
}

fn misplaced_init(ir: &Ir, id: IrId, what: &str, diags: &mut Vec<Diagnostic>) {
    if matches!(ir.nodes[id].kind, IrKind::Error) {
        return;
    }
    let subject = match head_init(ir, id) {
        Some(name) if matches!(ir.nodes[id].kind, IrKind::Box(_)) => {
            format!("initialiser box `{name}`")
        }
        Some(name) => format!(
            "{} (it starts with initialiser box `{name}`)",
            ir.describe(id)
        ),
        None => format!("{} (it has no input type)", ir.describe(id)),
    };
    diags.push(
        Diagnostic::error("E0501", format!("{subject} {what}"))
            .primary(ir.nodes[id].span, "never receives records")
            .note("an initialiser may only start a serial chain that is a branch of a parallel composition (spec §7.4), e.g. `(init .. f) | []`"),
    );
}

/// Consumed labels and explicit outputs of the last primitive of `id`.
fn tail(ir: &Ir, id: IrId) -> Option<(Variant, Vec<Variant>, String)> {
    let mut id = id;
    loop {
        match &ir.nodes[id].kind {
            IrKind::Box(b) => {
                let bx = &ir.boxes[*b];
                let consumed = variant_of(bx.input.as_deref()?);
                let outs = bx.outputs.iter().map(|o| variant_of(o)).collect();
                return Some((consumed, outs, format!("box `{}`", bx.name)));
            }
            IrKind::Filter(f) => {
                let outs = filter_outputs(f).collect();
                return Some((f.pattern.clone(), outs, "the filter".to_owned()));
            }
            IrKind::Serial(_, b) | IrKind::At { body: b, .. } => id = *b,
            IrKind::Net(n) if ir.nets[*n].sig.is_none() => id = ir.nets[*n].body,
            _ => return None,
        }
    }
}

/// Item 15 (and 18 for splits): an output of `a`'s last primitive that `b` can
/// certainly not accept, because `a` consumed a label that `b` requires.
fn serial_mismatch(ir: &Ir, inf: &Infer<'_>, a: IrId, b: IrId, diags: &mut Vec<Diagnostic>) {
    let Some((consumed, outs, who)) = tail(ir, a) else {
        return;
    };
    if inf.input_incomplete(b) {
        return;
    }
    let in_b = inf.input(b);
    for o in &outs {
        let rejects = |w: &Variant| -> Option<Label> {
            if let Some(l) = w
                .iter()
                .find(|l| l.kind() != LabelKind::BTag && consumed.contains(l) && !o.contains(l))
            {
                return Some(*l);
            }
            o.iter()
                .find(|l| l.kind() == LabelKind::BTag && !w.contains(l))
                .copied()
        };
        let reasons: Vec<Label> = in_b.iter().filter_map(rejects).collect();
        if reasons.len() < in_b.len() {
            continue;
        }
        let first = reasons[0];
        let split_index = match &ir.nodes[b].kind {
            IrKind::Split { index, .. } => Some(*index),
            _ => None,
        };
        let (code, msg) = match split_index {
            Some(ix) if reasons.iter().all(|l| *l == ix) => (
                "W0104",
                format!(
                    "records that {who} emits as {} lack the index tag `{ix}` of the split",
                    show_variant(o)
                ),
            ),
            _ => (
                "W0101",
                format!(
                    "records that {who} emits as {} cannot enter {}",
                    show_variant(o),
                    ir.describe(b)
                ),
            ),
        };
        let note = if first.kind() == LabelKind::BTag {
            format!("binding tag `{first}` is not in any input variant of the next network")
        } else {
            format!("{who} consumes `{first}` and does not emit it, but the next network needs it")
        };
        diags.push(
            Diagnostic::warning(code, msg)
                .primary(ir.nodes[b].span, format!("accepts {}", show_type(in_b)))
                .secondary(ir.nodes[a].span, format!("emits {}", show_variant(o)))
                .note(note),
        );
        return;
    }
}

/// Item 16: a variant of the composite's input type that two branches accept equally
/// well (the leftmost wins, spec §7.8).
fn routing_tie(ir: &Ir, inf: &Infer<'_>, id: IrId, branches: &[IrId], diags: &mut Vec<Diagnostic>) {
    if inf.input_incomplete(id) {
        return;
    }
    for v in inf.input(id) {
        let scores: Vec<Option<usize>> = branches
            .iter()
            .map(|b| {
                inf.input(*b)
                    .iter()
                    .filter_map(|w| accept_score(w, v))
                    .max()
            })
            .collect();
        let Some(best) = scores.iter().flatten().max().copied() else {
            continue;
        };
        let tied: Vec<usize> = (0..branches.len())
            .filter(|i| scores[*i] == Some(best))
            .collect();
        if tied.len() >= 2 {
            diags.push(
                Diagnostic::warning(
                    "W0102",
                    format!(
                        "records of type {} match branch {} ({}) and branch {} ({}) equally well",
                        show_variant(v),
                        tied[0] + 1,
                        ir.describe(branches[tied[0]]),
                        tied[1] + 1,
                        ir.describe(branches[tied[1]])
                    ),
                )
                .primary(
                    ir.nodes[branches[tied[1]]].span,
                    "never chosen for these records",
                )
                .secondary(
                    ir.nodes[branches[tied[0]]].span,
                    "chosen: ties go to the leftmost branch",
                )
                .note("routing ties are resolved towards the leftmost branch (spec §7.8)"),
            );
            return;
        }
    }
}
