//! Workers: one OS thread each, dispatching user-level tasks from a private ready set
//! and receiving wake-ups and new tasks through a mailbox (seed 000 §4.2).
//!
//! # Worker loop
//!
//! 1. Drain the mailbox: `Wake` puts a task into the ready set, `Start` creates a
//!    task's coroutine (on a pooled stack) and makes it ready.
//! 2. Fetch a ready task and resume its coroutine until it yields, blocks or ends.
//! 3. Write monitoring output for that dispatch; requeue (yield), forget (blocked:
//!    the waker re-materialises it, see `task`), or retire it (zombie / migrate).
//! 4. With nothing ready, spin briefly on the mailbox, then sleep (below).
//!
//! # Sleeping and quiescence
//!
//! `RtShared::active` counts awake workers plus external threads in the middle of a
//! send. A worker going to sleep (1) sets `sleeping` (SeqCst), (2) fences and
//! re-checks its mailbox — Dekker with a sender's push + fence + `sleeping.swap`:
//! either the worker sees the message or the sender sees the flag; (3) decrements
//! `active`; the worker that brings it to zero signals quiescence; (4) parks until a
//! sender swaps `sleeping` to false. The sender that clears the flag increments
//! `active` on the sleeper's behalf *before* unparking it, while its own thread still
//! counts as active, so `active` never reads zero while a wake-up is in flight. Zero is
//! therefore stable: no worker awake, no message queued, nothing can become ready —
//! the run has finished, or every remaining task is blocked (a deadlock).

