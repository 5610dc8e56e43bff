//! Workers: one OS thread each, dispatching user-level tasks from a private ready set
//! and receiving wake-ups and new tasks through a mailbox (seed 000 §4.2).
//!
//! # Worker loop
//!
//! 1. Drain the mailbox: `Wake` puts a task into the ready set, `Start` creates a
//!    task's execution context (on a pooled stack) and makes it ready.
//! 2. Fetch a ready task and switch to its context until it yields, blocks or ends
//!    (a task that blocks may first switch straight to further ready tasks, see
//!    [`suspend`]; the last of them switches back).
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
use crate::fiber;
use crate::monitor::WorkerMonitor;
use crate::runtime::{Msg, RtShared};
use crate::sched::ReadyQueue;
use crate::stack_pool::StackPool;
use crate::stream::Dirty;
use crate::task::{Activation, Body, Suspend, Task, TaskExit, TaskState};
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

/// Distinct cache-line offsets of task stack tops (see `make_context`).
const STACK_COLOURS: u64 = 16;

// Values passed by a switch into a task's context (returned by its `fiber::switch`).
/// Run on.
const RESUME_RUN: usize = 0;
/// Unwind the task's stack (shutdown): the suspended call panics with [`ForcedUnwind`].
const RESUME_UNWIND: usize = 1;

// Values passed by a task's context when it switches to its worker.
/// Blocked (registered as a waiter): do not requeue.
const SUSP_BLOCK: usize = 0;
/// Still ready (`yield_now`).
const SUSP_YIELD: usize = 1;
/// The body has ended; `Local::exit` says how.
const SUSP_DONE: usize = 2;
/// The body panicked; `Local::panic` holds the payload.
const SUSP_PANIC: usize = 3;

/// Panic payload that unwinds a suspended task's stack at shutdown.
struct ForcedUnwind;

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
    /// The running task: a reference (`Arc::into_raw`) owned by the dispatch, which a
    /// task that blocks leaves leaked as its blocked reference (see `task`).
    current: Cell<*const Task>,
    /// Saved stack pointer of the worker's own context while a task runs.
    sched_sp: Cell<*mut u8>,
    /// Dispatches since the mailbox was last drained.
    since_mail: Cell<u32>,
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
    /// Tasks created (contexts started) on this worker, migrations included.
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

/// Suspends the running task with `why`. A blocked task switches straight to the
/// next ready task of its worker when it can (nothing monitored, the mailbox not due
/// for a check, the next task already started); otherwise to the worker.
///
/// # Safety
///
/// Must be called from inside a task (on the context of `task`), where `task` is the
/// current task of this worker thread.
#[inline]
pub(crate) unsafe fn suspend(task: &Task, why: Suspend) {
    let c = CTX.with(|c| c.get());
    // SAFETY: a task runs only on its worker thread, whose context outlives it (the
    // caller contract); `c` is not used after the switch (a task unwound at shutdown
    // resumes on another thread).
    let r = unsafe {
        let c = &*c;
        // Direct switches only when nothing is monitored or timed per dispatch (the
        // worker loop records those).
        if why == Suspend::Block && !c.timing && c.mail_can_wait() {
            if let Some(next) = c.ready().fetch_started() {
                // Our own reference stays leaked in `current`'s place: it is the
                // blocked reference.
                let (np, _) = c.begin_run(next);
                fiber::switch(task.sp.as_ptr(), (*np).sp.get(), RESUME_RUN)
            } else {
                fiber::switch(task.sp.as_ptr(), c.sched_sp.get(), SUSP_BLOCK)
            }
        } else {
            let code = match why {
                Suspend::Block => SUSP_BLOCK,
                Suspend::Yield => SUSP_YIELD,
            };
            fiber::switch(task.sp.as_ptr(), c.sched_sp.get(), code)
        }
    };
    if r == RESUME_UNWIND {
        std::panic::resume_unwind(Box::new(ForcedUnwind));
    }
}

