//! A worker's mailbox of continuations that became ready to resume.
//!
//! When the last finisher of a join is not the worker that parked the joining fiber,
//! it cannot resume that fiber itself (fibers never change threads, see the crate
//! docs), so it pushes the frame's [`ParkSlot`] here and wakes the owner, whose
//! scheduler resumes the fiber. Many producers, one consumer; intrusive, no allocation.
//!
//! # Protocol
//!
//! 1. Producer: `slot.next = head` then CAS `head: old → slot` (Release), retrying on
//!    contention. After a successful CAS the producer must not touch `slot` again: the
//!    owner may resume the fiber and free the frame that holds it.
//! 2. Consumer (owner only): `swap(head, null)` (Acquire) takes the whole chain.
//!
//! There is no ABA hazard: producers only prepend, and the consumer never CASes.
//!
//! # Memory ordering
//!
//! The Release CAS in step 1 pairs with the Acquire swap in step 2: everything the
//! producer wrote before pushing (the stolen half's result) is visible to the owner
//! once it has taken the slot.

use std::cell::Cell;

use crate::sync::{AtomicPtr, Ordering};

/// Node embedded in a join frame or scope; names the parked fiber to resume.
#[derive(Debug)]
pub(crate) struct ParkSlot {
    next: AtomicPtr<ParkSlot>,
    /// The parked fiber (type-erased). Written and read by the owning worker only.
    fiber: Cell<*mut u8>,
}

// SAFETY: `fiber` is only accessed by the worker thread that owns the frame (see the
// module docs); other threads only touch `next` through atomics.
unsafe impl Sync for ParkSlot {}

impl ParkSlot {
    /// An unlinked slot.
    #[inline]
    pub(crate) fn new() -> Self {
        Self {
            next: AtomicPtr::new(std::ptr::null_mut()),
            fiber: Cell::new(std::ptr::null_mut()),
        }
    }

    /// Records the parked fiber (owner thread only).
    #[inline]
    pub(crate) fn set_fiber(&self, fiber: *mut u8) {
        self.fiber.set(fiber);
    }

    /// Takes the parked fiber (owner thread only).
    #[inline]
    pub(crate) fn take_fiber(&self) -> *mut u8 {
        self.fiber.replace(std::ptr::null_mut())
    }

    /// The next slot in a chain returned by [`Mailbox::take_all`].
    ///
    /// # Safety
    /// `this` must point to a live slot taken from a mailbox.
    #[inline]
    pub(crate) unsafe fn next(this: *const ParkSlot) -> *const ParkSlot {
        // SAFETY: caller contract; Relaxed suffices, the chain was acquired by take_all.
        unsafe { (*this).next.load(Ordering::Relaxed) }
    }
}

/// Intrusive multi-producer, single-consumer stack of ready slots.
#[derive(Debug)]
pub(crate) struct Mailbox {
    head: AtomicPtr<ParkSlot>,
}

impl Mailbox {
    /// An empty mailbox.
    pub(crate) fn new() -> Self {
        Self {
            head: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Step 1: pushes `slot`.
    ///
    /// # Safety
    /// `slot` must stay valid until the owner takes it, and must not be in any
    /// mailbox already.
    pub(crate) unsafe fn push(&self, slot: *const ParkSlot) {
        let slot = slot as *mut ParkSlot;
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: caller contract: slot is valid and not shared with another list.
            unsafe { (*slot).next.store(head, Ordering::Relaxed) };
            // Release: pairs with the Acquire swap in `take_all` (step 2).
            match self
                .head
                .compare_exchange_weak(head, slot, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(h) => head = h,
            }
        }
    }

    /// Step 2: takes every slot pushed so far (most recent first); null if none.
    #[inline]
    pub(crate) fn take_all(&self) -> *const ParkSlot {
        if self.head.load(Ordering::Relaxed).is_null() {
            return std::ptr::null();
        }
        // Acquire: pairs with the Release CAS in `push`.
        self.head.swap(std::ptr::null_mut(), Ordering::Acquire)
    }

    /// Racy emptiness check (a hint for the scheduler loop).
    #[inline]
    pub(crate) fn looks_empty(&self) -> bool {
        self.head.load(Ordering::Relaxed).is_null()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn takes_everything_pushed_once() {
        let mb = Mailbox::new();
        let slots: Vec<ParkSlot> = (0..4).map(|_| ParkSlot::new()).collect();
        std::thread::scope(|s| {
            for chunk in slots.chunks(2) {
                let mb = &mb;
                s.spawn(move || {
                    for slot in chunk {
                        // SAFETY: slots outlive the scope and are pushed once.
                        unsafe { mb.push(slot) };
                    }
                });
            }
        });
        let mut n = 0;
        let mut p = mb.take_all();
        while !p.is_null() {
            n += 1;
            // SAFETY: p came from take_all and the slots are alive.
            p = unsafe { ParkSlot::next(p) };
        }
        assert_eq!(n, 4);
        assert!(mb.take_all().is_null());
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::sync::{Arc, UnsafeCell};
    use loom::thread;

    struct Node {
        slot: ParkSlot,
        payload: UnsafeCell<u32>,
    }

    /// Two producers push while the owner drains: every slot arrives once with its
    /// payload visible.
    #[test]
    fn loom_two_producers_exactly_once() {
        loom::model(|| {
            let mb = Arc::new(Mailbox::new());
            let nodes: Arc<Vec<Node>> = Arc::new(
                (0..2)
                    .map(|_| Node {
                        slot: ParkSlot::new(),
                        payload: UnsafeCell::new(0),
                    })
                    .collect(),
            );
            let producers: Vec<_> = (0..2)
                .map(|i| {
                    let (mb, nodes) = (mb.clone(), nodes.clone());
                    thread::spawn(move || {
                        // SAFETY: only this producer writes node i before pushing it.
                        nodes[i].payload.with_mut(|p| unsafe { *p = 10 + i as u32 });
                        // SAFETY: nodes outlive the model body; each is pushed once.
                        unsafe { mb.push(&nodes[i].slot) };
                    })
                })
                .collect();
            let mut seen = [0u32; 2];
            let drain = |seen: &mut [u32; 2]| {
                let mut p = mb.take_all();
                while !p.is_null() {
                    let i = nodes.iter().position(|n| std::ptr::eq(&n.slot, p)).unwrap();
                    // SAFETY: acquired through take_all after the producer's write.
                    let v = nodes[i].payload.with(|q| unsafe { *q });
                    assert_eq!(v, 10 + i as u32);
                    seen[i] += 1;
                    // SAFETY: p is a live slot from the chain.
                    p = unsafe { ParkSlot::next(p) };
                }
            };
            drain(&mut seen);
            for p in producers {
                p.join().unwrap();
            }
            drain(&mut seen);
            assert_eq!(seen, [1, 1]);
        });
    }
}
