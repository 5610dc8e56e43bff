//! Causal contexts and collectors: the ordering guarantee of the deterministic
//! combinators (spec §7.14) and the initialiser gate (spec §7.4).
//!
//! # The protocol
//!
//! Every record inside a deterministic combinator instance `D` carries a [`Frame`]
//! `(D, seq)` naming the input record `x_seq` that caused it. A frame counts the live
//! records it covers plus its live child frames (nested deterministic combinators):
//!
//! 1. entering `D`: a new frame with count 1 replaces the record's context (the parent
//!    loses the record and gains the frame: no change);
//! 2. an entity that consumes one record and produces `k` adds `k` then removes 1
//!    (a synchrocell storing a record removes 1; a merged record is caused by the
//!    completing record, spec §7.14);
//! 3. leaving `D`: the parent gains the record, the record is handed to `D`'s
//!    collector, then the frame loses it;
//! 4. a frame whose count reaches 0 is complete: its collector advances past it and
//!    releases records buffered for later inputs, and the parent loses the frame.
//!
//! The collector emits records of the oldest incomplete input at once and buffers the
//! others, so all records caused by `x_i` leave before any caused by `x_j`, `i < j`,
//! and records of one input keep their production order.
//!
//! Memory ordering: counts use `AcqRel` so that the thread that sees a count reach zero
//! also sees every collector update made by the threads that decremented before it.

use crate::inst::Inst;
use crate::record::Record;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A record's causal context: the innermost frame, or `None` outside every
/// deterministic combinator.
pub type Ctx = Option<Arc<Frame>>;

/// One input record's causal frame inside a deterministic combinator instance.
pub struct Frame {
    seq: u64,
    count: AtomicUsize,
    parent: Ctx,
    owner: Arc<Inst>,
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frame")
            .field("seq", &self.seq)
            .field("count", &self.count.load(Ordering::Relaxed))
            .finish()
    }
}

impl Frame {
    /// A new frame with count `count` under `parent` (the caller moves `count` units
    /// from the parent into the frame; see the module protocol).
    pub(crate) fn new(seq: u64, count: usize, parent: Ctx, owner: Arc<Inst>) -> Arc<Frame> {
        Arc::new(Frame {
            seq,
            count: AtomicUsize::new(count),
            parent,
            owner,
        })
    }

    /// The instance whose collector this frame belongs to.
    pub(crate) fn owner(&self) -> &Arc<Inst> {
        &self.owner
    }

    /// The enclosing context.
    pub(crate) fn parent(&self) -> &Ctx {
        &self.parent
    }

    /// Sequence number of the causing input within the owner.
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }
}

/// A record together with its causal context: the unit engines move around.
#[derive(Debug)]
pub struct Token {
    /// The record.
    pub rec: Record,
    /// Its causal context.
    pub ctx: Ctx,
}

impl Token {
    /// A token outside every deterministic combinator.
    pub fn new(rec: Record) -> Token {
        Token { rec, ctx: None }
    }
}

/// Adds `n` live records to `ctx`'s frame.
pub fn ctx_add(ctx: &Ctx, n: usize) {
    if let Some(f) = ctx {
        // Pairs with the AcqRel decrement in `ctx_release`.
        f.count.fetch_add(n, Ordering::AcqRel);
    }
}

/// Records released by collectors when frames completed: each must continue by leaving
/// the given instance.
pub type Released = Vec<(Arc<Inst>, Token)>;

/// Removes one live record from `ctx`; completes frames that reach zero, pushing the
/// records their collectors release onto `released` (in emission order).
pub fn ctx_release(ctx: &Ctx, released: &mut Released) {
    let mut cur = ctx.clone();
    while let Some(f) = cur {
        // AcqRel: the thread reaching zero sees all earlier collector updates.
        if f.count.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let out = f.owner.collector_complete(f.seq);
        released.extend(out.into_iter().map(|t| (f.owner.clone(), t)));
        cur = f.parent.clone();
    }
}

/// How a collector orders what leaves its instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectorMode {
    /// `||`, `**`, `!!`: records of input `i` leave before those of input `j > i`.
    Ordered,
    /// `|` with initialiser branches: data records wait until the initialisers'
    /// records (sequence 0) have all left.
    InitGate,
}

/// The merge point of a combinator instance that must order its output.
#[derive(Debug)]
pub struct Collector {
    mode: CollectorMode,
    next_seq: u64,
    head: u64,
    done: BTreeSet<u64>,
    buffer: BTreeMap<u64, Vec<Token>>,
}

impl Collector {
    /// A new collector; sequence numbers start at 0.
    pub fn new(mode: CollectorMode) -> Collector {
        Collector {
            mode,
            next_seq: 0,
            head: 0,
            done: BTreeSet::new(),
            buffer: BTreeMap::new(),
        }
    }

    /// The collector's mode.
    pub fn mode(&self) -> CollectorMode {
        self.mode
    }

    /// Allocates the sequence number of the next entering input.
    pub fn next_seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    /// A record of input `seq` leaves: returns it if it may leave now, else buffers it.
    pub fn accept(&mut self, seq: u64, tok: Token) -> Option<Token> {
        if seq <= self.head {
            Some(tok)
        } else {
            self.buffer.entry(seq).or_default().push(tok);
            None
        }
    }

    /// Input `seq` is complete; returns the records that may now leave, in order.
    pub fn complete(&mut self, seq: u64) -> Vec<Token> {
        self.done.insert(seq);
        let mut out = Vec::new();
        while self.done.remove(&self.head) {
            self.head += 1;
            if let Some(v) = self.buffer.remove(&self.head) {
                out.extend(v);
            }
        }
        out
    }

    /// Number of records held back.
    pub fn buffered(&self) -> usize {
        self.buffer.values().map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_inputs_wait_for_earlier_ones() {
        let mut c = Collector::new(CollectorMode::Ordered);
        let (s0, s1, s2) = (c.next_seq(), c.next_seq(), c.next_seq());
        let t = |n: i32| Token::new(Record::new().with_tag("n", n));
        assert!(c.accept(s2, t(2)).is_none());
        assert!(c.accept(s1, t(1)).is_none());
        assert!(c.accept(s0, t(0)).is_some());
        assert!(c.complete(s2).is_empty());
        let out = c.complete(s0);
        assert_eq!(out.len(), 1); // input 1 now head: its buffered record leaves
        assert_eq!(out[0].rec.tag(crate::Label::tag("n")), Some(1));
        let out = c.complete(s1);
        assert_eq!(out.len(), 1);
        assert_eq!(c.buffered(), 0);
    }
}
