//! One worker thread: find work front-first, invoke, walk records onward.
//!
//! # Where a worker looks for work (seed 003 §4.4–4.6)
//!
//! 1. its own work list, front-first: the deepest stream whose entity it can own;
//! 2. the global input, if its own list is empty, no other worker is reading the input
//!    and the input limit allows;
//! 3. other workers' lists, round-robin from the last victim, stealing half of the
//!    licences of the front-most stream with a free entity;
//! 4. otherwise it spins with growing pauses, then yields, then parks (`sleep`).
//!
//! # With `FrontOptions::forkjoin` (one pool, two users)
//!
//! The loop runs as a job on fork-join pool worker `id` (`engine::run_on_pool`), and a
//! box that forks parks *this loop's fiber* when it must wait for a stolen half; the
//! pool worker meanwhile runs other fork-join work. The loop follows the protocol of
//! `snet_forkjoin::coop` (where the deadlock argument is written down):
//!
//! * after each unit of work, `coop::yield_now` lets fibers of this pool worker that
//!   became ready run (the stolen half of another worker's join that waited at an
//!   inner join while this loop was parked);
//! * when steps 1–3 find nothing, `coop::help` runs one fork of another worker's box
//!   (or yields to ready fibers) before the loop counts an idle round; idle rounds are
//!   at least `FJ_SPIN_ROUNDS`;
//! * it parks with `coop::park_idle` (our `Sleep` unparks the thread; the pool's
//!   notifications do too, among them the wake-up of a fork published by a box while
//!   nobody searches) for at most `FJ_PARK`, a safety net for a wake-up the pool's
//!   heuristic skips.
//!
//! # Record walking (§4.5)
//!
//! The walks started by one invocation end in `Step`s. Every `Step::Box` but the last
//! is pushed into its entity's stream with a licence for this worker. The last one is
//! held back: after the invocation, the worker tries to own its destination and, if it
//! can, continues there at once (running the oldest queued job first if the stream is
//! not empty). It acquires or pushes into the destination *before* releasing the
//! entity it just ran, so a later invocation of that entity cannot overtake the record.
//! Records taken out of a collector (deterministic combinators) are never held back:
//! the walker sends `Step::Flush` before it takes the next one or ends the drain, as
//! another worker may drain the next ones and deliver them first.
//!
//! # Bounded box outputs (`snet_core::relief`)
//!
//! Every record a box call (or a walk) pushes into a stream is counted; after
//! `RELIEF_EVERY` of them the worker *relieves* the streams it pushed into, from inside
//! the emit path: it delivers the held record, then, for each destination it can own
//! (not one it owns further out on its own stack: the running box itself, or a box whose
//! call a relief further out interrupted), it takes the queued jobs one by one and runs
//! each as a unit (`run_unit`, nested), walking its outputs onward as usual. Jobs leave
//! each stream in order and each entity still runs one call at a time, so stream order
//! and the deterministic collectors' order are kept; the jobs' licences become stale.
//! A destination owned by another worker is waited for if its stream is long or the run
//! has many records in flight (`relief::IN_FLIGHT_HIGH`; a record held up there may
//! hold later ones in a deterministic collector), as a box blocks on a full stream in
//! the engines with bounded streams: by one worker at a time (`Shared::relief_waiter`),
//! so that waits cannot form a cycle; otherwise it is left to its owner.
//! Relief nests at most `MAX_NEST` levels and within `STACK_BUDGET` of stack; beyond
//! that (and for boxes with a concurrency limit above 1, whose outputs wait in their
//! order collector anyway) outputs are buffered as before.

use crate::engine::{Job, Shared};
use crate::sync::lock;
use crate::trace::{EventKind, Tracer};
use crate::worklist::Key;
use snet_core::det::Token;
use snet_core::inst::Inst;
use snet_core::relief;
use snet_core::walk::{BoxRef, Pos, Step};
use snet_core::Incoming;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Idle rounds (half spinning, half yielding) before parking with
/// `FrontOptions::forkjoin`: every round also tries to help with a fork, so stay
/// around as long as the pool's own idle workers do.
const FJ_SPIN_ROUNDS: u32 = 256;

/// Park timeout with `FrontOptions::forkjoin`: a fork published by a box wakes a parked
/// worker only if no other worker is searching, so a parked worker looks again this
/// often.
const FJ_PARK: Duration = Duration::from_millis(2);

