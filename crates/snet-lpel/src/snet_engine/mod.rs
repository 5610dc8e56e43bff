//! The S-Net engine on LPEL (`--engine lpel`): one user-level task per box instance,
//! bounded inboxes, back pressure up to the input reader.
//!
//! All semantics stay in `snet_core` (DESIGN rule 1): routing, filters, synchrocells
//! and collectors run inline on whichever task (or the reader thread) walks a record;
//! a walk ends at a box instance's inbox, the global output, or nowhere. This module
//! only decides when and where box invocations run.
//!
//! # Entities and tasks
//!
//! * Every box instance (initialisers included) has an inbox (module `inbox`): one
//!   FIFO shared by every producer (records from several producer tasks, e.g.
//!   successive drainers of a deterministic collector, keep the order in which the
//!   walks delivered them; per-producer streams read with `poll` would reorder them).
//! * The first job queued into an inbox spawns the instance's task (a repeat task,
//!   one activation per job, so the placement scheduler may migrate it between jobs).
//!   The task takes jobs from its inbox in batches of up to [`LpelConfig::batch`]
//!   (one lock per batch) and runs them in order.
//!   A task with an empty inbox parks (blocked, state `Bi`); the next producer wakes
//!   it. Parked tasks keep their stacks, so at most [`LpelConfig::max_parked`] stay
//!   parked: beyond that the longest-parked one is evicted (it ends and frees its
//!   stack; a later job spawns a new task). Deep serial replication (10^5 stages)
//!   thus never holds more than that many idle stacks.
//! * The global input is read and walked on the calling thread (blocking I/O never
//!   stalls a worker, like the classic runtime's "wrapper" threads). Output goes
//!   through a mutex-protected sink in the order the walks reach it.
//!
//! # Bounded inboxes without artificial deadlock
//!
//! A push into an inbox holding `stream_capacity` queued jobs blocks the pushing task
//! (or the reader thread) — except when the writer and the target box lie in the body of
//! a common feedback instance (`\`). Then the push never blocks (the inbox may exceed
//! its capacity). The rule is decided per push by comparing the *outermost* feedback
//! instance enclosing the writer with the one enclosing the target
//! ([`snet_core::inst::LoopKey`], shared with the threads engine): two boxes share
//! some feedback instance exactly when they share the outermost one (feedback
//! instances enclosing a box form one chain of ancestors).
//!
//! Why this cannot deadlock: the only waits are "inbox empty" (no deadlock: nothing to
//! do) and "inbox full". A task that pushes into box `B` is always upstream of `B` in
//! the instance graph: it is a box whose output walk reaches `B`, or it drains the
//! collector of a deterministic instance enclosing the writer (records leaving it flow
//! on to `B`), or it creates the instance of an initialiser `B` on a record's path.
//! A cycle of tasks each blocked on the next one's full inbox is therefore a cycle in
//! the instance graph. S-Net has only one construct with a cycle, feedback; take the
//! outermost feedback instance whose back edge the cycle uses: the cycle never leaves
//! its body (it could only re-enter it through an enclosing back edge), so every box
//! on the cycle shares that feedback, and none of the pushes along the cycle blocks.
//! Contradiction. Star stages (`*`) and split replicas (`!`) form no cycles.
//! The reader is nobody's downstream, so its pushes always block: input is admitted
//! only when there is room (back pressure up to the reader). Outside feedback loops
//! a box instance holds at most `stream_capacity` queued jobs plus the batch its task
//! took, and (for big records) about `stream_bytes` of field payload queued plus as
//! much in the batch (module `inbox`, "Byte budget").
//!
//! The engine checks the claim at run time: if the runtime ever goes quiescent with a
//! producer blocked, the run fails with an "internal deadlock" error instead of
//! hanging.
//!
//! # Termination
//!
//! After the input is exhausted the reader waits for the runtime's quiescence (no
//! worker awake, no wake-up in flight): every task is then parked on an empty inbox.
//! The engine evicts them all and waits for the runtime to finish. The first
//! [`RunError`] stops the run: the reader stops reading, tasks drop their jobs, and
//! the error is returned.
//!
//! # Knobs
//!
//! [`LpelConfig`] (CLI: `--stream-capacity`, `--assign round-robin|balanced|blocks[:B]`,
//! `--sched fifo|priority`, `--placement random[:P]|waiting-time[:W]`, `--monitor
//! a|b|c|d`, `--monitor-dir`, `--trace FILE.json`). Inboxes appear in monitoring logs
//! and traces as streams (reads by the box task, writes by whoever walked a record
//! there). `SNET_LPEL_DEBUG=1` prints the task, dispatch and migration counts of a run
//! to standard error.

