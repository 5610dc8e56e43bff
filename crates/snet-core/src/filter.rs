//! Filters (spec §7.5): pure functions from one record to zero or more records.

use crate::label::Label;
use crate::label::LabelKind;
use crate::net::{Action, Filter, OutItem};
use crate::record::Record;
use crate::tagexpr::{Code, EvalError, Regs, TagExpr};

/// Why a filter could not handle a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterError {
    /// The record lacks a pattern label.
    NoMatch(crate::Label),
    /// A tag expression failed.
    Eval(EvalError),
}

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FilterError::NoMatch(l) => {
                write!(f, "record lacks {l}, which the filter pattern requires")
            }
            FilterError::Eval(e) => write!(f, "{e}"),
        }
    }
}

impl From<EvalError> for FilterError {
    fn from(e: EvalError) -> Self {
        FilterError::Eval(e)
    }
}

/// Applies `filter` to `x`, pushing the output records in written order onto `out`: the
/// plain statement of §7.5 that [`apply_in_place`], the record path's version, is held
/// to by a property test.
/// On error nothing is emitted and the input record is handed back for the diagnostic.
pub fn apply(
    filter: &Filter,
    x: Record,
    out: &mut Vec<Record>,
) -> Result<(), Box<(FilterError, Record)>> {
    let start = out.len();
    match build(filter, &x, out) {
        Ok(()) => {}
        Err(e) => {
            out.truncate(start);
            return Err(Box::new((e, x)));
        }
    }
    inherit(filter, x, &mut out[start..]);
    Ok(())
}

/// Applies `filter` to `x` where it lies (issue 34): `x` becomes the action's first
/// output record (an action with one output turns it into that in place: its slot, its
/// inherited labels and their storage kept), and the other outputs are pushed onto
/// `out` in written order. Returns the number of outputs (`x` is left as it was for
/// none). On error `x` is unchanged and nothing is pushed.
pub fn apply_in_place(
    filter: &Filter,
    x: &mut Record,
    out: &mut Vec<Record>,
) -> Result<usize, FilterError> {
    let action = choose(filter, x)?;
    let [items] = action.as_slice() else {
        let start = out.len();
        if let Err(e) = build_action(filter, action, x, out) {
            out.truncate(start);
            return Err(e);
        }
        let n = out.len() - start;
        if n == 0 {
            return Ok(0);
        }
        inherit(filter, std::mem::take(x), &mut out[start..]);
        *x = out.remove(start);
        return Ok(n);
    };
    // The explicit labels, read from the input before it changes.
    let mut fields: smallvec::SmallVec<[(crate::Label, crate::Field); 2]> =
        smallvec::SmallVec::new();
    let mut tags: smallvec::SmallVec<[(crate::Label, i32); 4]> = smallvec::SmallVec::new();
    for item in items {
        match item {
            OutItem::Field { to, from } => {
                let v = x.field(*from).cloned().ok_or(FilterError::NoMatch(*from))?;
                fields.push((*to, v));
            }
            OutItem::Tag { to, value } => tags.push((*to, tag_value(filter, x, *to, value)?)),
        }
    }
    x.rebuild(fields, tags, |l| inherited(filter, l));
    Ok(1)
}

/// A filter compiled once for the record path (issue 34): the tags its guards and
/// expressions read are looked up once per record into registers, guards and values
/// are register code over them, and an output tag copied from the pattern is a register
/// read. [`apply_planned`] with it gives exactly what [`apply_in_place`] gives.
#[derive(Debug)]
pub struct FilterPlan {
    /// The registers' labels.
    regs: Box<[Label]>,
    /// The registers holding pattern tags (present in every record the filter takes).
    pattern_regs: u32,
    /// The pattern's other labels (fields, tags no expression reads).
    pattern_rest: Box<[Label]>,
    /// Guards, in order.
    guards: Box<[Code]>,
    /// The action of each guard, then the default.
    actions: Box<[PlanAction]>,
}

/// A compiled action: its output records' items.
type PlanAction = Box<[Box<[PlanItem]>]>;

