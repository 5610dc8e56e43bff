//! Instances: the lazily grown entity graph built from a [`Net`]'s templates
//! (DESIGN rule 2).
//!
//! Every occurrence of a node in the expanded network is one [`Inst`]. The static part
//! of an instance (serial operands, parallel branches, the feedback operand) is created
//! with it, so initialisers fire when their composition is created (spec §7.4);
//! star stages and split replicas are created when a record first needs them. A child
//! knows its parent weakly (parents own children), so an instance tree is freed when
//! the run drops its root.
//!
//! Box leaves carry an engine slot: engines keep their per-entity state (a queue, an
//! owner flag) there without the core knowing its type.

use crate::det::{Collector, CollectorMode, Ctx, Frame, Token};
use crate::net::{Net, NodeId, NodeKind};
use crate::sync_cell::SyncCell;
use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

/// Where an instance sits in its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    // (The operands of `..` first: `Inst::serial_successor` tests for them at every
    // box firing, one comparison with the tag this way.)
    /// Left operand of `..`.
    Left,
    /// Right operand of `..`.
    Right,
    /// The root of the run.
    Root,
    /// Branch `i` of a parallel composition.
    Branch(u32),
    /// A stage of a serial replication (of the star node given), so that a record
    /// leaving a stage can be routed without touching the star instance (whose
    /// reference count every worker would otherwise update at every firing).
    Stage(NodeId),
    /// A replica of a parallel replication.
    Replica,
    /// The operand of a feedback loop.
    Body,
}

/// What an instance holds, by node kind.
pub(crate) enum InstKind {
    /// A box leaf: the box index and the engine's per-entity state. (A `u32`, not a
    /// `usize`: it fits beside the variant's tag.)
    Box(u32, crate::engine_slot::EngineSlot),
    Filter,
    Identity,
    /// An observer: reports each record, passes it on.
    Observe,
    Sync(Mutex<SyncCell>),
    Serial(Arc<Inst>, Arc<Inst>),
    Parallel {
        branches: Vec<Arc<Inst>>,
        /// The only branch that receives data records, if all others are initialisers.
        single: Option<u32>,
        coll: Option<Box<Mutex<Collector>>>,
    },
    Star {
        /// The first live stage. Stages before it were identities (fired cells) and are
        /// retired: freed once no record is inside them, so memory stays bounded on
        /// long streams through continuous-synchronisation stars.
        first: Mutex<Option<Arc<Inst>>>,
        coll: Option<Box<Mutex<Collector>>>,
    },
    Split {
        replicas: Box<Mutex<Replicas>>,
        coll: Option<Box<Mutex<Collector>>>,
    },
    Feedback(Arc<Inst>),
}

/// Where instances run in a distributed run (spec §16): the home node of the instance
/// being created and the number of nodes. With one node every home is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The node the instance runs on.
    pub home: u32,
    /// Nodes in the run.
    pub nodes: u32,
}

impl Place {
    /// A run in one process.
    pub const SINGLE: Place = Place { home: 0, nodes: 1 };

    /// This place moved to node `n` (a placement); a one-node run stays on node 0.
    pub fn on(self, n: u32) -> Place {
        if self.nodes <= 1 {
            self
        } else {
            Place { home: n, ..self }
        }
    }
}

/// One step of an instance's position in the instance tree ([`Inst::path`]): how a
/// process names an instance to another, whose tree was built by other records in
/// another order (never by creation order or addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathStep {
    /// Left operand of `..`.
    Left,
    /// Right operand of `..`.
    Right,
    /// Branch `i` of a parallel composition.
    Branch(u32),
    /// Stage `k` (from 0) of a serial replication.
    Stage(u32),
    /// The replica for index value `v` of a parallel replication.
    Replica(i32),
    /// The operand of a feedback loop.
    Body,
}

