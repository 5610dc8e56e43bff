//! Idle workers: spin, then sleep on a per-worker condition variable.
//!
//! # Protocol
//!
//! 1. A worker that finds no work announces itself *searching* (`idle += SEARCH`).
//! 2. After a while it converts to *sleeping* in one step (`idle += 1 - SEARCH`), sets
//!    its `asleep` flag, issues a SeqCst fence and re-checks every source of work; only
//!    if all are still empty does it wait (with a timeout, as a safety net).
//! 3. Producers that must not be lost (injected jobs, mailbox pushes) publish the work,
//!    issue a SeqCst fence, then read `idle`/`asleep` and notify. The fences of steps 2
//!    and 3 form a Dekker pair: either the sleeper's re-check sees the work, or the
//!    producer sees the sleeper and notifies it under its mutex.
//! 4. Deque pushes do not take part in step 3 (no fence on the hot path). A push wakes
//!    one sleeper only if some worker sleeps and none is searching ([`Sleep::on_push`],
//!    one relaxed load otherwise), and a searching worker that finds work wakes one
//!    sleeper if nobody else is searching (a chain wake-up, as in Go's scheduler), so a
//!    burst of work ramps up all workers. A wake-up missed this way costs parallelism,
//!    never progress (the pusher runs its own work), and the sleep timeout bounds it.
//!    (Without the push wake-up, a program of many short parallel phases lost whole
//!    phases: the worker that went to sleep between two phases slept through the next.)

use std::sync::{Condvar, Mutex, OnceLock};
use std::thread::Thread;
use std::time::Duration;

use crate::sync::{fence, AtomicBool, AtomicU64, CachePadded, Ordering};

const SEARCH: u64 = 1 << 32;
const SLEEP_MASK: u64 = SEARCH - 1;

/// How long a sleeping worker waits before re-checking on its own.
const SLEEP_TIMEOUT: Duration = Duration::from_millis(2);

#[derive(Debug, Default)]
struct WorkerSleep {
    asleep: AtomicBool,
    notified: Mutex<bool>,
    cv: Condvar,
    /// Set once the worker has parked its thread in [`Sleep::park_thread`]: notifiers
    /// then also unpark it.
    thread: OnceLock<Thread>,
}

/// Sleep state of all workers of a pool.
#[derive(Debug)]
pub(crate) struct Sleep {
    /// `searching << 32 | sleeping`.
    idle: CachePadded<AtomicU64>,
    workers: Vec<CachePadded<WorkerSleep>>,
}

