//! The lock-free core of a stream: a single-producer single-consumer FIFO with a
//! logical capacity, closing, and the wait/wake handshake — without knowing what a
//! task is.
//!
//! The task layer (`stream.rs`) calls the `try_*` operations; when one reports that
//! the caller must wait it registers a waiter (`register_*`) and suspends the task;
//! operations return a [`Wake`] naming the waiter that the caller must wake. Waiters are
//! opaque pointers to a `W: PollTarget` (a task control block; in the loom tests a
//! thread handle).
//!
//! # Layout
//!
//! * `state` — one 64-bit word: the number of items in the stream (bits 0..48) and the
//!   flags `CONS_WAIT` (consumer blocked in a read), `POLL_WAIT` (consumer registered
//!   by a poll over a stream set), `PROD_WAIT` (producer blocked on a full stream),
//!   `PROD_CLOSED`, `CONS_CLOSED`. Every transition is one CAS on this word, so
//!   "check the count and register as waiter" and "publish an item and claim the
//!   waiter" are each atomic: the seed's counter-based stream (seed 000 alg. 8) needs
//!   two RMWs per side and a lock for polling; this needs one CAS per operation and no
//!   lock.
//! * The items live in a chain of ring segments. A bounded stream only ever uses its
//!   first segment (sized to the next power of two ≥ capacity, used as a ring). A
//!   producer that writes beyond capacity (an *unbounded* stream, or a forced write)
//!   and finds its segment possibly full links a new segment of twice the size; the
//!   consumer follows the link when it reaches the old segment's `end` and frees it.
//! * `handoff` — at most one item written by the producer straight for a reader
//!   blocked on the empty stream (step 1b); it is not counted in `count`.
//!
//! # Protocol (numbered steps and the races they rule out)
//!
//! 1. Write: load `state` (Acquire). If `count < capacity` (or forced), write the item
//!    into slot `tail` of the producer's segment (free: `count` only shrinks
//!    concurrently, and the consumer's decrement that freed the slot is a Release that
//!    our Acquire load saw), then CAS `state` to `count+1` with `CONS_WAIT|POLL_WAIT`
//!    cleared. The CAS that clears a wait flag hands the waiter to this producer:
//!    exactly one party wakes a blocked consumer, never zero (the consumer set the flag
//!    in a CAS that saw `count == 0`, so this increment comes after it), never two.
//!    1b. Hand-over: if the load saw `CONS_WAIT` (a reader blocked on the empty
//!    stream; `count == 0`, and it stays 0 because only the producer increments),
//!    the producer stores the item in `handoff` instead of a slot and CASes
//!    `CONS_WAIT` away without incrementing `count`, claiming the reader as in step 1.
//!    The woken reader's next `try_pop` sees its consumer-private `waiting` flag
//!    (set by its registration), loads `state` (Acquire), finds `CONS_WAIT` cleared
//!    and takes the item from `handoff` — no CAS on the reader's side. If
//!    `close_producer` ended the wait instead, `handoff` is empty and the read
//!    continues with step 2 (and reports `Closed`). The producer touches `handoff`
//!    only between seeing `CONS_WAIT` and clearing it, the consumer only after
//!    seeing it cleared and before registering again, so they never overlap; a
//!    hand-over item is older than everything in the slots (it was written while
//!    the stream was empty), so FIFO order holds. Polls (`POLL_WAIT`) get no
//!    hand-over: the item goes into a slot as in step 1.
//! 2. Read: load `state` (Acquire). If `count > 0` move the item out of slot `head`,
//!    then CAS `state` to `count-1` with `PROD_WAIT` cleared, handing a blocked
//!    producer to this consumer.
//! 3. Register: the waiter pointer is stored (Relaxed) before the CAS that sets the
//!    flag (Release); the CAS only succeeds if the condition still holds (`count == 0`
//!    and not closed for a read; `count >= capacity` and not closed for a write), so
//!    a wake-up can never be missed between the check and the registration.
//! 4. Wake-before-block: the waker may deliver the wake-up before the registered task
//!    has actually suspended. The task layer copes (a task's owner worker only touches
//!    a woken task after the task has returned control to it).
//! 5. Poll (a consumer waits on several streams): it arms its poll token, registers
//!    `POLL_WAIT` on each empty stream, and stops at the first stream with data, where
//!    it tries to take its own token (`swap(false)`). A producer whose CAS cleared
//!    `POLL_WAIT` also tries the token ([`notify_poll`]); only the token holder wakes
//!    the consumer. After the poll the consumer clears its remaining registrations;
//!    for every registration a producer cleared, the producer will increment the
//!    waiter's `acks` as its very last access, and the consumer waits for those acks
//!    ([`wait_poll_acks`]) before returning. So a waiter is never touched after its
//!    poll returned (a task may finish and be freed right after), and a stale
//!    registration never survives into a later read or poll.
//! 6. Close: the closing side sets its `*_CLOSED` bit and clears the peer's wait flags
//!    in the same CAS, handing any blocked peer to itself for waking.
//!
//! # Memory ordering
//!
//! All CASes on `state` are AcqRel/Acquire: the Release part of the producer's
//! increment publishes the slot write (and segment links) to the consumer's Acquire
//! load; the Release part of the consumer's decrement publishes "slot read" to the
//! producer; a registration's Release publishes the waiter pointer to the Acquire of
//! the CAS that clears the flag. The hand-over CAS (step 1b) is AcqRel too: its
//! Release publishes `handoff` to the Acquire load in `take_handoff`; the reader's
//! next registration CAS (Release) publishes that it has emptied `handoff` to the
//! producer's Acquire load that sees `CONS_WAIT` again. Segment `end`/`next` are
//! written before the incrementing CAS, and are thus visible to a consumer whose
//! load saw that count.
//! The poll token is swapped with AcqRel (all swaps on it are totally ordered); the
//! ack `fetch_add` is Release and pairs with the Acquire load in `wait_poll_acks`.

