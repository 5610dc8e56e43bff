//! A worker's work list: references to non-empty streams with read licences, ordered
//! front-first (seed 003 §4.4, §4.6).
//!
//! # Protocol
//!
//! 1. A worker that pushes a job into an entity's stream adds one licence for that
//!    entity to its *own* list ([`WorkList::add`]); licences for one entity are kept in
//!    one stream reference with a counter.
//! 2. The owner of the list takes work with [`WorkList::take`]: it visits references
//!    from the front (the entity nearest the network output first) and stops at the
//!    first whose entity it manages to acquire; that reference loses one licence and is
//!    removed when it has none left. Front-first is a preference, not a licence to
//!    starve: every [`FAIR_EVERY`]-th take visits the references round-robin from a
//!    cursor instead, so a stream behind a steady flow of work nearer the output (a
//!    collector fed back to an earlier stage, say) is served within `FAIR_EVERY` times
//!    the number of references takes.
//! 3. An idle worker (a thief) calls [`WorkList::steal_half`] on a victim's list: at
//!    most one thief at a time (the `thief` flag), and it never waits for the list
//!    lock (`try_lock`); it takes half (rounded up) of the licences of the front-most
//!    reference whose entity is currently free and adds them to its own list.
//! 4. Licences only move between lists (3) or are consumed (2), so the licences of an
//!    entity across all lists never drop below its queued jobs (see `entity`).
//!
//! Races ruled out: two thieves emptying one victim at once (flag in 3); a thief
//! blocking a victim that wants its own list (`try_lock` in 3); a licence lost between
//! victim and thief (both update the reference under the list lock).
//!
//! # Memory ordering
//!
//! The map lives under a mutex. `refs` mirrors the number of references with `SeqCst`
//! stores so that a worker about to sleep, which reads it after announcing itself
//! (`sleep`), and a worker adding work, which then checks for sleepers, cannot miss
//! each other. The `thief` flag is an `Acquire` swap paired with a `Release` store.

use crate::sync::{lock, try_lock, AtomicBool, AtomicUsize, Mutex};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

/// Orders stream references: deeper streams (nearer the output) first, then by entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    back: u32,
    id: usize,
}

impl Key {
    /// The key of an entity at `depth` (larger is nearer the output) with unique `id`.
    pub(crate) fn new(depth: u32, id: usize) -> Key {
        Key {
            back: u32::MAX - depth,
            id,
        }
    }
}

#[derive(Debug)]
struct StreamRef<E> {
    entity: E,
    licences: u32,
}

/// One take in this many is round-robin instead of front-first (see protocol step 2).
pub(crate) const FAIR_EVERY: u32 = 8;

/// The references of a list and the state of its round-robin takes.
#[derive(Debug)]
struct Refs<E> {
    map: BTreeMap<Key, StreamRef<E>>,
    /// Takes since the last round-robin one.
    takes: u32,
    /// The key the last round-robin take served; the next starts after it.
    cursor: Option<Key>,
}

/// A worker's licences, shared with thieves.
#[derive(Debug)]
pub(crate) struct WorkList<E> {
    map: Mutex<Refs<E>>,
    refs: AtomicUsize,
    thief: AtomicBool,
}

impl<E: Clone> WorkList<E> {
    /// An empty list.
    pub(crate) fn new() -> Self {
        WorkList {
            map: Mutex::new(Refs {
                map: BTreeMap::new(),
                takes: 0,
                cursor: None,
            }),
            refs: AtomicUsize::new(0),
            thief: AtomicBool::new(false),
        }
    }

