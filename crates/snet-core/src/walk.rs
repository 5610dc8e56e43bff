//! Record walking: moving a record through the static graph from one box to the next.
//!
//! Everything except boxes is handled inline as a record walks: routing at `|`, `*`,
//! `!`, `\`, filters, synchrocells and collectors. A walk ends when the record reaches
//! a box (the engine queues it there), the global output, or disappears (consumed by a
//! filter, stored in a synchrocell). Walks are iterative (an explicit stack) and depth
//! first in emission order, so order along every FIFO path is kept (spec §7.1).

use crate::box_call;
use crate::boxes::BoxTable;
use crate::det::{ctx_add, ctx_release, Frame, Released, Token};
use crate::engine::Counters;
use crate::error::RunError;
use crate::filter;
use crate::inst::{lock, InitCall, Inst, InstCounter, InstKind, PathStep, Place, Slot};
use crate::net::{GuardedPattern, Net, NodeId, NodeKind};
use crate::pattern;
use crate::record::{Rec, Record};
use crate::sync_cell::SyncOutcome;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// Where a walking record is.
#[derive(Debug, Clone)]
pub enum Pos {
    /// About to enter an instance.
    Enter(Arc<Inst>),
    /// Just left an instance.
    Leave(Arc<Inst>),
}

/// A box instance of a walker's instance tree, borrowed for as long as the walker is:
/// how a walk hands a record's next box to an engine ([`Step::Box`]) without updating
/// the instance's reference count, a cache line every worker on a pipeline would
/// otherwise write at every hop.
///
/// Why the borrow is sound: the walker owns the root of its tree from
/// [`Walker::create_root`] until [`Walker::finish`] (which takes `&mut self`, so no
/// `BoxRef` is left), and a box instance, once created, stays in the tree until the
/// tree is freed. Every instance is owned by its parent from creation: the operands of
/// a composition by it, a star's stages each by the one before (the first by the
/// star), a split's replicas by the split, and a box's serial successor also by the
/// box. The one exception, a star dropping a prefix of stages that have become
/// identities (`Walker::next_stage`), drops single cells that are identities or fired
/// synchrocells, never boxes. A `BoxRef` is only made of an instance of the walker's
/// own tree while the walker holds it (checked: `Walker::box_ref`).
#[derive(Clone, Copy)]
pub struct BoxRef<'w>(&'w Inst);

impl<'w> BoxRef<'w> {
    /// The instance.
    #[inline]
    pub fn inst(self) -> &'w Inst {
        self.0
    }

    /// The instance's address (a key for it while the run lasts).
    #[inline]
    pub fn addr(self) -> usize {
        std::ptr::from_ref(self.0) as usize
    }

    /// A counted reference to the instance.
    pub fn arc(self) -> Arc<Inst> {
        let p = std::ptr::from_ref(self.0);
        // SAFETY: every instance is allocated in an `Arc` (`Inst::create` is the only
        // constructor), and this one is alive with a count of at least one, held by the
        // tree, for 'w (see the type's doc); the new count is owned by the result.
        unsafe {
            Arc::increment_strong_count(p);
            Arc::from_raw(p)
        }
    }
}

impl std::ops::Deref for BoxRef<'_> {
    type Target = Inst;
    #[inline]
    fn deref(&self) -> &Inst {
        self.0
    }
}

impl std::fmt::Debug for BoxRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.0, f)
    }
}

/// Where a walk ended, for the engine to act on; `'w` is the walker's borrow.
#[derive(Debug)]
pub enum Step<'w> {
    /// The record must be handled by this box leaf.
    Box(BoxRef<'w>, Token),
    /// An initialiser box must be invoked (its composition was just created).
    Init(InitCall),
    /// The record left the entry network.
    Output(Token),
    /// Deliver every step handed over so far before the walk goes on. Sent before a
    /// record is taken out of a collector's output queue: records leave a collector in
    /// its order only if each reaches its next entity before the next one is taken (or
    /// the drain ends and another thread takes the queue over). Engines that deliver
    /// each step at once ignore it; one that holds a step back to continue a walk there
    /// (front's record walking) must deliver it now.
    Flush,
}

/// The shared, engine-independent part of a run: the net, its boxes and the counters.
pub struct Walker<'a> {
    /// The program.
    pub net: &'a Net,
    /// Box implementations.
    pub boxes: &'a BoxTable,
    /// Firing plans by box index (made once, no lookup per call).
    plans: Vec<box_call::FiringPlan>,
    /// Star exit tests by node (compiled once; `Guarded` for nodes that are not stars).
    exit_tests: Vec<pattern::PatternTest>,
    /// Compiled filters by node (`None` for other nodes, and for a filter reading more
    /// tags than a plan's registers hold).
    filter_plans: Vec<Option<filter::FilterPlan>>,
    /// Compiled routing of parallel compositions by node (`None` for other nodes).
    route_tables: Vec<Option<pattern::RouteTable>>,
    /// Instance creation counter.
    pub insts: InstCounter,
    /// Run counters.
    pub counters: Counters,
    /// The distribution layer of a distributed run (spec §16); `None` in one process.
    dist: Option<Arc<dyn Dist>>,
    /// This node, and the place of the root (every home is 0 without `dist`).
    me: u32,
    /// A distributed run with more than one node (records may hop).
    distributed: bool,
    root_place: Place,
    /// Instances named by records that arrived from other nodes, by path.
    resolved: std::sync::Mutex<Resolved>,
    /// Frames lent to other nodes and proxies of theirs.
    loans: std::sync::Mutex<Loans>,
    /// The run's observers (spec §13.1), opened when the tree is created (node 0 of
    /// a distributed run opens the targets; the other nodes forward their reports).
    observers: std::sync::OnceLock<Arc<crate::observe::Observers>>,
    /// The root of the instance tree, from `create_root` to `finish` (see [`BoxRef`]).
    root: std::sync::OnceLock<Arc<Inst>>,
}

/// What the semantics core needs from the distribution layer of a distributed run
/// (spec §16): this node's number, and a way to send things to another node. A record
/// whose walk reaches an instance homed elsewhere leaves the walk there (a "hop") and
/// continues on the instance's home node, which finds the instance by its
/// [`PathStep`] path (creating it, and what lies above it, if it is not there yet).
pub trait Dist: Send + Sync {
    /// This node's number.
    fn me(&self) -> u32;
    /// Nodes in the run.
    fn nodes(&self) -> u32;
    /// Sends `a` to node `to` (FIFO per pair of nodes).
    fn send(&self, to: u32, a: Arrival) -> Result<(), RunError>;
    /// The engine just became idle (its last queued or running work ended): a reader
    /// blocked in the node's source looks again at the termination protocol (no
    /// timeouts: spec §16.5).
    fn became_idle(&self);
    /// The engine is stopping on a failure of its own: a reader blocked in the node's
    /// source returns soon (the engine then ends with its error, which the node tells
    /// every other node).
    fn interrupt(&self);
    /// A node other than 0: sends observer `oid`'s report `doc` to node 0, which
    /// writes it ([`Dist::attach_observers`]). The default drops it.
    fn observe(&self, oid: u32, doc: Vec<u8>) {
        let _ = (oid, doc);
    }
    /// Node 0: the run's observers, for the reports other nodes forward. The default
    /// ignores them.
    fn attach_observers(&self, observers: Arc<crate::observe::Observers>) {
        let _ = observers;
    }
}

/// The causal context a record carries to another node (inside deterministic
/// combinators, spec §7.14 across nodes): the real frame (node and loan number there)
/// and the loan the record's unit is part of (see `det::Proxy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteCtx {
    /// The real frame's node and its loan number there.
    pub real: (u32, u64),
    /// The lender: node and loan number.
    pub lender: (u32, u64),
}

/// What arrives from another node.
#[derive(Debug)]
pub enum ArrivalKind {
    /// A record continuing its walk.
    Record(Record),
    /// Create the instance (an initialiser homed here belongs to a composition
    /// created there, spec §7.4).
    Touch,
    /// Invoke the initialiser box at the path.
    Init,
    /// Units of loan `loan` (of this node) repaid.
    Repay {
        /// The loan.
        loan: u64,
        /// Units repaid.
        units: u64,
    },
}

/// Something arriving from another node, and where it continues (see [`Dist`]).
#[derive(Debug)]
pub struct Arrival {
    /// The instance's path.
    pub path: Vec<PathStep>,
    /// Continue leaving (true) or entering (false) the instance.
    pub leave: bool,
    /// What arrived.
    pub what: ArrivalKind,
    /// The causal context of a record or initialiser call inside deterministic
    /// combinators.
    pub ctx: Option<RemoteCtx>,
}

impl std::fmt::Debug for Loans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loans")
            .field("open", &self.out.len())
            .field("proxies", &self.proxies.len())
            .finish()
    }
}

impl Arrival {
    /// `units` of loan `loan` of the receiving node repaid (no path: no instance).
    fn repay(loan: u64, units: u64) -> Arrival {
        Arrival {
            path: Vec::new(),
            leave: false,
            what: ArrivalKind::Repay { loan, units },
            ctx: None,
        }
    }
}

/// Where a record leaving `inst` goes when `inst` is an operand of a serial
/// composition: into the right operand, or out of the composition (`None` otherwise).
fn serial_step(inst: &Arc<Inst>) -> Option<Pos> {
    let parent = inst.parent()?;
    match (&parent.kind, inst.slot) {
        (InstKind::Serial(_, b), Slot::Left) => Some(Pos::Enter(b.clone())),
        (InstKind::Serial(..), Slot::Right) => Some(Pos::Leave(parent)),
        _ => None,
    }
}