use crate::sync::{
    spin_hint, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, CachePadded, UnsafeCell,
};
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

const COUNT_MASK: u64 = (1 << 48) - 1;
const CONS_WAIT: u64 = 1 << 63;
const POLL_WAIT: u64 = 1 << 62;
const PROD_WAIT: u64 = 1 << 61;
const PROD_CLOSED: u64 = 1 << 60;
const CONS_CLOSED: u64 = 1 << 59;
const OPEN_END: usize = usize::MAX;

/// Something a producer can wake after a poll registration: gives access to the
/// poll token and the ack counter of protocol step 5.
pub(crate) trait PollTarget {
    /// Armed (`true`) by a polling consumer; whoever swaps it to `false` wakes it.
    fn poll_token(&self) -> &AtomicBool;
    /// Incremented by a producer after its last access following a cleared
    /// `POLL_WAIT` registration.
    fn poll_acks(&self) -> &AtomicU32;
}

/// A waiter that an operation hands to its caller for waking.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Wake<W> {
    /// Nobody to wake.
    None,
    /// A peer blocked in a read or write: wake it.
    Blocked(*const W),
    /// A polling consumer: call [`notify_poll`], and wake it if that returns `true`.
    Poll(*const W),
}

/// Outcome of [`Chan::try_push`].
#[derive(Debug)]
pub(crate) enum Push<T, W> {
    /// Written; wake the given waiter.
    Done(Wake<W>),
    /// The stream holds `capacity` items; the item is handed back.
    Full(T),
    /// The consumer has gone; the item is handed back.
    Closed(T),
}

/// Outcome of [`Chan::try_pop`].
#[derive(Debug)]
pub(crate) enum Pop<T, W> {
    /// An item; wake the given waiter.
    Item(T, Wake<W>),
    /// No item now.
    Empty,
    /// No item, and the producer has gone: none will come.
    Closed,
}

/// Outcome of a `register_*` call.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reg {
    /// The waiter is registered: suspend until woken.
    Registered,
    /// The condition no longer holds: retry the operation instead of waiting.
    Ready,
}

struct Segment<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    mask: usize,
    /// One past the last global index the producer wrote here, once it moved on.
    end: AtomicUsize,
    next: AtomicPtr<Segment<T>>,
}

impl<T> Segment<T> {
    fn alloc(size: usize) -> *mut Segment<T> {
        debug_assert!(size.is_power_of_two());
        let slots = (0..size)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect();
        Box::into_raw(Box::new(Segment {
            slots,
            mask: size - 1,
            end: AtomicUsize::new(OPEN_END),
            next: AtomicPtr::new(ptr::null_mut()),
        }))
    }
}

struct ProdSide<T> {
    seg: *mut Segment<T>,
    tail: usize,
}

struct ConsSide<T> {
    seg: *mut Segment<T>,
    head: usize,
    /// A blocking read registered (`CONS_WAIT`) and has not yet looked for the
    /// hand-over that may have ended the wait (protocol step 1b).
    waiting: bool,
}

/// The shared core of one stream. See the module documentation.
///
/// `repr(C)` keeps the fields every blocking operation touches (`state`, the
/// waiters, `handoff` for small items, the read-mostly capacity) together in the
/// first cache-line pair, which both sides write anyway; the producer's and the
/// consumer's private positions follow on lines of their own.
#[repr(C)]
pub(crate) struct Chan<T, W> {
    state: AtomicU64,
    cons_waiter: AtomicPtr<W>,
    prod_waiter: AtomicPtr<W>,
    capacity: u64,
    unbounded: AtomicBool,
    /// An item handed directly to a blocked reader (protocol step 1b).
    handoff: UnsafeCell<Option<T>>,
    prod: CachePadded<UnsafeCell<ProdSide<T>>>,
    cons: CachePadded<UnsafeCell<ConsSide<T>>>,
}

// SAFETY: items of type `T` move from the producer thread to the consumer thread
// (`T: Send`). Producer-side and consumer-side fields are only accessed through the
// `unsafe` producer/consumer methods, whose contract is one producer and one
// consumer at a time; waiter pointers are only dereferenced by the task layer.
unsafe impl<T: Send, W> Send for Chan<T, W> {}
// SAFETY: as above.
unsafe impl<T: Send, W> Sync for Chan<T, W> {}

