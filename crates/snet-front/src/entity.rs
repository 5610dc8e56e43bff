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
//! 5. With a concurrency limit `K > 1` (seed 003 §4.7) up to `K` workers own the entity
//!    at once (a counter instead of a flag). Each pop then hands out the job's sequence
//!    number in stream order ([`Entity::pop_seq`], under the queue lock), and the
//!    engine's per-box collector walks the outputs of the invocations on in that order
//!    (`worker::Worker::run_concurrent`), so step 4 holds for the box as a whole.
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

use crate::sync::{lock, AtomicUsize, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;

/// The scheduler state of one box instance, generic over the job type.
#[derive(Debug)]
pub(crate) struct Entity<J> {
    /// Current owners (0 or 1 with `limit == 1`).
    owners: AtomicUsize,
    limit: usize,
    len: AtomicUsize,
    queue: Mutex<Queue<J>>,
}

/// The stream proper, and how many jobs left it (the next job's sequence number).
#[derive(Debug)]
struct Queue<J> {
    jobs: VecDeque<J>,
    popped: u64,
}

impl<J> Entity<J> {
    /// A free entity with an empty stream.
    #[cfg(any(test, loom))]
    pub(crate) fn new() -> Self {
        Entity::with_limit(1)
    }

    /// A free entity with an empty stream that up to `limit` workers may own at once.
    pub(crate) fn with_limit(limit: usize) -> Self {
        Entity {
            owners: AtomicUsize::new(0),
            limit: limit.max(1),
            len: AtomicUsize::new(0),
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                popped: 0,
            }),
        }
    }

    /// The concurrency limit (1: exclusive ownership).
    #[inline]
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Takes (a share of) ownership if fewer than `limit` workers own it (steps 1, 5).
    #[inline]
    pub(crate) fn try_acquire(&self) -> bool {
        if self.limit == 1 {
            // Acquire: pairs with the Release store in `release`.
            return self
                .owners
                .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok();
        }
        let mut cur = self.owners.load(Ordering::Relaxed);
        while cur < self.limit {
            // Acquire: pairs with the Release decrement in `release`.
            match self.owners.compare_exchange_weak(
                cur,
                cur + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
        false
    }

    /// Gives up (a share of) ownership (steps 1, 5). Only an owner calls this.
    #[inline]
    pub(crate) fn release(&self) {
        if self.limit == 1 {
            // Release: pairs with the Acquire CAS in `try_acquire`.
            self.owners.store(0, Ordering::Release);
        } else {
            // Release: pairs with the Acquire CAS in `try_acquire`.
            self.owners.fetch_sub(1, Ordering::Release);
        }
    }

    /// True if the entity cannot take another owner right now (a hint for thieves).
    #[inline]
    pub(crate) fn is_owned(&self) -> bool {
        self.owners.load(Ordering::Relaxed) >= self.limit
    }

    /// Appends a job to the stream (step 2). The caller hands out one licence.
    pub(crate) fn push(&self, job: J) {
        let mut q = lock(&self.queue);
        q.jobs.push_back(job);
        // Release: pairs with the Acquire load in `is_empty`.
        self.len.store(q.jobs.len(), Ordering::Release);
    }

    /// True if no job is queued.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        // Acquire: pairs with the Release stores in `push` and `pop`.
        self.len.load(Ordering::Acquire) == 0
    }

    /// Jobs queued (a snapshot).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// Takes the oldest job (step 2). Only an owner calls this.
    #[cfg(any(test, loom))]
    pub(crate) fn pop(&self) -> Option<J> {
        self.pop_seq().map(|(j, _)| j)
    }

    /// Takes the oldest job and its sequence number in the stream (steps 2, 5). Only an
    /// owner calls this.
    pub(crate) fn pop_seq(&self) -> Option<(J, u64)> {
        if self.is_empty() {
            return None;
        }
        let mut q = lock(&self.queue);
        let job = q.jobs.pop_front()?;
        let seq = q.popped;
        q.popped += 1;
        if q.jobs.is_empty() && q.jobs.capacity() > 16 {
            // A burst is over: give the memory back (many entities, few busy).
            q.jobs.shrink_to(4);
        }
        // Release: pairs with the Acquire load in `is_empty`.
        self.len.store(q.jobs.len(), Ordering::Release);
        Some((job, seq))
    }

    /// Moves `job` behind the queued jobs and returns the oldest one: what an owner
    /// that just acquired the entity to continue a record walk must run next. Only for
    /// `limit == 1` (the sequence numbers of step 5 are not kept).
    #[inline]
    pub(crate) fn push_pop(&self, job: J) -> J {
        if self.is_empty() {
            return job;
        }
        self.push_pop_slow(job)
    }

    #[cold]
    fn push_pop_slow(&self, job: J) -> J {
        debug_assert_eq!(self.limit, 1, "push_pop on a concurrent entity");
        let mut q = lock(&self.queue);
        q.jobs.push_back(job);
        let first = q.jobs.pop_front();
        // Release: pairs with the Acquire load in `is_empty`.
        self.len.store(q.jobs.len(), Ordering::Release);
        match first {
            Some(j) => j,
            None => unreachable!("the queue holds at least the job just pushed"),
        }
    }

    /// Removes every queued job (end of a failed run).
    pub(crate) fn drain(&self) -> Vec<J> {
        let mut q = lock(&self.queue);
        self.len.store(0, Ordering::Release);
        q.jobs.drain(..).collect()
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

    #[test]
    fn concurrent_entity_admits_up_to_its_limit_and_numbers_pops() {
        let e: Entity<u32> = Entity::with_limit(3);
        assert!(e.try_acquire() && e.try_acquire());
        assert!(!e.is_owned(), "two of three shares taken");
        assert!(e.try_acquire());
        assert!(e.is_owned());
        assert!(!e.try_acquire(), "a fourth owner is refused");
        e.release();
        assert!(e.try_acquire());
        for j in [10, 11, 12] {
            e.push(j);
        }
        assert_eq!(e.pop_seq(), Some((10, 0)));
        assert_eq!(e.pop_seq(), Some((11, 1)));
        e.push(13);
        assert_eq!(e.pop_seq(), Some((12, 2)));
        assert_eq!(e.pop_seq(), Some((13, 3)));
        assert_eq!(e.pop_seq(), None);
    }

    #[test]
    fn concurrent_acquire_never_exceeds_the_limit() {
        let e: Entity<u32> = Entity::with_limit(2);
        let peak = AtomicUsize::new(0);
        let now = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..20_000 {
                        if e.try_acquire() {
                            let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                            peak.fetch_max(n, Ordering::SeqCst);
                            now.fetch_sub(1, Ordering::SeqCst);
                            e.release();
                        }
                    }
                });
            }
        });
        assert!(peak.load(Ordering::SeqCst) <= 2);
        assert_eq!(e.owners.load(Ordering::SeqCst), 0);
    }
}