/// Instances named by records that arrived from other nodes, by path (see
/// [`Walker::arrival`]), swept of ended instances as it grows.
#[derive(Debug, Default)]
struct Resolved {
    map: std::collections::HashMap<Vec<PathStep>, std::sync::Weak<Inst>>,
    /// The size at which the next sweep happens.
    sweep_at: usize,
}

/// Frames of this node lent to others (see `det::Proxy`), and proxies of others'.
#[derive(Default)]
struct Loans {
    /// Loan number → the frame (or proxy) lent and the units outstanding.
    out: std::collections::HashMap<u64, (Arc<crate::det::Frame>, u64)>,
    /// Frame address → its open loan (the frame is held in `out`, so the address is
    /// not reused while the entry exists).
    by_frame: std::collections::HashMap<usize, u64>,
    next: u64,
    /// Proxies here, by lender.
    proxies: std::collections::HashMap<(u32, u64), std::sync::Weak<crate::det::Frame>>,
}

impl std::fmt::Debug for Walker<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Walker")
            .field("entry", &self.net.entry)
            .field("counters", &self.counters)
            .finish()
    }
}

impl<'a> Walker<'a> {
    /// A walker for `net` with `boxes`. Fails if a box of the net is not bound.
    pub fn new(net: &'a Net, boxes: &'a BoxTable) -> Result<Walker<'a>, RunError> {
        let mut plans = Vec::with_capacity(net.boxes.len());
        for b in &net.boxes {
            match boxes.get(&b.name) {
                Some(f) => plans.push(box_call::FiringPlan::new(b, f.clone())),
                None => {
                    return Err(RunError::new(
                        format!("box `{}`", b.name),
                        None,
                        "no implementation is bound to this box",
                    ))
                }
            }
        }
        let exit_tests = net
            .nodes
            .iter()
            .map(|n| match &n.kind {
                NodeKind::Star { exits, .. } => pattern::PatternTest::new(exits),
                _ => pattern::PatternTest::Guarded,
            })
            .collect();
        let filter_plans = net
            .nodes
            .iter()
            .map(|n| match &n.kind {
                NodeKind::Filter(f) => filter::FilterPlan::new(f),
                _ => None,
            })
            .collect();
        let route_tables = net
            .nodes
            .iter()
            .map(|n| match &n.kind {
                NodeKind::Parallel { routes, .. } => pattern::RouteTable::new(routes),
                _ => None,
            })
            .collect();
        Ok(Walker {
            net,
            boxes,
            plans,
            exit_tests,
            filter_plans,
            route_tables,
            insts: InstCounter::default(),
            counters: Counters::default(),
            dist: None,
            me: 0,
            distributed: false,
            root_place: Place::SINGLE,
            resolved: Default::default(),
            loans: Default::default(),
            observers: std::sync::OnceLock::new(),
            root: std::sync::OnceLock::new(),
        })
    }

    /// The distribution layer of a distributed run (`None` in one process).
    pub fn dist(&self) -> Option<&Arc<dyn Dist>> {
        self.dist.as_ref()
    }

    /// Makes this a walker of node `dist.me()` of a distributed run (before the root is
    /// created). Fails if a static placement names a node the run does not have, or
    /// the program uses what the distributed run cannot do yet.
    pub fn set_dist(&mut self, dist: Option<Arc<dyn Dist>>) -> Result<(), RunError> {
        let Some(d) = dist else {
            return Ok(());
        };
        let nodes = d.nodes().max(1);
        // With one node, every placement means node 0 (spec §16.2 as the guide settles
        // it: a program placed for a cluster runs whole on one node).
        for (n, loc) in self.net.placements().into_iter().filter(|_| nodes > 1) {
            if n >= nodes {
                return Err(RunError::new(
                    format!("placement `@ {n}` at {loc}"),
                    None,
                    format!(
                        "node {n} does not exist: the run has {nodes} node{} (0..{})",
                        if nodes == 1 { "" } else { "s" },
                        nodes - 1
                    ),
                ));
            }
        }
        if nodes > 1 {
            crate::place_check::check(self.net)?;
        }
        self.me = d.me();
        self.distributed = nodes > 1;
        self.root_place = Place { home: 0, nodes };
        self.dist = Some(d);
        Ok(())
    }

    /// The node this walker runs on (0 in one process).
    pub fn me(&self) -> u32 {
        self.me
    }

    /// Sends `tok`, at `pos`, on to node `to`, the home of what it reaches there (a
    /// hop; kept out of the walk's loop).
    #[cold]
    #[inline(never)]
    fn hop(&self, to: u32, pos: Pos, tok: Token) -> Result<(), RunError> {
        let leave = matches!(pos, Pos::Leave(_));
        let (Pos::Enter(inst) | Pos::Leave(inst)) = &pos;
        let Some(d) = &self.dist else {
            return Err(self.err(inst, &tok.rec, "internal error: a hop without distribution"));
        };
        let Some(path) = inst.path() else {
            return Err(self.err(inst, &tok.rec, "internal error: the instance left the tree"));
        };
        let ctx = tok.ctx.as_ref().map(|f| self.lend(f));
        self.counters.sent_away();
        d.send(
            to,
            Arrival {
                path,
                leave,
                what: ArrivalKind::Record(tok.rec.into_record()),
                ctx,
            },
        )
    }

    /// Lends frame `f` (real or a proxy) for one record leaving this node: the first
    /// open loan of a frame keeps the record's unit in the frame for the loan; a
    /// further one gives the record's unit back (the loan's unit holds the frame).
    fn lend(&self, f: &Arc<crate::det::Frame>) -> RemoteCtx {
        let mut l = lock(&self.loans);
        let key = Arc::as_ptr(f) as usize;
        let (id, release) = match l.by_frame.get(&key).copied() {
            Some(id) => {
                if let Some(e) = l.out.get_mut(&id) {
                    e.1 += 1;
                }
                (id, true)
            }
            None => {
                let id = l.next;
                l.next += 1;
                l.out.insert(id, (f.clone(), 1));
                l.by_frame.insert(key, id);
                (id, false)
            }
        };
        drop(l);
        if release {
            // Cannot complete the frame: the loan's unit holds it.
            let mut released = Released::new();
            ctx_release(&Some(f.clone()), &mut released);
        }
        let real = match &f.proxy {
            Some(p) => p.real,
            None => (self.me, id),
        };
        RemoteCtx {
            real,
            lender: (self.me, id),
        }
    }

    /// The context of something that arrived with `rc`: the real frame if it is this
    /// node's (its lender is repaid at once: the frame covers the record now), else a
    /// proxy owing the lender.
    fn adopt<'w>(
        &'w self,
        rc: RemoteCtx,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<crate::det::Ctx, RunError> {
        if rc.real.0 == self.me {
            let f = lock(&self.loans).out.get(&rc.real.1).map(|e| e.0.clone());
            let Some(f) = f else {
                return Err(RunError::new(
                    "distributed run",
                    None,
                    format!(
                        "a record arrived for frame {} of this node, which is not lent",
                        rc.real.1
                    ),
                ));
            };
            ctx_add(&Some(f.clone()), 1);
            self.repay(rc.lender, 1, sink)?;
            return Ok(Some(f));
        }
        let mut l = lock(&self.loans);
        if let Some(p) = l.proxies.get(&rc.lender).and_then(std::sync::Weak::upgrade) {
            if p.try_add() {
                if let Some(px) = &p.proxy {
                    px.owed.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                }
                return Ok(Some(p));
            }
        }
        let d = self.dist.clone();
        let me = self.me;
        let p = crate::det::Frame::proxy(crate::det::Proxy {
            real: rc.real,
            lender: rc.lender,
            owed: std::sync::atomic::AtomicU64::new(1),
            repay: Arc::new(move |node, loan, units| {
                if let Some(d) = &d {
                    if node != me {
                        let _ = d.send(node, Arrival::repay(loan, units));
                    }
                }
            }),
        });
        l.proxies.insert(rc.lender, Arc::downgrade(&p));
        Ok(Some(p))
    }

    /// Repays `units` of loan `lender` (here or on its node).
    fn repay<'w>(
        &'w self,
        lender: (u32, u64),
        units: u64,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(), RunError> {
        if lender.0 == self.me {
            return self.loan_returned(lender.1, units, sink);
        }
        match &self.dist {
            Some(d) => d.send(lender.0, Arrival::repay(lender.1, units)),
            None => Ok(()),
        }
    }

    /// `units` of loan `loan` came back: the last one gives the frame its unit back
    /// (which may complete it and release its collector's records, walked to `sink`).
    fn loan_returned<'w>(
        &'w self,
        loan: u64,
        units: u64,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(), RunError> {
        let done = {
            let mut l = lock(&self.loans);
            let last = match l.out.get_mut(&loan) {
                Some(e) => {
                    e.1 = e.1.saturating_sub(units);
                    e.1 == 0
                }
                None => false,
            };
            if last {
                let (f, _) = l.out.remove(&loan).expect("present");
                l.by_frame.remove(&(Arc::as_ptr(&f) as usize));
                Some(f)
            } else {
                None
            }
        };
        if let Some(f) = done {
            let mut released = Released::new();
            ctx_release(&Some(f), &mut released);
            if !released.is_empty() {
                let mut stack = WalkStack::default();
                push_drains(&mut stack, released);
                self.run_stack(&mut stack, sink)?;
            }
        }
        Ok(())
    }

    /// Delivers an initialiser call made where a composition was created: only the
    /// composition's home fires it (elsewhere the composition is a copy to route by,
    /// and its home is asked to create it, `touch`); the home runs it here or sends
    /// it, with its context, to the node of its box.
    fn init_step<'w>(
        &'w self,
        i: InitCall,
        touch: bool,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(), RunError> {
        if i.comp_home == self.me && i.leaf.home == self.me {
            sink(Step::Init(i));
            return Ok(());
        }
        let (Some(d), Some(path)) = (&self.dist, i.leaf.path()) else {
            return Ok(());
        };
        if i.comp_home != self.me {
            if touch {
                d.send(
                    i.comp_home,
                    Arrival {
                        path,
                        leave: false,
                        what: ArrivalKind::Touch,
                        ctx: None,
                    },
                )?;
            }
            return Ok(());
        }
        let ctx = i.ctx.as_ref().map(|f| self.lend(f));
        d.send(
            i.leaf.home,
            Arrival {
                path,
                leave: false,
                what: ArrivalKind::Init,
                ctx,
            },
        )
    }

    /// What arrived from another node, taken in: a record gives where it continues and
    /// its token; instance creations, initialiser calls and repayments are done here
    /// (their steps go to `sink`) and give `None`.
    pub fn arrival<'w>(
        &'w self,
        root: &Arc<Inst>,
        a: Arrival,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<Option<(Pos, Token)>, RunError> {
        if let ArrivalKind::Repay { loan, units } = a.what {
            self.loan_returned(loan, units, sink)?;
            return Ok(None);
        }
        let cached = lock(&self.resolved)
            .map
            .get(&a.path)
            .and_then(std::sync::Weak::upgrade);
        let inst = match cached {
            Some(i) => i,
            None => self.resolve(root, &a.path, sink)?,
        };
        let ctx = match a.ctx {
            Some(rc) => self.adopt(rc, sink)?,
            None => None,
        };
        match a.what {
            ArrivalKind::Record(rec) => {
                self.counters.arrived();
                let pos = if a.leave {
                    Pos::Leave(inst)
                } else {
                    Pos::Enter(inst)
                };
                Ok(Some((
                    pos,
                    Token {
                        rec: Rec::new(rec),
                        ctx,
                    },
                )))
            }
            ArrivalKind::Init => {
                sink(Step::Init(InitCall {
                    leaf: inst,
                    ctx,
                    comp_home: self.me,
                }));
                Ok(None)
            }
            ArrivalKind::Touch | ArrivalKind::Repay { .. } => Ok(None),
        }
    }

    /// [`Walker::arrival`], then the walk of a record on from where it continues: for
    /// engines that walk an arrival the way they walk an input record.
    pub fn walk_arrival<'w>(
        &'w self,
        root: &Arc<Inst>,
        a: Arrival,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(), RunError> {
        match self.arrival(root, a, sink)? {
            Some((pos, tok)) => self.walk(pos, tok, sink),
            // Instance creation, an initialiser call, a repayment.
            None => Ok(()),
        }
    }

    fn resolve<'w>(
        &'w self,
        root: &Arc<Inst>,
        path: &[PathStep],
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<Arc<Inst>, RunError> {
        let bad = || {
            RunError::new(
                "distributed run",
                None,
                format!("a record arrived for an instance that this program does not have ({path:?}): do all nodes run the same program?"),
            )
        };
        let mut cur = root.clone();
        for (at, step) in path.iter().enumerate() {
            let next = match (step, &cur.kind) {
                (PathStep::Left, InstKind::Serial(a, _)) => a.clone(),
                (PathStep::Right, InstKind::Serial(_, b)) => b.clone(),
                (PathStep::Branch(i), InstKind::Parallel { branches, .. }) => {
                    branches.get(*i as usize).ok_or_else(bad)?.clone()
                }
                (PathStep::Body, InstKind::Feedback(b)) => b.clone(),
                (PathStep::Stage(k), InstKind::Star { .. }) => {
                    // Start from the stage before, if it was resolved here before (a
                    // record crossing nodes once per stage resolves each stage once:
                    // linear in the stages, not quadratic), else from the first.
                    let before = k.checked_sub(1).and_then(|j| {
                        let mut key = path[..at].to_vec();
                        key.push(PathStep::Stage(j));
                        lock(&self.resolved)
                            .map
                            .get(&key)
                            .and_then(std::sync::Weak::upgrade)
                    });
                    let mut s = self.arrival_stage(&cur, before.as_ref(), sink)?;
                    while (s.key() as u32) < *k {
                        s = self.arrival_stage(&cur, Some(&s), sink)?;
                    }
                    if s.key() as u32 != *k {
                        return Err(bad());
                    }
                    self.remember(&path[..=at], &s);
                    s
                }
                (PathStep::Replica(v), InstKind::Split { .. }) => {
                    // (Replicas are retired only in a run in one process.)
                    self.replica(&cur, *v, &None, sink)?.ok_or_else(bad)?
                }
                _ => return Err(bad()),
            };
            cur = next;
        }
        self.remember(path, &cur);
        Ok(cur)
    }

    /// Caches `inst` as the instance at `path`. Entries of instances that have ended
    /// are dropped whenever the cache has doubled since the last sweep (memory follows
    /// the live instances, not every instance a run ever resolved).
    fn remember(&self, path: &[PathStep], inst: &Arc<Inst>) {
        let mut r = lock(&self.resolved);
        r.map.insert(path.to_vec(), Arc::downgrade(inst));
        if r.map.len() >= r.sweep_at {
            r.map.retain(|_, w| w.strong_count() > 0);
            r.sweep_at = (2 * r.map.len()).max(1024);
        }
    }

    /// Ends a finished run's instance tree (`root`, the one [`Walker::create_root`]
    /// returned): drops the records left in waiting synchrocells (spec §7.6; the tree
    /// is walked only if the counters say some are left) and returns how many there
    /// were, then frees the tree (a large one off the
    /// caller's path). Takes `&mut self`: no [`BoxRef`] into the tree is left.
    pub fn finish(&mut self, root: Arc<Inst>) -> usize {
        let own = self.root.take();
        debug_assert!(own.as_ref().is_none_or(|r| Arc::ptr_eq(r, &root)));
        drop(own);
        let discarded = if self.counters.still_stored() == 0 {
            0
        } else {
            root.discard_stored()
        };
        crate::inst::free_tree(root, self.insts.get() as u64);
        discarded
    }

    /// Creates the root instance (once per walker); initialisers of its static part are
    /// sent to `sink`. The walker keeps the tree until [`Walker::finish`].
    pub fn create_root<'w>(&'w self, sink: &mut dyn FnMut(Step<'w>)) -> Arc<Inst> {
        self.observers.get_or_init(|| match &self.dist {
            Some(d) if self.distributed && self.me != 0 => {
                let d = d.clone();
                Arc::new(crate::observe::Observers::forwarding(
                    self.net,
                    Arc::new(move |oid, doc| d.observe(oid, doc)),
                ))
            }
            _ => {
                let o = Arc::new(crate::observe::Observers::open(self.net));
                if let Some(d) = self.dist.as_ref().filter(|_| self.distributed) {
                    d.attach_observers(o.clone());
                }
                o
            }
        });
        let mut inits = Vec::new();
        let root = Inst::create(
            self.net,
            self.net.root,
            std::sync::Weak::new(),
            Slot::Root,
            0,
            self.root_place,
            &None,
            &self.insts,
            &mut inits,
        );
        assert!(
            self.root.set(root.clone()).is_ok(),
            "internal error: a walker creates one instance tree"
        );
        for i in inits {
            // Every node creates the root: each fires the initialisers of the
            // compositions homed on it (no touches: every node has the root).
            let _ = self.init_step(i, false, sink);
        }
        root
    }

    /// `inst`, a box instance of this walker's tree, borrowed for as long as the walker
    /// (see [`BoxRef`]). Panics if `inst` is not one (an engine walking an instance of
    /// another walker's tree, or of this one after `finish`).
    #[inline]
    pub fn box_ref<'w>(&'w self, inst: &Arc<Inst>) -> BoxRef<'w> {
        assert!(
            inst.tree() == self.insts.tree() && self.root.get().is_some(),
            "internal error: an instance of another instance tree"
        );
        debug_assert!(matches!(inst.kind, InstKind::Box(..)));
        let p = std::ptr::from_ref::<Inst>(inst);
        // SAFETY: a box of this walker's tree (checked), held until `finish(&mut self)`.
        let r: &'w Inst = unsafe { &*p };
        // (A box instance stays in its tree as long as the tree lives, see `BoxRef`: it
        // outlives the borrow 'w of the walker, although the `Arc` it was reached
        // through may not.)
        BoxRef(r)
    }

    fn err(&self, inst: &Inst, rec: &Record, msg: impl Into<String>) -> RunError {
        self.err_at(inst.node, rec, msg)
    }

    fn err_at(&self, node: crate::net::NodeId, rec: &Record, msg: impl Into<String>) -> RunError {
        let n = self.net.node(node);
        RunError::new(
            format!("{} at {}", n.name, n.loc),
            Some(format!("{rec:?}")),
            msg,
        )
    }

    /// Invokes the box at `leaf` on `tok` (or an initialiser with `tok = None`), walking
    /// every emitted record onward at once; ends walks at `sink`.
    pub fn run_box<'w>(
        &'w self,
        leaf: BoxRef<'w>,
        input: Option<Rec>,
        ctx: crate::det::Ctx,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(), RunError> {
        let mut emit = |tok: Token, sink: &mut dyn FnMut(Step<'w>)| self.emit_on(leaf, tok, sink);
        self.invoke_box(&leaf, input, ctx, &mut emit, sink)
    }

    /// Walks a record that `leaf` emitted on: straight to the box it goes on to, if any
    /// (see [`Walker::straight_on`]), else from `leaf`.
    #[inline(always)]
    fn emit_on<'w>(
        &'w self,
        leaf: BoxRef<'w>,
        tok: Token,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(), RunError> {
        if let Some(next) = self.straight_on(&leaf, &tok)? {
            sink(Step::Box(self.box_ref(next), tok));
            return Ok(());
        }
        self.walk(Pos::Leave(leaf.arc()), tok, sink)
    }

    /// The box a record that `leaf` emitted goes straight on to, if any: the next box
    /// of a serial composition, or the next stage of a star whose operand is a box
    /// (`deep`: on into it without a reference to this one and a walk from it). Only in
    /// one process: a distributed run checks the homes on the way.
    #[inline(always)]
    fn straight_on<'i>(
        &self,
        leaf: &'i Inst,
        tok: &Token,
    ) -> Result<Option<&'i Arc<Inst>>, RunError> {
        if self.distributed {
            return Ok(None);
        }
        if let Some(next) = leaf.serial_successor() {
            if matches!(next.kind, InstKind::Box(..)) {
                return Ok(Some(next));
            }
            return Ok(None);
        }
        if let Slot::Stage(star) = leaf.slot {
            if let Ok(n) = self.leave_stage(star, leaf, &tok.rec)? {
                if matches!(n.kind, InstKind::Box(..)) {
                    return Ok(Some(n));
                }
            }
        }
        Ok(None)
    }

    /// [`Walker::run_box`] for an engine that continues a walk where the firing left
    /// it: the last record the box emitted, when it goes straight on to a box (the next
    /// box of a serial composition, or the next stage of a star of boxes) and the
    /// firing is outside every deterministic combinator, is returned with that box
    /// instead of going to `sink` as a `Step::Box` — the step the engine would have
    /// received last, handed over without a call through `sink`. Every other record
    /// goes to `sink` as with `run_box`, in emission order, before this returns.
    #[inline]
    pub fn fire<'w>(
        &'w self,
        leaf: BoxRef<'w>,
        input: Option<Rec>,
        ctx: crate::det::Ctx,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<Option<(BoxRef<'w>, Token)>, RunError> {
        let mut emit = |tok: Token, sink: &mut dyn FnMut(Step<'w>)| self.emit_on(leaf, tok, sink);
        // Every record but the last went on as it was emitted; the last one comes back
        // from the call.
        let had_input = input.is_some();
        let (emitted, held) = self.call(&leaf, input, &ctx, &mut emit, sink)?;
        let last = match held {
            Some(tok) => match self.straight_on(&leaf, &tok)? {
                Some(next) => Some((self.box_ref(next), tok)),
                None => {
                    self.walk(Pos::Leave(leaf.arc()), tok, sink)?;
                    None
                }
            },
            None => None,
        };
        self.counters.fired(had_input, emitted);
        if ctx.is_none() {
            // Outside every deterministic combinator: no frame to complete (and no
            // empty list to drop, which cost a call per firing).
            return Ok(last);
        }
        // The last record reaches its box before the records this firing releases
        // from collectors are walked, as every other one did.
        if let Some((next, tok)) = last {
            sink(Step::Box(next, tok));
        }
        self.release(&ctx, sink)?;
        Ok(None)
    }

    /// A record leaving stage `stage` of star node `star`: `Ok(next)` when it does not
    /// leave the star and the next stage exists and is not an identity (where it goes
    /// on), `Err(exit)` otherwise: the star decides, by the exit test's result. The
    /// exit test needs only the star's node, and the common case not the star instance
    /// itself, whose reference count every worker would otherwise update at every firing.
    fn leave_stage<'i>(
        &self,
        star: NodeId,
        stage: &'i Inst,
        rec: &Record,
    ) -> Result<Result<&'i Arc<Inst>, bool>, RunError> {
        let NodeKind::Star { exits, .. } = &self.net.node(star).kind else {
            unreachable!("stage of a non-star node")
        };
        let exit = self.exit_tests[star as usize]
            .matches(rec, exits)
            .map_err(|e| self.err_at(star, rec, e.to_string()))?;
        if !exit {
            if let Some(n) = stage.next_stage.get() {
                if !n.is_identity() {
                    return Ok(Ok(n));
                }
            }
        }
        Ok(Err(exit))
    }

    /// Like [`Walker::run_box`], but the emitted records are appended to `out` instead
    /// of walked: the caller walks them on later, from `Pos::Leave(leaf)`, in an order
    /// of its choosing (concurrent invocations of one box whose outputs must leave in
    /// stream order). Records that the input's completed causal frame releases from
    /// collectors are walked at once to `sink`.
    pub fn run_box_collect<'w>(
        &'w self,
        leaf: &Inst,
        input: Option<Rec>,
        ctx: crate::det::Ctx,
        out: &mut Vec<Token>,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(), RunError> {
        let mut emit = |tok: Token, _: &mut dyn FnMut(Step<'w>)| {
            out.push(tok);
            Ok(())
        };
        self.invoke_box(leaf, input, ctx, &mut emit, sink)
    }

    fn invoke_box<'w>(
        &'w self,
        leaf: &Inst,
        input: Option<Rec>,
        ctx: crate::det::Ctx,
        // What to do with each emitted record (walk it on, or keep it); walks go to
        // `sink`.
        emit: &mut impl FnMut(Token, &mut dyn FnMut(Step<'w>)) -> Result<(), RunError>,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(), RunError> {
        let had_input = input.is_some();
        let (emitted, last) = self.call(leaf, input, &ctx, emit, sink)?;
        if let Some(tok) = last {
            emit(tok, &mut *sink)?;
        }
        self.counters.fired(had_input, emitted);
        if ctx.is_none() {
            // Outside every deterministic combinator: no frame to complete (and no
            // empty list to drop, which cost a call per firing).
            return Ok(());
        }
        self.release(&ctx, sink)
    }

    /// Calls box `leaf` on `input` through its plan, every emitted record but the last to
    /// `emit` as it comes; returns the number emitted and the last one. The records a
    /// failing call emitted are not counted: the run stops with the call's error and
    /// reports no figures.
    #[inline(always)]
    fn call<'w>(
        &'w self,
        leaf: &Inst,
        input: Option<Rec>,
        ctx: &crate::det::Ctx,
        emit: &mut impl FnMut(Token, &mut dyn FnMut(Step<'w>)) -> Result<(), RunError>,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(usize, Option<Token>), RunError> {
        let Some(bi) = leaf.box_index() else {
            return Err(RunError::new(
                "engine",
                None,
                "run_box on a non-box instance",
            ));
        };
        let node = self.net.node(leaf.node);
        box_call::invoke_planned(&self.plans[bi], &node.loc, input, ctx, &mut |tok| {
            emit(tok, &mut *sink)
        })
    }

    /// Completes a firing's unit of causal context `ctx`: walks the records that
    /// collectors release because of it.
    fn release<'w>(
        &'w self,
        ctx: &crate::det::Ctx,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(), RunError> {
        let mut released = Released::new();
        ctx_release(ctx, &mut released);
        if released.is_empty() {
            return Ok(());
        }
        let mut stack = WalkStack::default();
        push_drains(&mut stack, released);
        self.run_stack(&mut stack, sink)
    }

    fn test(&self, inst: &Inst, rec: &Record, ps: &[GuardedPattern]) -> Result<bool, RunError> {
        pattern::matches_any(rec, ps).map_err(|e| self.err(inst, rec, e.to_string()))
    }

    /// A record that fails the exit patterns of `star` and that every instance of its
    /// operand passes on unchanged, whatever the instance's state, would go through new
    /// stages for ever (spec §7.10: such a program "simply loops"), taking memory for
    /// each; it is a run-time error instead (decisions 21 and 49). Checked before a new
    /// stage is looked for.
    fn check_star_progress(&self, star: &Inst, rec: &Record) -> Result<(), RunError> {
        let NodeKind::Star { body, exits, .. } = &self.net.node(star.node).kind else {
            return Ok(());
        };
        let mut why = Vec::new();
        if self.passes_unchanged(*body, rec, &mut why) {
            let pats: Vec<String> = exits.iter().map(|p| show_pattern(&p.labels)).collect();
            let mut msg = format!(
                "the record matches no exit pattern ({}) and every stage passes it on \
                 unchanged, so it would never leave the star",
                pats.join(", ")
            );
            for w in &why {
                msg.push_str("\n  ");
                msg.push_str(w);
            }
            msg.push_str(
                "\n  help: make a stage change such records (a branch that accepts them), \
                 give them an exit pattern they match, or keep them out of the star",
            );
            return Err(self.err(star, rec, msg));
        }
        Ok(())
    }

    /// True if every instance of `node` forwards `rec` unchanged in any state: the
    /// identity, an observer, a synchrocell none of whose patterns `rec` matches (§7.6
    /// step 2), a filter whose only output for `rec` is `rec` itself, a parallel
    /// composition whose routing (§7.8, a pure function of the record's labels) sends
    /// `rec` to such a branch, a split (of a record with its index tag) or a star (whose
    /// exit `rec` matches) around such an operand, or a serial composition of those.
    /// The steps that decide it are described in `why`.
    fn passes_unchanged(&self, node: NodeId, rec: &Record, why: &mut Vec<String>) -> bool {
        let n = self.net.node(self.net.unplaced(node).0);
        match &n.kind {
            NodeKind::Identity | NodeKind::Observe(_) => true,
            NodeKind::Sync(ps) => {
                let none = matches!(pattern::matches_any(rec, ps), Ok(false));
                if none {
                    why.push(format!(
                        "the synchrocell at {} passes it on (it matches none of its patterns)",
                        n.loc
                    ));
                }
                none
            }
            NodeKind::Filter(f) => {
                // Filters are pure: one output equal to the input is the same output
                // in every stage.
                let mut out = Vec::new();
                let same = crate::filter::apply(f, rec.clone(), &mut out).is_ok()
                    && out.len() == 1
                    && same_record(&out[0], rec);
                if same {
                    why.push(format!("the filter at {} gives it back unchanged", n.loc));
                }
                same
            }
            NodeKind::Serial(a, b) => {
                self.passes_unchanged(*a, rec, why) && self.passes_unchanged(*b, rec, why)
            }
            NodeKind::Parallel {
                branches, routes, ..
            } => {
                let data: Vec<usize> = (0..routes.len())
                    .filter(|i| !routes[*i].is_empty())
                    .collect();
                let b = if data.len() == 1 {
                    data[0]
                } else {
                    match pattern::best_branch(rec, routes) {
                        Some(b) => b,
                        None => return false,
                    }
                };
                if !self.passes_unchanged(branches[b], rec, why) {
                    return false;
                }
                let chosen = self.net.node(branches[b]);
                let mut w = format!(
                    "`{}` at {} sends it to branch {} ({} at {})",
                    n.name,
                    n.loc,
                    b + 1,
                    describe_node(chosen),
                    chosen.loc
                );
                let others: Vec<String> = data
                    .iter()
                    .filter(|i| **i != b)
                    .map(|i| {
                        let o = self.net.node(branches[*i]);
                        let mut s = format!(
                            "branch {} ({}) wants {}",
                            i + 1,
                            describe_node(o),
                            show_variants(&routes[*i])
                        );
                        if let Some(hint) = near_miss(rec, &routes[*i]) {
                            s.push_str(&format!(" and {hint}"));
                        }
                        s
                    })
                    .collect();
                if !others.is_empty() {
                    w.push_str(&format!("; {}", others.join("; ")));
                }
                why.push(w);
                true
            }
            NodeKind::Split { body, index, .. } => {
                rec.tag(*index).is_some() && self.passes_unchanged(*body, rec, why)
            }
            NodeKind::Star { exits, .. } => {
                // A record the inner star lets out at once; one it keeps is that
                // star's business (it stops the run itself if it can never leave).
                matches!(pattern::matches_any(rec, exits), Ok(true))
            }
            NodeKind::Box(_) | NodeKind::Feedback { .. } | NodeKind::At { .. } => false,
        }
    }

    /// The stage after `from` (or the first stage if `from` is `None`), skipping
    /// stages that are currently identities (spec §7.6: fired chains cost O(1)).
    fn next_stage<'w>(
        &'w self,
        star: &Arc<Inst>,
        from: Option<&Arc<Inst>>,
        tok: &Token,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Arc<Inst> {
        let mut inits = Vec::new();
        let start = self.stage(star, from, &tok.ctx, &mut inits);
        let mut cur = start.clone();
        let mut skipped: Vec<Arc<Inst>> = Vec::new();
        while cur.is_identity() {
            let jump = lock(&cur.skip).as_ref().and_then(|w| w.upgrade());
            let next = match jump {
                Some(j) => j,
                None => self.stage(star, Some(&cur), &tok.ctx, &mut inits),
            };
            skipped.push(cur);
            cur = next;
        }
        if !skipped.is_empty() {
            for s in &skipped {
                *lock(&s.skip) = Some(Arc::downgrade(&cur));
            }
            // Retire the identity prefix (the star now starts at `cur`) when its stages
            // are single cells: a record walking through one holds that very stage, so
            // no walk can find its parent gone. (A composite identity stage could be
            // dropped under a record walking inside it.)
            let leaves = skipped
                .iter()
                .all(|s| !matches!(s.kind, InstKind::Serial(..)));
            if from.is_none() && leaves {
                if let InstKind::Star { first, .. } = &star.kind {
                    let mut g = lock(first);
                    if g.as_ref().is_some_and(|f| Arc::ptr_eq(f, &start)) {
                        *g = Some(cur.clone());
                    }
                }
            }
        }
        for i in inits {
            // Stage initialisers homed elsewhere: only with distribution, whose errors
            // (a node gone) end the run anyway; the record goes on here.
            let _ = self.init_step(i, true, sink);
        }
        cur
    }

    /// The stage of `star` after `prev` (the first for `None`), created in context `ctx`
    /// if missing; the initialisers of a stage created here go to `inits`.
    fn stage(
        &self,
        star: &Arc<Inst>,
        prev: Option<&Arc<Inst>>,
        ctx: &crate::det::Ctx,
        inits: &mut Vec<InitCall>,
    ) -> Arc<Inst> {
        match prev {
            Some(p) => p
                .next_stage
                .get_or_init(|| self.new_stage(star, Some(p), ctx, inits))
                .clone(),
            None => {
                let InstKind::Star { first, .. } = &star.kind else {
                    unreachable!("a stage of a non-star instance")
                };
                lock(first)
                    .get_or_insert_with(|| self.new_stage(star, None, ctx, inits))
                    .clone()
            }
        }
    }

    /// [`Walker::stage`] for a record arriving from another node ([`Walker::arrival`]):
    /// initialisers of a stage created here are delivered at once.
    fn arrival_stage<'w>(
        &'w self,
        star: &Arc<Inst>,
        prev: Option<&Arc<Inst>>,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<Arc<Inst>, RunError> {
        let mut inits = Vec::new();
        let s = self.stage(star, prev, &None, &mut inits);
        for i in inits {
            self.init_step(i, true, sink)?;
        }
        Ok(s)
    }

    /// A new stage of `star` after `prev` (the first if `None`), created in context
    /// `ctx`; its initialisers go to `inits`.
    fn new_stage(
        &self,
        star: &Arc<Inst>,
        prev: Option<&Arc<Inst>>,
        ctx: &crate::det::Ctx,
        inits: &mut Vec<InitCall>,
    ) -> Arc<Inst> {
        let NodeKind::Star { body, .. } = &self.net.node(star.node).kind else {
            unreachable!("a stage of a non-star instance")
        };
        Inst::create(
            self.net,
            *body,
            Arc::downgrade(star),
            Slot::Stage(star.node),
            prev.map_or(0, |p| p.key() + 1),
            star.place(),
            ctx,
            &self.insts,
            inits,
        )
    }

    /// The replica for index value `v` of split `split` (created if missing; a placed
    /// split `!@` puts replica `v` on node `v`, spec §16.2); `None` if it was retired
    /// (a fired synchrocell: records pass the split as through an identity).
    fn replica<'w>(
        &'w self,
        split: &Arc<Inst>,
        v: i32,
        ctx: &crate::det::Ctx,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<Option<Arc<Inst>>, RunError> {
        let NodeKind::Split {
            body, placed, det, ..
        } = &self.net.node(split.node).kind
        else {
            return Err(RunError::new(
                "distributed run",
                None,
                "internal error: not a split",
            ));
        };
        let InstKind::Split { replicas, .. } = &split.kind else {
            return Err(RunError::new(
                "distributed run",
                None,
                "internal error: not a split",
            ));
        };
        // One lock and one lookup for a replica that exists or was retired; a new one is
        // made under the same lock (two records with one new value make one replica).
        let mut g = lock(&**replicas);
        if let Some(r) = g.get(v) {
            return Ok(r);
        }
        let mut place = split.place();
        if *placed && place.nodes > 1 {
            if v < 0 || v as u32 >= place.nodes {
                let n = self.net.node(split.node);
                return Err(RunError::new(
                    format!("{} at {}", n.name, n.loc),
                    None,
                    format!(
                        "the index value {v} names no node: the run has {} nodes (0..{}), and `{}` places replica v on node v",
                        place.nodes,
                        place.nodes - 1,
                        if *det { "!!@" } else { "!@" }
                    ),
                ));
            }
            place = place.on(v as u32);
        }
        let mut inits = Vec::new();
        let r = Inst::create(
            self.net,
            *body,
            Arc::downgrade(split),
            Slot::Replica,
            v,
            place,
            ctx,
            &self.insts,
            &mut inits,
        );
        g.live.insert(v, r.clone());
        drop(g);
        for i in inits {
            self.init_step(i, true, sink)?;
        }
        Ok(Some(r))
    }

    /// Retires `cell`, a split's replica that is a synchrocell which just fired: it is
    /// an identity for ever (spec §7.6), so the split remembers only its index value and
    /// passes later records with it straight on, and the instance is freed once no walk
    /// holds it (a split of synchrocells, as in fibtree, makes one per index value: they
    /// no longer accumulate). Not in a distributed run, whose nodes find replicas by
    /// their paths.
    fn retire_replica(&self, cell: &Inst) {
        if self.distributed {
            return;
        }
        if let Some(split) = cell.parent() {
            if let InstKind::Split { replicas, .. } = &split.kind {
                let mut g = lock(&**replicas);
                if g.live.remove(&cell.key()).is_some() {
                    g.retired.insert(cell.key());
                }
            }
        }
    }

    /// Walks `tok` from `pos` until every record it becomes has ended somewhere.
    /// `pos` must be in this walker's instance tree, before [`Walker::finish`] (a box
    /// reached otherwise panics, see [`BoxRef`]).
    pub fn walk<'w>(
        &'w self,
        pos: Pos,
        tok: Token,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(), RunError> {
        // Not dropped on the common path below: an empty stack that never allocated
        // owns nothing, and its drop glue cost a call per emitted record.
        let mut stack = ManuallyDrop::new(WalkStack::default());
        let r = self.walk_from(pos, tok, &mut stack, sink);
        // The common case: the record ended its walk alone (nothing pending).
        if r.is_ok() && stack.is_empty() && !stack.allocated() {
            return Ok(());
        }
        let mut stack = ManuallyDrop::into_inner(stack);
        r?;
        self.run_stack(&mut stack, sink)
    }

    fn run_stack<'w>(
        &'w self,
        stack: &mut WalkStack,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(), RunError> {
        while let Some(item) = stack.pop() {
            match item {
                Item::At(pos, tok) => self.walk_from(pos, tok, stack, sink)?,
                Item::Drain(inst) => {
                    if inst.start_drain() {
                        stack.push(Item::Draining(inst));
                    }
                }
                Item::Draining(inst) => {
                    sink(Step::Flush);
                    if let Some(t) = inst.pop_out() {
                        // Walk this record fully before taking the next one.
                        stack.push(Item::Draining(inst.clone()));
                        stack.push(Item::At(Pos::Leave(inst), t));
                    }
                }
            }
        }
        Ok(())
    }

    /// Moves one record on from `pos` while it stays one record (the record stays in
    /// place: it is large, and moving it through the stack at every step cost more than
    /// the routing). Where it becomes several, or releases collectors, the pending work
    /// goes onto `stack`, to be run next (depth first, in emission order).
    fn walk_from<'w>(
        &'w self,
        mut pos: Pos,
        mut tok: Token,
        stack: &mut WalkStack,
        sink: &mut dyn FnMut(Step<'w>),
    ) -> Result<(), RunError> {
        // Set while climbing out of the right operand of `..` from an instance without
        // a serial successor: its parent has none either (the same way up), so the
        // climb does not look again.
        let mut climbing = false;
        loop {
            // One test per step in a run in one process (spec §16.7): the flag is false
            // (and predicted so), and the homes are not even read.
            if self.distributed {
                let to = match &pos {
                    Pos::Enter(inst) => inst.home,
                    Pos::Leave(inst) => inst.up_home,
                };
                if to != self.me {
                    // A serial composition holds no state: a record leaving one of its
                    // operands steps through it here and goes straight to the node of
                    // what comes next (`(a @ 1) .. (b @ 2)`: 1 → 2, not 1 → 0 → 2).
                    if let Pos::Leave(inst) = &pos {
                        if let Some(next) = serial_step(inst) {
                            pos = next;
                            continue;
                        }
                    }
                    return self.hop(to, pos, tok);
                }
            }
            match pos {
                Pos::Enter(inst) => match &inst.kind {
                    InstKind::Box(..) => {
                        sink(Step::Box(self.box_ref(&inst), tok));
                        return Ok(());
                    }
                    InstKind::Identity => pos = Pos::Leave(inst),
                    InstKind::Observe => {
                        if let (NodeKind::Observe(spec), Some(o)) =
                            (&self.net.node(inst.node).kind, self.observers.get())
                        {
                            o.report(spec, &tok.rec);
                        }
                        pos = Pos::Leave(inst);
                    }
                    InstKind::Filter => {
                        let NodeKind::Filter(f) = &self.net.node(inst.node).kind else {
                            unreachable!("filter instance of a non-filter node")
                        };
                        // The stack's buffer (empty between uses): no allocation per
                        // filter application. One output is made where the input
                        // lies, in its slot; more go to the buffer.
                        debug_assert!(stack.outs.is_empty());
                        let buf = &mut stack.outs;
                        let applied = match &self.filter_plans[inst.node as usize] {
                            Some(plan) => filter::apply_planned(plan, f, &mut tok.rec, buf),
                            None => filter::apply_in_place(f, &mut tok.rec, buf),
                        };
                        let n = match applied {
                            Ok(n) => n,
                            Err(e) => return Err(self.filter_error(&inst, f, &tok.rec, e)),
                        };
                        self.counters.filtered(n);
                        if tok.ctx.is_some() {
                            ctx_add(&tok.ctx, n);
                            let mut released = Released::new();
                            ctx_release(&tok.ctx, &mut released);
                            push_drains(stack, released);
                        }
                        // (A filter with outputs keeps its frame alive: `released` is
                        // only non-empty when it consumed the record without output.)
                        if n == 1 {
                            // The common case: one record on, in place.
                            pos = Pos::Leave(inst);
                            continue;
                        }
                        if n == 0 {
                            return Ok(());
                        }
                        // Several outputs: the first goes on now, in the input's slot;
                        // the others wait on the stack (depth first, in written order).
                        let mut outs = std::mem::take(&mut stack.outs);
                        for rec in outs.drain(..).rev() {
                            stack.push(Item::At(
                                Pos::Leave(inst.clone()),
                                Token {
                                    rec: Rec::new(rec),
                                    ctx: tok.ctx.clone(),
                                },
                            ));
                        }
                        stack.outs = outs;
                        pos = Pos::Leave(inst);
                        continue;
                    }
                    InstKind::Sync(cell) => {
                        let NodeKind::Sync(pats) = &self.net.node(inst.node).kind else {
                            unreachable!("sync instance of a non-sync node")
                        };
                        // The record goes into the cell in its slot, and comes back
                        // out in one (its own, or the merge's).
                        let Token { rec, ctx } = tok;
                        let outcome = lock(cell).handle(pats, rec);
                        match outcome {
                            Ok(SyncOutcome::Forward(rec)) => {
                                tok = Token { rec, ctx };
                                pos = Pos::Leave(inst);
                            }
                            Ok(SyncOutcome::Fired(rec, earlier)) => {
                                self.counters.sync_merge(earlier);
                                if inst.slot == Slot::Replica {
                                    self.retire_replica(&inst);
                                }
                                tok = Token { rec, ctx };
                                pos = Pos::Leave(inst);
                            }
                            Ok(SyncOutcome::Stored) => {
                                self.counters.stored(1);
                                let mut released = Released::new();
                                ctx_release(&ctx, &mut released);
                                push_drains(stack, released);
                                return Ok(());
                            }
                            Err(b) => return Err(self.err(&inst, &b.1, b.0.to_string())),
                        }
                    }
                    InstKind::Serial(a, _) => {
                        // Down the left operands at once (a chain `a .. b .. c` nests
                        // them): entering a composition does nothing else, and `inst`
                        // holds what lies below. Level by level in a distributed run,
                        // where every step checks its home.
                        let first = if self.distributed {
                            a
                        } else {
                            a.serial_entry()
                        };
                        pos = Pos::Enter(first.clone());
                    }
                    InstKind::Parallel {
                        branches, single, ..
                    } => {
                        let NodeKind::Parallel { routes, .. } = &self.net.node(inst.node).kind
                        else {
                            unreachable!("parallel instance of a non-parallel node")
                        };
                        let b = match single {
                            Some(b) => *b as usize,
                            None => match match &self.route_tables[inst.node as usize] {
                                Some(t) => t.best(&tok.rec, routes),
                                None => pattern::best_branch(&tok.rec, routes),
                            } {
                                Some(b) => b,
                                None => {
                                    let types: Vec<String> = routes
                                        .iter()
                                        .enumerate()
                                        .map(|(i, r)| {
                                            format!("branch {}: {}", i + 1, show_variants(r))
                                        })
                                        .collect();
                                    // A binding tag is the commonest surprise: the
                                    // record has the labels a branch wants, but the
                                    // branch does not list its binding tag (§5.4).
                                    let mut why = if tok.rec.btags().is_empty() {
                                        ""
                                    } else {
                                        "; a record with binding tags only goes to a \
                                         branch whose type lists every one of them"
                                    }
                                    .to_owned();
                                    if routes.iter().flatten().any(|f| !f.optional.is_empty()) {
                                        why.push_str("; `l?`: a label the variants may lack");
                                    }
                                    return Err(self.err(
                                        &inst,
                                        &tok.rec,
                                        format!(
                                            "no branch accepts the record ({}){why}",
                                            types.join("; ")
                                        ),
                                    ));
                                }
                            },
                        };
                        enter_frame(&inst, &mut tok);
                        pos = Pos::Enter(branches[b].clone());
                    }
                    InstKind::Star { .. } => {
                        let NodeKind::Star { exits, .. } = &self.net.node(inst.node).kind else {
                            unreachable!("star instance of a non-star node")
                        };
                        enter_frame(&inst, &mut tok);
                        if self.test(&inst, &tok.rec, exits)? {
                            // Leaves at the entry tap: through the collector like a
                            // record leaving a stage (for `**` this completes its
                            // frame, which later inputs wait for).
                            match self.collect(&inst, tok, stack) {
                                Some(t) => {
                                    tok = t;
                                    pos = Pos::Leave(inst);
                                }
                                None => return Ok(()),
                            }
                        } else {
                            // Before `next_stage`, which skips identity stages and would
                            // create them for ever for such a record.
                            self.check_star_progress(&inst, &tok.rec)?;
                            pos = Pos::Enter(self.next_stage(&inst, None, &tok, sink));
                        }
                    }
                    InstKind::Split { .. } => {
                        let NodeKind::Split { index, .. } = &self.net.node(inst.node).kind else {
                            unreachable!("split instance of a non-split node")
                        };
                        let Some(v) = tok.rec.tag(*index) else {
                            return Err(self.err(
                                &inst,
                                &tok.rec,
                                match crate::label::suggest(*index, tok.rec.labels()) {
                                    Some(hint) => {
                                        format!("record lacks the index tag {index}; {hint}")
                                    }
                                    None => format!("record lacks the index tag {index}"),
                                },
                            ));
                        };
                        enter_frame(&inst, &mut tok);
                        let r = self.replica(&inst, v, &tok.ctx, sink).map_err(|mut e| {
                            e.record = Some(format!("{:?}", tok.rec));
                            e
                        })?;
                        match r {
                            Some(r) => pos = Pos::Enter(r),
                            // A retired replica (a fired synchrocell) passes the record
                            // on: it leaves the split as it would leave the replica.
                            None => match self.collect(&inst, tok, stack) {
                                Some(t) => {
                                    tok = t;
                                    pos = Pos::Leave(inst);
                                }
                                None => return Ok(()),
                            },
                        }
                    }
                    InstKind::Feedback(body) => pos = Pos::Enter(body.clone()),
                },
                Pos::Leave(inst) => {
                    // Through serial composition only: straight to what comes next
                    // (one reference taken, none for each level climbed and entered).
                    // In a distributed run every step checks its home (above).
                    if !self.distributed && !std::mem::take(&mut climbing) {
                        if let Some(next) = inst.serial_successor() {
                            pos = Pos::Enter(next.clone());
                            continue;
                        }
                    }
                    let stage_exit = match inst.slot {
                        Slot::Stage(star) => match self.leave_stage(star, &inst, &tok.rec)? {
                            Ok(n) => {
                                pos = Pos::Enter(n.clone());
                                continue;
                            }
                            Err(exit) => Some(exit),
                        },
                        _ => None,
                    };
                    let Some(parent) = inst.parent() else {
                        if inst.slot == Slot::Root {
                            sink(Step::Output(tok));
                            return Ok(());
                        }
                        return Err(self.err(
                            &inst,
                            &tok.rec,
                            "internal error: the enclosing instance is gone",
                        ));
                    };
                    match (&parent.kind, inst.slot) {
                        (InstKind::Serial(_, b), Slot::Left) => pos = Pos::Enter(b.clone()),
                        (InstKind::Star { .. }, Slot::Stage(_)) => {
                            if stage_exit == Some(true) {
                                match self.collect(&parent, tok, stack) {
                                    Some(t) => {
                                        tok = t;
                                        pos = Pos::Leave(parent);
                                    }
                                    None => return Ok(()),
                                }
                            } else {
                                self.check_star_progress(&parent, &tok.rec)?;
                                pos = Pos::Enter(self.next_stage(&parent, Some(&inst), &tok, sink));
                            }
                        }
                        (InstKind::Feedback(body), Slot::Body) => {
                            let NodeKind::Feedback { back, .. } = &self.net.node(parent.node).kind
                            else {
                                unreachable!("feedback instance of a non-feedback node")
                            };
                            if self.test(&parent, &tok.rec, back)? {
                                pos = Pos::Enter(body.clone());
                            } else {
                                pos = Pos::Leave(parent);
                            }
                        }
                        (InstKind::Parallel { .. } | InstKind::Split { .. }, _) => {
                            match self.collect(&parent, tok, stack) {
                                Some(t) => {
                                    tok = t;
                                    pos = Pos::Leave(parent);
                                }
                                None => return Ok(()),
                            }
                        }
                        (InstKind::Serial(..), Slot::Right) => {
                            climbing = true;
                            pos = Pos::Leave(parent);
                        }
                        _ => pos = Pos::Leave(parent),
                    }
                }
            }
        }
    }

    /// The error of filter `f` (instance `inst`) on `rec`, with a hint for a pattern
    /// label the record lacks (kept out of the walk: it is never on its path).
    #[cold]
    #[inline(never)]
    fn filter_error(
        &self,
        inst: &Inst,
        f: &crate::net::Filter,
        rec: &Record,
        e: filter::FilterError,
    ) -> RunError {
        let mut msg = e.to_string();
        if let filter::FilterError::NoMatch(l) = e {
            let others = rec.labels().filter(|m| !f.pattern.contains(m));
            if let Some(hint) = crate::label::suggest(l, others) {
                msg.push_str(&format!("; {hint}"));
            }
        }
        self.err(inst, rec, msg)
    }

    /// Hands `tok` to `inst`'s collector: returns it if it passes straight on (no
    /// collector, or the oldest frame's record), or `None` if the collector took it;
    /// collectors it released are pushed onto `stack`.
    fn collect(&self, inst: &Arc<Inst>, tok: Token, stack: &mut WalkStack) -> Option<Token> {
        let mut released = Released::new();
        match inst.collect(tok, &mut released) {
            Err(tok) => Some(tok),
            Ok(()) => {
                push_drains(stack, released);
                None
            }
        }
    }
}

/// The walk's LIFO of pending items; the top item is kept out of the vector so that the
/// common case (one record walking on alone) never allocates.
#[derive(Default)]
struct WalkStack {
    top: Option<Item>,
    rest: Vec<Item>,
    /// Reused output buffer of filters.
    outs: Vec<Record>,
}

impl WalkStack {
    fn push(&mut self, item: Item) {
        if let Some(prev) = self.top.replace(item) {
            self.rest.push(prev);
        }
    }

    fn pop(&mut self) -> Option<Item> {
        self.top.take().or_else(|| self.rest.pop())
    }

    fn is_empty(&self) -> bool {
        self.top.is_none() && self.rest.is_empty()
    }

    /// Whether a buffer of the stack holds heap memory.
    fn allocated(&self) -> bool {
        self.rest.capacity() != 0 || self.outs.capacity() != 0
    }
}

/// A unit of pending walk work.
enum Item {
    /// A record at a position.
    At(Pos, Token),
    /// Try to claim the drain of this instance's collector.
    Drain(Arc<Inst>),
    /// This thread drains this instance's collector: emit its next record.
    Draining(Arc<Inst>),
}

/// Schedules drains so that the first collector in `released` drains first.
#[inline]
fn push_drains(stack: &mut WalkStack, released: Released) {
    if released.is_empty() {
        return;
    }
    for inst in released.into_iter().rev() {
        stack.push(Item::Drain(inst));
    }
}

/// Gives a record entering a deterministic instance its frame (protocol step 1).
fn enter_frame(inst: &Arc<Inst>, tok: &mut Token) {
    if let Some(seq) = inst.enter_seq() {
        tok.ctx = Some(Frame::new(seq, 1, tok.ctx.take(), inst.clone()));
    }
}

/// A branch's routing type for an error message: `{a,b} | {c,d?}` (`d?`: a label the
/// variants may or may not have, see [`crate::net::Family`]).
/// `{a, <t>}`: a pattern's labels for a message.
fn show_pattern(ls: &[crate::label::Label]) -> String {
    let parts: Vec<String> = ls.iter().map(|l| l.to_string()).collect();
    format!("{{{}}}", parts.join(", "))
}

/// What a node is, for a message: `box `count``, `the identity `[]``, `a filter`...
fn describe_node(n: &crate::net::Node) -> String {
    match &n.kind {
        NodeKind::Box(_) => format!("box `{}`", n.name),
        NodeKind::Identity => "`[]`".to_owned(),
        NodeKind::Filter(_) => "a filter".to_owned(),
        NodeKind::Sync(_) => "a synchrocell".to_owned(),
        _ => format!("`{}`", n.name),
    }
}

/// Two records with the same labels and values, whatever their order.
fn same_record(a: &Record, b: &Record) -> bool {
    a.len() == b.len()
        && a.fields()
            .iter()
            .all(|(l, v)| b.field(*l).is_some_and(|w| w == v))
        && a.tags().iter().all(|(l, v)| b.tag(*l) == Some(*v))
        && a.btags().iter().all(|(l, v)| b.btags().contains(&(*l, *v)))
}

/// For a route `rec` does not take: a label it needs that the record has under the
/// same name as another kind (`the record has tag <k>, not field k`) or a close
/// spelling, the commonest slip behind a record that takes the wrong branch.
fn near_miss(rec: &Record, route: &[crate::net::Family]) -> Option<String> {
    route.iter().find_map(|f| {
        // Labels the route wants itself are no alternative to the one it lacks.
        let others = || {
            rec.labels()
                .filter(|m| !f.labels.contains(m) && !f.optional.contains(m))
        };
        f.labels
            .iter()
            .filter(|l| !rec.has(**l))
            .find_map(|l| crate::label::suggest(*l, others()))
    })
}

fn show_variants(vs: &[crate::net::Family]) -> String {
    let parts: Vec<String> = vs.iter().map(|f| f.to_string()).collect();
    if parts.is_empty() {
        "(initialiser)".into()
    } else {
        parts.join(" | ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boxes::{Args, BoxFailure, BoxSig, Emitter};
    use crate::label::Label;
    use crate::net::Node;

    /// `net x connect a .. b` with boxes `a` and `b` that pass field `x` on.
    fn two_boxes() -> (Net, BoxTable) {
        let sig = |n: &str| BoxSig {
            name: n.into(),
            input: Some(vec![Label::field("x")]),
            outputs: vec![vec![Label::field("x")]],
            passthrough: vec![],
        };
        let node = |kind, name: &str| Node {
            kind,
            loc: "t.snet:1:1".into(),
            name: name.into(),
        };
        let net = Net {
            nodes: vec![
                node(NodeKind::Box(0), "a"),
                node(NodeKind::Box(1), "b"),
                node(NodeKind::Serial(0, 1), ".."),
            ],
            root: 2,
            boxes: vec![sig("a"), sig("b")],
            entry: "x".into(),
        };
        let mut boxes = BoxTable::new();
        for n in ["a", "b"] {
            let f = |mut a: Args, out: &mut dyn Emitter| -> Result<(), BoxFailure> {
                out.emit_from(1, &mut a)
            };
            boxes.insert(n, Arc::new(f));
        }
        (net, boxes)
    }

    fn first_box(w: &Walker<'_>, root: &Arc<Inst>) -> usize {
        let mut at = Vec::new();
        let rec = Record::new().with_field("x", crate::Value::int(1));
        w.walk(Pos::Enter(root.clone()), Token::new(rec), &mut |s| {
            if let Step::Box(b, _) = s {
                at.push(b.addr());
            }
        })
        .expect("walks");
        assert_eq!(at.len(), 1, "the record ends its walk at box a");
        at[0]
    }

    #[test]
    fn a_box_ref_is_the_box_instance_and_a_counted_copy_is_the_same_instance() {
        let (net, boxes) = two_boxes();
        let mut w = Walker::new(&net, &boxes).expect("bound");
        let root = w.create_root(&mut |_| {});
        let a = first_box(&w, &root);
        let InstKind::Serial(left, _) = &root.kind else {
            panic!("root is the serial composition")
        };
        assert_eq!(a, Arc::as_ptr(left) as usize);
        let r = w.box_ref(left);
        let before = Arc::strong_count(left);
        let counted = r.arc();
        assert!(Arc::ptr_eq(&counted, left));
        assert_eq!(Arc::strong_count(left), before + 1);
        drop(counted);
        assert_eq!(w.finish(root), 0);
    }

    #[test]
    fn fire_hands_back_the_last_record_going_straight_on_and_sinks_the_others_in_order() {
        let (net, mut boxes) = two_boxes();
        // `a` emits its input three times, as 1, 2 and 3.
        let three = |_: Args, out: &mut dyn Emitter| -> Result<(), BoxFailure> {
            for v in 1..=3 {
                out.emit(
                    1,
                    crate::args![crate::boxes::Arg::Field(Some(crate::Value::int(v)))],
                )?;
            }
            Ok(())
        };
        boxes.insert("a", Arc::new(three));
        let mut w = Walker::new(&net, &boxes).expect("bound");
        let root = w.create_root(&mut |_| {});
        let InstKind::Serial(a, b) = &root.kind else {
            panic!("root is the serial composition")
        };
        let x = |t: &Token| t.rec.field(Label::field("x")).cloned().flatten();
        let rec = Record::new().with_field("x", crate::Value::int(0));
        let mut sunk = Vec::new();
        let last = w
            .fire(w.box_ref(a), Some(rec.into()), None, &mut |s| match s {
                Step::Box(to, t) => sunk.push((to.addr(), x(&t))),
                other => panic!("unexpected step {other:?}"),
            })
            .expect("fires");
        let b_addr = Arc::as_ptr(b) as usize;
        let int = |v| Some(crate::Value::int(v));
        assert_eq!(sunk, vec![(b_addr, int(1)), (b_addr, int(2))]);
        let (to, tok) = last.expect("the third record comes back");
        assert_eq!((to.addr(), x(&tok)), (b_addr, int(3)));
        // From the last box the record leaves the net: it goes to the sink, nothing
        // comes back.
        let mut outs = 0;
        let last = w
            .fire(to, Some(tok.rec), tok.ctx, &mut |s| {
                assert!(matches!(s, Step::Output(_)), "{s:?}");
                outs += 1;
            })
            .expect("fires");
        assert!(last.is_none());
        assert_eq!(outs, 1);
        assert_eq!(w.finish(root), 0);
    }

    #[test]
    #[should_panic(expected = "another instance tree")]
    fn an_instance_of_another_walkers_tree_is_refused() {
        let (net, boxes) = two_boxes();
        let w1 = Walker::new(&net, &boxes).expect("bound");
        let w2 = Walker::new(&net, &boxes).expect("bound");
        let _r2 = w2.create_root(&mut |_| {});
        let root1 = w1.create_root(&mut |_| {});
        // The first walker's root walked by the second: its box would outlive nothing
        // the second walker holds.
        let rec = Record::new().with_field("x", crate::Value::int(1));
        let _ = w2.walk(Pos::Enter(root1.clone()), Token::new(rec), &mut |_| {});
    }

    #[test]
    #[should_panic(expected = "another instance tree")]
    fn an_instance_kept_past_finish_is_refused() {
        let (net, boxes) = two_boxes();
        let mut w = Walker::new(&net, &boxes).expect("bound");
        let root = w.create_root(&mut |_| {});
        let kept = root.clone();
        w.finish(root);
        // The tree is the walker's no longer (only `kept` holds it).
        let rec = Record::new().with_field("x", crate::Value::int(1));
        let _ = w.walk(Pos::Enter(kept), Token::new(rec), &mut |_| {});
    }

    /// A node of a hand-made net.
    fn node(kind: NodeKind) -> Node {
        Node {
            kind,
            loc: "t.snet:1:1".into(),
            name: "n".into(),
        }
    }

    /// Walks `rec` into `root` (a net without boxes): the records that leave it.
    fn outputs(w: &Walker<'_>, root: &Arc<Inst>, rec: Record) -> Vec<Record> {
        let mut out = Vec::new();
        w.walk(
            Pos::Enter(root.clone()),
            Token::new(rec),
            &mut |s| match s {
                Step::Output(t) => out.push(t.rec.into_record()),
                other => panic!("unexpected step {other:?}"),
            },
        )
        .expect("walks");
        out
    }

    /// A split's replica that is a synchrocell is retired when it fires: the split
    /// keeps only its index value, the instance is freed, and later records with that
    /// index pass on unchanged (as through the fired cell).
    #[test]
    fn a_fired_synchrocell_replica_is_retired_and_freed() {
        let (a, b, k) = (Label::field("a"), Label::field("b"), Label::tag("k"));
        let pat = |l| GuardedPattern {
            labels: vec![l],
            guard: None,
        };
        let net = Net {
            nodes: vec![
                node(NodeKind::Sync(vec![pat(a), pat(b)])),
                node(NodeKind::Split {
                    body: 0,
                    index: k,
                    det: false,
                    placed: false,
                }),
            ],
            root: 1,
            boxes: vec![],
            entry: "t".into(),
        };
        let boxes = BoxTable::new();
        let mut w = Walker::new(&net, &boxes).expect("bound");
        let root = w.create_root(&mut |_| {});
        let rec = |l: &str, key| {
            Record::new()
                .with_field(l, crate::Value::int(key))
                .with_tag("k", key)
        };
        let mut out = Vec::new();
        let walk = |r: Record, out: &mut Vec<Record>| out.extend(outputs(&w, &root, r));
        let replica = |key| {
            let InstKind::Split { replicas, .. } = &root.kind else {
                panic!("root is the split")
            };
            lock(&**replicas).get(key)
        };
        for key in 0..3 {
            walk(rec("a", key), &mut out);
        }
        assert!(out.is_empty(), "three cells wait");
        let cell = Arc::downgrade(&replica(1).flatten().expect("a live replica"));
        walk(rec("b", 1), &mut out);
        assert_eq!(out.len(), 1, "cell 1 fired");
        assert!(
            matches!(replica(1), Some(None)),
            "retired: its index value is remembered"
        );
        assert!(cell.upgrade().is_none(), "and the instance is freed");
        assert!(replica(0).flatten().is_some() && replica(2).flatten().is_some());
        // A later record with index 1 passes on unchanged.
        walk(rec("a", 1), &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1], rec("a", 1));
        // Two records are still stored (cells 0 and 2).
        assert_eq!(w.finish(root.clone()), 2);
    }

    /// A record leaving an instance whose way on is serial composition only goes
    /// straight to what comes next (found once, kept by the instance), for filters as
    /// for boxes.
    #[test]
    fn serial_successors_are_found_once_for_every_kind_of_instance() {
        use crate::net::{Filter, OutItem};
        let (x, t) = (Label::field("x"), Label::tag("t"));
        // [{x} -> {x, <t>}] .. ([{x, <t>} -> {x, <t=t+1>}] .. [])
        let inc = crate::TagExpr::Binary(
            crate::tagexpr::BinOp::Add,
            Box::new(crate::TagExpr::Label(t)),
            Box::new(crate::TagExpr::Int(1)),
        );
        let filter = |pattern: Vec<Label>, value| {
            NodeKind::Filter(Filter {
                pattern,
                guards: vec![],
                default: vec![vec![
                    OutItem::Field { to: x, from: x },
                    OutItem::Tag { to: t, value },
                ]],
            })
        };
        let net = Net {
            nodes: vec![
                node(filter(vec![x], None)),
                node(filter(vec![x, t], Some(inc))),
                node(NodeKind::Identity),
                node(NodeKind::Serial(1, 2)),
                node(NodeKind::Serial(0, 3)),
            ],
            root: 4,
            boxes: vec![],
            entry: "t".into(),
        };
        let boxes = BoxTable::new();
        let mut w = Walker::new(&net, &boxes).expect("bound");
        let root = w.create_root(&mut |_| {});
        let mut out = Vec::new();
        for v in 0..3 {
            let rec = Record::new().with_field("x", crate::Value::int(v));
            out.extend(outputs(&w, &root, rec));
        }
        assert_eq!(out.len(), 3);
        for (v, r) in out.iter().enumerate() {
            assert_eq!(r.tag(t), Some(1), "{r:?}");
            let got = r.field(x).cloned().flatten().and_then(|v| v.as_i32());
            assert_eq!(got, Some(v as i32));
        }
        let InstKind::Serial(first, rest) = &root.kind else {
            panic!("root is `..`")
        };
        let InstKind::Serial(second, ident) = &rest.kind else {
            panic!("right operand is `..`")
        };
        // The first filter goes straight on to the second, which goes to the identity.
        assert!(Arc::ptr_eq(first.next_stage.get().expect("cached"), second));
        assert!(Arc::ptr_eq(second.next_stage.get().expect("cached"), ident));
        // The identity leaves the net: it has no successor (nor has the composition
        // above it, the same way up).
        assert!(ident.next_stage.get().is_none());
        assert!(rest.next_stage.get().is_none());
        assert_eq!(w.finish(root), 0);
    }
}