mod inbox;
mod park;

use crate::config::{
    Assignment, Config, MonitorConfig, MonitorLevel, PlacementConfig, Scheduling, Strategy,
};
use crate::runtime::{Quiescence, Runtime};
use crate::task::{Activation, TaskSpec, TaskState};
use crossbeam_utils::CachePadded;
use inbox::{After, Inbox, Job, Take};
use snet_core::det::Token;
use snet_core::engine::{Engine, Incoming, RecordSink, RecordSource, RunOptions, RunStats};
use snet_core::inst::{Inst, LoopKey, Slot};
use snet_core::walk::{BoxRef, Pos, Step, Walker};
use snet_core::{BoxTable, Net, NodeId, Record, RunError};
use std::collections::VecDeque;
use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

/// Settings of the LPEL engine (the CLI's `--stream-capacity`, `--monitor`,
/// `--placement`, `--assign`, `--sched`, `--trace`).
#[derive(Debug, Clone)]
pub struct LpelConfig {
    /// The task layer's configuration; `workers` is taken from [`RunOptions`].
    pub runtime: Config,
    /// Jobs an inbox holds before pushes outside feedback loops block (at least 1).
    pub stream_capacity: usize,
    /// Field payload bytes at which a non-empty inbox also counts as full, and that a
    /// box task takes at most in one batch (at least one job): bounds the memory of
    /// queued big records (64 jobs of 16 MB each would be 1 GB per inbox).
    pub stream_bytes: usize,
    /// Jobs a box task takes from its inbox under one lock (at most the capacity; a
    /// box instance holds at most `stream_capacity` queued jobs plus this batch).
    pub batch: usize,
    /// At most this many idle (parked) box tasks keep their stacks.
    pub max_parked: usize,
    /// Block assignment (`--assign blocks:B`): the k-th box instance's task goes to
    /// worker `(k / B) mod workers`, so that neighbouring instances (consecutive star
    /// stages) share a worker; `None` leaves assignment to the layer's policy.
    pub blocks: Option<usize>,
    /// Stage assignment (`--assign stages:B`, the default with B = 32): the box tasks
    /// of a star's stages go to the workers in runs of B consecutive stages (in the
    /// order the stages are first used), so a record walking down a star crosses to
    /// another worker once in B stages instead of at every stage; every other box
    /// task goes by the layer's policy (round-robin). `None`: no stage rule.
    pub stage_blocks: Option<usize>,
    /// Write a Chrome/Perfetto trace-event JSON of the run here.
    pub trace_file: Option<PathBuf>,
}

impl Default for LpelConfig {
    fn default() -> Self {
        LpelConfig {
            // Box code runs on task stacks: C boxes with large local arrays need room
            // (virtual memory from the stack pool; pages are committed when touched).
            runtime: Config {
                stack_size: 16 << 20,
                ..Config::default()
            },
            stream_capacity: 64,
            stream_bytes: 4 << 20,
            batch: 64,
            max_parked: 512,
            blocks: None,
            stage_blocks: Some(DEFAULT_STAGE_BLOCK),
            trace_file: None,
        }
    }
}

/// Consecutive star stages whose box tasks share a worker by default (see
/// [`LpelConfig::stage_blocks`]): deep 10 000 at 2 workers took 0.63–0.65 s with 32 and
/// 16, 0.72–0.90 s with plain round-robin (every stage on the other worker).
const DEFAULT_STAGE_BLOCK: usize = 32;

