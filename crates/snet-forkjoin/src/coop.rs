//! Sharing the pool with an external scheduler: "one pool, two users".
//!
//! An external scheduler (the FRONT engine of `snet-front`) can run its own worker
//! loops *as jobs on this pool*, one per pool worker ([`Pool::run_on_each`]), so that
//! code it calls (an S-Net box) forks with [`crate::join`] / [`crate::for_each`] onto
//! the very threads the scheduler already runs, with no second set of threads.
//!
//! # Protocol for a long-running scheduler job
//!
//! A scheduler loop that runs as a job on pool worker `i` never returns to the pool's
//! own scheduling between its units of work, so it must take part in fork-join
//! scheduling itself:
//!
//! 1. **When it is idle** it calls [`help`] before spinning or sleeping: `help` first
//!    yields to fibers of worker `i` that became ready (see 2), then steals the oldest
//!    fork-join job of another worker and runs it to completion on the calling fiber
//!    (nested; if the job parks at an inner join, the scheduler loop is parked with it
//!    and worker `i` runs other work until it is resumed).
//! 2. **Between units of work** it calls [`yield_now`] (one or two loads when there is
//!    nothing to do): a fiber that parked on worker `i` while the loop was itself parked
//!    in a join (say, the stolen half of another worker's join, waiting at an inner
//!    join) can only be resumed by worker `i`, and only when the fiber running there
//!    returns to the scheduler. `yield_now` suspends the loop's fiber as *yielded*; the
//!    scheduler resumes every ready fiber first (each runs until it parks again or
//!    finishes its job) and then the loop.
//! 3. **To sleep** it calls [`park_idle`] instead of parking on its own: the worker is
//!    counted as sleeping in the pool, so a fiber made ready for it and a chain wake-up
//!    unpark its thread; an external waker's `Thread::unpark` of the same thread wakes
//!    it too, and `has_work` is re-checked after a `SeqCst` fence (Dekker pair with both
//!    kinds of wakers).
//!
//! # Why this cannot deadlock
//!
//! * A parked fiber waits for the other half of its join, which some worker is running
//!   (a stolen job is never dropped) and which finishes unless its own inner joins wait;
//!   by induction on the nesting depth, the innermost join's halves run without waiting.
//! * A finished half makes its owner's fiber ready through the owner's mailbox and
//!   notifies the owner's sleep slot. The owner worker is then doing one of: running a
//!   pool idle fiber (whose search loop returns to the scheduler as soon as a fiber is
//!   ready), running a job (which returns, or — if it is the scheduler loop — reaches
//!   step 2 after its current unit or step 1 when idle), or sleeping in [`park_idle`]
//!   or in the pool (woken by the notification, and both re-check the mailbox after
//!   announcing). So a ready fiber waits at most for one unit of the scheduler's work.
//! * Stealable work published by a `join` wakes nobody (as everywhere in this crate):
//!   a sleeping helper misses it for at most its timeout, and the publisher runs the
//!   work itself if nobody steals it, so this costs parallelism, never progress.
//! * [`Pool::run_on_each`] blocks the calling thread, which must not be a worker of the
//!   same pool (it would hold a worker whose job is queued).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::job::{self, JobHeader, JobRef, Panic, SendJob};
use crate::registry::Pool;
use crate::sync::{AtomicUsize, Ordering};
use crate::worker::{FiberYield, WorkerThread};

/// Jobs queued for one particular worker (taken before stealing, never stolen).
#[derive(Debug, Default)]
pub(crate) struct Targeted {
    q: Mutex<VecDeque<SendJob>>,
    len: AtomicUsize,
}

impl Targeted {
    fn push(&self, j: JobRef) {
        let mut q = self.q.lock().unwrap_or_else(|e| e.into_inner());
        q.push_back(SendJob(j));
        self.len.store(q.len(), Ordering::SeqCst);
    }

    pub(crate) fn looks_empty(&self) -> bool {
        self.len.load(Ordering::SeqCst) == 0
    }

    pub(crate) fn take(&self) -> Option<JobRef> {
        if self.looks_empty() {
            return None;
        }
        let mut q = self.q.lock().unwrap_or_else(|e| e.into_inner());
        let j = q.pop_front();
        self.len.store(q.len(), Ordering::SeqCst);
        j.map(|j| j.0)
    }
}

/// Counts the jobs of one `run_on_each` down; keeps the first panic.
struct CountDown {
    state: Mutex<(usize, Option<Panic>)>,
    cv: Condvar,
}

