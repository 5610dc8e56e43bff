//! Streams: bounded single-producer single-consumer FIFOs between tasks
//! (seed 000 §4.4), with blocking that suspends the *task*, not the worker thread.
//!
//! * [`Producer::write`] blocks while the stream holds `capacity` items;
//!   [`Consumer::read`] blocks while it is empty. The blocked task is woken by the
//!   peer's next read/write (or by the peer closing its end).
//! * A stream can be made *unbounded* ([`StreamOptions::unbounded`],
//!   [`Producer::set_unbounded`]) or written past its capacity once
//!   ([`Producer::write_unbounded`]): such writes never block, the buffer grows. This
//!   is how a cyclic network (the S-Net feedback loop) avoids artificial deadlock.
//! * [`poll`] waits until *any* stream of a set is readable (seed 000 §4.4.5).
//! * Dropping an endpoint closes that side: reads drain the remaining items and then
//!   return `None`; writes to a stream whose consumer is gone hand the item back.
//! * Endpoints also work from plain threads outside the runtime (they block the
//!   thread then), which is convenient for feeding input and collecting output.
//!
//! The lock-free protocol is in `chan`; this module adds task blocking, wake-up
//! delivery and monitoring accounting.

use crate::chan::{wait_poll_acks, Chan, Pop, Push, Reg};
use crate::task::{Suspend, Task, TaskSpec, TaskState};
use crate::worker::{current_task, handle_wake, suspend, with_ctx};
use std::cell::RefCell;
use std::sync::atomic::Ordering::{AcqRel, Relaxed, Release};
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize};
use std::sync::Arc;

static NEXT_STREAM: AtomicU64 = AtomicU64::new(1);

const F_DIRTY: u8 = 1;
const F_MOVED: u8 = 2;
const F_WOKE: u8 = 4;
const F_BLOCKED: u8 = 8;
const F_SEEN: u8 = 16;
const F_CLOSED: u8 = 32;

/// Per-side accounting for monitoring (seed 000 §4.4.4 stream descriptors).
#[derive(Debug, Default)]
pub(crate) struct SideAcct {
    count: AtomicU64,
    flags: AtomicU8,
}

/// Identity and accounting of a stream, shared by both endpoints.
#[derive(Debug)]
pub struct StreamMeta {
    id: u64,
    name: Option<Arc<str>>,
    capacity: usize,
    fill: AtomicU64,
    prod: SideAcct,
    cons: SideAcct,
}

impl StreamMeta {
    /// Unique stream id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Name given at creation, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The capacity given at creation.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// A printable reference (id and name).
    pub fn reference(&self) -> StreamRef {
        StreamRef {
            id: self.id,
            name: self.name.as_deref().map(str::to_string),
        }
    }
}

/// A stream's id and name, as reported in deadlock reports.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StreamRef {
    /// Unique stream id.
    pub id: u64,
    /// Name given at creation, if any.
    pub name: Option<String>,
}

impl std::fmt::Display for StreamRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.name {
            Some(n) => write!(f, "stream {} `{n}`", self.id),
            None => write!(f, "stream {}", self.id),
        }
    }
}

/// Which end of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Write,
    Read,
}

/// A stream touched during the current dispatch (the seed's "dirty list").
pub(crate) struct Dirty {
    pub(crate) meta: Arc<StreamMeta>,
    pub(crate) side: Side,
}

impl Dirty {
    fn acct(&self) -> &SideAcct {
        match self.side {
            Side::Write => &self.meta.prod,
            Side::Read => &self.meta.cons,
        }
    }

    /// `id,mode,state,count,flags` as in seed 000 §5.4.3.
    pub(crate) fn log_entry(&self, out: &mut String) {
        use std::fmt::Write;
        let a = self.acct();
        let f = a.flags.load(Relaxed);
        let mode = if self.side == Side::Write { 'w' } else { 'r' };
        let state = if f & F_CLOSED != 0 {
            'C'
        } else if f & F_SEEN != 0 {
            'I'
        } else {
            'O'
        };
        let _ = write!(
            out,
            "{},{mode},{state},{},{}{}{};",
            self.meta.id,
            a.count.load(Relaxed),
            if f & F_BLOCKED != 0 { '?' } else { '-' },
            if f & F_WOKE != 0 { '!' } else { '-' },
            if f & F_MOVED != 0 { '*' } else { '-' },
        );
    }

