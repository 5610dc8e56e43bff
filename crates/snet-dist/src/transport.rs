//! Transports: moving byte messages between the nodes (ranks) of a distributed run.
//!
//! A [`Transport`] is one rank's end: it sends to any rank (its own included) without
//! ever waiting for the receiver, keeps messages FIFO per (sender, receiver) pair, and
//! receives from all ranks through one blocking [`Transport::recv`] that sleeps, without
//! burning CPU, until a message arrives or the rank is shut down.
//!
//! * [`LocalTransport`]: `n` ranks in one process (threads), over channels. Every test
//!   can run distributed code with it, without MPI.
//! * `MpiTransport` (cargo feature `mpi`): one rank per MPI process, spec §16's normal
//!   deployment.

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[cfg(feature = "mpi")]
mod mpi_transport;
#[cfg(feature = "mpi")]
pub use mpi_transport::MpiTransport;

/// Why a transport operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// A destination rank outside `0..size`.
    BadRank {
        /// The rank asked for.
        to: usize,
        /// Number of ranks.
        size: usize,
    },
    /// A message too large for the transport (MPI counts are `int`).
    TooLarge {
        /// Its length in bytes.
        len: usize,
    },
    /// This rank was shut down ([`Transport::shutdown`]): it sends no more.
    Shutdown,
    /// The run was aborted ([`Transport::abort`]) by `rank` with exit code `code`.
    Aborted {
        /// The rank that aborted.
        rank: usize,
        /// Its exit code.
        code: i32,
    },
    /// The MPI library reported an error (a dead or unreachable peer, typically).
    Mpi {
        /// The MPI call.
        call: &'static str,
        /// The MPI error code.
        code: i32,
        /// The MPI library's description.
        message: String,
    },
    /// The transport cannot be set up or has stopped working (for example MPI is not
    /// available, or its communication thread ended).
    Unavailable {
        /// Why.
        reason: String,
    },
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::BadRank { to, size } => {
                write!(f, "no node {to} (the run has {size} nodes)")
            }
            TransportError::TooLarge { len } => {
                write!(f, "message of {len} bytes is too large to send")
            }
            TransportError::Shutdown => write!(f, "transport already shut down"),
            TransportError::Aborted { rank, code } => {
                write!(f, "run aborted by node {rank} (exit code {code})")
            }
            TransportError::Mpi {
                call,
                code,
                message,
            } => write!(f, "{call} failed (MPI error {code}): {message}"),
            TransportError::Unavailable { reason } => write!(f, "transport unavailable: {reason}"),
        }
    }
}

impl std::error::Error for TransportError {}

/// One rank's end of a message transport between `size` ranks.
///
/// All methods may be called from any thread.
pub trait Transport: Send + Sync + 'static {
    /// This rank's number, in `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Queues `msg` for rank `to` (this rank included) and returns without waiting for
    /// the receiver. Messages from one rank to another arrive in the order sent.
    /// Fails after [`Transport::shutdown`] or [`Transport::abort`], or when the
    /// transport has failed.
    fn send(&self, to: usize, msg: Vec<u8>) -> Result<(), TransportError>;
    /// The next message for this rank and its sender, blocking (asleep) until there is
    /// one. After [`Transport::shutdown`] it returns what is already queued, without
    /// blocking, and then `Ok(None)`. After a fault ([`TransportError::Mpi`], or an
    /// abort by any rank: [`TransportError::Aborted`]) it returns that error, on every
    /// call.
    fn recv(&self) -> Result<Option<(usize, Vec<u8>)>, TransportError>;
    /// The next message if one has arrived, without waiting (`Ok(None)` if none has;
    /// faults as [`Transport::recv`]). A receiver drains what is there in one go.
    fn try_recv(&self) -> Result<Option<(usize, Vec<u8>)>, TransportError>;
    /// Stops this rank: wakes a blocked [`Transport::recv`], which then returns
    /// `Ok(None)` once the queue is empty; later sends fail. Messages already sent are
    /// still delivered. Idempotent.
    fn shutdown(&self);
    /// Ends the whole run after a fault, with exit code `code`.
    ///
    /// MPI: `MPI_Abort`, which terminates every rank's process; it does not return.
    /// Local (all ranks in one process, so the caller decides how the process ends):
    /// returns, after making every rank's `recv` and `send` fail with
    /// [`TransportError::Aborted`].
    fn abort(&self, code: i32);
}

/// What a rank's receive queue holds.
#[derive(Debug)]
enum Incoming {
    Msg(usize, Vec<u8>),
    /// Wakes a blocked `recv` to look at the flags (shutdown or fault).
    Wake,
}

