//! The thread-per-entity baseline engine (`--engine threads`).
//!
//! Every box instance gets its own OS thread, created when the first record reaches it,
//! fed by a channel; the classic S-Net stream runtime's model, kept as the baseline that
//! every benchmark compares against. Routing, filters, synchrocells and collectors run
//! inline on whichever thread walks a record (the semantics core does that), so only
//! boxes are threads.
//!
//! Channels are unbounded; memory is bounded instead by input control: the input thread
//! admits a new record only while fewer than [`ThreadsEngine::max_in_flight`] box jobs
//! are pending. A bounded channel between box threads could deadlock a feedback loop
//! that S-Net semantics lets run (each thread blocked sending to the other), which the
//! reference stream runtime did; this engine must not.

use crossbeam_channel::{unbounded, Receiver, Sender};
use snet_core::det::Ctx;
use snet_core::engine::{Engine, RecordSink, RecordSource, RunOptions, RunStats};
use snet_core::inst::{InitCall, Inst};
use snet_core::walk::{Pos, Step, Walker};
use snet_core::{BoxTable, Net, Record, RunError};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::Scope;
use std::time::Instant;

/// The thread-per-entity engine.
#[derive(Debug, Clone, Copy)]
pub struct ThreadsEngine {
    /// Input control: at most this many pending box jobs before the next input record
    /// is admitted.
    pub max_in_flight: usize,
}

impl Default for ThreadsEngine {
    fn default() -> Self {
        ThreadsEngine {
            max_in_flight: 4096,
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

/// A box invocation waiting in a box thread's channel.
enum Job {
    Data(Record, Ctx),
    Init(Ctx),
    /// The run is over: exit.
    Stop,
}

/// The per-box-instance state kept in the instance's engine slot.
struct BoxThread {
    tx: Sender<Job>,
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
    /// Every box thread's channel, to stop them at the end.
    threads: Mutex<Vec<Sender<Job>>>,
    max_in_flight: usize,
    /// Address space reserved by box thread stacks so far.
    stacks_reserved: AtomicUsize,
    /// Most box threads the kernel's mapping limit allows (see [`MAPPINGS_PER_THREAD`]).
    max_threads: usize,
}

impl Shared<'_> {
    fn fail(&self, e: RunError) {
        let mut g = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            *g = Some(e);
        }
        self.stop.store(true, Ordering::Release);
        self.notify();
    }

    fn notify(&self) {
        let _g = self.idle.0.lock().unwrap_or_else(|p| p.into_inner());
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
    }
}

fn dispatch<'scope, 'env: 'scope>(
    scope: &'scope Scope<'scope, 'env>,
    shared: &'env Shared<'env>,
    step: Step,
) {
    match step {
        Step::Output(tok) => {
            shared.walker.counters.output();
            let mut out = shared.output.lock().unwrap_or_else(|p| p.into_inner());
            if let Err(e) = out.write_record(tok.rec) {
                drop(out);
                shared.fail(e);
            }
        }
        Step::Box(leaf, tok) => send(scope, shared, leaf, Job::Data(tok.rec, tok.ctx)),
        Step::Init(InitCall { leaf, ctx }) => send(scope, shared, leaf, Job::Init(ctx)),
        Step::Flush => {}
    }
}

fn send<'scope, 'env: 'scope>(
    scope: &'scope Scope<'scope, 'env>,
    shared: &'env Shared<'env>,
    leaf: Arc<Inst>,
    job: Job,
) {
    shared.pending.fetch_add(1, Ordering::AcqRel);
    let bt = leaf.engine_slot(|| {
        let (tx, rx) = unbounded();
        let count = {
            let mut all = shared.threads.lock().unwrap_or_else(|p| p.into_inner());
            all.push(tx.clone());
            // Created after the run stopped its threads (under this lock, after setting
            // `finished`): nobody else will tell this one.
            if shared.finished.load(Ordering::Acquire) {
                let _ = tx.send(Job::Stop);
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
            return BoxThread { tx };
        }
        // When the address space runs out anyway (many box instances under a limit),
        // retry with halved stacks rather than fail the run.
        let spawned =
            snet_core::engine::halving_until(shared.box_stack(), MIN_BOX_STACK, |stack| {
                let me = leaf.clone();
                let rx = rx.clone();
                std::thread::Builder::new()
                    .stack_size(stack)
                    .spawn_scoped(scope, move || box_thread(scope, shared, me, rx))
            });
        match spawned {
            Ok((_, stack)) => {
                shared.stacks_reserved.fetch_add(stack, Ordering::Relaxed);
            }
            Err(e) => shared.fail(RunError::new(
                "threads engine",
                None,
                format!("cannot spawn a box thread: {e}"),
            )),
        }
        BoxThread { tx }
    });
    if bt.tx.send(job).is_err() {
        shared.job_done();
    }
}

fn box_thread<'scope, 'env: 'scope>(
    scope: &'scope Scope<'scope, 'env>,
    shared: &'env Shared<'env>,
    leaf: Arc<Inst>,
    rx: Receiver<Job>,
) {
    loop {
        // Blocking: idle box threads cost nothing (a star of thousands of stages has
        // thousands of them; waking each every few milliseconds made runs quadratic).
        let job = match rx.recv() {
            Ok(Job::Stop) | Err(_) => break,
            Ok(job) => job,
        };
        if shared.stop.load(Ordering::Acquire) {
            // A run-time error stops the run: skip the work, keep the count.
            shared.job_done();
            continue;
        }
        let mut sink = |s: Step| dispatch(scope, shared, s);
        let r = match job {
            Job::Data(rec, ctx) => shared.walker.run_box(&leaf, Some(rec), ctx, &mut sink),
            Job::Init(ctx) => shared.walker.run_box(&leaf, None, ctx, &mut sink),
            Job::Stop => Ok(()),
        };
        if let Err(e) = r {
            shared.fail(e);
        }
        shared.job_done();
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
        _opts: &RunOptions,
    ) -> Result<RunStats, RunError> {
        let start = Instant::now();
        let shared = Shared {
            walker: Walker::new(net, boxes)?,
            output: Mutex::new(output),
            pending: AtomicUsize::new(0),
            idle: (Mutex::new(()), Condvar::new()),
            stop: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            error: Mutex::new(None),
            threads: Mutex::new(Vec::new()),
            max_in_flight: self.max_in_flight.max(1),
            stacks_reserved: AtomicUsize::new(0),
            max_threads: snet_core::engine::instance_budget(MAPPINGS_PER_THREAD),
        };
        let root = std::thread::scope(|scope| {
            let shared = &shared;
            let root = shared
                .walker
                .create_root(&mut |s| dispatch(scope, shared, s));
            loop {
                if shared.stop.load(Ordering::Acquire) {
                    break;
                }
                self.wait_until(shared, |p| p < shared.max_in_flight);
                match input.next_record() {
                    Ok(Some(rec)) => {
                        shared.walker.counters.input();
                        let r = shared.walker.walk(
                            Pos::Enter(root.clone()),
                            snet_core::det::Token::new(rec),
                            &mut |s| dispatch(scope, shared, s),
                        );
                        if let Err(e) = r {
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
            for tx in shared
                .threads
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .drain(..)
            {
                let _ = tx.send(Job::Stop);
            }
            shared.walker.discard_stored(&root)
        });
        if let Some(e) = shared
            .error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
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
        let mut g = shared.idle.0.lock().unwrap_or_else(|p| p.into_inner());
        while !ok(shared.pending.load(Ordering::Acquire)) && !shared.stop.load(Ordering::Acquire) {
            g = shared.idle.1.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }
}
