//! Filters (spec §7.5): pure functions from one record to zero or more records.

use crate::label::LabelKind;
use crate::net::{Action, Filter, OutItem};
use crate::record::Record;
use crate::tagexpr::EvalError;

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

/// Applies `filter` to `x` where it lies (issue 34): an action with one output record
/// turns `x` into it in place (its slot, its inherited labels and their storage kept);
/// other actions push their outputs onto `out` in written order and leave `x` empty.
/// Returns the number of outputs. On error `x` is unchanged and nothing is pushed.
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
        inherit(filter, std::mem::take(x), &mut out[start..]);
        return Ok(out.len() - start);
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

    /// The filter in place (issue 34) gives what the list-building one gives, for every
    /// record and every shape of action (one output, several, none), and leaves the
    /// record as it was when it fails.
    #[test]
    fn in_place_application_agrees_with_building_outputs() {
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
        proptest!(ProptestConfig::with_cases(512), |(x in record, which in 0usize..4)| {
            let f = &filters[which];
            let mut built = vec![];
            let expected = apply(f, x.clone(), &mut built);
            let mut rec = x.clone();
            let mut outs = vec![];
            let got = apply_in_place(f, &mut rec, &mut outs);
            match expected {
                Ok(()) => {
                    let n = got.expect("in place succeeds too");
                    prop_assert_eq!(n, built.len());
                    let outs = if n == 1 { vec![rec] } else { outs };
                    // Equal as records and in label order (spec §11.3).
                    for (o, b) in outs.iter().zip(&built) {
                        prop_assert_eq!(o, b);
                        prop_assert_eq!(o.describe(), b.describe());
                    }
                }
                Err(b) => {
                    prop_assert_eq!(got.expect_err("in place fails too"), b.0);
                    prop_assert_eq!(&rec, &x, "the record is unchanged");
                    prop_assert!(outs.is_empty());
                }
            }
        });
    }
}
