//! The FRONT engine: shared run state, start-up and shut-down.
//!
//! Termination is decided by `termination` (see there).

/// Stack size of worker threads (box code runs on them).
const WORKER_STACK: usize = 64 << 20;

/// Stack size of the fibers box code runs on with `FrontOptions::forkjoin` (virtual
/// memory; the pool reuses stacks and discards the dead pages of parked ones).
const FIBER_STACK: usize = 16 << 20;

use crate::entity::Entity;
use crate::options::FrontOptions;
use crate::sleep::Sleep;
use crate::sync::lock;
use crate::termination::Termination;
use crate::trace;
use crate::worker::Worker;
use crate::worklist::WorkList;
use crossbeam_utils::CachePadded;
use snet_core::det::{Ctx, Token};
use snet_core::engine::WorkerStats;
use snet_core::inst::Inst;
use snet_core::walk::{BoxRef, Step, Walker};
use snet_core::{BoxTable, Engine, Net, RecordSink, RecordSource, RunError, RunOptions, RunStats};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// The work-stealing engine (`--engine front`).
#[derive(Debug, Clone, Default)]
pub struct FrontEngine {
    /// FRONT-specific options.
    pub options: FrontOptions,
}

impl FrontEngine {
    /// An engine with `options`.
    pub fn new(options: FrontOptions) -> FrontEngine {
        FrontEngine { options }
    }
}

/// What waits in a stream: a record, or the one call of an initialiser box.
#[derive(Debug)]
pub(crate) enum Job {
    Data(Token),
    Init(Ctx),
}

/// The engine state kept in a box leaf (`Inst::engine_slot`).
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) ent: Entity<Job>,
    /// Distance from the global input along the path that first reached the entity;
    /// the work list's front-first order (deeper is nearer the output).
    pub(crate) depth: u32,
    /// The order-restoring collector of a box with concurrency limit > 1 (seed 003
    /// §4.7); `None` for limit 1.
    pub(crate) order: Option<Mutex<Order>>,
    /// The relief epoch of the worker that last listed this entity among the
    /// destinations of a call (`worker`, "Bounded box outputs"); a hint that only saves
    /// listing it twice (relaxed: a stale value costs a duplicate, never a miss of the
    /// own epoch, which only this worker writes).
    pub(crate) relief_mark: AtomicU64,
}

/// The per-box collector of concurrent invocations: the outputs of invocation `seq`
/// (numbered in stream order by `Entity::pop_seq`) wait here until every earlier
/// invocation's outputs have been walked on.
#[derive(Debug, Default)]
pub(crate) struct Order {
    /// The sequence number whose outputs are walked next.
    pub(crate) next: u64,
    /// Finished invocations waiting for an earlier one.
    pub(crate) done: std::collections::BTreeMap<u64, Vec<Token>>,
}

/// State shared by all workers of one run.
pub(crate) struct Shared<'a> {
    pub(crate) w: Walker<'a>,
    pub(crate) root: Arc<Inst>,
    pub(crate) lists: Vec<WorkList<Arc<Inst>>>,
    // What workers write at run time (locks, counters, flags) has a cache line of its
    // own each: next to each other, or to what every firing reads (`stop`, `w`), they
    // made the two workers of `deep` 0.19 s -> 0.4 s when a smaller error type moved
    // them onto one line.
    pub(crate) input: CachePadded<Mutex<&'a mut dyn RecordSource>>,
    pub(crate) output: CachePadded<Mutex<&'a mut dyn RecordSink>>,
    pub(crate) term: CachePadded<Termination>,
    pub(crate) stop: CachePadded<AtomicBool>,
    pub(crate) error: Mutex<Option<RunError>>,
    pub(crate) sleep: CachePadded<Sleep>,
    pub(crate) steals: CachePadded<AtomicU64>,
    pub(crate) opts: &'a FrontOptions,
    pub(crate) epoch: Instant,
    /// Concurrency limit by box index (`FrontOptions::box_concurrency`).
    pub(crate) limits: Vec<usize>,
    /// Box leaves with a concurrency limit above 1 (their collectors are emptied when a
    /// run fails, so that buffered records free the instance tree).
    pub(crate) concurrent: Mutex<Vec<std::sync::Weak<Inst>>>,
    /// Set while a worker waits in a relief for a destination another worker owns
    /// (`worker`, "Bounded box outputs"): one waiter at a time, so waits never form a
    /// cycle.
    pub(crate) relief_waiter: CachePadded<AtomicBool>,
    /// The distribution layer of a distributed run.
    pub(crate) dist: Option<Arc<dyn snet_core::Dist>>,
}

