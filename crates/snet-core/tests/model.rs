//! Property tests: best-match routing (spec §7.8) and filter flow inheritance (spec
//! §7.2, §7.5) against naive models written straight from the spec's set definitions.

use proptest::prelude::*;
use snet_core::filter;
use snet_core::net::{variant, Family, Filter, OutItem};
use snet_core::{pattern, Label, LabelKind, Record, Value};
use std::collections::{BTreeMap, BTreeSet};

const NAMES: [&str; 4] = ["a", "b", "c", "d"];

fn label(kind: u8, name: usize) -> Label {
    let k = match kind % 3 {
        0 => LabelKind::Field,
        1 => LabelKind::Tag,
        _ => LabelKind::BTag,
    };
    Label::new(k, NAMES[name % NAMES.len()])
}

fn arb_labels() -> impl Strategy<Value = Vec<Label>> {
    prop::collection::vec((0u8..3, 0usize..4).prop_map(|(k, n)| label(k, n)), 0..6)
}

fn record_of(labels: &[Label], base: i32) -> Record {
    let mut r = Record::new();
    for (i, l) in labels.iter().enumerate() {
        match l.kind() {
            LabelKind::Field => r.set_field(*l, Some(Value::int(base + i as i32))),
            _ => r.set_tag(*l, base + i as i32),
        }
    }
    r
}

/// §7.8 step 2-4, literally: acceptable iff fields+tags of v ⊆ x and btags(x) ⊆ v;
/// score = |fields(v)| + |tags(v)| + |btags(x)|; best score, leftmost on ties.
fn naive_route(x: &BTreeSet<Label>, routes: &[Vec<BTreeSet<Label>>]) -> Option<usize> {
    let btags_x: BTreeSet<Label> = x
        .iter()
        .copied()
        .filter(|l| l.kind() == LabelKind::BTag)
        .collect();
    let mut best: Option<(usize, usize)> = None;
    for (i, vs) in routes.iter().enumerate() {
        for v in vs {
            let ft: BTreeSet<Label> = v
                .iter()
                .copied()
                .filter(|l| l.kind() != LabelKind::BTag)
                .collect();
            if ft.is_subset(x) && btags_x.is_subset(v) {
                let s = ft.len() + btags_x.len();
                if best.is_none_or(|(_, bs)| s > bs) {
                    best = Some((i, s));
                }
            }
        }
    }
    best.map(|(i, _)| i)
}

proptest! {
    #[test]
    fn routing_matches_the_naive_model(
        x in arb_labels(),
        routes in prop::collection::vec(
            prop::collection::vec((arb_labels(), arb_labels()), 0..3),
            1..4,
        ),
    ) {
        // Each route entry is a family (labels, optional); the model lists its 2^k
        // variants and routes on them, the core scores the family directly.
        let rec = record_of(&x, 0);
        let xs: BTreeSet<Label> = x.iter().copied().collect();
        let families: Vec<Vec<Family>> = routes
            .iter()
            .map(|vs| {
                vs.iter()
                    .map(|(req, opt)| {
                        let labels = variant(req.clone());
                        let optional =
                            variant(opt.iter().copied().filter(|l| !labels.contains(l)).collect());
                        Family { labels, optional }
                    })
                    .collect()
            })
            .collect();
        let model_routes: Vec<Vec<BTreeSet<Label>>> = families
            .iter()
            .map(|vs| {
                let mut out = Vec::new();
                for f in vs {
                    for bits in 0u32..(1 << f.optional.len()) {
                        let mut v: BTreeSet<Label> = f.labels.iter().copied().collect();
                        for (i, l) in f.optional.iter().enumerate() {
                            if bits & (1 << i) != 0 {
                                v.insert(*l);
                            }
                        }
                        out.push(v);
                    }
                }
                out
            })
            .collect();
        prop_assert_eq!(pattern::best_branch(&rec, &families), naive_route(&xs, &model_routes));
    }

    #[test]
    fn filter_inheritance_matches_the_naive_model(
        x in arb_labels(),
        pat in arb_labels(),
        outs in prop::collection::vec(arb_labels(), 0..3),
    ) {
        // Only build filters the checker would accept: copied fields and tags without an
        // expression are allowed anywhere; fields must come from the pattern.
        let mut x = x;
        x.extend(pat.iter().copied()); // the record matches the pattern
        let rec = record_of(&x, 100);
        let pattern = variant(pat.clone());
        let action: Vec<Vec<OutItem>> = outs
            .iter()
            .map(|o| {
                o.iter()
                    .filter(|l| l.kind() != LabelKind::Field || pattern.contains(l))
                    .map(|l| match l.kind() {
                        LabelKind::Field => OutItem::Field { to: *l, from: *l },
                        _ => OutItem::Tag { to: *l, value: None },
                    })
                    .collect()
            })
            .collect();
        let f = Filter { pattern: pattern.clone(), guards: vec![], default: action.clone() };
        let mut got = Vec::new();
        filter::apply(&f, rec.clone(), &mut got).map_err(|e| TestCaseError::fail(e.0.to_string()))?;
        prop_assert_eq!(got.len(), action.len());
        // Model: explicit items (tags not in the pattern get 0), then every field and
        // tag of x outside the pattern not explicitly produced; never binding tags.
        for (items, out) in action.iter().zip(&got) {
            let mut want: BTreeMap<Label, String> = BTreeMap::new();
            for it in items {
                match it {
                    OutItem::Field { to, from } => {
                        want.insert(*to, format!("{:?}", rec.field(*from).cloned().flatten()));
                    }
                    OutItem::Tag { to, .. } => {
                        let v = if pattern.contains(to) { rec.tag(*to).unwrap_or(0) } else { 0 };
                        want.insert(*to, v.to_string());
                    }
                }
            }
            for l in rec.labels() {
                if l.kind() != LabelKind::BTag && !pattern.contains(&l) && !want.contains_key(&l) {
                    let v = match l.kind() {
                        LabelKind::Field => format!("{:?}", rec.field(l).cloned().flatten()),
                        _ => rec.tag(l).unwrap_or(0).to_string(),
                    };
                    want.insert(l, v);
                }
            }
            let mut have: BTreeMap<Label, String> = BTreeMap::new();
            for l in out.labels() {
                let v = match l.kind() {
                    LabelKind::Field => format!("{:?}", out.field(l).cloned().flatten()),
                    _ => out.tag(l).unwrap_or(0).to_string(),
                };
                have.insert(l, v);
            }
            prop_assert_eq!(have, want);
        }
    }
}
