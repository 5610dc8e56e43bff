//! Nodes in separate processes: the node runtime over a byte [`Transport`] (MPI, or the
//! in-process [`snet_dist::transport::LocalTransport`] that tests use), with messages
//! encoded in the wire format of `snet_dist::wire` (labels announced per peer, values
//! bit for bit).

use super::{Link, Msg, Node, NodeSource};
use snet_core::walk::{Arrival, ArrivalKind, RemoteCtx};
use snet_core::{PathStep, RecordSource, RunError};
use snet_dist::transport::Transport;
use snet_dist::wire::{self, PeerDecoder, PeerEncoder, WireError};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

/// Message kinds on the wire (first byte).
const HOP: u8 = 0;
const PROBE: u8 = 1;
const REPORT: u8 = 2;
const STOP: u8 = 3;
const FAULT: u8 = 4;
const HELLO: u8 = 5;
const CREDIT: u8 = 6;
const CONGESTED: u8 = 7;
const OBSERVE: u8 = 8;
const STATS: u8 = 9;
const PROGRESS: u8 = 10;

/// A [`Link`] over a byte transport: one encoder per destination, used under its lock
/// so that what it encodes reaches that peer in order (the wire's stream rule).
pub struct TransportLink {
    t: Arc<dyn Transport>,
    encoders: Vec<Mutex<PeerEncoder>>,
    /// Bytes handed to the transport (the `--stats` figure of a node).
    bytes_sent: Arc<AtomicU64>,
}

impl std::fmt::Debug for TransportLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransportLink")
            .field("rank", &self.t.rank())
            .field("size", &self.t.size())
            .finish()
    }
}

impl TransportLink {
    /// The link of this process's rank of `t`.
    pub fn new(t: Arc<dyn Transport>) -> TransportLink {
        let encoders = (0..t.size())
            .map(|_| Mutex::new(PeerEncoder::new()))
            .collect();
        TransportLink {
            t,
            encoders,
            bytes_sent: Arc::default(),
        }
    }
}

/// A node's figures: kind, node, then the numbers.
fn put_values(out: &mut Vec<u8>, kind: u8, node: u32, values: &[u64]) {
    wire::put_u8(out, kind);
    wire::put_u32(out, node);
    wire::put_var(out, values.len() as u64);
    for &v in values {
        wire::put_u64(out, v);
    }
}

fn put_path(out: &mut Vec<u8>, path: &[PathStep]) {
    wire::put_var(out, path.len() as u64);
    for s in path {
        match s {
            PathStep::Left => wire::put_u8(out, 0),
            PathStep::Right => wire::put_u8(out, 1),
            PathStep::Branch(i) => {
                wire::put_u8(out, 2);
                wire::put_var(out, u64::from(*i));
            }
            PathStep::Stage(k) => {
                wire::put_u8(out, 3);
                wire::put_var(out, u64::from(*k));
            }
            PathStep::Replica(v) => {
                wire::put_u8(out, 4);
                wire::put_i32(out, *v);
            }
            PathStep::Body => wire::put_u8(out, 5),
        }
    }
}

fn get_path(input: &mut &[u8]) -> Result<Vec<PathStep>, WireError> {
    let n = wire::get_var(input)?;
    let mut path = Vec::with_capacity(n.min(1024) as usize);
    for _ in 0..n {
        let small =
            |v: u64| u32::try_from(v).map_err(|_| WireError::Overflow { what: "path step" });
        path.push(match wire::get_u8(input)? {
            0 => PathStep::Left,
            1 => PathStep::Right,
            2 => PathStep::Branch(small(wire::get_var(input)?)?),
            3 => PathStep::Stage(small(wire::get_var(input)?)?),
            4 => PathStep::Replica(wire::get_i32(input)?),
            5 => PathStep::Body,
            _ => {
                return Err(WireError::Overflow {
                    what: "path step kind",
                })
            }
        });
    }
    Ok(path)
}

