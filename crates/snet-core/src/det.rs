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
use crate::record::{Rec, Record};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// A record's causal context: the innermost frame, or `None` outside every
/// deterministic combinator.
pub type Ctx = Option<Arc<Frame>>;

/// One input record's causal frame inside a deterministic combinator instance.
pub struct Frame {
    seq: u64,
    count: AtomicUsize,
    parent: Ctx,
    /// Set at creation, or right after the owner is built (a creation frame).
    owner: OnceLock<Arc<Inst>>,
    /// A distributed run: this frame stands for a frame of another node (see
    /// [`Proxy`]); it has no owner and no parent here.
    pub(crate) proxy: Option<Proxy>,
}

/// A frame of another node, on a node that records of it reached (spec §16: the
/// deterministic combinators across nodes). The node that sent the records *lent* the
/// frame: it keeps a unit for them until they are repaid. The proxy counts the records
/// here like a frame; when its count reaches zero it repays what it owes to its lender
/// (`repay`), which may complete the lender's frame (or proxy) in turn. A record that
/// reaches the frame's own node joins the real frame there, which repays its lender at
/// once. Lenders are never in a cycle: a proxy repays only its own lender.
pub(crate) struct Proxy {
    /// The real frame: its node and its loan number there.
    pub(crate) real: (u32, u64),
    /// Who lent the units this proxy owes: node and loan number.
    pub(crate) lender: (u32, u64),
    /// Units received from the lender (repaid together at completion).
    pub(crate) owed: std::sync::atomic::AtomicU64,
    /// Sends the repayment: (lender node, loan, units).
    pub(crate) repay: Arc<dyn Fn(u32, u64, u64) + Send + Sync>,
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
            owner: OnceLock::from(owner),
            proxy: None,
        })
    }

    /// A proxy of a frame of another node with one unit (the record that arrived).
    pub(crate) fn proxy(proxy: Proxy) -> Arc<Frame> {
        Arc::new(Frame {
            seq: 0,
            count: AtomicUsize::new(1),
            parent: None,
            owner: OnceLock::new(),
            proxy: Some(proxy),
        })
    }

    /// Adds one unit unless the frame is complete (count 0): false then.
    pub(crate) fn try_add(&self) -> bool {
        self.count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| {
                (c > 0).then_some(c + 1)
            })
            .is_ok()
    }

    /// A frame whose owner is still being built; [`Frame::set_owner`] must follow
    /// before any unit of the frame is released.
    pub(crate) fn unowned(seq: u64, parent: Ctx) -> Arc<Frame> {
        Arc::new(Frame {
            seq,
            count: AtomicUsize::new(0),
            parent,
            owner: OnceLock::new(),
            proxy: None,
        })
    }

    /// Sets the owner of a frame made by [`Frame::unowned`].
    pub(crate) fn set_owner(&self, owner: Arc<Inst>) {
        let _ = self.owner.set(owner);
    }

    /// The number of live units the frame covers.
    pub(crate) fn count(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// The instance whose collector this frame belongs to.
    pub(crate) fn owner(&self) -> &Arc<Inst> {
        self.owner
            .get()
            .expect("frame owner is set when its instance is built")
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
    /// The record (in a slot of its own: a token moves as two pointers).
    pub rec: Rec,
    /// Its causal context.
    pub ctx: Ctx,
}

impl Token {
    /// A token outside every deterministic combinator.
    pub fn new(rec: Record) -> Token {
        Token {
            rec: Rec::new(rec),
            ctx: None,
        }
    }
}

/// Adds `n` live records to `ctx`'s frame.
pub fn ctx_add(ctx: &Ctx, n: usize) {
    if let Some(f) = ctx {
        // Pairs with the AcqRel decrement in `ctx_release`.
        f.count.fetch_add(n, Ordering::AcqRel);
    }
}

/// Instances whose collectors received records to emit: the caller must drain them
/// (see [`Collector::start_drain`]).
pub type Released = Vec<Arc<Inst>>;

/// Removes one live record from `ctx`; completes frames that reach zero. Collectors
/// that released buffered records are pushed onto `released`.
pub fn ctx_release(ctx: &Ctx, released: &mut Released) {
    let mut cur = ctx.clone();
    while let Some(f) = cur {
        // AcqRel: the thread reaching zero sees all earlier collector updates.
        if f.count.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        if let Some(p) = &f.proxy {
            // A proxy is done here: repay the lender (which completes the rest).
            (p.repay)(p.lender.0, p.lender.1, p.owed.load(Ordering::Acquire));
            return;
        }
        if f.owner().collector_complete(f.seq) {
            released.push(f.owner().clone());
        }
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
///
/// Records allowed to leave go to an output queue that exactly one thread at a time
/// drains (walking each record to where it lands before taking the next), so the
/// order decided here is the order seen downstream even when several threads hand
/// records to the collector:
///
/// 1. under the lock, a record is queued (`accept`, `complete`);
/// 2. the thread then calls `start_drain`; if another thread is draining it returns
///    false and the thread leaves (the drainer will see the record: step 3 re-checks
///    under the lock);
/// 3. the drainer pops records one by one (`pop_out`), walking each fully (and telling
///    the engine to deliver it, `Step::Flush`, before the next pop); when the
///    queue is empty `pop_out` clears the draining flag under the same lock, so a
///    record queued after that point finds no drainer and its thread drains it.
#[derive(Debug)]
pub struct Collector {
    mode: CollectorMode,
    next_seq: u64,
    head: u64,
    done: BTreeSet<u64>,
    buffer: BTreeMap<u64, Vec<Token>>,
    out: std::collections::VecDeque<Token>,
    draining: bool,
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
            out: std::collections::VecDeque::new(),
            draining: false,
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

    /// A record of input `seq` leaves: queued for output if it may leave now, else
    /// buffered. Returns true if the output queue grew.
    pub fn accept(&mut self, seq: u64, tok: Token) -> bool {
        if seq <= self.head {
            self.out.push_back(tok);
            true
        } else {
            self.buffer.entry(seq).or_default().push(tok);
            false
        }
    }

    /// Input `seq` is complete; records that may now leave are queued, in order.
    /// Returns true if the output queue grew.
    pub fn complete(&mut self, seq: u64) -> bool {
        self.done.insert(seq);
        let before = self.out.len();
        while self.done.remove(&self.head) {
            self.head += 1;
            if let Some(v) = self.buffer.remove(&self.head) {
                self.out.extend(v);
            }
        }
        self.out.len() > before
    }

    /// Claims the right to drain the output queue; false if another thread has it.
    pub fn start_drain(&mut self) -> bool {
        !std::mem::replace(&mut self.draining, true)
    }

    /// The next record to emit; `None` ends the drain (clears the claim).
    pub fn pop_out(&mut self) -> Option<Token> {
        let t = self.out.pop_front();
        if t.is_none() {
            self.draining = false;
        }
        t
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
        let n = |t: Token| t.rec.tag(crate::Label::tag("n"));
        assert!(!c.accept(s2, t(2)));
        assert!(!c.accept(s1, t(1)));
        assert!(c.accept(s0, t(0)));
        assert!(c.start_drain());
        assert!(!c.start_drain(), "one drainer at a time");
        assert_eq!(c.pop_out().map(n), Some(Some(0)));
        assert!(c.pop_out().is_none());
        assert!(!c.complete(s2));
        assert!(c.complete(s0)); // input 1 is now head: its buffered record leaves
        assert!(c.start_drain());
        assert_eq!(c.pop_out().map(n), Some(Some(1)));
        assert!(c.pop_out().is_none());
        assert!(c.complete(s1)); // input 2 was already complete: released too
        assert_eq!(c.buffered(), 0);
    }
}