impl<T, W> std::fmt::Debug for Chan<T, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chan")
            .field("len", &(self.state.load(Relaxed) & COUNT_MASK))
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl<T, W: PollTarget> Chan<T, W> {
    /// A stream that holds at most `capacity` items (at least 1) unless `unbounded`.
    pub(crate) fn new(capacity: usize, unbounded: bool) -> Self {
        let capacity = capacity.max(1);
        let seg = Segment::alloc(capacity.next_power_of_two());
        Chan {
            state: AtomicU64::new(0),
            prod: CachePadded(UnsafeCell::new(ProdSide { seg, tail: 0 })),
            cons: CachePadded(UnsafeCell::new(ConsSide {
                seg,
                head: 0,
                waiting: false,
            })),
            cons_waiter: AtomicPtr::new(ptr::null_mut()),
            prod_waiter: AtomicPtr::new(ptr::null_mut()),
            handoff: UnsafeCell::new(None),
            capacity: capacity as u64,
            unbounded: AtomicBool::new(unbounded),
        }
    }

    /// The logical capacity.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity as usize
    }

    /// Current number of items (a snapshot).
    pub(crate) fn len(&self) -> usize {
        (self.state.load(Relaxed) & COUNT_MASK) as usize
    }

    /// Whether writes may exceed the capacity.
    pub(crate) fn is_unbounded(&self) -> bool {
        self.unbounded.load(Relaxed)
    }

    /// Allows (or forbids) writes beyond the capacity from now on.
    pub(crate) fn set_unbounded(&self, on: bool) {
        self.unbounded.store(on, Relaxed);
    }

    /// Whether the producer side has closed.
    pub(crate) fn is_producer_closed(&self) -> bool {
        self.state.load(Acquire) & PROD_CLOSED != 0
    }

    /// Whether the consumer side has closed.
    pub(crate) fn is_consumer_closed(&self) -> bool {
        self.state.load(Acquire) & CONS_CLOSED != 0
    }

    /// Whether a read would not block: an item is there or the producer has closed.
    pub(crate) fn is_readable(&self) -> bool {
        let s = self.state.load(Acquire);
        s & COUNT_MASK > 0 || s & PROD_CLOSED != 0
    }

    /// Protocol step 1. `force` writes even when the stream is full.
    ///
    /// # Safety
    ///
    /// Only one producer at a time (the holder of the producer endpoint).
    #[inline(always)]
    pub(crate) unsafe fn try_push(&self, item: T, force: bool) -> Push<T, W> {
        // Acquire: pairs with the consumer's Release CASes (a decrement that freed a
        // slot; a registration that published the end of its last hand-over read).
        let mut s = self.state.load(Acquire);
        if s & CONS_CLOSED != 0 {
            return Push::Closed(item);
        }
        if s & CONS_WAIT != 0 {
            // Step 1b: a reader blocked on the empty stream; hand it the item.
            // SAFETY: we are the only producer; the consumer does not touch
            // `handoff` between its registration (seen by our Acquire load) and its
            // Acquire load of the CAS below.
            unsafe { self.handoff.with_mut(|h| *h = Some(item)) };
            loop {
                debug_assert!(s & CONS_WAIT != 0 && s & COUNT_MASK == 0);
                // Release: publishes `handoff` to the woken consumer's Acquire load
                // in `try_pop`; Acquire: as above.
                match self
                    .state
                    .compare_exchange_weak(s, s & !CONS_WAIT, AcqRel, Acquire)
                {
                    Ok(_) => break,
                    Err(actual) => s = actual,
                }
            }
            return Push::Done(Wake::Blocked(self.cons_waiter.load(Relaxed).cast_const()));
        }
        let count = s & COUNT_MASK;
        if count >= self.capacity && !force && !self.unbounded.load(Relaxed) {
            return Push::Full(item);
        }
        // SAFETY: single producer (caller contract); `count` bounds the items in the
        // stream from above.
        unsafe { self.write_slot(count as usize, item) };
        loop {
            let new = (s + 1) & !(CONS_WAIT | POLL_WAIT);
            match self.state.compare_exchange_weak(s, new, AcqRel, Acquire) {
                Ok(_) => break,
                Err(actual) => s = actual,
            }
        }
        Push::Done(self.claimed_consumer(s))
    }

    /// Writes `item` at the producer's tail, linking a bigger segment if the current
    /// one may be full (only possible when writing beyond the capacity).
    ///
    /// # Safety
    ///
    /// Single producer; `count` ≥ the number of unconsumed items.
    unsafe fn write_slot(&self, count: usize, item: T) {
        self.prod.with_mut(|p| {
            // SAFETY: the producer side is ours alone (caller contract); segments
            // reachable from it are live (only the consumer frees segments, and only
            // ones the producer has left).
            unsafe {
                let p = &mut *p;
                let mut seg = &*p.seg;
                if count > seg.mask {
                    // Possibly full: move on to a fresh segment twice the size.
                    let bigger = Segment::alloc((seg.mask + 1) * 2);
                    seg.end.store(p.tail, Relaxed); // published by the count CAS
                    seg.next.store(bigger, Relaxed); // published by the count CAS
                    p.seg = bigger;
                    seg = &*bigger;
                }
                // Free: fewer than `size` items are unconsumed, so slot `tail - size`
                // (if it was ever used in this segment) has been read.
                seg.slots[p.tail & seg.mask].with_mut(|slot| (*slot).write(item));
                p.tail += 1;
            }
        })
    }

    /// Protocol step 2.
    ///
    /// # Safety
    ///
    /// Only one consumer at a time (the holder of the consumer endpoint).
    #[inline(always)]
    pub(crate) unsafe fn try_pop(&self) -> Pop<T, W> {
        // SAFETY: single consumer (caller contract): the consumer side is ours.
        if unsafe { self.cons.with(|c| (*c).waiting) } {
            // SAFETY: as above.
            if let Some(item) = unsafe { self.take_handoff() } {
                return Pop::Item(item, Wake::None);
            }
        }
        // Acquire: pairs with the producer's Release CAS that published the items.
        let mut s = self.state.load(Acquire);
        if s & COUNT_MASK == 0 {
            return if s & PROD_CLOSED != 0 {
                Pop::Closed
            } else {
                Pop::Empty
            };
        }
        // SAFETY: single consumer; count > 0 and only we decrement it.
        let item = unsafe { self.read_slot() };
        loop {
            let new = (s - 1) & !PROD_WAIT;
            match self.state.compare_exchange_weak(s, new, AcqRel, Acquire) {
                Ok(_) => break,
                Err(actual) => s = actual,
            }
        }
        let wake = if s & PROD_WAIT != 0 {
            Wake::Blocked(self.prod_waiter.load(Relaxed).cast_const())
        } else {
            Wake::None
        };
        Pop::Item(item, wake)
    }

    /// Consumer side of step 1b, after a blocking read registered: if the wait has
    /// ended (a producer cleared `CONS_WAIT`), take the hand-over item, if any (the
    /// wait may also have been ended by `close_producer`, which hands nothing).
    ///
    /// # Safety
    ///
    /// Single consumer.
    #[inline]
    unsafe fn take_handoff(&self) -> Option<T> {
        // Acquire: pairs with the Release of the producer CAS that cleared
        // `CONS_WAIT` (step 1b or 6), making its `handoff` write visible.
        if self.state.load(Acquire) & CONS_WAIT != 0 {
            return None; // still registered: nobody has ended the wait yet
        }
        // SAFETY: single consumer; after the CAS that cleared our registration the
        // producer does not touch `handoff` until we register again.
        unsafe {
            self.cons.with_mut(|c| (*c).waiting = false);
            self.handoff.with_mut(|h| (*h).take())
        }
    }

    /// Reference to the next item without removing it.
    ///
    /// # Safety
    ///
    /// Single consumer; the reference must not outlive the next `try_pop`.
    pub(crate) unsafe fn peek(&self) -> Option<&T> {
        if self.state.load(Acquire) & COUNT_MASK == 0 {
            return None;
        }
        self.cons.with_mut(|c| {
            // SAFETY: consumer side is ours; count > 0 so the slot at `head` holds an
            // initialised item that only we can remove.
            unsafe {
                let c = &mut *c;
                let seg = self.follow_segment(c);
                let slot = &seg.slots[c.head & seg.mask];
                Some(slot.with(|p| &*(*p).as_ptr()))
            }
        })
    }

    /// Moves to the next segment if the consumer reached the end of its current one.
    ///
    /// # Safety
    ///
    /// Consumer side, exclusive; the segment pointer is live.
    #[inline(always)]
    unsafe fn follow_segment<'a>(&self, c: &mut ConsSide<T>) -> &'a Segment<T> {
        // SAFETY: (caller) the consumer's segment is live until we free it here.
        unsafe {
            let seg = &*c.seg;
            if seg.end.load(Relaxed) == c.head {
                Self::next_segment(c)
            } else {
                seg
            }
        }
    }

    /// The consumer leaves its segment (the producer linked a bigger one).
    ///
    /// # Safety
    ///
    /// As [`Chan::follow_segment`], and the consumer reached the segment's `end`.
    #[cold]
    #[inline(never)]
    unsafe fn next_segment<'a>(c: &mut ConsSide<T>) -> &'a Segment<T> {
        // SAFETY: (caller) the producer has moved on to `next` (published by the count
        // CAS our Acquire load saw) and will not touch the old segment again.
        unsafe {
            let next = (*c.seg).next.load(Relaxed);
            debug_assert!(!next.is_null());
            drop(Box::from_raw(c.seg));
            c.seg = next;
            &*next
        }
    }

    /// # Safety
    ///
    /// Single consumer and at least one item in the stream.
    unsafe fn read_slot(&self) -> T {
        self.cons.with_mut(|c| {
            // SAFETY: see `peek`; the item is moved out exactly once, then `head`
            // advances past it.
            unsafe {
                let c = &mut *c;
                let seg = self.follow_segment(c);
                let item = seg.slots[c.head & seg.mask].with(|p| (*p).assume_init_read());
                c.head += 1;
                item
            }
        })
    }

    fn claimed_consumer(&self, old: u64) -> Wake<W> {
        if old & CONS_WAIT != 0 {
            Wake::Blocked(self.cons_waiter.load(Relaxed).cast_const())
        } else if old & POLL_WAIT != 0 {
            Wake::Poll(self.cons_waiter.load(Relaxed).cast_const())
        } else {
            Wake::None
        }
    }

    /// Protocol step 3 for a blocking read.
    ///
    /// # Safety
    ///
    /// Single consumer, with no other registration of this consumer active.
    #[inline]
    pub(crate) unsafe fn register_reader(&self, waiter: *const W) -> Reg {
        let r = self.register_consumer(waiter, CONS_WAIT);
        if r == Reg::Registered {
            // SAFETY: single consumer (caller contract).
            unsafe { self.cons.with_mut(|c| (*c).waiting = true) };
        }
        r
    }

    /// Protocol step 5: registration of a polling consumer.
    ///
    /// # Safety
    ///
    /// As [`Chan::register_reader`]; the waiter's poll token must be armed.
    pub(crate) unsafe fn register_poller(&self, waiter: *const W) -> Reg {
        self.register_consumer(waiter, POLL_WAIT)
    }

    #[inline]
    fn register_consumer(&self, waiter: *const W, flag: u64) -> Reg {
        self.cons_waiter.store(waiter.cast_mut(), Relaxed); // published by the CAS
        let mut s = self.state.load(Acquire);
        loop {
            if s & COUNT_MASK > 0 || s & PROD_CLOSED != 0 {
                return Reg::Ready;
            }
            match self
                .state
                .compare_exchange_weak(s, s | flag, AcqRel, Acquire)
            {
                Ok(_) => return Reg::Registered,
                Err(actual) => s = actual,
            }
        }
    }

    /// Clears a poll registration. Returns `false` if a producer cleared it first: that
    /// producer will ack (protocol step 5).
    ///
    /// # Safety
    ///
    /// Single consumer.
    pub(crate) unsafe fn unregister_poller(&self) -> bool {
        let mut s = self.state.load(Relaxed);
        loop {
            if s & POLL_WAIT == 0 {
                return false;
            }
            match self
                .state
                .compare_exchange_weak(s, s & !POLL_WAIT, AcqRel, Relaxed)
            {
                Ok(_) => return true,
                Err(actual) => s = actual,
            }
        }
    }

    /// Protocol step 3 for a write to a full stream.
    ///
    /// # Safety
    ///
    /// Single producer.
    pub(crate) unsafe fn register_writer(&self, waiter: *const W) -> Reg {
        self.prod_waiter.store(waiter.cast_mut(), Relaxed); // published by the CAS
        let mut s = self.state.load(Acquire);
        loop {
            if s & COUNT_MASK < self.capacity
                || s & CONS_CLOSED != 0
                || self.unbounded.load(Relaxed)
            {
                return Reg::Ready;
            }
            match self
                .state
                .compare_exchange_weak(s, s | PROD_WAIT, AcqRel, Acquire)
            {
                Ok(_) => return Reg::Registered,
                Err(actual) => s = actual,
            }
        }
    }

    /// Protocol step 6, producer side. Returns the consumer to wake, if any.
    ///
    /// # Safety
    ///
    /// Called once, by the producer.
    pub(crate) unsafe fn close_producer(&self) -> Wake<W> {
        let mut s = self.state.load(Acquire);
        loop {
            let new = (s | PROD_CLOSED) & !(CONS_WAIT | POLL_WAIT);
            match self.state.compare_exchange_weak(s, new, AcqRel, Acquire) {
                Ok(_) => return self.claimed_consumer(s),
                Err(actual) => s = actual,
            }
        }
    }

    /// Protocol step 6, consumer side. Returns the producer to wake, if any.
    ///
    /// # Safety
    ///
    /// Called once, by the consumer.
    pub(crate) unsafe fn close_consumer(&self) -> Wake<W> {
        let mut s = self.state.load(Acquire);
        loop {
            let new = (s | CONS_CLOSED) & !PROD_WAIT;
            match self.state.compare_exchange_weak(s, new, AcqRel, Acquire) {
                Ok(_) if s & PROD_WAIT != 0 => {
                    return Wake::Blocked(self.prod_waiter.load(Relaxed).cast_const())
                }
                Ok(_) => return Wake::None,
                Err(actual) => s = actual,
            }
        }
    }
}

