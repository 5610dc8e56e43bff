//! The pool: worker threads, their shared state, and the entry points for external
//! schedulers ([`Pool::install`], [`Pool::spawn_job`]).

use std::collections::VecDeque;
use std::fmt;
use std::panic;
use std::sync::{Condvar, Mutex};
use std::thread::JoinHandle;

use crate::barrier::{self, BarrierMode};
use crate::deque::{self, Steal};
use crate::job::{self, HeapJob, JobHeader, JobRef, Panic, SendJob};
use crate::mailbox::Mailbox;
use crate::sleep::Sleep;
use crate::stack::{MadvisePolicy, StackPool, StackStats};
use crate::sync::{Arc, AtomicBool, AtomicUsize, CachePadded, Ordering};
use crate::worker::WorkerThread;

type PanicHandler = Box<dyn Fn(Panic) + Send + Sync>;

/// Counters of one pool (monotonic, read with [`Pool::stats`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PoolStats {
    /// Successful steals from other workers' deques.
    pub steals: usize,
    /// Fibers parked at a join whose other half was still running elsewhere.
    pub parks: usize,
    /// Parked fibers made ready by another worker (the last finisher was a thief).
    pub remote_wakeups: usize,
    /// Fibers (coroutines) created.
    pub fibers: usize,
    /// Jobs taken from the injector.
    pub injected: usize,
    /// Stack pool counters.
    pub stacks: StackStats,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) steals: AtomicUsize,
    pub(crate) parks: AtomicUsize,
    pub(crate) remote_wakeups: AtomicUsize,
    pub(crate) fibers: AtomicUsize,
    pub(crate) injected: AtomicUsize,
}

/// State shared by all workers of a pool.
pub(crate) struct Registry {
    pub(crate) stealers: Vec<deque::Stealer<JobHeader>>,
    pub(crate) mailboxes: Vec<CachePadded<Mailbox>>,
    injector: Mutex<VecDeque<SendJob>>,
    injector_len: AtomicUsize,
    pub(crate) sleep: Sleep,
    terminate: AtomicBool,
    pub(crate) stacks: StackPool,
    pub(crate) counters: Counters,
    panic_handler: Option<PanicHandler>,
    /// Jobs for one particular worker ([`Pool::run_on_each`]).
    pub(crate) targeted: Vec<CachePadded<crate::coop::Targeted>>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("threads", &self.stealers.len())
            .finish_non_exhaustive()
    }
}

impl Registry {
    pub(crate) fn num_threads(&self) -> usize {
        self.stealers.len()
    }

    pub(crate) fn terminating(&self) -> bool {
        self.terminate.load(Ordering::Acquire)
    }

    /// Queues an external job and wakes a worker.
    pub(crate) fn inject(&self, job: JobRef) {
        {
            let mut q = self.injector.lock().unwrap_or_else(|e| e.into_inner());
            q.push_back(SendJob(job));
            self.injector_len.store(q.len(), Ordering::SeqCst);
        }
        self.sleep.wake_any();
    }

    pub(crate) fn injector_looks_empty(&self) -> bool {
        self.injector_len.load(Ordering::SeqCst) == 0
    }

    pub(crate) fn take_injected(&self) -> Option<JobRef> {
        if self.injector_looks_empty() {
            return None;
        }
        let mut q = self.injector.lock().unwrap_or_else(|e| e.into_inner());
        let j = q.pop_front();
        self.injector_len.store(q.len(), Ordering::SeqCst);
        if j.is_some() {
            self.counters.injected.fetch_add(1, Ordering::Relaxed);
        }
        j.map(|j| j.0)
    }

    /// Steals from the other workers starting at a random victim.
    pub(crate) fn steal_from_others(&self, me: usize, start: usize) -> Option<(JobRef, usize)> {
        let n = self.stealers.len();
        loop {
            let mut retry = false;
            for k in 0..n {
                let v = (start + k) % n;
                if v == me {
                    continue;
                }
                match self.stealers[v].steal() {
                    Steal::Success(j) => {
                        self.counters.steals.fetch_add(1, Ordering::Relaxed);
                        return Some((j, v));
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return None;
            }
        }
    }

    /// Whether any source of work looks non-empty for worker `me`.
    pub(crate) fn has_work_for(&self, me: usize) -> bool {
        !self.injector_looks_empty()
            || !self.mailboxes[me].looks_empty()
            || !self.targeted[me].looks_empty()
            || self.stealers.iter().any(|s| !s.looks_empty())
            || self.terminating()
    }

    /// Hands a panic from a detached job to the handler, or aborts.
    pub(crate) fn handle_panic(&self, p: Panic) {
        match &self.panic_handler {
            Some(h) => {
                if panic::catch_unwind(panic::AssertUnwindSafe(|| h(p))).is_err() {
                    std::process::abort();
                }
            }
            None => {
                eprintln!("snet-forkjoin: a detached job panicked and no panic handler is set");
                std::process::abort();
            }
        }
    }
}

/// Configures a [`Pool`].
pub struct PoolBuilder {
    threads: usize,
    stack_size: usize,
    madvise: MadvisePolicy,
    barrier: Option<BarrierMode>,
    deque_capacity: usize,
    publish_limit: usize,
    name: String,
    panic_handler: Option<PanicHandler>,
}

impl fmt::Debug for PoolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBuilder")
            .field("threads", &self.threads)
            .field("stack_size", &self.stack_size)
            .field("madvise", &self.madvise)
            .field("barrier", &self.barrier)
            .finish_non_exhaustive()
    }
}