impl Sleep {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            idle: CachePadded(AtomicU64::new(0)),
            workers: (0..n)
                .map(|_| CachePadded(WorkerSleep::default()))
                .collect(),
        }
    }

    /// Step 1.
    #[inline]
    pub(crate) fn start_searching(&self) {
        self.idle.fetch_add(SEARCH, Ordering::Relaxed);
    }

    /// Leaves the searching state (found work).
    #[inline]
    pub(crate) fn stop_searching(&self) {
        self.idle.fetch_sub(SEARCH, Ordering::Relaxed);
    }

    /// Step 2: sleep unless `has_work()` turns true after announcing. The worker must be
    /// searching on entry and is searching again on return.
    pub(crate) fn sleep(&self, index: usize, has_work: impl Fn() -> bool) {
        let ws = &self.workers[index];
        let mut notified = ws.notified.lock().unwrap_or_else(|e| e.into_inner());
        if std::mem::take(&mut *notified) {
            return;
        }
        self.idle
            .fetch_add(1u64.wrapping_sub(SEARCH), Ordering::SeqCst);
        ws.asleep.store(true, Ordering::SeqCst);
        // Pairs with the fence in `notify`/`wake_any` (step 3).
        fence(Ordering::SeqCst);
        if !has_work() {
            let (g, _) = ws
                .cv
                .wait_timeout_while(notified, SLEEP_TIMEOUT, |n| !*n)
                .unwrap_or_else(|e| e.into_inner());
            notified = g;
        }
        *notified = false;
        ws.asleep.store(false, Ordering::Relaxed);
        self.idle
            .fetch_add(SEARCH.wrapping_sub(1), Ordering::SeqCst);
    }

    /// Step 3: wakes worker `index` if it sleeps (after the caller published work).
    pub(crate) fn notify(&self, index: usize) {
        // Pairs with the fence in `sleep`.
        fence(Ordering::SeqCst);
        let ws = &self.workers[index];
        if ws.asleep.load(Ordering::Relaxed) {
            let mut n = ws.notified.lock().unwrap_or_else(|e| e.into_inner());
            *n = true;
            ws.cv.notify_one();
            drop(n);
            if let Some(t) = ws.thread.get() {
                t.unpark();
            }
        }
    }

    /// Step 2 for a worker whose running job is an external scheduler's loop (module
    /// `coop`): counts it as sleeping, so that [`Sleep::notify`] and chain wake-ups
    /// reach it, then parks the *thread* (so that the external scheduler's own
    /// `Thread::unpark` wakes it too) unless `has_work()` turns true after the fence.
    /// Returns after a notification, an unpark, `timeout`, or spuriously.
    pub(crate) fn park_thread(&self, index: usize, timeout: Duration, has_work: impl Fn() -> bool) {
        let ws = &self.workers[index];
        ws.thread.get_or_init(std::thread::current);
        if std::mem::take(&mut *ws.notified.lock().unwrap_or_else(|e| e.into_inner())) {
            return;
        }
        self.idle.fetch_add(1, Ordering::SeqCst);
        ws.asleep.store(true, Ordering::SeqCst);
        // Pairs with the fence in `notify`/`wake_any` (step 3).
        fence(Ordering::SeqCst);
        if !has_work() {
            std::thread::park_timeout(timeout);
        }
        ws.asleep.store(false, Ordering::SeqCst);
        *ws.notified.lock().unwrap_or_else(|e| e.into_inner()) = false;
        self.idle.fetch_sub(1, Ordering::SeqCst);
    }

    /// Step 3: wakes some sleeping worker, if any.
    pub(crate) fn wake_any(&self) {
        // Pairs with the fence in `sleep`.
        fence(Ordering::SeqCst);
        if self.idle.load(Ordering::Relaxed) & SLEEP_MASK == 0 {
            return;
        }
        for (i, ws) in self.workers.iter().enumerate() {
            if ws.asleep.load(Ordering::Relaxed) {
                self.notify(i);
                return;
            }
        }
    }

    /// Step 4 for a deque push: wakes a sleeper if some worker sleeps and none searches
    /// (a searching worker will find the job, and chain-wake if more remain).
    #[inline]
    pub(crate) fn on_push(&self) {
        if self.should_chain_wake() {
            self.wake_any_cold();
        }
    }

    #[cold]
    #[inline(never)]
    fn wake_any_cold(&self) {
        self.wake_any();
    }

    /// Step 4: whether a worker that just found work should wake a sleeper.
    #[inline]
    pub(crate) fn should_chain_wake(&self) -> bool {
        let v = self.idle.load(Ordering::Relaxed);
        v & SLEEP_MASK != 0 && v < SEARCH
    }

    /// Wakes everybody (shutdown).
    pub(crate) fn wake_all(&self) {
        fence(Ordering::SeqCst);
        for ws in &self.workers {
            let mut n = ws.notified.lock().unwrap_or_else(|e| e.into_inner());
            *n = true;
            ws.cv.notify_one();
            drop(n);
            if let Some(t) = ws.thread.get() {
                t.unpark();
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Puts worker `i` in the state `sleep` leaves it in while it waits (counted as
    /// sleeping, `asleep` set), without a thread.
    fn pretend_asleep(s: &Sleep, i: usize) {
        s.idle.fetch_add(1, Ordering::SeqCst);
        s.workers[i].asleep.store(true, Ordering::SeqCst);
    }

    fn notified(s: &Sleep, i: usize) -> bool {
        *s.workers[i].notified.lock().unwrap()
    }

    /// A push wakes a sleeper when nobody searches (the worker that slept between two
    /// parallel phases must join the next one), and leaves it alone while another worker
    /// searches (that one will find the job) or when nobody sleeps.
    #[test]
    fn a_push_wakes_a_sleeper_only_when_nobody_searches() {
        let s = Sleep::new(2);
        s.on_push();
        assert!(!notified(&s, 0) && !notified(&s, 1), "nobody sleeps");

        pretend_asleep(&s, 1);
        s.start_searching();
        s.on_push();
        assert!(!notified(&s, 1), "worker 0 searches and will find the job");
        s.stop_searching();

        s.on_push();
        assert!(notified(&s, 1), "worker 1 sleeps and nobody searches");
        assert!(!notified(&s, 0));
    }
}
