//! The wait-free join counter of seed 002 §4.6.2.
//!
//! A frame whose continuation may be stolen keeps two counters:
//!
//! * `steals` — a plain (non-atomic) counter incremented by each thief *when it starts
//!   running the continuation*. Only one worker runs a given continuation at a time, so
//!   the continuation's runs are serialised and no atomic is needed ("thief side").
//! * `active` — an atomic word starting at [`ACTIVE_INIT`], larger than any possible
//!   number of steals. Every strand that ends at the join (each victim whose child
//!   returned and found its continuation stolen, plus the strand that runs the
//!   continuation up to the join) decrements it once; whoever brings it to zero is the
//!   *last finisher* and resumes the code after the join. No one waits and no lock is
//!   taken: every step is a bounded number of atomic operations.
//!
//! # Protocol
//!
//! 1. Thief: `record_steal()` before running the continuation (`steals += 1`).
//! 2. Victim (child returned, continuation gone): `arrive_child()`:
//!    `active -= 1`.
//! 3. Continuation runner at the join: `arrive_at_join()`: no more steals can happen,
//!    so it fixes `active` up by the steals that did *not* happen and arrives in the
//!    same atomic step: `active -= (ACTIVE_INIT - (steals + 1)) + 1`.
//!
//! After all `steals + 1` arrivals, `active = INIT - (INIT - (s + 1)) - (s + 1) = 0`.
//! Before step 3 the value stays ≥ `INIT - s > 0`, so no victim can mistake itself
//! for the last. One fused subtraction (rather than the thesis's two) keeps the word
//! from exposing the intermediate value.
//!
//! # Memory ordering
//!
//! Every arrival is `AcqRel`: the Release half publishes what the arriving strand
//! wrote (e.g. a child's result), the Acquire half of the last arrival makes all of it
//! visible to the strand that continues after the join.

use crate::sync::{AtomicU64, Ordering, UnsafeCell};

/// Initial value of the active-children word ("INT_MAX" in the thesis).
pub(crate) const ACTIVE_INIT: u64 = 1 << 62;

/// Whether an arriving strand is the last one at the join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// All other strands have arrived: continue after the join.
    Last,
    /// Others are still running; one of them will continue after the join.
    Early,
}

/// The two counters of §4.6.2.
#[derive(Debug)]
pub(crate) struct JoinCounter {
    active: AtomicU64,
    steals: UnsafeCell<u64>,
}

impl JoinCounter {
    /// A counter for a frame that has not been stolen.
    #[inline]
    pub(crate) fn new() -> Self {
        Self {
            active: AtomicU64::new(ACTIVE_INIT),
            steals: UnsafeCell::new(0),
        }
    }

    /// Step 1: a thief starts running the continuation.
    ///
    /// # Safety
    /// Calls to `record_steal` and `arrive_at_join` on one counter must not overlap
    /// (they are made by the single strand currently running the continuation).
    #[inline]
    pub(crate) unsafe fn record_steal(&self) {
        // SAFETY: serialised by the caller's contract.
        self.steals.with_mut(|s| unsafe { *s += 1 });
    }

    /// Step 2: a victim's child returned and its continuation had been stolen.
    #[inline]
    pub(crate) fn arrive_child(&self) -> Arrival {
        // AcqRel: see "Memory ordering" in the module docs.
        if self.active.fetch_sub(1, Ordering::AcqRel) == 1 {
            Arrival::Last
        } else {
            Arrival::Early
        }
    }

    /// Step 3: the continuation reached the join.
    ///
    /// # Safety
    /// As for [`JoinCounter::record_steal`].
    #[inline]
    pub(crate) unsafe fn arrive_at_join(&self) -> Arrival {
        // SAFETY: serialised by the caller's contract.
        let steals = self.steals.with(|s| unsafe { *s });
        let delta = ACTIVE_INIT - (steals + 1) + 1;
        // AcqRel: see "Memory ordering" in the module docs.
        if self.active.fetch_sub(delta, Ordering::AcqRel) == delta {
            Arrival::Last
        } else {
            Arrival::Early
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn sequential_orders_all_pick_exactly_one_last() {
        // Two steals (continuation migrated twice): three strands arrive.
        let c = JoinCounter::new();
        // SAFETY: single-threaded test.
        unsafe {
            c.record_steal();
            c.record_steal();
        }
        assert_eq!(c.arrive_child(), Arrival::Early);
        assert_eq!(c.arrive_child(), Arrival::Early);
        // SAFETY: single-threaded test.
        assert_eq!(unsafe { c.arrive_at_join() }, Arrival::Last);

        let c = JoinCounter::new();
        // SAFETY: single-threaded test.
        unsafe { c.record_steal() };
        // SAFETY: single-threaded test.
        assert_eq!(unsafe { c.arrive_at_join() }, Arrival::Early);
        assert_eq!(c.arrive_child(), Arrival::Last);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::sync::Arc;
    use loom::thread;

    /// Victim and thief of a binary join arrive concurrently: exactly one is last, and
    /// the last sees the other's result.
    #[test]
    fn loom_binary_join_one_last_and_result_visible() {
        loom::model(|| {
            let c = Arc::new(JoinCounter::new());
            let result_b = Arc::new(UnsafeCell::new(0u32));
            let thief = {
                let (c, result_b) = (c.clone(), result_b.clone());
                thread::spawn(move || {
                    // SAFETY: only this thread runs the continuation.
                    unsafe { c.record_steal() };
                    // SAFETY: the victim reads result_b only after being last.
                    result_b.with_mut(|p| unsafe { *p = 7 });
                    // SAFETY: as above.
                    unsafe { c.arrive_at_join() }
                })
            };
            let victim = c.arrive_child();
            let thief = thief.join().unwrap();
            assert_ne!(victim, thief);
            if victim == Arrival::Last {
                // SAFETY: the thief arrived before us (AcqRel), so it is done writing.
                assert_eq!(result_b.with(|p| unsafe { *p }), 7);
            }
        });
    }

    /// A continuation stolen twice (three strands): exactly one is last.
    #[test]
    fn loom_two_steals_one_last() {
        loom::model(|| {
            let c = Arc::new(JoinCounter::new());
            // SAFETY: the continuation runs on this thread first (two steals happened
            // before the victims below could arrive in this model).
            unsafe {
                c.record_steal();
                c.record_steal();
            }
            let victims: Vec<_> = (0..2)
                .map(|_| {
                    let c = c.clone();
                    thread::spawn(move || c.arrive_child())
                })
                .collect();
            // SAFETY: only this thread runs the continuation.
            let mut lasts = (unsafe { c.arrive_at_join() } == Arrival::Last) as usize;
            for v in victims {
                lasts += (v.join().unwrap() == Arrival::Last) as usize;
            }
            assert_eq!(lasts, 1);
        });
    }
}
