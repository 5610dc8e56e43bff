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
    /// A record continuing its walk here (or only an instance to create).
    Hop(Arrival),
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
    pub fn new(me: u32, nodes: u32, link: Arc<dyn Link>, own: Sender<Msg>) -> Arc<Node> {
        Arc::new(Node {
            me,
            nodes,
            link,
            own: Mutex::new(own),
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
            wake_pending: Default::default(),
        })
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
        Node::send(self, to, Msg::Hop(a))
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
    queue: VecDeque<Incoming>,
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
        let input_done = node.me != 0;
        NodeSource {
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

    fn handle(&mut self, m: Msg) -> Result<(), RunError> {
        match m {
            Msg::Input(r) => self.queue.push_back(Incoming::Record(r)),
            Msg::InputEnd => self.input_done = true,
            Msg::InputFailed(e) => return Err(e),
            Msg::Hop(a) => {
                self.node.received.fetch_add(1, Ordering::SeqCst);
                self.queue.push_back(Incoming::Arrival(a));
            }
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
            if let Some(x) = self.queue.pop_front() {
                return Ok(Some(x));
            }
            if self.stopped {
                return Ok(None);
            }
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

/// Node 0's input reader: reads `src` on a thread of its own and puts its records
/// into the node's inbox, then [`Msg::InputEnd`] (or the error).
pub fn spawn_input_reader(
    mut src: Box<dyn RecordSource>,
    inbox: Sender<Msg>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("snet-dist-input".into())
        .spawn(move || loop {
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
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|p| {
        let msg = snet_core::box_call::panic_message(&*p);
        Err(RunError::new(
            format!("node {}", node.me),
            None,
            format!("internal error (panic): {msg}"),
        ))
    });
    if let Err(err) = &r {
        node.broadcast_fault(&err.to_string());
    }
    r
}

/// The result of one node of a distributed run.
pub type NodeResult = Result<snet_core::RunStats, RunError>;

/// Runs `net` with `boxes` as `nodes` in-process nodes (thread groups; spec §16 with
/// the local transport), each on an engine made by `engine`. Node 0 reads `input` and
/// writes `output`. Returns each node's result, node 0 first; the first failure
/// (anywhere) is also reported to every other node, which then ends its run.
pub fn run_local(
    net: &snet_core::Net,
    boxes: &[snet_core::BoxTable],
    engine: &(dyn Fn() -> Box<dyn snet_core::Engine> + Sync),
    nodes: u32,
    input: Box<dyn RecordSource>,
    output: &mut dyn snet_core::RecordSink,
    workers: usize,
) -> Vec<NodeResult> {
    let nodes = nodes.max(1);
    let (link, inboxes) = local_group(nodes);
    let own: Vec<Sender<Msg>> = link.inboxes.clone();
    let link: Arc<dyn Link> = Arc::new(link);
    let mut inboxes: Vec<Option<Receiver<Msg>>> = inboxes.into_iter().map(Some).collect();
    let make = |me: u32, inbox: Receiver<Msg>| {
        NodeSource::new(
            Node::new(me, nodes, link.clone(), own[me as usize].clone()),
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
                        run_engine(&mut src, &*engine(), net, boxes, &mut NoOutput(me), workers)
                    }),
            );
        }
        let inbox = inboxes[0].take().expect("node 0's inbox");
        let mut src = make(0, inbox);
        let reader = spawn_input_reader(input, own[0].clone());
        let r0 = match reader {
            Ok(_) => run_engine(&mut src, &*engine(), net, &boxes[0], output, workers),
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