impl Link for TransportLink {
    fn send(&self, to: u32, m: Msg) -> Result<(), String> {
        let enc = self
            .encoders
            .get(to as usize)
            .ok_or_else(|| format!("node {to} does not exist"))?;
        let mut enc = enc.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        match m {
            Msg::Hop { from: _, a } => {
                wire::put_u8(&mut out, HOP);
                put_path(&mut out, &a.path);
                wire::put_u8(&mut out, u8::from(a.leave));
                match a.ctx {
                    Some(c) => {
                        wire::put_u8(&mut out, 1);
                        wire::put_u32(&mut out, c.real.0);
                        wire::put_u64(&mut out, c.real.1);
                        wire::put_u32(&mut out, c.lender.0);
                        wire::put_u64(&mut out, c.lender.1);
                    }
                    None => wire::put_u8(&mut out, 0),
                }
                match &a.what {
                    ArrivalKind::Record(r) => {
                        wire::put_u8(&mut out, 0);
                        enc.encode_record(r, &mut out).map_err(|e| e.to_string())?;
                    }
                    ArrivalKind::Touch => wire::put_u8(&mut out, 1),
                    ArrivalKind::Init => wire::put_u8(&mut out, 2),
                    ArrivalKind::Repay { loan, units } => {
                        wire::put_u8(&mut out, 3);
                        wire::put_u64(&mut out, *loan);
                        wire::put_u64(&mut out, *units);
                    }
                }
            }
            Msg::Credit { from, n, bytes } => {
                wire::put_u8(&mut out, CREDIT);
                wire::put_u32(&mut out, from);
                wire::put_u64(&mut out, n);
                wire::put_u64(&mut out, bytes);
            }
            Msg::Congested { node, on } => {
                wire::put_u8(&mut out, CONGESTED);
                wire::put_u32(&mut out, node);
                wire::put_u8(&mut out, u8::from(on));
            }
            Msg::Probe(w) => {
                wire::put_u8(&mut out, PROBE);
                wire::put_u64(&mut out, w);
            }
            Msg::Report {
                wave,
                sent,
                received,
            } => {
                wire::put_u8(&mut out, REPORT);
                wire::put_u64(&mut out, wave);
                wire::put_u64(&mut out, sent);
                wire::put_u64(&mut out, received);
            }
            Msg::Stop => wire::put_u8(&mut out, STOP),
            Msg::Stats { node, values } => put_values(&mut out, STATS, node, &values),
            Msg::Progress { node, values } => put_values(&mut out, PROGRESS, node, &values),
            Msg::Observe { oid, doc } => {
                wire::put_u8(&mut out, OBSERVE);
                wire::put_u32(&mut out, oid);
                wire::put_bytes(&mut out, &doc);
            }
            Msg::Fault { node, message } => {
                wire::put_u8(&mut out, FAULT);
                wire::put_u32(&mut out, node);
                wire::put_bytes(&mut out, message.as_bytes());
            }
            Msg::Hello { node, fingerprint } => {
                wire::put_u8(&mut out, HELLO);
                wire::put_u32(&mut out, node);
                wire::put_u64(&mut out, fingerprint);
            }
            Msg::Input(_)
            | Msg::InputEnd
            | Msg::InputFailed(_)
            | Msg::Wake
            | Msg::Interrupt
            | Msg::Many(_) => {
                return Err("internal error: a node-local message sent to another node".into())
            }
        }
        self.bytes_sent
            .fetch_add(out.len() as u64, Ordering::Relaxed);
        self.t.send(to as usize, out).map_err(|e| e.to_string())
    }
}

