//! S-Net semantics core: labels, records, values, node state machines, the static `Net`
//! and the `seq` reference engine.
//!
//! This crate owns the meaning of every S-Net construct once (DESIGN rule 1); engines
//! only decide when and where a node handles a record.

pub mod boxes;
pub mod label;
pub mod net;
pub mod record;
pub mod tagexpr;
pub mod value;

pub use boxes::{Arg, BoxFailure, BoxFn, BoxSig, BoxTable, Emitter};
pub use label::{Label, LabelKind};
pub use net::{GuardedPattern, Net, Node, NodeId, NodeKind, Variant};
pub use record::{DataMode, Field, Record};
pub use tagexpr::{BinOp, TagExpr, TagValue, UnOp};
pub use value::{CType, Value};
