//! S-Net semantics core: labels, records, values, node state machines, the static `Net`
//! and the `seq` reference engine.
//!
//! This crate owns the meaning of every S-Net construct once (DESIGN rule 1); engines
//! only decide when and where a node handles a record:
//!
//! * [`walk::Walker`] moves a record through routing, filters, synchrocells and
//!   collectors until it reaches a box, the output, or disappears;
//! * [`walk::Walker::run_box`] invokes a box and walks what it emits;
//! * an engine decides when each pending box invocation runs and on which thread.

pub mod box_call;
pub mod boxes;
pub mod det;
pub mod engine;
mod engine_slot;
pub mod error;
pub mod filter;
pub mod inst;
pub mod label;
pub mod net;
pub mod observe;
pub mod pattern;
mod place_check;
pub mod record;
pub mod relief;
pub mod seq;
pub mod sync_cell;
pub mod tagexpr;
pub mod value;
pub mod walk;

pub use boxes::{Arg, Args, BoxFailure, BoxFn, BoxSig, BoxTable, Emitter, RawKind, RawSlot};
pub use engine::{Engine, Incoming, RecordSink, RecordSource, RunOptions, RunStats};
pub use error::{RunError, RunErrorParts};
pub use inst::{PathStep, Place};
pub use label::{Label, LabelKind};
pub use net::{Family, GuardedPattern, Net, Node, NodeId, NodeKind, Variant};
pub use record::{DataMode, Field, Rec, Record};
pub use seq::SeqEngine;
/// Builds an [`Args`] in place, like `vec!` (no allocation for up to four values).
pub use smallvec::smallvec as args;
pub use tagexpr::{BinOp, EvalError, Mismatch, TagExpr, TagValue, UnOp};
pub use value::{CType, Value};
pub use walk::{Arrival, ArrivalKind, Dist, RemoteCtx};
