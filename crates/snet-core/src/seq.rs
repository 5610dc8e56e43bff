//! The `seq` reference engine: one thread, one FIFO queue of pending box invocations.
//! It is the executable meaning of the spec and the oracle of the agreement tests.
//!
//! A box call that queues many records runs the queue from inside its emit path
//! (`Seq::relieve`, `crate::relief`), so memory does not grow with the records one call
//! emits; every box still sees its stream in order, one call at a time.

use crate::boxes::BoxTable;
use crate::det::Token;
use crate::engine::{Engine, Incoming, RecordSink, RecordSource, RunOptions, RunStats};
use crate::error::RunError;
use crate::net::Net;
use crate::relief;
use crate::walk::{Pos, Step, Walker};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

/// The single-threaded reference engine.
#[derive(Debug, Default, Clone, Copy)]
pub struct SeqEngine;

impl Engine for SeqEngine {
    fn name(&self) -> &'static str {
        "seq"
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
        let mut w = Walker::new(net, boxes)?;
        w.set_dist(opts.dist.clone())?;

        let mut st = Seq {
            w: &w,
            queue: VecDeque::new(),
            output,
            out_err: None,
            failed: None,
            burst: 0,
            busy: Vec::new(),
            nest: 0,
            stack_base: relief::stack_addr(),
        };
        let root = w.create_root(&mut |s| st.on_step(s));
        // Run all pending box work after every input record (FIFO).
        loop {
            while let Some(job) = st.queue.pop_front() {
                st.run_job(job)?;
            }
            // The source is asked only when the queue is empty: the engine is idle.
            let (pos, tok) = match input.next_incoming(&|| true)? {
                None => break,
                Some(Incoming::Record(rec)) => {
                    w.counters.input();
                    (Pos::Enter(root.clone()), Token::new(rec))
                }
                Some(Incoming::Arrival(a)) => {
                    let r = w.arrival(&root, a, &mut |s| st.on_step(s));
                    st.check()?;
                    match r? {
                        Some(x) => x,
                        // Instance creation, an initialiser call (queued), a repayment.
                        None => continue,
                    }
                }
            };
            st.burst = 0;
            let r = w.walk(pos, tok, &mut |s| st.on_step(s));
            // A box a relief ran failed first.
            st.check()?;
            r?;
        }
        if let Some(e) = st.out_err.take() {
            return Err(e);
        }
        drop(st);
        let discarded = w.finish(root);
        let mut stats = RunStats::from_counters("seq", &w.counters, w.insts.get());
        stats.discarded_in_sync = discarded as u64;
        stats.wall = start.elapsed();
        Ok(stats)
    }
}

/// The state of one run: the FIFO of pending box and initialiser steps (queued as they
/// are: re-wrapping each in a job type of its own cost a copy of the record per
/// firing) and what bounded box outputs need (`relief`).
struct Seq<'w, 'a, 'o> {
    w: &'w Walker<'a>,
    queue: VecDeque<Step<'w>>,
    output: &'o mut dyn RecordSink,
    out_err: Option<RunError>,
    /// The first error of a box run by a relief (the walk that relieved cannot
    /// return it); the run stops with it.
    failed: Option<RunError>,
    /// Steps queued by the current call (or walk) since its start or the last relief.
    burst: usize,
    /// The box leaves whose calls are in progress (innermost last), by address.
    busy: Vec<usize>,
    /// Reliefs in progress.
    nest: u32,
    stack_base: usize,
}

impl<'w> Seq<'w, '_, '_> {
    fn on_step(&mut self, s: Step<'w>) {
        match s {
            Step::Box(..) | Step::Init(_) => {
                if self.failed.is_some() {
                    return;
                }
                self.queue.push_back(s);
                self.burst += 1;
                if self.burst >= relief::RELIEF_EVERY {
                    self.relieve();
                }
            }
            Step::Flush => {}
            Step::Output(t) => {
                self.w.counters.output();
                if self.out_err.is_none() {
                    if let Err(e) = self.output.write_record(t.rec.into_record()) {
                        self.out_err = Some(e);
                    }
                }
            }
        }
    }

    /// Runs one queued box or initialiser step, and then, while the queue is empty
    /// and no relief is in progress, the step each firing ends with (its last record,
    /// going straight on to a box): it would be queued and taken out next.
    fn run_job(&mut self, mut job: Step<'w>) -> Result<(), RunError> {
        let w = self.w;
        loop {
            // The record's slot goes to the call (its first output may take it over).
            let (leaf, input, ctx) = match job {
                Step::Box(leaf, tok) => (leaf, Some(tok.rec), tok.ctx),
                Step::Init(mut c) => (w.box_ref(&c.leaf), None, c.ctx.take()),
                Step::Output(_) | Step::Flush => unreachable!("never queued"),
            };
            self.busy.push(leaf.addr());
            let burst = std::mem::replace(&mut self.burst, 0);
            let r = w.fire(leaf, input, ctx, &mut |s| self.on_step(s));
            self.burst = burst;
            self.busy.pop();
            // A box a relief ran failed first.
            self.check()?;
            match r? {
                Some((next, tok)) if self.nest == 0 && self.queue.is_empty() => {
                    job = Step::Box(next, tok);
                }
                Some((next, tok)) => {
                    self.on_step(Step::Box(next, tok));
                    return Ok(());
                }
                None => return Ok(()),
            }
        }
    }

    /// The error of a box a relief ran, if any.
    fn check(&mut self) -> Result<(), RunError> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Runs queued jobs from inside the current call's emit path, oldest first, until
    /// the queue is empty (see `relief`). Jobs of boxes whose calls are in progress are
    /// set aside in order and put back at the front afterwards: every job of such a box
    /// is set aside, and the others run in queue order, so each box's stream order is
    /// kept.
    #[cold]
    fn relieve(&mut self) {
        self.burst = 0;
        if !relief::may_nest(self.nest, self.stack_base) {
            return;
        }
        self.nest += 1;
        let mut aside: VecDeque<Step<'w>> = VecDeque::new();
        while self.failed.is_none() {
            let Some(job) = self.queue.pop_front() else {
                break;
            };
            let leaf = match &job {
                Step::Box(l, _) => l.addr(),
                Step::Init(c) => Arc::as_ptr(&c.leaf) as usize,
                Step::Output(_) | Step::Flush => unreachable!("never queued"),
            };
            if self.busy.contains(&leaf) {
                aside.push_back(job);
                continue;
            }
            if let Err(e) = self.run_job(job) {
                self.failed.get_or_insert(e);
            }
        }
        while let Some(job) = aside.pop_back() {
            self.queue.push_front(job);
        }
        self.nest -= 1;
        self.burst = 0;
    }
}
