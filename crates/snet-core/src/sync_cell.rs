//! Synchrocells (spec §7.6): the only stateful built-in entity.

use crate::net::GuardedPattern;
use crate::pattern;
use crate::record::{Rec, Record};
use crate::tagexpr::EvalError;

#[derive(Debug)]
enum Slot {
    Empty,
    /// Holds the record stored for this pattern, in the slot it arrived in (issue 34:
    /// stored and merged without copying it).
    Own(Rec),
    /// Filled as a side effect of the record stored in the given lower slot.
    Side(usize),
}

/// What the cell did with a record.
#[derive(Debug)]
pub enum SyncOutcome {
    /// Forward the record unchanged.
    Forward(Rec),
    /// The record was stored; nothing leaves.
    Stored,
    /// The cell fired: emit the merged record, made of this record and the given
    /// number of records stored earlier.
    Fired(Rec, usize),
}

/// The slots of a cell, one per pattern, and whether it fired. Inline for one or two
/// patterns, the common case (no allocation per cell: a split of synchrocells makes one
/// per index value, decision 60); on the heap for more. 32 bytes: the variant sits in
/// a spare value of the first inline slot's tag, so that a cell keeps an instance
/// ([`crate::inst::Inst`]) at 120 bytes.
#[derive(Debug)]
enum Slots {
    One(Slot),
    Two([Slot; 2]),
    Many(Box<[Slot]>),
    /// The cell fired: an identity forever, its records merged and gone.
    Fired,
}

impl Slots {
    fn new(n: usize) -> Slots {
        match n {
            1 => Slots::One(Slot::Empty),
            2 => Slots::Two([Slot::Empty, Slot::Empty]),
            _ => Slots::Many((0..n).map(|_| Slot::Empty).collect()),
        }
    }

    fn as_slice(&self) -> &[Slot] {
        match self {
            Slots::One(s) => std::slice::from_ref(s),
            Slots::Two(s) => s,
            Slots::Many(s) => s,
            Slots::Fired => &[],
        }
    }

    fn as_mut_slice(&mut self) -> &mut [Slot] {
        match self {
            Slots::One(s) => std::slice::from_mut(s),
            Slots::Two(s) => s,
            Slots::Many(s) => s,
            Slots::Fired => &mut [],
        }
    }
}

/// The state of one synchrocell instance.
#[derive(Debug)]
pub struct SyncCell {
    /// One per pattern while the cell waits; none once it fired.
    slots: Slots,
}

impl SyncCell {
    /// A waiting cell for `n` patterns.
    pub fn new(n: usize) -> SyncCell {
        SyncCell {
            slots: Slots::new(n),
        }
    }

    /// True once the cell has fired (it is then an identity forever).
    pub fn is_fired(&self) -> bool {
        matches!(self.slots, Slots::Fired)
    }

    /// Number of records currently stored.
    pub fn stored(&self) -> usize {
        self.slots
            .as_slice()
            .iter()
            .filter(|s| matches!(s, Slot::Own(_)))
            .count()
    }

    /// Drops the stored records (end of run) and returns how many there were.
    pub fn discard(&mut self) -> usize {
        let n = self.stored();
        for s in self.slots.as_mut_slice() {
            *s = Slot::Empty;
        }
        n
    }

    /// Handles one record (spec §7.6 steps 1–4). A guard that fails to evaluate hands
    /// the record back with the error (for the diagnostic).
    pub fn handle(
        &mut self,
        pats: &[GuardedPattern],
        x: Rec,
    ) -> Result<SyncOutcome, Box<(EvalError, Record)>> {
        if self.is_fired() {
            return Ok(SyncOutcome::Forward(x));
        }
        let slots = self.slots.as_mut_slice();
        let mut first = None;
        let mut m = Vec::new();
        for (i, p) in pats.iter().enumerate() {
            if !matches!(slots[i], Slot::Empty) {
                continue;
            }
            let hit = match pattern::matches(&x, p) {
                Ok(h) => h,
                Err(e) => return Err(Box::new((e, x.into_record()))),
            };
            if hit {
                if first.is_none() {
                    first = Some(i);
                } else {
                    m.push(i);
                }
            }
        }
        let Some(first) = first else {
            return Ok(SyncOutcome::Forward(x));
        };
        for i in m {
            slots[i] = Slot::Side(first);
        }
        slots[first] = Slot::Own(x);
        if slots.iter().any(|s| matches!(s, Slot::Empty)) {
            return Ok(SyncOutcome::Stored);
        }
        // Records stored before this one, now merged with it.
        let earlier = slots.iter().filter(|s| matches!(s, Slot::Own(_))).count() - 1;
        Ok(SyncOutcome::Fired(self.merge(pats), earlier))
    }

