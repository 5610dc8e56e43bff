//! The runtime: worker threads, task creation, quiescence and deadlock detection,
//! shutdown.

use crate::assign::Assigner;
use crate::config::Config;
use crate::mailbox::Mailbox;
use crate::stream::StreamRef;
use crate::task::{Activation, Body, Task, TaskId, TaskKind, TaskSpec, TaskState};
use crate::worker::{run_worker, with_ctx, worker_index_of, WorkerStats};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::sync::atomic::{fence, AtomicBool, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A mailbox message.
pub(crate) enum Msg {
    /// A blocked task became ready.
    Wake(Arc<Task>),
    /// A blocked task became ready and goes ahead of the ready tasks (see
    /// [`crate::worker::deliver_first`]).
    WakeFirst(Arc<Task>),
    /// Create the task's context here (new task, or a migrated continuation).
    Start(Arc<Task>, Body),
}

/// The shared side of one worker.
pub(crate) struct WorkerShared {
    pub(crate) mailbox: Mailbox<Msg>,
    pub(crate) sleeping: AtomicBool,
    pub(crate) thread: OnceLock<std::thread::Thread>,
}

/// State shared by the workers, the tasks and the runtime handle.
pub(crate) struct RtShared {
    pub(crate) cfg: Config,
    pub(crate) workers: Vec<WorkerShared>,
    /// Awake workers + external threads in the middle of a send (see `worker`).
    pub(crate) active: AtomicUsize,
    /// Tasks created and not yet finished.
    pub(crate) live: AtomicUsize,
    pub(crate) shutdown: AtomicBool,
    pub(crate) registry: crate::registry::Registry,
    idle_mx: Mutex<()>,
    idle_cv: Condvar,
    /// Called each time the runtime becomes quiescent (see [`Runtime::on_quiescent`]).
    quiet_hook: OnceLock<Box<dyn Fn() + Send + Sync>>,
    assigner: Assigner,
    failures: Mutex<Vec<TaskFailure>>,
    setup_errors: Mutex<Vec<String>>,
    pub(crate) task_map: Option<Mutex<std::io::BufWriter<std::fs::File>>>,
    spawned: AtomicUsize,
}

impl std::fmt::Debug for RtShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RtShared")
            .field("workers", &self.workers.len())
            .finish_non_exhaustive()
    }
}

/// A task that panicked (or could not start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskFailure {
    /// Task id.
    pub id: TaskId,
    /// Task name.
    pub name: String,
    /// Panic message.
    pub message: String,
}

/// A task found waiting when the runtime became quiescent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedTask {
    /// Task id.
    pub id: TaskId,
    /// Task name.
    pub name: String,
    /// `BlockedIn` (read), `BlockedOut` (write) or `BlockedAny` (poll).
    pub state: TaskState,
    /// The stream(s) it waits on.
    pub streams: Vec<StreamRef>,
}

impl std::fmt::Display for BlockedTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.state {
            TaskState::BlockedIn => "reading from",
            TaskState::BlockedOut => "writing to",
            TaskState::BlockedAny => "polling",
            _ => "waiting on",
        };
        write!(f, "task {} `{}` blocked {what} ", self.id, self.name)?;
        for (i, s) in self.streams.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

/// What [`Runtime::wait`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Quiescence {
    /// Every task has finished.
    Finished,
    /// Nothing can run any more, but these tasks wait on streams.
    Deadlock(Vec<BlockedTask>),
}

/// Counters of a run.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// Per-worker counters.
    pub workers: Vec<WorkerStats>,
    /// Tasks spawned.
    pub tasks_spawned: usize,
    /// Tasks that panicked.
    pub failures: Vec<TaskFailure>,
}

impl RunStats {
    /// Total dispatches over all workers.
    pub fn dispatches(&self) -> u64 {
        self.workers.iter().map(|w| w.dispatches).sum()
    }
    /// Total migrations over all workers.
    pub fn migrations(&self) -> u64 {
        self.workers.iter().map(|w| w.migrations_out).sum()
    }
}

impl RtShared {
    /// Sends a message to worker `w`'s mailbox and wakes it if it sleeps.
    pub(crate) fn send(&self, w: usize, msg: Msg) {
        let external = worker_index_of(self).is_none();
        if external {
            // Keep `active` non-zero while our message is in flight (see `worker`).
            self.active.fetch_add(1, SeqCst);
        }
        let ws = &self.workers[w];
        ws.mailbox.push(msg);
        fence(SeqCst); // pairs with the fence in `WorkerCtx::idle`
        if ws.sleeping.load(Relaxed) && ws.sleeping.swap(false, SeqCst) {
            self.active.fetch_add(1, SeqCst);
            if let Some(t) = ws.thread.get() {
                t.unpark();
            }
        }
        if external && self.active.fetch_sub(1, SeqCst) == 1 {
            self.notify_quiescent();
        }
    }

