//! A worker's mailbox: an unbounded multi-producer single-consumer queue.
//!
//! Any thread may `push` (other workers waking or spawning tasks, the placement
//! scheduler, the thread that starts the runtime); only the owning worker pops. This is
//! Vyukov's non-intrusive MPSC queue: a singly linked list with a stub node, where
//! producers swap themselves in as the new `head` and then link the previous head to
//! the new node. Seed 000 §4.2.2 uses a two-lock queue with a tail lock; this variant
//! needs no lock at all on either side (one `swap` per push, no atomic RMW per pop).
//!
//! # Protocol
//!
//! 1. `push`: allocate node `n` (next = null); `prev = head.swap(n)`; `prev.next = n`.
//! 2. `pop`: `t = tail` (consumer-private); `next = t.next`; if non-null, move the
//!    value out of `next`, make `next` the new stub (`tail = next`) and free `t`.
//! 3. Between the `swap` and the link of step 1 the list is momentarily broken: the
//!    consumer sees `t.next == null` although `head != t`. `pop` then reports
//!    [`Pop::Retry`] (crossbeam's three outcomes) instead of pretending to be empty, so
//!    a message is never lost; the consumer retries (the producer is a few
//!    instructions away from finishing).
//!
//! # Memory ordering
//!
//! The `swap` on `head` is `AcqRel`: release publishes the new node's contents to the
//! next producer that links to it; acquire orders this producer's link store after
//! the previous producer's node initialisation. The link store (`prev.next = n`) is
//! `Release` and pairs with the consumer's `Acquire` load of `next` in `pop`, which
//! makes the value written in the node visible to the consumer. `is_empty` loads
//! `head` with `Acquire` to pair with the producers' swap.

use crate::sync::{AtomicPtr, CachePadded, UnsafeCell};
use std::ptr;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

struct Node<T> {
    next: AtomicPtr<Node<T>>,
    value: Option<T>,
}

impl<T> Node<T> {
    fn alloc(value: Option<T>) -> *mut Node<T> {
        Box::into_raw(Box::new(Node {
            next: AtomicPtr::new(ptr::null_mut()),
            value,
        }))
    }
}

/// Outcome of [`Mailbox::pop`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pop<T> {
    /// A message was taken.
    Data(T),
    /// No message is queued.
    Empty,
    /// A producer is half-way through a push; try again shortly.
    Retry,
}

/// Unbounded MPSC queue; see the module documentation.
pub(crate) struct Mailbox<T> {
    /// Most recently pushed node; producers swap here.
    head: CachePadded<AtomicPtr<Node<T>>>,
    /// Consumer-private stub node: the next message is in `tail.next`.
    tail: CachePadded<UnsafeCell<*mut Node<T>>>,
}

// SAFETY: values of type `T` are moved from producers to the consumer thread, so
// `T: Send` suffices; the raw node pointers are only dereferenced according to the
// protocol in the module documentation (producers touch only their own node and the
// previous head's `next`, the single consumer touches the stub and its successor).
unsafe impl<T: Send> Send for Mailbox<T> {}
// SAFETY: as above; `pop` is `unsafe` and requires a single consumer at a time.
unsafe impl<T: Send> Sync for Mailbox<T> {}

impl<T> std::fmt::Debug for Mailbox<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailbox").finish_non_exhaustive()
    }
}

impl<T> Default for Mailbox<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Mailbox<T> {
    /// An empty mailbox (one stub node).
    pub(crate) fn new() -> Self {
        let stub = Node::alloc(None);
        Mailbox {
            head: CachePadded(AtomicPtr::new(stub)),
            tail: CachePadded(UnsafeCell::new(stub)),
        }
    }

    /// Appends a message. Callable from any thread; never blocks.
    pub(crate) fn push(&self, value: T) {
        let node = Node::alloc(Some(value));
        // Step 1. AcqRel: see the module documentation.
        let prev = self.head.swap(node, AcqRel);
        // SAFETY: `prev` was the head, so it is not freed until the consumer has moved
        // past it, which requires its `next` to be non-null: we are the only thread
        // that writes this `next`, and we have not written it yet.
        unsafe { (*prev).next.store(node, Release) };
    }