/// Producer side of protocol step 5: try the polling consumer's token. Returns `true`
/// if the caller won it and must wake the waiter.
///
/// # Safety
///
/// `w` came out of a [`Wake::Poll`] returned to the caller, and is not used again
/// by the caller after this call unless it returns `true` (then it may be woken).
pub(crate) unsafe fn notify_poll<W: PollTarget>(w: *const W) -> bool {
    // SAFETY: a cleared-but-unacked poll registration keeps the waiter alive: its
    // consumer waits for our ack before returning from the poll.
    unsafe {
        let won = (*w).poll_token().swap(false, AcqRel);
        // Last access unless we won (then the consumer is blocked until we wake it).
        (*w).poll_acks().fetch_add(1, Release);
        won
    }
}

/// Consumer side of protocol step 5: wait until `expected` producers have acked, then
/// reset the counter for the next poll.
pub(crate) fn wait_poll_acks<W: PollTarget>(w: &W, expected: u32) {
    if expected == 0 {
        return;
    }
    let mut spins = 0u32;
    while w.poll_acks().load(Acquire) < expected {
        spins += 1;
        if spins < 64 {
            spin_hint();
        } else {
            #[cfg(not(loom))]
            std::thread::yield_now();
            #[cfg(loom)]
            loom::thread::yield_now();
        }
    }
    w.poll_acks().store(0, Relaxed);
}