/// One instance of a node.
pub struct Inst {
    /// The node this is an instance of.
    pub node: NodeId,
    /// Position in the parent.
    pub slot: Slot,
    /// The node (process) this instance runs on (spec §16.2); 0 in a one-node run.
    pub home: u32,
    /// The number of nodes of the run (the place children inherit).
    nodes: u32,
    /// Stage number (star stages) or index value (split replicas); 0 otherwise.
    key: i32,
    /// The instance tree (the walker) this instance belongs to ([`InstCounter`]).
    tree: u32,
    /// The home of the parent (node 0 for the root: the global output is there): a
    /// record leaving this instance is routed there.
    pub up_home: u32,
    parent: Weak<Inst>,
    pub(crate) kind: InstKind,
    /// For star stages: the next stage, created on demand. For other instances: what a
    /// record leaving this one enters next, when the way there is serial composition
    /// only (no collector, test, state, observer or other node on it), found on the
    /// first record that leaves (the instances below a serial composition never
    /// change): one load per step instead of a reference-count update per level
    /// climbed and descended. See [`NextStage`].
    pub(crate) next_stage: NextStage,
    /// For star stages: a later stage such that every stage in between is an identity
    /// (fired synchrocells), for O(1) passage through long fired chains (spec §7.6).
    pub(crate) skip: Mutex<Option<Weak<Inst>>>,
}

// Recursive programs create an instance per record or two (fibtree 25: 121 000, most of
// them synchrocell replicas and star stages), each in an `Arc` (16 bytes more) in a
// malloc chunk of the size plus 8 rounded up to 16: at most 120 bytes is a 144-byte
// chunk instead of 176 (what keeps it there: a synchrocell's slots and fired flag in 32
// bytes, a `u32` box index, the "no serial successor" mark in `next_stage`).
const _: () = assert!(std::mem::size_of::<Inst>() <= 120);

/// [`Inst::next_stage`]: set once, to the next stage of a star stage, or to what a
/// record leaving another instance enters next (`None`: the way on is not serial
/// composition only, so there is no such instance to keep).
#[derive(Default)]
pub(crate) struct NextStage(OnceLock<Option<Arc<Inst>>>);

impl NextStage {
    /// The next stage or the serial successor, if known (and there is one).
    #[inline]
    pub(crate) fn get(&self) -> Option<&Arc<Inst>> {
        self.0.get().and_then(Option::as_ref)
    }

    /// The next stage of a star stage, created by `f` if there is none yet.
    #[inline]
    pub(crate) fn get_or_init(&self, f: impl FnOnce() -> Arc<Inst>) -> &Arc<Inst> {
        match self.0.get_or_init(|| Some(f())) {
            Some(s) => s,
            // Only `serial_successor` sets `None`, and never on a star stage.
            None => unreachable!("the next stage of an instance that is not a stage"),
        }
    }

    /// The serial successor, found by `find` the first time (`None` is kept too: the
    /// way on is not serial composition only).
    #[inline]
    fn get_or_find(&self, find: impl FnOnce() -> Option<Arc<Inst>>) -> Option<&Arc<Inst>> {
        self.0.get_or_init(find).as_ref()
    }

    /// Takes the instance out (the owner is being freed).
    fn take(&mut self) -> Option<Arc<Inst>> {
        self.0.take().flatten()
    }
}

impl fmt::Debug for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inst")
            .field("node", &self.node)
            .field("slot", &self.slot)
            .finish()
    }
}

impl Drop for Inst {
    /// Frees the instances below this one with a work list instead of recursion: a
    /// star's stage chain or a long serial chain would otherwise be freed one stack
    /// frame per instance (a stack overflow at the end of a run).
    fn drop(&mut self) {
        let mut pending = Vec::new();
        self.take_children(&mut pending);
        while let Some(child) = pending.pop() {
            // The last reference: take its children before it is freed (then its own
            // drop finds none); otherwise someone else still holds it.
            if let Some(mut inner) = Arc::into_inner(child) {
                inner.take_children(&mut pending);
            }
        }
    }
}

impl Inst {
    /// Moves the child instances this instance owns into `out`, leaving it childless.
    fn take_children(&mut self, out: &mut Vec<Arc<Inst>>) {
        if let Some(n) = self.next_stage.take() {
            out.push(n);
        }
        match std::mem::replace(&mut self.kind, InstKind::Identity) {
            InstKind::Serial(a, b) => out.extend([a, b]),
            InstKind::Parallel { branches, .. } => out.extend(branches),
            InstKind::Star { first, .. } => {
                out.extend(first.into_inner().unwrap_or_else(|e| e.into_inner()));
            }
            InstKind::Split { replicas, .. } => out.extend(
                replicas
                    .into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .live
                    .into_values(),
            ),
            InstKind::Feedback(body) => out.push(body),
            InstKind::Box(..)
            | InstKind::Filter
            | InstKind::Identity
            | InstKind::Observe
            | InstKind::Sync(_) => {}
        }
    }
}