/// The `snet run` options of the LPEL engine, as given on the command line (parsed
/// by [`LpelConfig::from_cli`]).
#[derive(Debug, Clone, Default)]
pub struct CliOptions {
    /// `--stream-capacity K`.
    pub stream_capacity: Option<usize>,
    /// `--monitor LEVEL` (`a`, `b`, `c`, `d`).
    pub monitor: Option<String>,
    /// `--monitor-dir DIR` (default `snet-monitor`).
    pub monitor_dir: Option<PathBuf>,
    /// `--placement STRATEGY`: `random[:P]` or `waiting-time[:WINDOW]`.
    pub placement: Option<String>,
    /// `--trace FILE.json`.
    pub trace: Option<PathBuf>,
    /// `--assign POLICY`: `round-robin`, `balanced` or `blocks[:B]`.
    pub assign: Option<String>,
    /// `--sched POLICY`: `fifo` or `priority`.
    pub sched: Option<String>,
}

impl LpelConfig {
    /// The configuration the command-line options ask for.
    ///
    /// ```
    /// use snet_lpel::snet_engine::{CliOptions, LpelConfig};
    /// let c = LpelConfig::from_cli(&CliOptions {
    ///     stream_capacity: Some(4),
    ///     placement: Some("random:0.1".into()),
    ///     ..CliOptions::default()
    /// })
    /// .unwrap();
    /// assert_eq!(c.stream_capacity, 4);
    /// assert!(c.runtime.placement.is_some());
    /// assert!(LpelConfig::from_cli(&CliOptions { sched: Some("lifo".into()), ..CliOptions::default() }).is_err());
    /// ```
    pub fn from_cli(o: &CliOptions) -> Result<LpelConfig, String> {
        let mut c = LpelConfig::default();
        if let Some(k) = o.stream_capacity {
            if k == 0 {
                return Err("--stream-capacity must be at least 1".into());
            }
            c.stream_capacity = k;
        }
        if o.monitor.is_some() || o.monitor_dir.is_some() {
            let level = match &o.monitor {
                Some(l) => l.parse::<MonitorLevel>()?,
                None => MonitorLevel::A,
            };
            c.runtime.monitoring = Some(MonitorConfig {
                level,
                dir: o
                    .monitor_dir
                    .clone()
                    .unwrap_or_else(|| PathBuf::from("snet-monitor")),
                trace: false,
            });
        }
        c.trace_file = o.trace.clone();
        if let Some(p) = &o.placement {
            let (name, arg) = match p.split_once(':') {
                Some((n, a)) => (n, Some(a)),
                None => (p.as_str(), None),
            };
            let bad = || format!("bad --placement argument `{p}`");
            let strategy = match name {
                "random" => Strategy::Random {
                    p: match arg {
                        // A probability (per placement round and task).
                        Some(a) => match a.parse::<f64>() {
                            Ok(p) if (0.0..=1.0).contains(&p) => p,
                            _ => {
                                return Err(format!(
                                    "bad --placement argument `{p}`: random:P takes a \
                                     probability P from 0 to 1"
                                ))
                            }
                        },
                        None => 0.05,
                    },
                },
                "waiting-time" => Strategy::WaitingTime {
                    window: match arg {
                        Some(a) => a.parse::<usize>().map_err(|_| bad())?,
                        None => 8,
                    },
                    threshold: 1.0,
                    max_moves: 4,
                },
                _ => {
                    return Err(format!(
                        "unknown placement strategy `{p}` (expected random[:P] or waiting-time[:WINDOW])"
                    ))
                }
            };
            c.runtime.placement = Some(PlacementConfig {
                strategy,
                interval: Duration::from_millis(5),
            });
        }
        if let Some(a) = &o.assign {
            let size = |b: &str| {
                b.parse::<usize>()
                    .ok()
                    .filter(|b| *b > 0)
                    .ok_or_else(|| format!("bad --assign argument `{a}`"))
            };
            // Every policy but `stages` turns the stage rule off: the user asked for
            // that policy alone.
            c.stage_blocks = None;
            match a.split_once(':') {
                Some(("blocks", b)) => c.blocks = Some(size(b)?),
                Some(("stages", b)) => c.stage_blocks = Some(size(b)?),
                _ => match a.as_str() {
                    "round-robin" | "rr" => c.runtime.assignment = Assignment::RoundRobin,
                    "balanced" => c.runtime.assignment = Assignment::Balanced,
                    "blocks" => c.blocks = Some(16),
                    "stages" => c.stage_blocks = Some(DEFAULT_STAGE_BLOCK),
                    _ => {
                        return Err(format!(
                            "unknown assignment policy `{a}` (expected stages[:B], round-robin, balanced or blocks[:B])"
                        ))
                    }
                },
            }
        }
        if let Some(s) = &o.sched {
            c.runtime.scheduling = match s.as_str() {
                "fifo" => Scheduling::Fifo,
                "priority" => Scheduling::Priority,
                _ => {
                    return Err(format!(
                        "unknown scheduling policy `{s}` (expected fifo or priority)"
                    ))
                }
            };
        }
        Ok(c)
    }
}

