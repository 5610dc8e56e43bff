//! Pattern matching and best-match routing (spec §5.3, §7.8).

use crate::label::LabelKind;
use crate::net::{Family, GuardedPattern, Variant};
use crate::record::Record;
use crate::tagexpr::EvalError;

/// True if `rec` carries every label of `labels` (spec §5.3).
pub fn matches_labels(rec: &Record, labels: &[crate::Label]) -> bool {
    labels.iter().all(|l| rec.has(*l))
}

/// Tests a guarded pattern: labels first, then the guard (spec §5.3).
pub fn matches(rec: &Record, p: &GuardedPattern) -> Result<bool, EvalError> {
    if !matches_labels(rec, &p.labels) {
        return Ok(false);
    }
    match &p.guard {
        None => Ok(true),
        Some(g) => g.eval_bool(rec),
    }
}

/// True if `rec` matches any pattern of `ps`.
pub fn matches_any(rec: &Record, ps: &[GuardedPattern]) -> Result<bool, EvalError> {
    for p in ps {
        if matches(rec, p)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A list of patterns compiled once for a test made at every record (a star's exit
/// test, issue 34): patterns without guards need no expression evaluation, and one
/// pattern of one label is one lookup.
#[derive(Debug, Clone)]
pub enum PatternTest {
    /// One pattern of one label, no guard.
    One(crate::Label),
    /// Patterns without guards: their labels.
    Plain(Box<[Box<[crate::Label]>]>),
    /// Some pattern has a guard: [`matches_any`].
    Guarded,
}

impl PatternTest {
    /// The test of `ps`.
    pub fn new(ps: &[GuardedPattern]) -> PatternTest {
        if ps.iter().any(|p| p.guard.is_some()) {
            return PatternTest::Guarded;
        }
        match ps {
            [p] if p.labels.len() == 1 => PatternTest::One(p.labels[0]),
            _ => PatternTest::Plain(ps.iter().map(|p| p.labels.clone().into()).collect()),
        }
    }

    /// [`matches_any`]`(rec, ps)`, where `ps` are the patterns this test was made of.
    #[inline]
    pub fn matches(&self, rec: &Record, ps: &[GuardedPattern]) -> Result<bool, EvalError> {
        match self {
            PatternTest::One(l) => Ok(rec.has(*l)),
            PatternTest::Plain(v) => Ok(v.iter().any(|p| matches_labels(rec, p))),
            PatternTest::Guarded => matches_any(rec, ps),
        }
    }
}

/// Routing score of `rec` against variant `v`, or `None` if `rec` is not acceptable
/// (spec §7.8 step 2): every field and tag of `v` present, every binding tag of `rec`
/// listed in `v`; score = fields + tags of `v` + binding tags of `rec`.
pub fn score(rec: &Record, v: &Variant) -> Option<usize> {
    let mut s = 0;
    for l in v {
        if l.kind() != LabelKind::BTag {
            if !rec.has(*l) {
                return None;
            }
            s += 1;
        }
    }
    for (b, _) in rec.btags() {
        if !v.contains(b) {
            return None;
        }
        s += 1;
    }
    Some(s)
}

/// The best [`score`] of `rec` against any variant of family `f`, without listing the
/// variants: every label of `f.labels` that is not a binding tag must be in `rec`, each
/// optional one in `rec` counts, and every binding tag of `rec` must be in the family
/// (a variant that takes all optional binding tags loses nothing, since binding tags
/// of the variant only restrict).
pub fn family_score(rec: &Record, f: &Family) -> Option<usize> {
    let mut s = 0;
    for l in &f.labels {
        if l.kind() != LabelKind::BTag {
            if !rec.has(*l) {
                return None;
            }
            s += 1;
        }
    }
    for l in &f.optional {
        if l.kind() != LabelKind::BTag && rec.has(*l) {
            s += 1;
        }
    }
    for (b, _) in rec.btags() {
        if !f.labels.contains(b) && !f.optional.contains(b) {
            return None;
        }
        s += 1;
    }
    Some(s)
}

/// The branch a record goes to: highest score, ties to the leftmost (spec §7.8).
/// Branches with an empty route list (initialisers) never match.
pub fn best_branch(rec: &Record, routes: &[Vec<Family>]) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (i, vs) in routes.iter().enumerate() {
        let s = vs.iter().filter_map(|f| family_score(rec, f)).max();
        if let Some(s) = s {
            if best.is_none_or(|(_, bs)| s > bs) {
                best = Some((i, s));
            }
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::variant;
    use crate::{Label, Value};

    #[test]
    fn a_compiled_pattern_test_agrees_with_matching_each_pattern() {
        use crate::tagexpr::{BinOp, TagExpr};
        let (a, b, t) = (Label::field("A"), Label::field("B"), Label::tag("t"));
        let plain = |ls: Vec<Label>| GuardedPattern {
            labels: variant(ls),
            guard: None,
        };
        let guarded = GuardedPattern {
            labels: variant(vec![t]),
            guard: Some(TagExpr::Binary(
                BinOp::Gt,
                Box::new(TagExpr::Label(t)),
                Box::new(TagExpr::Int(2)),
            )),
        };
        let lists = [
            vec![plain(vec![b])],
            vec![plain(vec![a, t])],
            vec![plain(vec![b]), plain(vec![a, t])],
            vec![plain(vec![])],
            vec![],
            vec![plain(vec![b]), guarded.clone()],
            vec![guarded],
        ];
        let records = [
            Record::new().with_field("A", Value::int(1)),
            Record::new().with_field("B", Value::int(1)),
            Record::new()
                .with_field("A", Value::int(1))
                .with_tag("t", 1),
            Record::new()
                .with_field("A", Value::int(1))
                .with_tag("t", 3),
            Record::new(),
        ];
        for ps in &lists {
            let test = PatternTest::new(ps);
            for r in &records {
                assert_eq!(test.matches(r, ps), matches_any(r, ps), "{ps:?} on {r:?}");
            }
        }
        assert!(matches!(PatternTest::new(&lists[0]), PatternTest::One(l) if l == b));
        assert!(matches!(PatternTest::new(&lists[2]), PatternTest::Plain(_)));
        assert!(matches!(PatternTest::new(&lists[5]), PatternTest::Guarded));
    }

    #[test]
    fn ties_go_left_and_btags_restrict() {
        let a = Label::field("A");
        let b = Label::field("B");
        let ex = |v: Vec<Label>| Family::exact(variant(v));
        let routes = vec![vec![ex(vec![a])], vec![ex(vec![b])], vec![ex(vec![])]];
        let r = Record::new()
            .with_field("A", Value::int(1))
            .with_field("B", Value::int(1));
        assert_eq!(best_branch(&r, &routes), Some(0));
        let c = Record::new().with_field("C", Value::int(1));
        assert_eq!(best_branch(&c, &routes), Some(2));
        let bt = Record::new().with_btag("x", 1);
        assert_eq!(best_branch(&bt, &routes), None);
        let routes2 = vec![vec![ex(vec![])], vec![ex(vec![Label::btag("x")])]];
        assert_eq!(best_branch(&bt, &routes2), Some(1));
    }
}