    pub(crate) fn notify_quiescent(&self) {
        {
            let _g = self.idle_mx.lock().unwrap_or_else(|e| e.into_inner());
            self.idle_cv.notify_all();
        }
        if let Some(h) = self.quiet_hook.get() {
            h();
        }
    }

    pub(crate) fn record_failure(&self, t: &Task, message: String) {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(TaskFailure {
                id: t.id,
                name: t.name.to_string(),
                message,
            });
    }

    pub(crate) fn record_setup_error(&self, e: String) {
        self.setup_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(e);
    }

    /// A task finished: forget it.
    pub(crate) fn retire(&self, t: &Task) {
        // The caller still holds a reference: the task is freed after this returns.
        drop(self.registry.remove(t));
        self.live.fetch_sub(1, Release);
    }

    pub(crate) fn spawn(self: &Arc<Self>, spec: TaskSpec, body: Body) -> TaskId {
        let stack = spec.stack_size.unwrap_or(self.cfg.stack_size);
        let task = Arc::new(Task::new(&spec, stack, Some(Arc::clone(self)), false));
        let id = task.id;
        let w = self.assigner.assign(&spec);
        task.owner.store(w, Relaxed);
        self.live.fetch_add(1, Relaxed);
        self.spawned.fetch_add(1, Relaxed);
        self.registry.insert(Arc::clone(&task));
        if let Some(m) = &self.task_map {
            use std::io::Write;
            let kind = if spec.kind == TaskKind::Box {
                "box"
            } else {
                "other"
            };
            let mut f = m.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(f, "{} {} {} {}", id.0, w, kind, spec.name);
        }
        let here = with_ctx(|c| match c {
            Some(c) if c.index == w && std::ptr::eq(&*c.rt, &**self) => Some(()),
            _ => None,
        });
        match here {
            Some(()) => with_ctx(|c| {
                if let Some(c) = c {
                    c.start(task, body)
                }
            }),
            None => self.send(w, Msg::Start(task, body)),
        }
        id
    }

    fn blocked_tasks(&self) -> Vec<BlockedTask> {
        let mut v: Vec<BlockedTask> = self
            .registry
            .all()
            .iter()
            .map(|t| {
                let state = t.state();
                let streams = match state {
                    TaskState::BlockedAny => t
                        .poll_set
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .iter()
                        .map(|m| m.reference())
                        .collect(),
                    _ => {
                        let p = t.blocked_on.load(Acquire);
                        // SAFETY: at quiescence a blocked task is suspended inside the
                        // operation on this stream and holds its endpoint, so the
                        // stream (and its meta) is alive.
                        unsafe { p.as_ref() }
                            .map(|m| vec![m.reference()])
                            .unwrap_or_default()
                    }
                };
                BlockedTask {
                    id: t.id,
                    name: t.name.to_string(),
                    state,
                    streams,
                }
            })
            .collect();
        v.sort_by_key(|b| b.id);
        v
    }
}

/// A running LPEL runtime: worker threads executing tasks.
///
/// ```
/// use snet_lpel::{stream, Config, Runtime, TaskSpec, Quiescence};
/// let rt = Runtime::start(Config::with_workers(2)).unwrap();
/// let (mut tx, mut rx) = stream::<u32>(4);
/// rt.spawn(TaskSpec::new("producer"), move || {
///     for i in 0..100 { tx.write(i).unwrap(); }
/// });
/// let (mut out_tx, mut out_rx) = stream::<u32>(1);
/// rt.spawn(TaskSpec::new("summer"), move || {
///     let mut sum = 0;
///     while let Some(v) = rx.read() { sum += v; }
///     out_tx.write(sum).unwrap();
/// });
/// assert_eq!(out_rx.read(), Some(4950)); // the main thread may use streams too
/// assert_eq!(rt.wait(), Quiescence::Finished);
/// rt.shutdown();
/// ```
#[derive(Debug)]
pub struct Runtime {
    shared: Arc<RtShared>,
    threads: Vec<JoinHandle<WorkerStats>>,
    placement: Option<JoinHandle<()>>,
}