/// The LPEL engine.
///
/// ```
/// use snet_lpel::snet_engine::{LpelConfig, LpelEngine};
/// let engine = LpelEngine::new(LpelConfig { stream_capacity: 2, ..LpelConfig::default() });
/// assert_eq!(snet_core::Engine::name(&engine), "lpel");
/// ```
#[derive(Debug, Clone, Default)]
pub struct LpelEngine {
    /// Settings.
    pub config: LpelConfig,
}

impl LpelEngine {
    /// An engine with `config`.
    pub fn new(config: LpelConfig) -> LpelEngine {
        LpelEngine { config }
    }
}

/// Per box instance state, kept in the instance's engine slot.
#[derive(Debug)]
struct BoxState {
    inbox: Inbox,
    /// The outermost enclosing feedback instance (the blocking rule of the module docs).
    fb: LoopKey,
    /// Task name (the box name).
    name: Arc<str>,
    /// The worker the instance's task last ran on (`usize::MAX`: none yet); a new
    /// task for the instance (after eviction) starts there.
    worker: AtomicUsize,
    /// The innermost star whose stage holds the instance (stage assignment).
    star: Option<NodeId>,
}

/// The state of one run, shared by the reader and every task.
struct Run<'a> {
    walker: Walker<'a>,
    output: Mutex<&'a mut dyn RecordSink>,
    capacity: usize,
    /// Inbox byte budget ([`LpelConfig::stream_bytes`]).
    max_bytes: usize,
    /// Jobs a task takes from its inbox at a time.
    batch: usize,
    /// Block assignment: the k-th new box instance goes to worker `(k / b) % workers`.
    blocks: Option<usize>,
    /// Box instances given a worker by block assignment so far.
    spawned: CachePadded<AtomicUsize>,
    /// Stage assignment: runs of this many consecutive stages per worker.
    stage_blocks: Option<usize>,
    /// Stage assignment: box instances in stages of each star node given a worker so
    /// far (indexed by node id).
    stage_spawned: Vec<AtomicUsize>,
    workers: usize,
    max_parked: isize,
    /// Box names by box index (task names).
    names: Vec<Arc<str>>,
    // What tasks write at run time (park count, spawn count, the lists) and the stop
    // flag every job reads have a cache line each (decision 61).
    /// Set by the first error: stop reading, drop jobs, never block.
    stop: CachePadded<AtomicBool>,
    /// Set at the end: tasks with empty inboxes end instead of parking.
    finishing: AtomicBool,
    error: Mutex<Option<RunError>>,
    /// Parked box tasks (may dip below zero transiently).
    parked: CachePadded<AtomicIsize>,
    /// Parks in order, oldest first: `(inbox owner, park number)`; entries whose park
    /// is over are skipped lazily.
    lru: CachePadded<Mutex<ParkQueue>>,
    /// Every box instance's state (to unblock producers if the run must be torn down).
    all: CachePadded<Mutex<Vec<Weak<BoxState>>>>,
}

/// Parked tasks in park order: `(inbox owner, park number)`.
type ParkQueue = VecDeque<(Weak<BoxState>, u64)>;

/// The run as seen by tasks (see the SAFETY comment in [`LpelEngine::run`]).
type StaticRun = Run<'static>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where a walk runs, which decides how tasks are spawned.
#[derive(Clone, Copy)]
enum Here<'r> {
    /// The reader thread (outside the runtime).
    Reader(&'r Runtime),
    /// Inside a task of the runtime.
    Task,
}