    /// Fill level at the end of the dispatch (trace counters).
    pub(crate) fn fill(&self) -> u64 {
        self.meta.fill.load(Relaxed)
    }

    /// Resets the per-dispatch flags after the dispatch was logged.
    pub(crate) fn clear(&self) {
        let a = self.acct();
        let f = a.flags.load(Relaxed);
        a.flags.store((f & F_CLOSED) | F_SEEN, Relaxed);
    }
}

/// Number of running workers that collect stream activity (monitoring level b+ or
/// trace); when zero, stream operations skip accounting without touching TLS.
pub(crate) static STREAM_MONITORS: AtomicUsize = AtomicUsize::new(0);

#[inline]
fn account(meta: &Arc<StreamMeta>, side: Side, moved: bool, woke: bool, blocked: bool, len: usize) {
    if STREAM_MONITORS.load(Relaxed) == 0 {
        return;
    }
    account_slow(meta, side, moved, woke, blocked, len)
}

#[cold]
fn account_slow(
    meta: &Arc<StreamMeta>,
    side: Side,
    moved: bool,
    woke: bool,
    blocked: bool,
    len: usize,
) {
    with_ctx(|c| {
        let Some(c) = c else { return };
        if !c.mon_streams {
            return;
        }
        let a = match side {
            Side::Write => &meta.prod,
            Side::Read => &meta.cons,
        };
        if moved {
            a.count.fetch_add(1, Relaxed);
        }
        let mut f = a.flags.load(Relaxed);
        let add = F_DIRTY
            | if moved { F_MOVED } else { 0 }
            | if woke { F_WOKE } else { 0 }
            | if blocked { F_BLOCKED } else { 0 };
        let first = f & F_DIRTY == 0;
        f |= add;
        a.flags.store(f, Relaxed);
        meta.fill.store(len as u64, Relaxed);
        if first {
            // SAFETY: worker-thread only; no other reference to the list is live.
            unsafe {
                (*c.dirty.get()).push(Dirty {
                    meta: Arc::clone(meta),
                    side,
                })
            };
        }
    })
}

fn mark_closed(meta: &Arc<StreamMeta>, side: Side) {
    let a = match side {
        Side::Write => &meta.prod,
        Side::Read => &meta.cons,
    };
    a.flags.fetch_or(F_CLOSED, Relaxed);
    account(
        meta,
        side,
        false,
        false,
        false,
        meta.fill.load(Relaxed) as usize,
    );
}

struct Inner<T> {
    meta: Arc<StreamMeta>,
    chan: Chan<T, Task>,
}

/// Options for [`stream_with`].
#[derive(Debug, Clone, Default)]
pub struct StreamOptions {
    /// Items the stream holds before writes block (at least 1).
    pub capacity: usize,
    /// Writes never block; the buffer grows instead.
    pub unbounded: bool,
    /// A name for monitoring output and deadlock reports.
    pub name: Option<Arc<str>>,
}

/// A stream of capacity `capacity` (at least 1).
pub fn stream<T: Send>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    stream_with(StreamOptions {
        capacity,
        ..StreamOptions::default()
    })
}

/// A stream with the given options.
pub fn stream_with<T: Send>(opts: StreamOptions) -> (Producer<T>, Consumer<T>) {
    let capacity = opts.capacity.max(1);
    let inner = Arc::new(Inner {
        meta: Arc::new(StreamMeta {
            id: NEXT_STREAM.fetch_add(1, Relaxed),
            name: opts.name,
            capacity,
            fill: AtomicU64::new(0),
            prod: SideAcct::default(),
            cons: SideAcct::default(),
        }),
        chan: Chan::new(capacity, opts.unbounded),
    });
    (
        Producer {
            inner: Arc::clone(&inner),
        },
        Consumer { inner },
    )
}

