//! Kahn process networks on LPEL (seed 001).
//!
//! Processes are LPEL tasks; channels are typed bounded streams with move semantics:
//! sending a `Box<T>` or a `Vec<T>` moves the pointer, never the payload (zero
//! copy, no serialisation). Reads and writes block the *process* (a user-level task),
//! not a thread. [`Network::run`] runs until every process has ended; if the network
//! stops with processes still waiting, it returns [`KpnError::Deadlock`] naming each
//! blocked process and the channel(s) it waits on — it never hangs silently.
//!
//! ```
//! use snet_lpel::kpn::{channel, Network, KpnError};
//! use snet_lpel::Config;
//!
//! let mut net = Network::new(Config::with_workers(2));
//! let (mut tx, mut rx) = channel::<Vec<u8>>("data", 4);
//! let (mut done_tx, mut done_rx) = channel::<usize>("total", 1);
//! net.spawn("source", move || {
//!     for i in 0..10u8 {
//!         tx.send(vec![i; 1024]).unwrap(); // the Vec's buffer moves, no copy
//!     }
//! });
//! net.spawn("sink", move || {
//!     let mut bytes = 0;
//!     while let Ok(v) = rx.recv() { bytes += v.len(); }
//!     done_tx.send(bytes).unwrap();
//! });
//! net.spawn("report", move || assert_eq!(done_rx.recv(), Ok(10 * 1024)));
//! net.run().unwrap();
//!
//! // A process waiting for a message that never comes is reported, not hung:
//! let mut net = Network::new(Config::with_workers(1));
//! let (tx, mut rx) = channel::<u32>("never", 1);
//! net.spawn("waiter", move || { let _keep = &tx; let _ = rx.recv(); });
//! match net.run() {
//!     Err(KpnError::Deadlock(blocked)) => {
//!         assert_eq!(blocked[0].name, "waiter");
//!         assert_eq!(blocked[0].streams[0].name.as_deref(), Some("never"));
//!     }
//!     other => panic!("expected a deadlock, got {other:?}"),
//! }
//! ```

use crate::runtime::{BlockedTask, RunStats, Runtime, StartError, TaskFailure};
use crate::stream::{
    stream_with, Consumer, PollHooks, Pollable, Producer, StreamMeta, StreamOptions, TryReadError,
};
use crate::task::TaskSpec;
use crate::{Config, Quiescence};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::stream::SendError;

/// The sending end of a channel.
#[derive(Debug)]
pub struct Sender<T>(Producer<T>);

/// The receiving end of a channel.
#[derive(Debug)]
pub struct Receiver<T>(Consumer<T>);

/// The channel is closed (its sender has gone and every message was received).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvError;

impl std::fmt::Display for RecvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the channel is closed")
    }
}

impl std::error::Error for RecvError {}

/// A channel named `name` (for reports) holding up to `capacity` messages.
pub fn channel<T: Send>(name: &str, capacity: usize) -> (Sender<T>, Receiver<T>) {
    let (p, c) = stream_with(StreamOptions {
        capacity,
        unbounded: false,
        name: Some(Arc::from(name)),
    });
    (Sender(p), Receiver(c))
}

impl<T: Send> Sender<T> {
    /// Sends `msg`, blocking the process while the channel is full.
    #[inline]
    pub fn send(&mut self, msg: T) -> Result<(), SendError<T>> {
        self.0.write(msg)
    }

    /// The channel's identity.
    pub fn meta(&self) -> &StreamMeta {
        self.0.meta()
    }
}

impl<T: Send> Receiver<T> {
    /// Receives the next message, blocking the process while the channel is empty.
    #[inline]
    pub fn recv(&mut self) -> Result<T, RecvError> {
        self.0.read().ok_or(RecvError)
    }

    /// Receives a message if one is waiting: `Ok(None)` if none is.
    pub fn try_recv(&mut self) -> Result<Option<T>, RecvError> {
        match self.0.try_read() {
            Ok(v) => Ok(Some(v)),
            Err(TryReadError::Empty) => Ok(None),
            Err(TryReadError::Closed) => Err(RecvError),
        }
    }

    /// The channel's identity.
    pub fn meta(&self) -> &StreamMeta {
        self.0.meta()
    }
}

impl<T: Send> Pollable for Receiver<T> {
    fn is_readable(&self) -> bool {
        self.0.is_readable()
    }
    fn poll_hooks(&self) -> PollHooks<'_> {
        self.0.poll_hooks()
    }
}

/// Waits until one of `inputs` has a message (or is closed) and returns its index.
/// (Selecting makes a network non-deterministic; Kahn's model has no select.)
pub fn select(inputs: &[&dyn Pollable]) -> usize {
    crate::stream::poll(inputs)
}

/// Spawns a process from inside a running process.
pub fn spawn(name: &str, f: impl FnOnce() + Send + 'static) {
    crate::runtime::spawn(TaskSpec::new(name), f);
}

/// Why a network did not run to completion.
#[derive(Debug)]
pub enum KpnError {
    /// Processes wait on channels that nobody will serve.
    Deadlock(Vec<BlockedTask>),
    /// Processes panicked.
    Panicked(Vec<TaskFailure>),
    /// The runtime could not start.
    Start(StartError),
}

impl std::fmt::Display for KpnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KpnError::Deadlock(b) => {
                writeln!(f, "deadlock: {} process(es) blocked:", b.len())?;
                for t in b {
                    writeln!(f, "  {t}")?;
                }
                Ok(())
            }
            KpnError::Panicked(p) => {
                for t in p {
                    writeln!(f, "process {} `{}` panicked: {}", t.id, t.name, t.message)?;
                }
                Ok(())
            }
            KpnError::Start(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for KpnError {}

/// What a completed run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// Wall time from the first spawn to quiescence.
    pub elapsed: Duration,
    /// Runtime counters.
    pub stats: RunStats,
}

/// A process network under construction.
pub struct Network {
    cfg: Config,
    procs: Vec<(TaskSpec, Box<dyn FnOnce() + Send>)>,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network")
            .field("cfg", &self.cfg)
            .field("processes", &self.procs.len())
            .finish()
    }
}

impl Network {
    /// An empty network run with `cfg`.
    pub fn new(cfg: Config) -> Self {
        Network {
            cfg,
            procs: Vec::new(),
        }
    }

    /// Adds a process called `name`.
    pub fn spawn(&mut self, name: &str, f: impl FnOnce() + Send + 'static) -> &mut Self {
        self.spawn_spec(TaskSpec::new(name), f)
    }

    /// Adds a process with an explicit task spec (kind, worker, stack size).
    pub fn spawn_spec(&mut self, spec: TaskSpec, f: impl FnOnce() + Send + 'static) -> &mut Self {
        self.procs.push((spec, Box::new(f)));
        self
    }

    /// Runs the network to completion.
    pub fn run(self) -> Result<Report, KpnError> {
        let rt = Runtime::start(self.cfg).map_err(KpnError::Start)?;
        let t0 = Instant::now();
        for (spec, f) in self.procs {
            rt.spawn(spec, f);
        }
        let q = rt.wait();
        let elapsed = t0.elapsed();
        let failures = rt.failures();
        let stats = rt.shutdown();
        if !failures.is_empty() {
            return Err(KpnError::Panicked(failures));
        }
        match q {
            Quiescence::Finished => Ok(Report { elapsed, stats }),
            Quiescence::Deadlock(b) => Err(KpnError::Deadlock(b)),
        }
    }
}
