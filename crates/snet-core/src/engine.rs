//! The engine interface shared by every scheduler, and the common run statistics
//! (DESIGN rule 6).

use crate::boxes::BoxTable;
use crate::error::RunError;
use crate::net::Net;
use crate::record::Record;
use std::fmt;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Where an engine reads the global input from.
pub trait RecordSource: Send {
    /// The next input record; `Ok(None)` at the end of input. Recoverable input errors
    /// are the source's business (it reports and skips them); an `Err` stops the run.
    fn next_record(&mut self) -> Result<Option<Record>, RunError>;

    /// The next thing to walk in a distributed run (spec §16): an input record, or a
    /// record (or instance creation) arriving from another node; `Ok(None)` once the
    /// whole distributed run has ended. Engines that run distributed read their input
    /// through this; the default is [`RecordSource::next_record`].
    ///
    /// `idle` tells whether the engine has nothing queued or running besides this call
    /// (a distributed source answers the termination protocol only then; it may block
    /// until a record arrives, the run ends, or the engine reports
    /// [`crate::walk::Dist::became_idle`]).
    fn next_incoming(&mut self, idle: &dyn Fn() -> bool) -> Result<Option<Incoming>, RunError> {
        let _ = idle;
        Ok(self.next_record()?.map(Incoming::Record))
    }
}

/// What [`RecordSource::next_incoming`] gives an engine.
#[derive(Debug)]
pub enum Incoming {
    /// A record of the global input: it enters the network's root.
    Record(Record),
    /// A record continuing its walk here after a hop from another node.
    Arrival(crate::walk::Arrival),
}

/// Where an engine writes the global output to.
pub trait RecordSink: Send {
    /// Writes one output record.
    fn write_record(&mut self, rec: Record) -> Result<(), RunError>;
}

impl<I: Iterator<Item = Record> + Send> RecordSource for std::iter::Fuse<I> {
    fn next_record(&mut self) -> Result<Option<Record>, RunError> {
        Ok(self.next())
    }
}

impl RecordSink for Vec<Record> {
    fn write_record(&mut self, rec: Record) -> Result<(), RunError> {
        self.push(rec);
        Ok(())
    }
}

/// The most worker threads a run may ask for. Each worker is an OS thread with its own
/// stacks and guard pages; far past the core count they only add switching, and at
/// around 10^5 threads the kernel's mapping limit makes thread start-up fail inside the
/// standard library (an abort, not an error). Engines and the CLI refuse more.
pub const MAX_WORKERS: usize = 1024;

/// Options common to all engines.
#[derive(Clone)]
pub struct RunOptions {
    /// Worker threads (ignored by `seq`).
    pub workers: usize,
    /// The distribution layer when this run is one node of a distributed run
    /// (spec §16); `None` in one process.
    pub dist: Option<Arc<dyn crate::walk::Dist>>,
}

impl RunOptions {
    /// Options with `workers` workers, in one process.
    pub fn new(workers: usize) -> RunOptions {
        RunOptions {
            workers,
            dist: None,
        }
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions::new(cores())
    }
}

impl fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("workers", &self.workers)
            .field("dist", &self.dist.as_ref().map(|d| (d.me(), d.nodes())))
            .finish()
    }
}

/// The number of cores this process may use (`available_parallelism`, at least 1),
/// asked once: the standard library reads the cgroup files on every call (≈ 40 µs),
/// and a short run asked three times.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A scheduler for S-Net networks. Every engine produces the same output multiset
/// (DESIGN rule 1).
pub trait Engine {
    /// Engine name as given to `--engine`.
    fn name(&self) -> &'static str;
    /// Runs `net` on every record of `input`, writing to `output`.
    fn run(
        &self,
        net: &Net,
        boxes: &BoxTable,
        input: &mut dyn RecordSource,
        output: &mut dyn RecordSink,
        opts: &RunOptions,
    ) -> Result<RunStats, RunError>;
}

/// A relaxed event counter.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    /// Adds one.
    pub fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    /// Adds `n`.
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }
    /// Current value.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Number of counter shards. Threads that hold one of the first `SHARDS - 1` shards