/// The writing end of a stream. Dropping it closes the stream for writing.
pub struct Producer<T> {
    inner: Arc<Inner<T>>,
}

/// The reading end of a stream. Dropping it closes the stream for reading.
pub struct Consumer<T> {
    inner: Arc<Inner<T>>,
}

impl<T> std::fmt::Debug for Producer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("stream", &self.inner.meta.id)
            .finish()
    }
}

impl<T> std::fmt::Debug for Consumer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field("stream", &self.inner.meta.id)
            .finish()
    }
}

/// The consumer has gone; the item is handed back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendError<T>(pub T);

impl<T> std::fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the reading end of the stream is closed")
    }
}

impl<T: std::fmt::Debug> std::error::Error for SendError<T> {}

/// Why [`Producer::try_write`] did not write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TryWriteError<T> {
    /// The stream is full.
    Full(T),
    /// The consumer has gone.
    Closed(T),
}

/// Why [`Consumer::try_read`] returned no item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TryReadError {
    /// No item now.
    Empty,
    /// No item, and the producer has gone.
    Closed,
}

thread_local! {
    static EXTERNAL: RefCell<Option<Arc<Task>>> = const { RefCell::new(None) };
}

fn external_task() -> Arc<Task> {
    EXTERNAL.with(|e| {
        e.borrow_mut()
            .get_or_insert_with(|| Arc::new(Task::new(&TaskSpec::new("<thread>"), 0, None, true)))
            .clone()
    })
}

/// Waits after a successful registration made by `register`. Returns once woken (the
/// caller retries its operation), or at once if `register` reported `Ready`.
fn block_with(
    state: TaskState,
    meta: Option<&StreamMeta>,
    register: impl FnOnce(*const Task) -> Reg,
) {
    let t = current_task();
    if !t.is_null() {
        if register(t) == Reg::Registered {
            // SAFETY: `t` is the running task and we are running on its context.
            unsafe {
                (*t).set_state(state);
                (*t).blocked_on.store(
                    meta.map_or(std::ptr::null_mut(), |m| {
                        (m as *const StreamMeta).cast_mut()
                    }),
                    Release,
                );
                suspend(&*t, Suspend::Block);
            }
        }
        return;
    }
    block_external(register);
}