/// A rank's receive side: a channel plus the shutdown and fault states. Shared by both
/// transports.
#[derive(Debug)]
struct Inbox {
    tx: Sender<Incoming>,
    rx: Receiver<Incoming>,
    closed: AtomicBool,
    fault: Mutex<Option<TransportError>>,
    /// A fault is recorded (so the common path reads one flag, not the lock: every
    /// send and receive looks).
    faulted: AtomicBool,
}

impl Inbox {
    fn new() -> Inbox {
        let (tx, rx) = crossbeam_channel::unbounded();
        Inbox {
            tx,
            rx,
            closed: AtomicBool::new(false),
            fault: Mutex::new(None),
            faulted: AtomicBool::new(false),
        }
    }

    fn deliver(&self, from: usize, msg: Vec<u8>) {
        // The receiver lives in `self`: the channel is never disconnected.
        let _ = self.tx.send(Incoming::Msg(from, msg));
    }

    fn close(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            let _ = self.tx.send(Incoming::Wake);
        }
    }

    /// Records the first fault and wakes the receiver.
    fn fail(&self, e: TransportError) {
        let mut f = self.fault.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(e);
        }
        self.faulted.store(true, Ordering::SeqCst);
        drop(f);
        let _ = self.tx.send(Incoming::Wake);
    }

    fn fault(&self) -> Option<TransportError> {
        if !self.faulted.load(Ordering::SeqCst) {
            return None;
        }
        self.fault.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn check(&self) -> Result<(), TransportError> {
        match self.fault() {
            Some(e) => Err(e),
            None if self.closed.load(Ordering::SeqCst) => Err(TransportError::Shutdown),
            None => Ok(()),
        }
    }

    fn try_recv(&self) -> Result<Option<(usize, Vec<u8>)>, TransportError> {
        if let Some(e) = self.fault() {
            return Err(e);
        }
        loop {
            match self.rx.try_recv() {
                Ok(Incoming::Msg(from, msg)) => return Ok(Some((from, msg))),
                Ok(Incoming::Wake) => continue,
                Err(_) => return Ok(None),
            }
        }
    }

    fn recv(&self) -> Result<Option<(usize, Vec<u8>)>, TransportError> {
        loop {
            if let Some(e) = self.fault() {
                return Err(e);
            }
            let item = if self.closed.load(Ordering::SeqCst) {
                match self.rx.try_recv() {
                    Ok(item) => item,
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => return Ok(None),
                }
            } else {
                match self.rx.recv() {
                    Ok(item) => item,
                    // Unreachable (we hold a sender), but never hang or panic.
                    Err(_) => return Ok(None),
                }
            };
            match item {
                Incoming::Msg(from, msg) => return Ok(Some((from, msg))),
                Incoming::Wake => continue,
            }
        }
    }
}

/// One rank of a group of ranks living in one process ([`LocalTransport::group`]).
///
/// Sends go straight into the receiver's unbounded channel (no copy, no thread);
/// `recv` blocks on that channel. `abort` returns (see [`Transport::abort`]).
#[derive(Debug)]
pub struct LocalTransport {
    rank: usize,
    inboxes: Arc<[Inbox]>,
}

impl LocalTransport {
    /// `n` connected ranks, `0..n`, in rank order. Each is typically moved to the
    /// thread(s) of its node.
    pub fn group(n: usize) -> Vec<Arc<LocalTransport>> {
        let inboxes: Arc<[Inbox]> = (0..n).map(|_| Inbox::new()).collect();
        (0..n)
            .map(|rank| {
                Arc::new(LocalTransport {
                    rank,
                    inboxes: inboxes.clone(),
                })
            })
            .collect()
    }

    fn me(&self) -> &Inbox {
        &self.inboxes[self.rank]
    }
}

impl Transport for LocalTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.inboxes.len()
    }

    fn send(&self, to: usize, msg: Vec<u8>) -> Result<(), TransportError> {
        self.me().check()?;
        let Some(dest) = self.inboxes.get(to) else {
            return Err(TransportError::BadRank {
                to,
                size: self.size(),
            });
        };
        dest.deliver(self.rank, msg);
        Ok(())
    }

    fn recv(&self) -> Result<Option<(usize, Vec<u8>)>, TransportError> {
        self.me().recv()
    }

    fn try_recv(&self) -> Result<Option<(usize, Vec<u8>)>, TransportError> {
        self.me().try_recv()
    }

    fn shutdown(&self) {
        self.me().close();
    }

    fn abort(&self, code: i32) {
        for inbox in self.inboxes.iter() {
            inbox.fail(TransportError::Aborted {
                rank: self.rank,
                code,
            });
        }
    }
}
