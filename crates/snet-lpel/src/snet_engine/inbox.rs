//! A box instance's inbox: one FIFO shared by every producer, with a bounded
//! capacity, a consumer task created on demand, and blocked producers.
//!
//! All state sits behind one mutex, so "check and register as waiter" and "change and
//! claim the waiter" are atomic (see `park`). Nobody suspends while holding it.
//!
//! # Consumer lifecycle
//!
//! * `Absent` — no task. The producer that queues a job into an inbox without a
//!   consumer marks it `Active`, bumps the incarnation number and spawns the task.
//! * `Active` — a task exists and is running or ready.
//! * `Parked` — the task found the inbox empty and blocked. The next producer marks it
//!   `Active` and wakes it. An evictor (too many parked tasks, or the end of the run)
//!   marks it `Absent` and wakes it; the task then sees that it is no longer the
//!   inbox's current incarnation and ends, freeing its stack.
//!
//! # Producers
//!
//! A blocking push into an inbox holding `capacity` jobs registers the producer and
//! blocks it. Every pop that leaves fewer than `capacity` jobs wakes the oldest
//! registered producer, which retries. A registered producer is therefore woken by a
//! later pop: the inbox is full, so its consumer is `Active` and keeps popping.

use super::park::{block, Waiter};
use crate::stream::{account_external, external_meta, StreamMeta};
use crate::task::TaskState;
use snet_core::det::Ctx;
use snet_core::Record;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

/// One pending box invocation: a record (or `None` for an initialiser) and its
/// causal context.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) rec: Option<Record>,
    pub(crate) ctx: Ctx,
}

/// The consumer side of an inbox.
#[derive(Debug)]
enum Consumer {
    Absent,
    Active,
    Parked { waiter: Waiter, gen: u64 },
}

#[derive(Debug)]
struct Inner {
    queue: VecDeque<Job>,
    consumer: Consumer,
    /// Incarnation of the current consumer task.
    inc: u64,
    /// Park counter (identifies one park in the LRU list of parked consumers).
    gen: u64,
    producers: VecDeque<Waiter>,
}

/// What a producer must do after queueing a job (outside the lock).
#[derive(Debug)]
pub(crate) enum After {
    /// Nothing: the consumer is active.
    Nothing,
    /// Spawn the consumer task with this incarnation number.
    Spawn(u64),
    /// Wake the parked consumer.
    Wake(Waiter),
}

/// What a consumer got from [`Inbox::pop_or_park`].
#[derive(Debug)]
pub(crate) enum Pop {
    /// A job to run.
    Job(Job),
    /// The inbox is empty and the consumer registered as parked with this park
    /// number: it must call [`Inbox::note_parked`]'s caller protocol, then [`park`].
    Parked(u64),
    /// This consumer is no longer the inbox's current incarnation: end the task.
    Retired,
}

/// The inbox of one box instance.
#[derive(Debug)]
pub(crate) struct Inbox {
    inner: Mutex<Inner>,
    capacity: usize,
    /// Stream identity for monitoring and deadlock reports.
    meta: Arc<StreamMeta>,
}

impl Inbox {
    pub(crate) fn new(capacity: usize, name: Arc<str>) -> Inbox {
        Inbox {
            inner: Mutex::new(Inner {
                queue: VecDeque::new(),
                consumer: Consumer::Absent,
                inc: 0,
                gen: 0,
                producers: VecDeque::new(),
            }),
            capacity: capacity.max(1),
            meta: external_meta(Some(name), capacity),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `job`, first blocking while the inbox is full if `may_block`. Returns
    /// what the caller must do for the consumer.
    pub(crate) fn push(&self, job: Job, may_block: &dyn Fn() -> bool) -> After {
        let mut g = self.lock();
        let mut blocked = false;
        while g.queue.len() >= self.capacity && may_block() {
            g.producers.push_back(Waiter::current());
            let len = g.queue.len();
            drop(g);
            account_external(&self.meta, true, false, false, true, len);
            block(TaskState::BlockedOut, &self.meta);
            blocked = true;
            g = self.lock();
        }
        g.queue.push_back(job);
        let len = g.queue.len();
        let after = match std::mem::replace(&mut g.consumer, Consumer::Active) {
            Consumer::Active => After::Nothing,
            Consumer::Absent => {
                g.inc += 1;
                After::Spawn(g.inc)
            }
            Consumer::Parked { waiter, .. } => After::Wake(waiter),
        };
        drop(g);
        let woke = matches!(after, After::Wake(_));
        account_external(&self.meta, true, true, woke, blocked, len);
        after
    }

    /// The consumer of incarnation `inc` takes the next job; if there is none it
    /// registers as parked (unless `finishing`, when it retires).
    pub(crate) fn pop_or_park(&self, inc: u64, finishing: bool) -> Pop {
        let mut g = self.lock();
        if g.inc != inc || !matches!(g.consumer, Consumer::Active) {
            return Pop::Retired;
        }
        if let Some(job) = g.queue.pop_front() {
            let len = g.queue.len();
            let wake = if len < self.capacity {
                g.producers.pop_front()
            } else {
                None
            };
            drop(g);
            account_external(&self.meta, false, true, wake.is_some(), false, len);
            if let Some(w) = wake {
                w.wake();
            }
            return Pop::Job(job);
        }
        if finishing {
            g.consumer = Consumer::Absent;
            return Pop::Retired;
        }
        // An idle inbox keeps no buffer: deep replication creates many instances that
        // are busy only for a while.
        g.queue = VecDeque::new();
        g.gen += 1;
        let gen = g.gen;
        g.consumer = Consumer::Parked {
            waiter: Waiter::current(),
            gen,
        };
        drop(g);
        account_external(&self.meta, false, false, false, true, 0);
        Pop::Parked(gen)
    }

    /// Evicts the consumer if it is still parked with park number `gen`: marks the
    /// inbox consumer-less and returns the waiter to wake (the task then retires).
    pub(crate) fn evict(&self, gen: u64) -> Option<Waiter> {
        let mut g = self.lock();
        match &g.consumer {
            Consumer::Parked { gen: pg, .. } if *pg == gen => {}
            _ => return None,
        }
        match std::mem::replace(&mut g.consumer, Consumer::Absent) {
            Consumer::Parked { waiter, .. } => Some(waiter),
            _ => None,
        }
    }

    /// Whether the consumer is parked with park number `gen`.
    pub(crate) fn is_parked(&self, gen: u64) -> bool {
        matches!(&self.lock().consumer, Consumer::Parked { gen: pg, .. } if *pg == gen)
    }

    /// Takes every blocked producer out (to wake them when the run is torn down).
    pub(crate) fn take_producers(&self) -> Vec<Waiter> {
        self.lock().producers.drain(..).collect()
    }
}

impl Inbox {
    /// Blocks the calling consumer task after [`Inbox::pop_or_park`] returned
    /// `Parked`.
    pub(crate) fn park(&self) {
        block(TaskState::BlockedIn, &self.meta);
    }
}