impl Shared<'_> {
    /// The engine slot of box leaf `leaf`, created with `depth` on first use.
    #[inline]
    pub(crate) fn slot<'l>(&self, leaf: &'l Arc<Inst>, depth: u32) -> &'l Slot {
        self.slot_in(leaf, || Arc::downgrade(leaf), depth)
    }

    /// [`Shared::slot`] of a borrowed box leaf.
    #[inline]
    pub(crate) fn slot_of<'l>(&self, leaf: BoxRef<'l>, depth: u32) -> &'l Slot {
        self.slot_in(leaf.inst(), || Arc::downgrade(&leaf.arc()), depth)
    }

    #[inline]
    fn slot_in<'l>(
        &self,
        leaf: &'l Inst,
        weak: impl FnOnce() -> std::sync::Weak<Inst>,
        depth: u32,
    ) -> &'l Slot {
        leaf.engine_slot(|| {
            let limit = leaf.box_index().map_or(1, |b| self.limits[b]);
            if limit > 1 {
                lock(&self.concurrent).push(weak());
            }
            Slot {
                ent: Entity::with_limit(limit),
                depth,
                order: (limit > 1).then(|| Mutex::new(Order::default())),
                relief_mark: AtomicU64::new(0),
            }
        })
    }

    /// Records the first error and stops every worker.
    pub(crate) fn fail(&self, e: RunError) {
        {
            let mut g = lock(&self.error);
            if g.is_none() {
                *g = Some(e);
            }
        }
        self.stop.store(true, Ordering::SeqCst);
        self.sleep.notify_all();
        if let Some(d) = &self.dist {
            // A worker may wait for records from other nodes: it must leave.
            d.interrupt();
        }
    }

    /// The run is complete: wake everybody so they leave.
    pub(crate) fn finish(&self) {
        self.sleep.notify_all();
    }

    /// True when the workers must leave their loop.
    #[inline]
    pub(crate) fn over(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.term.is_done()
    }

    /// A unit of work ends (see the module doc on termination).
    #[inline]
    pub(crate) fn end_unit(&self) {
        if self.term.end_unit() {
            self.finish();
        } else if let Some(d) = &self.dist {
            // A distributed run: a reader waiting for records from other nodes answers
            // the termination protocol only while this node is idle; tell it.
            if self.term.idle() {
                d.became_idle();
            }
        }
    }

    /// True if a worker may read one more input record now.
    pub(crate) fn input_admissible(&self) -> bool {
        if self.term.input_done() {
            return false;
        }
        match self.opts.input_limit {
            None => true,
            Some(l) => {
                let c = &self.w.counters;
                l.admits(c.records_in(), c.records_out()) || self.term.idle()
            }
        }
    }
}

/// Aborts the run (instead of hanging the other workers) if a worker panics.
struct PanicGuard<'s, 'a>(&'s Shared<'a>);

impl Drop for PanicGuard<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.fail(RunError::new(
                "front engine",
                None,
                "a worker thread panicked",
            ));
        }
    }
}

/// Runs the worker loops as jobs on a fork-join pool, worker `i` on pool worker `i`
/// (see `worker` on how a loop cooperates with the pool).
fn run_on_pool<'s, 'a>(
    sh: &'s Shared<'a>,
    w0: Worker<'s, 'a>,
    n: usize,
) -> Result<Vec<crate::worker::Report>, RunError> {
    let pool = snet_forkjoin::Pool::builder()
        .threads(n)
        .stack_size(FIBER_STACK)
        .name("snet-front-fj")
        .build()
        .map_err(|e| RunError::new("front engine", None, format!("cannot start workers: {e}")))?;
    let w0 = Mutex::new(Some(w0));
    let reports: Mutex<Vec<Option<crate::worker::Report>>> =
        Mutex::new((0..n).map(|_| None).collect());
    pool.run_on_each(|i| {
        let _guard = PanicGuard(sh);
        let mut wk = match i {
            0 => lock(&w0).take().expect("worker 0 runs once"),
            _ => Worker::new(sh, i),
        };
        wk.run();
        let r = wk.report();
        lock(&reports)[i] = Some(r);
    });
    drop(pool);
    Ok(reports
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.expect("every worker reports"))
        .collect())
}