/// own it exclusively and count with plain loads and stores; every other thread shares
/// the last shard and counts with atomic read-modify-writes.
const SHARDS: usize = 16;
const SHARED_SHARD: usize = SHARDS - 1;

/// How often (in events per shard) the global peak of records in flight is sampled.
const PEAK_SAMPLE: u64 = 256;

/// One thread's share of the counters, on its own cache lines so that workers never
/// write the same line (every box firing updates several counters).
#[derive(Debug, Default)]
#[repr(align(128))]
struct Shard {
    records_in: AtomicU64,
    records_out: AtomicU64,
    box_calls: AtomicU64,
    created: AtomicU64,
    consumed: AtomicU64,
    stored: AtomicU64,
    sync_merged: AtomicU64,
    /// Stored records taken out again by merges.
    unstored: AtomicU64,
    /// Net records in flight contributed by this shard (may be negative).
    flight: AtomicI64,
    events: AtomicU64,
    /// Records sent on to other nodes / arrived from them (distributed runs).
    sent: AtomicU64,
    arrived: AtomicU64,
}

/// Bit `i` set: exclusive shard `i` is free.
static FREE_SHARDS: AtomicU32 = AtomicU32::new((1 << SHARED_SHARD) - 1);

/// A thread's shard, returned to the free set when the thread exits.
struct ShardSlot(usize);

impl ShardSlot {
    fn acquire() -> ShardSlot {
        let mut free = FREE_SHARDS.load(Ordering::Relaxed);
        while free != 0 {
            let i = free.trailing_zeros();
            // Acquire: pairs with the Release in `drop`, so the previous owner's last
            // plain stores to shard `i` happen before this thread's first load.
            match FREE_SHARDS.compare_exchange_weak(
                free,
                free & !(1 << i),
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return ShardSlot(i as usize),
                Err(now) => free = now,
            }
        }
        ShardSlot(SHARED_SHARD)
    }
}

impl Drop for ShardSlot {
    fn drop(&mut self) {
        if self.0 != SHARED_SHARD {
            FREE_SHARDS.fetch_or(1 << self.0, Ordering::Release);
        }
    }
}

/// This thread's shard index (the shared shard while thread-locals are being torn down).
fn shard_index() -> usize {
    thread_local! {
        static SLOT: ShardSlot = ShardSlot::acquire();
    }
    SLOT.try_with(|s| s.0).unwrap_or(SHARED_SHARD)
}

