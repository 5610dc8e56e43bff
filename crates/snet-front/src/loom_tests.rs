//! Exhaustive interleaving tests of the scheduling protocols under loom.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p snet-front --profile fast --lib loom`.
//!
//! The models use the real `Entity`, `WorkList` and `Sleep` code with jobs that are
//! plain numbers, and end by asserting that every job was run exactly once, in stream
//! order, never by two workers at once.

use crate::entity::Entity;
use crate::sleep::Sleep;
use crate::sync::{AtomicBool, AtomicUsize, Mutex};
use crate::worklist::{Key, WorkList};
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering;

/// One entity, two workers with their lists, a shared log of runs.
struct Model {
    ent: Entity<u32>,
    lists: [WorkList<u32>; 2],
    running: AtomicBool,
    pending: AtomicUsize,
    log: Mutex<Vec<u32>>,
}

const KEY: u32 = 7;

impl Model {
    fn new() -> Model {
        Model {
            ent: Entity::new(),
            lists: [WorkList::new(), WorkList::new()],
            running: AtomicBool::new(false),
            pending: AtomicUsize::new(0),
            log: Mutex::new(Vec::new()),
        }
    }

    /// Invokes the owned entity on `job`.
    fn run(&self, job: u32) {
        assert!(
            !self.running.swap(true, Ordering::SeqCst),
            "two workers invoke one entity"
        );
        self.log.lock().unwrap().push(job);
        self.running.store(false, Ordering::SeqCst);
        self.pending.fetch_sub(1, Ordering::SeqCst);
    }

    /// A record arrives: push with a licence into `me`'s list.
    fn push(&self, me: usize, job: u32) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        self.ent.push(job);
        self.lists[me].add(Key::new(1, KEY as usize), 1, || KEY);
    }

    /// A record walks in: own the entity and run it (oldest first), else push.
    fn walk(&self, me: usize, job: u32) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        if self.ent.try_acquire() {
            let j = self.ent.push_pop(job);
            self.run(j);
            self.ent.release();
        } else {
            self.ent.push(job);
            self.lists[me].add(Key::new(1, KEY as usize), 1, || KEY);
        }
    }

    /// Exercises `me`'s licences until its list is empty.
    fn drain(&self, me: usize) {
        while !self.lists[me].is_empty() {
            match self.lists[me].take(|_| self.ent.try_acquire()) {
                Some(_) => {
                    if let Some(j) = self.ent.pop() {
                        self.run(j);
                    }
                    self.ent.release();
                }
                None => thread::yield_now(),
            }
        }
    }

    fn steal(&self, me: usize) {
        let victim = 1 - me;
        if let Some((key, e, n)) = self.lists[victim].steal_half(|_| !self.ent.is_owned()) {
            self.lists[me].add(key, n, || e);
        }
    }

    fn check(&self, expect: &[u32]) {
        assert_eq!(self.pending.load(Ordering::SeqCst), 0);
        assert!(self.ent.is_empty());
        assert!(self.lists.iter().all(WorkList::is_empty));
        let log = self.log.lock().unwrap().clone();
        let mut sorted = log.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, expect, "every job exactly once");
        // Jobs pushed by one worker keep their order.
        let pos = |j: u32| log.iter().position(|x| *x == j);
        assert!(pos(1) < pos(2), "stream order: {log:?}");
    }
}

#[test]
fn loom_licences_walking_and_stealing() {
    loom::model(|| {
        let m = Arc::new(Model::new());
        let m1 = m.clone();
        let t = thread::spawn(move || {
            // Worker 1: a thief that also walks a record in.
            m1.steal(1);
            m1.walk(1, 10);
            m1.drain(1);
        });
        // Worker 0: two records in stream order, then its licences.
        m.push(0, 1);
        m.push(0, 2);
        m.drain(0);
        t.join().unwrap();
        // Worker 1 may have left before worker 0's last licence appeared.
        m.drain(1);
        m.drain(0);
        m.check(&[1, 2, 10]);
    });
}

#[test]
fn loom_stale_licence_is_dropped() {
    loom::model(|| {
        let m = Arc::new(Model::new());
        m.push(0, 1);
        let m1 = m.clone();
        let t = thread::spawn(move || {
            // Worker 1 walks a record in and, owning the entity, runs job 1 first.
            m1.walk(1, 2);
            m1.drain(1);
        });
        m.drain(0);
        t.join().unwrap();
        m.drain(0);
        m.drain(1);
        m.check(&[1, 2]);
    });
}

#[test]
fn loom_sleep_never_loses_a_wakeup() {
    loom::model(|| {
        let sleep = Arc::new(Sleep::new(1));
        let work = Arc::new(AtomicBool::new(false));
        let (s1, w1) = (sleep.clone(), work.clone());
        let sleeper = thread::spawn(move || {
            s1.register(0);
            loop {
                if w1.load(Ordering::SeqCst) {
                    break;
                }
                s1.announce(0);
                if w1.load(Ordering::SeqCst) {
                    s1.cancel(0);
                    break;
                }
                // Without the protocol this park could last forever: loom reports it.
                s1.park(0, std::time::Duration::ZERO);
                s1.cancel(0);
            }
        });
        work.store(true, Ordering::SeqCst);
        sleep.notify_one();
        sleeper.join().unwrap();
    });
}

/// Concurrent invocations (entity step 5): with limit 2, three workers never own the
/// entity more than twice at once, every queued job is popped exactly once, and the
/// sequence numbers handed out are 0, 1, 2 in stream order.
#[test]
fn loom_concurrent_entity_limit_and_sequence() {
    loom::model(|| {
        let ent = Arc::new(Entity::<u32>::with_limit(2));
        for j in [10, 11, 12] {
            ent.push(j);
        }
        let inside = Arc::new(AtomicUsize::new(0));
        let got = Arc::new(Mutex::new(Vec::new()));
        let worker =
            |ent: Arc<Entity<u32>>, inside: Arc<AtomicUsize>, got: Arc<Mutex<Vec<(u32, u64)>>>| {
                move || {
                    if ent.try_acquire() {
                        let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        assert!(n <= 2, "{n} owners with limit 2");
                        if let Some(p) = ent.pop_seq() {
                            got.lock().unwrap().push(p);
                        }
                        inside.fetch_sub(1, Ordering::SeqCst);
                        ent.release();
                    }
                }
            };
        let ts: Vec<_> = (0..2)
            .map(|_| thread::spawn(worker(ent.clone(), inside.clone(), got.clone())))
            .collect();
        worker(ent.clone(), inside.clone(), got.clone())();
        for t in ts {
            t.join().unwrap();
        }
        // Whatever the workers left, a final owner drains in order.
        assert!(ent.try_acquire());
        while let Some(p) = ent.pop_seq() {
            got.lock().unwrap().push(p);
        }
        ent.release();
        let mut g = got.lock().unwrap().clone();
        g.sort_by_key(|p| p.1);
        assert_eq!(g, vec![(10, 0), (11, 1), (12, 2)]);
    });
}
