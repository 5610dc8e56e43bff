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
//! blocks it. The consumer takes jobs in batches (one lock per batch) into its
//! task-local hand; every take wakes as many registered producers (oldest first) as
//! the queue has room for, and they retry. A registered producer is therefore woken
//! by a later take: when it registered the queue was full, so its consumer is
//! `Active` and keeps taking; a take that empties the queue has room for at least one
//! producer, whose retried push makes the queue non-empty again (or, if the run is
//! stopping, pushes without blocking). A box instance thus holds at most `capacity`
//! queued jobs plus the batch in its task's hand.
//!
//! # Byte budget
//!
//! Counting jobs alone lets big records multiply: 64 queued plus 64 in hand per box,
//! at 16 MB each, is 2 GB per pipeline stage. The inbox therefore also counts the field
//! payload bytes of its queued jobs ([`snet_core::Record::payload_bytes`]): a push blocks as well
//! while the queue is non-empty and holds `max_bytes` or more, and a take stops once it
//! has taken `max_bytes` (always at least one job). The liveness argument above is
//! unchanged: a producer registers only while the queue is non-empty, so a later take
//! follows, and a take that empties the queue has room (by count and bytes) again.

use super::park::{block, Waiter};
use crate::stream::{account_external, external_meta, StreamMeta};
use crate::task::TaskState;
use snet_core::engine::InboxBudget;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

/// One pending box invocation (shared with the threads engine).
pub(crate) use snet_core::engine::BoxJob as Job;

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
    /// Field payload bytes of the queued jobs.
    bytes: usize,
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

/// What a consumer got from [`Inbox::take`].
#[derive(Debug)]
pub(crate) enum Take {
    /// Jobs were moved into the consumer's hand.
    Jobs,
    /// The inbox is empty and the consumer registered as parked with this park
    /// number: it must block with [`Inbox::park`] (after noting the park).
    Parked(u64),
    /// This consumer is no longer the inbox's current incarnation: end the task.
    Retired,
}

/// Empty job buffers kept per thread for inboxes that start filling again.
const SPARE_BUFFERS: usize = 16;

thread_local! {
    static SPARES: std::cell::RefCell<Vec<VecDeque<Job>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An empty buffer for an inbox that has none: a spare of this thread's, or a new one.
fn spare_buffer() -> VecDeque<Job> {
    SPARES
        .try_with(|s| s.borrow_mut().pop())
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Keeps the (empty) buffer of an inbox whose consumer parks, if this thread has room.
fn keep_spare(buf: VecDeque<Job>) {
    if buf.capacity() == 0 {
        return;
    }
    debug_assert!(buf.is_empty());
    let _ = SPARES.try_with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < SPARE_BUFFERS {
            s.push(buf);
        }
    });
}

/// The inbox of one box instance.
#[derive(Debug)]
pub(crate) struct Inbox {
    inner: Mutex<Inner>,
    budget: InboxBudget,
    /// Stream identity for monitoring and deadlock reports.
    meta: Arc<StreamMeta>,
}