/// Adds `n` to a counter of shard `idx`: a plain load and store on an exclusively owned
/// shard (no other thread writes it), an atomic add on the shared one.
#[inline(always)]
fn bump_in(idx: usize, a: &AtomicU64, n: u64) {
    if idx == SHARED_SHARD {
        a.fetch_add(n, Ordering::Relaxed);
    } else {
        a.store(a.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }
}

#[inline(always)]
fn bump_signed(idx: usize, a: &AtomicI64, n: i64) {
    if idx == SHARED_SHARD {
        a.fetch_add(n, Ordering::Relaxed);
    } else {
        a.store(a.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }
}

/// One pending box invocation in an engine's bounded inbox: a record (`None` for an
/// initialiser), its causal context, and its field payload bytes, computed once when the
/// job is made (the inbox's byte budget counts them at every push and take).
#[derive(Debug)]
pub struct BoxJob {
    /// The input record; `None` for an initialiser.
    pub rec: Option<crate::record::Rec>,
    /// Its causal context.
    pub ctx: crate::det::Ctx,
    bytes: usize,
}

impl BoxJob {
    /// A job for `rec` (`None`: an initialiser) in context `ctx`.
    pub fn new(rec: Option<crate::record::Rec>, ctx: crate::det::Ctx) -> BoxJob {
        let bytes = rec.as_ref().map_or(0, |r| r.payload_bytes());
        BoxJob { rec, ctx, bytes }
    }

    /// Field payload bytes of the record.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// The bound of an engine's box inbox (lpel, threads): at most `capacity` jobs, and no
/// further job once `max_bytes` of payload are queued (one job of any size still fits an
/// empty inbox, so a big record never blocks forever).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InboxBudget {
    /// Jobs the inbox holds at most (at least 1).
    pub capacity: usize,
    /// Payload bytes after which the inbox takes no more jobs (at least 1).
    pub max_bytes: usize,
}

impl InboxBudget {
    /// A budget of `capacity` jobs and `max_bytes` bytes (each at least 1).
    pub fn new(capacity: usize, max_bytes: usize) -> InboxBudget {
        InboxBudget {
            capacity: capacity.max(1),
            max_bytes: max_bytes.max(1),
        }
    }

    /// How many more jobs fit with `queued` jobs holding `queued_bytes` queued.
    pub fn room(&self, queued: usize, queued_bytes: usize) -> usize {
        if queued > 0 && queued_bytes >= self.max_bytes {
            0
        } else {
            self.capacity.saturating_sub(queued)
        }
    }

    /// Whether a blocking push must wait.
    pub fn is_full(&self, queued: usize, queued_bytes: usize) -> bool {
        self.room(queued, queued_bytes) == 0
    }

    /// Moves the next batch of an inbox's `queue` (holding `queued_bytes` of payload)
    /// into `hand`: at most `max` jobs (at least one if any is queued) and, when the
    /// queue holds more than `max_bytes`, about `max_bytes` worth (big records). Keeps
    /// `queued_bytes` up to date; returns how many jobs moved. A whole queue going into
    /// an empty hand exchanges the buffers instead of moving jobs.
    pub fn take_batch(
        &self,
        queue: &mut std::collections::VecDeque<BoxJob>,
        queued_bytes: &mut usize,
        max: usize,
        hand: &mut std::collections::VecDeque<BoxJob>,
    ) -> usize {
        let mut n = queue.len().min(max.max(1));
        if *queued_bytes > self.max_bytes {
            let (mut acc, mut k) = (0, 0);
            for j in queue.iter().take(n) {
                k += 1;
                acc += j.bytes;
                if acc >= self.max_bytes {
                    break;
                }
            }
            n = k;
        }
        if n == 0 {
            return 0;
        }
        if n == queue.len() {
            *queued_bytes = 0;
            if hand.is_empty() {
                std::mem::swap(queue, hand);
            } else {
                hand.extend(queue.drain(..));
            }
        } else {
            let taken: usize = queue.iter().take(n).map(|j| j.bytes).sum();
            *queued_bytes -= taken;
            hand.extend(queue.drain(..n));
        }
        n
    }
}

/// Counters updated during a run by the core and the engines.
///
/// Sharded per thread (relaxed atomics on per-thread cache lines), so counting costs no
/// cross-core traffic. The peak of records in flight is sampled: every
/// `PEAK_SAMPLE` events of a shard, and at every global input, the shards are summed.
#[derive(Debug)]
pub struct Counters {
    shards: Box<[Shard]>,
    peak: AtomicI64,
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            peak: AtomicI64::new(0),
        }
    }
}

impl Counters {
    fn shard(&self) -> (usize, &Shard) {
        let i = shard_index();
        (i, &self.shards[i])
    }

    #[inline(always)]
    fn flight(&self, idx: usize, s: &Shard, d: i64) {
        bump_signed(idx, &s.flight, d);
        let before = s.events.load(Ordering::Relaxed);
        bump_in(idx, &s.events, 1);
        if before.is_multiple_of(PEAK_SAMPLE) {
            self.sample_peak();
        }
    }

    fn sample_peak(&self) {
        let now = self.in_flight();
        if now > self.peak.load(Ordering::Relaxed) {
            self.peak.fetch_max(now, Ordering::Relaxed);
        }
    }

    fn sum(&self, f: impl Fn(&Shard) -> &AtomicU64) -> u64 {
        self.shards
            .iter()
            .map(|s| f(s).load(Ordering::Relaxed))
            .sum()
    }

    /// A box invocation returned after emitting `emitted` records; `consumed`: it had
    /// an input record (not an initialiser). One shard update per firing (its records
    /// are counted here rather than one by one as they are emitted).
    #[inline]
    pub fn fired(&self, consumed: bool, emitted: usize) {
        let (i, s) = self.shard();
        if i == SHARED_SHARD {
            return self.fired_shared(s, consumed, emitted);
        }
        // An exclusive shard (the common case): the shard test is made once, here; the
        // body below is compiled knowing its answer.
        self.fired_in(i, s, consumed, emitted);
    }

