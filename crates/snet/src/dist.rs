//! Distributed runs (spec §16): one program on several nodes (processes, or thread
//! groups of one process), placement deciding where each entity runs.
//!
//! The semantics core does the routing ([`snet_core::Dist`]): a record whose walk
//! reaches an instance homed on another node leaves the walk there (a *hop*) and is
//! handed to this module, which carries it to that node, where it continues its walk at
//! the instance's path. Every node runs the same program on its own engine; node 0
//! reads the global input and writes the global output (a record leaving the network
//! on another node hops to node 0).
//!
//! # Node runtime
//!
//! Each node has one inbox (a channel) into which everything it must react to is put:
//! records arriving from other nodes, node 0's input records (read by a thread of their
//! own), the termination protocol's messages, faults, and wake-ups from its engine. The
//! engine reads it through [`NodeSource`], its [`RecordSource`], when it asks for input.
//!
//! # Termination (no timeouts)
//!
//! Counting waves (Mattern's double counting): every node counts the records it sent to
//! and received from other nodes. Once its input has ended and it is idle, node 0
//! sends a probe to every node; a node answers with its two counts when it is idle
//! (nothing queued, nothing running, no arrival waiting). When two consecutive waves
//! give the same totals with as many records received as sent, no record is anywhere:
//! node 0 tells every node to stop, and each engine sees the end of its input. An
//! engine that becomes idle while its reader waits wakes it ([`Dist::became_idle`]),
//! so waiting is always on an event, never on a clock.
//!
//! # Flow control (bounded memory across nodes)
//!
//! Every crossing is a stream with a window: a node may have at most
//! [`FlowConfig::window`] hops to one other node that the receiver's engine has not
//! taken yet. The receiver returns credit ([`Msg::Credit`]) as its engine takes them.
//! A node with a full window (or one that has not drained to half of it since) is
//! *congested*; it tells node 0 ([`Msg::Congested`]), which stops admitting global input
//! until no node is congested, and never holds more than [`FlowConfig::input_ahead`]
//! input records read ahead of its engine. Sends themselves never wait: a record
//! already inside the network always moves (a placed feedback loop cannot deadlock on
//! a full window), only new input waits. So the records queued between nodes are at
//! most about `window` per pair of nodes plus what the input admitted while the news of
//! a full window travelled, times what one input record can become; see
//! `docs/decisions.md` (decision 48).
//!
//! # Faults
//!
//! A node whose run fails sends the error to every other node; each ends its run with
//! an error naming the node and the cause, the next time its engine asks for input.

pub mod transport;

use snet_core::walk::Arrival;
use snet_core::{Dist, Incoming, Record, RecordSource, RunError};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// What moves between nodes (and into a node's own inbox).
#[derive(Debug)]
pub enum Msg {
    /// Node 0: a global input record (from its reader thread).
    Input(Record),
    /// Node 0: the global input ended.
    InputEnd,
    /// Node 0: the global input failed.
    InputFailed(RunError),
    /// A record continuing its walk here (or only an instance to create), from node
    /// `from`.
    Hop {
        /// The sending node (owed credit when the engine takes the hop).
        from: u32,
        /// What continues here.
        a: Arrival,
    },
    /// Node `from`'s engine took `n` more of this node's hops to it, of `bytes` bytes
    /// of payload (flow control).
    Credit {
        /// The node that took them.
        from: u32,
        /// How many.
        n: u64,
        /// Their payload bytes (as [`hop_bytes`] counts them).
        bytes: u64,
    },
    /// Node `node` has a full window to some node (`on`), or no longer (sent to node
    /// 0, which admits input only while no node is congested).
    Congested {
        /// The node.
        node: u32,
        /// Congested now.
        on: bool,
    },
    /// Termination wave `w` from node 0.
    Probe(u64),
    /// A node's answer to probe `wave`: records sent to and received from other nodes.
    Report {
        /// The wave answered.
        wave: u64,
        /// Records this node sent to others so far.
        sent: u64,
        /// Records this node received from others so far.
        received: u64,
    },
    /// Observer `oid`'s report, formatted on another node, for node 0 to write.
    Observe {
        /// The observer.
        oid: u32,
        /// The report.
        doc: Vec<u8>,
    },
    /// A node's figures at the end of its run, for node 0's `--stats` totals (the
    /// counters [`stats_values`] lists, in its order).
    Stats {
        /// The node.
        node: u32,
        /// Its counters.
        values: Vec<u64>,
    },
    /// Node `node`'s figures so far, for node 0's `--progress` line (sent four times a
    /// second while the run goes on; taken by node 0's receiver as it arrives).
    Progress {
        /// The node.
        node: u32,
        /// Its per-box counters so far.
        values: Vec<u64>,
    },
    /// Several messages that arrived together, in order (one wake-up for all).
    Many(Vec<Msg>),
    /// The run has ended everywhere.
    Stop,
    /// The engine became idle (a node's own wake-up).
    Wake,
    /// The engine is stopping on a failure of its own: its source ends.
    Interrupt,
    /// Node `node` runs the program and box code with this fingerprint (sent to node
    /// 0 at the start: every node must run the same, spec §16.3).
    Hello {
        /// The sending node.
        node: u32,
        /// Its fingerprint of program and box code.
        fingerprint: u64,
    },
    /// Node `node` failed with `message`: the whole run ends.
    Fault {
        /// The failed node.
        node: u32,
        /// What went wrong there.
        message: String,
    },
}