    /// True if the list holds no licence.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.refs.load(Ordering::SeqCst) == 0
    }

    /// True if some licence is for an entity `is_free` says could be owned now (a
    /// sleeper's check: licences for busy entities are work for their owners).
    pub(crate) fn has_free(&self, mut is_free: impl FnMut(&E) -> bool) -> bool {
        if self.is_empty() {
            return false;
        }
        lock(&self.map).map.values().any(|r| is_free(&r.entity))
    }

    /// Adds `n` licences for the entity with `key` (step 1); `entity` makes the
    /// reference if the list has none for it yet.
    pub(crate) fn add(&self, key: Key, n: u32, entity: impl FnOnce() -> E) {
        let mut g = lock(&self.map);
        let m = &mut g.map;
        m.entry(key)
            .or_insert_with(|| StreamRef {
                entity: entity(),
                licences: 0,
            })
            .licences += n;
        // SeqCst: pairs with the sleeper's check in `sleep` (see module doc).
        self.refs.store(m.len(), Ordering::SeqCst);
    }

    /// Consumes one licence of the front-most stream whose entity `try_acquire`
    /// manages to own (step 2); returns that entity, owned by the caller.
    pub(crate) fn take(&self, mut try_acquire: impl FnMut(&E) -> bool) -> Option<E> {
        if self.is_empty() {
            return None;
        }
        let mut g = lock(&self.map);
        g.takes += 1;
        let fair = g.takes >= FAIR_EVERY;
        let key = if fair {
            g.takes = 0;
            // Round-robin: the first acquirable reference after the cursor, wrapping.
            let after = match g.cursor {
                Some(c) => g
                    .map
                    .range((std::ops::Bound::Excluded(c), std::ops::Bound::Unbounded))
                    .find(|(_, r)| try_acquire(&r.entity))
                    .map(|(k, _)| *k),
                None => None,
            };
            let key = match after {
                Some(k) => k,
                None => *g.map.iter().find(|(_, r)| try_acquire(&r.entity))?.0,
            };
            g.cursor = Some(key);
            key
        } else {
            *g.map.iter().find(|(_, r)| try_acquire(&r.entity))?.0
        };
        let m = &mut g.map;
        let r = m.get_mut(&key)?;
        r.licences -= 1;
        let e = if r.licences == 0 {
            let r = m.remove(&key)?;
            // SeqCst: see module doc.
            self.refs.store(m.len(), Ordering::SeqCst);
            r.entity
        } else {
            r.entity.clone()
        };
        Some(e)
    }

    /// A thief takes half (rounded up) of the licences of the front-most stream whose
    /// entity `is_free` (step 3). `None` if another thief is here, the victim holds its
    /// lock, or no stream qualifies.
    pub(crate) fn steal_half(&self, mut is_free: impl FnMut(&E) -> bool) -> Option<(Key, E, u32)> {
        if self.is_empty() {
            return None;
        }
        // Acquire: pairs with the Release store below by the previous thief.
        if self.thief.swap(true, Ordering::Acquire) {
            return None;
        }
        let got = try_lock(&self.map).and_then(|mut g| {
            let m = &mut g.map;
            let key = *m.iter().find(|(_, r)| is_free(&r.entity))?.0;
            let r = m.get_mut(&key)?;
            let n = r.licences.div_ceil(2);
            r.licences -= n;
            let e = if r.licences == 0 {
                let r = m.remove(&key)?;
                // SeqCst: see module doc.
                self.refs.store(m.len(), Ordering::SeqCst);
                r.entity
            } else {
                r.entity.clone()
            };
            Some((key, e, n))
        });
        // Release: pairs with the Acquire swap above by the next thief.
        self.thief.store(false, Ordering::Release);
        got
    }

    /// Removes every reference (end of a failed run).
    pub(crate) fn drain(&self) -> Vec<E> {
        let mut g = lock(&self.map);
        self.refs.store(0, Ordering::SeqCst);
        std::mem::take(&mut g.map)
            .into_values()
            .map(|r| r.entity)
            .collect()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn front_first_and_counted() {
        let l: WorkList<u32> = WorkList::new();
        l.add(Key::new(1, 10), 2, || 10);
        l.add(Key::new(5, 50), 1, || 50);
        l.add(Key::new(1, 10), 1, || unreachable!("reference exists"));
        // Deepest first; a busy entity is skipped.
        assert_eq!(l.take(|e| *e != 50), Some(10));
        assert_eq!(l.take(|_| true), Some(50));
        assert_eq!(l.take(|_| true), Some(10));
        assert!(!l.is_empty());
        assert_eq!(l.take(|_| true), Some(10));
        assert!(l.is_empty());
        assert_eq!(l.take(|_| true), None);
    }

    #[test]
    fn a_stream_behind_steady_work_nearer_the_output_is_not_starved() {
        // Entity 1 is far from the output; entity 9, nearer, gets a new licence before
        // every take (a producer that never runs dry). Front-first alone would never
        // serve 1 (issue 24, item 4: a collector starved by its own producers).
        let l: WorkList<u32> = WorkList::new();
        l.add(Key::new(1, 1), 1, || 1);
        let mut served = None;
        for take in 1..=100u32 {
            l.add(Key::new(9, 9), 1, || 9);
            if l.take(|_| true) == Some(1) {
                served = Some(take);
                break;
            }
        }
        let served = served.expect("the far stream was starved");
        assert!(served <= 2 * FAIR_EVERY, "served only at take {served}");
        // Round-robin continues after the cursor: with three streams, each is served
        // within FAIR_EVERY * 3 takes.
        let l: WorkList<u32> = WorkList::new();
        let mut seen = [0u32; 3];
        for _ in 0..(FAIR_EVERY * 3 * 4) {
            for (i, d) in [(0u32, 1u32), (1, 2), (2, 9)] {
                if seen[i as usize] < 1000 {
                    l.add(Key::new(d, i as usize), 1, || i);
                }
            }
            let e = l.take(|_| true).unwrap();
            seen[e as usize] += 1;
        }
        assert!(seen.iter().all(|n| *n >= 2), "{seen:?}");
    }

    #[test]
    fn steal_takes_half_rounded_up_from_the_front() {
        let l: WorkList<u32> = WorkList::new();
        l.add(Key::new(1, 1), 5, || 1);
        l.add(Key::new(2, 2), 3, || 2);
        let (_, e, n) = l.steal_half(|_| true).expect("work to steal");
        assert_eq!((e, n), (2, 2));
        let (_, e, n) = l.steal_half(|e| *e == 1).expect("work to steal");
        assert_eq!((e, n), (1, 3));
        assert_eq!(l.take(|_| true), Some(2));
        assert_eq!(l.take(|_| true), Some(1));
        assert_eq!(l.take(|_| true), Some(1));
        assert!(l.is_empty());
    }
}
