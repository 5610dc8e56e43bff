//! Pooled, guard-paged task stacks (seed 002 §3.3.4, §4.4).
//!
//! Stacks are `mmap`ed once with a `PROT_NONE` guard page below them and recycled
//! through a per-worker cache (no synchronisation) backed by a global pool (one mutex,
//! touched only when a worker's cache is empty or full). Physical pages that a stack no
//! longer uses can be returned to the kernel with `madvise` ([`MadvisePolicy`]); the
//! runtime does this when a worker leaves a stack that holds a suspended frame (the
//! pages below that frame are dead until the frame is resumed), as the thesis does.

use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// What to do with the unused pages of a stack that holds a suspended frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MadvisePolicy {
    /// Keep them (fastest; memory stays resident).
    None,
    /// `MADV_FREE`: the kernel reclaims them lazily under memory pressure (default).
    #[default]
    Free,
    /// `MADV_DONTNEED`: dropped at once; the next touch faults in a zero page.
    DontNeed,
}

/// Room left below a suspended frame's stack pointer before pages may be discarded:
/// covers the context-switch frames pushed after the pointer was sampled.
const SP_MARGIN: usize = 8 * 1024;

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// One task stack: `size` usable bytes above a guard page.
pub struct PooledStack {
    map: NonNull<u8>,
    map_len: usize,
    guard: usize,
}

// SAFETY: a PooledStack owns its mapping exclusively; moving it between threads
// moves that ownership (it carries no thread-bound state).
unsafe impl Send for PooledStack {}

impl fmt::Debug for PooledStack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PooledStack")
            .field("limit", &self.limit_addr())
            .field("base", &self.base_addr())
            .finish()
    }
}

impl PooledStack {
    fn map(size: usize) -> std::io::Result<Self> {
        let page = page_size();
        let size = size.div_ceil(page) * page;
        let map_len = size + page;
        // SAFETY: anonymous private mapping, no file; checked for MAP_FAILED below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the first page lies inside the mapping we just created.
        if unsafe { libc::mprotect(p, page, libc::PROT_NONE) } != 0 {
            let e = std::io::Error::last_os_error();
            // SAFETY: unmapping the mapping created above.
            unsafe { libc::munmap(p, map_len) };
            return Err(e);
        }
        Ok(Self {
            map: NonNull::new(p as *mut u8).ok_or_else(std::io::Error::last_os_error)?,
            map_len,
            guard: page,
        })
    }

    /// Lowest usable address (just above the guard page).
    fn limit_addr(&self) -> usize {
        self.map.as_ptr() as usize + self.guard
    }

    /// Highest address (the stack grows down from here).
    fn base_addr(&self) -> usize {
        self.map.as_ptr() as usize + self.map_len
    }

    /// Usable size in bytes.
    pub fn size(&self) -> usize {
        self.map_len - self.guard
    }

    /// Address range of the usable part, for [`StackPool::discard_below`].
    pub(crate) fn bounds(&self) -> StackBounds {
        StackBounds {
            limit: self.limit_addr(),
            base: self.base_addr(),
            page: self.guard,
        }
    }
}

/// The usable address range of a [`PooledStack`] (copied out so that it can be used
/// while the stack itself is owned by a coroutine).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StackBounds {
    limit: usize,
    base: usize,
    page: usize,
}

impl StackBounds {
    /// Discards whole pages in `[limit, below)`; returns whether a call was made.
    fn discard(&self, below: usize, policy: MadvisePolicy) -> bool {
        let advice = match policy {
            MadvisePolicy::None => return false,
            MadvisePolicy::Free => libc::MADV_FREE,
            MadvisePolicy::DontNeed => libc::MADV_DONTNEED,
        };
        let lo = self.limit;
        let hi = below.min(self.base) & !(self.page - 1);
        if hi <= lo {
            return false;
        }
        // SAFETY: [lo, hi) is page-aligned and inside the stack's mapping (which the
        // caller keeps alive); the caller guarantees nothing live is stored there (it
        // lies below a suspended frame's stack pointer minus a margin).
        unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, advice) };
        true
    }
}

impl Drop for PooledStack {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping this value owns.
        unsafe { libc::munmap(self.map.as_ptr() as *mut libc::c_void, self.map_len) };
    }
}

// SAFETY: base/limit describe a valid, writable, 16-byte aligned region owned by this
// value for as long as it lives; the guard page below `limit` is PROT_NONE.
unsafe impl corosensei::stack::Stack for PooledStack {
    #[inline]
    fn base(&self) -> corosensei::stack::StackPointer {
        corosensei::stack::StackPointer::new(self.base_addr())
            .unwrap_or(corosensei::stack::StackPointer::MIN)
    }

    #[inline]
    fn limit(&self) -> corosensei::stack::StackPointer {
        corosensei::stack::StackPointer::new(self.limit_addr())
            .unwrap_or(corosensei::stack::StackPointer::MIN)
    }
}

/// Counters of a [`StackPool`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StackStats {
    /// Stacks mapped with `mmap` (pool misses).
    pub mapped: usize,
    /// `madvise` calls made.
    pub madvise_calls: usize,
}

/// Global pool of stacks of one size.
pub struct StackPool {
    size: usize,
    policy: MadvisePolicy,
    global: Mutex<Vec<PooledStack>>,
    global_max: usize,
    mapped: AtomicUsize,
    madvise_calls: AtomicUsize,
}

impl fmt::Debug for StackPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StackPool")
            .field("size", &self.size)
            .field("policy", &self.policy)
            .field("stats", &self.stats())
            .finish()
    }
}