/// First code of a task's context (see `fiber::init`): runs the body, records how it
/// ended, and switches to `Local::ret` for the last time.
///
/// # Safety
///
/// `data` is the task, kept alive by whoever switched in (the dispatching worker, or
/// the unwinder at shutdown).
unsafe extern "C" fn task_entry(arg: usize, data: *mut u8) -> ! {
    let tp = data.cast_const().cast::<Task>();
    // SAFETY: function contract.
    let t = unsafe { &*tp };
    // SAFETY: the task's context is the only code touching its local part while it
    // runs (the worker holds no borrow across the switch); each use is short.
    let body = unsafe { t.local().pending.take() };
    let outcome = match body {
        Some(body) if arg != RESUME_UNWIND => catch_unwind(AssertUnwindSafe(|| run_body(t, body))),
        // Unwound before it ever ran (or no body at all).
        body => {
            drop(body);
            Ok(TaskExit::Done)
        }
    };
    let (exit, code) = match outcome {
        Ok(exit) => (exit, SUSP_DONE),
        Err(p) if p.is::<ForcedUnwind>() => (TaskExit::Done, SUSP_DONE),
        Err(p) => {
            // SAFETY: as above.
            unsafe { t.local().panic = Some(p) };
            (TaskExit::Done, SUSP_PANIC)
        }
    };
    // SAFETY: as above.
    unsafe { t.local().exit = Some(exit) };
    // SAFETY: `ret` was set by whoever switched in and points to its saved stack
    // pointer; nothing on this stack needs dropping any more (the body and the panic
    // payload have been consumed or moved into `local`).
    unsafe {
        let ret = t.local().ret;
        fiber::switch(t.sp.as_ptr(), *ret, code);
    }
    // A finished context is never resumed.
    std::process::abort()
}

