//! Pools of task stacks.
//!
//! Creating a stack is an `mmap` plus an `mprotect` for the guard page (~10 µs here).
//! Each worker keeps a private free list; a finished task's stack goes back to it
//! and the next task spawned there reuses it, so the hot path makes no system call.
//! Workers exchange batches with a process-wide pool (one mutex acquisition per
//! batch), so that stacks freed on one worker serve spawns on another and stacks
//! outlive a runtime (the next runtime in the process starts warm). The guard page
//! stays in place because mappings are reused as they are.

use corosensei::stack::{DefaultStack, Stack, StackPointer};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Stacks a worker keeps before handing half of them to the global pool.
const LOCAL_MAX: usize = 1024;
/// Stacks moved between a worker and the global pool at a time.
const BATCH: usize = 64;
/// Stacks kept process-wide per size (beyond that, stacks are unmapped).
const GLOBAL_MAX: usize = 32 * 1024;
/// Smallest stack handed out when a stack of the requested size cannot be mapped.
const MIN_FALLBACK: usize = 128 << 10;

/// Bytes of stacks mapped so far by the process (never decreased: stacks are rarely
/// unmapped, and an overestimate only makes later stacks smaller).
static MAPPED: AtomicUsize = AtomicUsize::new(0);

/// Task stacks that exist in the process (in use or pooled).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// A task stack: corosensei's default stack (a mapping and its guard page), counted in
/// [`LIVE`] while it exists.
pub(crate) struct TaskStack(DefaultStack);

impl TaskStack {
    /// Maps a new stack of `size` bytes.
    fn map(size: usize) -> std::io::Result<TaskStack> {
        let s = DefaultStack::new(size)?;
        LIVE.fetch_add(1, Ordering::Relaxed);
        Ok(TaskStack(s))
    }

    /// The highest address of the stack (page-aligned), where a context starts.
    pub(crate) fn top(&self) -> *mut u8 {
        self.0.base().get() as *mut u8
    }
}

/// Fails if the process already holds as many task stacks as the kernel's mapping limit
/// leaves room for (two mappings each: the stack and its guard page; see
/// [`snet_core::engine::instance_budget`]): the task that asks for one more fails, with a
/// message saying why, instead of the process aborting somewhere else.
fn check_budget() -> std::io::Result<()> {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    let budget = *BUDGET.get_or_init(|| snet_core::engine::instance_budget(2));
    if LIVE.load(Ordering::Relaxed) < budget {
        return Ok(());
    }
    let limit = match snet_core::engine::address_space_limit() {
        Some(l) => format!(
            " (and the address-space limit, ulimit -v, of {} MiB)",
            l >> 20
        ),
        None => String::new(),
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::OutOfMemory,
        format!(
            "{budget} task stacks exist, as many as the kernel's memory-mapping limit \
             (vm.max_map_count){limit} leaves room for; a program with this many box \
             instances at once runs with --engine front (no stack per box instance)"
        ),
    ))
}

impl Drop for TaskStack {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

// SAFETY: delegates to `DefaultStack`, whose base/limit describe the mapping this value
// owns for as long as it lives.
unsafe impl Stack for TaskStack {
    #[inline]
    fn base(&self) -> StackPointer {
        self.0.base()
    }
    #[inline]
    fn limit(&self) -> StackPointer {
        self.0.limit()
    }
}

/// A stack that may move between threads: it is plain memory with no thread
/// affinity once its task's context has ended.
struct SendStack(TaskStack);

// SAFETY: a pooled stack belongs to no context (its task's context ended and the
// worker took the stack back); it is an anonymous memory mapping usable from any
// thread.
unsafe impl Send for SendStack {}

static GLOBAL: Mutex<Vec<(usize, Vec<SendStack>)>> = Mutex::new(Vec::new());

fn with_global<R>(size: usize, f: impl FnOnce(&mut Vec<SendStack>) -> R) -> R {
    let mut g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    let idx = match g.iter().position(|(s, _)| *s == size) {
        Some(i) => i,
        None => {
            g.push((size, Vec::new()));
            g.len() - 1
        }
    };
    f(&mut g[idx].1)
}

/// A pooled stack of any size in `min..=max`, the largest there is. Under an
/// address-space limit the fitting size shrinks as stacks are mapped, so stacks of
/// many sizes are pooled; reusing any that is large enough (rather than only one of
/// exactly today's size) keeps the number of stacks at the number of tasks alive.
fn pooled_between(min: usize, max: usize) -> Option<TaskStack> {
    let mut g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    g.iter_mut()
        .filter(|(s, v)| (min..=max).contains(s) && !v.is_empty())
        .max_by_key(|(s, _)| *s)
        .and_then(|(_, v)| v.pop())
        .map(|s| s.0)
}

/// A worker's pool of equally sized stacks.
pub(crate) struct StackPool {
    size: usize,
    free: Vec<TaskStack>,
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

