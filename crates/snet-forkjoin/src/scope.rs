//! `scope`/`spawn`: any number of forked children, joined when the scope ends.
//!
//! Children are *child-stolen*: `spawn` pushes the child on the current worker's deque
//! and the scope body goes on. (Stealing the body's continuation instead would mean
//! resuming the body's fiber on the thief's thread; see the crate docs for why fibers
//! never change threads.) At the end of the body the owner runs every child still in
//! its deque above the scope's base, then waits for the stolen ones.
//!
//! # Protocol
//!
//! 1. `pending` starts at 1 (the body). `spawn` adds 1 before publishing a child.
//! 2. A child, wherever it runs, records a panic (first one wins) and subtracts 1
//!    (AcqRel). If that brings `pending` to 0, the body has already arrived, so the
//!    child pushes the scope's `ParkSlot` to the owner's mailbox.
//! 3. The body's end: pop and run own children down to the base, then subtract its 1.
//!    Reaching 0 means all children are done: continue. Otherwise park; the last child
//!    (step 2) makes the owner ready.
//!
//! # Memory ordering
//!
//! The AcqRel decrements pair with each other, so the owner, continuing after the last
//! decrement (its own or, through the mailbox's Release/Acquire, a child's), sees
//! everything the children wrote.

use std::fmt;
use std::marker::PhantomData;
use std::panic;
use std::ptr;

use crate::job::{self, HeapJob, Panic};
use crate::mailbox::ParkSlot;
use crate::registry::Registry;
use crate::sync::{Arc, AtomicPtr, AtomicUsize, Ordering};
use crate::worker::WorkerThread;

/// A fork scope; see [`scope`].
pub struct Scope<'scope> {
    pending: AtomicUsize,
    panic: AtomicPtr<Panic>,
    owner: Option<(usize, Arc<Registry>)>,
    park: ParkSlot,
    /// Invariant in 'scope, like `std::thread::Scope`.
    marker: PhantomData<&'scope mut &'scope ()>,
}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("pending", &self.pending.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// A raw pointer to a scope that may be sent with a child.
struct ScopePtr<'scope>(*const Scope<'scope>);
// SAFETY: Scope's shared state is atomics (plus owner-only fields); the scope outlives
// every child (step 3 waits for them).
unsafe impl Send for ScopePtr<'_> {}

impl<'scope> Scope<'scope> {
    /// Forks `f`; it runs before the scope ends, possibly on another worker. `f` may
    /// spawn more children into the same scope.
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        // Step 1.
        self.pending.fetch_add(1, Ordering::Relaxed);
        let sp = ScopePtr(self);
        let child = move || {
            let sp = sp;
            // SAFETY: the scope waits for this child before it is dropped (step 3).
            let s = unsafe { &*sp.0 };
            if let Err(p) = job::catch(|| f(s)) {
                s.record_panic(p);
            }
            // SAFETY: called once per spawned child, last access to `s`.
            unsafe { Scope::child_done(sp.0) };
        };
        // The job pointer does not carry 'scope; step 3 guarantees it runs before the
        // scope ends.
        let job = HeapJob::into_job_ref(child);
        match WorkerThread::current() {
            Some(w) => {
                if let Err(job) = w.push(job) {
                    // SAFETY: never published; run it now.
                    unsafe { job::execute(job) };
                }
            }
            // Off a pool: run it now.
            // SAFETY: as above.
            None => unsafe { job::execute(job) },
        }
    }

    fn record_panic(&self, p: Panic) {
        let b = Box::into_raw(Box::new(p));
        if self
            .panic
            .compare_exchange(ptr::null_mut(), b, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            // SAFETY: not published; we still own it.
            drop(unsafe { Box::from_raw(b) });
        }
    }

    /// Step 2.
    ///
    /// # Safety
    /// Once per spawned child; `this` must not be used by the caller afterwards.
    unsafe fn child_done(this: *const Self) {
        // SAFETY: the scope is alive until pending reaches 0 and the owner resumes.
        let s = unsafe { &*this };
        let owner = s.owner.as_ref().map(|(i, r)| (*i, r.clone()));
        let slot: *const ParkSlot = &s.park;
        if s.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The body arrived early. On a pool it parks on `slot`; off a pool it polls
            // `pending` and needs nothing from us.
            if let Some((index, registry)) = owner {
                // SAFETY: the body's fiber parks on `slot`; we do not touch the scope
                // after this push.
                unsafe { WorkerThread::make_ready(&registry, index, slot) };
            }
        }
    }
}

/// Runs `op` with a [`Scope`] into which it can [`Scope::spawn`] children that may
/// borrow from the enclosing stack; returns when `op` and all children are done.
/// The first panic (of `op`, else of a child) is propagated after everything ended.
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    let w = WorkerThread::current();
    let s = Scope {
        pending: AtomicUsize::new(1),
        panic: AtomicPtr::new(ptr::null_mut()),
        owner: w.map(|w| (w.index(), w.registry().clone())),
        park: ParkSlot::new(),
        marker: PhantomData,
    };
    let base = w.map(|w| w.deque_bottom());
    let r = job::catch(|| op(&s));
    // Step 3.
    if let (Some(w), Some(base)) = (w, base) {
        while w.deque_bottom() > base {
            match w.pop() {
                // SAFETY: entries above the base are unclaimed children; we took one.
                Some(j) => unsafe { job::execute(j) },
                None => break,
            }
        }
        if s.pending.fetch_sub(1, Ordering::AcqRel) != 1 {
            w.park(&s.park);
        }
    } else if s.pending.fetch_sub(1, Ordering::AcqRel) != 1 {
        // Off a pool, children spawned here ran inline; but a child may have been
        // spawned from a pool worker (say, inside `Pool::install` in the body). This
        // thread has no fiber to park: block until the count drains.
        let mut spins = 0u32;
        // Acquire: pairs with the children's AcqRel decrements.
        while s.pending.load(Ordering::Acquire) != 0 {
            spins += 1;
            if spins < 100 {
                std::hint::spin_loop();
            } else if spins < 200 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
    }
    let p = s.panic.swap(ptr::null_mut(), Ordering::Acquire);
    let child_panic = if p.is_null() {
        None
    } else {
        // SAFETY: published once by record_panic; we took it.
        Some(*unsafe { Box::from_raw(p) })
    };
    match (r, child_panic) {
        (Err(p), _) => panic::resume_unwind(p),
        (Ok(_), Some(p)) => panic::resume_unwind(p),
        (Ok(r), None) => r,
    }
}