impl Inbox {
    pub(crate) fn new(capacity: usize, max_bytes: usize, name: Arc<str>) -> Inbox {
        Inbox {
            inner: Mutex::new(Inner {
                queue: VecDeque::new(),
                bytes: 0,
                consumer: Consumer::Absent,
                inc: 0,
                gen: 0,
                producers: VecDeque::new(),
            }),
            budget: InboxBudget::new(capacity, max_bytes),
            meta: external_meta(Some(name), capacity),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `job`, first blocking while the inbox is full if `may_block`. Returns
    /// what the caller must do for the consumer.
    pub(crate) fn push(&self, job: Job, may_block: &dyn Fn() -> bool) -> After {
        let bytes = job.bytes();
        let mut g = self.lock();
        let mut blocked = false;
        while self.full(&g) && may_block() {
            g.producers.push_back(Waiter::current());
            let len = g.queue.len();
            drop(g);
            account_external(&self.meta, true, 0, false, true, len);
            block(TaskState::BlockedOut, &self.meta);
            blocked = true;
            g = self.lock();
        }
        if g.queue.capacity() == 0 {
            g.queue = spare_buffer();
        }
        g.queue.push_back(job);
        g.bytes += bytes;
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
        account_external(&self.meta, true, 1, woke, blocked, len);
        after
    }

    /// The consumer of incarnation `inc` moves up to `max` queued jobs into `hand`;
    /// if there are none it registers as parked (unless `finishing`, when it
    /// retires). One lock per batch; the freed room wakes that many blocked
    /// producers.
    pub(crate) fn take(
        &self,
        inc: u64,
        finishing: bool,
        max: usize,
        hand: &mut VecDeque<Job>,
    ) -> Take {
        let mut g = self.lock();
        if g.inc != inc || !matches!(g.consumer, Consumer::Active) {
            return Take::Retired;
        }
        let inner = &mut *g;
        let n = self
            .budget
            .take_batch(&mut inner.queue, &mut inner.bytes, max, hand);
        if n > 0 {
            let len = g.queue.len();
            let woken = self.wake_for_room(&mut g, len);
            drop(g);
            account_external(&self.meta, false, n, !woken.is_empty(), false, len);
            for w in woken {
                w.wake();
            }
            return Take::Jobs;
        }
        if finishing {
            g.consumer = Consumer::Absent;
            return Take::Retired;
        }
        // An idle inbox keeps no buffer: deep replication creates many instances that
        // are busy only for a while. The buffer goes to this thread's spares, for the
        // next inbox that fills here (regrowing one from nothing at every park cost a
        // reallocation and a copy per few jobs).
        let idle = std::mem::take(&mut g.queue);
        g.gen += 1;
        let gen = g.gen;
        g.consumer = Consumer::Parked {
            waiter: Waiter::current(),
            gen,
        };
        let woken = self.wake_for_room(&mut g, 0);
        drop(g);
        keep_spare(idle);
        account_external(&self.meta, false, 0, !woken.is_empty(), true, 0);
        for w in woken {
            w.wake();
        }
        Take::Parked(gen)
    }

    /// Whether a blocking push must wait: the queue holds `capacity` jobs, or it is
    /// non-empty and holds `max_bytes` of payload.
    fn full(&self, g: &Inner) -> bool {
        self.budget.is_full(g.queue.len(), g.bytes)
    }

    /// Takes out as many blocked producers as there is room for with `len` jobs
    /// queued (they retry their push after being woken, and block again if the
    /// queue is full by then).
    fn wake_for_room(&self, g: &mut Inner, len: usize) -> Vec<Waiter> {
        let k = self.budget.room(len, g.bytes).min(g.producers.len());
        if k == 0 {
            Vec::new()
        } else {
            g.producers.drain(..k).collect()
        }
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
    /// Blocks the calling consumer task after [`Inbox::take`] returned `Parked`.
    pub(crate) fn park(&self) {
        block(TaskState::BlockedIn, &self.meta);
    }
}

#[cfg(test)]
mod tests {
    //! The inbox protocol under real interleavings: several producer tasks (on two
    //! workers) and the reader thread push into one tiny inbox while its consumer
    //! takes, parks, is woken and evicted. Every job must arrive exactly once, in
    //! each producer's order, and nobody may stay blocked.

    use super::*;
    use crate::{Activation, Config, Quiescence, Runtime, TaskSpec};
    use snet_core::Record;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    const PRODUCERS: i32 = 3;
    const JOBS: i32 = 3000;

    fn job(p: i32, i: i32) -> Job {
        Job::new(
            Some(Record::new().with_tag("p", p).with_tag("i", i).into()),
            None,
        )
    }

    struct Shared {
        inbox: Inbox,
        next: Vec<AtomicUsize>,
        received: AtomicUsize,
        evictions: AtomicUsize,
        failed: AtomicBool,
        batch: usize,
    }

    fn after(sh: &'static Shared, rt: Option<&Runtime>, a: After) {
        match a {
            After::Nothing => {}
            After::Wake(w) => w.wake(),
            After::Spawn(inc) => {
                let mut hand: VecDeque<Job> = VecDeque::new();
                let body = move || loop {
                    if let Some(j) = hand.pop_front() {
                        let r = j.rec.expect("data job");
                        let (p, i) = (
                            r.tag(snet_core::Label::tag("p")),
                            r.tag(snet_core::Label::tag("i")),
                        );
                        let (Some(p), Some(i)) = (p, i) else {
                            sh.failed.store(true, Ordering::SeqCst);
                            return Activation::Done;
                        };
                        let want = sh.next[p as usize].fetch_add(1, Ordering::SeqCst);
                        if want != i as usize {
                            sh.failed.store(true, Ordering::SeqCst);
                        }
                        sh.received.fetch_add(1, Ordering::SeqCst);
                        return Activation::Again;
                    }
                    match sh.inbox.take(inc, false, sh.batch, &mut hand) {
                        Take::Jobs => {}
                        Take::Retired => return Activation::Done,
                        Take::Parked(_) => sh.inbox.park(),
                    }
                };
                let spec = TaskSpec::boxed("consumer");
                match rt {
                    Some(rt) => {
                        rt.spawn_repeat(spec, body);
                    }
                    None => {
                        crate::spawn_repeat(spec, body);
                    }
                }
            }
        }
    }

    #[test]
    fn producers_and_reader_against_one_tiny_inbox() {
        let mut evictions = 0;
        for (capacity, batch) in [(1, 1), (2, 2), (3, 1)] {
            let sh: &'static Shared = Box::leak(Box::new(Shared {
                inbox: Inbox::new(capacity, usize::MAX, Arc::from("test")),
                next: (0..=PRODUCERS).map(|_| AtomicUsize::new(0)).collect(),
                received: AtomicUsize::new(0),
                evictions: AtomicUsize::new(0),
                failed: AtomicBool::new(false),
                batch,
            }));
            let rt = Runtime::start(Config::with_workers(2)).unwrap();
            for p in 0..PRODUCERS {
                rt.spawn(TaskSpec::new("producer"), move || {
                    for i in 0..JOBS {
                        if i % 7 == 0 {
                            // Let the consumer drain and park now and then.
                            crate::yield_now();
                        }
                        let a = sh.inbox.push(job(p, i), &|| true);
                        after(sh, None, a);
                    }
                });
            }
            // An evictor: evicts the consumer whenever it finds it parked (possibly
            // before it has blocked, from another worker); the next push spawns a new
            // incarnation.
            rt.spawn(TaskSpec::new("evictor"), move || {
                let total = ((PRODUCERS + 1) * JOBS) as usize;
                while sh.received.load(Ordering::SeqCst) < total {
                    let gen = sh.inbox.lock().gen;
                    if let Some(w) = sh.inbox.evict(gen) {
                        sh.evictions.fetch_add(1, Ordering::SeqCst);
                        w.wake();
                    }
                    crate::yield_now();
                }
            });
            // The reader thread is producer number PRODUCERS (blocks as a thread).
            for i in 0..JOBS {
                let a = sh.inbox.push(job(PRODUCERS, i), &|| true);
                after(sh, Some(&rt), a);
            }
            // Quiescent: the consumer is parked with an empty inbox.
            match rt.wait() {
                Quiescence::Deadlock(b) => assert!(
                    b.iter()
                        .all(|t| t.state == crate::TaskState::BlockedIn && t.name == "consumer"),
                    "only a parked consumer may remain: {b:?}"
                ),
                Quiescence::Finished => {}
            }
            assert_eq!(
                sh.received.load(Ordering::SeqCst),
                ((PRODUCERS + 1) * JOBS) as usize,
                "capacity {capacity}"
            );
            assert!(!sh.failed.load(Ordering::SeqCst), "per-producer order");
            // Evict the parked consumer for good: the runtime then finishes.
            let gen = sh.inbox.lock().gen;
            if let Some(w) = sh.inbox.evict(gen) {
                w.wake();
            }
            assert_eq!(rt.wait(), Quiescence::Finished);
            rt.shutdown();
            evictions += sh.evictions.load(Ordering::SeqCst);
        }
        assert!(evictions > 0, "the consumer was never evicted while parked");
    }
}
