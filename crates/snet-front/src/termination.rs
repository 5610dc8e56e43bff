//! Detecting the end of a run: input exhausted and no work left anywhere.
//!
//! # Protocol
//!
//! `pending` counts queued jobs plus *units* in progress (a unit is one input record's
//! walk, or one job taken from a stream, together with the record walk that follows
//! it).
//!
//! 1. A job is counted ([`Termination::add`]) before it becomes visible in a stream,
//!    by a worker whose own unit is still counted; an input record is counted under the
//!    input lock, before `input_done` can be set. So `pending` reaches zero only when
//!    no job is queued and no unit runs, and it can only grow again from the input.
//! 2. A unit ends with [`Termination::end_unit`] (`fetch_sub`, then read
//!    `input_done`); the input reader that sees the end of input calls
//!    [`Termination::input_ended`] (store `input_done`, then read `pending`).
//! 3. Whichever of the two sees both conditions sets `done`; with `SeqCst` on both
//!    sides at least one of them does (Dekker), so the run never hangs with nothing to
//!    do, and `done` is never set while work remains (1).
//!
//! # Memory ordering
//!
//! The two "write one flag, read the other" sequences of step 2 must not be reordered:
//! both put a `SeqCst` fence between their write and their read (operations are
//! `SeqCst` too, but fences are what loom models exactly).

use crate::sync::{fence, AtomicBool, AtomicUsize};
use std::sync::atomic::Ordering;

/// The termination state of one run.
#[derive(Debug)]
pub(crate) struct Termination {
    pending: AtomicUsize,
    input_done: AtomicBool,
    done: AtomicBool,
}

impl Termination {
    pub(crate) fn new() -> Termination {
        Termination {
            pending: AtomicUsize::new(0),
            input_done: AtomicBool::new(false),
            done: AtomicBool::new(false),
        }
    }

    /// Step 1: one more job or unit.
    #[inline]
    pub(crate) fn add(&self) {
        self.pending.fetch_add(1, Ordering::SeqCst);
    }

    /// Step 2: a unit ended. True if this call finished the run.
    #[inline]
    pub(crate) fn end_unit(&self) -> bool {
        if self.pending.fetch_sub(1, Ordering::SeqCst) != 1 {
            return false;
        }
        // SeqCst fence: pairs with the fence in `input_ended` (Dekker).
        fence(Ordering::SeqCst);
        self.input_done.load(Ordering::SeqCst) && !self.done.swap(true, Ordering::SeqCst)
    }

    /// Step 2: the input is exhausted. True if this call finished the run.
    pub(crate) fn input_ended(&self) -> bool {
        self.input_done.store(true, Ordering::SeqCst);
        // SeqCst fence: pairs with the fence in `end_unit` (Dekker).
        fence(Ordering::SeqCst);
        self.pending.load(Ordering::SeqCst) == 0 && !self.done.swap(true, Ordering::SeqCst)
    }

    /// True once the input is exhausted.
    #[inline]
    pub(crate) fn input_done(&self) -> bool {
        self.input_done.load(Ordering::SeqCst)
    }

    /// True if nothing is queued or running.
    pub(crate) fn idle(&self) -> bool {
        self.pending.load(Ordering::SeqCst) == 0
    }

    /// Step 3 seen from an idle worker: finishes the run if both conditions hold.
    pub(crate) fn check(&self) -> bool {
        self.input_done() && self.idle() && !self.done.swap(true, Ordering::SeqCst)
    }

    /// True once the run is finished.
    #[inline]
    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn finishes_exactly_once() {
        let t = Termination::new();
        t.add();
        assert!(!t.input_ended(), "a unit is still running");
        assert!(
            t.end_unit(),
            "the last unit after the end of input finishes"
        );
        assert!(t.is_done());
        assert!(!t.check(), "only once");
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    /// A worker runs a unit that queues one job, which a second worker runs, while the
    /// input reader sees the end of input: the run finishes exactly once, and never
    /// before the queued job ran.
    #[test]
    fn loom_finishes_once_and_not_early() {
        loom::model(|| {
            let t = Arc::new(Termination::new());
            let ran = Arc::new(AtomicBool::new(false));
            let queued = Arc::new(AtomicBool::new(false));
            // The unit of the last input record was counted under the input lock.
            t.add();
            let (t1, q1, r1) = (t.clone(), queued.clone(), ran.clone());
            let producer = thread::spawn(move || {
                t1.add(); // a job for another worker
                q1.store(true, Ordering::SeqCst);
                let fin = t1.end_unit();
                assert!(!fin || r1.load(Ordering::SeqCst), "finished early");
                fin
            });
            let (t2, q2, r2) = (t.clone(), queued.clone(), ran.clone());
            let consumer = thread::spawn(move || {
                while !q2.load(Ordering::SeqCst) {
                    thread::yield_now();
                }
                r2.store(true, Ordering::SeqCst);
                t2.end_unit()
            });
            let reader = t.input_ended();
            assert!(!reader || ran.load(Ordering::SeqCst), "finished early");
            let a = producer.join().unwrap();
            let b = consumer.join().unwrap();
            let finished = [a, b, reader].iter().filter(|x| **x).count();
            assert_eq!(finished, 1, "finished exactly once");
            assert!(ran.load(Ordering::SeqCst));
            assert!(t.is_done());
        });
    }
}
