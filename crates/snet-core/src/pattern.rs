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

/// The routing of a parallel composition compiled once (issue 34): the fields and
/// tags its branches' types name get one bit each, a record's labels are looked up
/// once into a mask, and each variant family's score is two mask operations.
/// [`RouteTable::best`] gives what [`best_branch`] gives (a record with binding tags,
/// which restrict routing, takes [`best_branch`] itself).
#[derive(Debug, Clone)]
pub struct RouteTable {
    /// The labels with a bit, in bit order (fields and tags only).
    labels: Box<[crate::Label]>,
    /// Per branch, per family: the masks of its required and optional labels, and the
    /// number of required ones.
    branches: Box<[Box<[FamilyMask]>]>,
    /// With at most [`RouteTable::LUT_BITS`] labels: the branch for every mask
    /// ([`RouteTable::NONE`] for none), so that routing a record is its lookups and
    /// one load.
    lut: Option<Box<[u8]>>,
}

/// A variant family as masks: required labels, optional labels, number required.
type FamilyMask = (u64, u64, u32);

impl RouteTable {
    /// The table of `routes`; `None` if they name more than 64 labels or list one
    /// twice in a family (routing then takes [`best_branch`]).
    pub fn new(routes: &[Vec<Family>]) -> Option<RouteTable> {
        let mut labels: Vec<crate::Label> = Vec::new();
        let bit = |l: crate::Label, labels: &mut Vec<crate::Label>| -> Option<u64> {
            let i = match labels.iter().position(|k| *k == l) {
                Some(i) => i,
                None => {
                    labels.push(l);
                    labels.len() - 1
                }
            };
            (i < 64).then(|| 1u64 << i)
        };
        let mut branches = Vec::with_capacity(routes.len());
        for fams in routes {
            let mut b = Vec::with_capacity(fams.len());
            for f in fams {
                let (mut req, mut opt, mut n) = (0u64, 0u64, 0u32);
                for l in f.labels.iter().filter(|l| l.kind() != LabelKind::BTag) {
                    let m = bit(*l, &mut labels)?;
                    if req & m != 0 {
                        return None;
                    }
                    req |= m;
                    n += 1;
                }
                for l in f.optional.iter().filter(|l| l.kind() != LabelKind::BTag) {
                    let m = bit(*l, &mut labels)?;
                    if opt & m != 0 {
                        return None;
                    }
                    opt |= m;
                }
                b.push((req, opt, n));
            }
            branches.push(b.into_boxed_slice());
        }
        let mut t = RouteTable {
            labels: labels.into_boxed_slice(),
            branches: branches.into_boxed_slice(),
            lut: None,
        };
        if t.labels.len() <= RouteTable::LUT_BITS && t.branches.len() < RouteTable::NONE as usize {
            let lut = (0..1u64 << t.labels.len())
                .map(|m| t.best_of(m).map_or(RouteTable::NONE, |b| b as u8))
                .collect();
            t.lut = Some(lut);
        }
        Some(t)
    }

    /// Most labels for a lookup table (256 entries).
    const LUT_BITS: usize = 8;
    /// "No branch" in the lookup table.
    const NONE: u8 = u8::MAX;

    /// The branch for a record whose labels among `labels` are the bits of `m`.
    fn best_of(&self, m: u64) -> Option<usize> {
        let mut best: Option<(usize, u32)> = None;
        for (i, fams) in self.branches.iter().enumerate() {
            let s = fams
                .iter()
                .filter(|(req, _, _)| m & req == *req)
                .map(|(_, opt, n)| n + (m & opt).count_ones())
                .max();
            if let Some(s) = s {
                if best.is_none_or(|(_, bs)| s > bs) {
                    best = Some((i, s));
                }
            }
        }
        best.map(|(i, _)| i)
    }

    /// [`best_branch`]`(rec, routes)`, where `routes` are the ones this table was made
    /// of.
    #[inline]
    pub fn best(&self, rec: &Record, routes: &[Vec<Family>]) -> Option<usize> {
        if !rec.btags().is_empty() {
            return best_branch(rec, routes);
        }
        let mut m = 0u64;
        for (i, l) in self.labels.iter().enumerate() {
            if rec.has(*l) {
                m |= 1 << i;
            }
        }
        match &self.lut {
            Some(lut) => match lut[m as usize] {
                RouteTable::NONE => None,
                b => Some(b as usize),
            },
            None => self.best_of(m),
        }
    }
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

    /// A compiled route table (issue 34) picks the branch `best_branch` picks, for
    /// random branch types (required and optional labels, binding tags, initialiser
    /// branches) and records.
    #[test]
    fn a_route_table_picks_the_best_branch() {
        use proptest::prelude::*;
        let pool = [
            Label::field("A"),
            Label::field("B"),
            Label::tag("t"),
            Label::tag("u"),
            Label::btag("b"),
        ];
        let labels = proptest::collection::vec(0usize..5, 0..4).prop_map(move |ix| {
            let mut v: Vec<Label> = ix.into_iter().map(|i| pool[i]).collect();
            v.sort();
            v.dedup();
            v
        });
        let family = (labels.clone(), labels.clone()).prop_map(|(labels, optional)| {
            let optional = optional
                .into_iter()
                .filter(|l| !labels.contains(l))
                .collect();
            Family { labels, optional }
        });
        let routes = proptest::collection::vec(proptest::collection::vec(family, 0..3), 1..4);
        proptest!(ProptestConfig::with_cases(2000), |(routes in routes, rec in labels)| {
            let table = RouteTable::new(&routes).expect("few labels");
            let mut r = Record::new();
            for l in rec {
                match l.kind() {
                    LabelKind::Field => r.set_field(l, Some(Value::int(1))),
                    _ => r.set_tag(l, 1),
                }
            }
            // With its lookup table, and without (more labels than the table takes).
            prop_assert!(table.lut.is_some());
            let mut scored = table.clone();
            scored.lut = None;
            prop_assert_eq!(table.best(&r, &routes), best_branch(&r, &routes));
            prop_assert_eq!(scored.best(&r, &routes), best_branch(&r, &routes));
        });
    }
}
