//! Fork-join micro-parallelism: work-stealing deques, wait-free join, continuation
//! stealing, pooled stacks (seed 002, N. Pfeiffer, *A Wait-Free Cactus Stack
//! Implementation for a Microparallelism Runtime*).
//!
//! # Using it
//!
//! ```
//! use snet_forkjoin::{join, Pool};
//!
//! fn fib(n: u64) -> u64 {
//!     if n < 2 {
//!         return n;
//!     }
//!     let (a, b) = join(|| fib(n - 1), || fib(n - 2));
//!     a + b
//! }
//!
//! let pool = Pool::new(2).unwrap();
//! assert_eq!(pool.install(|| fib(20)), 6765);
//! ```
//!
//! * [`join`] — two closures, potentially in parallel.
//! * [`scope`] / [`Scope::spawn`] — any number of children, joined at the scope end.
//! * [`for_each`] / [`for_each_with_grain`] — parallel loop over a range, built on `join`.
//! * [`Pool`] — the workers. [`Pool::install`] runs a closure on a worker and waits;
//!   [`Pool::spawn_job`] queues a detached `FnOnce() + Send + 'static` job. Both let an
//!   external scheduler (an snet engine) run its own jobs on these workers; a job that
//!   calls `join` parks at the join if it must wait, and its worker runs other work.
//! * [`Pool::run_on_each`] and module [`coop`] — an external scheduler runs its own
//!   worker loops as jobs on this pool's workers (one pool, two users): what the loops
//!   call forks onto the same threads, and the loops help with fork-join work when idle.
//!
//! Off a pool, `join`, `scope` and `for_each` run sequentially on the calling thread.
//!
//! The closures must be `Send` (a half may run on another worker):
//!
//! ```compile_fail
//! let rc = std::rc::Rc::new(1);
//! snet_forkjoin::join(|| *rc + 1, || 2);
//! ```
//!
//! and children of a scope may only borrow what outlives the scope:
//!
//! ```compile_fail
//! let mut out = Vec::new();
//! snet_forkjoin::scope(|s| {
//!     let local = vec![1, 2, 3];
//!     s.spawn(|_| out.push(local.len()));
//! });
//! ```
//!
//! # How it works
//!
//! Every job runs on a *fiber* (a corosensei coroutine on a stack from a pool of
//! guard-paged `mmap` stacks; module `stack`). `join(a, b)` pushes a frame holding `b`
//! onto the worker's deque and runs `a` at once on the current stack; when `a` returns,
//! popping the frame back means nobody stole it and `b` runs inline: two pushes/pops on
//! an owner-private deque end with no atomic read-modify-write and, with the asymmetric
//! barrier (module `barrier`), no memory fence. A thief that takes the frame runs the
//! continuation `b` on its own fiber. Whoever of the two finishes last continues after
//! the join, decided by the lock- and wait-free counters of §4.6.2 (module `latch`).
//! A worker whose half finished first parks its fiber (its stack keeps the suspended
//! frame; the pages below are `madvise`d away, §4.4) and steals other work on a fresh
//! stack from the pool.
//!
//! Publication is lazy ([`PoolBuilder::publish_limit`]): while the worker's deque
//! already offers a few older continuations — the biggest ones, in divide-and-conquer
//! code — a `join` runs its halves as two plain calls after one comparison, and the
//! first join that finds the deque short again publishes. Thieves always take the
//! oldest entry, so they never miss the deep, small continuations that were not
//! offered.
//!
//! # Continuation stealing and what Rust allows
//!
//! Fibril/EMPER steal the *continuation* of a fork — the rest of the forking function —
//! and let the last finisher at the join resume it, whichever worker that is. In this
//! crate:
//!
//! * For `join(a, b)` the continuation up to the join is exactly `b`, so stealing the
//!   frame *is* stealing the continuation: the forking worker runs the child `a` at
//!   once, a thief runs the continuation on a pooled stack, and the last finisher
//!   continues after the join — without locks.
//! * What is **not** done is resuming a suspended *fiber* on another thread. When the
//!   thief finishes last, it does not jump onto the owner's stack as Fibril does; it
//!   hands the owner's parked fiber back to the owner's worker through a mailbox. The
//!   reason: the suspended frames (the caller of `join` and all its callers up to the
//!   job's root) may hold values that are not `Send` — `Rc` clones also held by the
//!   old thread, `RefCell`/`Cell` thread-locals borrowed across the join, a
//!   `MutexGuard`, a panic in flight (the panic count is thread-local) — and the
//!   compiler may keep the address of a `thread_local!` in a register across the
//!   `join` call. Moving the stack to another thread would share all of these between
//!   threads, and no bound on `join`'s closures can rule that out: the offending
//!   values live in the *caller's* frames, not in the closures. Only code whose every
//!   frame up to the job root is `Send`-clean could migrate, which the type system
//!   cannot check.
//! * For the same reason [`Scope::spawn`] is *child*-stealing: stealing the
//!   continuation of a spawn means resuming the rest of the scope body — an arbitrary
//!   closure frame — on the thief's thread.
//!
//! The price is that a ready fiber waits until its own worker is between jobs; the
//! last finisher's wake-up goes through the owner's mailbox (one CAS).
//!
//! # Limits
//!
//! * A job that blocks its thread (a lock, a channel, [`Pool::install`] into *another*
//!   pool) blocks its worker; only waiting at a `join`/`scope` end parks a fiber.
//! * Task stacks have a fixed size ([`PoolBuilder::stack_size`], default 256 KiB) and
//!   a guard page: overflowing one kills the process with `SIGSEGV` (no message).
//! * Off a pool everything runs sequentially; there is no implicit global pool.

#![cfg_attr(
    loom,
    expect(
        dead_code,
        unused_imports,
        reason = "under loom only the lock-free leaf modules are built"
    )
)]

// Lock-free leaf modules: compiled (and model-checked) under loom too.
mod barrier;
mod deque;
mod latch;
mod mailbox;
#[cfg(all(test, loom))]
mod protocol_loom_tests;
mod sync;

// Everything above them; not built under `cfg(loom)`.
#[cfg(not(loom))]
pub mod coop;
#[cfg(not(loom))]
mod job;
#[cfg(not(loom))]
mod join;
#[cfg(not(loom))]
mod range;
#[cfg(not(loom))]
mod registry;
#[cfg(not(loom))]
mod scope;
#[cfg(not(loom))]
mod sleep;
#[cfg(not(loom))]
mod stack;
#[cfg(not(loom))]
mod worker;

pub use barrier::BarrierMode;
#[cfg(not(loom))]
pub use job::Panic;
#[cfg(not(loom))]
pub use join::join;
#[cfg(not(loom))]
pub use range::{current_num_threads, current_worker_index, for_each, for_each_with_grain};
#[cfg(not(loom))]
pub use registry::{Pool, PoolBuilder, PoolStats};
#[cfg(not(loom))]
pub use scope::{scope, Scope};
#[cfg(not(loom))]
pub use stack::{stackful_task_cost, MadvisePolicy, PooledStack, StackPool, StackStats};
