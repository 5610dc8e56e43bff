//! The thread-per-entity baseline engine (`--engine threads`).
//!
//! Every box instance gets its own OS thread, created when the first job reaches it,
//! fed by a bounded inbox; the classic S-Net stream runtime's model, kept as the
//! baseline that every benchmark compares against. Routing, filters, synchrocells and
//! collectors run inline on whichever thread walks a record (the semantics core does
//! that), so only boxes are threads.
//!
//! # Bounded inboxes without artificial deadlock
//!
//! An inbox holds [`ThreadsEngine::stream_capacity`] jobs, or (for big records) about
//! [`ThreadsEngine::stream_bytes`] of field payload (module `inbox`); a push into a full
//! one blocks the pushing OS thread — except when the writer and the target box lie in
//! the body of a common feedback instance (`\`), decided by comparing the outermost
//! feedback instance enclosing each ([`snet_core::inst::LoopKey`]). Then the push never
//! blocks (the inbox may exceed its capacity). This is the lpel engine's rule, and its
//! argument holds here: the threads that push into box `B`'s inbox are box threads
//! whose output walk reaches `B`, threads draining the collector of a deterministic
//! instance that their record walked into (records leaving it flow on to `B`), threads
//! creating a star stage or split replica with initialiser `B` on their record's path,
//! and the input thread. All but the input thread are upstream of `B` in the instance
//! graph, and the input thread is nobody's consumer. A cycle of threads each blocked on
//! the next one's full inbox is therefore a cycle in the instance graph; only feedback
//! makes one, and the outermost feedback instance whose back edge it uses encloses the
//! whole cycle, so none of its pushes blocks. The input thread's pushes always block:
//! input is admitted only when there is room (back pressure up to the input).
//!
//! Outside feedback loops a box instance thus holds at most `stream_capacity` queued
//! jobs plus the batch its thread took, and about `stream_bytes` of payload queued plus
//! as much taken, so memory no longer grows with the input (a box that turns small
//! records into big ones faster than the next box consumes them waits for it). Input
//! control stays: the input thread also admits a record only while fewer than
//! [`ThreadsEngine::max_in_flight`] box jobs are pending (inside feedback loops, whose
//! inboxes may grow past their capacity, it keeps new input out meanwhile).
//!
//! The engine checks the argument at run time: if every box thread waits (for jobs or
//! on a full inbox) while some producer is blocked, the run fails with an "internal
//! deadlock" error instead of hanging (module `inbox`, "Deadlock detection").
//!
//! # Termination
//!
//! When the input is exhausted and no job is pending, the input thread closes every
//! inbox and joins every box thread (whoever creates one hands its handle over): when
//! [`Engine::run`] returns no box thread is left, and the thread-local state of box
//! code has been dropped. The first [`RunError`] stops the run: the input thread stops
//! reading, blocked producers are woken and no longer block, queued jobs are dropped,
//! and box calls under way finish before the threads are joined.

mod inbox;

use crossbeam_channel::{unbounded, Sender};
use inbox::{Activity, Inbox, Job};
use snet_core::engine::{Engine, Incoming, RecordSink, RecordSource, RunOptions, RunStats};
use snet_core::inst::{InitCall, Inst, LoopKey};
use snet_core::walk::{BoxRef, Pos, Step, Walker};
use snet_core::{BoxTable, Net, RunError};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::Instant;

/// The thread-per-entity engine.
///
/// ```
/// let engine = snet_threads::ThreadsEngine { stream_capacity: 2, ..Default::default() };
/// assert_eq!(snet_core::Engine::name(&engine), "threads");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ThreadsEngine {
    /// Input control: at most this many pending box jobs before the next input record
    /// is admitted.
    pub max_in_flight: usize,
    /// Jobs a box thread's inbox holds before pushes outside feedback loops block (at
    /// least 1; the CLI's `--stream-capacity`). The default, 256, is larger than lpel's
    /// 64: every time a full inbox makes room its blocked producer is woken, a futex
    /// wait and wake for OS threads; at 64 the `pipe` benchmark (10 boxes, 10^5
    /// records, 2 workers) spent 0.34–0.48 s in the kernel against 0.10–0.18 s at 256,
    /// and took 0.17–0.19 s against 0.14 s (`deep 1000`: 0.18–0.19 s against
    /// 0.16–0.17 s).
    pub stream_capacity: usize,
    /// Field payload bytes at which a non-empty inbox also counts as full, and that a
    /// box thread takes at most in one batch (at least one job): bounds the memory of
    /// queued big records.
    pub stream_bytes: usize,
    /// Tests only: block pushes inside feedback loops too (breaking the rule of the
    /// crate docs), to show that the run then fails with "internal deadlock" rather
    /// than hanging.
    #[doc(hidden)]
    pub block_in_loops: bool,
}