    /// [`Counters::fired`] on the shared shard (threads beyond the exclusive shards).
    #[cold]
    fn fired_shared(&self, s: &Shard, consumed: bool, emitted: usize) {
        self.fired_in(SHARED_SHARD, s, consumed, emitted);
    }

    #[inline(always)]
    fn fired_in(&self, i: usize, s: &Shard, consumed: bool, emitted: usize) {
        bump_in(i, &s.box_calls, 1);
        bump_in(i, &s.created, emitted as u64);
        bump_in(i, &s.consumed, u64::from(consumed));
        self.flight(i, s, emitted as i64 - i64::from(consumed));
    }
    /// A filter consumed one record and produced `n`.
    pub fn filtered(&self, n: usize) {
        let (i, s) = self.shard();
        bump_in(i, &s.consumed, 1);
        bump_in(i, &s.created, n as u64);
        self.flight(i, s, n as i64 - 1);
    }
    /// `n` records were stored in a synchrocell.
    pub fn stored(&self, n: usize) {
        let (i, s) = self.shard();
        bump_in(i, &s.stored, n as u64);
        self.flight(i, s, -(n as i64));
    }
    /// A synchrocell fired, merging the arriving record with `earlier` stored ones.
    pub fn sync_merge(&self, earlier: usize) {
        let (i, s) = self.shard();
        bump_in(i, &s.sync_merged, 1);
        bump_in(i, &s.unstored, earlier as u64);
    }
    /// A record entered from the global input.
    pub fn input(&self) {
        let (i, s) = self.shard();
        bump_in(i, &s.records_in, 1);
        bump_signed(i, &s.flight, 1);
        self.sample_peak();
    }
    /// A record left to the global output.
    pub fn output(&self) {
        let (i, s) = self.shard();
        bump_in(i, &s.records_out, 1);
        self.flight(i, s, -1);
    }
    /// A record left this node for another (spec §16).
    pub fn sent_away(&self) {
        let (i, s) = self.shard();
        bump_in(i, &s.sent, 1);
        self.flight(i, s, -1);
    }
    /// A record arrived from another node.
    pub fn arrived(&self) {
        let (i, s) = self.shard();
        bump_in(i, &s.arrived, 1);
        bump_signed(i, &s.flight, 1);
    }
    /// Records sent on to other nodes.
    pub fn records_sent(&self) -> u64 {
        self.sum(|s| &s.sent)
    }
    /// Records that arrived from other nodes.
    pub fn records_arrived(&self) -> u64 {
        self.sum(|s| &s.arrived)
    }
    /// Records read from the global input.
    pub fn records_in(&self) -> u64 {
        self.sum(|s| &s.records_in)
    }
    /// Records written to the global output.
    pub fn records_out(&self) -> u64 {
        self.sum(|s| &s.records_out)
    }
    /// Box invocations.
    pub fn box_calls(&self) -> u64 {
        self.sum(|s| &s.box_calls)
    }
    /// Records created by boxes and filters.
    pub fn created(&self) -> u64 {
        self.sum(|s| &s.created)
    }
    /// Records consumed by boxes and filters.
    pub fn consumed_total(&self) -> u64 {
        self.sum(|s| &s.consumed)
    }
    /// Records stored in synchrocells.
    pub fn stored_total(&self) -> u64 {
        self.sum(|s| &s.stored)
    }
    /// Records stored in synchrocells and not merged (yet): what the end of a run
    /// discards.
    pub fn still_stored(&self) -> u64 {
        self.stored_total()
            .saturating_sub(self.sum(|s| &s.unstored))
    }
    /// Synchrocell merges.
    pub fn sync_merges(&self) -> u64 {
        self.sum(|s| &s.sync_merged)
    }
    /// Records currently inside the network (not stored in synchrocells).
    pub fn in_flight(&self) -> i64 {
        self.shards
            .iter()
            .map(|s| s.flight.load(Ordering::Relaxed))
            .sum()
    }
    /// Peak of [`Counters::in_flight`] (sampled).
    pub fn peak(&self) -> i64 {
        self.peak.load(Ordering::Relaxed).max(self.in_flight())
    }
}

