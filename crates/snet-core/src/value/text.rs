//! Textual serialisation of values (spec §12.6). Placeholder writer for `int`; the full
//! reader and writer for all twelve types live here.

use super::{CType, Value};

/// Appends the §12.6 text of `v` to `out`.
pub fn write_value(v: &Value, out: &mut Vec<u8>) {
    out.push(b'(');
    out.extend_from_slice(v.ctype().name().as_bytes());
    if !v.is_scalar() {
        out.extend_from_slice(format!("[{}]", v.len()).as_bytes());
    }
    out.push(b')');
    if v.ctype() == CType::Int {
        for i in 0..v.len() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(v.get_i32(i).unwrap_or(0).to_string().as_bytes());
        }
    }
}