    /// Fires the cell: merges its records (every slot is filled).
    fn merge(&mut self, pats: &[GuardedPattern]) -> Rec {
        let mut fired = std::mem::replace(&mut self.slots, Slots::Fired);
        let slots = fired.as_mut_slice();
        // The slot whose record filled pattern `j` (a record that matched several
        // patterns owns them all; it sits in the first, spec §7.6 edge case).
        let owner: smallvec::SmallVec<[usize; 4]> = slots
            .iter()
            .enumerate()
            .map(|(j, s)| match s {
                Slot::Side(i) => *i,
                _ => j,
            })
            .collect();
        // Slot 0 is never a side slot (a side slot points to an earlier one).
        let mut merged = match std::mem::replace(&mut slots[0], Slot::Empty) {
            Slot::Own(r) => r,
            _ => Rec::new(Record::default()),
        };
        for (i, slot) in slots.iter_mut().enumerate().skip(1) {
            let Slot::Own(y) = std::mem::replace(slot, Slot::Empty) else {
                continue;
            };
            // Labels of every pattern this record filled, in pattern order.
            let names = (0..pats.len())
                .filter(|&j| owner[j] == i)
                .flat_map(|j| pats[j].labels.iter().copied());
            for l in names {
                match l.kind() {
                    crate::LabelKind::Field => {
                        if let Some(v) = y.field(l) {
                            merged.set_field(l, v.clone());
                        }
                    }
                    crate::LabelKind::Tag => {
                        if let Some(v) = y.tag(l) {
                            merged.set_tag(l, v);
                        }
                    }
                    crate::LabelKind::BTag => {}
                }
            }
        }
        merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::variant;
    use crate::{Label, Value};

    fn pat(ls: Vec<Label>) -> GuardedPattern {
        GuardedPattern {
            labels: variant(ls),
            guard: None,
        }
    }

    #[test]
    fn merge_order_follows_patterns_not_arrival() {
        // Spec Appendix A.3.
        let pats = vec![
            pat(vec![Label::field("a"), Label::tag("t")]),
            pat(vec![Label::field("b")]),
        ];
        let mut c = SyncCell::new(2);
        let r1 = Record::new()
            .with_field("b", Value::int(1))
            .with_tag("t", 7)
            .with_field("c", Value::int(2));
        let r2 = Record::new()
            .with_field("a", Value::int(3))
            .with_tag("t", 5)
            .with_field("d", Value::int(4));
        assert!(matches!(
            c.handle(&pats, Rec::new(r1)).unwrap(),
            SyncOutcome::Stored
        ));
        let SyncOutcome::Fired(m, 1) = c.handle(&pats, Rec::new(r2)).unwrap() else {
            panic!("no fire")
        };
        assert_eq!(m.tag(Label::tag("t")), Some(5));
        assert!(m.has(Label::field("d")) && m.has(Label::field("b")) && !m.has(Label::field("c")));
        let r3 = Record::new().with_field("a", Value::int(9));
        assert!(matches!(
            c.handle(&pats, Rec::new(r3)).unwrap(),
            SyncOutcome::Forward(_)
        ));
    }

    #[test]
    fn records_for_full_slots_pass_through() {
        let pats = vec![pat(vec![Label::field("a")]), pat(vec![Label::field("b")])];
        let mut c = SyncCell::new(2);
        let a = || Record::new().with_field("a", Value::int(1));
        assert!(matches!(
            c.handle(&pats, Rec::new(a())).unwrap(),
            SyncOutcome::Stored
        ));
        assert!(matches!(
            c.handle(&pats, Rec::new(a())).unwrap(),
            SyncOutcome::Forward(_)
        ));
        assert_eq!(c.stored(), 1);
    }

    #[test]
    fn one_pattern_fires_at_once_and_three_store_on_the_heap() {
        let a = || Record::new().with_field("a", Value::int(1));
        let mut one = SyncCell::new(1);
        let pats = vec![pat(vec![Label::field("a")])];
        assert!(matches!(
            one.handle(&pats, Rec::new(a())).unwrap(),
            SyncOutcome::Fired(_, 0)
        ));
        assert!(one.is_fired() && one.stored() == 0);

        let pats = vec![
            pat(vec![Label::field("a")]),
            pat(vec![Label::field("b")]),
            pat(vec![Label::field("c")]),
        ];
        let mut c = SyncCell::new(3);
        for l in ["a", "b"] {
            let r = Record::new().with_field(l, Value::int(2));
            assert!(matches!(
                c.handle(&pats, Rec::new(r)).unwrap(),
                SyncOutcome::Stored
            ));
        }
        assert!(!c.is_fired());
        assert_eq!(c.stored(), 2);
        let r = Record::new().with_field("c", Value::int(3));
        let SyncOutcome::Fired(m, 2) = c.handle(&pats, Rec::new(r)).unwrap() else {
            panic!("no fire")
        };
        assert!(["a", "b", "c"].iter().all(|l| m.has(Label::field(l))));
        assert!(c.is_fired() && c.stored() == 0);
        assert_eq!(c.discard(), 0);
    }
}