impl Engine for FrontEngine {
    fn name(&self) -> &'static str {
        "front"
    }

    fn run(
        &self,
        net: &Net,
        boxes: &BoxTable,
        input: &mut dyn RecordSource,
        output: &mut dyn RecordSink,
        opts: &RunOptions,
    ) -> Result<RunStats, RunError> {
        let epoch = Instant::now();
        let n = opts.workers.max(1);
        let mut w = Walker::new(net, boxes)?;
        w.set_dist(opts.dist.clone())?;
        let mut inits = Vec::new();
        let root = w.create_root(&mut |s| {
            if let Step::Init(c) = s {
                inits.push(c);
            }
        });
        let sh = Shared {
            w,
            root,
            lists: (0..n).map(|_| WorkList::new()).collect(),
            input: CachePadded::new(Mutex::new(input)),
            output: CachePadded::new(Mutex::new(output)),
            term: CachePadded::new(Termination::new()),
            stop: CachePadded::new(AtomicBool::new(false)),
            error: Mutex::new(None),
            sleep: CachePadded::new(Sleep::new(n)),
            steals: CachePadded::new(AtomicU64::new(0)),
            opts: &self.options,
            epoch,
            limits: net
                .boxes
                .iter()
                .map(|b| self.options.box_concurrency.limit(&b.name))
                .collect(),
            concurrent: Mutex::new(Vec::new()),
            relief_waiter: CachePadded::new(AtomicBool::new(false)),
            dist: opts.dist.clone(),
        };
        let mut w0 = Worker::new(&sh, 0);
        for c in inits {
            w0.enqueue(sh.w.box_ref(&c.leaf), Job::Init(c.ctx));
        }
        let mut reports = Vec::with_capacity(n);
        if self.options.forkjoin {
            reports = run_on_pool(&sh, w0, n)?;
        } else {
            // Workers wait at a gate until all of them exist: if the system refuses a
            // thread (e.g. `-w 100000`), the run stops with an error before any work.
            let gate = (Mutex::new(None::<bool>), Condvar::new());
            std::thread::scope(|scope| {
                let mut handles = Vec::with_capacity(n - 1);
                let mut refused = None;
                for i in 1..n {
                    let sh = &sh;
                    let gate = &gate;
                    // Box code runs on worker stacks: give C boxes with large local
                    // arrays the room a classic runtime's threads had (virtual memory;
                    // pages are only committed when touched).
                    let spawned = std::thread::Builder::new()
                        .name(format!("snet-front-{i}"))
                        .stack_size(WORKER_STACK)
                        .spawn_scoped(scope, move || {
                            let mut go = gate.0.lock().unwrap_or_else(|e| e.into_inner());
                            while go.is_none() {
                                go = gate.1.wait(go).unwrap_or_else(|e| e.into_inner());
                            }
                            if *go != Some(true) {
                                return None;
                            }
                            drop(go);
                            let _guard = PanicGuard(sh);
                            let mut wk = Worker::new(sh, i);
                            wk.run();
                            Some(wk.report())
                        });
                    match spawned {
                        Ok(h) => handles.push(h),
                        Err(e) => {
                            refused = Some(e);
                            break;
                        }
                    }
                }
                *gate.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(refused.is_none());
                gate.1.notify_all();
                if let Some(e) = refused {
                    *lock(&sh.error) = Some(RunError::new(
                        "front engine",
                        None,
                        format!(
                            "cannot start worker thread {} of {n}: {e} (use fewer workers, -w)",
                            handles.len() + 1
                        ),
                    ));
                } else {
                    let _guard = PanicGuard(&sh);
                    w0.run();
                    reports.push(w0.report());
                }
                for h in handles {
                    match h.join() {
                        Ok(Some(r)) => reports.push(r),
                        Ok(None) => {}
                        Err(p) => std::panic::resume_unwind(p),
                    }
                }
            });
        }
        let wall = epoch.elapsed();
        let error = lock(&sh.error).take();
        if let Some(e) = error {
            // Queued records hold causal frames that point back into the instance tree:
            // drop them so the tree is freed.
            for l in &sh.lists {
                for leaf in l.drain() {
                    drop(sh.slot(&leaf, 0).ent.drain());
                }
            }
            for leaf in lock(&sh.concurrent).drain(..) {
                if let Some(leaf) = leaf.upgrade() {
                    let s = sh.slot(&leaf, 0);
                    drop(s.ent.drain());
                    if let Some(o) = &s.order {
                        lock(o).done.clear();
                    }
                }
            }
            return Err(e);
        }
        let mut stats = RunStats::from_counters("front", &sh.w.counters, sh.w.insts.get());
        stats.steals = sh.steals.load(Ordering::Relaxed);
        stats.wall = wall;
        stats.workers = reports
            .iter()
            .map(|r| WorkerStats {
                busy: wall.saturating_sub(r.idle),
                idle: r.idle,
            })
            .collect();
        let Shared { root, mut w, .. } = sh;
        stats.discarded_in_sync = w.finish(root) as u64;
        if let Some(path) = &self.options.trace {
            let events: Vec<Vec<trace::Event>> = reports.into_iter().map(|r| r.events).collect();
            let write = std::fs::File::create(path).and_then(|f| {
                let mut b = std::io::BufWriter::new(f);
                trace::write_json(&mut b, &events)?;
                std::io::Write::flush(&mut b)
            });
            if let Err(e) = write {
                stats.warnings.push(format!(
                    "cannot write the trace file {}: {e}",
                    path.display()
                ));
            }
        }
        Ok(stats)
    }
}