/// How many stacks a worker keeps without touching the global pool.
pub(crate) const LOCAL_CACHE: usize = 8;

impl StackPool {
    /// A pool of `size`-byte stacks (rounded up to pages) using `policy`.
    pub fn new(size: usize, policy: MadvisePolicy) -> Self {
        Self {
            size: size.max(16 * 1024),
            policy,
            global: Mutex::new(Vec::new()),
            global_max: 256,
            mapped: AtomicUsize::new(0),
            madvise_calls: AtomicUsize::new(0),
        }
    }

    /// The madvise policy.
    pub fn policy(&self) -> MadvisePolicy {
        self.policy
    }

    /// Counters so far.
    pub fn stats(&self) -> StackStats {
        StackStats {
            mapped: self.mapped.load(Ordering::Relaxed),
            madvise_calls: self.madvise_calls.load(Ordering::Relaxed),
        }
    }

    /// Takes a stack: from `local`, else the global pool, else a fresh mapping.
    ///
    /// # Panics
    /// If the kernel refuses a new mapping (out of address space).
    pub fn acquire(&self, local: &mut Vec<PooledStack>) -> PooledStack {
        if let Some(s) = local.pop() {
            return s;
        }
        {
            let mut g = self.global.lock().unwrap_or_else(|e| e.into_inner());
            let take = g.len().min(LOCAL_CACHE / 2);
            if take > 0 {
                let at = g.len() - take;
                local.extend(g.drain(at..));
            }
        }
        if let Some(s) = local.pop() {
            return s;
        }
        self.mapped.fetch_add(1, Ordering::Relaxed);
        match PooledStack::map(self.size) {
            Ok(s) => s,
            Err(e) => panic!("snet-forkjoin: cannot map a task stack: {e}"),
        }
    }

    /// Returns a stack: into `local`, spilling half of it to the global pool when full.
    pub fn release(&self, local: &mut Vec<PooledStack>, stack: PooledStack) {
        if local.len() < LOCAL_CACHE {
            local.push(stack);
            return;
        }
        let spill: Vec<PooledStack> = local.drain(LOCAL_CACHE / 2..).collect();
        local.push(stack);
        let mut g = self.global.lock().unwrap_or_else(|e| e.into_inner());
        for s in spill {
            if g.len() < self.global_max {
                g.push(s);
            }
            // else: dropped (unmapped) outside the pool's bound.
        }
    }

    /// Discards the pages of `stack` below `sp - margin`: called when a worker leaves
    /// a stack whose frame at `sp` stays suspended (seed 002 §4.4).
    pub(crate) fn discard_below(&self, stack: StackBounds, sp: usize) {
        if stack.discard(sp.saturating_sub(SP_MARGIN), self.policy) {
            self.madvise_calls.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Micro-benchmark hook: runs `n` trivial stackful tasks the way the runtime starts a
/// fiber (take a stack from a worker cache, create a coroutine on it, run it to
/// completion, return the stack) and returns the total time.
pub fn stackful_task_cost(n: usize) -> std::time::Duration {
    use corosensei::{Coroutine, CoroutineResult};
    let pool = StackPool::new(256 * 1024, MadvisePolicy::Free);
    let mut local = Vec::new();
    let start = std::time::Instant::now();
    for i in 0..n {
        let stack = pool.acquire(&mut local);
        let mut co: Coroutine<(), (), usize, PooledStack> =
            Coroutine::with_stack(stack, move |_, ()| std::hint::black_box(i));
        match co.resume(()) {
            CoroutineResult::Return(v) => {
                std::hint::black_box(v);
            }
            CoroutineResult::Yield(()) => unreachable!("the task does not yield"),
        }
        pool.release(&mut local, co.into_stack());
    }
    start.elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "Miri does not model mmap guard pages")]
    fn recycles_locally_then_globally() {
        let pool = StackPool::new(64 * 1024, MadvisePolicy::Free);
        let mut local = Vec::new();
        let a = pool.acquire(&mut local);
        let addr = a.base_addr();
        assert!(a.size() >= 64 * 1024);
        pool.release(&mut local, a);
        let b = pool.acquire(&mut local);
        assert_eq!(b.base_addr(), addr, "local cache hit");
        assert_eq!(pool.stats().mapped, 1);
        // Fill beyond the local cache: half spills to the global pool.
        let many: Vec<_> = (0..LOCAL_CACHE + 2)
            .map(|_| pool.acquire(&mut local))
            .collect();
        for s in many {
            pool.release(&mut local, s);
        }
        pool.release(&mut local, b);
        let mut other = Vec::new();
        let _c = pool.acquire(&mut other);
        assert_eq!(
            pool.stats().mapped,
            LOCAL_CACHE + 3,
            "other cache took from global"
        );
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri does not model madvise")]
    fn discarded_pages_read_back_as_zero_and_stay_writable() {
        let pool = StackPool::new(64 * 1024, MadvisePolicy::DontNeed);
        let mut local = Vec::new();
        let s = pool.acquire(&mut local);
        let lo = s.limit_addr() as *mut u8;
        // SAFETY: inside the usable part of the stack, not used by anything.
        unsafe { lo.write(42) };
        pool.discard_below(s.bounds(), s.base_addr() + SP_MARGIN);
        // SAFETY: as above; DONTNEED makes the page read back as zero.
        assert_eq!(unsafe { lo.read() }, 0);
        // SAFETY: as above.
        unsafe { lo.write(7) };
        // SAFETY: as above.
        assert_eq!(unsafe { lo.read() }, 7);
        assert_eq!(pool.stats().madvise_calls, 1);
    }
}