/// An initialiser box to invoke because its composition was just created.
#[derive(Debug)]
pub struct InitCall {
    /// The initialiser box leaf.
    pub leaf: Arc<Inst>,
    /// Context of the records it emits.
    pub ctx: Ctx,
    /// The home of the composition that was created (only its home fires its
    /// initialisers in a distributed run; other nodes only made a copy to route by).
    pub comp_home: u32,
}

/// The outermost feedback instance (`\`) enclosing a box instance, as engines with
/// bounded streams need it to decide whether a push may block ([`Inst::loop_key`]).
///
/// Feedback instances enclosing an instance form one chain of its ancestors, so two
/// instances lie in the body of a common feedback instance exactly when their outermost
/// ones are the same. A cycle of producers each blocked on the next one's full stream
/// is a cycle in the instance graph, which only a feedback loop has: an engine that
/// never blocks a push between two boxes of a common loop ([`LoopKey::shares_loop`])
/// cannot deadlock by bounding its streams (the lpel and threads engines' module docs
/// give the whole argument).
#[derive(Debug, Clone, Default)]
pub struct LoopKey {
    /// Address of the outermost enclosing feedback instance (0: none).
    id: usize,
    /// Keeps that instance's allocation (not the instance) alive, so that the address
    /// stays unique while the key exists.
    _keep: Option<Weak<Inst>>,
}

impl LoopKey {
    /// The key's value: 0 outside every feedback loop, else an identity of the
    /// outermost enclosing feedback instance (a writer passes it along to its pushes).
    pub fn id(&self) -> usize {
        self.id
    }

    /// Whether a writer whose key has value `writer` lies in the body of a feedback
    /// instance that also encloses this key's box (then its pushes must not block).
    pub fn shares_loop(&self, writer: usize) -> bool {
        writer != 0 && writer == self.id
    }
}

/// Counts instance creations (`RunStats::entities_created`), and names the instance
/// tree they belong to (one per walker: each instance records the number of its tree).
#[derive(Debug)]
pub struct InstCounter {
    n: AtomicUsize,
    tree: u32,
}