/// The size of a hop for flow control: its record's payload bytes plus a fixed cost
/// per record (what sender and receiver compute alike).
pub fn hop_bytes(a: &Arrival) -> u64 {
    match &a.what {
        snet_core::walk::ArrivalKind::Record(r) => r.payload_bytes() as u64 + 64,
        _ => 64,
    }
}

/// Carries messages to other nodes (an in-process group, or MPI).
pub trait Link: Send + Sync {
    /// Queues `m` for node `to` (never blocks on the receiver; FIFO per pair of nodes).
    fn send(&self, to: u32, m: Msg) -> Result<(), String>;
}

/// The in-process transport: nodes are thread groups of this process, joined by
/// channels.
#[derive(Debug, Clone)]
pub struct LocalLink {
    inboxes: Vec<Sender<Msg>>,
}

impl Link for LocalLink {
    fn send(&self, to: u32, m: Msg) -> Result<(), String> {
        self.inboxes
            .get(to as usize)
            .ok_or_else(|| format!("node {to} does not exist"))?
            .send(m)
            .map_err(|_| format!("node {to} has ended"))
    }
}

/// Makes the inboxes of `n` in-process nodes: the link to all of them, and each node's
/// receiving end.
pub fn local_group(n: u32) -> (LocalLink, Vec<Receiver<Msg>>) {
    let (txs, rxs) = (0..n).map(|_| channel()).unzip();
    (LocalLink { inboxes: txs }, rxs)
}

/// The flow-control settings of a distributed run (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowConfig {
    /// Hops to one other node not yet taken by its engine, at most (a node with this
    /// many is congested until it has at most half as many).
    pub window: u64,
    /// The same bound in payload bytes ([`hop_bytes`]).
    pub window_bytes: u64,
    /// Global input records read ahead of node 0's engine, at most.
    pub input_ahead: usize,
}

impl Default for FlowConfig {
    fn default() -> FlowConfig {
        FlowConfig {
            window: 1024,
            window_bytes: 2 << 20,
            input_ahead: 64,
        }
    }
}

/// Node 0's admission of global input: the reader thread waits here while the engine
/// has enough records read ahead or some node is congested.
#[derive(Debug, Default)]
pub struct Gate {
    state: Mutex<GateState>,
    cv: std::sync::Condvar,
}