    /// Takes the oldest message.
    ///
    /// # Safety
    ///
    /// Only one thread at a time may call `pop` (the owning worker).
    #[inline]
    pub(crate) unsafe fn pop(&self) -> Pop<T> {
        self.tail.with_mut(|tail_ptr| {
            // SAFETY: single consumer (caller contract), so we have exclusive access to
            // `tail`, and the stub node it points to is live (only `pop` frees nodes).
            unsafe {
                let tail = *tail_ptr;
                // Step 2. Acquire pairs with the Release link store in `push`.
                let next = (*tail).next.load(Acquire);
                if !next.is_null() {
                    *tail_ptr = next;
                    let value = (*next).value.take();
                    drop(Box::from_raw(tail));
                    return match value {
                        Some(v) => Pop::Data(v),
                        None => unreachable!("mailbox: a pushed node always carries a value"),
                    };
                }
                // Step 3: empty, or a push is half-way done.
                if self.head.load(Acquire) == tail {
                    Pop::Empty
                } else {
                    Pop::Retry
                }
            }
        })
    }

    /// Whether no message is queued (a push in progress counts as non-empty).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        // SAFETY: reading the consumer-private tail pointer races with nothing that
        // writes it except `pop`; callers use this from the consumer thread or only
        // as a hint. The stub node it points to is live while `self` is.
        let tail = self.tail.with(|t| unsafe { *t });
        self.head.load(Acquire) == tail
    }
}

impl<T> Drop for Mailbox<T> {
    fn drop(&mut self) {
        // SAFETY: `&mut self`: no producer or consumer is active any more; every node
        // from the stub onwards is owned by the queue and freed exactly once.
        unsafe {
            let mut node = self.tail.with(|t| *t);
            while !node.is_null() {
                let next = (*node).next.load(Relaxed);
                drop(Box::from_raw(node));
                node = next;
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fifo_single_thread() {
        let m = Mailbox::new();
        assert!(m.is_empty());
        for i in 0..10 {
            m.push(i);
        }
        assert!(!m.is_empty());
        for i in 0..10 {
            // SAFETY: single consumer.
            assert_eq!(unsafe { m.pop() }, Pop::Data(i));
        }
        // SAFETY: single consumer.
        assert_eq!(unsafe { m.pop() }, Pop::Empty);
    }

    #[test]
    fn drops_queued_values() {
        let counter = Arc::new(());
        let m = Mailbox::new();
        for _ in 0..5 {
            m.push(Arc::clone(&counter));
        }
        drop(m);
        assert_eq!(Arc::strong_count(&counter), 1);
    }

    #[test]
    fn many_producers_per_producer_order() {
        const P: usize = 4;
        const N: usize = 20_000;
        let m = Arc::new(Mailbox::new());
        let handles: Vec<_> = (0..P)
            .map(|p| {
                let m = Arc::clone(&m);
                std::thread::spawn(move || {
                    for i in 0..N {
                        m.push((p, i));
                    }
                })
            })
            .collect();
        let mut next = [0usize; P];
        let mut got = 0;
        while got < P * N {
            // SAFETY: this test thread is the only consumer.
            match unsafe { m.pop() } {
                Pop::Data((p, i)) => {
                    assert_eq!(next[p], i, "per-producer FIFO order");
                    next[p] += 1;
                    got += 1;
                }
                Pop::Empty | Pop::Retry => std::thread::yield_now(),
            }
        }
        for h in handles {
            h.join().unwrap();
        }
        // SAFETY: single consumer.
        assert_eq!(unsafe { m.pop() }, Pop::Empty);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    #[test]
    fn two_producers_one_consumer() {
        loom::model(|| {
            let m = Arc::new(Mailbox::new());
            let hs: Vec<_> = (0..2)
                .map(|p| {
                    let m = Arc::clone(&m);
                    thread::spawn(move || {
                        m.push((p, 0));
                        m.push((p, 1));
                    })
                })
                .collect();
            let mut seen = [0usize; 2];
            let mut got = 0;
            while got < 4 {
                // SAFETY: this is the only consumer thread.
                match unsafe { m.pop() } {
                    Pop::Data((p, i)) => {
                        assert_eq!(seen[p], i);
                        seen[p] += 1;
                        got += 1;
                    }
                    Pop::Empty | Pop::Retry => thread::yield_now(),
                }
            }
            for h in hs {
                h.join().unwrap();
            }
            // SAFETY: single consumer.
            assert_eq!(unsafe { m.pop() }, Pop::Empty);
        });
    }
}