/// Walk follows within one unit after which a worker with other work in its list
/// queues the walked record instead of following it (see `run_unit`).
const FOLLOW_CHECK: u32 = 64;

/// What a worker hands back at the end of the run.
#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) idle: Duration,
    pub(crate) events: Vec<crate::trace::Event>,
}

/// The per-thread state of a worker.
pub(crate) struct Worker<'s, 'a> {
    id: usize,
    sh: &'s Shared<'a>,
    /// The destination of the last `Step::Box` of the current invocation, not yet
    /// delivered, and its record (two fields so the record can stay in place when the
    /// walk continues with it).
    held_leaf: Option<BoxRef<'s>>,
    held_tok: Option<Token>,
    /// The job `run_unit` runs next when it is not the held record (taken from a
    /// stream). Kept in the worker rather than passed around (from when jobs carried
    /// whole records; a job is small now that records travel in slots).
    next_job: Option<Job>,
    /// Depth of the entity being run (0 while walking an input record).
    depth: u32,
    /// Records pushed into streams by the current box call (or walk) since its start or
    /// the last relief.
    burst: usize,
    /// The streams those records went to (each listed once per epoch, through
    /// `Slot::relief_mark`; a duplicate is harmless).
    dests: Vec<BoxRef<'s>>,
    /// This worker's relief epoch: a new one at every call and after every relief,
    /// unique across workers (the worker's number in the top bits).
    epoch: u64,
    /// Addresses of the box leaves whose calls are in progress further out on this
    /// worker's stack (interrupted by reliefs): owned by this worker, never to be waited
    /// for.
    outer: Vec<usize>,
    /// The stack address at the start of the worker loop (`relief::may_nest`).
    stack_base: usize,
    victim: usize,
    idle: Duration,
    tracer: Option<Tracer>,
}

impl<'s, 'a> Worker<'s, 'a> {
    pub(crate) fn new(sh: &'s Shared<'a>, id: usize) -> Self {
        Worker {
            id,
            sh,
            held_leaf: None,
            held_tok: None,
            next_job: None,
            depth: 0,
            burst: 0,
            dests: Vec::new(),
            epoch: (id as u64 + 1) << 40,
            outer: Vec::new(),
            stack_base: 0,
            victim: id,
            idle: Duration::ZERO,
            tracer: sh.opts.trace.as_ref().map(|_| Tracer::new(sh.epoch)),
        }
    }

    pub(crate) fn report(self) -> Report {
        Report {
            idle: self.idle,
            events: self.tracer.map(|t| t.events).unwrap_or_default(),
        }
    }

    /// Handles one step of a walk (the sink of `Walker::walk` / `run_box`); `cur` is the
    /// address of the box leaf whose call the walk belongs to, or 0 (an input walk).
    /// (An address, passed along: no reference count to update and nothing to store at
    /// every call.)
    fn on_step(&mut self, s: Step<'s>, cur: usize) {
        match s {
            Step::Box(leaf, tok) => self.hold(leaf, tok, cur),
            Step::Init(c) => self.push_out(self.sh.w.box_ref(&c.leaf), Job::Init(c.ctx), cur),
            Step::Output(tok) => self.output(tok),
            // A record taken out of a collector must reach its next entity before the
            // next one is taken out, possibly by another worker after this drain ends.
            Step::Flush => {
                if let (Some(l), Some(t)) = (self.held_leaf.take(), self.held_tok.take()) {
                    self.push_out(l, Job::Data(t), cur);
                }
            }
        }
    }

    /// Holds a record for `leaf` back (the last `Step::Box` so far, see the module
    /// doc), pushing the one held before into its stream.
    #[inline]
    fn hold(&mut self, leaf: BoxRef<'s>, tok: Token, cur: usize) {
        if let (Some(l), Some(t)) = (self.held_leaf.take(), self.held_tok.take()) {
            self.push_out(l, Job::Data(t), cur);
        }
        self.held_leaf = Some(leaf);
        self.held_tok = Some(tok);
    }

    /// Starts counting for relief afresh (a new box call or input walk). Nothing to do
    /// unless the last one pushed records (`dests` is empty while `burst` is 0).
    #[inline]
    fn new_call(&mut self) {
        if self.burst != 0 {
            self.reset_burst();
        }
    }