impl Default for ThreadsEngine {
    fn default() -> Self {
        ThreadsEngine {
            max_in_flight: 4096,
            stream_capacity: 256,
            stream_bytes: 4 << 20,
            block_in_loops: false,
        }
    }
}

/// Stack size of a box thread: the classic room C boxes with large local arrays expect
/// (virtual memory, committed when touched); less under an address-space limit (see
/// [`snet_core::engine::instance_stack_size`]).
const BOX_STACK: usize = 64 << 20;

/// Smallest stack of a box thread.
const MIN_BOX_STACK: usize = 128 << 10;

/// Memory mappings a box thread costs: its stack and guard page, and the signal stack
/// and guard page the Rust runtime maps for every thread (which aborts the process if
/// that mapping fails, so the engine must stop before).
const MAPPINGS_PER_THREAD: usize = 4;

/// The per-box-instance state kept in the instance's engine slot.
struct BoxThread {
    inbox: Arc<Inbox>,
    /// The outermost enclosing feedback instance (the blocking rule).
    fb: LoopKey,
}

/// State shared by all threads of one run.
struct Shared<'a> {
    walker: Walker<'a>,
    output: Mutex<&'a mut dyn RecordSink>,
    /// Jobs queued or running. The run ends when input is exhausted and this is zero.
    pending: AtomicUsize,
    idle: (Mutex<()>, Condvar),
    stop: AtomicBool,
    /// Set when the run is over; box threads exit.
    finished: AtomicBool,
    error: Mutex<Option<RunError>>,
    /// Every box thread's inbox, to stop the threads at the end and to wake blocked
    /// producers when the run fails.
    threads: Mutex<Vec<Arc<Inbox>>>,
    /// Running box threads and blocked producers (deadlock detection).
    activity: Activity,
    max_in_flight: usize,
    capacity: usize,
    max_bytes: usize,
    block_in_loops: bool,
    /// Address space reserved by box thread stacks so far.
    stacks_reserved: AtomicUsize,
    /// Most box threads the kernel's mapping limit allows (see [`MAPPINGS_PER_THREAD`]).
    max_threads: usize,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared<'_> {
    fn fail(&self, e: RunError) {
        {
            let mut g = lock(&self.error);
            if g.is_none() {
                *g = Some(e);
            }
        }
        self.stop.store(true, Ordering::Release);
        self.notify();
        for inbox in lock(&self.threads).iter() {
            inbox.wake_producers();
        }
        if let Some(d) = self.walker.dist() {
            // The input thread may wait for records from other nodes: it must leave.
            d.interrupt();
        }
    }

    /// The blocking rule was broken after all (see the crate docs): fail, do not hang.
    fn deadlock(&self) {
        self.fail(RunError::new(
            "threads engine",
            None,
            "internal deadlock: every box thread waits, and some on a full box inbox",
        ));
    }

    fn notify(&self) {
        let _g = lock(&self.idle.0);
        self.idle.1.notify_all();
    }

    /// Stack size of the next box thread (see [`BOX_STACK`]).
    fn box_stack(&self) -> usize {
        snet_core::engine::instance_stack_size(
            BOX_STACK,
            MIN_BOX_STACK,
            self.stacks_reserved.load(Ordering::Relaxed),
        )
    }

    fn job_done(&self) {
        // AcqRel: pairs with the increment in `send` so the waiter sees all effects.
        let before = self.pending.fetch_sub(1, Ordering::AcqRel);
        if before == 1 || before == self.max_in_flight {
            self.notify();
        }
        if before == 1 {
            if let Some(d) = self.walker.dist() {
                // A distributed run: the input thread, waiting for records from other
                // nodes, answers the termination protocol only while nothing is
                // pending; tell it.
                d.became_idle();
            }
        }
    }
}

/// What a thread of the run needs to hand steps on: the scope box threads are spawned
/// in, the run's state, and where the handles of new box threads go (the input thread
/// joins them all at the end).
#[derive(Clone)]
struct Env<'scope, 'env, 'a> {
    scope: &'scope Scope<'scope, 'env>,
    shared: &'env Shared<'a>,
    handles: Sender<ScopedJoinHandle<'scope, ()>>,
}