/// Per-worker time split.
#[derive(Debug, Clone, Default)]
pub struct WorkerStats {
    /// Time spent handling records.
    pub busy: Duration,
    /// Time spent looking for work or parked.
    pub idle: Duration,
}

/// What a run did; filled the same way by every engine.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// Engine name.
    pub engine: String,
    /// Records read from the global input.
    pub records_in: u64,
    /// Records written to the global output.
    pub records_out: u64,
    /// Box invocations.
    pub box_calls: u64,
    /// Records created by boxes and filters.
    pub records_created: u64,
    /// Records consumed by boxes and filters.
    pub records_consumed: u64,
    /// Records stored in synchrocells (merged or discarded later).
    pub records_stored: u64,
    /// Synchrocell merges.
    pub sync_merges: u64,
    /// Records left in waiting synchrocells at the end (discarded, spec §7.6).
    pub discarded_in_sync: u64,
    /// Entity instances created.
    pub entities_created: u64,
    /// Peak number of records in flight.
    pub peak_in_flight: u64,
    /// Successful steals (work-stealing engines).
    pub steals: u64,
    /// Task stacks mapped (lpel: stack-pool misses over the run; 0 for the others).
    pub stacks_created: u64,
    /// Wall time of the run.
    pub wall: Duration,
    /// Per-worker busy/idle time.
    pub workers: Vec<WorkerStats>,
    /// Records sent on to other nodes (distributed runs).
    pub records_sent: u64,
    /// Records that arrived from other nodes (distributed runs).
    pub records_received: u64,
    /// Bytes sent to other nodes (distributed runs between processes).
    pub bytes_sent: u64,
    /// Bytes received from other nodes (distributed runs between processes).
    pub bytes_received: u64,
    /// Most records ever sent to one other node and not yet taken by its engine
    /// (distributed runs: bounded by the flow-control window).
    pub peak_unacked: u64,
    /// Times node 0 held its input back for a congested node (distributed runs).
    pub input_waits: u64,
    /// Problems that did not change the run's result, for the caller to show as
    /// warnings: a trace file that could not be written (the records are all out; a
    /// failed `--trace` must not turn a finished run into a failed one, just as a failed
    /// `--profile` does not).
    pub warnings: Vec<String>,
}

impl RunStats {
    /// Fills the counters common to all engines.
    pub fn from_counters(engine: &str, c: &Counters, entities: usize) -> RunStats {
        RunStats {
            engine: engine.into(),
            records_in: c.records_in(),
            records_out: c.records_out(),
            box_calls: c.box_calls(),
            records_created: c.created(),
            records_consumed: c.consumed_total(),
            records_stored: c.stored_total(),
            sync_merges: c.sync_merges(),
            entities_created: entities as u64,
            peak_in_flight: c.peak().max(0) as u64,
            records_sent: c.records_sent(),
            records_received: c.records_arrived(),
            ..RunStats::default()
        }
    }

    /// The record balance: every record that entered or was created has left, been
    /// consumed or been stored. True when nothing was lost.
    pub fn balanced(&self) -> bool {
        self.records_in + self.records_created + self.sync_merges + self.records_received
            == self.records_out
                + self.records_consumed
                + self.records_stored
                + self.sync_merges
                + self.records_sent
    }
}

impl fmt::Display for RunStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "engine            {}", self.engine)?;
        writeln!(f, "records in        {}", self.records_in)?;
        writeln!(f, "records out       {}", self.records_out)?;
        writeln!(f, "box calls         {}", self.box_calls)?;
        writeln!(f, "records created   {}", self.records_created)?;
        writeln!(f, "records consumed  {}", self.records_consumed)?;
        writeln!(
            f,
            "stored in sync    {} ({} merges, {} discarded at end)",
            self.records_stored, self.sync_merges, self.discarded_in_sync
        )?;
        writeln!(
            f,
            "balance           in {} + created {} = out {} + consumed {} + stored {} ({})",
            self.records_in,
            self.records_created,
            self.records_out,
            self.records_consumed,
            self.records_stored,
            if self.balanced() { "ok" } else { "MISMATCH" }
        )?;
        if self.records_sent + self.records_received > 0 {
            writeln!(
                f,
                "between nodes     {} sent, {} received (in the balance: received with in, sent with out)",
                self.records_sent, self.records_received
            )?;
            writeln!(
                f,
                "flow control      at most {} records waiting for one node, input held back {} time(s)",
                self.peak_unacked, self.input_waits
            )?;
        }
        writeln!(f, "entities created  {}", self.entities_created)?;
        writeln!(f, "peak in flight    {}", self.peak_in_flight)?;
        writeln!(f, "steals            {}", self.steals)?;
        if self.stacks_created > 0 {
            writeln!(f, "task stacks       {}", self.stacks_created)?;
        }
        for (i, w) in self.workers.iter().enumerate() {
            writeln!(f, "worker {i}          busy {:?} idle {:?}", w.busy, w.idle)?;
        }
        write!(f, "wall time         {:?}", self.wall)
    }
}

