//! A box thread's inbox: one bounded FIFO shared by every producer, and the count of
//! running and blocked threads that detects an internal deadlock.
//!
//! All state sits behind one mutex; nobody blocks while holding it (waits release it).
//!
//! # Producers
//!
//! A push that may block (the rule of the crate docs) into an inbox that is full — it
//! holds `capacity` jobs, or it is non-empty and holds `max_bytes` of field payload —
//! registers the producer and waits. Every take by the consumer that leaves the queue
//! not full releases every registered producer at once (they retry, and register again
//! if it is full by then). A producer registers only while the queue is non-empty, so
//! its consumer is awake and keeps taking until the queue is not full: nobody waits
//! for a release that never comes unless the consumer itself is blocked (a cycle, which
//! the blocking rule excludes). The consumer takes up to `capacity` jobs, and about
//! `max_bytes` of payload (at least one job), at a time, so a box instance holds at
//! most `capacity` queued jobs plus the batch its thread took.
//!
//! # Deadlock detection
//!
//! [`Activity`] counts, in one atomic word, the box threads that are *running* (neither
//! waiting on an empty inbox nor registered as blocked) and the *blocked* producers
//! (box threads and the input thread). Whoever ends a wait on behalf of another thread
//! counts it running again before waking it: a producer that queues into an inbox whose
//! consumer waits, and a consumer that releases its blocked producers. So "nothing
//! runs" is a state nobody leaves by themselves, and in it a blocked producer's
//! consumer (its queue is full, so it does not wait for jobs) is blocked too, and so on
//! around a cycle: a deadlock. The thread that brings the count of running box threads
//! to zero while some producer is blocked reports it.

use snet_core::engine::InboxBudget;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// One pending box invocation (shared with the lpel engine).
pub(crate) use snet_core::engine::BoxJob as Job;

/// One blocked producer in [`Activity`]'s word (the high half).
const BLOCKED: u64 = 1 << 32;
/// The running box threads in [`Activity`]'s word (the low half).
const RUNNING: u64 = BLOCKED - 1;

/// Running box threads and blocked producers of a run (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Activity(AtomicU64);