    /// Starts counting for relief afresh (kept out of line: `run_unit` is hot).
    #[cold]
    #[inline(never)]
    fn reset_burst(&mut self) {
        self.burst = 0;
        self.dests.clear();
        self.epoch += 1;
    }

    /// Pushes a job a walk ended with into its stream, counting it for relief.
    #[inline(never)]
    fn push_out(&mut self, leaf: BoxRef<'s>, job: Job, cur: usize) {
        if self.sh.stop.load(Ordering::Relaxed) {
            // The run is failing: queued jobs would only be dropped at the end (and a
            // generator would go on filling its streams until its call returns).
            return;
        }
        let mark = &self.sh.slot_of(leaf, self.depth + 1).relief_mark;
        if mark.load(Ordering::Relaxed) != self.epoch {
            mark.store(self.epoch, Ordering::Relaxed);
            self.dests.push(leaf);
        }
        self.enqueue(leaf, job);
        self.burst += 1;
        if self.burst >= relief::RELIEF_EVERY {
            self.relieve(cur);
        }
    }

    /// Runs the jobs queued in the streams the current call (of the box leaf at address
    /// `cur`, or 0) pushed into, nested (see the module doc, "Bounded box outputs").
    #[cold]
    fn relieve(&mut self, cur: usize) {
        let sh = self.sh;
        if !relief::may_nest(self.outer.len() as u32, self.stack_base) {
            // Too deep: buffer; count the next `RELIEF_EVERY` afresh.
            self.reset_burst();
            return;
        }
        self.burst = 0;
        // Delivered first: it was emitted before everything still to come.
        if let (Some(l), Some(t)) = (self.held_leaf.take(), self.held_tok.take()) {
            self.enqueue(l, Job::Data(t));
        }
        let dests = std::mem::take(&mut self.dests);
        self.epoch += 1;
        let depth = self.depth;
        debug_assert!(self.next_job.is_none(), "no job is pending during a call");
        // (Pushed even if 0, outside any call: `outer.len()` is the nesting level.)
        self.outer.push(cur);
        for &d in &dests {
            let s = sh.slot_of(d, 0);
            if s.ent.limit() > 1 || self.owns_outer(d) {
                continue;
            }
            while !s.ent.is_empty() && !sh.stop.load(Ordering::Relaxed) {
                if !self.acquire_for_walk(&s.ent) {
                    if self.wait_for_owner(&s.ent) {
                        continue;
                    }
                    break;
                }
                match s.ent.pop_seq() {
                    Some((job, _)) => {
                        self.next_job = Some(job);
                        self.run_unit(d);
                    }
                    None => {
                        release(sh, &s.ent);
                        break;
                    }
                }
            }
        }
        self.outer.pop();
        self.depth = depth;
        // Everything listed was relieved (or left to its owner): list afresh.
        self.dests = dests;
        self.dests.clear();
        self.epoch += 1;
        self.burst = 0;
    }