/// Runs a task's body: once, or activation after activation until it is done or
/// placement moves it to another worker.
fn run_body(task: &Task, body: Body) -> TaskExit {
    match body {
        Body::Once(f) => {
            f();
            TaskExit::Done
        }
        Body::Repeat(mut f) => loop {
            match f() {
                Activation::Done => return TaskExit::Done,
                Activation::Again => {
                    if let Some(p) = with_ctx(|c| c.and_then(|c| c.random_p)) {
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
}

/// Ends a task that will not run again (shutdown): a started context is switched
/// into once more and unwinds its stack (its frames' destructors run on the calling
/// thread), a body that never ran is dropped. Returns the freed stack.
///
/// # Safety
///
/// The caller owns the task, which is not running and is not referenced by any ready
/// set or mailbox that will dispatch it.
pub(crate) unsafe fn unwind_task(t: &Task) -> Option<crate::stack_pool::TaskStack> {
    if t.sp.get().is_null() {
        // SAFETY: caller contract.
        drop(unsafe { t.local().pending.take() });
        return None;
    }
    let mut here: *mut u8 = ptr::null_mut();
    // SAFETY: caller contract; the context is suspended in a switch (or new), its
    // stack alive; it switches back to `here` when it has unwound.
    unsafe {
        t.local().ret = &mut here;
        fiber::switch(&mut here, t.sp.get(), RESUME_UNWIND);
        t.sp.set(ptr::null_mut());
        let l = t.local();
        drop(l.exit.take());
        drop(l.panic.take());
        l.stack.take()
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
#[cfg(not(loom))] // only the S-Net engine (not built under loom) uses it
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
            sched_sp: Cell::new(ptr::null_mut()),
            since_mail: Cell::new(0),
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

    /// Whether a blocking task may switch straight to the next ready task as far as
    /// the mailbox is concerned: fewer than `MAIL_EVERY` dispatches since it was
    /// drained, or, at that point, nothing in it and no shutdown (the count restarts).
    /// Only mail (or shutdown) sends a task back through the worker loop.
    #[inline(always)]
    fn mail_can_wait(&self) -> bool {
        if self.since_mail.get() < MAIL_EVERY {
            return true;
        }
        let empty =
            self.rt.workers[self.index].mailbox.is_empty() && !self.rt.shutdown.load(Relaxed);
        if empty {
            self.since_mail.set(0);
        }
        empty
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

    /// Makes a task assigned to this worker ready; its context is created at its
    /// first dispatch ([`WorkerCtx::make_context`]).
    pub(crate) fn start(&self, t: Arc<Task>, body: Body) {
        // SAFETY: owner-only access; the task is not running.
        unsafe { t.local().pending = Some(body) };
        self.put_ready(t);
    }

    /// Creates the execution context of a task at its first dispatch, on a stack from
    /// the pool. False if no stack could be had: the task is then recorded as failed
    /// and retired.
    #[cold]
    #[inline(never)]
    fn make_context(&self, t: &Arc<Task>) -> bool {
        // SAFETY: worker-thread only.
        let pool = unsafe { &mut *self.pool.get() };
        let stack = match pool.take(t.stack_size) {
            Ok(s) => s,
            Err(e) => {
                self.rt
                    .record_failure(t, format!("cannot allocate a task stack: {e}"));
                // SAFETY: owner-only access; the task is not running.
                drop(unsafe { t.local().pending.take() });
                self.retire(t.clone());
                return false;
            }
        };
        self.stats().started += 1;
        self.stats().stacks_created = pool.created();
        // Stack colouring: stack tops are page-aligned, so without an offset the hot
        // frames of every blocked task (suspended at the same depth in the same code)
        // fall into the same few L1 sets (64 sets of 8 ways on this machine's cores),
        // and ten tasks already evict each other. Successive contexts start 64 bytes
        // apart, over 16 colours (at most 960 bytes of the stack): ring n = 10 at 1
        // worker, 24 interleaved runs each, median 15.5 against 19 ns.
        let colour = (self.stats().started % STACK_COLOURS) as usize * 64;
        let top = stack.top().wrapping_sub(colour);
        let tp: *const Task = &**t;
        // SAFETY: owner-only access; the task is not running. The stack is ours, its
        // top aligned, and far larger than the initial frame; `task_entry` gets the
        // task, which the dispatch keeps alive while the context runs.
        unsafe {
            let l = t.local();
            l.stack = Some(stack);
            l.ret = self.sched_sp.as_ptr();
            t.sp.set(fiber::init(top, task_entry, tp.cast_mut().cast()));
        }
        true
    }

    #[inline]
    fn dispatch(&self, t: Arc<Task>) {
        if t.sp.get().is_null() {
            // First dispatch.
            if self.make_context(&t) {
                self.dispatch(t);
            }
            return;
        }
        // SAFETY: we own `t` and it is not running; this borrow ends before the switch.
        let l = unsafe { t.local() };
        let start = if self.timing { now_ns() } else { 0 };
        if self.timing {
            if let Some(window) = self.track_ready {
                record_ready_time(&t, l, start.saturating_sub(l.ready_since), window);
            }
        }
        let (tp, disp) = self.begin_run(t);
        // SAFETY: the task's context is suspended (or new) on its stack, which the
        // task owns; we hold the reference in `current` while it runs.
        let code = unsafe { fiber::switch(self.sched_sp.as_ptr(), (*tp).sp.get(), RESUME_RUN) };
        // The task that switched back may be another one than `tp` (blocked tasks
        // switch straight to the next ready task): `current` names it.
        let tp = self.current.replace(ptr::null());
        if code == SUSP_BLOCK && !(self.timing || self.mon_streams) {
            // The common case, without monitoring: the reference in `current` stays
            // leaked as the blocked reference (see the `SUSP_BLOCK` arm below).
            return;
        }
        // SAFETY: `current` held a reference made by `Arc::into_raw`.
        let t = unsafe { Arc::from_raw(tp) };
        self.after_dispatch(t, code, disp, start);
    }

    /// Dispatch bookkeeping shared by the worker's dispatch and a task's direct switch:
    /// counts the dispatch, marks `t` running and makes it `current` (its reference
    /// moves there). Returns the task and its dispatch number.
    #[inline(always)]
    fn begin_run(&self, t: Arc<Task>) -> (*const Task, u64) {
        // SAFETY: we own `t` and it is not running; the borrow ends here.
        let l = unsafe { t.local() };
        l.dispatches += 1;
        let disp = l.dispatches;
        self.stats().dispatches += 1;
        self.since_mail.set(self.since_mail.get() + 1);
        t.set_state(TaskState::Running);
        let tp = Arc::into_raw(t);
        self.current.set(tp);
        (tp, disp)
    }

    /// The rest of [`WorkerCtx::dispatch`]: monitoring output, and what the task's
    /// suspension or end asks for.
    #[inline(never)]
    fn after_dispatch(&self, t: Arc<Task>, code: usize, disp: u64, start: u64) {
        let end = if self.timing { now_ns() } else { 0 };
        match code {
            SUSP_YIELD => {
                self.monitor_dispatch(&t, TaskState::Ready, disp, start, end);
                self.put_ready(t);
            }
            SUSP_BLOCK => {
                self.monitor_dispatch(&t, t.state(), disp, start, end);
                // The blocked reference: see the `task` module documentation. The
                // task cannot be dispatched again before we return to the loop
                // (wake-ups for it go to our ready set or mailbox).
                let _ = Arc::into_raw(t);
            }
            SUSP_PANIC => {
                // SAFETY: owner-only; the context has ended.
                let payload = unsafe { t.local().panic.take() };
                let msg = payload.map_or_else(
                    || "panic with no payload".to_string(),
                    |p| panic_message(&*p),
                );
                self.rt.record_failure(&t, msg);
                self.give_stack(&t);
                self.monitor_dispatch(&t, TaskState::Zombie, disp, start, end);
                self.retire(t);
            }
            _ => {
                // SUSP_DONE.
                self.give_stack(&t);
                // SAFETY: owner-only; the context has ended.
                match unsafe { t.local().exit.take() } {
                    Some(TaskExit::Migrate(f)) => {
                        self.monitor_dispatch(&t, TaskState::Ready, disp, start, end);
                        let target = t.next_worker.swap(crate::task::NO_WORKER, Relaxed);
                        self.stats().migrations_out += 1;
                        t.owner.store(target, Release);
                        t.set_state(TaskState::Created);
                        self.rt.send(target, Msg::Start(t, Body::Repeat(f)));
                    }
                    _ => {
                        self.monitor_dispatch(&t, TaskState::Zombie, disp, start, end);
                        self.retire(t);
                    }
                }
            }
        }
    }

    /// Pools the stack of a task whose context has ended.
    fn give_stack(&self, t: &Task) {
        t.sp.set(ptr::null_mut());
        // SAFETY: owner-only; the context has ended (its last switch left the stack).
        if let Some(stack) = unsafe { t.local().stack.take() } {
            // SAFETY: worker-thread only.
            unsafe { (*self.pool.get()).give(stack, t.stack_size) };
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
    loop {
        // Step 1: the mailbox is drained every MAIL_EVERY dispatches and whenever the
        // ready set runs empty (a remote wake-up waits at most MAIL_EVERY local
        // dispatches; the check is not paid on every local switch). Direct switches
        // between tasks count as dispatches and look at the mailbox themselves at that
        // point (`mail_can_wait`): a task comes back here only when there is mail.
        if ctx.since_mail.get() >= MAIL_EVERY {
            ctx.since_mail.set(0);
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
    // Shutdown: end the tasks still ready here (forced unwind of their stacks, on
    // this thread).
    for t in ctx.ready().drain() {
        // SAFETY: owner-only; not running, no longer queued.
        drop(unsafe { unwind_task(&t) });
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
                    // SAFETY: owner-only; the task is not running, no longer queued.
                    drop(unsafe { unwind_task(&t) });
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
