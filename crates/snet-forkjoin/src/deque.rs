//! A fixed-capacity Chase–Lev work-stealing deque of job pointers.
//!
//! The owner ([`Worker`]) pushes and pops at the bottom; thieves ([`Stealer`]) take from
//! the top. Capacity is fixed: a full deque hands the pointer back to the caller, who
//! then runs the work inline (a fork that is not offered for stealing is still
//! correct, it merely gives up parallelism). A fixed ring needs no buffer reclamation.
//!
//! # Protocol (numbered as referred to in comments)
//!
//! 1. `push`: write `slot[b]`, then `bottom = b + 1` (Release). A thief that reads the
//!    new `bottom` (Acquire) sees the slot.
//! 2. `pop`: `bottom = b - 1`; owner barrier ([`barrier::light`]); read `top`.
//!    * `top < b - 1 + 1` with more than one element: the element at `b - 1` is ours.
//!    * exactly one element: race a thief with CAS on `top`; restore `bottom`.
//!    * empty: restore `bottom`.
//! 3. `steal`: read `top` (Acquire); thief barrier ([`barrier::heavy`]); read `bottom`
//!    (Acquire); if non-empty read `slot[top]` and CAS `top → top + 1` (SeqCst).
//!
//! Steps 2 and 3 are the store→load pairs of Chase–Lev (Lê et al., PPoPP'13): the two
//! barriers ensure that a thief which missed the owner's decrement of `bottom` is seen
//! by the owner's read of `top`, so no element is taken twice. The slot a thief reads
//! cannot be overwritten before its CAS fails: the owner reuses `slot[t]` only at index
//! `t + capacity`, which requires it to have observed `top > t`.
//!
//! # Memory ordering
//!
//! `bottom` store in `push` is Release, paired with the thief's Acquire load in step 3.
//! The `top` CAS is SeqCst in both pop and steal (they race on the last element). The
//! barrier pair is described in module `barrier`.

use std::fmt;
use std::ptr::NonNull;

use crate::barrier::{self, BarrierMode};
use crate::sync::{Arc, AtomicIsize, AtomicPtr, CachePadded, Ordering};

/// Outcome of a steal attempt.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Steal<T> {
    /// The deque was empty.
    Empty,
    /// Took this element.
    Success(T),
    /// Lost a race; the deque may still have elements.
    Retry,
}

struct Inner<T> {
    top: CachePadded<AtomicIsize>,
    bottom: CachePadded<AtomicIsize>,
    slots: Box<[AtomicPtr<T>]>,
    mask: usize,
    mode: BarrierMode,
}

impl<T> Inner<T> {
    #[inline]
    fn slot(&self, index: isize) -> &AtomicPtr<T> {
        // Indices only grow; wrapping into the ring by mask is the point.
        let i = (index as usize) & self.mask;
        debug_assert!(i < self.slots.len());
        // SAFETY: `slots.len() == mask + 1` (a power of two), so `i` is in bounds.
        unsafe { self.slots.get_unchecked(i) }
    }
}

/// Owner handle: push and pop at the bottom. Not `Sync`; one per worker.
pub(crate) struct Worker<T> {
    inner: Arc<Inner<T>>,
    /// A lower bound of `top` (it only grows), refreshed when the ring looks full.
    top_cache: std::cell::Cell<isize>,
}

/// Thief handle: steal from the top. Cloneable and shared among workers.
pub(crate) struct Stealer<T> {
    inner: Arc<Inner<T>>,
}

// SAFETY: the deque only stores pointers and hands them from the owner to exactly one
// taker; the pointees' thread-safety is the job layer's concern (jobs are Send).
unsafe impl<T> Send for Worker<T> {}
// SAFETY: as above; a Stealer's methods are safe to call from many threads at once.
unsafe impl<T> Send for Stealer<T> {}
// SAFETY: see Send.
unsafe impl<T> Sync for Stealer<T> {}

impl<T> Clone for Stealer<T> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<T> fmt::Debug for Worker<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Worker").field("len", &self.len()).finish()
    }
}

impl<T> fmt::Debug for Stealer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stealer").finish_non_exhaustive()
    }
}

impl<T> Worker<T> {
    /// A deque with room for `capacity` (rounded up to a power of two) elements.
    pub(crate) fn new(capacity: usize, mode: BarrierMode) -> Self {
        let cap = capacity.max(2).next_power_of_two();
        let slots = (0..cap)
            .map(|_| AtomicPtr::new(std::ptr::null_mut()))
            .collect();
        Self {
            inner: Arc::new(Inner {
                top: CachePadded(AtomicIsize::new(0)),
                bottom: CachePadded(AtomicIsize::new(0)),
                slots,
                mask: cap - 1,
                mode,
            }),
            top_cache: std::cell::Cell::new(0),
        }
    }