use crate::chan::{notify_poll, Wake};
use crate::clock::now_ns;
use crate::config::Strategy;
use crate::monitor::WorkerMonitor;
use crate::runtime::{Msg, RtShared};
use crate::sched::ReadyQueue;
use crate::stack_pool::StackPool;
use crate::stream::Dirty;
use crate::task::{Activation, Body, Co, Suspend, Task, TaskExit, TaskState, TaskYielder};
use corosensei::{Coroutine, CoroutineResult};
use std::cell::{Cell, UnsafeCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::sync::atomic::{fence, AtomicBool};
use std::sync::Arc;

/// Mailbox checks between two clock reads while spinning idle.
const IDLE_SPINS: u32 = 64;

/// Dispatches between mailbox checks while the ready set holds several tasks.
const MAIL_EVERY: u32 = 16;

thread_local! {
    static CTX: Cell<*const WorkerCtx> = const { Cell::new(ptr::null()) };
}

/// Per-worker state, owned by the worker thread and reachable from its tasks
/// through a thread-local pointer.
pub(crate) struct WorkerCtx {
    pub(crate) rt: Arc<RtShared>,
    pub(crate) index: usize,
    ready: UnsafeCell<ReadyQueue>,
    pool: UnsafeCell<StackPool>,
    current: Cell<*const Task>,
    /// Streams touched in the current dispatch (monitoring level b and up).
    pub(crate) dirty: UnsafeCell<Vec<Dirty>>,
    pub(crate) mon_streams: bool,
    monitor: UnsafeCell<Option<WorkerMonitor>>,
    timing: bool,
    track_ready: Option<usize>,
    random_p: Option<f64>,
    rng: Cell<u64>,
    pub(crate) stats: UnsafeCell<WorkerStats>,
}

/// Counters of one worker.
#[derive(Debug, Default, Clone)]
pub struct WorkerStats {
    /// Task dispatches.
    pub dispatches: u64,
    /// Tasks created (coroutines started) on this worker, migrations included.
    pub started: u64,
    /// Activations that moved away from this worker.
    pub migrations_out: u64,
    /// Times the worker went to sleep.
    pub waits: u64,
    /// Nanoseconds spent asleep.
    pub wait_ns: u64,
    /// Stacks newly mapped (not from the pool).
    pub stacks_created: u64,
}

/// Runs `f` with the current thread's worker context, if it is a worker.
#[inline]
pub(crate) fn with_ctx<R>(f: impl FnOnce(Option<&WorkerCtx>) -> R) -> R {
    let p = CTX.with(|c| c.get());
    // SAFETY: CTX is set only by `run_worker` for the lifetime of its stack frame that
    // owns the context, and reset before that frame ends.
    f(unsafe { p.as_ref() })
}

/// The task running on this thread, if any.
#[inline]
pub(crate) fn current_task() -> *const Task {
    with_ctx(|c| c.map_or(ptr::null(), |c| c.current.get()))
}

/// Whether the current thread is a worker of `rt`, and its index.
#[inline]
pub(crate) fn worker_index_of(rt: &RtShared) -> Option<usize> {
    with_ctx(|c| c.and_then(|c| ptr::eq(&*c.rt, rt).then_some(c.index)))
}

/// Suspends the running task with `why`.
///
/// # Safety
///
/// Must be called from inside a task (the coroutine of `task`), where `task` is the
/// current task of this worker.
#[inline]
pub(crate) unsafe fn suspend(task: &Task, why: Suspend) {
    // SAFETY: the yielder pointer was stored by the coroutine's entry closure and
    // stays valid while the coroutine exists; we are inside it.
    unsafe {
        (*task.yielder.get()).suspend(why);
    }
}

/// Wakes a waiter handed out by the stream protocol (`Wake::Blocked`/`Wake::Poll`).
/// Returns whether somebody was woken.
#[inline(always)]
pub(crate) fn handle_wake(w: Wake<Task>) -> bool {
    match w {
        Wake::None => false,
        Wake::Blocked(p) => {
            // SAFETY: the stream protocol handed us the exclusive claim on `p`.
            unsafe { wake(p) };
            true
        }
        Wake::Poll(p) => {
            // SAFETY: `p` came out of a `Wake::Poll`; we only wake it if we won.
            if unsafe { notify_poll(p) } {
                // SAFETY: winning the token is the exclusive claim.
                unsafe { wake(p) };
                true
            } else {
                false
            }
        }
    }
}

/// Makes a blocked task ready again.
///
/// # Safety
///
/// The caller holds the exclusive claim on the waiter (see `chan`); for a task this
/// is the blocked reference leaked by its worker.
#[inline(always)]
pub(crate) unsafe fn wake(p: *const Task) {
    // SAFETY: the claim keeps the task alive until it is woken.
    let t = unsafe { &*p };
    if let Some(ext) = &t.external {
        wake_external(ext);
        return;
    }
    // SAFETY: re-materialise the blocked reference (module docs of `task`).
    let arc = unsafe { Arc::from_raw(p) };
    deliver(arc);
}

/// Wakes a thread outside the runtime blocked on a stream.
#[cold]
#[inline(never)]
fn wake_external(ext: &crate::task::External) {
    // Notify while holding the lock: the external thread cannot return (and drop its
    // waiter) before we release it.
    let mut g = ext.woken.lock().unwrap_or_else(|e| e.into_inner());
    *g = true;
    ext.cv.notify_one();
    drop(g);
}

/// Puts a woken task into its owner's ready set (directly if we are the owner).
#[inline(always)]
pub(crate) fn deliver(t: Arc<Task>) {
    deliver_at(t, false);
}

/// Like [`deliver`], but the task goes ahead of the tasks already ready on its worker
/// (an urgent wake-up, off the hot path: the S-Net engine's evicted box tasks, which
/// only end and give their stacks back).
pub(crate) fn deliver_first(t: Arc<Task>) {
    deliver_at(t, true);
}

#[inline(always)]
fn deliver_at(t: Arc<Task>, first: bool) {
    let owner = t.owner.load(Acquire);
    let rt_ptr: *const RtShared = t.rt.as_deref().map_or(ptr::null(), |r| r);
    let c = CTX.with(|c| c.get());
    // SAFETY: CTX points to this thread's live worker context (see `with_ctx`).
    if let Some(c) = unsafe { c.as_ref() } {
        if c.index == owner && ptr::eq(&*c.rt, rt_ptr) {
            c.put_ready_at(t, first);
            return;
        }
    }
    deliver_remote(t, owner, first);
}

/// [`deliver`] to another worker's mailbox (or nowhere, for a task of a runtime
/// that is shutting down).
#[inline(never)]
fn deliver_remote(t: Arc<Task>, owner: usize, first: bool) {
    let Some(rt) = t.rt.clone() else { return };
    if rt.shutdown.load(Acquire) {
        return; // the runtime is being torn down: the task will not run again
    }
    let msg = if first {
        Msg::WakeFirst(t)
    } else {
        Msg::Wake(t)
    };
    rt.send(owner, msg);
}

impl WorkerCtx {
    fn new(rt: Arc<RtShared>, index: usize) -> std::io::Result<WorkerCtx> {
        let cfg = &rt.cfg;
        let monitor = match &cfg.monitoring {
            Some(m) => Some(WorkerMonitor::new(m, index)?),
            None => None,
        };
        let (track_ready, random_p) = match cfg.placement.map(|p| p.strategy) {
            Some(Strategy::WaitingTime { window, .. }) => (Some(window.max(1)), None),
            Some(Strategy::Random { p }) => (None, Some(p)),
            None => (None, None),
        };
        Ok(WorkerCtx {
            index,
            ready: UnsafeCell::new(ReadyQueue::new(cfg.scheduling)),
            pool: UnsafeCell::new(StackPool::new(cfg.stack_size)),
            current: Cell::new(ptr::null()),
            dirty: UnsafeCell::new(Vec::new()),
            mon_streams: monitor.as_ref().is_some_and(|m| m.wants_streams()),
            timing: monitor.is_some() || track_ready.is_some(),
            monitor: UnsafeCell::new(monitor),
            track_ready,
            random_p,
            rng: Cell::new(cfg.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            stats: UnsafeCell::new(WorkerStats::default()),
            rt,
        })
    }

    #[inline]
    #[expect(clippy::mut_from_ref, reason = "worker-thread-only state, see SAFETY")]
    fn ready(&self) -> &mut ReadyQueue {
        // SAFETY: only this worker thread touches its ready set, and no reference to
        // it is held across a call that could re-enter (each use is a single
        // put/fetch).
        unsafe { &mut *self.ready.get() }
    }

    #[inline]
    #[expect(clippy::mut_from_ref, reason = "worker-thread-only state, see SAFETY")]
    fn stats(&self) -> &mut WorkerStats {
        // SAFETY: worker-thread only, short-lived uses.
        unsafe { &mut *self.stats.get() }
    }

    /// PUT-READY on this worker.
    #[inline(always)]
    pub(crate) fn put_ready(&self, t: Arc<Task>) {
        self.put_ready_at(t, false);
    }

    /// PUT-READY, ahead of every ready task if `first`.
    #[inline(always)]
    fn put_ready_at(&self, t: Arc<Task>, first: bool) {
        t.set_state(TaskState::Ready);
        if self.track_ready.is_some() {
            // SAFETY: we own the task (it is being put into our ready set).
            unsafe { t.local().ready_since = now_ns() };
        }
        if first {
            self.ready().put_first(t);
        } else {
            self.ready().put(t);
        }
    }

    /// Makes a task assigned to this worker ready; its coroutine is created at its
    /// first dispatch ([`WorkerCtx::make_coroutine`]).
    pub(crate) fn start(&self, t: Arc<Task>, body: Body) {
        // SAFETY: owner-only access; the task is not running.
        unsafe { t.local().pending = Some(body) };
        self.put_ready(t);
    }

    /// Creates the coroutine of a task at its first dispatch, on a stack from the pool.
    /// False if no stack could be had: the task is then recorded as failed and retired.
    #[cold]
    #[inline(never)]
    fn make_coroutine(&self, t: &Arc<Task>) -> bool {
        // SAFETY: owner-only access; the task is not running.
        let Some(body) = (unsafe { t.local().pending.take() }) else {
            return false; // cannot happen: a ready task has a body or a coroutine
        };
        // SAFETY: worker-thread only.
        let pool = unsafe { &mut *self.pool.get() };
        let stack = match pool.take(t.stack_size) {
            Ok(s) => s,
            Err(e) => {
                self.rt
                    .record_failure(t, format!("cannot allocate a task stack: {e}"));
                self.retire(t.clone());
                return false;
            }
        };
        self.stats().started += 1;
        self.stats().stacks_created = pool.created();
        let tp: *const Task = &**t;
        let random_p = self.random_p;
        let co: Co = Coroutine::with_stack(stack, move |y: &TaskYielder, ()| {
            // SAFETY: the task outlives its coroutine (the worker holds an Arc while
            // running it); this runs on the owner worker.
            unsafe { (*tp).yielder.set(y) };
            match body {
                Body::Once(f) => {
                    f();
                    TaskExit::Done
                }
                Body::Repeat(mut f) => loop {
                    match f() {
                        Activation::Done => return TaskExit::Done,
                        Activation::Again => {
                            // SAFETY: as above.
                            let task = unsafe { &*tp };
                            if let Some(p) = random_p {
                                activation_hook_random(task, p);
                            }
                            let next = task.next_worker.load(Relaxed);
                            if next != crate::task::NO_WORKER && next != task.owner.load(Relaxed) {
                                return TaskExit::Migrate(f);
                            }
                        }
                    }
                },
            }
        });
        // SAFETY: owner-only access; the task is not running.
        unsafe { t.local().co = Some(co) };
        true
    }

    #[inline]
    fn dispatch(&self, t: Arc<Task>) {
        // SAFETY: we own `t` and it is not running; the task itself never touches
        // `local` (it uses `yielder`), so this borrow does not alias during resume.
        let l = unsafe { t.local() };
        if l.co.is_none() {
            // First dispatch (`l` is not used again: `make_coroutine` borrows anew).
            if self.make_coroutine(&t) {
                self.dispatch(t);
            }
            return;
        }
        let start = if self.timing { now_ns() } else { 0 };
        if self.timing {
            if let Some(window) = self.track_ready {
                record_ready_time(&t, l, start.saturating_sub(l.ready_since), window);
            }
        }
        let Some(co) = l.co.as_mut() else {
            return; // checked above
        };
        l.dispatches += 1;
        let disp = l.dispatches;
        self.stats().dispatches += 1;
        t.set_state(TaskState::Running);
        self.current.set(&*t);
        let result = catch_unwind(AssertUnwindSafe(|| co.resume(())));
        self.current.set(ptr::null());
        if matches!(result, Ok(CoroutineResult::Yield(Suspend::Block)))
            && !(self.timing || self.mon_streams)
        {
            // The common case, without monitoring: see the `Block` arm below.
            let _ = Arc::into_raw(t);
            return;
        }
        self.after_dispatch(t, result, disp, start);
    }

    /// The rest of [`WorkerCtx::dispatch`]: monitoring output, and what the task's
    /// suspension or end asks for.
    #[inline(never)]
    fn after_dispatch(
        &self,
        t: Arc<Task>,
        result: std::thread::Result<CoroutineResult<Suspend, TaskExit>>,
        disp: u64,
        start: u64,
    ) {
        let end = if self.timing { now_ns() } else { 0 };
        match result {
            Ok(CoroutineResult::Yield(Suspend::Yield)) => {
                self.monitor_dispatch(&t, TaskState::Ready, disp, start, end);
                self.put_ready(t);
            }
            Ok(CoroutineResult::Yield(Suspend::Block)) => {
                self.monitor_dispatch(&t, t.state(), disp, start, end);
                // The blocked reference: see the `task` module documentation. The
                // task cannot be dispatched again before we return to the loop
                // (wake-ups for it go to our ready set or mailbox).
                let _ = Arc::into_raw(t);
            }
            Ok(CoroutineResult::Return(TaskExit::Done)) => {
                self.give_stack(&t);
                self.monitor_dispatch(&t, TaskState::Zombie, disp, start, end);
                self.retire(t);
            }
            Ok(CoroutineResult::Return(TaskExit::Migrate(f))) => {
                self.give_stack(&t);
                self.monitor_dispatch(&t, TaskState::Ready, disp, start, end);
                let target = t.next_worker.swap(crate::task::NO_WORKER, Relaxed);
                self.stats().migrations_out += 1;
                t.owner.store(target, Release);
                t.set_state(TaskState::Created);
                self.rt.send(target, Msg::Start(t, Body::Repeat(f)));
            }
            Err(payload) => {
                let msg = panic_message(&*payload);
                self.rt.record_failure(&t, msg);
                self.give_stack(&t);
                self.monitor_dispatch(&t, TaskState::Zombie, disp, start, end);
                self.retire(t);
            }
        }
    }

    /// Takes the finished coroutine out of the task and pools its stack.
    fn give_stack(&self, t: &Task) {
        // SAFETY: owner-only; the coroutine has finished.
        if let Some(co) = unsafe { t.local().co.take() } {
            if co.done() {
                // SAFETY: worker-thread only.
                unsafe { (*self.pool.get()).give(co.into_stack(), t.stack_size) };
            }
        }
    }

    fn retire(&self, t: Arc<Task>) {
        t.set_state(TaskState::Zombie);
        self.rt.retire(&t);
    }

    #[inline]
    fn monitor_dispatch(&self, t: &Task, state: TaskState, disp: u64, start: u64, end: u64) {
        if self.timing || self.mon_streams {
            self.monitor_dispatch_slow(t, state, disp, start, end);
        }
    }

    #[cold]
    fn monitor_dispatch_slow(&self, t: &Task, state: TaskState, disp: u64, start: u64, end: u64) {
        // SAFETY: worker-thread only, short-lived.
        let mon = unsafe { &mut *self.monitor.get() };
        // SAFETY: worker-thread only.
        let dirty = unsafe { &mut *self.dirty.get() };
        if let Some(m) = mon {
            m.dispatch(t, state, disp, start, end, dirty);
        }
        for d in dirty.drain(..) {
            d.clear();
        }
    }

    fn drain_mailbox(&self) {
        let ws = &self.rt.workers[self.index];
        loop {
            // SAFETY: this worker is the mailbox's only consumer.
            match unsafe { ws.mailbox.pop() } {
                crate::mailbox::Pop::Data(Msg::Wake(t)) => self.put_ready(t),
                crate::mailbox::Pop::Data(Msg::WakeFirst(t)) => self.put_ready_at(t, true),
                crate::mailbox::Pop::Data(Msg::Start(t, body)) => self.start(t, body),
                crate::mailbox::Pop::Empty => return,
                crate::mailbox::Pop::Retry => std::hint::spin_loop(),
            }
        }
    }

    fn idle(&self) {
        let ws = &self.rt.workers[self.index];
        // Spin on the mailbox for up to `idle_spin_ns` before sleeping: a wake-up
        // through the futex costs microseconds, a message seen while spinning costs
        // a cache miss.
        let spin_ns = self.rt.cfg.idle_spin_us * 1000;
        if spin_ns > 0 {
            let t0 = now_ns();
            'spin: loop {
                for _ in 0..IDLE_SPINS {
                    if !ws.mailbox.is_empty() || self.rt.shutdown.load(Relaxed) {
                        return;
                    }
                    std::hint::spin_loop();
                }
                if now_ns() - t0 > spin_ns {
                    break 'spin;
                }
                // Let another runnable thread (possibly the worker we wait for) have
                // this core when the machine is oversubscribed.
                std::thread::yield_now();
            }
        }
        // Step 1-2 of the sleep protocol.
        ws.sleeping.store(true, SeqCst);
        fence(SeqCst);
        if !ws.mailbox.is_empty() || self.rt.shutdown.load(SeqCst) {
            if !ws.sleeping.swap(false, SeqCst) {
                // A sender cleared the flag and counted us as active again: undo,
                // we never stopped counting.
                self.rt.active.fetch_sub(1, SeqCst);
            }
            return;
        }
        // Step 3.
        let t0 = now_ns();
        if self.rt.active.fetch_sub(1, SeqCst) == 1 {
            self.rt.notify_quiescent();
        }
        // Step 4.
        while ws.sleeping.load(SeqCst) {
            std::thread::park();
        }
        let waited = now_ns() - t0;
        let s = self.stats();
        s.waits += 1;
        s.wait_ns += waited;
        // SAFETY: worker-thread only.
        if let Some(m) = unsafe { &mut *self.monitor.get() } {
            m.worker_waited(self.index, s.waits, waited);
        }
    }
}

fn activation_hook_random(task: &Task, p: f64) {
    with_ctx(|c| {
        if let Some(c) = c {
            let mut x = c.rng.get();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            c.rng.set(x);
            if ((x >> 11) as f64 / (1u64 << 53) as f64) < p {
                task.candidate.store(true, Relaxed);
            }
        }
    })
}

fn record_ready_time(t: &Task, l: &mut crate::task::Local, ns: u64, window: usize) {
    if l.window.len() < window {
        l.window.push(ns);
    } else {
        l.window[l.window_pos] = ns;
        l.window_pos = (l.window_pos + 1) % window;
    }
    let avg = l.window.iter().sum::<u64>() / l.window.len() as u64;
    t.ready_avg.store(avg.max(1), Relaxed);
}

pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// Body of a worker thread.
pub(crate) fn run_worker(rt: Arc<RtShared>, index: usize, started: Arc<AtomicBool>) -> WorkerStats {
    let ctx = match WorkerCtx::new(Arc::clone(&rt), index) {
        Ok(c) => c,
        Err(e) => {
            rt.record_setup_error(format!("worker {index}: {e}"));
            started.store(true, Release);
            return WorkerStats::default();
        }
    };
    if rt.cfg.pin_workers {
        pin_to_core(index);
    }
    CTX.with(|c| c.set(&ctx));
    if ctx.mon_streams {
        crate::stream::STREAM_MONITORS.fetch_add(1, Relaxed);
    }
    started.store(true, Release);
    let mut since_mail = 0u32;
    loop {
        // Step 1: the mailbox is drained every MAIL_EVERY dispatches and whenever the
        // ready set runs empty (a remote wake-up waits at most MAIL_EVERY local
        // dispatches; the check is not paid on every local switch).
        since_mail += 1;
        if since_mail >= MAIL_EVERY {
            since_mail = 0;
            ctx.drain_mailbox();
            if rt.shutdown.load(Acquire) {
                break;
            }
        }
        if let Some(t) = ctx.ready().fetch() {
            ctx.dispatch(t);
            continue;
        }
        ctx.drain_mailbox();
        if rt.shutdown.load(Acquire) {
            break;
        }
        if ctx.ready().len() == 0 {
            ctx.idle();
        }
    }
    // Shutdown: drop the coroutines of tasks still ready here (forced unwind of
    // their stacks, on this thread).
    for t in ctx.ready().drain() {
        // SAFETY: owner-only; not running.
        let (co, body) = unsafe { (t.local().co.take(), t.local().pending.take()) };
        drop((co, body));
    }
    ctx.drain_mailbox_for_shutdown();
    // SAFETY: worker-thread only.
    if let Some(m) = unsafe { (*ctx.monitor.get()).take() } {
        let s = ctx.stats();
        m.finish(index, s.waits, s.wait_ns);
    }
    let stats = ctx.stats().clone();
    if ctx.mon_streams {
        crate::stream::STREAM_MONITORS.fetch_sub(1, Relaxed);
    }
    CTX.with(|c| c.set(ptr::null()));
    stats
}

impl WorkerCtx {
    fn drain_mailbox_for_shutdown(&self) {
        let ws = &self.rt.workers[self.index];
        loop {
            // SAFETY: this worker is the mailbox's only consumer.
            match unsafe { ws.mailbox.pop() } {
                crate::mailbox::Pop::Data(Msg::Wake(t) | Msg::WakeFirst(t)) => {
                    // SAFETY: owner-only; the task is not running.
                    drop(unsafe { (t.local().co.take(), t.local().pending.take()) });
                }
                crate::mailbox::Pop::Data(Msg::Start(_, body)) => drop(body),
                crate::mailbox::Pop::Empty => return,
                crate::mailbox::Pop::Retry => std::hint::spin_loop(),
            }
        }
    }
}

fn pin_to_core(index: usize) {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    // SAFETY: `set` is a zero-initialised cpu_set_t manipulated with the libc macros;
    // sched_setaffinity(0, ..) applies to the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(index % cores, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}