    /// Waits while another worker owns `ent`, if its stream is long or the run has many
    /// records in flight (the box whose call is being relieved blocks, as with a bounded
    /// stream; a record held up at `ent` may hold many more in a deterministic
    /// collector). Only one worker waits at a time: the owner is then not waiting, so
    /// it ends its unit (or relieves, or buffers) and the wait ends. With fork-join, the
    /// owner may wait at a join for a fiber of this pool worker: the wait yields to
    /// ready fibers (`coop::yield_now`) at every round, as the worker loop does between
    /// units. True if the caller should try to own it again.
    fn wait_for_owner(&self, ent: &crate::entity::Entity<Job>) -> bool {
        let sh = self.sh;
        let worth = ent.len() >= relief::RELIEF_EVERY
            || (!ent.is_empty() && sh.w.counters.in_flight() > relief::IN_FLIGHT_HIGH);
        if !worth {
            return false;
        }
        // Acquire: pairs with the Release store below (the previous waiter's).
        if sh
            .relief_waiter
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        let mut spins = 0u32;
        while ent.is_owned() && !ent.is_empty() && !sh.stop.load(Ordering::Relaxed) {
            spins += 1;
            if sh.opts.forkjoin {
                snet_forkjoin::coop::yield_now();
            }
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        // Release: pairs with the Acquire CAS above (the next waiter's).
        sh.relief_waiter.store(false, Ordering::Release);
        !ent.is_empty()
    }

    /// True if `leaf` is a box whose call is in progress on this worker's stack.
    fn owns_outer(&self, leaf: BoxRef<'_>) -> bool {
        self.outer.contains(&leaf.addr())
    }

    /// Pushes `job` into `leaf`'s stream with a licence in this worker's list.
    pub(crate) fn enqueue(&mut self, leaf: BoxRef<'s>, job: Job) {
        let sh = self.sh;
        let s = sh.slot_of(leaf, self.depth + 1);
        // Counted before it becomes visible (`termination` step 1).
        sh.term.add();
        s.ent.push(job);
        let key = Key::new(s.depth, leaf.addr());
        // A licence holds its entity counted (the work lists outlive no walker
        // borrow); only a new one takes a count.
        sh.lists[self.id].add(key, 1, || leaf.arc());
        sh.sleep.notify_one();
    }

    fn output(&mut self, tok: Token) {
        let sh = self.sh;
        let r = {
            let mut out = sh.output.lock().unwrap_or_else(|p| p.into_inner());
            let r = out.write_record(tok.rec.into_record());
            // Counted once written, so input control never runs ahead of the sink.
            sh.w.counters.output();
            r
        };
        if let Err(e) = r {
            sh.fail(e);
        }
        if sh.opts.input_limit.is_some() {
            // More input may be admissible now.
            sh.sleep.notify_one();
        }
    }

    /// Delivers the held step after an invocation of `cur` (or an input walk, `None`):
    /// returns the entity to continue at (owned), its next job being the held record
    /// or `next_job`, or pushes the record with a licence and returns `None`.
    fn continue_walk(&mut self, cur: Option<BoxRef<'s>>) -> Option<BoxRef<'s>> {
        let sh = self.sh;
        let next = self.held_leaf.take()?;
        let s = sh.slot_of(next, self.depth + 1);
        if s.ent.limit() > 1 {
            // A concurrent box numbers its jobs as they leave its stream (entity
            // step 5): the record goes through the stream, never around it.
            let tok = self.held_tok.take()?;
            self.enqueue(next, Job::Data(tok));
            return None;
        }
        let owned = cur.is_some_and(|c| c.addr() == next.addr()) // a loop back to itself
            || (!self.owns_outer(next) && self.acquire_for_walk(&s.ent));
        if owned {
            if s.ent.is_empty() {
                // The common case: run the held record next, where it is.
                return Some(next);
            }
            let tok = self.held_tok.take()?;
            self.next_job = Some(s.ent.push_pop(Job::Data(tok)));
            return Some(next);
        }
        let tok = self.held_tok.take()?;
        self.enqueue(next, Job::Data(tok));
        None
    }

    /// Tries to own a walk destination. It is usually busy only for a moment (another
    /// worker running one invocation just ahead of us), so wait a little before the
    /// caller falls back to a licence.
    fn acquire_for_walk(&self, ent: &crate::entity::Entity<Job>) -> bool {
        let mut spins = self.sh.opts.walk_spin;
        loop {
            if ent.try_acquire() {
                return true;
            }
            if spins == 0 || self.sh.stop.load(Ordering::Relaxed) {
                return false;
            }
            spins -= 1;
            while ent.is_owned() && spins > 0 {
                std::hint::spin_loop();
                spins -= 1;
            }
        }
    }

    /// Runs `next_job` (or else the held record) at the owned entity `leaf` and follows
    /// the walked records until the walk cannot continue; ends the unit.
    fn run_unit(&mut self, mut leaf: BoxRef<'s>) {
        let sh = self.sh;
        let mut follows = 0u32;
        loop {
            let s = sh.slot_of(leaf, 0);
            if sh.stop.load(Ordering::Relaxed) {
                self.next_job = None;
                self.held_tok = None;
                s.ent.release();
                break;
            }
            self.depth = s.depth;
            let start = self.tracer.as_ref().map(Tracer::now);
            let job = match self.next_job.take() {
                Some(j) => j,
                None => match self.held_tok.take() {
                    Some(tok) => Job::Data(tok),
                    None => unreachable!("run_unit without a job"),
                },
            };
            // The record's slot goes to the call (its first output may take it over).
            let (input, ctx) = match job {
                Job::Data(tok) => (Some(tok.rec), tok.ctx),
                Job::Init(ctx) => (None, ctx),
            };
            self.new_call();
            let cur = leaf.addr();
            // The firing's last record, when it goes straight on to a box, comes back
            // here rather than through `on_step`: it is the record held for the walk.
            let r = match sh.w.fire(leaf, input, ctx, &mut |st| self.on_step(st, cur)) {
                Ok(Some((next, tok))) => {
                    self.hold(next, tok, cur);
                    Ok(())
                }
                Ok(None) => Ok(()),
                Err(e) => Err(e),
            };
            if let (Some(t), Some(start)) = (self.tracer.as_mut(), start) {
                let name = &sh.w.net.node(leaf.node).name;
                t.record(EventKind::Box, name, start);
            }
            if let Err(e) = r {
                self.held_leaf = None;
                self.held_tok = None;
                s.ent.release();
                sh.fail(e);
                break;
            }
            follows += 1;
            if follows.is_multiple_of(FOLLOW_CHECK) && !sh.lists[self.id].is_empty() {
                // Record walking is a preference, not a licence to starve: a box that
                // keeps feeding itself (or a long chain of them) would otherwise hold
                // the worker while other streams wait (issue 24, item 4: a collector
                // starved by its producer loop grew a chain that every new record
                // walked). The held record joins its stream with a licence and the
                // worker takes work front-first again.
                if let Some(next) = self.held_leaf.take() {
                    if let Some(tok) = self.held_tok.take() {
                        self.enqueue(next, Job::Data(tok));
                    }
                }
                release(sh, &s.ent);
                break;
            }
            match self.continue_walk(Some(leaf)) {
                Some(next) => {
                    if next.addr() != leaf.addr() {
                        release(sh, &s.ent);
                    }
                    leaf = next;
                }
                None => {
                    release(sh, &s.ent);
                    break;
                }
            }
        }
        sh.end_unit();
    }

    /// Runs job number `seq` of a box whose concurrency limit is above 1 (seed 003
    /// §4.7), holding one of its ownership shares only while the box runs. The outputs
    /// go to the box's collector (`engine::Order`); whoever completes the oldest
    /// missing invocation walks on every batch that is then in order, under the
    /// collector's lock, delivering each step at once (nothing is held back, so a later
    /// batch cannot overtake an earlier one at the next entity). Ends the unit.
    fn run_concurrent(&mut self, leaf: Arc<Inst>, job: Job, seq: u64) {
        let sh = self.sh;
        let s = sh.slot(&leaf, 0);
        if sh.stop.load(Ordering::Relaxed) {
            s.ent.release();
            sh.end_unit();
            return;
        }
        self.depth = s.depth;
        let start = self.tracer.as_ref().map(Tracer::now);
        // As in `run_unit`.
        let (input, ctx) = match job {
            Job::Data(tok) => (Some(tok.rec), tok.ctx),
            Job::Init(ctx) => (None, ctx),
        };
        let mut outs = Vec::new();
        let r =
            sh.w.run_box_collect(&leaf, input, ctx, &mut outs, &mut |st| self.deliver_now(st));
        release(sh, &s.ent);
        if let (Some(t), Some(start)) = (self.tracer.as_mut(), start) {
            let name = &sh.w.net.node(leaf.node).name;
            t.record(EventKind::Box, name, start);
        }
        let r = r.and_then(|()| {
            let Some(order) = &s.order else {
                unreachable!("a concurrent box has a collector")
            };
            let mut g = lock(order);
            g.done.insert(seq, outs);
            loop {
                let n = g.next;
                let Some(batch) = g.done.remove(&n) else {
                    return Ok(());
                };
                g.next += 1;
                for tok in batch {
                    sh.w.walk(Pos::Leave(leaf.clone()), tok, &mut |st| {
                        self.deliver_now(st)
                    })?;
                }
            }
        });
        if let Err(e) = r {
            sh.fail(e);
        }
        sh.end_unit();
    }

    /// Delivers a walk step at once (no record is held back for walking).
    fn deliver_now(&mut self, s: Step<'s>) {
        match s {
            Step::Box(leaf, tok) => self.enqueue(leaf, Job::Data(tok)),
            Step::Init(c) => self.enqueue(self.sh.w.box_ref(&c.leaf), Job::Init(c.ctx)),
            Step::Output(tok) => self.output(tok),
            Step::Flush => {}
        }
    }

    /// Step 1: the front-most stream of the own list whose entity can be owned; the job
    /// comes with its sequence number in the stream.
    fn take_local(&mut self) -> Option<(Arc<Inst>, Job, u64)> {
        let sh = self.sh;
        let list = &sh.lists[self.id];
        loop {
            let leaf = list.take(|l| sh.slot(l, 0).ent.try_acquire())?;
            let s = sh.slot(&leaf, 0);
            match s.ent.pop_seq() {
                Some((job, seq)) => return Some((leaf, job, seq)),
                // A stale licence: its record was taken by a walking owner.
                None => s.ent.release(),
            }
        }
    }

    /// Step 2: reads and walks one input record. True if the worker did something.
    fn try_input(&mut self) -> bool {
        let sh = self.sh;
        if !sh.input_admissible() {
            return false;
        }
        let Ok(mut src) = sh.input.try_lock() else {
            return false;
        };
        // Re-check under the lock: another reader may have used up the bound.
        if !sh.input_admissible() {
            return false;
        }
        // In a distributed run the source also gives records from other nodes, and
        // blocks until there is something (or the run has ended everywhere).
        let (pos, rec) = match src.next_incoming(&|| sh.term.idle()) {
            Ok(Some(Incoming::Record(rec))) => {
                sh.w.counters.input();
                (Pos::Enter(sh.root.clone()), rec)
            }
            Ok(Some(Incoming::Arrival(a))) => {
                sh.term.add();
                self.depth = 0;
                self.new_call();
                let r = sh.w.arrival(&sh.root, a, &mut |st| self.on_step(st, 0));
                match r {
                    Ok(Some((pos, tok))) => {
                        // Counted above: the walk below is this unit.
                        return self.walk_input(src, pos, tok, true);
                    }
                    Ok(None) => {
                        // Initialiser calls and released records were delivered.
                        let next = self.continue_walk(None);
                        drop(src);
                        match next {
                            Some(leaf) => self.run_unit(leaf),
                            None => sh.end_unit(),
                        }
                        return true;
                    }
                    Err(e) => {
                        drop(src);
                        sh.fail(e);
                        sh.end_unit();
                        return true;
                    }
                }
            }
            Ok(None) => {
                let finished = sh.term.input_ended();
                drop(src);
                if finished {
                    sh.finish();
                }
                return false;
            }
            Err(e) => {
                drop(src);
                sh.fail(e);
                return true;
            }
        };
        self.walk_input(src, pos, Token::new(rec), false)
    }

    /// Walks one record that came in through the input (from `pos`, the root for a
    /// global input record), holding the input until the walk is delivered; `counted`:
    /// its unit is already counted.
    fn walk_input(
        &mut self,
        src: std::sync::MutexGuard<'_, &mut dyn snet_core::RecordSource>,
        pos: Pos,
        tok: Token,
        counted: bool,
    ) -> bool {
        let sh = self.sh;
        if !counted {
            sh.term.add();
            self.depth = 0;
            self.new_call();
        }
        let r = sh.w.walk(pos, tok, &mut |st| self.on_step(st, 0));
        if let Err(e) = r {
            self.held_leaf = None;
            self.held_tok = None;
            drop(src);
            sh.fail(e);
            sh.end_unit();
            return true;
        }
        // Deliver before releasing the input: the next input record must not overtake.
        let next = self.continue_walk(None);
        drop(src);
        // A worker may have parked because the input was busy (`has_work`).
        sh.sleep.notify_one();
        match next {
            Some(leaf) => self.run_unit(leaf),
            None => sh.end_unit(),
        }
        true
    }

    /// Step 3: steals half of the licences of a victim's front-most free stream.
    fn try_steal(&mut self) -> bool {
        let sh = self.sh;
        let n = sh.lists.len();
        for k in 1..n {
            let v = (self.victim + k) % n;
            if v == self.id {
                continue;
            }
            let got = sh.lists[v].steal_half(|l| !sh.slot(l, 0).ent.is_owned());
            if let Some((key, leaf, cnt)) = got {
                self.victim = v;
                sh.lists[self.id].add(key, cnt, || leaf);
                sh.steals.fetch_add(1, Ordering::Relaxed);
                if let Some(t) = self.tracer.as_mut() {
                    let now = t.now();
                    t.record(EventKind::Steal, &Arc::from("steal"), now);
                }
                return true;
            }
        }
        self.victim = (self.victim + 1) % n;
        false
    }

    /// True if parking now could miss work that this worker should do.
    fn has_work(&mut self) -> bool {
        let sh = self.sh;
        sh.over()
            // Licences for entities other workers are running do not keep us awake:
            // their owners wake a sleeper when they let go of a non-empty stream.
            || sh.lists[self.id].has_free(|l| !sh.slot(l, 0).ent.is_owned())
            // Input only counts while nobody reads it: a reader walking a long input
            // record (a network without boxes walks entirely there) would otherwise keep
            // this worker spinning. The reader notifies when it lets go of the input.
            // (and only while the own list is empty: the loop does not admit input
            // otherwise, input control §4.6).
            || (sh.lists[self.id].is_empty()
                && sh.input_admissible()
                && sh.input.try_lock().is_ok())
            || (sh.term.input_done() && sh.term.idle())
            || self.try_steal()
    }

    /// The worker loop.
    pub(crate) fn run(&mut self) {
        let sh = self.sh;
        self.stack_base = relief::stack_addr();
        sh.sleep.register(self.id);
        let mut rounds: u32 = 0;
        let mut idle_since: Option<Instant> = None;
        let fj = sh.opts.forkjoin;
        let spin = if fj {
            sh.opts.spin_rounds.max(FJ_SPIN_ROUNDS)
        } else {
            sh.opts.spin_rounds
        };
        loop {
            if sh.over() {
                break;
            }
            let found = if let Some((leaf, job, seq)) = self.take_local() {
                self.end_idle(&mut idle_since);
                if sh.slot(&leaf, 0).ent.limit() > 1 {
                    self.run_concurrent(leaf, job, seq);
                } else {
                    self.next_job = Some(job);
                    self.run_unit(sh.w.box_ref(&leaf));
                }
                if fj {
                    // Fibers of this pool worker that became ready run now.
                    snet_forkjoin::coop::yield_now();
                }
                true
            } else if sh.lists[self.id].is_empty() {
                self.try_input() || self.try_steal()
            } else {
                // Licences only for busy entities: wait for them rather than admit
                // more input (input control, §4.6), but help others meanwhile.
                self.try_steal()
            };
            // Nothing of our own: help with the boxes' forks.
            let found = found || (fj && snet_forkjoin::coop::help());
            if found {
                self.end_idle(&mut idle_since);
                rounds = 0;
                continue;
            }
            if idle_since.is_none() {
                idle_since = Some(Instant::now());
            }
            if sh.term.check() {
                sh.finish();
                break;
            }
            rounds += 1;
            if rounds <= spin / 2 {
                for _ in 0..(1u32 << rounds.min(6)) {
                    std::hint::spin_loop();
                }
            } else if rounds <= spin {
                std::thread::yield_now();
            } else {
                sh.sleep.announce(self.id);
                if self.has_work() {
                    sh.sleep.cancel(self.id);
                    rounds = 0;
                    continue;
                }
                let start = self.tracer.as_ref().map(Tracer::now);
                if fj {
                    // Woken by our `Sleep` (it unparks this thread) and by the pool
                    // (a fiber of ours became ready, a chain wake-up).
                    snet_forkjoin::coop::park_idle(FJ_PARK, || false);
                } else {
                    sh.sleep.park(self.id, Duration::from_millis(20));
                }
                sh.sleep.cancel(self.id);
                if let (Some(t), Some(start)) = (self.tracer.as_mut(), start) {
                    t.record(EventKind::Park, &Arc::from("parked"), start);
                }
                rounds = spin / 2;
            }
        }
        self.end_idle(&mut idle_since);
    }

    fn end_idle(&mut self, since: &mut Option<Instant>) {
        if let Some(t) = since.take() {
            self.idle += t.elapsed();
        }
    }
}

/// Gives up (a share of) an entity; if its stream still holds jobs, wakes a sleeper:
/// idle workers holding licences only for busy entities park (`Worker::has_work`).
#[inline]
fn release(sh: &Shared<'_>, ent: &crate::entity::Entity<Job>) {
    ent.release();
    if !ent.is_empty() {
        sh.sleep.notify_one();
    }
}