    /// A thief handle for this deque.
    pub(crate) fn stealer(&self) -> Stealer<T> {
        Stealer {
            inner: self.inner.clone(),
        }
    }

    /// Number of elements (exact for the owner up to concurrent steals).
    pub(crate) fn len(&self) -> usize {
        let b = self.inner.bottom.load(Ordering::Relaxed);
        let t = self.inner.top.load(Ordering::Relaxed);
        (b - t).max(0) as usize
    }

    /// Number of elements as the owner sees it, possibly stale by concurrent steals
    /// (an over-estimate): one Relaxed load of `top`.
    #[inline]
    pub(crate) fn len_hint(&self) -> isize {
        let inner = &*self.inner;
        inner.bottom.load(Ordering::Relaxed) - inner.top.load(Ordering::Relaxed)
    }

    /// The owner's current bottom index (used to remember a scope's base).
    #[inline]
    pub(crate) fn bottom(&self) -> isize {
        self.inner.bottom.load(Ordering::Relaxed)
    }

    /// Pushes `item` at the bottom; hands it back if the ring is full (step 1).
    #[inline]
    pub(crate) fn push(&self, item: NonNull<T>) -> Result<(), NonNull<T>> {
        let inner = &*self.inner;
        let b = inner.bottom.load(Ordering::Relaxed);
        if b - self.top_cache.get() > inner.mask as isize {
            // Pairs with the thieves' SeqCst CAS on `top`: once we see their increment,
            // they have finished reading the slot we are about to reuse.
            self.top_cache.set(inner.top.load(Ordering::Acquire));
            if b - self.top_cache.get() > inner.mask as isize {
                return Err(item);
            }
        }
        inner.slot(b).store(item.as_ptr(), Ordering::Relaxed);
        // Release: pairs with the Acquire load of `bottom` in `steal` (step 3).
        inner.bottom.store(b + 1, Ordering::Release);
        Ok(())
    }

    /// Pops the bottom element (step 2).
    #[inline]
    pub(crate) fn pop(&self) -> Option<NonNull<T>> {
        let inner = &*self.inner;
        let b = inner.bottom.load(Ordering::Relaxed) - 1;
        inner.bottom.store(b, Ordering::Relaxed);
        // Pairs with `barrier::heavy` in `steal`.
        barrier::light(inner.mode);
        let t = inner.top.load(Ordering::Relaxed);
        if t < b {
            // More than one element: no thief can reach index b.
            return NonNull::new(inner.slot(b).load(Ordering::Relaxed));
        }
        let mut item = None;
        if t == b {
            // Last element: race the thieves for it (SeqCst pairs with their CAS).
            if inner
                .top
                .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
            {
                item = NonNull::new(inner.slot(b).load(Ordering::Relaxed));
            }
        }
        // Empty (or the last element is gone either way): restore bottom = top.
        inner.bottom.store(b + 1, Ordering::Relaxed);
        item
    }
}

impl<T> Stealer<T> {
    /// Cheap, possibly stale emptiness check (no barrier).
    #[inline]
    pub(crate) fn looks_empty(&self) -> bool {
        let t = self.inner.top.load(Ordering::Relaxed);
        let b = self.inner.bottom.load(Ordering::Relaxed);
        b <= t
    }

    /// Tries to take the top element (step 3).
    pub(crate) fn steal(&self) -> Steal<NonNull<T>> {
        let inner = &*self.inner;
        // Acquire: pairs with the SeqCst CAS of other thieves so the slot we read below
        // belongs to index t.
        let t = inner.top.load(Ordering::Acquire);
        if inner.bottom.load(Ordering::Relaxed) <= t {
            // Racy pre-check to avoid the heavy barrier on an empty deque; a stale
            // "empty" only delays a steal.
            return Steal::Empty;
        }
        // Pairs with `barrier::light` in `pop`.
        barrier::heavy(inner.mode);
        // Acquire: pairs with the Release store in `push` (the slot is written).
        let b = inner.bottom.load(Ordering::Acquire);
        if b <= t {
            return Steal::Empty;
        }
        let item = inner.slot(t).load(Ordering::Relaxed);
        if inner
            .top
            .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return Steal::Retry;
        }
        match NonNull::new(item) {
            Some(p) => Steal::Success(p),
            None => Steal::Retry,
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;