/// [`block_with`] for a thread outside the runtime: waits on the thread's condition
/// variable. Kept out of line so that the task path stays small (fewer registers
/// to save around the switch).
#[cold]
#[inline(never)]
fn block_external(register: impl FnOnce(*const Task) -> Reg) {
    let me = external_task();
    let ext = me.external.as_ref().expect("external waiter");
    *ext.woken.lock().unwrap_or_else(|e| e.into_inner()) = false;
    if register(&*me) == Reg::Registered {
        let mut g = ext.woken.lock().unwrap_or_else(|e| e.into_inner());
        while !*g {
            g = ext.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl<T: Send> Producer<T> {
    /// After a successful push: wakes the reader if it was blocked and records the
    /// write for monitoring (`blocked`: the write had to wait for room).
    #[inline(always)]
    fn wrote(&self, w: crate::chan::Wake<crate::task::Task>, blocked: bool) {
        let woke = handle_wake(w);
        account(
            &self.inner.meta,
            Side::Write,
            true,
            woke,
            blocked,
            self.inner.chan.len(),
        );
    }

    /// Writes `item`, suspending the task while the stream is full.
    #[inline(always)]
    pub fn write(&mut self, item: T) -> Result<(), SendError<T>> {
        // Fast path (room, or a blocked reader to hand the item to); the blocking
        // loop is kept out of line so that this stays small.
        // SAFETY: this endpoint is the only producer (`&mut self`).
        match unsafe { self.inner.chan.try_push(item, false) } {
            Push::Done(w) => {
                self.wrote(w, false);
                Ok(())
            }
            Push::Full(v) => self.write_blocking(v),
            Push::Closed(v) => Err(SendError(v)),
        }
    }

    /// The blocking part of [`Producer::write`], after the stream was found full:
    /// wait (unless the registration finds room), retry, repeat.
    #[inline(never)]
    fn write_blocking(&mut self, item: T) -> Result<(), SendError<T>> {
        let mut item = item;
        loop {
            account(
                &self.inner.meta,
                Side::Write,
                false,
                false,
                true,
                self.inner.chan.len(),
            );
            let chan = &self.inner.chan;
            // SAFETY: single producer.
            block_with(TaskState::BlockedOut, Some(&self.inner.meta), |w| unsafe {
                chan.register_writer(w)
            });
            // SAFETY: this endpoint is the only producer (`&mut self`).
            match unsafe { self.inner.chan.try_push(item, false) } {
                Push::Done(w) => {
                    self.wrote(w, true);
                    return Ok(());
                }
                Push::Full(v) => item = v,
                Push::Closed(v) => return Err(SendError(v)),
            }
        }
    }

    /// Writes `item` if there is room.
    pub fn try_write(&mut self, item: T) -> Result<(), TryWriteError<T>> {
        // SAFETY: single producer.
        match unsafe { self.inner.chan.try_push(item, false) } {
            Push::Done(w) => {
                self.wrote(w, false);
                Ok(())
            }
            Push::Full(v) => Err(TryWriteError::Full(v)),
            Push::Closed(v) => Err(TryWriteError::Closed(v)),
        }
    }

    /// Writes `item` even if the stream is full (the buffer grows); never blocks.
    pub fn write_unbounded(&mut self, item: T) -> Result<(), SendError<T>> {
        // SAFETY: single producer.
        match unsafe { self.inner.chan.try_push(item, true) } {
            Push::Done(w) => {
                self.wrote(w, false);
                Ok(())
            }
            Push::Full(v) | Push::Closed(v) => Err(SendError(v)),
        }
    }

    /// Makes every later write non-blocking (`true`) or bounded again (`false`).
    pub fn set_unbounded(&self, on: bool) {
        self.inner.chan.set_unbounded(on)
    }

    /// Whether writes may exceed the capacity.
    pub fn is_unbounded(&self) -> bool {
        self.inner.chan.is_unbounded()
    }

    /// Whether the consumer has gone.
    pub fn is_closed(&self) -> bool {
        self.inner.chan.is_consumer_closed()
    }

    /// Items currently in the stream (an item handed straight to a blocked reader
    /// counts as read).
    pub fn len(&self) -> usize {
        self.inner.chan.len()
    }

    /// Whether the stream is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The capacity.
    pub fn capacity(&self) -> usize {
        self.inner.chan.capacity()
    }

    /// Identity of the stream.
    pub fn meta(&self) -> &StreamMeta {
        &self.inner.meta
    }
}

impl<T> Drop for Producer<T> {
    fn drop(&mut self) {
        // SAFETY: the producer closes once, here.
        let w = unsafe { self.inner.chan.close_producer() };
        let woke = handle_wake(w);
        mark_closed(&self.inner.meta, Side::Write);
        let _ = woke;
    }
}

impl<T: Send> Consumer<T> {
    /// After a successful pop: wakes the writer if it was blocked and records the read
    /// for monitoring (`blocked`: the read had to wait for an item).
    #[inline(always)]
    fn took(&self, w: crate::chan::Wake<crate::task::Task>, blocked: bool) {
        let woke = handle_wake(w);
        account(
            &self.inner.meta,
            Side::Read,
            true,
            woke,
            blocked,
            self.inner.chan.len(),
        );
    }

    /// Reads the next item, suspending the task while the stream is empty. `None`
    /// once the producer has closed and every item was read.
    #[inline(always)]
    pub fn read(&mut self) -> Option<T> {
        // Fast path (an item is there); the blocking loop is kept out of line.
        // SAFETY: this endpoint is the only consumer (`&mut self`).
        match unsafe { self.inner.chan.try_pop() } {
            Pop::Item(v, w) => {
                self.took(w, false);
                Some(v)
            }
            Pop::Closed => None,
            Pop::Empty => self.read_blocking(),
        }
    }

    /// The blocking part of [`Consumer::read`], after the stream was found empty:
    /// wait (unless the registration finds an item or the end), retry, repeat.
    #[inline(never)]
    fn read_blocking(&mut self) -> Option<T> {
        loop {
            account(&self.inner.meta, Side::Read, false, false, true, 0);
            let chan = &self.inner.chan;
            // SAFETY: single consumer.
            block_with(TaskState::BlockedIn, Some(&self.inner.meta), |w| unsafe {
                chan.register_reader(w)
            });
            // After a wake-up by a writer this takes the item it handed over
            // (`chan` step 1b).
            // SAFETY: this endpoint is the only consumer (`&mut self`).
            match unsafe { self.inner.chan.try_pop() } {
                Pop::Item(v, w) => {
                    self.took(w, true);
                    return Some(v);
                }
                Pop::Closed => return None,
                Pop::Empty => {}
            }
        }
    }

    /// Reads an item if one is there.
    pub fn try_read(&mut self) -> Result<T, TryReadError> {
        // SAFETY: single consumer.
        match unsafe { self.inner.chan.try_pop() } {
            Pop::Item(v, w) => {
                self.took(w, false);
                Ok(v)
            }
            Pop::Empty => Err(TryReadError::Empty),
            Pop::Closed => Err(TryReadError::Closed),
        }
    }

    /// The next item, without removing it (seed 000's PEEK).
    pub fn peek(&self) -> Option<&T> {
        // SAFETY: single consumer (the borrow of `self` prevents a concurrent read).
        unsafe { self.inner.chan.peek() }
    }

    /// Whether a read would not block (an item is there, or the stream is closed).
    pub fn is_readable(&self) -> bool {
        self.inner.chan.is_readable()
    }

    /// Whether the producer has gone (items may remain).
    pub fn is_closed(&self) -> bool {
        self.inner.chan.is_producer_closed()
    }

    /// Items currently in the stream (an item handed straight to a blocked reader
    /// counts as read).
    pub fn len(&self) -> usize {
        self.inner.chan.len()
    }

    /// Whether the stream is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Identity of the stream.
    pub fn meta(&self) -> &StreamMeta {
        &self.inner.meta
    }
}

impl<T> Drop for Consumer<T> {
    fn drop(&mut self) {
        // SAFETY: the consumer closes once, here.
        let w = unsafe { self.inner.chan.close_consumer() };
        handle_wake(w);
        mark_closed(&self.inner.meta, Side::Read);
    }
}

/// Something [`poll`] can wait on: the reading end of a stream of any item type.
pub trait Pollable {
    /// Whether a read would not block.
    fn is_readable(&self) -> bool;
    #[doc(hidden)]
    fn poll_hooks(&self) -> PollHooks<'_>;
}

/// Internal access for [`poll`] (opaque).
#[doc(hidden)]
#[expect(missing_debug_implementations, reason = "opaque internal handle")]
pub struct PollHooks<'a> {
    chan: &'a dyn PollChan,
    meta: &'a Arc<StreamMeta>,
}

/// The consumer-side poll operations of a `Chan`, independent of the item type.
trait PollChan {
    /// # Safety
    ///
    /// Single consumer (see `Chan::register_poller`).
    unsafe fn register(&self, w: *const Task) -> Reg;
    /// # Safety
    ///
    /// Single consumer.
    unsafe fn unregister(&self) -> bool;
}

impl<T: Send> PollChan for Chan<T, Task> {
    unsafe fn register(&self, w: *const Task) -> Reg {
        // SAFETY: forwarded caller contract.
        unsafe { self.register_poller(w) }
    }
    unsafe fn unregister(&self) -> bool {
        // SAFETY: forwarded caller contract.
        unsafe { self.unregister_poller() }
    }
}

impl<T: Send> Pollable for Consumer<T> {
    fn is_readable(&self) -> bool {
        self.inner.chan.is_readable()
    }

    fn poll_hooks(&self) -> PollHooks<'_> {
        PollHooks {
            chan: &self.inner.chan,
            meta: &self.inner.meta,
        }
    }
}

/// Waits until one of `set` is readable and returns its index (the first readable
/// one in order). Blocks the task (state `Ba`) while all are empty.
pub fn poll(set: &[&dyn Pollable]) -> usize {
    poll_from(set, 0)
}

/// Like [`poll`], but scans starting at `start` (wrapping), for round-robin fairness.
pub fn poll_from(set: &[&dyn Pollable], start: usize) -> usize {
    assert!(!set.is_empty(), "poll over an empty stream set");
    let n = set.len();
    let order = |k: usize| (start + k) % n;
    loop {
        for k in 0..n {
            if set[order(k)].is_readable() {
                return order(k);
            }
        }
        // Protocol step 5 of `chan`.
        let task = current_task();
        let ext;
        let me: &Task = if task.is_null() {
            ext = external_task();
            *ext.external
                .as_ref()
                .expect("external waiter")
                .woken
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = false;
            &ext
        } else {
            // SAFETY: the running task is alive.
            unsafe { &*task }
        };
        me.token.store(true, Relaxed);
        let hooks: Vec<PollHooks<'_>> = set.iter().map(|p| p.poll_hooks()).collect();
        let mut registered = vec![false; n];
        let mut block = true;
        for k in 0..n {
            let i = order(k);
            // SAFETY: `poll` holds `&Consumer` for every member, and is the only
            // consumer-side operation on them meanwhile.
            match unsafe { hooks[i].chan.register(me) } {
                Reg::Registered => registered[i] = true,
                Reg::Ready => {
                    block = !me.token.swap(false, AcqRel);
                    break;
                }
            }
        }
        if block {
            if task.is_null() {
                let ext = me.external.as_ref().expect("external waiter");
                let mut g = ext.woken.lock().unwrap_or_else(|e| e.into_inner());
                while !*g {
                    g = ext.cv.wait(g).unwrap_or_else(|e| e.into_inner());
                }
            } else {
                for h in &hooks {
                    account(h.meta, Side::Read, false, false, true, 0);
                }
                {
                    let mut ps = me.poll_set.lock().unwrap_or_else(|e| e.into_inner());
                    ps.clear();
                    ps.extend(hooks.iter().map(|h| Arc::clone(h.meta)));
                }
                me.set_state(TaskState::BlockedAny);
                // SAFETY: `me` is the running task; we are running on its context.
                unsafe { suspend(me, Suspend::Block) };
            }
        }
        let mut cleared_by_producers = 0;
        for i in 0..n {
            // SAFETY: as for `register` above.
            if registered[i] && !unsafe { hooks[i].chan.unregister() } {
                cleared_by_producers += 1;
            }
        }
        wait_poll_acks(me, cleared_by_producers);
    }
}

/// Identity and monitoring accounting for a stream implemented outside this module
/// (the S-Net engine's multi-producer inboxes, `snet_engine::inbox`), so that its
/// activity appears in monitoring logs, traces and deadlock reports like a stream's.
#[cfg(not(loom))]
pub(crate) fn external_meta(name: Option<Arc<str>>, capacity: usize) -> Arc<StreamMeta> {
    Arc::new(StreamMeta {
        id: NEXT_STREAM.fetch_add(1, Relaxed),
        name,
        capacity: capacity.max(1),
        fill: AtomicU64::new(0),
        prod: SideAcct::default(),
        cons: SideAcct::default(),
    })
}

/// Accounts one operation on an external stream (see [`external_meta`]) that moved
/// `items` items: on the writing side if `write`, else on the reading side. A no-op
/// unless a worker collects stream activity.
#[cfg(not(loom))]
#[inline]
pub(crate) fn account_external(
    meta: &Arc<StreamMeta>,
    write: bool,
    items: usize,
    woke: bool,
    blocked: bool,
    len: usize,
) {
    if STREAM_MONITORS.load(Relaxed) == 0 {
        return;
    }
    let side = if write { Side::Write } else { Side::Read };
    account_slow(meta, side, items > 0, woke, blocked, len);
    if items > 1 {
        let a = match side {
            Side::Write => &meta.prod,
            Side::Read => &meta.cons,
        };
        a.count.fetch_add(items as u64 - 1, Relaxed);
    }
}