#[derive(Debug, Default)]
struct GateState {
    /// Input records handed to the inbox and not yet taken by the engine.
    ahead: usize,
    /// The nodes congested now.
    congested: std::collections::BTreeSet<u32>,
    /// The run is ending: admit everything (the reader stops on its own).
    closed: bool,
    /// Most records ever read ahead at once, and times the reader waited for a
    /// congested node (figures for `--stats`).
    waits: u64,
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until one more input record may be read ahead (`limit` at most ahead, no
    /// node congested), and counts it.
    pub fn admit(&self, limit: usize) {
        let mut g = self.lock();
        let mut waited = false;
        while !g.closed && (g.ahead >= limit || !g.congested.is_empty()) {
            if !g.congested.is_empty() && !waited {
                waited = true;
                g.waits += 1;
            }
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        g.ahead += 1;
    }

    /// The engine took one input record. The reader is woken when half of what it
    /// may read ahead has been taken (not for every record: a wake-up per record cost
    /// more than the records).
    fn taken(&self, limit: usize) {
        let mut g = self.lock();
        g.ahead = g.ahead.saturating_sub(1);
        let wake = g.ahead == limit / 2;
        drop(g);
        if wake {
            self.cv.notify_all();
        }
    }

    /// Node `node` is congested (`on`) or not.
    fn set(&self, node: u32, on: bool) {
        let mut g = self.lock();
        let changed = if on {
            g.congested.insert(node)
        } else {
            g.congested.remove(&node)
        };
        drop(g);
        if changed {
            self.cv.notify_all();
        }
    }

    /// Opens the gate for good (the run ends).
    pub fn close(&self) {
        self.lock().closed = true;
        self.cv.notify_all();
    }

    /// Times the input waited for a congested node.
    pub fn waits(&self) -> u64 {
        self.lock().waits
    }
}

/// One node of a distributed run: what the semantics core calls to send records on.
pub struct Node {
    me: u32,
    nodes: u32,
    link: Arc<dyn Link>,
    /// This node's own inbox (for wake-ups).
    own: Mutex<Sender<Msg>>,
    sent: AtomicU64,
    received: AtomicU64,
    /// A wake-up is in the inbox and not yet read (one is enough).
    wake_pending: std::sync::atomic::AtomicBool,
    flow: FlowConfig,
    /// Hops to each node that its engine has not taken yet, and their bytes.
    unacked: Vec<AtomicU64>,
    unacked_bytes: Vec<AtomicU64>,
    /// Whether this node is congested (as last told), under its lock.
    congested: Mutex<bool>,
    /// Node 0's input admission (every node has one; only node 0's is used).
    pub(crate) gate: Arc<Gate>,
    /// Most hops ever waiting for credit to one node (a `--stats` figure).
    peak_unacked: AtomicU64,
    /// Node 0: the run's observers (reports of other nodes are written here).
    observers: std::sync::OnceLock<Arc<snet_core::observe::Observers>>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("me", &self.me)
            .field("nodes", &self.nodes)
            .field("sent", &self.sent)
            .field("received", &self.received)
            .finish()
    }
}

impl Node {
    /// Node `me` of `nodes`, sending through `link`; `own` is its inbox's sending end.
    pub fn new(
        me: u32,
        nodes: u32,
        link: Arc<dyn Link>,
        own: Sender<Msg>,
        flow: FlowConfig,
    ) -> Arc<Node> {
        Arc::new(Node {
            me,
            nodes,
            link,
            own: Mutex::new(own),
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
            wake_pending: Default::default(),
            flow: FlowConfig {
                window: flow.window.max(2),
                window_bytes: flow.window_bytes.max(2),
                input_ahead: flow.input_ahead.max(1),
            },
            unacked: (0..nodes).map(|_| AtomicU64::new(0)).collect(),
            unacked_bytes: (0..nodes).map(|_| AtomicU64::new(0)).collect(),
            congested: Mutex::new(false),
            gate: Arc::default(),
            peak_unacked: AtomicU64::new(0),
            observers: std::sync::OnceLock::new(),
        })
    }

    /// Most hops that ever waited for credit to one node.
    pub fn peak_unacked(&self) -> u64 {
        self.peak_unacked.load(Ordering::Relaxed)
    }

    /// Re-evaluates whether this node is congested (a window full; cleared once every
    /// window is at most half full) and tells node 0 when that changed.
    fn update_congestion(&self) -> Result<(), RunError> {
        let mut c = self.congested.lock().unwrap_or_else(|e| e.into_inner());
        let (w, wb) = (self.flow.window, self.flow.window_bytes);
        let over = |limit: fn(u64) -> u64| {
            self.unacked.iter().zip(&self.unacked_bytes).any(|(u, b)| {
                u.load(Ordering::SeqCst) >= limit(w) || b.load(Ordering::SeqCst) >= limit(wb)
            })
        };
        let now = if *c { over(|x| x / 2 + 1) } else { over(|x| x) };
        if now == *c {
            return Ok(());
        }
        *c = now;
        if self.me == 0 {
            self.gate.set(0, now);
            Ok(())
        } else {
            // Sent under the lock: node 0 sees this node's changes in order.
            Node::send(
                self,
                0,
                Msg::Congested {
                    node: self.me,
                    on: now,
                },
            )
        }
    }

