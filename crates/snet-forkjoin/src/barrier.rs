//! Asymmetric memory barriers.
//!
//! The work-stealing deque (module `deque`) needs a store→load barrier on *both* sides
//! of its owner/thief race (Chase–Lev: the owner's `pop` stores `bottom` then loads
//! `top`; a thief loads `top` then `bottom`). The barrier can be made asymmetric: the
//! owner only needs a *compiler* fence ([`light`]) and the thief pays for a
//! process-wide barrier ([`heavy`]) issued with Linux
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`. That is opt-in
//! ([`crate::PoolBuilder::barrier`]): `membarrier` interrupts every other running
//! thread (≈ 10 µs per call measured on a 2-vCPU VM, against ≈ 2 ns for a fence), and
//! with lazy publication the owner's fenced pops are rare, so the symmetric pair is
//! the default with two or more workers (heat at 2 workers has ≈ 2 400 steals per run:
//! ≈ 24 ms of `membarrier` in a 0.43 s run). A single worker has no thieves and keeps
//! the asymmetric pair (no fence at all on its pops).
//!
//! # Memory ordering
//!
//! `membarrier` guarantees that, when it returns, every other running thread of the
//! process has executed a full memory barrier at some point between the call's entry
//! and its return (a thread that is not running passes one at its context switch).
//! A compiler fence on the owner side keeps the owner's `store bottom; load top` in
//! program order in the instruction stream, so the barrier injected into the owner's
//! CPU separates them exactly as a `fence(SeqCst)` in the owner's code would. This is
//! the standard pairing used by userspace RCU and folly's asymmetric barriers.
//!
//! If `membarrier` is unavailable (or under loom/Miri, which cannot model it) both
//! sides use `fence(SeqCst)`: [`Mode::Symmetric`].

use crate::sync::{compiler_fence, fence, Ordering};

/// Which barrier pair a deque uses; fixed when the deque is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierMode {
    /// `fence(SeqCst)` on both sides.
    Symmetric,
    /// Compiler fence for the owner, `membarrier` for thieves (Linux only).
    Asymmetric,
}

/// Owner-side barrier between `store bottom` and `load top`.
#[inline(always)]
pub(crate) fn light(mode: BarrierMode) {
    match mode {
        BarrierMode::Asymmetric => compiler_fence(Ordering::SeqCst),
        BarrierMode::Symmetric => fence(Ordering::SeqCst),
    }
}

/// Thief-side barrier between `load top` and `load bottom`.
#[inline]
pub(crate) fn heavy(mode: BarrierMode) {
    if mode == BarrierMode::Asymmetric {
        membarrier::expedited();
    }
    fence(Ordering::SeqCst);
}

/// The best mode this process supports: [`BarrierMode::Asymmetric`] if `membarrier`
/// private-expedited is available and registered.
pub(crate) fn best_mode() -> BarrierMode {
    if membarrier::available() {
        BarrierMode::Asymmetric
    } else {
        BarrierMode::Symmetric
    }
}

#[cfg(all(target_os = "linux", not(loom), not(miri)))]
mod membarrier {
    use std::sync::OnceLock;

    const CMD_QUERY: libc::c_long = 0;
    const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    /// Queries support and registers the process once.
    pub(super) fn available() -> bool {
        static REGISTERED: OnceLock<bool> = OnceLock::new();
        *REGISTERED.get_or_init(|| {
            // SAFETY: membarrier with CMD_QUERY takes no pointers; it returns a bit mask
            // of supported commands or -1.
            let mask = unsafe { libc::syscall(libc::SYS_membarrier, CMD_QUERY, 0, 0) };
            if mask < 0 || mask & CMD_PRIVATE_EXPEDITED == 0 {
                return false;
            }
            // SAFETY: registration takes no pointers; returns 0 on success.
            let r = unsafe {
                libc::syscall(libc::SYS_membarrier, CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0)
            };
            r == 0
        })
    }

    /// Issues the process-wide barrier. Only called after `available()` returned true.
    pub(super) fn expedited() {
        // SAFETY: takes no pointers; the process registered in `available()` before any
        // deque was created in asymmetric mode.
        let r = unsafe { libc::syscall(libc::SYS_membarrier, CMD_PRIVATE_EXPEDITED, 0, 0) };
        if r != 0 {
            // Registration is process-wide and permanent, so this cannot happen; if it
            // did, continuing would break the deque's exactly-once guarantee.
            std::process::abort();
        }
    }
}

#[cfg(not(all(target_os = "linux", not(loom), not(miri))))]
mod membarrier {
    pub(super) fn available() -> bool {
        false
    }
    pub(super) fn expedited() {}
}
