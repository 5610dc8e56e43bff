//! S-Net record I/O: the XML textual record format (spec §11.2 reader, §11.3 writer),
//! a JSON-lines alternative, and the output comparison of the reference test driver
//! (§11.4).
//!
//! * [`XmlReader`] reads records incrementally from any [`std::io::Read`], yielding each
//!   record as soon as its closing tag has been read. Malformed records are reported as
//!   [`InputError`]s (recoverable ones let reading continue at the next `<record`;
//!   [`InputError::is_fatal`] tells which end the input).
//! * [`XmlWriter`] writes the byte format of §11.3.
//! * [`JsonReader`] / [`JsonWriter`]: one JSON object per line (see [`json`]).
//! * [`compare_outputs`]: multiset (or ordered) comparison of two XML outputs.
//!
//! Field values use the C4SNet textual serialisation of `snet_core::value::text`
//! (§12.6). Binary field encoding (§12.7) is not implemented: see [`InputErrorKind`].

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod compare;
mod error;
pub mod json;
mod xml;

pub use compare::{compare_outputs, parse_output, OutputRecord};
pub use error::{InputError, InputErrorKind, OutputError};
pub use json::{JsonReader, JsonWriter};
pub use xml::{XmlReader, XmlWriter};
