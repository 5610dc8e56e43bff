//! S-Net semantics core: labels, records, values, node state machines, the static `Net`
//! and the `seq` reference engine.
//!
//! This crate owns the meaning of every S-Net construct once (DESIGN rule 1); engines
//! only decide when and where a node handles a record.

pub mod boxes;
pub mod label;
pub mod record;
pub mod value;

pub use boxes::{Arg, BoxFailure, BoxFn, BoxSig, BoxTable, Emitter};
pub use label::{Label, LabelKind};
pub use record::{DataMode, Field, Record};
pub use value::{CType, Value};