impl<T, W> Drop for Chan<T, W> {
    fn drop(&mut self) {
        let mut remaining = (self.state.load(Relaxed) & COUNT_MASK) as usize;
        self.cons.with_mut(|c| {
            // SAFETY: `&mut self`: both endpoints are gone. Items from `head` on are
            // initialised and dropped once; every segment from the consumer's is freed.
            unsafe {
                let c = &mut *c;
                let mut seg = c.seg;
                let mut head = c.head;
                while !seg.is_null() {
                    let s = &*seg;
                    while remaining > 0 && s.end.load(Relaxed) != head {
                        s.slots[head & s.mask].with_mut(|p| (*p).assume_init_drop());
                        head += 1;
                        remaining -= 1;
                    }
                    let next = s.next.load(Relaxed);
                    drop(Box::from_raw(seg));
                    seg = next;
                }
            }
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Default, Debug)]
    struct Dummy {
        token: AtomicBool,
        acks: AtomicU32,
    }
    impl PollTarget for Dummy {
        fn poll_token(&self) -> &AtomicBool {
            &self.token
        }
        fn poll_acks(&self) -> &AtomicU32 {
            &self.acks
        }
    }

    type C<T> = Chan<T, Dummy>;

    #[test]
    fn bounded_fifo_full_empty() {
        let c: C<u32> = Chan::new(3, false);
        // SAFETY: one thread acts as the single producer and consumer.
        unsafe {
            assert!(matches!(c.try_pop(), Pop::Empty));
            for i in 0..3 {
                assert!(matches!(c.try_push(i, false), Push::Done(Wake::None)));
            }
            assert!(matches!(c.try_push(9, false), Push::Full(9)));
            assert_eq!(c.peek(), Some(&0));
            for i in 0..3 {
                assert!(matches!(c.try_pop(), Pop::Item(v, Wake::None) if v == i));
            }
            // Wrap around the ring a few times.
            for i in 0..20 {
                assert!(matches!(c.try_push(i, false), Push::Done(_)));
                assert!(matches!(c.try_pop(), Pop::Item(v, _) if v == i));
            }
        }
    }

    #[test]
    fn forced_writes_grow_and_keep_order() {
        let c: C<usize> = Chan::new(2, false);
        // SAFETY: single thread is producer and consumer.
        unsafe {
            for i in 0..100 {
                assert!(matches!(c.try_push(i, true), Push::Done(_)));
                if i % 3 == 0 {
                    // interleave some reads
                }
            }
            assert_eq!(c.len(), 100);
            for i in 0..50 {
                assert!(matches!(c.try_pop(), Pop::Item(v, _) if v == i));
            }
            for i in 100..130 {
                assert!(matches!(c.try_push(i, true), Push::Done(_)));
            }
            for i in 50..130 {
                assert!(matches!(c.try_pop(), Pop::Item(v, _) if v == i));
            }
            assert!(matches!(c.try_pop(), Pop::Empty));
        }
    }

    #[test]
    fn drop_frees_remaining_items_across_segments() {
        let token = Arc::new(());
        {
            let c: C<Arc<()>> = Chan::new(2, true);
            // SAFETY: single thread is producer and consumer.
            unsafe {
                for _ in 0..37 {
                    assert!(matches!(
                        c.try_push(Arc::clone(&token), false),
                        Push::Done(_)
                    ));
                }
                for _ in 0..5 {
                    assert!(matches!(c.try_pop(), Pop::Item(_, _)));
                }
            }
            assert_eq!(Arc::strong_count(&token), 33);
        }
        assert_eq!(Arc::strong_count(&token), 1);
    }

    #[test]
    fn registration_and_claims() {
        let c: C<u8> = Chan::new(1, false);
        let w = Dummy::default();
        let wp: *const Dummy = &w;
        // SAFETY: single thread plays both sides.
        unsafe {
            assert_eq!(c.register_reader(wp), Reg::Registered);
            match c.try_push(1, false) {
                Push::Done(Wake::Blocked(p)) => assert_eq!(p, wp),
                other => panic!("expected a claimed reader, got {other:?}"),
            }
            // Step 1b: the item went to the blocked reader, not into the buffer.
            assert_eq!(c.len(), 0);
            assert!(matches!(c.try_pop(), Pop::Item(1, Wake::None)));
            assert!(matches!(c.try_pop(), Pop::Empty));
            assert!(matches!(c.try_push(1, false), Push::Done(Wake::None)));
            // Full now: a writer registers; the read hands it back.
            assert_eq!(c.register_writer(wp), Reg::Registered);
            assert!(matches!(c.try_pop(), Pop::Item(1, Wake::Blocked(p)) if p == wp));
            // Not full any more: registration refuses.
            assert_eq!(c.register_writer(wp), Reg::Ready);
            // Poll registration is cleared by the write and reported as Poll.
            assert_eq!(c.register_poller(wp), Reg::Registered);
            assert!(matches!(c.try_push(2, false), Push::Done(Wake::Poll(p)) if p == wp));
            assert!(!c.unregister_poller());
            assert_eq!(c.register_poller(wp), Reg::Ready);
            assert!(matches!(c.try_pop(), Pop::Item(2, Wake::None)));
            assert_eq!(c.register_poller(wp), Reg::Registered);
            assert!(c.unregister_poller());
            // Closing hands over the waiter and makes reads report Closed.
            assert_eq!(c.register_reader(wp), Reg::Registered);
            assert!(matches!(c.close_producer(), Wake::Blocked(p) if p == wp));
            assert!(matches!(c.try_pop(), Pop::Closed));
            assert_eq!(c.register_reader(wp), Reg::Ready);
        }
    }

    #[test]
    fn consumer_close_rejects_writes() {
        let c: C<u8> = Chan::new(1, false);
        let w = Dummy::default();
        // SAFETY: single thread plays both sides.
        unsafe {
            assert!(matches!(c.try_push(1, false), Push::Done(_)));
            assert_eq!(c.register_writer(&w), Reg::Registered);
            assert!(matches!(c.close_consumer(), Wake::Blocked(_)));
            assert!(matches!(c.try_push(2, false), Push::Closed(2)));
        }
    }

    #[test]
    fn two_threads_many_items() {
        const N: u64 = 200_000;
        let c: Arc<C<u64>> = Arc::new(Chan::new(16, false));
        let c2 = Arc::clone(&c);
        let prod = std::thread::spawn(move || {
            let mut i = 0;
            while i < N {
                // SAFETY: this thread is the only producer.
                match unsafe { c2.try_push(i, false) } {
                    Push::Done(_) => i += 1,
                    Push::Full(_) => std::hint::spin_loop(),
                    Push::Closed(_) => unreachable!(),
                }
            }
        });
        let mut expect = 0;
        while expect < N {
            // SAFETY: this thread is the only consumer.
            match unsafe { c.try_pop() } {
                Pop::Item(v, _) => {
                    assert_eq!(v, expect);
                    expect += 1;
                }
                Pop::Empty => std::hint::spin_loop(),
                Pop::Closed => unreachable!(),
            }
        }
        prod.join().unwrap();
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! Exhaustive interleavings of the wait/wake and poll protocols with capacity 1,
    //! using loom threads as waiters: "suspend" = park until the `woken` flag is set.
    use super::*;
    use loom::sync::{Arc, Condvar, Mutex};
    use loom::thread;

    struct Waiter {
        token: AtomicBool,
        acks: AtomicU32,
        woken: Mutex<bool>,
        cv: Condvar,
    }
    impl PollTarget for Waiter {
        fn poll_token(&self) -> &AtomicBool {
            &self.token
        }
        fn poll_acks(&self) -> &AtomicU32 {
            &self.acks
        }
    }
    impl Waiter {
        fn new() -> Arc<Waiter> {
            Arc::new(Waiter {
                token: AtomicBool::new(false),
                acks: AtomicU32::new(0),
                woken: Mutex::new(false),
                cv: Condvar::new(),
            })
        }
        fn suspend(&self) {
            // A blocking primitive that synchronizes (loom's park/Notify do not
            // create happens-before edges, so a flag + park would be unsound there).
            let mut w = self.woken.lock().unwrap();
            while !*w {
                w = self.cv.wait(w).unwrap();
            }
            *w = false;
        }
    }
    fn wake(w: *const Waiter) {
        // SAFETY: the waiter is kept alive by its own thread, which is suspended
        // until this wake-up.
        unsafe {
            *(*w).woken.lock().unwrap() = true;
            (*w).cv.notify_one();
        }
    }
    fn handle(w: Wake<Waiter>) {
        match w {
            Wake::None => {}
            Wake::Blocked(p) => wake(p),
            Wake::Poll(p) => {
                // SAFETY: `p` came from a Wake::Poll handed to us, and is used again
                // only if we won the token (then `wake`).
                if unsafe { notify_poll(p) } {
                    wake(p)
                }
            }
        }
    }

    fn push_blocking(c: &Chan<u32, Waiter>, me: &Waiter, v: u32) {
        loop {
            // SAFETY: the calling thread is the only producer.
            match unsafe { c.try_push(v, false) } {
                Push::Done(w) => return handle(w),
                Push::Full(_) => {
                    // SAFETY: only producer.
                    if unsafe { c.register_writer(me) } == Reg::Registered {
                        me.suspend();
                    }
                }
                Push::Closed(_) => unreachable!(),
            }
        }
    }

    /// The producer thread of the blocking models: writes `0..n` (waiting for room),
    /// then closes.
    fn produce_and_close(c: &Chan<u32, Waiter>, n: u32) {
        let me = Waiter::new();
        for i in 0..n {
            push_blocking(c, &me, i);
        }
        // SAFETY: the calling thread is the only producer and closes once.
        handle(unsafe { c.close_producer() });
    }

    fn pop_blocking(c: &Chan<u32, Waiter>, me: &Waiter) -> Option<u32> {
        loop {
            // SAFETY: the calling thread is the only consumer.
            match unsafe { c.try_pop() } {
                Pop::Item(v, w) => {
                    handle(w);
                    return Some(v);
                }
                Pop::Closed => return None,
                Pop::Empty => {
                    // SAFETY: only consumer.
                    if unsafe { c.register_reader(me) } == Reg::Registered {
                        me.suspend();
                    }
                }
            }
        }
    }

    #[test]
    fn blocking_read_write_capacity_one() {
        loom::model(|| {
            let c: Arc<Chan<u32, Waiter>> = Arc::new(Chan::new(1, false));
            let c2 = Arc::clone(&c);
            let p = thread::spawn(move || produce_and_close(&c2, 3));
            let me = Waiter::new();
            let mut got = vec![];
            while let Some(v) = pop_blocking(&c, &me) {
                got.push(v);
            }
            assert_eq!(got, vec![0, 1, 2]);
            p.join().unwrap();
        });
    }

    #[test]
    fn forced_writes_grow_segments_under_a_concurrent_reader() {
        // Capacity 1 with forced writes: the producer links segments of size 2 and 4
        // while the consumer may be following them (protocol: segment `end`/`next`
        // published by the count CAS).
        loom::model(|| {
            let c: Arc<Chan<u32, Waiter>> = Arc::new(Chan::new(1, false));
            let c2 = Arc::clone(&c);
            let p = thread::spawn(move || {
                for i in 0..4 {
                    // SAFETY: the only producer.
                    match unsafe { c2.try_push(i, true) } {
                        Push::Done(w) => handle(w),
                        _ => unreachable!("forced writes always succeed"),
                    }
                }
                // SAFETY: producer closes once.
                handle(unsafe { c2.close_producer() });
            });
            let me = Waiter::new();
            let mut got = vec![];
            while let Some(v) = pop_blocking(&c, &me) {
                got.push(v);
            }
            assert_eq!(got, vec![0, 1, 2, 3]);
            p.join().unwrap();
        });
    }

    #[test]
    fn hand_over_then_buffered_then_close() {
        // Step 1b against steps 1, 2 and 6: the consumer blocks in reads and in a
        // poll on one stream of capacity 2 while the producer writes three items and
        // closes; every item arrives once and in order, whether it was handed over
        // or buffered, and the poll never sees a hand-over it cannot read.
        loom::model(|| {
            let c: Arc<Chan<u32, Waiter>> = Arc::new(Chan::new(2, false));
            let c2 = Arc::clone(&c);
            let p = thread::spawn(move || produce_and_close(&c2, 3));
            let me = Waiter::new();
            let mut got = vec![];
            // A blocking read (may be handed its item) ...
            got.extend(pop_blocking(&c, &me));
            // ... then a poll on the same stream (must not see a hand-over) ...
            me.token.store(true, Relaxed);
            // SAFETY: single consumer.
            let registered = match unsafe { c.register_poller(&*me) } {
                Reg::Registered => true,
                Reg::Ready => {
                    if !me.token.swap(false, AcqRel) {
                        me.suspend();
                    }
                    false
                }
            };
            if registered {
                me.suspend();
            }
            // SAFETY: single consumer.
            let cleared = registered && !unsafe { c.unregister_poller() };
            wait_poll_acks(&*me, u32::from(cleared));
            assert!(c.is_readable());
            // ... then blocking reads to the end.
            while let Some(v) = pop_blocking(&c, &me) {
                got.push(v);
            }
            assert_eq!(got, vec![0, 1, 2]);
            p.join().unwrap();
        });
    }

    #[test]
    fn poll_two_streams() {
        loom::model(|| {
            let a: Arc<Chan<u32, Waiter>> = Arc::new(Chan::new(1, false));
            let b: Arc<Chan<u32, Waiter>> = Arc::new(Chan::new(1, false));
            let hs: Vec<_> = [(Arc::clone(&a), 10), (Arc::clone(&b), 20)]
                .into_iter()
                .map(|(c, v)| {
                    thread::spawn(move || {
                        let me = Waiter::new();
                        push_blocking(&c, &me, v);
                        // SAFETY: producer closes once.
                        handle(unsafe { c.close_producer() });
                    })
                })
                .collect();
            let me = Waiter::new();
            let streams = [&a, &b];
            let mut got = vec![];
            let mut open = [true, true];
            while open.iter().any(|o| *o) {
                // Poll (protocol step 5) over the open streams.
                me.token.store(true, Relaxed);
                let mut registered = vec![];
                let mut block = true;
                for (i, s) in streams.iter().enumerate() {
                    if !open[i] {
                        continue;
                    }
                    // SAFETY: single consumer.
                    match unsafe { s.register_poller(&*me) } {
                        Reg::Registered => registered.push(i),
                        Reg::Ready => {
                            block = !me.token.swap(false, AcqRel);
                            break;
                        }
                    }
                }
                if block {
                    me.suspend();
                }
                let mut cleared_by_producers = 0;
                for i in registered {
                    // SAFETY: single consumer.
                    if !unsafe { streams[i].unregister_poller() } {
                        cleared_by_producers += 1;
                    }
                }
                wait_poll_acks(&*me, cleared_by_producers);
                // Drain whatever is readable.
                for (i, s) in streams.iter().enumerate() {
                    if open[i] && s.is_readable() {
                        // SAFETY: single consumer.
                        match unsafe { s.try_pop() } {
                            Pop::Item(v, w) => {
                                handle(w);
                                got.push(v)
                            }
                            Pop::Closed => open[i] = false,
                            Pop::Empty => unreachable!("readable stream was empty"),
                        }
                    }
                }
            }
            got.sort();
            assert_eq!(got, vec![10, 20]);
            for h in hs {
                h.join().unwrap();
            }
        });
    }
}