impl Run<'_> {
    fn fail(&self, e: RunError) {
        let mut g = lock(&self.error);
        if g.is_none() {
            *g = Some(e);
        }
        drop(g);
        self.stop.store(true, Ordering::Release);
        if let Some(d) = self.walker.dist() {
            // The reader may wait for records from other nodes: it must leave.
            d.interrupt();
        }
    }

    fn output(&self, rec: Record) {
        self.walker.counters.output();
        let mut out = lock(&self.output);
        if let Err(e) = out.write_record(rec) {
            drop(out);
            self.fail(e);
        }
    }

    fn box_state(&self, leaf: &Inst) -> BoxState {
        let mut star = match leaf.slot {
            Slot::Stage(s) => Some(s),
            _ => None,
        };
        let mut cur = leaf.parent();
        while let (None, Some(p)) = (star, cur) {
            if let Slot::Stage(s) = p.slot {
                star = Some(s);
            }
            cur = p.parent();
        }
        let name = match leaf.box_index() {
            Some(i) => self.names[i].clone(),
            None => Arc::from("?"),
        };
        BoxState {
            inbox: Inbox::new(self.capacity, self.max_bytes, name.clone()),
            fb: leaf.loop_key(),
            name,
            worker: AtomicUsize::new(usize::MAX),
            star,
        }
    }

    /// Records that a consumer parked with park number `gen`; evicts the oldest
    /// parked consumer when too many are parked.
    fn note_parked(&self, st: &Arc<BoxState>, gen: u64) {
        let n = self.parked.fetch_add(1, Ordering::AcqRel) + 1;
        let mut victim = None;
        {
            let mut q = lock(&self.lru);
            q.push_back((Arc::downgrade(st), gen));
            if n > self.max_parked {
                while let Some((w, g)) = q.pop_front() {
                    let Some(s) = w.upgrade() else { continue };
                    if Arc::ptr_eq(&s, st) && g == gen {
                        q.push_front((w, g));
                        break;
                    }
                    if let Some(v) = s.inbox.evict(g) {
                        self.parked.fetch_sub(1, Ordering::AcqRel);
                        victim = Some(v);
                        break;
                    }
                }
            }
            let limit = 2 * self.max_parked.max(0) as usize + 64;
            if q.len() > limit {
                q.retain(|(w, g)| w.upgrade().is_some_and(|s| s.inbox.is_parked(*g)));
            }
        }
        if let Some(v) = victim {
            v.wake_first();
        }
    }

    /// Wakes every blocked producer (after `stop` is set they no longer block).
    fn wake_all_producers(&self) {
        let all: Vec<Arc<BoxState>> = lock(&self.all).iter().filter_map(Weak::upgrade).collect();
        for s in all {
            for w in s.inbox.take_producers() {
                w.wake();
            }
        }
    }

    /// Evicts every parked consumer (end of the run).
    fn evict_all(&self) {
        let entries = std::mem::take(&mut *lock(&self.lru));
        for (w, g) in entries {
            if let Some(s) = w.upgrade() {
                if let Some(v) = s.inbox.evict(g) {
                    self.parked.fetch_sub(1, Ordering::AcqRel);
                    v.wake();
                }
            }
        }
    }
}

/// Handles the end of a walk.
/// Returns whether it queued a job at a box of a feedback loop around the writer.
fn step(run: &'static StaticRun, s: Step<'static>, writer_fb: usize, here: Here<'_>) -> bool {
    match s {
        Step::Output(tok) => {
            run.output(tok.rec.into_record());
            false
        }
        Step::Box(leaf, tok) => push(run, leaf, Job::new(Some(tok.rec), tok.ctx), writer_fb, here),
        Step::Init(call) => {
            let leaf = run.walker.box_ref(&call.leaf);
            push(run, leaf, Job::new(None, call.ctx), writer_fb, here)
        }
        // Every step is queued at once (nothing held back).
        Step::Flush => false,
    }
}