/// Errors starting a runtime.
#[derive(Debug)]
pub enum StartError {
    /// Creating the monitoring directory or files, or a thread, failed.
    Io(std::io::Error),
    /// A worker could not initialise.
    Worker(String),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Io(e) => write!(f, "cannot start the LPEL runtime: {e}"),
            StartError::Worker(e) => write!(f, "cannot start the LPEL runtime: {e}"),
        }
    }
}

impl std::error::Error for StartError {}

impl From<std::io::Error> for StartError {
    fn from(e: std::io::Error) -> Self {
        StartError::Io(e)
    }
}

impl Runtime {
    /// Starts `cfg.workers` worker threads (and the placement scheduler, if configured).
    pub fn start(cfg: Config) -> Result<Runtime, StartError> {
        let n = cfg.workers.max(1);
        let cfg = Config { workers: n, ..cfg };
        let task_map = match &cfg.monitoring {
            Some(m) => {
                std::fs::create_dir_all(&m.dir)?;
                let f = std::fs::File::create(m.dir.join("tasks.map"))?;
                Some(Mutex::new(std::io::BufWriter::new(f)))
            }
            None => None,
        };
        let shared = Arc::new(RtShared {
            workers: (0..n)
                .map(|_| WorkerShared {
                    mailbox: Mailbox::new(),
                    sleeping: AtomicBool::new(false),
                    thread: OnceLock::new(),
                })
                .collect(),
            active: AtomicUsize::new(n),
            live: AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            registry: crate::registry::Registry::new(),
            idle_mx: Mutex::new(()),
            idle_cv: Condvar::new(),
            quiet_hook: OnceLock::new(),
            assigner: Assigner::new(cfg.assignment, n),
            failures: Mutex::new(Vec::new()),
            setup_errors: Mutex::new(Vec::new()),
            task_map,
            spawned: AtomicUsize::new(0),
            cfg,
        });
        let mut threads = Vec::with_capacity(n);
        for i in 0..n {
            let rt = Arc::clone(&shared);
            let started = Arc::new(AtomicBool::new(false));
            let st = Arc::clone(&started);
            let h = std::thread::Builder::new()
                .name(format!("lpel-worker-{i}"))
                .spawn(move || run_worker(rt, i, st))?;
            let _ = shared.workers[i].thread.set(h.thread().clone());
            while !started.load(Acquire) {
                std::thread::yield_now();
            }
            threads.push(h);
        }
        let errors = std::mem::take(
            &mut *shared
                .setup_errors
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        let placement = match shared.cfg.placement {
            Some(p) => {
                let rt = Arc::clone(&shared);
                Some(
                    std::thread::Builder::new()
                        .name("lpel-placement".into())
                        .spawn(move || {
                            crate::placement::run(rt, p);
                        })?,
                )
            }
            None => None,
        };
        let rt = Runtime {
            shared,
            threads,
            placement,
        };
        if let Some(e) = errors.into_iter().next() {
            rt.shutdown();
            return Err(StartError::Worker(e));
        }
        Ok(rt)
    }

    /// True if the runtime is quiescent now: every worker sleeps with an empty mailbox
    /// and no thread outside the runtime is in the middle of a send (what
    /// [`Runtime::wait`] waits for).
    pub fn is_quiescent(&self) -> bool {
        self.shared.active.load(SeqCst) == 0
    }

    /// Sets `f` to be called (on whichever thread made it so) each time the runtime
    /// becomes quiescent; a thread that waits for something else besides the runtime
    /// (the S-Net engine's reader in a distributed run) is woken this way. Only the first
    /// hook set is kept; `f` must be cheap and must not block.
    pub fn on_quiescent(&self, f: Box<dyn Fn() + Send + Sync>) {
        let _ = self.shared.quiet_hook.set(f);
    }

    /// Number of workers.
    pub fn workers(&self) -> usize {
        self.shared.workers.len()
    }

    /// Spawns a task running `f` once.
    pub fn spawn(&self, spec: TaskSpec, f: impl FnOnce() + Send + 'static) -> TaskId {
        self.shared.spawn(spec, Body::Once(Box::new(f)))
    }

    /// Spawns a task that runs `f` repeatedly (one call = one activation) until it
    /// returns [`Activation::Done`]. Between activations the task may migrate to
    /// another worker (seed 004's continuation respawn).
    pub fn spawn_repeat(
        &self,
        spec: TaskSpec,
        f: impl FnMut() -> Activation + Send + 'static,
    ) -> TaskId {
        self.shared.spawn(spec, Body::Repeat(Box::new(f)))
    }

    /// Blocks until the runtime is quiescent: every task finished, or every remaining
    /// task waits on a stream that nobody will serve (deadlock), assuming no thread
    /// outside the runtime is about to use a stream.
    pub fn wait(&self) -> Quiescence {
        self.wait_timeout(None).unwrap_or(Quiescence::Finished)
    }

    /// Like [`Runtime::wait`] but gives up after `timeout` (returns `None`).
    pub fn wait_timeout(&self, timeout: Option<Duration>) -> Option<Quiescence> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut g = self
            .shared
            .idle_mx
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        loop {
            if self.shared.active.load(SeqCst) == 0 {
                break;
            }
            let step = Duration::from_millis(50);
            let step = match deadline {
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return None;
                    }
                    step.min(d - now)
                }
                None => step,
            };
            g = self
                .shared
                .idle_cv
                .wait_timeout(g, step)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        drop(g);
        if self.shared.live.load(Acquire) == 0 {
            Some(Quiescence::Finished)
        } else {
            Some(Quiescence::Deadlock(self.shared.blocked_tasks()))
        }
    }

    /// Tasks that panicked so far.
    pub fn failures(&self) -> Vec<TaskFailure> {
        self.shared
            .failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Stops the workers (tasks still blocked are unwound and dropped) and returns the
    /// run's counters. Monitoring files are complete when this returns.
    pub fn shutdown(mut self) -> RunStats {
        self.stop()
    }

    fn stop(&mut self) -> RunStats {
        let sh = &self.shared;
        sh.shutdown.store(true, SeqCst);
        for ws in &sh.workers {
            if ws.sleeping.swap(false, SeqCst) {
                sh.active.fetch_add(1, SeqCst);
            }
            if let Some(t) = ws.thread.get() {
                t.unpark();
            }
        }
        let workers: Vec<WorkerStats> = self
            .threads
            .drain(..)
            .map(|h| h.join().unwrap_or_default())
            .collect();
        if let Some(p) = self.placement.take() {
            let _ = p.join();
        }
        // Tasks still registered are blocked (or were never started): unwind and drop
        // their contexts here, outside the registry lock.
        let left: Vec<Arc<Task>> = sh.registry.drain();
        for t in &left {
            // SAFETY: every worker has exited, so nobody else touches task locals, and
            // no queue will dispatch the task.
            drop(unsafe { crate::worker::unwind_task(t) });
        }
        drop(left);
        if let Some(m) = &sh.task_map {
            use std::io::Write;
            let _ = m.lock().unwrap_or_else(|e| e.into_inner()).flush();
        }
        if let Some(m) = &sh.cfg.monitoring {
            if m.trace {
                let _ = crate::monitor::merge_traces(&m.dir, sh.workers.len());
            }
        }
        RunStats {
            workers,
            tasks_spawned: sh.spawned.load(Relaxed),
            failures: sh
                .failures
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.stop();
        }
    }
}