/// One written label of an output record, in written order.
#[derive(Debug)]
enum PlanItem {
    /// Field `to` from the input's field `from`.
    Field { to: Label, from: Label },
    /// Tag or binding tag `to` with this value.
    Tag { to: Label, value: Code },
}

impl FilterPlan {
    /// Compiles `filter`; `None` if its expressions read more tags than registers hold
    /// (it is then applied as written, by [`apply_in_place`]).
    pub fn new(filter: &Filter) -> Option<FilterPlan> {
        let mut regs = Vec::new();
        let mut guards = Vec::with_capacity(filter.guards.len());
        let mut actions = Vec::with_capacity(filter.guards.len() + 1);
        for (g, _) in &filter.guards {
            guards.push(g.compile_bool(&mut regs)?);
        }
        for action in filter
            .guards
            .iter()
            .map(|(_, a)| a)
            .chain([&filter.default])
        {
            let mut outs = Vec::with_capacity(action.len());
            for items in action {
                let mut plan = Vec::with_capacity(items.len());
                for item in items {
                    plan.push(match item {
                        OutItem::Field { to, from } => PlanItem::Field {
                            to: *to,
                            from: *from,
                        },
                        OutItem::Tag { to, value } => PlanItem::Tag {
                            to: *to,
                            value: match value {
                                Some(e) => e.compile_int(&mut regs)?,
                                // Present: the pattern was checked first.
                                None if filter.pattern.contains(to) => {
                                    TagExpr::Label(*to).compile_int(&mut regs)?
                                }
                                None => Code::Int(0),
                            },
                        },
                    });
                }
                outs.push(plan.into_boxed_slice());
            }
            actions.push(outs.into_boxed_slice());
        }
        let (mut pattern_regs, mut pattern_rest) = (0u32, Vec::new());
        for l in &filter.pattern {
            match regs.iter().position(|r| r == l) {
                Some(i) if l.kind() != crate::label::LabelKind::Field => pattern_regs |= 1 << i,
                _ => pattern_rest.push(*l),
            }
        }
        Some(FilterPlan {
            regs: regs.into_boxed_slice(),
            pattern_regs,
            pattern_rest: pattern_rest.into_boxed_slice(),
            guards: guards.into_boxed_slice(),
            actions: actions.into_boxed_slice(),
        })
    }
}

/// [`apply_in_place`] following `plan`, the compiled form of `filter`.
pub fn apply_planned(
    plan: &FilterPlan,
    filter: &Filter,
    x: &mut Record,
    out: &mut Vec<Record>,
) -> Result<usize, FilterError> {
    // The pattern: its tags that are registers by their loads, the rest looked up; a
    // missing one is named in pattern order, as `apply_in_place` names it.
    let regs = Regs::load(&plan.regs, x);
    if !regs.has_all(plan.pattern_regs) || plan.pattern_rest.iter().any(|l| !x.has(*l)) {
        if let Some(l) = filter.pattern.iter().find(|l| !x.has(**l)) {
            return Err(FilterError::NoMatch(*l));
        }
    }
    let mut chosen = plan.guards.len();
    for (i, g) in plan.guards.iter().enumerate() {
        if g.eval(&regs)? != 0 {
            chosen = i;
            break;
        }
    }
    let Some((first, others)) = plan.actions[chosen].split_first() else {
        return Ok(0);
    };
    // The first output's explicit labels, read from the input before it changes (and
    // before the other outputs: a failing label is found in written order).
    let mut fields: smallvec::SmallVec<[(Label, crate::Field); 2]> = smallvec::SmallVec::new();
    let mut tags: smallvec::SmallVec<[(Label, i32); 4]> = smallvec::SmallVec::new();
    for item in first.iter() {
        match item {
            PlanItem::Field { to, from } => {
                let v = x.field(*from).cloned().ok_or(FilterError::NoMatch(*from))?;
                fields.push((*to, v));
            }
            PlanItem::Tag { to, value } => tags.push((*to, value.eval(&regs)?)),
        }
    }
    // The other outputs, each with copies of the input's inherited labels.
    let start = out.len();
    for items in others.iter() {
        let mut o = Record::new();
        o.mode = x.mode;
        for item in items.iter() {
            let r = match item {
                PlanItem::Field { to, from } => match x.field(*from) {
                    Some(v) => {
                        o.set_field(*to, v.clone());
                        Ok(())
                    }
                    None => Err(FilterError::NoMatch(*from)),
                },
                PlanItem::Tag { to, value } => match value.eval(&regs) {
                    Ok(v) => {
                        o.set_tag(*to, v);
                        Ok(())
                    }
                    Err(e) => Err(e.into()),
                },
            };
            if let Err(e) = r {
                out.truncate(start);
                return Err(e);
            }
        }
        out.push(o);
    }
    for o in &mut out[start..] {
        o.inherit_from_where(x, |l| inherited(filter, l));
    }
    // The first output where the input lies, with the input's own inherited labels.
    x.rebuild(fields, tags, |l| inherited(filter, l));
    Ok(1 + others.len())
}

