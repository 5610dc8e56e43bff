//! The `seq` reference engine: one thread, one FIFO queue of pending box invocations.
//! It is the executable meaning of the spec and the oracle of the agreement tests.

use crate::boxes::BoxTable;
use crate::det::Token;
use crate::engine::{Engine, RecordSink, RecordSource, RunOptions, RunStats};
use crate::error::RunError;
use crate::net::Net;
use crate::walk::{Pos, Step, Walker};
use std::cell::RefCell;
use std::collections::VecDeque;
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
        _opts: &RunOptions,
    ) -> Result<RunStats, RunError> {
        let start = Instant::now();
        let w = Walker::new(net, boxes)?;
        // Pending box and initialiser steps, queued as they are (re-wrapping each in a
        // job type of its own cost a copy of the record per firing).
        let queue: RefCell<VecDeque<Step>> = RefCell::new(VecDeque::new());
        let mut out_err: Option<RunError> = None;
        let mut sink = |s: Step| match s {
            Step::Box(..) | Step::Init(_) => queue.borrow_mut().push_back(s),
            Step::Flush => {}
            Step::Output(t) => {
                w.counters.output();
                if out_err.is_none() {
                    if let Err(e) = output.write_record(t.rec) {
                        out_err = Some(e);
                    }
                }
            }
        };
        let root = w.create_root(&mut sink);
        // Run all pending box work after every input record (FIFO).
        loop {
            loop {
                let job = queue.borrow_mut().pop_front();
                match job {
                    None => break,
                    Some(Step::Box(leaf, tok)) => {
                        w.run_box(&leaf, Some(tok.rec), tok.ctx, &mut sink)?
                    }
                    Some(Step::Init(c)) => w.run_box(&c.leaf, None, c.ctx, &mut sink)?,
                    Some(Step::Output(_) | Step::Flush) => unreachable!("never queued"),
                }
            }
            let Some(rec) = input.next_record()? else {
                break;
            };
            w.counters.input();
            w.walk(Pos::Enter(root.clone()), Token::new(rec), &mut sink)?;
        }
        if let Some(e) = out_err.take() {
            return Err(e);
        }
        let discarded = w.discard_stored(&root);
        let mut stats = RunStats::from_counters("seq", &w.counters, w.insts.get());
        stats.discarded_in_sync = discarded as u64;
        stats.wall = start.elapsed();
        Ok(stats)
    }
}
