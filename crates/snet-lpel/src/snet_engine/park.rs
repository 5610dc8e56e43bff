//! Block and wake for waits guarded by the caller's own lock (unsafe leaf module).
//!
//! The streams of the task layer embed their wait/wake handshake in a lock-free
//! protocol (`chan`). The engine's inboxes are multi-producer queues behind a mutex
//! instead, so they need the bare primitive: "suspend the current task (or thread)
//! until someone wakes the handle I left under the lock".
//!
//! # Protocol
//!
//! 1. Under the inbox lock, the waiter stores [`Waiter::current`] in the inbox (as the
//!    parked consumer or as a blocked producer) and releases the lock.
//! 2. It calls [`block`]: a task suspends with the layer's `Suspend::Block` (its worker
//!    then leaks the task's `Arc`, the "blocked reference" of the `task` module); a
//!    plain thread parks until its signal is set.
//! 3. Whoever later takes the handle out of the inbox (under the same lock) calls
//!    [`Waiter::wake`] exactly once, after releasing the lock. Taking the handle out
//!    under the lock is the exclusive claim: no handle is ever woken twice, and a
//!    registered handle is always taken by someone (see `inbox`).
//!
//! A wake may be delivered between steps 1 and 2 (the waker runs on another worker).
//! That is the layer's wake-before-block case: the wake goes to the owner worker's
//! mailbox, which the owner reads only after the running task has returned control to
//! it, i.e. after the task suspended. A waker on the same worker cannot run before the
//! waiter suspends (one task at a time per worker). A thread's signal is a flag, so an
//! early wake is simply seen by [`block`].
//!
//! Memory ordering: the handle is published and claimed under the inbox mutex; the
//! layer's mailbox (task) or the signal's Release store / Acquire swap (thread) order
//! the waker's writes before the waiter's resumption.

use crate::stream::StreamMeta;
use crate::task::{Suspend, Task, TaskState};
use crate::worker::{current_task, deliver, deliver_first, suspend};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A plain thread's wake-up flag.
#[derive(Debug)]
pub(crate) struct ThreadSignal {
    set: AtomicBool,
    thread: std::thread::Thread,
}

thread_local! {
    static SIGNAL: RefCell<Option<Arc<ThreadSignal>>> = const { RefCell::new(None) };
}

fn thread_signal() -> Arc<ThreadSignal> {
    SIGNAL.with(|s| {
        s.borrow_mut()
            .get_or_insert_with(|| {
                Arc::new(ThreadSignal {
                    set: AtomicBool::new(false),
                    thread: std::thread::current(),
                })
            })
            .clone()
    })
}

/// Who to wake: a task of an LPEL runtime, or a thread outside it.
#[derive(Debug)]
pub(crate) enum Waiter {
    /// The waiting task; its blocked reference is reclaimed by [`Waiter::wake`].
    Task(*const Task),
    /// A thread outside the runtime (the engine's input reader).
    Thread(Arc<ThreadSignal>),
}

// SAFETY: the task pointer is only dereferenced by `wake`, once, to hand the task back
// to its owner worker (protocol step 3); the task stays alive while it is blocked
// (its worker holds the leaked blocked reference, or still the running reference
// before it suspends).
unsafe impl Send for Waiter {}

impl Waiter {
    /// The handle of the running task, or of the calling thread outside a task.
    pub(crate) fn current() -> Waiter {
        let t = current_task();
        if t.is_null() {
            Waiter::Thread(thread_signal())
        } else {
            Waiter::Task(t)
        }
    }

    /// Wakes the waiter (protocol step 3). Call exactly once per registration, after
    /// releasing the lock under which the handle was taken out.
    pub(crate) fn wake(self) {
        match self {
            Waiter::Task(p) => {
                // `p` was registered by a task that then blocked (or is about to block)
                // with `Suspend::Block`; its worker leaks exactly one `Arc` for the
                // blocked task (the layer's blocked-reference rule, module `task`).
                // SAFETY: this unique claim takes back that one leaked reference.
                let t = unsafe { Arc::from_raw(p) };
                deliver(t);
            }
            Waiter::Thread(s) => {
                s.set.store(true, Ordering::Release);
                s.thread.unpark();
            }
        }
    }

    /// Like [`Waiter::wake`], but a task goes ahead of the tasks already ready on its
    /// worker. For evicted consumers: they only end and give back their stacks, and
    /// behind a long ready queue of freshly spawned tasks (each of which takes a new
    /// stack at its first dispatch) the stacks of evicted tasks would pile up.
    pub(crate) fn wake_first(self) {
        match self {
            Waiter::Task(p) => {
                // SAFETY: as in `wake`: this unique claim takes back the one reference
                // the blocked task's worker leaked.
                let t = unsafe { Arc::from_raw(p) };
                deliver_first(t);
            }
            thread => thread.wake(),
        }
    }
}

/// Blocks the caller until the handle it registered is woken (protocol step 2).
/// `state` is the task state shown by monitoring and deadlock reports: `BlockedIn`
/// for a consumer waiting for records, `BlockedOut` for a producer waiting for room;
/// `on` is the stream identity those reports name.
///
/// `on` must stay alive while the caller is blocked (the runtime reads it when it
/// reports blocked tasks at quiescence).
pub(crate) fn block(state: TaskState, on: &StreamMeta) {
    let t = current_task();
    if t.is_null() {
        let s = thread_signal();
        while !s.set.swap(false, Ordering::Acquire) {
            std::thread::park();
        }
        return;
    }
    // SAFETY: `t` is the running task and we are running on its context; it registered
    // a `Waiter::Task` for itself under a lock, so exactly one party will wake it.
    unsafe {
        (*t).set_state(state);
        (*t).blocked_on.store(
            (on as *const StreamMeta).cast_mut(),
            std::sync::atomic::Ordering::Release,
        );
        suspend(&*t, Suspend::Block);
    }
}