/// The address-space limit of the process (`ulimit -v`, `RLIMIT_AS`) in bytes, if any, as
/// it was at the first call.
pub fn address_space_limit() -> Option<usize> {
    // Read once per process: stacks are mapped often (every pool miss), the limit is set
    // before the process starts.
    static LIMIT: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes only into the rlimit struct we pass, which is valid.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0;
        if !ok || lim.rlim_cur == libc::RLIM_INFINITY {
            return None;
        }
        Some(usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX))
    })
}

/// How many more memory mappings the kernel lets this process create: Linux's
/// `vm.max_map_count` (65 530 by default) minus the mappings the process has now;
/// `None` where that cannot be read. Every box-instance stack costs mappings (a stack and
/// its guard page; a thread also its signal stack and guard), so this bounds how many
/// box instances the thread-per-instance engines can hold at once.
pub fn mappings_left() -> Option<usize> {
    use std::io::Read;
    // No allocation beyond opening the files: this is also called when mappings have run
    // out, when a large buffer could not be had.
    let mut buf = [0u8; 4096];
    let mut f = std::fs::File::open("/proc/sys/vm/max_map_count").ok()?;
    let n = f.read(&mut buf).ok()?;
    let max: usize = std::str::from_utf8(&buf[..n]).ok()?.trim().parse().ok()?;
    let mut maps = std::fs::File::open("/proc/self/maps").ok()?;
    let mut now = 0;
    loop {
        match maps.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => now += buf[..n].iter().filter(|&&b| b == b'\n').count(),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(max.saturating_sub(now))
}

/// Memory mappings kept free for the rest of the process (malloc arenas, threads, C box
/// libraries) when box-instance stacks are counted against `vm.max_map_count`.
const MAPPINGS_RESERVE: usize = 2048;

/// How many more box instances of `mappings_each` kernel memory mappings the process can
/// hold, keeping a reserve for everything else ([`mappings_left`]); `usize::MAX` where the
/// limit cannot be read. Past the limit `mmap` fails in arbitrary places (malloc, the
/// Rust runtime's per-thread signal stack) and the process aborts, so engines with a
/// stack per instance stop short of it.
pub fn instance_budget(mappings_each: usize) -> usize {
    mappings_left().map_or(usize::MAX, |m| {
        m.saturating_sub(MAPPINGS_RESERVE) / mappings_each.max(1)
    })
}

/// The size of a new per-box-instance stack (threads-engine box threads, lpel task
/// stacks) when `reserved` bytes of such stacks are mapped already: `preferred` (the
/// classic room for C boxes with large local arrays; virtual memory, committed only when
/// touched). Under an address-space limit (`ulimit -v`) these stacks share a quarter of
/// the limit (malloc arenas, records and the rest of the process need the remainder):
/// each new one gets 1/64 of what is left of that quarter, at most `preferred` and at
/// least `floor`. So the first instances keep the classic room and a program with
/// thousands of them (a star of many stages, a split over many indices) still fits,
/// where 64 MiB stacks exhaust a 4 GB limit at 60 instances.
pub fn instance_stack_size(preferred: usize, floor: usize, reserved: usize) -> usize {
    match address_space_limit() {
        None => preferred,
        Some(limit) => {
            ((limit / 4).saturating_sub(reserved) / 64).clamp(floor.min(preferred), preferred)
        }
    }
}

/// Runs `make` with `size`, then with halved sizes while it fails and the size stays at
/// least `floor`; returns the first success with the size it took, or the last error.
/// How an engine still gets a box-instance stack when the address space runs out
/// despite [`instance_stack_size`].
pub fn halving_until<T, E>(
    mut size: usize,
    floor: usize,
    mut make: impl FnMut(usize) -> Result<T, E>,
) -> Result<(T, usize), E> {
    loop {
        match make(size) {
            Ok(t) => return Ok((t, size)),
            Err(e) if size / 2 < floor => return Err(e),
            Err(_) => size /= 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_until_stops_at_the_first_success_or_below_the_floor() {
        let mut tried = Vec::new();
        let r = halving_until(64, 8, |s| {
            tried.push(s);
            if s <= 16 {
                Ok(s * 10)
            } else {
                Err(s)
            }
        });
        assert_eq!(r, Ok((160, 16)));
        assert_eq!(tried, [64, 32, 16]);
        let r: Result<((), usize), usize> = halving_until(64, 8, Err);
        assert_eq!(r, Err(8), "the last error, at the floor");
    }

    #[test]
    fn the_inbox_budget_counts_jobs_and_bytes_and_batches_within_both() {
        let b = InboxBudget::new(0, 0);
        assert_eq!(
            (b.capacity, b.max_bytes),
            (1, 1),
            "both clamped to at least 1"
        );
        let b = InboxBudget::new(4, 100);
        assert_eq!(b.room(0, 0), 4);
        assert_eq!(b.room(3, 99), 1);
        assert_eq!(b.room(4, 0), 0);
        assert_eq!(
            b.room(1, 100),
            0,
            "a non-empty queue at the byte budget is full"
        );
        assert!(b.is_full(1, 500) && b.is_full(4, 0) && !b.is_full(3, 99));
        // Jobs of 60 bytes: a batch stops once it holds `max_bytes`, at least one job.
        let job = |bytes| BoxJob {
            rec: None,
            ctx: None,
            bytes,
        };
        let mut q: std::collections::VecDeque<BoxJob> = (0..4).map(|_| job(60)).collect();
        let mut queued = 240;
        let mut hand = std::collections::VecDeque::new();
        assert_eq!(b.take_batch(&mut q, &mut queued, 4, &mut hand), 2);
        assert_eq!((q.len(), queued, hand.len()), (2, 120, 2));
        assert_eq!(b.take_batch(&mut q, &mut queued, 4, &mut hand), 2);
        assert_eq!((q.len(), queued, hand.len()), (0, 0, 4));
        // Under the byte budget, `max` bounds the batch; a huge job still moves alone.
        let mut q: std::collections::VecDeque<BoxJob> = [1000, 1, 1].into_iter().map(job).collect();
        let (mut queued, mut hand) = (1002, std::collections::VecDeque::new());
        assert_eq!(b.take_batch(&mut q, &mut queued, 3, &mut hand), 1);
        assert_eq!(queued, 2);
        assert_eq!(b.take_batch(&mut q, &mut queued, 1, &mut hand), 1);
        assert_eq!((q.len(), queued), (1, 1));
    }

    /// More threads than exclusive shards count at once, some of them exiting early so
    /// their shards are reused: every event must be counted exactly once.
    #[test]
    fn sharded_counters_are_exact_with_more_threads_than_shards() {
        let c = Counters::default();
        let threads = 3 * SHARDS;
        std::thread::scope(|s| {
            for t in 0..threads {
                let c = &c;
                s.spawn(move || {
                    let n = if t % 3 == 0 { 10 } else { 5000 };
                    for _ in 0..n {
                        c.input();
                        c.fired(true, 2);
                        c.filtered(0);
                        c.output();
                    }
                });
            }
        });
        let per = |t: usize| if t.is_multiple_of(3) { 10u64 } else { 5000 };
        let total: u64 = (0..threads).map(per).sum();
        assert_eq!(c.records_in(), total);
        assert_eq!(c.created(), 2 * total);
        assert_eq!(c.consumed_total(), 2 * total);
        assert_eq!(c.box_calls(), total);
        assert_eq!(c.records_out(), total);
        assert_eq!(c.in_flight(), 0);
    }
}
