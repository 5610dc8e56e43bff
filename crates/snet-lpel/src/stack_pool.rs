//! A per-worker pool of coroutine stacks.
//!
//! Creating a stack is an `mmap` plus an `mprotect` for the guard page (~10 µs here);
//! a finished task's stack goes back to its worker's pool and the next task spawned
//! there reuses it, so the hot path does no system call. The guard page stays in place
//! because the mapping is reused as is.

use corosensei::stack::DefaultStack;

/// Stacks kept per worker at most; beyond that a finished task's stack is unmapped.
const MAX_POOLED: usize = 4096;

/// Pool of equally sized stacks, owned by one worker thread.
pub(crate) struct StackPool {
    size: usize,
    free: Vec<DefaultStack>,
    created: u64,
}

impl std::fmt::Debug for StackPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StackPool")
            .field("size", &self.size)
            .field("free", &self.free.len())
            .finish()
    }
}

impl StackPool {
    /// A pool of stacks of `size` bytes (plus a guard page).
    pub(crate) fn new(size: usize) -> Self {
        StackPool {
            size,
            free: Vec::new(),
            created: 0,
        }
    }

    /// A stack of at least `size` bytes: from the pool if it has the pooled size.
    pub(crate) fn take(&mut self, size: usize) -> std::io::Result<DefaultStack> {
        if size == self.size {
            if let Some(s) = self.free.pop() {
                return Ok(s);
            }
        }
        self.created += 1;
        DefaultStack::new(size)
    }

    /// Returns a stack of a finished coroutine.
    pub(crate) fn give(&mut self, stack: DefaultStack, size: usize) {
        if size == self.size && self.free.len() < MAX_POOLED {
            self.free.push(stack);
        }
    }

    /// Number of stacks ever created by this pool (for statistics).
    pub(crate) fn created(&self) -> u64 {
        self.created
    }
}