/// Queues a job at a box instance (blocking by the rule of the module docs). Returns
/// whether the box lies in a feedback loop around the writer (the push never blocks).
fn push(
    run: &'static StaticRun,
    leaf: BoxRef<'static>,
    job: Job,
    writer_fb: usize,
    here: Here<'_>,
) -> bool {
    let st: &Arc<BoxState> = leaf.engine_slot(|| {
        let st = Arc::new(run.box_state(&leaf));
        lock(&run.all).push(Arc::downgrade(&st));
        st
    });
    let in_cycle = st.fb.shares_loop(writer_fb);
    let may_block = || !in_cycle && !run.stop.load(Ordering::Relaxed);
    match st.inbox.push(job, &may_block) {
        After::Nothing => {}
        After::Wake(w) => {
            run.parked.fetch_sub(1, Ordering::AcqRel);
            w.wake();
        }
        After::Spawn(inc) => {
            let st = st.clone();
            spawn_box(run, leaf.arc(), st, inc, here);
        }
    }
    in_cycle
}

fn spawn_box(
    run: &'static StaticRun,
    leaf: Arc<Inst>,
    st: Arc<BoxState>,
    inc: u64,
    here: Here<'_>,
) {
    let mut spec = TaskSpec::boxed(st.name.clone());
    let last = st.worker.load(Ordering::Relaxed);
    if last != usize::MAX {
        spec = spec.on_worker(last);
    } else if let Some(b) = run.blocks {
        let k = run.spawned.fetch_add(1, Ordering::Relaxed);
        spec = spec.on_worker((k / b) % run.workers);
    } else if let (Some(b), Some(star)) = (run.stage_blocks, st.star) {
        let star = star as usize;
        let k = run.stage_spawned[star].fetch_add(1, Ordering::Relaxed);
        spec = spec.on_worker((k / b + star) % run.workers);
    }
    let mut task = BoxTask {
        run,
        leaf,
        st,
        inc,
        hand: VecDeque::new(),
        looping: 0,
    };
    let body = move || task.activate();
    match here {
        Here::Reader(rt) => {
            rt.spawn_repeat(spec, body);
        }
        Here::Task => {
            crate::runtime::spawn_repeat(spec, body);
        }
    }
}

/// The body of a box instance's task.
struct BoxTask {
    run: &'static StaticRun,
    leaf: Arc<Inst>,
    st: Arc<BoxState>,
    inc: u64,
    /// Jobs taken from the inbox, run one per activation.
    hand: VecDeque<Job>,
    /// Consecutive jobs whose outputs went round a feedback loop (see `activate`).
    looping: u32,
}

/// Consecutive jobs feeding a feedback loop after which a box task yields.
const LOOP_YIELD: u32 = 64;

impl BoxTask {
    /// One activation: run one job (taking a batch from the inbox, or parking while
    /// it is empty, when the hand is empty).
    fn activate(&mut self) -> Activation {
        loop {
            if let Some(job) = self.hand.pop_front() {
                if self.run_job(job) {
                    // A box feeding a loop it lies in may never run out of input (it
                    // refills its own inbox): give the other ready tasks a turn every
                    // LOOP_YIELD such jobs, or a collector of the loop's results
                    // starves (issue 24, item 4). Loop-free pipelines never yield here.
                    self.looping += 1;
                    if self.looping >= LOOP_YIELD {
                        self.looping = 0;
                        crate::runtime::yield_now();
                    }
                } else {
                    self.looping = 0;
                }
                return Activation::Again;
            }
            let finishing = self.run.finishing.load(Ordering::Acquire);
            match self
                .st
                .inbox
                .take(self.inc, finishing, self.run.batch, &mut self.hand)
            {
                Take::Jobs => {
                    if let Some(w) = crate::runtime::current_worker() {
                        self.st.worker.store(w, Ordering::Relaxed);
                    }
                }
                Take::Retired => return Activation::Done,
                Take::Parked(gen) => {
                    self.run.note_parked(&self.st, gen);
                    self.st.inbox.park();
                }
            }
        }
    }

