//! `join(a, b)`: fork `b` as a stealable continuation, run `a` at once.
//!
//! # Protocol (owner = the worker that calls `join`)
//!
//! 0. If the owner's deque already holds `publish_limit` entries, run `a` then `b`
//!    as plain calls: nothing is published, nothing can be stolen (lazy publication).
//! 1. Owner: build the [`JoinFrame`] on its stack (closure `b`, result slot, the
//!    §4.6.2 [`JoinCounter`], a [`ParkSlot`]) and push it on its deque.
//! 2. Owner: run `a` right away on the same stack (panics are caught).
//! 3. Owner: pop. LIFO discipline means the popped entry is either our frame, or an
//!    entry pushed during `a` that is still unclaimed (a scope spawn), which we run and
//!    pop again. Getting our frame back means nobody stole it: run `b` inline and
//!    return — the fast path, no atomic read-modify-write, no fiber switch.
//! 4. Otherwise a thief took the frame (an empty pop proves it: thieves take from the
//!    top and our frame lies below anything pushed later). The thief runs
//!    `run_stolen`: `record_steal`, run `b` on its own fiber, write the result,
//!    `arrive_at_join`. The owner calls `arrive_child`.
//! 5. Exactly one of them is last (module `latch`). If the owner is last it continues
//!    immediately. If the thief is last, it pushes the frame's `ParkSlot` to the
//!    owner's mailbox; the owner, which arrived early, parks its fiber and is resumed
//!    by its scheduler once the slot arrives.
//!
//! The frame stays valid until `join` returns, which happens only after step 5; the
//! thief touches the frame only before its arrival, or (when last) up to the mailbox
//! push, after which the owner may return at any time.

use std::mem::ManuallyDrop;
use std::panic;
use std::ptr::NonNull;

use crate::job::{self, JobHeader, JobRef, Panic};
use crate::latch::{Arrival, JoinCounter};
use crate::mailbox::ParkSlot;
use crate::sync::UnsafeCell;
use crate::worker::WorkerThread;

/// The frame of one `join`, pushed on the owner's deque as a job.
#[repr(C)]
struct JoinFrame<B, RB> {
    header: JobHeader,
    b: UnsafeCell<ManuallyDrop<B>>,
    result_b: UnsafeCell<Option<Result<RB, Panic>>>,
    counter: JoinCounter,
    park: ParkSlot,
}

impl<B, RB> JoinFrame<B, RB>
where
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    #[inline]
    fn new(b: B) -> Self {
        Self {
            header: JobHeader::new(Self::run_stolen),
            b: UnsafeCell::new(ManuallyDrop::new(b)),
            result_b: UnsafeCell::new(None),
            counter: JoinCounter::new(),
            park: ParkSlot::new(),
        }
    }

    #[inline]
    fn job_ref(&self) -> JobRef {
        NonNull::from(&self.header)
    }

    /// Takes `b` out of the frame.
    ///
    /// # Safety
    /// Once per frame, by whoever claimed the frame (popped or stole it).
    #[inline]
    unsafe fn take_b(&self) -> B {
        // SAFETY: caller contract: exclusive, one-time access.
        self.b.with_mut(|p| unsafe { ManuallyDrop::take(&mut *p) })
    }

    /// Step 4, on the thief's fiber.
    unsafe fn run_stolen(job: JobRef) {
        // SAFETY: the frame is alive: its owner cannot return from `join` before this
        // strand arrives (step 5).
        let this = unsafe { job.cast::<Self>().as_ref() };
        let w = WorkerThread::current().expect("stolen join half ran off-pool");
        // Frames are pushed only on their owner's deque, so the victim is the owner.
        let owner = w.stolen_from();
        // SAFETY: only this thief runs the continuation.
        unsafe { this.counter.record_steal() };
        // SAFETY: we stole the frame, so we own `b`.
        let b = unsafe { this.take_b() };
        let r = job::catch(b);
        // SAFETY: the owner reads result_b only after the join is resolved.
        this.result_b.with_mut(|p| unsafe { *p = Some(r) });
        let slot: *const ParkSlot = &this.park;
        // SAFETY: only this thief runs the continuation.
        if unsafe { this.counter.arrive_at_join() } == Arrival::Last {
            // The owner arrived early and parks (or is about to) on `slot`.
            // SAFETY: the owner waits for exactly this push; we do not touch the frame
            // afterwards.
            unsafe { WorkerThread::make_ready(w.registry(), owner, slot) };
        }
        // Early: the owner will be last and continue; the frame may be gone now.
    }
}

/// Runs `a` and `b`, potentially in parallel, and returns both results.
///
/// On a pool worker (inside [`crate::Pool::install`], a job, or another fork), `b` is
/// offered to thieves while the calling worker runs `a` at once; if `b` was not
/// stolen the caller runs it next, exactly like two calls. (When the worker's deque
/// already offers enough older continuations, `b` is not offered at all; see
/// [`crate::PoolBuilder::publish_limit`].) If `b` was stolen and is
/// still running when `a` returns, the caller's fiber parks and the worker runs other
/// work; whichever half finishes last resumes the caller. Off a pool, runs `a` then
/// `b` on the calling thread.
///
/// If either closure panics, `join` still waits for the other (if it was started) and
/// then propagates the panic (`a`'s if both panicked).
#[inline]
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let Some(w) = WorkerThread::current() else {
        let ra = a();
        return (ra, b());
    };
    if w.enough_published() {
        // Lazy publication: older, bigger continuations are already offered.
        let ra = a();
        return (ra, b());
    }
    join_published(w, a, b)
}

/// The publishing `join`: out of line so that the lazy path above stays a check and
/// two calls in the caller's frame. Cold: most joins take the lazy path, and the hint
/// makes the compiler lay that path out straight, with the publishing call after the
/// function's return (fib T1 −9 % in bench_suite, −23 % in fibmicro).
#[cold]
#[inline(never)]
fn join_published<A, B, RA, RB>(w: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let frame = JoinFrame::new(b);
    let me = frame.job_ref();
    if w.push(me).is_err() {
        // Deque full: no fork, plain calls.
        // SAFETY: the frame was never published; we own `b`.
        let b = unsafe { frame.take_b() };
        let ra = a();
        return (ra, b());
    }
    let ra = job::catch(a);
    // Step 3.
    loop {
        match w.pop() {
            Some(j) if j == me => {
                // SAFETY: we popped our own frame back: nobody else can see it.
                let b = unsafe { frame.take_b() };
                return match ra {
                    Ok(ra) => (ra, b()),
                    Err(p) => {
                        drop(b);
                        panic::resume_unwind(p)
                    }
                };
            }
            // SAFETY: an unclaimed job pushed during `a` (a scope spawn); we took it.
            Some(other) => unsafe { job::execute(other) },
            None => break,
        }
    }
    // Steps 4-5: stolen.
    if frame.counter.arrive_child() == Arrival::Early {
        w.park(&frame.park);
    }
    // SAFETY: the thief wrote the result before arriving; we are past the join.
    let rb = frame.result_b.with_mut(|p| unsafe { (*p).take() });
    match (ra, rb) {
        (Ok(ra), Some(Ok(rb))) => (ra, rb),
        (Err(p), _) => panic::resume_unwind(p),
        (_, Some(Err(p))) => panic::resume_unwind(p),
        (Ok(_), None) => unreachable!("stolen join half finished without a result"),
    }
}
