//! FRONT: the work-stealing S-Net engine (seed 003 ch. 4).
//!
//! A fixed pool of workers (`RunOptions::workers`) runs every box instance ("entity")
//! of a network. The semantics of every construct lives in `snet-core`; this crate only
//! decides when and on which worker a box invocation happens:
//!
//! * entities are created lazily by the core's record walks; the engine keeps an
//!   ownership flag and an unbounded input stream per box instance (module `entity`);
//! * the unit of scheduling is a non-empty stream: a worker that writes a record into a
//!   stream keeps a *read licence* for it in its own work list, ordered front-first
//!   (streams nearer the output first) (module `worklist`);
//! * a worker follows a record through the network when it wrote the last output of
//!   an invocation and the destination is free ("record walking");
//! * workers read the global input only when they have nothing else to do, optionally
//!   bounded by `input <= A + B*output` ([`InputLimit`]);
//! * idle workers check the input first, then steal half of the licences of a victim's
//!   front-most stream, round-robin, one thief per victim; then spin, then park
//!   (module `sleep`).
//! * with [`FrontOptions::box_concurrency`] (`--box-concurrency K`, seed 003 §4.7) up to
//!   `K` workers run the same box instance at once on successive records of its
//!   stream; jobs are numbered as they leave the stream and a per-box collector walks
//!   the invocations' outputs on in that order, so stream order is kept;
//! * with [`FrontOptions::forkjoin`], the workers are the workers of a
//!   [`forkjoin::Pool`]: each worker loop runs as a job on one pool worker, so a Rust
//!   box can fork with [`forkjoin::join`] / [`forkjoin::for_each`] onto the same
//!   threads (one pool, two users); an idle worker helps with those forks before it
//!   spins and parks (protocol and deadlock argument: `snet_forkjoin::coop`).
//!
//! ```
//! use snet_front::{FrontEngine, FrontOptions};
//! let engine = FrontEngine::new(FrontOptions { input_limit: "8 + 2*output".parse().ok(), ..FrontOptions::default() });
//! assert_eq!(snet_core::Engine::name(&engine), "front");
//! ```

#![cfg_attr(loom, allow(dead_code))]

// Under `cfg(loom)` only the protocol modules are built (the engine runs on
// `snet_forkjoin`, whose pool is not built under loom either).
#[cfg(not(loom))]
mod engine;
pub(crate) mod entity;
mod options;
pub(crate) mod sleep;
pub(crate) mod sync;
pub(crate) mod termination;
#[cfg(not(loom))]
mod trace;
#[cfg(not(loom))]
mod worker;
pub(crate) mod worklist;

#[cfg(all(test, loom))]
mod loom_tests;

#[cfg(not(loom))]
pub use engine::FrontEngine;
pub use options::{BoxConcurrency, BoxConcurrencyError, FrontOptions, InputLimit, InputLimitError};
/// The fork-join crate the engine runs on with [`FrontOptions::forkjoin`]: boxes fork
/// with `forkjoin::join` / `forkjoin::for_each` onto the engine's workers.
#[cfg(not(loom))]
pub use snet_forkjoin as forkjoin;