/// The value of output tag `to` written as `value`.
#[inline]
fn tag_value(
    filter: &Filter,
    x: &Record,
    to: crate::Label,
    value: &Option<crate::TagExpr>,
) -> Result<i32, FilterError> {
    Ok(match value {
        Some(e) => e.eval_int(x)?,
        None if filter.pattern.contains(&to) => x.tag(to).unwrap_or(0),
        None => 0,
    })
}

/// The action for `x`: the first guard that holds, else the default. Fails if `x`
/// lacks a pattern label.
fn choose<'f>(filter: &'f Filter, x: &Record) -> Result<&'f Action, FilterError> {
    if let Some(l) = filter.pattern.iter().find(|l| !x.has(**l)) {
        return Err(FilterError::NoMatch(*l));
    }
    for (g, a) in &filter.guards {
        if g.eval_bool(x)? {
            return Ok(a);
        }
    }
    Ok(&filter.default)
}

fn build(filter: &Filter, x: &Record, out: &mut Vec<Record>) -> Result<(), FilterError> {
    let action = choose(filter, x)?;
    build_action(filter, action, x, out)
}

fn build_action(
    filter: &Filter,
    action: &Action,
    x: &Record,
    out: &mut Vec<Record>,
) -> Result<(), FilterError> {
    // Build every output from the input record (expressions read the input).
    for items in action {
        let mut o = Record::new();
        o.mode = x.mode;
        for item in items {
            match item {
                OutItem::Field { to, from } => {
                    let v = x.field(*from).cloned().ok_or(FilterError::NoMatch(*from))?;
                    o.set_field(*to, v);
                }
                OutItem::Tag { to, value } => o.set_tag(*to, tag_value(filter, x, *to, value)?),
            }
        }
        out.push(o);
    }
    Ok(())
}

/// Flow inheritance (spec §7.2): labels of `x` outside the pattern, not binding tags.
/// Whether a filter's outputs inherit input label `l` (spec §7.2): what is neither in
/// the pattern nor a binding tag.
#[inline]
fn inherited(filter: &Filter, l: crate::Label) -> bool {
    l.kind() != LabelKind::BTag && !filter.pattern.contains(&l)
}