    /// Runs one job; true if it queued a record in a feedback loop around this box.
    fn run_job(&self, mut job: Job) -> bool {
        let run = self.run;
        if run.stop.load(Ordering::Acquire) {
            return false; // the run is failing: drop the job
        }
        let fb = self.st.fb.id();
        let mut looped = false;
        let mut sink = |s| looped |= step(run, s, fb, Here::Task);
        let r = catch_unwind(AssertUnwindSafe(|| {
            run.walker.fire(
                run.walker.box_ref(&self.leaf),
                job.rec.take(),
                job.ctx,
                &mut sink,
            )
        }));
        match r {
            Ok(Ok(None)) => {}
            // The firing's last record, going straight on to a box: queued there
            // without a step through the sink.
            Ok(Ok(Some((next, tok)))) => {
                looped |= push(run, next, Job::new(Some(tok.rec), tok.ctx), fb, Here::Task);
            }
            Ok(Err(e)) => run.fail(e),
            Err(p) => {
                let msg = snet_core::box_call::panic_message(&*p);
                run.fail(RunError::new(
                    format!("box `{}`", self.st.name),
                    None,
                    format!("engine panicked: {msg}"),
                ));
            }
        }
        looped
    }
}

fn engine_error(msg: impl Into<String>) -> RunError {
    RunError::new("lpel engine", None, msg)
}

impl LpelEngine {
    /// The runtime configuration for a run with `workers`, and the temporary
    /// monitoring directory to remove afterwards (trace only).
    fn runtime_config(&self, workers: usize) -> (Config, Option<PathBuf>) {
        let mut cfg = Config {
            workers: workers.max(1),
            ..self.config.runtime.clone()
        };
        let mut temp = None;
        if self.config.trace_file.is_some() {
            match &mut cfg.monitoring {
                Some(m) => m.trace = true,
                None => {
                    let dir = std::env::temp_dir().join(format!(
                        "snet-lpel-trace-{}-{}",
                        std::process::id(),
                        crate::clock::now_ns()
                    ));
                    cfg.monitoring = Some(MonitorConfig {
                        level: MonitorLevel::A,
                        dir: dir.clone(),
                        trace: true,
                    });
                    temp = Some(dir);
                }
            }
        }
        (cfg, temp)
    }
}