fn decode(dec: &mut PeerDecoder, from: u32, mut input: &[u8]) -> Result<Msg, WireError> {
    let input = &mut input;
    Ok(match wire::get_u8(input)? {
        HOP => {
            let path = get_path(input)?;
            let leave = wire::get_u8(input)? != 0;
            let ctx = match wire::get_u8(input)? {
                0 => None,
                _ => Some(RemoteCtx {
                    real: (wire::get_u32(input)?, wire::get_u64(input)?),
                    lender: (wire::get_u32(input)?, wire::get_u64(input)?),
                }),
            };
            let what = match wire::get_u8(input)? {
                0 => ArrivalKind::Record(dec.decode_record(input)?),
                1 => ArrivalKind::Touch,
                2 => ArrivalKind::Init,
                3 => ArrivalKind::Repay {
                    loan: wire::get_u64(input)?,
                    units: wire::get_u64(input)?,
                },
                _ => {
                    return Err(WireError::Overflow {
                        what: "arrival kind",
                    })
                }
            };
            Msg::Hop {
                from,
                a: Arrival {
                    path,
                    leave,
                    what,
                    ctx,
                },
            }
        }
        PROBE => Msg::Probe(wire::get_u64(input)?),
        CREDIT => Msg::Credit {
            from: wire::get_u32(input)?,
            n: wire::get_u64(input)?,
            bytes: wire::get_u64(input)?,
        },
        CONGESTED => Msg::Congested {
            node: wire::get_u32(input)?,
            on: wire::get_u8(input)? != 0,
        },
        REPORT => Msg::Report {
            wave: wire::get_u64(input)?,
            sent: wire::get_u64(input)?,
            received: wire::get_u64(input)?,
        },
        STOP => Msg::Stop,
        kind @ (STATS | PROGRESS) => {
            let node = wire::get_u32(input)?;
            let n = wire::get_var(input)?.min(1 << 20);
            let mut values = Vec::with_capacity(n as usize);
            for _ in 0..n {
                values.push(wire::get_u64(input)?);
            }
            if kind == STATS {
                Msg::Stats { node, values }
            } else {
                Msg::Progress { node, values }
            }
        }
        OBSERVE => Msg::Observe {
            oid: wire::get_u32(input)?,
            doc: wire::get_bytes(input)?.to_vec(),
        },
        FAULT => Msg::Fault {
            node: wire::get_u32(input)?,
            message: String::from_utf8_lossy(wire::get_bytes(input)?).into_owned(),
        },
        HELLO => Msg::Hello {
            node: wire::get_u32(input)?,
            fingerprint: wire::get_u64(input)?,
        },
        _ => {
            return Err(WireError::Overflow {
                what: "message kind",
            })
        }
    })
}

/// Node 0's taker of the other nodes' progress reports (node, per-box counters).
pub type ProgressSink = Arc<dyn Fn(u32, Vec<u64>) + Send + Sync>;

/// Live figures of a distributed run for `--progress`: the other nodes send `report()`
/// four times a second, node 0 hands what arrives to `receive`.
#[derive(Clone)]
pub struct LiveProgress {
    /// This node's per-box counters so far.
    pub report: Arc<dyn Fn() -> Vec<u64> + Send + Sync>,
    /// Node 0: takes another node's report.
    pub receive: ProgressSink,
}

impl std::fmt::Debug for LiveProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiveProgress")
    }
}

/// A node's figures and, on node 0, every other node's (node 1 first: its
/// [`super::stats_values`] and the numbers that follow them; `None` if they did not
/// come).
pub type NodeFigures = (snet_core::RunStats, Vec<Option<Vec<u64>>>);

/// Moves what the transport receives into the node's inbox (one thread per node).
fn spawn_receiver(
    t: Arc<dyn Transport>,
    inbox: Sender<Msg>,
    bytes: Arc<AtomicU64>,
    on_progress: Option<ProgressSink>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    /// Messages handed to the node at once at most.
    const BATCH: usize = 256;
    std::thread::Builder::new()
        .name("snet-dist-recv".into())
        .spawn(move || {
            let mut decoders: Vec<PeerDecoder> =
                (0..t.size()).map(|_| PeerDecoder::new()).collect();
            let mut decode_one = |from: usize, msg: &[u8]| -> Option<Msg> {
                bytes.fetch_add(msg.len() as u64, Ordering::Relaxed);
                let d = decoders.get_mut(from)?;
                let m = decode(d, from as u32, msg).unwrap_or_else(|e| Msg::Fault {
                    node: from as u32,
                    message: format!("a message from node {from} could not be decoded: {e}"),
                });
                match (m, &on_progress) {
                    // Shown at once, whatever the engine is doing.
                    (Msg::Progress { node, values }, Some(f)) => {
                        f(node, values);
                        None
                    }
                    (Msg::Progress { .. }, None) => None,
                    (m, _) => Some(m),
                }
            };
            let failed = |e: snet_dist::transport::TransportError| Msg::Fault {
                node: t.rank() as u32,
                message: format!("the transport failed: {e} (a node may have died)"),
            };
            loop {
                // Wait for one message, then take what else has arrived: the node is
                // handed a batch (one wake-up), not each message on its own.
                let mut batch = Vec::new();
                let mut end = false;
                match t.recv() {
                    Ok(Some((from, msg))) => batch.extend(decode_one(from, &msg)),
                    Ok(None) => return,
                    Err(e) => {
                        let _ = inbox.send(failed(e));
                        return;
                    }
                }
                while batch.len() < BATCH {
                    match t.try_recv() {
                        Ok(Some((from, msg))) => batch.extend(decode_one(from, &msg)),
                        Ok(None) => break,
                        Err(e) => {
                            batch.push(failed(e));
                            end = true;
                            break;
                        }
                    }
                }
                let m = if batch.len() == 1 {
                    batch.pop().expect("one message")
                } else {
                    Msg::Many(batch)
                };
                if inbox.send(m).is_err() || end {
                    return;
                }
            }
        })
}