/// Who walks a record: the input thread (`None`), or a box thread with the
/// [`LoopKey::id`] of its box.
type Writer = Option<usize>;

fn dispatch<'w>(env: &Env<'_, 'w, '_>, step: Step<'w>, writer: Writer) {
    let shared = env.shared;
    match step {
        Step::Output(tok) => {
            shared.walker.counters.output();
            let mut out = lock(&shared.output);
            if let Err(e) = out.write_record(tok.rec.into_record()) {
                drop(out);
                shared.fail(e);
            }
        }
        Step::Box(leaf, tok) => send(env, leaf, Job::new(Some(tok.rec), tok.ctx), writer),
        Step::Init(InitCall { leaf, ctx, .. }) => {
            let leaf = shared.walker.box_ref(&leaf);
            send(env, leaf, Job::new(None, ctx), writer)
        }
        Step::Flush => {}
    }
}

/// Queues `job` at `leaf`'s box thread (created on first use), blocking by the rule of
/// the crate docs.
fn send(env: &Env<'_, '_, '_>, leaf: BoxRef<'_>, job: Job, writer: Writer) {
    let shared = env.shared;
    shared.pending.fetch_add(1, Ordering::AcqRel);
    let bt = leaf.engine_slot(|| spawn_box_thread(env, &leaf.arc()));
    let in_loop = !shared.block_in_loops && bt.fb.shares_loop(writer.unwrap_or(0));
    let block = (!in_loop).then_some(writer.is_some());
    bt.inbox
        .push(job, block, &shared.activity, &shared.stop, &|| {
            shared.deadlock()
        });
}

/// Creates `leaf`'s inbox and box thread.
fn spawn_box_thread(env: &Env<'_, '_, '_>, leaf: &Arc<Inst>) -> BoxThread {
    let shared = env.shared;
    let inbox = Arc::new(Inbox::new(shared.capacity, shared.max_bytes));
    let bt = BoxThread {
        inbox: inbox.clone(),
        fb: leaf.loop_key(),
    };
    let count = {
        let mut all = lock(&shared.threads);
        all.push(inbox.clone());
        // Created after the run closed the inboxes (under this lock, after setting
        // `finished`): nobody else will close this one.
        if shared.finished.load(Ordering::Acquire) {
            inbox.close();
        }
        all.len() - 1
    };
    if count >= shared.max_threads {
        shared.fail(RunError::new(
            "threads engine",
            None,
            format!(
                "this program needs more than {count} box instances at once, each a \
                 thread, and the kernel's memory-mapping limit (vm.max_map_count) \
                 allows no more threads; run it with --engine front (no thread or \
                 stack per box instance)"
            ),
        ));
        return bt;
    }
    shared.activity.spawned();
    // When the address space runs out anyway (many box instances under a limit), retry
    // with halved stacks rather than fail the run.
    let fb = bt.fb.id();
    let spawned = snet_core::engine::halving_until(shared.box_stack(), MIN_BOX_STACK, |stack| {
        let (me, inbox, env2) = (leaf.clone(), inbox.clone(), env.clone());
        std::thread::Builder::new()
            .stack_size(stack)
            .spawn_scoped(env.scope, move || box_thread(env2, me, inbox, fb))
    });
    match spawned {
        Ok((handle, stack)) => {
            shared.stacks_reserved.fetch_add(stack, Ordering::Relaxed);
            // The receiver lives until every sender is gone.
            let _ = env.handles.send(handle);
        }
        Err(e) => shared.fail(RunError::new(
            "threads engine",
            None,
            format!("cannot spawn a box thread: {e}"),
        )),
    }
    bt
}