impl Engine for LpelEngine {
    fn name(&self) -> &'static str {
        "lpel"
    }

    fn run(
        &self,
        net: &Net,
        boxes: &BoxTable,
        input: &mut dyn RecordSource,
        output: &mut dyn RecordSink,
        opts: &RunOptions,
    ) -> Result<RunStats, RunError> {
        let start = Instant::now();
        let mut walker = Walker::new(net, boxes)?;
        walker.set_dist(opts.dist.clone())?;
        let mut run = Run {
            walker,
            output: Mutex::new(output),
            capacity: self.config.stream_capacity.max(1),
            max_bytes: self.config.stream_bytes.max(1),
            batch: self
                .config
                .batch
                .clamp(1, self.config.stream_capacity.max(1)),
            blocks: self.config.blocks.map(|b| b.max(1)),
            spawned: CachePadded::new(AtomicUsize::new(0)),
            stage_blocks: self.config.stage_blocks.map(|b| b.max(1)),
            stage_spawned: net.nodes.iter().map(|_| AtomicUsize::new(0)).collect(),
            workers: opts.workers.max(1),
            max_parked: self.config.max_parked as isize,
            names: net
                .boxes
                .iter()
                .map(|b| Arc::from(b.name.as_str()))
                .collect(),
            stop: CachePadded::new(AtomicBool::new(false)),
            finishing: AtomicBool::new(false),
            error: Mutex::new(None),
            parked: CachePadded::new(AtomicIsize::new(0)),
            lru: CachePadded::new(Mutex::new(VecDeque::new())),
            all: CachePadded::new(Mutex::new(Vec::new())),
        };
        let (cfg, temp_dir) = self.runtime_config(opts.workers);
        let mon_dir = cfg.monitoring.as_ref().map(|m| m.dir.clone());
        // Declared after `run`: on every path (including unwinding) the runtime is shut
        // down, which ends or drops every task, before `run` is dropped.
        let rt = Runtime::start(cfg).map_err(|e| engine_error(e.to_string()))?;
        // Tasks need `'static` closures but borrow `run` (which borrows the net, the
        // boxes and the output). Every task is created on `rt`, and `rt` is shut down
        // (explicitly below, or by its `Drop` if this function unwinds) before `run`
        // goes out of scope; shutdown joins the workers and unwinds every remaining
        // task context. Nothing else keeps the reference: the per-instance state in
        // engine slots (`BoxState`) holds no reference to `run`.
        // SAFETY: `run` outlives every use of `r` (the shutdown argument above).
        let r: &'static StaticRun = unsafe { &*(&run as *const Run<'_>).cast::<StaticRun>() };
        let here = Here::Reader(&rt);
        let mut sink = |s| {
            step(r, s, 0, here);
        };
        if let Some(d) = opts.dist.clone() {
            // A distributed run: the reader answers the termination protocol only while
            // the runtime is quiescent; wake it when it becomes so.
            rt.on_quiescent(Box::new(move || d.became_idle()));
        }
        let root = r.walker.create_root(&mut sink);
        loop {
            if r.stop.load(Ordering::Acquire) {
                break;
            }
            // In a distributed run the source also gives records from other nodes, and
            // blocks until there is something (or the run has ended everywhere).
            match input.next_incoming(&|| rt.is_quiescent()) {
                Ok(Some(Incoming::Record(rec))) => {
                    r.walker.counters.input();
                    if let Err(e) =
                        r.walker
                            .walk(Pos::Enter(root.clone()), Token::new(rec), &mut sink)
                    {
                        r.fail(e);
                    }
                }
                Ok(Some(Incoming::Arrival(a))) => {
                    if let Err(e) = r.walker.walk_arrival(&root, a, &mut sink) {
                        r.fail(e);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    r.fail(e);
                    break;
                }
            }
        }
        // Every task is now parked on an empty inbox (or the claim of the module docs
        // is broken: report, do not hang).
        let mut internal = None;
        if let Quiescence::Deadlock(blocked) = rt.wait() {
            let producers: Vec<String> = blocked
                .iter()
                .filter(|b| b.state != TaskState::BlockedIn)
                .map(|b| format!("task {} `{}`", b.id, b.name))
                .collect();
            if !producers.is_empty() {
                internal = Some(engine_error(format!(
                    "internal deadlock: {} blocked on full inboxes",
                    producers.join(", ")
                )));
                // Let everyone finish without blocking (dropping their jobs), so that
                // no task is left suspended inside a box call.
                r.stop.store(true, Ordering::Release);
                r.wake_all_producers();
                let _ = rt.wait();
            }
        }
        r.finishing.store(true, Ordering::Release);
        r.evict_all();
        if internal.is_none() {
            if let Quiescence::Deadlock(left) = rt.wait() {
                internal = Some(engine_error(format!(
                    "{} task(s) did not end at the end of the run",
                    left.len()
                )));
            }
        }
        let lstats = rt.shutdown();
        if std::env::var_os("SNET_LPEL_DEBUG").is_some() {
            let _ = writeln!(
                std::io::stderr(),
                "lpel: {} tasks spawned, {} dispatches, {} migrations",
                lstats.tasks_spawned,
                lstats.dispatches(),
                lstats.migrations()
            );
        }
        let wall = start.elapsed();
        let discarded = run.walker.finish(root);
        let mut warnings = Vec::new();
        if let (Some(dest), Some(dir)) = (&self.config.trace_file, &mon_dir) {
            if let Err(e) = std::fs::copy(dir.join("trace.json"), dest) {
                warnings.push(format!(
                    "cannot write the trace file {}: {e}",
                    dest.display()
                ));
            }
        }
        if let Some(dir) = temp_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        if let Some(e) = lock(&run.error).take() {
            return Err(e);
        }
        // A task that failed (e.g. could not get a stack) leaves its producers blocked:
        // report the cause, not the deadlock it led to.
        if let Some(f) = lstats.failures.first() {
            return Err(engine_error(format!(
                "task {} `{}` failed: {}",
                f.id, f.name, f.message
            )));
        }
        if let Some(e) = internal {
            return Err(e);
        }
        let mut stats =
            RunStats::from_counters("lpel", &run.walker.counters, run.walker.insts.get());
        stats.discarded_in_sync = discarded as u64;
        stats.warnings = warnings;
        stats.wall = wall;
        stats.stacks_created = lstats.workers.iter().map(|w| w.stacks_created).sum();
        stats.workers = lstats
            .workers
            .iter()
            .map(|w| {
                let idle = Duration::from_nanos(w.wait_ns);
                snet_core::engine::WorkerStats {
                    busy: wall.saturating_sub(idle),
                    idle,
                }
            })
            .collect();
        Ok(stats)
    }
}
