//! Parking idle workers without losing wake-ups.
//!
//! # Protocol
//!
//! Sleeper (worker `i`, after spinning without finding work):
//! 1. [`Sleep::announce`]: mark `i` parked, count it in `sleepers`, full fence;
//! 2. look for work once more (work lists, input, termination, stop flag);
//! 3. if there is some: [`Sleep::cancel`] and go back to work;
//! 4. else [`Sleep::park`] until woken (outside loom with a timeout as a safety net),
//!    then [`Sleep::cancel`] (a no-op if a waker already cleared the mark).
//!
//! Waker (after publishing work):
//! 1. full fence, then read `sleepers`; if zero, done (the common, cheap case);
//! 2. else clear the first parked mark it finds (CAS: one waker per sleeper), decrement
//!    `sleepers` and unpark that thread.
//!
//! Races ruled out: the lost wake-up (a sleeper checks for work after announcing, a
//! waker checks for sleepers after publishing; with a `SeqCst` fence on both sides one
//! of them sees the other: classic Dekker); a sleeper counted twice or decremented
//! twice (only the CAS that clears the mark decrements).
//!
//! # Memory ordering
//!
//! All operations on the marks and the counter are `SeqCst`, and both sides fence with
//! `SeqCst` between their write and their read, so work published with any ordering
//! before the waker's fence is visible to a sleeper whose announcement the waker missed.

use crate::sync::{current_thread, fence, lock, park, AtomicBool, AtomicUsize, Mutex, Thread};
use std::sync::atomic::Ordering;
use std::time::Duration;

#[derive(Debug)]
struct Slot {
    parked: AtomicBool,
    thread: Mutex<Option<Thread>>,
}

/// The sleep state of all workers of a run.
#[derive(Debug)]
pub(crate) struct Sleep {
    sleepers: AtomicUsize,
    slots: Vec<Slot>,
}

impl Sleep {
    /// Sleep state for `n` workers.
    pub(crate) fn new(n: usize) -> Sleep {
        Sleep {
            sleepers: AtomicUsize::new(0),
            slots: (0..n)
                .map(|_| Slot {
                    parked: AtomicBool::new(false),
                    thread: Mutex::new(None),
                })
                .collect(),
        }
    }

    /// Registers the calling thread as worker `i` (before it first sleeps).
    pub(crate) fn register(&self, i: usize) {
        *lock(&self.slots[i].thread) = Some(current_thread());
    }

    /// Sleeper step 1.
    pub(crate) fn announce(&self, i: usize) {
        self.slots[i].parked.store(true, Ordering::SeqCst);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        // SeqCst fence: pairs with the fence in `notify` (Dekker).
        fence(Ordering::SeqCst);
    }

    /// Sleeper steps 3 and 4 (after waking): withdraws the announcement if a waker has
    /// not already done so.
    pub(crate) fn cancel(&self, i: usize) {
        if self.slots[i]
            .parked
            .compare_exchange(true, false, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Sleeper step 4: parks until a waker clears the mark (or `timeout` passes, outside
    /// loom). Returns with the announcement still to be cancelled.
    pub(crate) fn park(&self, i: usize, timeout: Duration) {
        if self.slots[i].parked.load(Ordering::SeqCst) {
            park(timeout);
        }
    }

    /// Waker: wakes one parked worker if there is one.
    #[inline]
    pub(crate) fn notify_one(&self) {
        // SeqCst fence: pairs with the fence in `announce` (Dekker).
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) == 0 {
            return;
        }
        self.wake(false);
    }

    /// Waker: wakes every parked worker (termination, errors).
    pub(crate) fn notify_all(&self) {
        // SeqCst fence: pairs with the fence in `announce` (Dekker).
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) == 0 {
            return;
        }
        self.wake(true);
    }

    #[cold]
    fn wake(&self, all: bool) {
        for s in &self.slots {
            if s.parked
                .compare_exchange(true, false, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                self.sleepers.fetch_sub(1, Ordering::SeqCst);
                if let Some(t) = lock(&s.thread).as_ref() {
                    t.unpark();
                }
                if !all {
                    return;
                }
            }
        }
    }
}