/// One job of `run_on_each`, on the caller's stack.
#[repr(C)]
struct EachJob<'f, F> {
    header: JobHeader,
    index: usize,
    f: &'f F,
    done: &'f CountDown,
}

impl<F: Fn(usize) + Sync> EachJob<'_, F> {
    unsafe fn run(job: JobRef) {
        // SAFETY: the job lives in `run_on_each`'s frame, which waits until the count
        // reaches zero; the count is decremented below, after the last use of `this`.
        let this = unsafe { job.cast::<Self>().as_ref() };
        let (f, index, done) = (this.f, this.index, this.done);
        let r = job::catch(|| f(index));
        let mut g = done.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(p) = r {
            g.1.get_or_insert(p);
        }
        g.0 -= 1;
        if g.0 == 0 {
            done.cv.notify_all();
        }
        // `g` is dropped last; after that neither `this` nor `done` is touched.
    }
}

impl Pool {
    /// Runs `f(i)` as a job on worker `i`, for every worker `i` of the pool, and waits
    /// until all have returned. The jobs run concurrently, one per worker; inside them
    /// `join`, `scope` and `for_each` fork onto the pool, and a long-running `f` should
    /// follow the protocol of module `coop` ([`help`], [`yield_now`], [`park_idle`]).
    /// The first panic of an `f` is propagated after all have returned.
    ///
    /// # Panics
    /// If called from a worker of this pool (it would block a worker whose job it
    /// queued).
    pub fn run_on_each<F: Fn(usize) + Sync>(&self, f: F) {
        if let Some(w) = WorkerThread::current() {
            assert!(
                !std::sync::Arc::ptr_eq(w.registry(), &self.registry),
                "Pool::run_on_each called from a worker of the same pool"
            );
        }
        let reg = &*self.registry;
        let n = reg.num_threads();
        let done = CountDown {
            state: Mutex::new((n, None)),
            cv: Condvar::new(),
        };
        let jobs: Vec<EachJob<'_, F>> = (0..n)
            .map(|index| EachJob {
                header: JobHeader::new(EachJob::<F>::run),
                index,
                f: &f,
                done: &done,
            })
            .collect();
        for (i, j) in jobs.iter().enumerate() {
            reg.targeted[i].push(std::ptr::NonNull::from(&j.header));
            reg.sleep.notify(i);
        }
        let mut g = done.state.lock().unwrap_or_else(|e| e.into_inner());
        while g.0 > 0 {
            g = done.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        let panic = g.1.take();
        drop(g);
        drop(jobs);
        if let Some(p) = panic {
            std::panic::resume_unwind(p);
        }
    }
}

/// Lets fibers of the calling worker that became ready run first, if there are any;
/// the caller's fiber continues once none is ready. Returns whether it yielded. A
/// no-op (false) off a pool. Call it between units of work of a long-running job
/// (module docs, step 2).
pub fn yield_now() -> bool {
    match WorkerThread::current() {
        Some(w) if w.has_ready_parked() => {
            w.suspend_running(FiberYield::Yielded);
            true
        }
        _ => false,
    }
}

/// Does one piece of fork-join work for the pool from inside a job: yields to ready
/// fibers of this worker ([`yield_now`]), else steals the oldest job of another
/// worker's deque and runs it on the calling fiber. Returns whether it did anything.
/// A no-op (false) off a pool. Call it when the calling job's own scheduler is idle
/// (module docs, step 1).
pub fn help() -> bool {
    let Some(w) = WorkerThread::current() else {
        return false;
    };
    if yield_now() {
        return true;
    }
    match w.steal_deques() {
        Some(j) => {
            // SAFETY: the job was taken exactly once, by this steal.
            unsafe { job::execute(j) };
            true
        }
        None => false,
    }
}

/// Parks the calling pool worker's thread until the pool has work for it (a ready
/// fiber, a targeted job, a chain wake-up), another thread unparks it
/// (`Thread::unpark`), `timeout` passes, or spuriously; returns at once if `has_work()`
/// is true after the worker has announced itself asleep. Off a pool, checks `has_work`
/// and parks the thread with `timeout`. Call it instead of parking when the calling
/// job's own scheduler has nothing to do (module docs, step 3).
pub fn park_idle(timeout: Duration, has_work: impl Fn() -> bool) {
    match WorkerThread::current() {
        Some(w) => {
            let reg = w.registry();
            let me = w.index();
            reg.sleep.park_thread(me, timeout, || {
                has_work() || reg.has_work_for(me) || w.has_ready_parked()
            });
        }
        None => {
            if !has_work() {
                std::thread::park_timeout(timeout);
            }
        }
    }
}