impl Default for PoolBuilder {
    fn default() -> Self {
        Self {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            stack_size: 256 * 1024,
            madvise: MadvisePolicy::default(),
            barrier: None,
            deque_capacity: 4096,
            publish_limit: 4,
            name: "snet-fj".into(),
            panic_handler: None,
        }
    }
}

impl PoolBuilder {
    /// Defaults: one worker per available core, 256 KiB stacks, `MADV_FREE`, the
    /// symmetric barrier with two or more workers (see [`PoolBuilder::barrier`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of worker threads (at least 1).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }

    /// Usable bytes per task stack (a guard page is added below).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes;
        self
    }

    /// What to do with the unused pages of stacks holding suspended frames.
    pub fn madvise(mut self, policy: MadvisePolicy) -> Self {
        self.madvise = policy;
        self
    }

    /// Chooses the deque barrier mode. Default with two or more workers:
    /// [`BarrierMode::Symmetric`], a `fence(SeqCst)` (≈ 2 ns) on both sides.
    /// [`BarrierMode::Asymmetric`] (where the kernel supports it; the default for a
    /// single worker, which has no thieves) frees the owner's pop of its fence but makes
    /// every steal issue `membarrier`, which interrupts every other running thread of
    /// the process: measured ≈ 10 µs per call on the 2-vCPU VM of the benchmarks
    /// (0.36 µs with no other thread running), so it only pays where published joins
    /// outnumber steals by thousands; lazy publication already keeps most joins off the
    /// deque.
    pub fn barrier(mut self, mode: BarrierMode) -> Self {
        self.barrier = Some(mode);
        self
    }

    /// Capacity of each worker's deque; forks beyond it run inline.
    pub fn deque_capacity(mut self, n: usize) -> Self {
        self.deque_capacity = n;
        self
    }

    /// Lazy publication: a `join` offers its second half to thieves only while the
    /// worker's deque holds fewer than `n` entries; deeper joins run as two plain
    /// calls (Lazy Binary Splitting, Tzannes et al., PPoPP'10). Thieves take the oldest
    /// entries, which in divide-and-conquer code are the biggest, so a few published
    /// continuations keep them busy; the join that finds the deque short again
    /// publishes anew. Default 4; `usize::MAX` publishes every join.
    pub fn publish_limit(mut self, n: usize) -> Self {
        self.publish_limit = n.max(1);
        self
    }

    /// Thread name prefix.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Called with the payload when a job started by [`Pool::spawn_job`] panics
    /// (default: print and abort the process).
    pub fn panic_handler(mut self, h: impl Fn(Panic) + Send + Sync + 'static) -> Self {
        self.panic_handler = Some(Box::new(h));
        self
    }

    /// Starts the worker threads.
    ///
    /// # Errors
    /// If a thread cannot be spawned.
    pub fn build(self) -> std::io::Result<Pool> {
        let mode = match self.barrier {
            Some(BarrierMode::Asymmetric) if barrier::best_mode() == BarrierMode::Asymmetric => {
                BarrierMode::Asymmetric
            }
            Some(_) => BarrierMode::Symmetric,
            // One worker has no thieves: the asymmetric pair costs nothing there and
            // saves the owner's fence (fib T1 3 % faster).
            None if self.threads == 1 => barrier::best_mode(),
            None => BarrierMode::Symmetric,
        };
        let n = self.threads;
        let deques: Vec<_> = (0..n)
            .map(|_| deque::Worker::new(self.deque_capacity, mode))
            .collect();
        let registry = Arc::new(Registry {
            stealers: deques.iter().map(|d| d.stealer()).collect(),
            mailboxes: (0..n).map(|_| CachePadded(Mailbox::new())).collect(),
            injector: Mutex::new(VecDeque::new()),
            injector_len: AtomicUsize::new(0),
            sleep: Sleep::new(n),
            terminate: AtomicBool::new(false),
            stacks: StackPool::new(self.stack_size, self.madvise),
            counters: Counters::default(),
            panic_handler: self.panic_handler,
            targeted: (0..n)
                .map(|_| CachePadded(crate::coop::Targeted::default()))
                .collect(),
        });
        let mut threads = Vec::with_capacity(n);
        for (index, deque) in deques.into_iter().enumerate() {
            let r = registry.clone();
            let limit = self.publish_limit;
            let h = std::thread::Builder::new()
                .name(format!("{}-{index}", self.name))
                .spawn(move || WorkerThread::run(index, r, deque, limit));
            match h {
                Ok(h) => threads.push(h),
                Err(e) => {
                    let _ = Pool {
                        registry,
                        threads,
                        mode,
                    };
                    return Err(e);
                }
            }
        }
        Ok(Pool {
            registry,
            threads,
            mode,
        })
    }
}