    /// Node `from` took `n` of our hops, of `bytes` bytes.
    fn credit(&self, from: u32, n: u64, bytes: u64) -> Result<(), RunError> {
        let (Some(u), Some(b)) = (
            self.unacked.get(from as usize),
            self.unacked_bytes.get(from as usize),
        ) else {
            return Ok(());
        };
        u.fetch_sub(n.min(u.load(Ordering::SeqCst)), Ordering::SeqCst);
        b.fetch_sub(bytes.min(b.load(Ordering::SeqCst)), Ordering::SeqCst);
        if *self.congested.lock().unwrap_or_else(|e| e.into_inner()) {
            return self.update_congestion();
        }
        Ok(())
    }

    /// Tells every other node that this one failed (best effort: they may be gone).
    pub fn broadcast_fault(&self, message: &str) {
        for to in (0..self.nodes).filter(|n| *n != self.me) {
            let _ = self.link.send(
                to,
                Msg::Fault {
                    node: self.me,
                    message: message.to_owned(),
                },
            );
        }
    }

    pub(crate) fn send(&self, to: u32, m: Msg) -> Result<(), RunError> {
        self.link.send(to, m).map_err(|e| {
            RunError::new(
                format!("node {}", self.me),
                None,
                format!("cannot send to node {to}: {e}"),
            )
        })
    }
}

impl Dist for Node {
    fn me(&self) -> u32 {
        self.me
    }

    fn nodes(&self) -> u32 {
        self.nodes
    }

    fn send(&self, to: u32, a: Arrival) -> Result<(), RunError> {
        // Counted before it can arrive (the termination waves compare the totals).
        self.sent.fetch_add(1, Ordering::SeqCst);
        // A pointer has no meaning on another node: refused on every transport alike
        // (in one process it would work under `local:N` and fail under MPI).
        if let snet_core::walk::ArrivalKind::Record(r) = &a.what {
            if let Some((l, _)) = r.fields().iter().find(|(_, v)| {
                v.as_ref()
                    .is_some_and(|v| v.ctype() == snet_core::CType::Pointer)
            }) {
                return Err(RunError::new(
                    format!("node {}", self.me),
                    Some(r.describe()),
                    format!("field {l} holds a pointer value, which cannot move to another node (node {to})"),
                ));
            }
        }
        let size = hop_bytes(&a);
        let (waiting, bytes) = match (
            self.unacked.get(to as usize),
            self.unacked_bytes.get(to as usize),
        ) {
            (Some(u), Some(b)) => (
                u.fetch_add(1, Ordering::SeqCst) + 1,
                b.fetch_add(size, Ordering::SeqCst) + size,
            ),
            _ => (0, 0),
        };
        Node::send(self, to, Msg::Hop { from: self.me, a })?;
        if waiting > self.peak_unacked.load(Ordering::Relaxed) {
            self.peak_unacked.fetch_max(waiting, Ordering::Relaxed);
        }
        // Never waits: a full window only holds back new input (see the module doc).
        if waiting == self.flow.window
            || (bytes >= self.flow.window_bytes && bytes - size < self.flow.window_bytes)
        {
            self.update_congestion()?;
        }
        Ok(())
    }

    fn became_idle(&self) {
        if !self.wake_pending.swap(true, Ordering::AcqRel) {
            let _ = self
                .own
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .send(Msg::Wake);
        }
    }

    fn observe(&self, oid: u32, doc: Vec<u8>) {
        // Best effort, like every observer write: a failure ends the run elsewhere.
        let _ = Node::send(self, 0, Msg::Observe { oid, doc });
    }

    fn attach_observers(&self, observers: Arc<snet_core::observe::Observers>) {
        let _ = self.observers.set(observers);
    }