/// Runs this process's node of a distributed run over transport `t` (rank = node).
/// Node 0 reads `input` and writes `output`; the others get `None` for both. Nodes
/// whose `fingerprint` (of program and box code) differs from node 0's refuse to run.
/// Returns this node's figures and, on node 0, every other node's (node 1 first: its
/// [`super::stats_values`] followed by its `extra()` numbers).
#[allow(clippy::too_many_arguments)]
pub fn run_node(
    t: Arc<dyn Transport>,
    net: &snet_core::Net,
    boxes: &snet_core::BoxTable,
    engine: &dyn snet_core::Engine,
    input: Option<Box<dyn RecordSource>>,
    output: Option<&mut dyn snet_core::RecordSink>,
    workers: usize,
    fingerprint: u64,
    flow: super::FlowConfig,
    extra: &dyn Fn() -> Vec<u64>,
    live: Option<LiveProgress>,
) -> Result<NodeFigures, RunError> {
    let me = t.rank() as u32;
    let nodes = t.size() as u32;
    let (tx, rx) = std::sync::mpsc::channel();
    let tl = TransportLink::new(t.clone());
    let bytes_sent = tl.bytes_sent.clone();
    let bytes_received = Arc::new(AtomicU64::new(0));
    let link: Arc<dyn Link> = Arc::new(tl);
    let node = Node::new(me, nodes, link, tx.clone(), flow);
    let mut src = NodeSource::new(node.clone(), rx);
    src.fingerprint = Some(fingerprint);
    let io_err = |what: &str, e: std::io::Error| {
        RunError::new(
            format!("node {me}"),
            None,
            format!("cannot start {what}: {e}"),
        )
    };
    let on_progress = live.as_ref().filter(|_| me == 0).map(|l| l.receive.clone());
    let _recv = spawn_receiver(t.clone(), tx.clone(), bytes_received.clone(), on_progress)
        .map_err(|e| io_err("the receiver", e))?;
    // The other nodes report their figures to node 0 four times a second while the run
    // goes on (node 0's line is redrawn every 0.2 s, printed every second).
    let reporting = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let reporter = match live.filter(|_| me != 0) {
        Some(l) => {
            let (node, on) = (node.clone(), reporting.clone());
            std::thread::Builder::new()
                .name("snet-dist-progress".into())
                .spawn(move || {
                    // A first report at once: node 0's first interval then has a base.
                    while on.load(Ordering::Relaxed) {
                        let values = (l.report)();
                        if node.send(0, Msg::Progress { node: me, values }).is_err() {
                            break;
                        }
                        std::thread::park_timeout(std::time::Duration::from_millis(250));
                    }
                })
                .ok()
        }
        None => None,
    };
    if me != 0 {
        node.send(
            0,
            Msg::Hello {
                node: me,
                fingerprint,
            },
        )?;
    }
    let mut no_output = super::NoOutput(me);
    let output: &mut dyn snet_core::RecordSink = match output {
        Some(o) if me == 0 => o,
        _ => &mut no_output,
    };
    if me == 0 {
        if let Some(input) = input {
            super::spawn_input_reader(input, tx, node.gate.clone(), flow.input_ahead)
                .map_err(|e| io_err("the input reader", e))?;
        } else {
            let _ = tx.send(Msg::InputEnd);
        }
    }
    let mut r = super::run_engine(&mut src, engine, net, boxes, output, workers);
    reporting.store(false, Ordering::Relaxed);
    if let Some(h) = reporter {
        h.thread().unpark();
        let _ = h.join();
    }
    let mut others = Vec::new();
    if let Ok(st) = &mut r {
        st.bytes_sent = bytes_sent.load(Ordering::Relaxed);
        st.bytes_received = bytes_received.load(Ordering::Relaxed);
        // Every node's figures end on node 0 (`--stats` totals on every transport).
        if me == 0 {
            others = src.gather_stats(std::time::Duration::from_secs(5));
        } else {
            let mut values = super::stats_values(st);
            values.extend(extra());
            node.send(0, Msg::Stats { node: me, values })?;
        }
    }
    r.map(|st| (st, others))
}
