//! The MPI transport ([`MpiTransport`]): one rank per process over `MPI_COMM_WORLD`.

use super::{Inbox, Transport, TransportError};
use crossbeam_channel::{Receiver, Sender, TryRecvError};
use mpi::ffi;
use mpi::traits::{AsRaw, Communicator};
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

/// The MPI tag of a message sent alone (its bytes are the message).
const TAG_ONE: c_int = 0x534e;
/// The MPI tag of a batch: messages to one rank coalesced, each framed by its length
/// (4 bytes, little-endian).
const TAG_BATCH: c_int = 0x534f;
/// The MPI tag of an acknowledgement: the receiver matched this many more messages
/// (8 bytes, little-endian).
const TAG_ACK: c_int = 0x5350;
/// How long an idle thread only yields before it starts sleeping.
const SPIN: Duration = Duration::from_millis(5);
/// An idle thread sleeps for this fraction of the time it has been idle (so a message
/// arriving after a gap `g` waits about `g / SLEEP_DIVISOR` more)...
const SLEEP_DIVISOR: u32 = 4;
/// ... but never longer than this.
const MAX_SLEEP: Duration = Duration::from_millis(1);
/// Messages received per round at most, so that a flood cannot starve the sends.
const RECV_BATCH: usize = 64;
/// MPI messages to one rank sent and not yet acknowledged by it, at most. Bounds what
/// waits unmatched at the receiver (Open MPI's per-peer sequence numbers are 16 bits:
/// past 65 536 messages in flight to one rank, messages were delivered out of order).
const WINDOW: u64 = 64;
/// The receiver acknowledges after this many messages from one rank.
const ACK_EVERY: u64 = WINDOW / 4;
/// Sends to one rank in progress (`MPI_Isend` not yet complete), at most.
const MAX_ISENDS: usize = 4;
/// A batch holds messages up to this many bytes; a larger message goes alone, without
/// a copy.
const BATCH_BYTES: usize = 64 << 10;

static STARTED: AtomicBool = AtomicBool::new(false);

#[derive(Debug)]
enum Command {
    Send(usize, Vec<u8>),
    Shutdown,
    Abort(i32),
}