fn inherit(filter: &Filter, x: Record, outs: &mut [Record]) {
    let mut rest = x;
    rest.retain_labels(|l| inherited(filter, l));
    let n = outs.len();
    for (i, o) in outs.iter_mut().enumerate() {
        if i + 1 == n {
            o.inherit_from_owned(std::mem::take(&mut rest));
        } else {
            o.inherit_from(&rest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::variant;
    use crate::tagexpr::{BinOp, TagExpr};
    use crate::{Label, Value};

    #[test]
    fn explicit_labels_win_and_unlisted_pattern_labels_vanish() {
        let (a, b, t) = (Label::field("A"), Label::field("B"), Label::tag("T"));
        // [{A} -> {B=A}; {<T>}]
        let f = Filter {
            pattern: variant(vec![a]),
            guards: vec![],
            default: vec![
                vec![OutItem::Field { to: b, from: a }],
                vec![OutItem::Tag { to: t, value: None }],
            ],
        };
        let x = Record::new()
            .with_field("A", Value::int(3))
            .with_field("B", Value::int(5))
            .with_tag("T", 7)
            .with_btag("q", 1);
        let mut out = vec![];
        apply(&f, x, &mut out).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].field(b).unwrap().as_ref().unwrap().as_i32(), Some(3));
        assert_eq!(out[0].tag(t), Some(7));
        assert!(!out[0].has(a));
        assert!(!out[0].has(Label::btag("q")));
        // <T> not in the pattern: explicit 0 wins over the inherited 7.
        assert_eq!(out[1].tag(t), Some(0));
        assert_eq!(out[1].field(b).unwrap().as_ref().unwrap().as_i32(), Some(5));
    }

    #[test]
    fn guards_select_and_expressions_read_input() {
        let (n, s) = (Label::tag("N"), Label::tag("S"));
        let e = |op, a, b| TagExpr::Binary(op, Box::new(a), Box::new(b));
        let f = Filter {
            pattern: variant(vec![n, s]),
            guards: vec![(e(BinOp::Eq, TagExpr::Label(n), TagExpr::Int(0)), vec![])],
            default: vec![vec![
                OutItem::Tag {
                    to: n,
                    value: Some(e(BinOp::Sub, TagExpr::Label(n), TagExpr::Int(1))),
                },
                OutItem::Tag {
                    to: s,
                    value: Some(e(BinOp::Add, TagExpr::Label(s), TagExpr::Label(n))),
                },
            ]],
        };
        let mut out = vec![];
        apply(
            &f,
            Record::new().with_tag("N", 4).with_tag("S", 1),
            &mut out,
        )
        .unwrap();
        assert_eq!((out[0].tag(n), out[0].tag(s)), (Some(3), Some(5)));
        out.clear();
        apply(
            &f,
            Record::new().with_tag("N", 0).with_tag("S", 1),
            &mut out,
        )
        .unwrap();
        assert!(out.is_empty());
    }

    /// The filter in place (issue 34), as written and compiled, gives what the
    /// list-building one gives, for every record and every shape of action (one output,
    /// several, none), and leaves the record as it was when it fails.
    #[test]
    fn in_place_and_compiled_application_agree_with_building_outputs() {
        use proptest::prelude::*;
        let (a, b) = (Label::field("A"), Label::field("B"));
        let (t, u, q) = (Label::tag("T"), Label::tag("U"), Label::btag("q"));
        let e = |op, x, y| TagExpr::Binary(op, Box::new(x), Box::new(y));
        let filters = [
            // [{A} -> {B=A}; {<T>}]
            Filter {
                pattern: variant(vec![a]),
                guards: vec![],
                default: vec![
                    vec![OutItem::Field { to: b, from: a }],
                    vec![OutItem::Tag { to: t, value: None }],
                ],
            },
            // [{A, <T>} -> {A, <T=T+1>, <#q=T>}]
            Filter {
                pattern: variant(vec![a, t]),
                guards: vec![],
                default: vec![vec![
                    OutItem::Field { to: a, from: a },
                    OutItem::Tag {
                        to: t,
                        value: Some(e(BinOp::Add, TagExpr::Label(t), TagExpr::Int(1))),
                    },
                    OutItem::Tag {
                        to: q,
                        value: Some(TagExpr::Label(t)),
                    },
                ]],
            },
            // [{<T>} -> if <T == 0> then else {<U=T/T>, B=... }] (division by zero
            // fails only on the branch that runs)
            Filter {
                pattern: variant(vec![t]),
                guards: vec![(e(BinOp::Eq, TagExpr::Label(t), TagExpr::Int(0)), vec![])],
                default: vec![vec![
                    OutItem::Tag {
                        to: u,
                        value: Some(e(BinOp::Div, TagExpr::Label(t), TagExpr::Label(t))),
                    },
                    OutItem::Tag { to: t, value: None },
                ]],
            },
            // [{<T>} -> if <T > 1 || U > 0> then {<T=T*2>}; {B=A, <U>}
            //          else if <T == 1> then {<V=T+U>, <#q>} else {<T>, <U=T-1>}]
            // (guards in order, a tag outside the pattern that the record may lack, a
            // failing field in a later output)
            Filter {
                pattern: variant(vec![t]),
                guards: vec![
                    (
                        e(
                            BinOp::Or,
                            e(BinOp::Gt, TagExpr::Label(t), TagExpr::Int(1)),
                            e(BinOp::Gt, TagExpr::Label(u), TagExpr::Int(0)),
                        ),
                        vec![
                            vec![OutItem::Tag {
                                to: t,
                                value: Some(e(BinOp::Mul, TagExpr::Label(t), TagExpr::Int(2))),
                            }],
                            vec![
                                OutItem::Field { to: b, from: a },
                                OutItem::Tag { to: u, value: None },
                            ],
                        ],
                    ),
                    (
                        e(BinOp::Eq, TagExpr::Label(t), TagExpr::Int(1)),
                        vec![vec![
                            OutItem::Tag {
                                to: Label::tag("V"),
                                value: Some(e(BinOp::Add, TagExpr::Label(t), TagExpr::Label(u))),
                            },
                            OutItem::Tag { to: q, value: None },
                        ]],
                    ),
                ],
                default: vec![vec![
                    OutItem::Tag { to: t, value: None },
                    OutItem::Tag {
                        to: u,
                        value: Some(e(BinOp::Sub, TagExpr::Label(t), TagExpr::Int(1))),
                    },
                ]],
            },
            // [{<U>} -> {<U>, B=A}] (a field the record may lack)
            Filter {
                pattern: variant(vec![u]),
                guards: vec![],
                default: vec![vec![
                    OutItem::Tag { to: u, value: None },
                    OutItem::Field { to: b, from: a },
                ]],
            },
        ];
        let record = (
            proptest::option::of(0i32..3),
            proptest::option::of(0i32..3),
            proptest::option::of(-2i32..3),
            proptest::option::of(-2i32..3),
            proptest::option::of(0i32..3),
            any::<bool>(),
        )
            .prop_map(|(fa, fb, tt, tu, bq, fields_first)| {
                let mut r = Record::new();
                let put_fields = |r: &mut Record| {
                    if let Some(v) = fa {
                        r.set_field(Label::field("A"), Some(Value::int(v)));
                    }
                    if let Some(v) = fb {
                        r.set_field(Label::field("B"), Some(Value::int(v)));
                    }
                };
                if fields_first {
                    put_fields(&mut r);
                }
                if let Some(v) = tu {
                    r.set_tag(Label::tag("U"), v);
                }
                if let Some(v) = tt {
                    r.set_tag(Label::tag("T"), v);
                }
                if let Some(v) = bq {
                    r.set_tag(Label::btag("q"), v);
                }
                if !fields_first {
                    put_fields(&mut r);
                }
                r
            });
        proptest!(ProptestConfig::with_cases(512), |(x in record, which in 0usize..5)| {
            let f = &filters[which];
            let mut built = vec![];
            let expected = apply(f, x.clone(), &mut built);
            // Both record-path versions: as written, and compiled (`FilterPlan`).
            let plan = FilterPlan::new(f).expect("few tags");
            for planned in [false, true] {
                let mut rec = x.clone();
                let mut outs = vec![];
                let got = if planned {
                    apply_planned(&plan, f, &mut rec, &mut outs)
                } else {
                    apply_in_place(f, &mut rec, &mut outs)
                };
                match &expected {
                    Ok(()) => {
                        let n = got.expect("in place succeeds too");
                        prop_assert_eq!(n, built.len());
                        // The first output where the input lay, the others pushed.
                        let outs: Vec<Record> = if n == 0 {
                            outs
                        } else {
                            std::iter::once(rec).chain(outs).collect()
                        };
                        prop_assert_eq!(outs.len(), n);
                        // Equal as records and in label order (spec §11.3).
                        for (o, b) in outs.iter().zip(&built) {
                            prop_assert_eq!(o, b);
                            prop_assert_eq!(o.describe(), b.describe());
                        }
                    }
                    Err(b) => {
                        prop_assert_eq!(got.expect_err("in place fails too"), b.0.clone());
                        prop_assert_eq!(&rec, &x, "the record is unchanged");
                        prop_assert!(outs.is_empty());
                    }
                }
            }
        });
    }
}
