//! Field values: the reference-counted C4SNet data object (spec §12.5).
//!
//! A [`Value`] is what a field holds. It is the same object C boxes see as
//! `c4snet_data_t *`: a pointer obtained with [`Value::into_raw`] is handed to C and
//! taken back with [`Value::from_raw`]. Cloning a `Value` is a shallow copy (reference
//! count + 1); dropping it releases one reference (DESIGN rule 3: fields are shared).
//!
//! The element storage is 16-byte aligned (enough for `long double`) and lives in an
//! `UnsafeCell`, because C boxes may legally update an object in place through
//! `C4SNetGetData` (spec §12.5 rule 3).

mod object;
pub mod text;

pub use object::{CType, Value};
pub use text::{parse_value, write_value, ValueParseError};