/// One MPI rank's end of the transport, over `MPI_COMM_WORLD`.
///
/// One communication thread owns MPI: it initialises it (`MPI_THREAD_FUNNELED`, so it
/// is MPI's "main thread"), makes every MPI call, and finalises it. Other threads talk
/// to it through a command channel ([`Transport::send`] never touches MPI) and receive
/// from the rank's inbox channel ([`Transport::recv`]).
///
/// The thread's loop: start `MPI_Isend`s for queued messages (never a blocking send, so
/// ranks sending large messages to each other at once cannot deadlock) within each
/// peer's window of [`WINDOW`] unacknowledged messages and [`MAX_ISENDS`] sends in
/// progress, coalescing small messages to one peer into one batch; test the
/// outstanding sends (`MPI_Testsome` over a set bounded by the ranks; a buffer is
/// freed when its send completes); and take every arrived message with `MPI_Improbe` +
/// `MPI_Mrecv` into a buffer of exactly its size, which goes to the inbox without
/// another copy (a batch as its messages), acknowledging every `WINDOW / 4`.
///
/// Idle back-off: after the last activity the thread yields for 200 µs (a reply that
/// arrives microseconds later is taken at once); with sends outstanding it keeps
/// yielding, since a large send only moves while its sender calls MPI. Then it parks
/// for a quarter of the time it has been idle, at most 1 ms: a message arriving after a
/// gap `g` waits about `g / 4` longer (at most ~1 ms), an idle rank wakes about 1000
/// times a second for one probe (measured: 1-2 % of a core), and a local `send` or
/// `shutdown` unparks it at once.
///
/// Errors: `MPI_COMM_WORLD` gets `MPI_ERRORS_RETURN`; a failing MPI call ends the
/// thread (without `MPI_Finalize`, since peers may be gone), and every later `recv` and
/// `send` returns the [`TransportError::Mpi`]. Note that with Open MPI the launcher
/// normally ends the whole job itself, within a second or so, when a rank dies.
///
/// Messages are limited to `i32::MAX` bytes (MPI counts are `int`).
///
/// Create it once per process with [`MpiTransport::init`]; end it with
/// [`MpiTransport::finish`] (or by dropping the last reference), which completes the
/// outstanding sends and finalises MPI. `MPI_Finalize` waits for the other ranks, so
/// every rank must finish.
#[derive(Debug)]
pub struct MpiTransport {
    rank: usize,
    size: usize,
    commands: Sender<Command>,
    inbox: Arc<Inbox>,
    /// The communication thread, to wake it when a command is queued.
    comm: Thread,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl MpiTransport {
    /// Starts the communication thread, which initialises MPI. Fails if MPI cannot be
    /// initialised with at least `MPI_THREAD_FUNNELED`, or was initialised before in
    /// this process.
    pub fn init() -> Result<Arc<MpiTransport>, TransportError> {
        if STARTED.swap(true, Ordering::SeqCst) {
            return Err(TransportError::Unavailable {
                reason: "MPI was already initialised in this process".into(),
            });
        }
        let (ready_tx, ready_rx) = crossbeam_channel::bounded(1);
        let (commands, cmd_rx) = crossbeam_channel::unbounded();
        let inbox = Arc::new(Inbox::new());
        let thread_inbox = inbox.clone();
        let handle = std::thread::Builder::new()
            .name("snet-mpi".into())
            .spawn(move || comm_thread(&ready_tx, &cmd_rx, &thread_inbox))
            .map_err(|e| TransportError::Unavailable {
                reason: format!("cannot start the MPI thread: {e}"),
            })?;
        match ready_rx.recv() {
            Ok(Ok((rank, size))) => Ok(Arc::new(MpiTransport {
                rank,
                size,
                commands,
                inbox,
                comm: handle.thread().clone(),
                thread: Mutex::new(Some(handle)),
            })),
            Ok(Err(e)) => {
                let _ = handle.join();
                Err(e)
            }
            Err(_) => Err(TransportError::Unavailable {
                reason: "the MPI thread ended during initialisation".into(),
            }),
        }
    }

    /// Shuts this rank down ([`Transport::shutdown`]), waits until the outstanding
    /// sends have completed and MPI is finalised (which waits for every rank), and
    /// reports a transport fault if one occurred. Idempotent.
    pub fn finish(&self) -> Result<(), TransportError> {
        self.shutdown();
        let handle = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = handle {
            if h.join().is_err() {
                self.inbox.fail(TransportError::Unavailable {
                    reason: "the MPI thread panicked".into(),
                });
            }
        }
        match self.inbox.fault() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for MpiTransport {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

impl Transport for MpiTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn send(&self, to: usize, msg: Vec<u8>) -> Result<(), TransportError> {
        self.inbox.check()?;
        if to >= self.size {
            return Err(TransportError::BadRank {
                to,
                size: self.size,
            });
        }
        if c_int::try_from(msg.len()).is_err() {
            return Err(TransportError::TooLarge { len: msg.len() });
        }
        if to == self.rank {
            self.inbox.deliver(to, msg);
            return Ok(());
        }
        self.commands.send(Command::Send(to, msg)).map_err(|_| {
            self.inbox
                .fault()
                .unwrap_or_else(|| TransportError::Unavailable {
                    reason: "the MPI thread has ended".into(),
                })
        })?;
        self.comm.unpark();
        Ok(())
    }

    fn recv(&self) -> Result<Option<(usize, Vec<u8>)>, TransportError> {
        self.inbox.recv()
    }

    fn try_recv(&self) -> Result<Option<(usize, Vec<u8>)>, TransportError> {
        self.inbox.try_recv()
    }

    fn shutdown(&self) {
        self.inbox.close();
        let _ = self.commands.send(Command::Shutdown);
        self.comm.unpark();
    }

    /// Has the communication thread call `MPI_Abort`, which ends every rank's process;
    /// never returns. If that thread cannot do it within 2 s (it has ended after a
    /// fault, or is inside a long receive), the process exits with `code` and the
    /// launcher ends the other ranks.
    fn abort(&self, code: i32) {
        let _ = self.commands.send(Command::Abort(code));
        self.comm.unpark();
        std::thread::sleep(Duration::from_secs(2));
        std::process::exit(code);
    }
}

/// The communication thread: initialise, report rank and size, run, finalise.
fn comm_thread(
    ready: &Sender<Result<(usize, usize), TransportError>>,
    commands: &Receiver<Command>,
    inbox: &Inbox,
) {
    let Some((universe, level)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        let _ = ready.send(Err(TransportError::Unavailable {
            reason: "MPI_Init_thread failed or MPI was already initialised".into(),
        }));
        return;
    };
    if level == mpi::Threading::Single {
        let _ = ready.send(Err(TransportError::Unavailable {
            reason: "the MPI library does not support MPI_THREAD_FUNNELED".into(),
        }));
        return;
    }
    let world = universe.world();
    let comm = world.as_raw();
    // SAFETY: MPI is initialised, `comm` is MPI_COMM_WORLD and this is MPI's main thread.
    let rc = unsafe { ffi::MPI_Comm_set_errhandler(comm, ffi::RSMPI_ERRORS_RETURN) };
    if let Err(e) = check(rc, "MPI_Comm_set_errhandler") {
        let _ = ready.send(Err(e));
        return;
    }
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let _ = ready.send(Ok((rank, size)));
    let mut engine = Engine::new(comm, inbox, size);
    match engine.run(commands) {
        // Dropping the universe calls MPI_Finalize.
        Ok(()) => drop(universe),
        Err(e) => {
            inbox.fail(e);
            // No MPI_Finalize: it may wait forever for ranks that are gone.
            std::mem::forget(universe);
        }
    }
}

/// One peer's outgoing stream.
#[derive(Default)]
struct Peer {
    /// Messages not yet handed to MPI, and their bytes.
    pending: std::collections::VecDeque<Vec<u8>>,
    /// Data messages (single or batch) sent and not yet acknowledged by the peer.
    unacked: u64,
    /// `MPI_Isend`s to this peer not yet complete.
    isends: usize,
    /// Data messages received from this peer and not yet acknowledged to it.
    to_ack: u64,
}

/// An outstanding send: the request, the buffer it reads, and its peer (`None` for an
/// acknowledgement, which takes no send slot).
struct Outstanding {
    /// Kept alive (and in place) until the send completes.
    _buffer: Vec<u8>,
    peer: Option<usize>,
}

/// The communication thread's state.
///
/// Per peer, at most [`WINDOW`] data messages are in flight (sent, not acknowledged)
/// and [`MAX_ISENDS`] sends in progress, so the outstanding requests the thread tests
/// are bounded by the number of ranks, never by the traffic: a turn costs the same with
/// one message queued or a million. Messages queued for a peer beyond that wait in its
/// `pending` queue and leave coalesced ([`TAG_BATCH`]) when a slot frees.
struct Engine<'a> {
    comm: ffi::MPI_Comm,
    inbox: &'a Inbox,
    peers: Vec<Peer>,
    /// Outstanding sends: requests and what they read (same index).
    requests: Vec<ffi::MPI_Request>,
    outstanding: Vec<Outstanding>,
    /// Scratch for `MPI_Testsome`.
    indices: Vec<c_int>,
    done: Vec<bool>,
    /// Peers with pending messages (each at most once).
    ready: Vec<usize>,
}

impl<'a> Engine<'a> {
    fn new(comm: ffi::MPI_Comm, inbox: &'a Inbox, size: usize) -> Engine<'a> {
        Engine {
            comm,
            inbox,
            peers: (0..size).map(|_| Peer::default()).collect(),
            requests: Vec::new(),
            outstanding: Vec::new(),
            indices: Vec::new(),
            done: Vec::new(),
            ready: Vec::new(),
        }
    }

    fn run(&mut self, commands: &Receiver<Command>) -> Result<(), TransportError> {
        let mut stopping = false;
        // When the thread last moved something, if it has been idle since.
        let mut idle_since: Option<Instant> = None;
        loop {
            let mut moved = false;
            loop {
                match commands.try_recv() {
                    Ok(c) => {
                        moved = true;
                        self.command(c, &mut stopping)?;
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        stopping = true;
                        break;
                    }
                }
            }
            moved |= self.progress_sends()?;
            moved |= self.receive()?;
            moved |= self.start_sends(stopping)?;
            if stopping && self.requests.is_empty() && self.ready.is_empty() {
                return Ok(());
            }
            if moved {
                idle_since = None;
                continue;
            }
            // A large send progresses only while this thread calls MPI (rendezvous
            // protocol: the data follows the receiver's answer), and a full window
            // opens with the peer's acknowledgement: with either outstanding the thread
            // yields (spins) instead of sleeping.
            if !self.requests.is_empty() || !self.ready.is_empty() {
                std::thread::yield_now();
                continue;
            }
            let idle_for = idle_since.get_or_insert_with(Instant::now).elapsed();
            if idle_for < SPIN {
                std::thread::yield_now();
                continue;
            }
            // `send` and `shutdown` unpark this thread after queueing a command.
            std::thread::park_timeout((idle_for / SLEEP_DIVISOR).min(MAX_SLEEP));
        }
    }

    fn command(&mut self, c: Command, stopping: &mut bool) -> Result<(), TransportError> {
        match c {
            Command::Send(to, msg) => {
                let p = &mut self.peers[to];
                if p.pending.is_empty() {
                    self.ready.push(to);
                }
                p.pending.push_back(msg);
                Ok(())
            }
            Command::Shutdown => {
                *stopping = true;
                Ok(())
            }
            Command::Abort(code) => {
                // SAFETY: MPI is initialised and this is its main thread.
                unsafe { ffi::MPI_Abort(self.comm, code) };
                std::process::exit(code)
            }
        }
    }

    /// Starts sends for the peers with pending messages, within their windows (when
    /// `stopping`, the last messages leave without waiting for the window: the peers
    /// may be finishing). True if any started.
    fn start_sends(&mut self, stopping: bool) -> Result<bool, TransportError> {
        let mut started = false;
        let mut i = 0;
        while i < self.ready.len() {
            let to = self.ready[i];
            while {
                let p = &self.peers[to];
                !p.pending.is_empty() && p.isends < MAX_ISENDS && (p.unacked < WINDOW || stopping)
            } {
                let buf = self.next_batch(to);
                let tag = if buf.1 { TAG_BATCH } else { TAG_ONE };
                self.isend(to, buf.0, tag, Some(to))?;
                let p = &mut self.peers[to];
                p.isends += 1;
                p.unacked += 1;
                started = true;
            }
            if self.peers[to].pending.is_empty() {
                self.ready.swap_remove(i);
            } else {
                i += 1;
            }
        }
        Ok(started)
    }

    /// The next message for `to`: its first pending message alone (no copy) if it is
    /// large or the only one, else as many pending messages as fit a batch (`true`).
    fn next_batch(&mut self, to: usize) -> (Vec<u8>, bool) {
        let p = &mut self.peers[to];
        let first = p.pending.pop_front().expect("a pending message");
        // How many of the pending messages fit a batch with the first (4 bytes each for
        // its length): the batch is allocated at its size once.
        let mut size = first.len() + 4;
        let n = p
            .pending
            .iter()
            .take_while(|m| {
                size += m.len() + 4;
                size <= BATCH_BYTES
            })
            .count();
        if n == 0 {
            return (first, false);
        }
        let mut batch = Vec::with_capacity(
            first.len() + 4 + p.pending.iter().take(n).map(|m| m.len() + 4).sum::<usize>(),
        );
        for m in std::iter::once(first).chain(p.pending.drain(..n)) {
            batch.extend_from_slice(&(m.len() as u32).to_le_bytes());
            batch.extend_from_slice(&m);
        }
        (batch, true)
    }

    fn isend(
        &mut self,
        to: usize,
        msg: Vec<u8>,
        tag: c_int,
        peer: Option<usize>,
    ) -> Result<(), TransportError> {
        // SAFETY: reading an initialised constant of the MPI library.
        let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: the message's heap buffer stays alive and in place (the Vec moves into
        // `outstanding`, its allocation does not) until MPI_Testsome reports the request
        // complete; its length fits an int (checked by `send`); `to` is a valid rank.
        let rc = unsafe {
            ffi::MPI_Isend(
                msg.as_ptr().cast(),
                msg.len() as c_int,
                ffi::RSMPI_UINT8_T,
                to as c_int,
                tag,
                self.comm,
                &mut req,
            )
        };
        check(rc, "MPI_Isend")?;
        self.requests.push(req);
        self.outstanding.push(Outstanding { _buffer: msg, peer });
        Ok(())
    }

    /// Frees the buffers of completed sends; true if any completed. The requests
    /// tested are bounded by the ranks (see the type's doc).
    fn progress_sends(&mut self) -> Result<bool, TransportError> {
        let n = self.requests.len();
        if n == 0 {
            return Ok(false);
        }
        self.indices.resize(n, 0);
        let mut completed: c_int = 0;
        // SAFETY: `requests` and `indices` hold `n` elements each; statuses are ignored.
        let rc = unsafe {
            ffi::MPI_Testsome(
                n as c_int,
                self.requests.as_mut_ptr(),
                &mut completed,
                self.indices.as_mut_ptr(),
                ffi::RSMPI_STATUSES_IGNORE,
            )
        };
        check(rc, "MPI_Testsome")?;
        let Ok(completed) = usize::try_from(completed) else {
            return Ok(false); // MPI_UNDEFINED: no active request
        };
        if completed == 0 {
            return Ok(false);
        }
        self.done.clear();
        self.done.resize(n, false);
        for &i in &self.indices[..completed] {
            if let Some(d) = self.done.get_mut(i as usize) {
                *d = true;
            }
        }
        for (i, o) in self.outstanding.iter().enumerate() {
            if self.done[i] {
                if let Some(p) = o.peer {
                    self.peers[p].isends -= 1;
                }
            }
        }
        // `retain` visits elements in order: both lists drop the same indices.
        let done = &self.done;
        let mut i = 0;
        self.requests.retain(|_| {
            i += 1;
            !done[i - 1]
        });
        let mut i = 0;
        self.outstanding.retain(|_| {
            i += 1;
            !done[i - 1]
        });
        Ok(true)
    }

    /// Delivers arrived messages to the inbox (a batch as its messages, in order),
    /// takes acknowledgements, and acknowledges what arrived; true if anything came.
    fn receive(&mut self) -> Result<bool, TransportError> {
        let mut got = 0;
        while got < RECV_BATCH {
            let mut flag: c_int = 0;
            // SAFETY: reading an initialised constant of the MPI library.
            let mut message = unsafe { ffi::RSMPI_MESSAGE_NULL };
            // SAFETY: MPI_Status is a C struct of integers, valid when zeroed.
            let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
            // SAFETY: every pointer refers to a live local for the duration of the call.
            let rc = unsafe {
                ffi::MPI_Improbe(
                    ffi::RSMPI_ANY_SOURCE,
                    ffi::RSMPI_ANY_TAG,
                    self.comm,
                    &mut flag,
                    &mut message,
                    &mut status,
                )
            };
            check(rc, "MPI_Improbe")?;
            if flag == 0 {
                break;
            }
            got += 1;
            let mut count: c_int = 0;
            // SAFETY: `status` was filled by the successful probe.
            let rc = unsafe { ffi::MPI_Get_count(&status, ffi::RSMPI_UINT8_T, &mut count) };
            check(rc, "MPI_Get_count")?;
            let len = usize::try_from(count).map_err(|_| TransportError::Mpi {
                call: "MPI_Get_count",
                code: count,
                message: "message size undefined".into(),
            })?;
            let mut buf = Vec::<u8>::with_capacity(len);
            // SAFETY: `buf` has room for `len` = `count` bytes; `message` was matched by
            // the probe and is received exactly once.
            let rc = unsafe {
                ffi::MPI_Mrecv(
                    buf.as_mut_ptr().cast(),
                    count,
                    ffi::RSMPI_UINT8_T,
                    &mut message,
                    &mut status,
                )
            };
            check(rc, "MPI_Mrecv")?;
            // SAFETY: MPI_Mrecv succeeded and wrote the whole message, `len` bytes.
            unsafe { buf.set_len(len) };
            let from = status.MPI_SOURCE as usize;
            if from >= self.peers.len() {
                continue;
            }
            match status.MPI_TAG {
                TAG_ACK => {
                    let n = buf
                        .get(..8)
                        .and_then(|b| b.try_into().ok())
                        .map_or(0, u64::from_le_bytes);
                    let p = &mut self.peers[from];
                    p.unacked = p.unacked.saturating_sub(n);
                    continue;
                }
                TAG_BATCH => {
                    let mut rest = &buf[..];
                    while rest.len() >= 4 {
                        let n = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
                        let Some(m) = rest.get(4..4 + n) else {
                            return Err(TransportError::Unavailable {
                                reason: format!("a malformed batch from rank {from}"),
                            });
                        };
                        self.inbox.deliver(from, m.to_vec());
                        rest = &rest[4 + n..];
                    }
                }
                _ => self.inbox.deliver(from, buf),
            }
            let p = &mut self.peers[from];
            p.to_ack += 1;
            if p.to_ack >= ACK_EVERY {
                let n = std::mem::take(&mut p.to_ack);
                self.isend(from, n.to_le_bytes().to_vec(), TAG_ACK, None)?;
            }
        }
        Ok(got > 0)
    }
}

/// Turns an MPI return code into a result.
fn check(rc: c_int, call: &'static str) -> Result<(), TransportError> {
    if rc == ffi::MPI_SUCCESS as c_int {
        return Ok(());
    }
    let mut text = [0 as c_char; ffi::MPI_MAX_ERROR_STRING as usize];
    let mut len: c_int = 0;
    // SAFETY: `text` holds MPI_MAX_ERROR_STRING characters, as MPI_Error_string requires.
    let ok = unsafe { ffi::MPI_Error_string(rc, text.as_mut_ptr(), &mut len) } == 0;
    let message = if ok {
        let n = usize::try_from(len).unwrap_or(0).min(text.len());
        String::from_utf8_lossy(&text[..n].iter().map(|&c| c as u8).collect::<Vec<_>>())
            .into_owned()
    } else {
        "unknown error".into()
    };
    Err(TransportError::Mpi {
        call,
        code: rc,
        message,
    })
}