    fn interrupt(&self) {
        let _ = self
            .own
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(Msg::Interrupt);
    }
}

/// The engine's source on one node: input records (node 0) and arrivals, until the
/// termination protocol says the run has ended everywhere.
pub struct NodeSource {
    node: Arc<Node>,
    inbox: Receiver<Msg>,
    /// What the engine has not taken yet, with the node a hop came from.
    queue: VecDeque<(Incoming, Option<u32>)>,
    /// Hops taken from each node and not yet credited back, and their bytes.
    owed: Vec<(u64, u64)>,
    /// Node 0: the global input has ended (other nodes have none).
    input_done: bool,
    stopped: bool,
    /// A probe to answer once idle (nodes other than 0).
    probe: Option<u64>,
    /// Node 0: the wave in progress, reports still missing, totals so far.
    wave: u64,
    wave_open: bool,
    missing: u32,
    totals: (u64, u64),
    previous: Option<(u64, u64)>,
    /// Node 0: the fingerprint the other nodes' must equal (`None`: not checked).
    pub(crate) fingerprint: Option<u64>,
    /// Node 0: the other nodes' figures, as they arrive after the run ([`Msg::Stats`]).
    gathered: Vec<Option<Vec<u64>>>,
}

impl std::fmt::Debug for NodeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeSource")
            .field("node", &self.node.me)
            .field("queued", &self.queue.len())
            .finish()
    }
}

impl NodeSource {
    /// The source of `node`, reading its `inbox`.
    pub fn new(node: Arc<Node>, inbox: Receiver<Msg>) -> NodeSource {
        let n = node.nodes as usize;
        let input_done = node.me != 0;
        NodeSource {
            owed: vec![(0, 0); node.nodes as usize],
            node,
            inbox,
            queue: VecDeque::new(),
            input_done,
            stopped: false,
            probe: None,
            wave: 0,
            wave_open: false,
            missing: 0,
            totals: (0, 0),
            previous: None,
            fingerprint: None,
            gathered: vec![None; n],
        }
    }

    fn counts(&self) -> (u64, u64) {
        (
            self.node.sent.load(Ordering::SeqCst),
            self.node.received.load(Ordering::SeqCst),
        )
    }

    /// Node 0, idle with its input read: the next wave, or the end if the last two
    /// agree.
    fn wave_step(&mut self) -> Result<bool, RunError> {
        if self.wave_open {
            if self.missing > 0 {
                return Ok(false);
            }
            self.wave_open = false;
            let t = self.totals;
            if t.0 == t.1 && self.previous == Some(t) {
                for to in 1..self.node.nodes {
                    self.node.send(to, Msg::Stop)?;
                }
                return Ok(true);
            }
            self.previous = Some(t);
        }
        // A new wave: our own counts now (we are idle), the others' when they are.
        self.wave += 1;
        self.wave_open = true;
        self.missing = self.node.nodes - 1;
        self.totals = self.counts();
        for to in 1..self.node.nodes {
            self.node.send(to, Msg::Probe(self.wave))?;
        }
        Ok(false)
    }