/// The body of a box thread: runs the jobs of its inbox until the run closes it.
fn box_thread(env: Env<'_, '_, '_>, leaf: Arc<Inst>, inbox: Arc<Inbox>, fb: usize) {
    let shared = env.shared;
    let mut hand = VecDeque::new();
    // Blocking: idle box threads cost nothing (a star of thousands of stages has
    // thousands of them; waking each every few milliseconds made runs quadratic).
    while inbox.take(&mut hand, &shared.activity, &|| shared.deadlock()) {
        while let Some(mut job) = hand.pop_front() {
            if shared.stop.load(Ordering::Acquire) {
                // A run-time error stops the run: skip the work, keep the count.
                drop(job);
                shared.job_done();
                continue;
            }
            let mut sink = |s| dispatch(&env, s, Some(fb));
            let r = catch_unwind(AssertUnwindSafe(|| {
                shared.walker.fire(
                    shared.walker.box_ref(&leaf),
                    job.rec.take(),
                    job.ctx,
                    &mut sink,
                )
            }));
            match r {
                Ok(Ok(None)) => {}
                // The firing's last record, going straight on to a box.
                Ok(Ok(Some((next, tok)))) => dispatch(&env, Step::Box(next, tok), Some(fb)),
                Ok(Err(e)) => shared.fail(e),
                Err(p) => shared.fail(RunError::new(
                    "threads engine",
                    None,
                    format!(
                        "a box thread panicked: {}",
                        snet_core::box_call::panic_message(&*p)
                    ),
                )),
            }
            shared.job_done();
        }
    }
}

impl Engine for ThreadsEngine {
    fn name(&self) -> &'static str {
        "threads"
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
        let mut shared = Shared {
            walker,
            output: Mutex::new(output),
            pending: AtomicUsize::new(0),
            idle: (Mutex::new(()), Condvar::new()),
            stop: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            error: Mutex::new(None),
            threads: Mutex::new(Vec::new()),
            activity: Activity::default(),
            max_in_flight: self.max_in_flight.max(1),
            capacity: self.stream_capacity.max(1),
            max_bytes: self.stream_bytes.max(1),
            block_in_loops: self.block_in_loops,
            stacks_reserved: AtomicUsize::new(0),
            max_threads: snet_core::engine::instance_budget(MAPPINGS_PER_THREAD),
        };
        let root = std::thread::scope(|scope| {
            let shared = &shared;
            let (handles, joinable) = unbounded();
            let env = Env {
                scope,
                shared,
                handles,
            };
            let root = shared.walker.create_root(&mut |s| dispatch(&env, s, None));
            loop {
                if shared.stop.load(Ordering::Acquire) {
                    break;
                }
                self.wait_until(shared, |p| p < shared.max_in_flight);
                // In a distributed run the source also gives records from other nodes,
                // and blocks until there is something (or the run ended everywhere).
                let idle = || shared.pending.load(Ordering::Acquire) == 0;
                match input.next_incoming(&idle) {
                    Ok(Some(Incoming::Record(rec))) => {
                        shared.walker.counters.input();
                        let r = shared.walker.walk(
                            Pos::Enter(root.clone()),
                            snet_core::det::Token::new(rec),
                            &mut |s| dispatch(&env, s, None),
                        );
                        if let Err(e) = r {
                            shared.fail(e);
                        }
                    }
                    Ok(Some(Incoming::Arrival(a))) => {
                        let sink = &mut |s| dispatch(&env, s, None);
                        if let Err(e) = shared.walker.walk_arrival(&root, a, sink) {
                            shared.fail(e);
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        shared.fail(e);
                        break;
                    }
                }
            }
            self.wait_until(shared, |p| p == 0);
            // Every job is done (or skipped after an error): stop the box threads.
            shared.finished.store(true, Ordering::Release);
            for inbox in lock(&shared.threads).iter() {
                inbox.close();
            }
            // Join every box thread: each holds a sender until it ends, after handing
            // over the handles of the threads it created.
            drop(env);
            for handle in joinable.iter() {
                if let Err(p) = handle.join() {
                    shared.fail(RunError::new(
                        "threads engine",
                        None,
                        format!(
                            "a box thread panicked: {}",
                            snet_core::box_call::panic_message(&*p)
                        ),
                    ));
                }
            }
            root
        });
        let root = shared.walker.finish(root);
        if let Some(e) = lock(&shared.error).take() {
            return Err(e);
        }
        let mut stats = RunStats::from_counters(
            "threads",
            &shared.walker.counters,
            shared.walker.insts.get(),
        );
        stats.discarded_in_sync = root as u64;
        stats.wall = start.elapsed();
        Ok(stats)
    }
}

impl ThreadsEngine {
    fn wait_until(&self, shared: &Shared<'_>, ok: impl Fn(usize) -> bool) {
        let mut g = lock(&shared.idle.0);
        while !ok(shared.pending.load(Ordering::Acquire)) && !shared.stop.load(Ordering::Acquire) {
            g = shared.idle.1.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }
}
