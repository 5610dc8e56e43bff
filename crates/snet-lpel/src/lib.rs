//! LPEL — a light-weight parallel execution layer: user-level tasks on a few worker
//! threads, connected by bounded streams (seeds 000, 001, 004). It knows nothing of
//! S-Net; the LPEL engine and the Kahn-process-network API ([`kpn`]) build on it.
//!
//! * **Tasks** are stackful user-level contexts on pooled stacks with guard pages
//!   (corosensei's stacks, switched by a few lines of assembly in `fiber`: a task that
//!   blocks switches straight to the next ready task of its worker). A task runs until
//!   it blocks on a stream, yields, or ends; tasks never block the worker thread. States: ready, running, blocked on input (`Bi`), output (`Bo`),
//!   any of a set (`Ba`), zombie (`Z`).
//! * **Workers**: one thread per core, each with a private ready set and a lock-free
//!   mailbox for wake-ups and task starts from other threads.
//! * **Streams** ([`stream()`]) are bounded single-producer single-consumer FIFOs; full
//!   and empty suspend the task and the peer wakes it; a write to an empty stream
//!   whose reader is blocked hands the item straight to that reader. [`poll`] waits
//!   on a set; a stream may be unbounded or written past its capacity on request.
//! * **Policies** ([`Config`]): assignment round-robin or balanced by box name;
//!   scheduling FIFO or non-box-first priority.
//! * **Monitoring**: per-worker logs in seed 000's format plus a Chrome trace.
//! * **Placement**: an asynchronous scheduler (random or waiting-time strategy)
//!   migrates repeat tasks ([`Runtime::spawn_repeat`]) between activations.
//!
//! The lock-free parts are two small modules, `chan` (the stream protocol) and
//! `mailbox` (Vyukov's MPSC queue), each documenting its protocol and memory
//! ordering, with loom models:
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p snet-lpel --profile fast --lib`.
//! Ready sets need no synchronisation: only their worker touches them.
//!
//! Benchmarks: `cargo run --release -p snet-lpel --example kpn_bench -- all`
//! (see `bench/kpn/README.md`).
//!
//! ```
//! use snet_lpel::{spawn, stream, Config, Quiescence, Runtime, TaskSpec};
//! let rt = Runtime::start(Config::with_workers(2)).unwrap();
//! let (mut out_tx, mut out_rx) = stream::<u64>(1);
//! rt.spawn(TaskSpec::new("parent"), move || {
//!     // Tasks create streams and tasks dynamically.
//!     let (mut tx, mut rx) = stream::<u64>(8);
//!     spawn(TaskSpec::boxed("square"), move || {
//!         for i in 0..10 { tx.write(i * i).unwrap(); }
//!     });
//!     let mut sum = 0;
//!     while let Some(v) = rx.read() { sum += v; }
//!     out_tx.write(sum).unwrap();
//! });
//! assert_eq!(out_rx.read(), Some(285));
//! assert_eq!(rt.wait(), Quiescence::Finished);
//! ```

mod assign;
mod chan;
mod clock;
mod config;
mod fiber;
pub mod kpn;
mod mailbox;
mod monitor;
mod placement;
mod registry;
mod runtime;
mod sched;
#[cfg(not(loom))]
pub mod snet_engine;
mod stack_pool;
mod stream;
mod sync;
mod task;
mod worker;

pub use clock::{now_ns, thread_cpu_ns};
pub use config::{
    Assignment, Config, MonitorConfig, MonitorLevel, PlacementConfig, Scheduling, Strategy,
};
pub use runtime::{
    current_task_id, current_worker, spawn, spawn_repeat, yield_now, BlockedTask, Quiescence,
    RunStats, Runtime, StartError, TaskFailure,
};
#[cfg(not(loom))]
pub use snet_engine::{LpelConfig, LpelEngine};
pub use stack_pool::release_pooled_stacks;
pub use stream::{
    poll, poll_from, stream, stream_with, Consumer, Pollable, Producer, SendError, StreamMeta,
    StreamOptions, StreamRef, TryReadError, TryWriteError,
};
pub use task::{Activation, TaskId, TaskKind, TaskSpec, TaskState};
pub use worker::WorkerStats;