/// Spawns a task from inside a running task (on the same runtime).
///
/// # Panics
///
/// If called outside a task of an LPEL runtime.
pub fn spawn(spec: TaskSpec, f: impl FnOnce() + Send + 'static) -> TaskId {
    current_runtime().spawn(spec, Body::Once(Box::new(f)))
}

/// Spawns a repeat task from inside a running task (see [`Runtime::spawn_repeat`]).
///
/// # Panics
///
/// If called outside a task of an LPEL runtime.
pub fn spawn_repeat(spec: TaskSpec, f: impl FnMut() -> Activation + Send + 'static) -> TaskId {
    current_runtime().spawn(spec, Body::Repeat(Box::new(f)))
}

fn current_runtime() -> Arc<RtShared> {
    with_ctx(|c| c.map(|c| Arc::clone(&c.rt)))
        .expect("snet_lpel::spawn called outside an LPEL task")
}

/// Gives other ready tasks on this worker a turn (no-op outside a task).
pub fn yield_now() {
    let t = crate::worker::current_task();
    if !t.is_null() {
        // SAFETY: `t` is the current task and we are running on its context.
        unsafe { crate::worker::suspend(&*t, crate::task::Suspend::Yield) };
    }
}

/// The id of the task running on this thread, if any.
pub fn current_task_id() -> Option<TaskId> {
    let t = crate::worker::current_task();
    // SAFETY: the current task is alive while it runs.
    unsafe { t.as_ref() }.map(|t| t.id)
}

/// The index of the worker this thread is, if it is one.
pub fn current_worker() -> Option<usize> {
    with_ctx(|c| c.map(|c| c.index))
}