    /// A stack of at least `size` bytes: pooled if `size` is the pool's size.
    pub(crate) fn take(&mut self, size: usize) -> std::io::Result<TaskStack> {
        if size == self.size {
            if let Some(s) = self.free.pop() {
                return Ok(s);
            }
            let refill = with_global(size, |g| {
                let k = g.len().saturating_sub(BATCH);
                g.split_off(k)
            });
            self.free.extend(refill.into_iter().map(|s| s.0));
            if let Some(s) = self.free.pop() {
                return Ok(s);
            }
        } else if let Some(s) = pooled_between(size, size) {
            return Ok(s);
        }
        // Under an address-space limit, stacks mapped late are smaller (see
        // `instance_stack_size`); they go back to the global pool under their size.
        let fit = snet_core::engine::instance_stack_size(
            size,
            MIN_FALLBACK,
            MAPPED.load(Ordering::Relaxed),
        );
        if fit < size {
            if let Some(s) = pooled_between(fit, size) {
                return Ok(s);
            }
        }
        check_budget()?;
        self.created += 1;
        // When the address space is exhausted anyway, a smaller stack rather than a
        // failed task.
        let (stack, _) = snet_core::engine::halving_until(fit, MIN_FALLBACK, |s| {
            // (Pooled stacks of `fit` bytes and more were looked for above.)
            let pooled = if s < fit {
                pooled_between(s, fit)
            } else {
                None
            };
            pooled.map_or_else(|| TaskStack::map(s), Ok)
        })
        .map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "{e}: {} task stacks exist and the address space has no room for \
                     another (ulimit -v); a program with this many box instances at once \
                     runs with --engine front (no stack per box instance)",
                    LIVE.load(Ordering::Relaxed)
                ),
            )
        })?;
        MAPPED.fetch_add(stack.base().get() - stack.limit().get(), Ordering::Relaxed);
        Ok(stack)
    }

    /// Returns the stack of a task whose context has ended (`size` is what its task asked for;
    /// a smaller fallback stack goes back under its own size).
    pub(crate) fn give(&mut self, stack: TaskStack, size: usize) {
        let usable = stack.base().get() - stack.limit().get();
        let size = if usable < size { usable } else { size };
        if size != self.size {
            with_global(size, |g| {
                if g.len() < GLOBAL_MAX {
                    g.push(SendStack(stack))
                }
            });
            return;
        }
        self.free.push(stack);
        if self.free.len() > LOCAL_MAX {
            let spill = self.free.split_off(LOCAL_MAX / 2);
            self.spill(spill);
        }
    }

    fn spill(&mut self, stacks: Vec<TaskStack>) {
        with_global(self.size, |g| {
            for s in stacks {
                if g.len() >= GLOBAL_MAX {
                    break; // the rest are unmapped on drop
                }
                g.push(SendStack(s));
            }
        });
    }

    /// Number of stacks this pool had to map.
    pub(crate) fn created(&self) -> u64 {
        self.created
    }
}

impl Drop for StackPool {
    fn drop(&mut self) {
        let all = std::mem::take(&mut self.free);
        self.spill(all);
    }
}

/// Unmaps every stack in the process-wide pool (each pooled stack is a mapping:
/// call this before creating very many OS threads, which need mappings too).
pub fn release_pooled_stacks() {
    GLOBAL.lock().unwrap_or_else(|e| e.into_inner()).clear();
}