impl Default for InstCounter {
    /// A counter at 0 for a new tree (numbered apart from every other in the process).
    fn default() -> Self {
        static NEXT_TREE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        InstCounter {
            n: AtomicUsize::new(0),
            tree: NEXT_TREE.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl InstCounter {
    /// Instances created so far.
    pub fn get(&self) -> usize {
        self.n.load(Ordering::Relaxed)
    }

    /// The tree the instances counted here belong to.
    pub(crate) fn tree(&self) -> u32 {
        self.tree
    }
}

/// The replicas of a split instance by index value.
#[derive(Debug, Default)]
pub struct Replicas {
    /// The live replicas.
    pub(crate) live: HashMap<i32, Arc<Inst>, std::hash::BuildHasherDefault<IndexHasher>>,
    /// Index values of retired replicas: synchrocells that fired, identities for ever
    /// (spec §7.6), freed and remembered by their index value alone (see
    /// `Walker::retire_replica`). Apart from the live ones, so that the live map stays
    /// as small as what is waiting (fibtree: a few dozen cells, not 10^5).
    pub(crate) retired: std::collections::HashSet<i32, std::hash::BuildHasherDefault<IndexHasher>>,
}

impl Replicas {
    /// The replica for `v`: `Some(None)` if it was retired, `None` if there is none.
    #[inline]
    pub(crate) fn get(&self, v: i32) -> Option<Option<Arc<Inst>>> {
        match self.live.get(&v) {
            Some(r) => Some(Some(r.clone())),
            None if self.retired.contains(&v) => Some(None),
            None => None,
        }
    }
}

/// Hashes a split's index values (`i32`, chosen by the program, not by an adversary
/// with a hash table to flood): one multiplication that spreads the value over the
/// high bits the table's probes use. The default SipHash was 5 % of a run that creates
/// a replica per record (fibtree).
#[derive(Debug, Default)]
pub struct IndexHasher(u64);

impl std::hash::Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_i32(&mut self, v: i32) {
        self.0 = (u64::from(v as u32) ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Instances above which a finished run's instance tree is freed on a thread of its own.
const FREE_IN_BACKGROUND: u64 = 16 * 1024;

/// Frees the instance tree of a finished run (`root`, normally its last reference;
/// `entities`: instances the run created). A large tree (fibtree 25: 121 000 instances,
/// 5-10 % of the run) is freed off the caller's path, since the caller has its results
/// already. The tree holds no record then (every engine discards stored ones first), so
/// nothing that box code or a loaded library owns is freed late.
pub(crate) fn free_tree(root: Arc<Inst>, entities: u64) {
    if entities < FREE_IN_BACKGROUND {
        return;
    }
    // If the thread cannot start, the closure and `root` with it are dropped here.
    let _ = std::thread::Builder::new()
        .name("snet-free".into())
        .spawn(move || drop(root));
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// True if `node` is an initialiser box or a serial chain that starts with one.
fn starts_with_init(net: &Net, mut node: NodeId) -> bool {
    loop {
        match &net.node(node).kind {
            NodeKind::Serial(a, _) => node = *a,
            NodeKind::At { body, .. } => node = *body,
            NodeKind::Box(b) => return net.boxes[*b].input.is_none(),
            _ => return false,
        }
    }
}

impl Inst {
    /// Creates an instance of `node` and its static part. Initialisers of parallel
    /// compositions created here are appended to `inits` with context `ctx`. Only a
    /// walker creates instances (its tree, see [`Inst::tree`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn create(
        net: &Net,
        node: NodeId,
        parent: Weak<Inst>,
        slot: Slot,
        key: i32,
        place: Place,
        ctx: &Ctx,
        counter: &InstCounter,
        inits: &mut Vec<InitCall>,
    ) -> Arc<Inst> {
        counter.n.fetch_add(1, Ordering::Relaxed);
        // The parent's home (a `!@` replica's place is its own node, not the split's).
        let up_home = match slot {
            Slot::Root => 0,
            Slot::Replica => parent.upgrade().map_or(place.home, |p| p.home),
            _ => place.home,
        };
        // A placement `@ n` is no instance of its own: it sets the home of its operand.
        let (node, at) = net.unplaced(node);
        let place = match at {
            Some(n) => place.on(n),
            None => place,
        };
        let mut pending_init: Vec<usize> = Vec::new();
        // For `||`: the frame of its creation, input 0 of its collector.
        let mut creation: Option<Arc<Frame>> = None;
        let inst = Arc::new_cyclic(|me: &Weak<Inst>| {
            let kind = match &net.node(node).kind {
                NodeKind::At { .. } => unreachable!("placements are unwrapped above"),
                NodeKind::Box(i) => InstKind::Box(
                    u32::try_from(*i).expect("fewer than 2^32 boxes"),
                    Default::default(),
                ),
                NodeKind::Filter(_) => InstKind::Filter,
                NodeKind::Identity => InstKind::Identity,
                NodeKind::Observe(_) => InstKind::Observe,
                NodeKind::Sync(ps) => InstKind::Sync(Mutex::new(SyncCell::new(ps.len()))),
                NodeKind::Serial(a, b) => InstKind::Serial(
                    Inst::create(
                        net,
                        *a,
                        me.clone(),
                        Slot::Left,
                        0,
                        place,
                        ctx,
                        counter,
                        inits,
                    ),
                    Inst::create(
                        net,
                        *b,
                        me.clone(),
                        Slot::Right,
                        0,
                        place,
                        ctx,
                        counter,
                        inits,
                    ),
                ),
                NodeKind::Parallel {
                    branches,
                    routes,
                    det,
                } => {
                    // A branch with an empty input type never receives records
                    // (spec §7.8); it is invoked only if it starts with an initialiser
                    // box (§7.4). A net declared `(-> {x})` around other code has no
                    // input type either (§3.4, §8), but nothing to invoke.
                    pending_init = routes
                        .iter()
                        .enumerate()
                        .filter(|(i, r)| r.is_empty() && starts_with_init(net, branches[*i]))
                        .map(|(i, _)| i)
                        .collect();
                    let data: Vec<usize> = (0..routes.len())
                        .filter(|i| !routes[*i].is_empty())
                        .collect();
                    let single = (data.len() == 1).then(|| data[0] as u32);
                    let coll = if *det {
                        Some(Box::new(Mutex::new(Collector::new(CollectorMode::Ordered))))
                    } else if !pending_init.is_empty() {
                        Some(Box::new(Mutex::new(Collector::new(
                            CollectorMode::InitGate,
                        ))))
                    } else {
                        None
                    };
                    // `||`: the records of every initialiser created with it (its own
                    // and those of nested compositions, spec §7.4) are caused by its
                    // creation, input 0, and precede all data (§7.14).
                    let child_ctx = match &coll {
                        Some(c) if *det => {
                            let f = Frame::unowned(lock(c).next_seq(), ctx.clone());
                            creation = Some(f.clone());
                            Some(f)
                        }
                        _ => ctx.clone(),
                    };
                    let bs: Vec<Arc<Inst>> = branches
                        .iter()
                        .enumerate()
                        .map(|(i, b)| {
                            Inst::create(
                                net,
                                *b,
                                me.clone(),
                                Slot::Branch(i as u32),
                                0,
                                place,
                                &child_ctx,
                                counter,
                                inits,
                            )
                        })
                        .collect();
                    InstKind::Parallel {
                        branches: bs,
                        single,
                        coll,
                    }
                }
                NodeKind::Star { det, .. } => InstKind::Star {
                    first: Mutex::new(None),
                    coll: det.then(|| Box::new(Mutex::new(Collector::new(CollectorMode::Ordered)))),
                },
                NodeKind::Split { det, .. } => InstKind::Split {
                    replicas: Box::new(Mutex::new(Replicas::default())),
                    coll: det.then(|| Box::new(Mutex::new(Collector::new(CollectorMode::Ordered)))),
                },
                NodeKind::Feedback { body, .. } => InstKind::Feedback(Inst::create(
                    net,
                    *body,
                    me.clone(),
                    Slot::Body,
                    0,
                    place,
                    ctx,
                    counter,
                    inits,
                )),
            };
            Inst {
                node,
                slot,
                home: place.home,
                nodes: place.nodes,
                key,
                tree: counter.tree,
                up_home,
                parent,
                kind,
                next_stage: NextStage::default(),
                skip: Mutex::new(None),
            }
        });
        if let Some(frame) = creation {
            frame.set_owner(inst.clone());
            if let InstKind::Parallel { branches, coll, .. } = &inst.kind {
                crate::det::ctx_add(&Some(frame.clone()), pending_init.len());
                for i in pending_init {
                    inits.push(InitCall {
                        leaf: branches[i].leftmost_leaf(),
                        ctx: Some(frame.clone()),
                        comp_home: inst.home,
                    });
                }
                if frame.count() == 0 {
                    // No initialiser below: input 0 is complete at once.
                    if let Some(c) = coll.as_deref() {
                        lock(c).complete(frame.seq());
                    }
                } else {
                    // The frame is a live unit of the enclosing context (protocol
                    // step 1).
                    crate::det::ctx_add(ctx, 1);
                }
            }
        } else if !pending_init.is_empty() {
            // Initialiser records form input 0 of this composition's collector.
            if let InstKind::Parallel { branches, coll, .. } = &inst.kind {
                let seq = coll.as_deref().map(|c| lock(c).next_seq()).unwrap_or(0);
                let frame = Frame::new(seq, pending_init.len(), ctx.clone(), inst.clone());
                // The frame is a live unit of the enclosing context (protocol step 1).
                crate::det::ctx_add(ctx, 1);
                for i in pending_init {
                    inits.push(InitCall {
                        leaf: branches[i].leftmost_leaf(),
                        ctx: Some(frame.clone()),
                        comp_home: inst.home,
                    });
                }
            }
        }
        inst
    }

    /// The place of this instance (what its children inherit).
    pub fn place(&self) -> Place {
        Place {
            home: self.home,
            nodes: self.nodes,
        }
    }

    /// The position of this instance in the instance tree, from the root: the same on
    /// every node whatever order the trees grew in (see [`PathStep`]). `None` if an
    /// ancestor is gone (a retired star stage).
    pub fn path(self: &Arc<Inst>) -> Option<Vec<PathStep>> {
        let mut steps = Vec::new();
        let mut cur = self.clone();
        loop {
            let step = match cur.slot {
                Slot::Root => break,
                Slot::Left => PathStep::Left,
                Slot::Right => PathStep::Right,
                Slot::Branch(i) => PathStep::Branch(i),
                Slot::Stage(_) => PathStep::Stage(cur.key as u32),
                Slot::Replica => PathStep::Replica(cur.key),
                Slot::Body => PathStep::Body,
            };
            steps.push(step);
            cur = cur.parent()?;
        }
        steps.reverse();
        Some(steps)
    }

    /// The stage number of a star stage (0 for other instances).
    pub(crate) fn key(&self) -> i32 {
        self.key
    }

    /// The first leaf reached by descending through left operands of `..`.
    pub fn leftmost_leaf(self: &Arc<Inst>) -> Arc<Inst> {
        let mut cur = self.clone();
        while let InstKind::Serial(a, _) = &cur.kind {
            let next = a.clone();
            cur = next;
        }
        cur
    }

    /// The parent instance (`None` for the root).
    pub fn parent(&self) -> Option<Arc<Inst>> {
        self.parent.upgrade()
    }

    /// The instance a record leaving `self` (not a star stage) enters next, when only
    /// serial composition lies between them: found on the first record that leaves,
    /// kept in `next_stage` (the instances below a serial composition never change).
    #[inline]
    pub(crate) fn serial_successor(&self) -> Option<&Arc<Inst>> {
        // Only an operand of `..` has one (a star stage's `next_stage` is its next stage).
        if !matches!(self.slot, Slot::Left | Slot::Right) {
            return None;
        }
        // (A successor is also owned by its serial composition; `take_children` takes it
        // like a next stage, so a chain of them is not freed by recursion.)
        self.next_stage
            .get_or_find(|| Inst::find_serial_successor(self))
    }

    fn find_serial_successor(leaf: &Inst) -> Option<Arc<Inst>> {
        // Up while leaving the right operand of `..`, then into the right operand.
        let mut parent = leaf.parent()?;
        let mut slot = leaf.slot;
        loop {
            match (&parent.kind, slot) {
                // Down through its left operands to what the record enters.
                (InstKind::Serial(_, b), Slot::Left) => return Some(b.serial_entry().clone()),
                (InstKind::Serial(..), Slot::Right) => {
                    slot = parent.slot;
                    parent = parent.parent()?;
                }
                _ => return None,
            }
        }
    }

    /// What a record entering `self` enters first: down through the left operands of
    /// serial compositions (`self` itself if it is not one).
    pub(crate) fn serial_entry(self: &Arc<Inst>) -> &Arc<Inst> {
        let mut first = self;
        while let InstKind::Serial(a, _) = &first.kind {
            first = a;
        }
        first
    }

    /// The key of the outermost feedback instance enclosing this instance (see
    /// [`LoopKey`]); walks the ancestors once.
    pub fn loop_key(&self) -> LoopKey {
        let mut outer: Option<Arc<Inst>> = None;
        let mut cur = self.parent();
        while let Some(p) = cur {
            if matches!(p.kind, InstKind::Feedback(_)) {
                outer = Some(p.clone());
            }
            cur = p.parent();
        }
        LoopKey {
            id: outer.as_ref().map_or(0, |p| Arc::as_ptr(p) as usize),
            _keep: outer.as_ref().map(Arc::downgrade),
        }
    }

    /// The box index of a box leaf.
    pub fn box_index(&self) -> Option<usize> {
        match self.kind {
            InstKind::Box(i, _) => Some(i as usize),
            _ => None,
        }
    }

    /// The engine's per-entity state for this box leaf, created on first use.
    pub fn engine_slot<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> &T {
        match &self.kind {
            InstKind::Box(_, e) => e.get_or_init(init),
            _ => panic!("engine slot of a non-box instance"),
        }
    }

    /// The instance tree this instance belongs to: the number of the walker that
    /// created it (its [`InstCounter`]).
    #[inline]
    pub(crate) fn tree(&self) -> u32 {
        self.tree
    }

    /// True if this instance currently passes every record unchanged (an identity or a
    /// fired synchrocell, or a serial composition of such).
    #[inline]
    pub(crate) fn is_identity(&self) -> bool {
        match &self.kind {
            InstKind::Identity => true,
            InstKind::Sync(c) => lock(c).is_fired(),
            InstKind::Serial(..) => self.serial_is_identity(),
            // A box stage (`deep`) asks at every hop: no call.
            _ => false,
        }
    }

    /// [`Inst::is_identity`] of a serial composition.
    #[cold]
    fn serial_is_identity(&self) -> bool {
        // A work list, not recursion: the operand may be a long serial chain.
        let mut todo: Vec<&Inst> = vec![self];
        while let Some(i) = todo.pop() {
            match &i.kind {
                InstKind::Identity => {}
                InstKind::Sync(c) if lock(c).is_fired() => {}
                InstKind::Serial(a, b) => todo.extend([&**b, &**a]),
                _ => return false,
            }
        }
        true
    }

    fn collector(&self) -> Option<&Mutex<Collector>> {
        match &self.kind {
            InstKind::Parallel { coll, .. }
            | InstKind::Star { coll, .. }
            | InstKind::Split { coll, .. } => coll.as_deref(),
            _ => None,
        }
    }

    /// Completes input `seq` of this instance's collector; true if records were
    /// released (the caller must drain).
    pub(crate) fn collector_complete(&self, seq: u64) -> bool {
        match self.collector() {
            Some(c) => lock(c).complete(seq),
            None => false,
        }
    }

    /// Claims the drain of this instance's collector (see [`Collector`]).
    pub(crate) fn start_drain(&self) -> bool {
        self.collector().is_some_and(|c| lock(c).start_drain())
    }

    /// The next record leaving this instance's collector, or `None` (drain ends).
    pub(crate) fn pop_out(&self) -> Option<Token> {
        self.collector().and_then(|c| lock(c).pop_out())
    }

    /// Allocates the sequence number for a record entering this deterministic
    /// instance, if it orders its output.
    pub(crate) fn enter_seq(&self) -> Option<u64> {
        let c = self.collector()?;
        let mut g = lock(c);
        (g.mode() == CollectorMode::Ordered).then(|| g.next_seq())
    }

    /// Hands a record leaving this instance to its collector. Returns `Err(tok)` if
    /// the instance has no collector (the record just leaves), else `Ok(())`: the
    /// record is queued or buffered; this instance is pushed onto `released` if its
    /// output queue grew, together with collectors whose frames completed.
    pub(crate) fn collect(
        self: &Arc<Inst>,
        mut tok: Token,
        released: &mut crate::det::Released,
    ) -> Result<(), Token> {
        let Some(c) = self.collector() else {
            return Err(tok);
        };
        let own = tok
            .ctx
            .as_ref()
            .filter(|f| Arc::ptr_eq(f.owner(), self))
            .cloned();
        match own {
            Some(frame) => {
                let parent = frame.parent().clone();
                crate::det::ctx_add(&parent, 1);
                tok.ctx = parent;
                if lock(c).accept(frame.seq(), tok) {
                    released.push(self.clone());
                }
                crate::det::ctx_release(&Some(frame), released);
            }
            // A data record in an initialiser gate: input 1 waits for input 0.
            None => {
                if lock(c).accept(1, tok) {
                    released.push(self.clone());
                }
            }
        }
        Ok(())
    }

    /// Records still held in synchrocells below this instance (end of run); drops them.
    pub fn discard_stored(self: &Arc<Inst>) -> usize {
        let mut n = 0;
        let mut stack = vec![self.clone()];
        while let Some(i) = stack.pop() {
            match &i.kind {
                InstKind::Sync(c) => n += lock(c).discard(),
                InstKind::Serial(a, b) => {
                    stack.push(a.clone());
                    stack.push(b.clone());
                }
                InstKind::Parallel { branches, .. } => stack.extend(branches.iter().cloned()),
                InstKind::Feedback(b) => stack.push(b.clone()),
                InstKind::Star { first, .. } => {
                    let mut s = lock(first).clone();
                    while let Some(st) = s {
                        s = st.next_stage.get().cloned();
                        stack.push(st);
                    }
                }
                InstKind::Split { replicas, .. } => {
                    stack.extend(lock(&**replicas).live.values().cloned())
                }
                InstKind::Box(..) | InstKind::Filter | InstKind::Identity | InstKind::Observe => {}
            }
        }
        n
    }
}
