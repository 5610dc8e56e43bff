//! One box instance as the scheduler sees it: an ownership flag and its unbounded
//! input stream (seed 003 §4.4).
//!
//! # Protocol
//!
//! 1. A worker invokes an entity only while it *owns* it: [`Entity::try_acquire`] sets
//!    the flag with a CAS; [`Entity::release`] clears it. Nobody ever waits for the
//!    flag: a worker that fails to acquire does something else.
//! 2. Any worker may [`Entity::push`] a job; only the owner may [`Entity::pop`]. So
//!    jobs leave the stream in the order they entered it, and one entity handles one
//!    record at a time (stream order, spec §7.1).
//! 3. Every push is accompanied by one *read licence* handed to some work list
//!    (`worklist`), so the number of licences for an entity is always at least the
//!    number of queued jobs. An owner may pop jobs it holds no licence for (record
//!    walking, §4.5); the licences those jobs came with then find the stream empty and
//!    are dropped ("stale"). Hence: no licence anywhere ⇒ the stream is empty, and a
//!    queued job is never forgotten.
//! 4. A worker that moves a record from entity `X` to entity `Y` pushes it into `Y` (or
//!    acquires `Y`) *before* it releases `X`. So the next invocation of `X`, on any
//!    worker, cannot overtake it at `Y`.
//!
//! # Memory ordering
//!
//! `try_acquire` is an `Acquire` CAS pairing with the `Release` store in `release`: the
//! new owner sees everything the previous owner did, including the records it pushed
//! elsewhere (step 4). `len` mirrors the queue length; it is written under the queue
//! lock with `Release` and read with `Acquire` by [`Entity::is_empty`], so an owner
//! that sees `len == 0` also sees that no job pushed before (in happens-before order)
//! is waiting; a concurrent push that it does not see is unordered with its own
//! record anyway.

use crate::sync::{lock, AtomicBool, AtomicUsize, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;

/// The scheduler state of one box instance, generic over the job type.
#[derive(Debug)]
pub(crate) struct Entity<J> {
    owned: AtomicBool,
    len: AtomicUsize,
    queue: Mutex<VecDeque<J>>,
}

impl<J> Entity<J> {
    /// A free entity with an empty stream.
    pub(crate) fn new() -> Self {
        Entity {
            owned: AtomicBool::new(false),
            len: AtomicUsize::new(0),
            queue: Mutex::new(VecDeque::new()),
        }
    }

    /// Takes ownership if the entity is free (step 1).
    #[inline]
    pub(crate) fn try_acquire(&self) -> bool {
        // Acquire: pairs with the Release store in `release`.
        self.owned
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Gives up ownership (step 1). Only the owner calls this.
    #[inline]
    pub(crate) fn release(&self) {
        // Release: pairs with the Acquire CAS in `try_acquire`.
        self.owned.store(false, Ordering::Release);
    }

    /// True if some worker owns the entity right now (a hint for thieves).
    #[inline]
    pub(crate) fn is_owned(&self) -> bool {
        self.owned.load(Ordering::Relaxed)
    }

    /// Appends a job to the stream (step 2). The caller hands out one licence.
    pub(crate) fn push(&self, job: J) {
        let mut q = lock(&self.queue);
        q.push_back(job);
        // Release: pairs with the Acquire load in `is_empty`.
        self.len.store(q.len(), Ordering::Release);
    }

    /// True if no job is queued.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        // Acquire: pairs with the Release stores in `push` and `pop`.
        self.len.load(Ordering::Acquire) == 0
    }

    /// Takes the oldest job (step 2). Only the owner calls this.
    pub(crate) fn pop(&self) -> Option<J> {
        if self.is_empty() {
            return None;
        }
        let mut q = lock(&self.queue);
        let job = q.pop_front();
        if q.is_empty() && q.capacity() > 16 {
            // A burst is over: give the memory back (many entities, few busy).
            q.shrink_to(4);
        }
        // Release: pairs with the Acquire load in `is_empty`.
        self.len.store(q.len(), Ordering::Release);
        job
    }

    /// Moves `job` behind the queued jobs and returns the oldest one: what an owner
    /// that just acquired the entity to continue a record walk must run next.
    #[inline]
    pub(crate) fn push_pop(&self, job: J) -> J {
        if self.is_empty() {
            return job;
        }
        self.push_pop_slow(job)
    }

    #[cold]
    fn push_pop_slow(&self, job: J) -> J {
        let mut q = lock(&self.queue);
        q.push_back(job);
        let first = q.pop_front();
        // Release: pairs with the Acquire load in `is_empty`.
        self.len.store(q.len(), Ordering::Release);
        match first {
            Some(j) => j,
            None => unreachable!("the queue holds at least the job just pushed"),
        }
    }

    /// Removes every queued job (end of a failed run).
    pub(crate) fn drain(&self) -> Vec<J> {
        let mut q = lock(&self.queue);
        self.len.store(0, Ordering::Release);
        q.drain(..).collect()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn one_owner_at_a_time() {
        let e: Entity<u32> = Entity::new();
        assert!(e.try_acquire());
        assert!(e.is_owned());
        assert!(!e.try_acquire());
        e.release();
        assert!(!e.is_owned());
        assert!(e.try_acquire());
    }

    #[test]
    fn fifo_and_push_pop() {
        let e: Entity<u32> = Entity::new();
        assert_eq!(
            e.push_pop(7),
            7,
            "empty stream: the walked record runs at once"
        );
        e.push(1);
        e.push(2);
        assert_eq!(e.push_pop(3), 1);
        assert_eq!(e.pop(), Some(2));
        assert_eq!(e.pop(), Some(3));
        assert_eq!(e.pop(), None);
        assert!(e.is_empty());
    }
}