/// A fork-join pool: worker threads that run jobs on pooled stackful fibers.
///
/// Dropping the pool waits until every queued job has run, then joins the threads.
pub struct Pool {
    pub(crate) registry: Arc<Registry>,
    threads: Vec<JoinHandle<()>>,
    mode: BarrierMode,
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("threads", &self.threads.len())
            .field("barrier", &self.mode)
            .finish()
    }
}

impl Pool {
    /// A pool with `threads` workers and default settings.
    ///
    /// # Errors
    /// If a thread cannot be spawned.
    pub fn new(threads: usize) -> std::io::Result<Self> {
        PoolBuilder::new().threads(threads).build()
    }

    /// Starts configuring a pool.
    pub fn builder() -> PoolBuilder {
        PoolBuilder::new()
    }

    /// Number of worker threads.
    pub fn num_threads(&self) -> usize {
        self.registry.num_threads()
    }

    /// The deque barrier mode in use.
    pub fn barrier_mode(&self) -> BarrierMode {
        self.mode
    }

    /// Counters so far.
    pub fn stats(&self) -> PoolStats {
        let c = &self.registry.counters;
        PoolStats {
            steals: c.steals.load(Ordering::Relaxed),
            parks: c.parks.load(Ordering::Relaxed),
            remote_wakeups: c.remote_wakeups.load(Ordering::Relaxed),
            fibers: c.fibers.load(Ordering::Relaxed),
            injected: c.injected.load(Ordering::Relaxed),
            stacks: self.registry.stacks.stats(),
        }
    }

    /// Runs `op` on a worker of this pool and returns its result; the calling thread
    /// blocks meanwhile. Called from a worker of this pool, runs `op` inline. Inside
    /// `op`, [`crate::join`], [`crate::scope`] and [`crate::for_each`] fork onto the
    /// pool. A panic in `op` is propagated to the caller.
    pub fn install<R: Send>(&self, op: impl FnOnce() -> R + Send) -> R {
        if let Some(w) = WorkerThread::current() {
            if Arc::ptr_eq(w.registry(), &self.registry) {
                return op();
            }
        }
        let job = InstallJob::new(op);
        self.registry.inject(job.as_job_ref());
        job.wait()
    }

    /// Queues a detached job on the pool (FIFO among injected jobs). Workers run it on
    /// a fiber like any other job, so it may itself `join`, `scope` and `for_each`; while
    /// it waits at a join its worker runs other work. A panic goes to the pool's panic
    /// handler.
    pub fn spawn_job(&self, job: impl FnOnce() + Send + 'static) {
        let registry = self.registry.clone();
        let j = HeapJob::into_job_ref(move || {
            if let Err(p) = job::catch(job) {
                registry.handle_panic(p);
            }
        });
        self.registry.inject(j);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.registry.terminate.store(true, Ordering::Release);
        self.registry.sleep.wake_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A job that runs a closure for a blocked foreign thread.
#[repr(C)]
struct InstallJob<F, R> {
    header: JobHeader,
    op: crate::sync::UnsafeCell<Option<F>>,
    result: crate::sync::UnsafeCell<Option<Result<R, Panic>>>,
    done: Mutex<bool>,
    cv: Condvar,
}

impl<F: FnOnce() -> R + Send, R: Send> InstallJob<F, R> {
    fn new(op: F) -> Self {
        Self {
            header: JobHeader::new(Self::run),
            op: crate::sync::UnsafeCell::new(Some(op)),
            result: crate::sync::UnsafeCell::new(None),
            done: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    fn as_job_ref(&self) -> JobRef {
        std::ptr::NonNull::from(&self.header)
    }

    unsafe fn run(job: JobRef) {
        // SAFETY: the job lives on the stack of `install`, which blocks in `wait`
        // until `done` is set below; the injector hands it to exactly one worker.
        let this = unsafe { job.cast::<Self>().as_ref() };
        // SAFETY: exclusive access: only this run touches `op` and `result` before
        // `done` is published.
        let op = this.op.with_mut(|p| unsafe { (*p).take() });
        let r = job::catch(|| (op.expect("install job run twice"))());
        // SAFETY: as above.
        this.result.with_mut(|p| unsafe { *p = Some(r) });
        let mut d = this.done.lock().unwrap_or_else(|e| e.into_inner());
        *d = true;
        this.cv.notify_one();
        // `d` (the guard) is dropped last; after that `this` must not be touched.
    }

    fn wait(&self) -> R {
        let mut d = self.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*d {
            d = self.cv.wait(d).unwrap_or_else(|e| e.into_inner());
        }
        drop(d);
        // SAFETY: `done` was set under the mutex after the result was written.
        let r = self.result.with_mut(|p| unsafe { (*p).take() });
        match r {
            Some(Ok(v)) => v,
            Some(Err(p)) => panic::resume_unwind(p),
            None => unreachable!("install job finished without a result"),
        }
    }
}