    /// Returns the credit owed to every node (`all`), or to those owed a quarter
    /// window or more.
    fn pay(&mut self, all: bool) -> Result<(), RunError> {
        for from in 0..self.owed.len() {
            let (n, bytes) = self.owed[from];
            if n > 0 && (all || self.owes_batch(n, bytes)) {
                self.owed[from] = (0, 0);
                let from = from as u32;
                if from == self.node.me {
                    self.node.credit(from, n, bytes)?;
                } else {
                    self.node.send(
                        from,
                        Msg::Credit {
                            from: self.node.me,
                            n,
                            bytes,
                        },
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Enough is owed to one node to credit it now (an eighth of either window).
    fn owes_batch(&self, n: u64, bytes: u64) -> bool {
        n >= (self.node.flow.window / 8).max(1) || bytes >= self.node.flow.window_bytes / 8
    }

    /// The next thing for the engine, if one is queued (credit owed for a hop, the
    /// gate told of an input record).
    fn pop(&mut self) -> Result<Option<Incoming>, RunError> {
        let Some((x, from)) = self.queue.pop_front() else {
            return Ok(None);
        };
        match from {
            Some(f) => {
                let size = match &x {
                    Incoming::Arrival(a) => hop_bytes(a),
                    Incoming::Record(_) => 0,
                };
                if let Some(o) = self.owed.get_mut(f as usize) {
                    o.0 += 1;
                    o.1 += size;
                    let (n, bytes) = *o;
                    if self.owes_batch(n, bytes) {
                        self.pay(false)?;
                    }
                }
            }
            None => {
                if matches!(x, Incoming::Record(_)) {
                    self.node.gate.taken(self.node.flow.input_ahead);
                }
            }
        }
        Ok(Some(x))
    }

    fn handle(&mut self, m: Msg) -> Result<(), RunError> {
        match m {
            Msg::Input(r) => self.queue.push_back((Incoming::Record(r), None)),
            Msg::InputEnd => self.input_done = true,
            Msg::InputFailed(e) => return Err(e),
            Msg::Hop { from, a } => {
                self.node.received.fetch_add(1, Ordering::SeqCst);
                self.queue.push_back((Incoming::Arrival(a), Some(from)));
            }
            Msg::Credit { from, n, bytes } => self.node.credit(from, n, bytes)?,
            Msg::Congested { node, on } => self.node.gate.set(node, on),
            Msg::Probe(w) => self.probe = Some(w),
            Msg::Report {
                wave,
                sent,
                received,
            } => {
                if self.wave_open && wave == self.wave {
                    self.totals.0 += sent;
                    self.totals.1 += received;
                    self.missing = self.missing.saturating_sub(1);
                }
            }
            Msg::Observe { oid, doc } => {
                if let Some(o) = self.node.observers.get() {
                    o.write_forwarded(oid, &doc);
                }
            }
            Msg::Stats { node, values } => {
                if let Some(slot) = self.gathered.get_mut(node as usize) {
                    *slot = Some(values);
                }
            }
            Msg::Many(v) => {
                for m in v {
                    self.handle(m)?;
                }
            }
            // Taken by the receiver; a late one is of no use any more.
            Msg::Progress { .. } => {}
            Msg::Stop => self.stopped = true,
            Msg::Hello { node, fingerprint } => {
                if self.fingerprint.is_some_and(|f| f != fingerprint) {
                    return Err(RunError::new(
                        format!("node {node}"),
                        None,
                        "it runs another program or other box code than node 0 (fingerprints differ): every node must run the same program with the same box sources (spec §16.3)",
                    ));
                }
            }
            Msg::Wake => self.node.wake_pending.store(false, Ordering::Release),
            // The engine has the error; the node tells the others when it returns it.
            Msg::Interrupt => self.stopped = true,
            Msg::Fault { node, message } => {
                return Err(RunError::new(
                    format!("node {node}"),
                    None,
                    format!("the run failed there: {message}"),
                ))
            }
        }
        Ok(())
    }
}

impl RecordSource for NodeSource {
    fn next_record(&mut self) -> Result<Option<Record>, RunError> {
        // Engines of a distributed run read `next_incoming`; a plain record reader
        // gets the input records only.
        match self.next_incoming(&|| true)? {
            None => Ok(None),
            Some(Incoming::Record(r)) => Ok(Some(r)),
            Some(Incoming::Arrival(_)) => Err(RunError::new(
                "distributed run",
                None,
                "this engine cannot take records from other nodes",
            )),
        }
    }

    fn next_incoming(&mut self, idle: &dyn Fn() -> bool) -> Result<Option<Incoming>, RunError> {
        loop {
            // Everything already in the inbox first (FIFO with what was queued).
            while let Ok(m) = self.inbox.try_recv() {
                self.handle(m)?;
            }
            if let Some(x) = self.pop()? {
                return Ok(Some(x));
            }
            if self.stopped {
                self.node.gate.close();
                return Ok(None);
            }
            // Nothing queued: every hop taken is credited before this node waits.
            self.pay(true)?;
            if idle() {
                if let Some(w) = self.probe.take() {
                    let (sent, received) = self.counts();
                    self.node.send(
                        0,
                        Msg::Report {
                            wave: w,
                            sent,
                            received,
                        },
                    )?;
                }
                if self.node.me == 0 && self.input_done {
                    // A wave with no report to wait for (one node) completes at once.
                    loop {
                        if self.wave_step()? {
                            self.node.gate.close();
                            return Ok(None);
                        }
                        if !(self.wave_open && self.missing == 0) {
                            break;
                        }
                    }
                }
            }
            // Wait for the next event: a record, a report, a probe, a wake-up.
            match self.inbox.recv() {
                Ok(m) => self.handle(m)?,
                Err(_) => {
                    return Err(RunError::new(
                        format!("node {}", self.node.me),
                        None,
                        "the node's inbox closed",
                    ))
                }
            }
        }
    }
}

/// How many numbers [`stats_values`] gives.
pub const STATS_VALUES: usize = 16;

/// The counters of `st` that a node sends node 0 at the end of its run.
pub fn stats_values(st: &snet_core::RunStats) -> Vec<u64> {
    vec![
        st.records_in,
        st.records_out,
        st.box_calls,
        st.records_created,
        st.records_consumed,
        st.records_stored,
        st.sync_merges,
        st.discarded_in_sync,
        st.entities_created,
        st.peak_in_flight,
        st.records_sent,
        st.records_received,
        st.bytes_sent,
        st.bytes_received,
        st.peak_unacked,
        st.input_waits,
    ]
}

/// The figures [`stats_values`] made.
pub fn stats_from_values(v: &[u64]) -> snet_core::RunStats {
    let g = |i: usize| v.get(i).copied().unwrap_or(0);
    snet_core::RunStats {
        records_in: g(0),
        records_out: g(1),
        box_calls: g(2),
        records_created: g(3),
        records_consumed: g(4),
        records_stored: g(5),
        sync_merges: g(6),
        discarded_in_sync: g(7),
        entities_created: g(8),
        peak_in_flight: g(9),
        records_sent: g(10),
        records_received: g(11),
        bytes_sent: g(12),
        bytes_received: g(13),
        peak_unacked: g(14),
        input_waits: g(15),
        ..Default::default()
    }
}

impl NodeSource {
    /// Node 0, after its run: waits (at most `limit`) for every other node's figures
    /// (the [`stats_values`] and what follows them) and returns them, node 1 first
    /// (`None` for a node whose figures did not come).
    pub fn gather_stats(&mut self, limit: std::time::Duration) -> Vec<Option<Vec<u64>>> {
        let end = std::time::Instant::now() + limit;
        while self.gathered.iter().skip(1).any(Option::is_none) {
            let left = end.saturating_duration_since(std::time::Instant::now());
            match self.inbox.recv_timeout(left) {
                // Figures are filed by `handle`, like during the run; anything else
                // that comes after the end has no effect on the result.
                Ok(m) => {
                    let _ = self.handle(m);
                }
                Err(_) => break,
            }
        }
        std::mem::take(&mut self.gathered)
            .into_iter()
            .skip(1)
            .collect()
    }
}

/// Node 0's input reader: reads `src` on a thread of its own and puts its records
/// into the node's inbox, then [`Msg::InputEnd`] (or the error).
pub fn spawn_input_reader(
    mut src: Box<dyn RecordSource>,
    inbox: Sender<Msg>,
    gate: Arc<Gate>,
    ahead: usize,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("snet-dist-input".into())
        .spawn(move || loop {
            // Admitted before it is read: a record read is a record held.
            gate.admit(ahead);
            match src.next_record() {
                Ok(Some(r)) => {
                    if inbox.send(Msg::Input(r)).is_err() {
                        return;
                    }
                }
                Ok(None) => {
                    let _ = inbox.send(Msg::InputEnd);
                    return;
                }
                Err(e) => {
                    let _ = inbox.send(Msg::InputFailed(e));
                    return;
                }
            }
        })
}

/// A sink for nodes other than 0: the global output is on node 0 (a record leaving the
/// network elsewhere hops there), so nothing may arrive here.
#[derive(Debug)]
struct NoOutput(u32);

impl snet_core::RecordSink for NoOutput {
    fn write_record(&mut self, rec: Record) -> Result<(), RunError> {
        Err(RunError::new(
            format!("node {}", self.0),
            Some(format!("{rec:?}")),
            "internal error: the global output is on node 0",
        ))
    }
}

/// Runs `engine` as the node of `src` (its input and arrivals from `src`, its hops
/// through the node); a failure, a panic included, is told to every other node (spec
/// §16.6: no node may wait for a node that has ended).
pub(crate) fn run_engine(
    src: &mut NodeSource,
    engine: &dyn snet_core::Engine,
    net: &snet_core::Net,
    boxes: &snet_core::BoxTable,
    output: &mut dyn snet_core::RecordSink,
    workers: usize,
) -> NodeResult {
    let node = src.node.clone();
    let mut opts = snet_core::RunOptions::new(workers);
    opts.dist = Some(node.clone());
    let run = || engine.run(net, boxes, src, output, &opts);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
    // The reader must not wait for a gate nobody opens any more.
    node.gate.close();
    let mut r = r.unwrap_or_else(|p| {
        let msg = snet_core::box_call::panic_message(&*p);
        Err(RunError::new(
            format!("node {}", node.me),
            None,
            format!("internal error (panic): {msg}"),
        ))
    });
    match &mut r {
        Err(err) => {
            // An error of this node's own names the node (spec §16.6); one told by
            // another node names that one already.
            if !err.entity.starts_with("node ") && err.entity != "distributed run" {
                err.entity = format!("node {}: {}", node.me, err.entity);
            }
            // A fault told by another node is not told on again.
            if !err.message.starts_with("the run failed there") {
                node.broadcast_fault(&err.to_string());
            }
        }
        Ok(st) => {
            st.peak_unacked = node.peak_unacked();
            st.input_waits = node.gate.waits();
        }
    }
    r
}

/// The result of one node of a distributed run.
pub type NodeResult = Result<snet_core::RunStats, RunError>;

/// Runs `net` with `boxes` as `nodes` in-process nodes (thread groups; spec §16 with
/// the local transport), each on an engine made by `engine`. Node 0 reads `input` and
/// writes `output`. Returns each node's result, node 0 first; the first failure
/// (anywhere) is also reported to every other node, which then ends its run.
#[allow(clippy::too_many_arguments)]
pub fn run_local(
    net: &snet_core::Net,
    boxes: &[snet_core::BoxTable],
    engine: &(dyn Fn(u32) -> Box<dyn snet_core::Engine> + Sync),
    nodes: u32,
    input: Box<dyn RecordSource>,
    output: &mut dyn snet_core::RecordSink,
    workers: usize,
    flow: FlowConfig,
) -> Vec<NodeResult> {
    let nodes = nodes.max(1);
    let (link, inboxes) = local_group(nodes);
    let own: Vec<Sender<Msg>> = link.inboxes.clone();
    let link: Arc<dyn Link> = Arc::new(link);
    let mut inboxes: Vec<Option<Receiver<Msg>>> = inboxes.into_iter().map(Some).collect();
    let make = |me: u32, inbox: Receiver<Msg>| {
        NodeSource::new(
            Node::new(me, nodes, link.clone(), own[me as usize].clone(), flow),
            inbox,
        )
    };
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for me in 1..nodes {
            let inbox = inboxes[me as usize].take().expect("each inbox once");
            let mut src = make(me, inbox);
            let boxes = &boxes[(me as usize).min(boxes.len() - 1)];
            handles.push(
                std::thread::Builder::new()
                    .name(format!("snet-node-{me}"))
                    .stack_size(64 << 20)
                    .spawn_scoped(scope, move || {
                        run_engine(
                            &mut src,
                            &*engine(me),
                            net,
                            boxes,
                            &mut NoOutput(me),
                            workers,
                        )
                    }),
            );
        }
        let inbox = inboxes[0].take().expect("node 0's inbox");
        let mut src = make(0, inbox);
        let reader = spawn_input_reader(
            input,
            own[0].clone(),
            src.node.gate.clone(),
            src.node.flow.input_ahead,
        );
        let r0 = match reader {
            Ok(_) => run_engine(&mut src, &*engine(0), net, &boxes[0], output, workers),
            Err(e) => {
                let err = RunError::new(
                    "node 0",
                    None,
                    format!("cannot start the input reader: {e}"),
                );
                src.node.broadcast_fault(&err.to_string());
                Err(err)
            }
        };
        let mut all = vec![r0];
        for h in handles {
            all.push(match h {
                Ok(h) => h.join().unwrap_or_else(|_| {
                    Err(RunError::new(
                        "distributed run",
                        None,
                        "a node thread panicked",
                    ))
                }),
                Err(e) => Err(RunError::new(
                    "distributed run",
                    None,
                    format!("cannot start a node thread: {e}"),
                )),
            });
        }
        all
    })
}