impl Activity {
    /// A box thread is about to start (with a job in its inbox).
    pub(crate) fn spawned(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    /// A producer registers as blocked: a running box thread, or (`box_thread` false)
    /// the input thread, which is never counted running. True if no box thread runs
    /// any more: a deadlock.
    fn block(&self, box_thread: bool) -> bool {
        let d = if box_thread { BLOCKED - 1 } else { BLOCKED };
        self.0.fetch_add(d, Ordering::AcqRel).wrapping_add(d) & RUNNING == 0
    }

    /// `boxes` blocked box threads and `others` blocked input threads are released:
    /// the box threads count as running again.
    fn unblock(&self, boxes: usize, others: usize) {
        let d = (boxes as u64).wrapping_sub(((boxes + others) as u64) << 32);
        self.0.fetch_add(d, Ordering::AcqRel);
    }

    /// A box thread waits for jobs. True if no box thread runs any more while some
    /// producer is blocked: a deadlock.
    fn idle(&self) -> bool {
        let now = self.0.fetch_sub(1, Ordering::AcqRel) - 1;
        now & RUNNING == 0 && now >= BLOCKED
    }

    /// A waiting box thread is given a job (counted running by the giver).
    fn woken(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

struct Inner {
    queue: VecDeque<Job>,
    /// Field payload bytes of the queued jobs.
    bytes: usize,
    /// The consumer waits for jobs (not counted running).
    idle: bool,
    /// The run is over: the consumer exits once the queue is empty.
    closed: bool,
    /// Box threads registered as blocked on this inbox.
    blocked_boxes: usize,
    /// Input threads registered as blocked on this inbox (0 or 1).
    blocked_others: usize,
    /// Bumped whenever the registered producers are released.
    release: u64,
}

/// The inbox of one box thread.
pub(crate) struct Inbox {
    inner: Mutex<Inner>,
    /// The consumer waits here for jobs.
    ready: Condvar,
    /// Blocked producers wait here for their release.
    room: Condvar,
    budget: InboxBudget,
}

impl Inbox {
    /// An empty inbox whose consumer is about to start (counted running).
    pub(crate) fn new(capacity: usize, max_bytes: usize) -> Inbox {
        Inbox {
            inner: Mutex::new(Inner {
                queue: VecDeque::new(),
                bytes: 0,
                idle: false,
                closed: false,
                blocked_boxes: 0,
                blocked_others: 0,
                release: 0,
            }),
            ready: Condvar::new(),
            room: Condvar::new(),
            budget: InboxBudget::new(capacity, max_bytes),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a blocking push must wait.
    fn full(&self, g: &Inner) -> bool {
        self.budget.is_full(g.queue.len(), g.bytes)
    }

    /// Queues `job`. With `block` (`Some(true)` from a box thread, `Some(false)` from
    /// the input thread) it first waits while the inbox is full and `stop` is not set;
    /// `deadlock` is called (without the lock) if the wait would be a deadlock, and
    /// must set `stop` and wake every blocked producer.
    pub(crate) fn push(
        &self,
        job: Job,
        block: Option<bool>,
        act: &Activity,
        stop: &AtomicBool,
        deadlock: &dyn Fn(),
    ) {
        let mut g = self.lock();
        if let Some(box_thread) = block {
            while self.full(&g) && !stop.load(Ordering::Acquire) {
                if box_thread {
                    g.blocked_boxes += 1;
                } else {
                    g.blocked_others += 1;
                }
                let gen = g.release;
                if act.block(box_thread) {
                    drop(g);
                    deadlock();
                    g = self.lock();
                }
                while g.release == gen && !stop.load(Ordering::Acquire) {
                    g = self.room.wait(g).unwrap_or_else(|p| p.into_inner());
                }
                if g.release == gen {
                    // Woken because the run stops, not released: still registered.
                    if box_thread {
                        g.blocked_boxes -= 1;
                        act.unblock(1, 0);
                    } else {
                        g.blocked_others -= 1;
                        act.unblock(0, 1);
                    }
                }
            }
        }
        g.bytes += job.bytes();
        g.queue.push_back(job);
        let wake = std::mem::replace(&mut g.idle, false);
        if wake {
            act.woken();
        }
        drop(g);
        if wake {
            self.ready.notify_one();
        }
    }

    /// Moves the next batch of jobs into `hand` (empty), waiting while there are none.
    /// False once the inbox is closed and empty: the consumer exits. `deadlock` as for
    /// [`Inbox::push`].
    pub(crate) fn take(
        &self,
        hand: &mut VecDeque<Job>,
        act: &Activity,
        deadlock: &dyn Fn(),
    ) -> bool {
        let mut g = self.lock();
        while g.queue.is_empty() {
            if g.closed {
                return false;
            }
            if !g.idle {
                g.idle = true;
                if act.idle() {
                    drop(g);
                    deadlock();
                    g = self.lock();
                    continue;
                }
            }
            g = self.ready.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        let inner = &mut *g;
        self.budget.take_batch(
            &mut inner.queue,
            &mut inner.bytes,
            self.budget.capacity,
            hand,
        );
        let (boxes, others) = (g.blocked_boxes, g.blocked_others);
        let release = boxes + others > 0 && !self.full(&g);
        if release {
            act.unblock(boxes, others);
            g.blocked_boxes = 0;
            g.blocked_others = 0;
            g.release += 1;
        }
        drop(g);
        if release {
            self.room.notify_all();
        }
        true
    }

    /// Wakes every blocked producer (after `stop` is set they no longer wait).
    pub(crate) fn wake_producers(&self) {
        let _g = self.lock();
        self.room.notify_all();
    }

    /// The run is over: the consumer exits once the queue is empty.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_one();
    }
}

#[cfg(test)]
mod tests {
    //! The inbox protocol under real interleavings: box-thread producers and an input
    //! producer push into a tiny inbox while its consumer takes batches. Every job
    //! must arrive exactly once, in each producer's order; nobody may stay blocked;
    //! the deadlock check must never fire (the consumer always drains).

    use super::*;
    use snet_core::{Label, Record};
    use std::sync::Arc;

    const JOBS: i32 = 4000;

    fn job(p: i32, i: i32, bytes: usize) -> Job {
        let mut rec = Record::new().with_tag("p", p).with_tag("i", i);
        if bytes > 0 {
            rec = rec.with_field("pad", snet_core::Value::string(&"x".repeat(bytes)));
        }
        Job::new(Some(rec.into()), None)
    }

    fn run(capacity: usize, max_bytes: usize, producers: i32, bytes: usize) {
        let inbox = Arc::new(Inbox::new(capacity, max_bytes));
        let act = Arc::new(Activity::default());
        let stop = Arc::new(AtomicBool::new(false));
        let fired = Arc::new(AtomicBool::new(false));
        act.spawned(); // the consumer
        let consumer = {
            let (inbox, act, fired) = (inbox.clone(), act.clone(), fired.clone());
            std::thread::spawn(move || {
                let mut next = vec![0; producers as usize + 1];
                let mut hand = VecDeque::new();
                let deadlock = || fired.store(true, Ordering::SeqCst);
                while inbox.take(&mut hand, &act, &deadlock) {
                    assert!(hand.len() <= capacity, "a batch beyond the capacity");
                    for j in hand.drain(..) {
                        let r = j.rec.expect("data job");
                        let p = r.tag(Label::tag("p")).expect("p") as usize;
                        let i = r.tag(Label::tag("i")).expect("i");
                        assert_eq!(i, next[p], "producer {p}: job out of order");
                        next[p] += 1;
                    }
                }
                next
            })
        };
        // Producer 0 is the input thread (never counted running); the others are box
        // threads.
        let threads: Vec<_> = (0..=producers)
            .map(|p| {
                let (inbox, act, stop, fired) =
                    (inbox.clone(), act.clone(), stop.clone(), fired.clone());
                let box_thread = p > 0;
                if box_thread {
                    act.spawned();
                }
                std::thread::spawn(move || {
                    let deadlock = || fired.store(true, Ordering::SeqCst);
                    for i in 0..JOBS {
                        if i % 97 == (p * 31) % 97 {
                            std::thread::yield_now();
                        }
                        inbox.push(job(p, i, bytes), Some(box_thread), &act, &stop, &deadlock);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("producer");
        }
        inbox.close();
        let next = consumer.join().expect("consumer");
        assert!(next.iter().all(|&n| n == JOBS), "lost jobs: {next:?}");
        assert!(
            !fired.load(Ordering::SeqCst),
            "a false deadlock was reported"
        );
    }

    /// Runs `f` on a thread of its own and fails if it does not end within a minute
    /// (a producer or the consumer left blocked), instead of hanging the test run.
    fn within_a_minute(f: impl FnOnce() + Send + 'static) {
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            f();
            let _ = tx.send(());
        });
        match rx.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok(()) => t.join().expect("scenario"),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                // The scenario panicked: report its panic.
                if let Err(p) = t.join() {
                    std::panic::resume_unwind(p);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                panic!("the inbox protocol left a thread blocked (no progress for 60 s)")
            }
        }
    }

    #[test]
    fn every_job_arrives_once_in_order_at_tiny_capacities() {
        within_a_minute(|| {
            for capacity in [1, 2, 3, 64] {
                run(capacity, usize::MAX, 3, 0);
            }
        });
    }

    #[test]
    fn the_byte_budget_keeps_the_protocol_live() {
        // Every job holds 100 payload bytes; a budget of 250 lets two or three queue.
        within_a_minute(|| {
            run(64, 250, 3, 100);
            run(2, 1, 2, 100);
        });
    }
}
