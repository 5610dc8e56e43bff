//! The one place atomics, locks and thread parking come from.
//!
//! Under `cfg(loom)` everything switches to loom's model-checked versions so that the
//! scheduling protocols (`entity`, `worklist`, `sleep`) can be checked exhaustively;
//! otherwise the standard library types are re-exported unchanged.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread::{current as current_thread, Thread};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread::{current as current_thread, Thread};

use std::sync::TryLockError;

/// Parks the current thread; outside loom at most `timeout` (a safety net: the sleep
/// protocol itself never loses a wake-up).
pub(crate) fn park(timeout: std::time::Duration) {
    #[cfg(loom)]
    {
        let _ = timeout;
        loom::thread::park();
    }
    #[cfg(not(loom))]
    std::thread::park_timeout(timeout);
}

/// Locks `m`, ignoring poisoning: a panic inside the runtime aborts the run anyway, and
/// box panics are caught before they can poison a scheduler lock.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Tries to lock `m` without blocking; `None` if another thread holds it.
pub(crate) fn try_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}
