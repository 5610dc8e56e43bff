//! The record wire format (spec §16 rule 4): a versioned binary encoding of a
//! [`Record`] for one direction of one pair of nodes.
//!
//! Labels are interned per process with different numbering on every node, so a label
//! cannot travel as its [`Label::id`]. A [`PeerEncoder`] (one per destination node)
//! announces a label — kind and name — the first time it sends it to that peer and
//! afterwards refers to it by a small per-peer number; the matching [`PeerDecoder`] (one
//! per source node) maps those numbers to local labels. Encoder and decoder therefore
//! hold per-stream state: **every record a `PeerEncoder` encodes successfully must reach
//! its peer's `PeerDecoder`, in order** (the transports keep messages FIFO per pair).
//!
//! # Format, version 1
//!
//! Fixed-width integers are little-endian; `var` is an unsigned LEB128 integer of at
//! most 10 bytes.
//!
//! ```text
//! record   := u16 version(=1)  u8 flags  u8 sizeof(long)  u8 sizeof(long double)
//!             var nfields  { labelref value }
//!             var ntags    { labelref i32 }
//!             var nbtags   { labelref i32 }
//! flags    := bit 0: data mode binary (else textual); bit 7: big-endian host
//! labelref := var 0  u8 kind(0 field, 1 tag, 2 btag)  var len  name (UTF-8)
//!                                  -- announces the peer's next label number
//!           | var n (n >= 1)      -- the label announced as number n - 1
//! value    := u8 0xFF                                    -- a NULL field
//!           | u8 (ctype | 0x10 if array) [var count if array]  count * sizeof(ctype) bytes
//! ```
//!
//! `ctype` is the ABI number of [`CType`] (spec §12.2); `CTYPE_pointer` never travels.
//! Element bytes are the host's representation, copied verbatim, so every value —
//! `long double` padding, NaN payloads, negative zero — arrives bit for bit. That is
//! only meaningful between hosts with the same data layout: the header records byte
//! order and the two sizes that differ between common ABIs, and a decoder refuses a
//! record from a host whose layout differs from its own ([`WireError::Layout`]).
//!
//! Costs: encoding a field copies its bytes once into the output buffer (the buffer is
//! reserved up front, so it never grows by reallocation while encoding); decoding builds
//! each value from the input slice with one copy ([`Value::from_bytes`]). A malformed or
//! truncated input gives a [`WireError`], never a panic, and never allocates more than
//! the input's length for a value.
//!
//! The helpers [`put_u32`], [`get_u32`] and friends encode message envelopes with the
//! same conventions.

use snet_core::{CType, DataMode, Label, LabelKind, Record, Value};
use std::fmt;

/// Version of the record encoding written by this crate and the only one it reads.
pub const WIRE_VERSION: u16 = 1;

const FLAG_BINARY: u8 = 0x01;
const FLAG_BIG_ENDIAN: u8 = 0x80;
const HOST_ENDIAN: u8 = if cfg!(target_endian = "big") {
    FLAG_BIG_ENDIAN
} else {
    0
};
const NULL_FIELD: u8 = 0xFF;
const ARRAY_BIT: u8 = 0x10;
/// Upper bound of the bytes of one `var`.
const VAR_MAX: usize = 10;

/// Why a record could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The input ended inside `what`.
    Truncated {
        /// The item being read.
        what: &'static str,
    },
    /// The record was written by an incompatible version of the encoding.
    Version {
        /// The version found in the input.
        found: u16,
    },
    /// The sender's data layout differs from this host's: values cannot be taken over
    /// bit for bit.
    Layout {
        /// Sender: big-endian, `sizeof(long)`, `sizeof(long double)`.
        sender: (bool, u8, u8),
        /// This host: big-endian, `sizeof(long)`, `sizeof(long double)`.
        local: (bool, u8, u8),
    },
    /// A field holds a `pointer` value, which has no meaning in another process.
    Pointer {
        /// The field's label.
        label: String,
    },
    /// A label number that was never announced on this stream.
    UnknownLabel {
        /// The number found.
        number: u64,
    },
    /// A label announcement with an invalid kind byte.
    BadLabelKind {
        /// The byte found.
        kind: u8,
    },
    /// A label name that is not UTF-8.
    BadLabelName,
    /// A label used in the wrong list (for example a tag label among the fields).
    MisplacedLabel {
        /// The label as written in S-Net (`x`, `<t>`, `<#b>`).
        label: String,
    },
    /// A label appearing twice in one record.
    DuplicateLabel {
        /// The label as written in S-Net.
        label: String,
    },
    /// A value type byte that is no transferable C4SNet type.
    BadType {
        /// The byte found.
        code: u8,
    },
    /// A number too large for this host (an over-long `var`, an element count whose
    /// size overflows).
    Overflow {
        /// The item being read.
        what: &'static str,
    },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Truncated { what } => write!(f, "record data truncated in {what}"),
            WireError::Version { found } => write!(
                f,
                "record encoded with wire version {found}, this node reads version {WIRE_VERSION}"
            ),
            WireError::Layout { sender, local } => write!(
                f,
                "sender's data layout (big-endian {}, sizeof(long) {}, sizeof(long double) {}) \
                 differs from this node's ({}, {}, {}): values cannot move bit for bit",
                sender.0, sender.1, sender.2, local.0, local.1, local.2
            ),
            WireError::Pointer { label } => write!(
                f,
                "field {label} holds a pointer value, which cannot move to another node"
            ),
            WireError::UnknownLabel { number } => {
                write!(f, "label number {number} was never announced by the sender")
            }
            WireError::BadLabelKind { kind } => write!(f, "invalid label kind byte {kind}"),
            WireError::BadLabelName => write!(f, "label name is not UTF-8"),
            WireError::MisplacedLabel { label } => {
                write!(f, "label {label} in the wrong list of the record")
            }
            WireError::DuplicateLabel { label } => {
                write!(f, "label {label} appears twice in one record")
            }
            WireError::BadType { code } => write!(f, "invalid value type byte {code:#04x}"),
            WireError::Overflow { what } => write!(f, "{what} too large"),
        }
    }
}

impl std::error::Error for WireError {}

// ---------------------------------------------------------------------------------
// Envelope helpers.

/// Appends one byte.
pub fn put_u8(out: &mut Vec<u8>, v: u8) {
    out.push(v);
}
/// Appends a little-endian `u16`.
pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}
/// Appends a little-endian `u32`.
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
/// Appends a little-endian `u64`.
pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}
/// Appends a little-endian `i32`.
pub fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_le_bytes());
}
/// Appends an unsigned LEB128 integer (1 byte below 128, at most 10).
pub fn put_var(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}
/// Appends a byte string: its length ([`put_var`]) then the bytes.
pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_var(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Takes the first `n` bytes of `input`.
fn take<'a>(input: &mut &'a [u8], n: usize, what: &'static str) -> Result<&'a [u8], WireError> {
    if input.len() < n {
        return Err(WireError::Truncated { what });
    }
    let (head, rest) = input.split_at(n);
    *input = rest;
    Ok(head)
}

fn take_array<const N: usize>(input: &mut &[u8], what: &'static str) -> Result<[u8; N], WireError> {
    let mut a = [0u8; N];
    a.copy_from_slice(take(input, N, what)?);
    Ok(a)
}

/// Reads one byte.
pub fn get_u8(input: &mut &[u8]) -> Result<u8, WireError> {
    Ok(take_array::<1>(input, "u8")?[0])
}
/// Reads a little-endian `u16`.
pub fn get_u16(input: &mut &[u8]) -> Result<u16, WireError> {
    Ok(u16::from_le_bytes(take_array(input, "u16")?))
}
/// Reads a little-endian `u32`.
pub fn get_u32(input: &mut &[u8]) -> Result<u32, WireError> {
    Ok(u32::from_le_bytes(take_array(input, "u32")?))
}
/// Reads a little-endian `u64`.
pub fn get_u64(input: &mut &[u8]) -> Result<u64, WireError> {
    Ok(u64::from_le_bytes(take_array(input, "u64")?))
}
/// Reads a little-endian `i32`.
pub fn get_i32(input: &mut &[u8]) -> Result<i32, WireError> {
    Ok(i32::from_le_bytes(take_array(input, "i32")?))
}
/// Reads an unsigned LEB128 integer written by [`put_var`].
pub fn get_var(input: &mut &[u8]) -> Result<u64, WireError> {
    let mut v = 0u64;
    for i in 0..VAR_MAX {
        let b = get_u8(input).map_err(|_| WireError::Truncated { what: "var" })?;
        let bits = u64::from(b & 0x7F);
        // The tenth byte carries bit 63 only.
        if i == VAR_MAX - 1 && bits > 1 {
            return Err(WireError::Overflow { what: "var" });
        }
        v |= bits << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(WireError::Overflow { what: "var" })
}
/// Reads a byte string written by [`put_bytes`], borrowing it from the input.
pub fn get_bytes<'a>(input: &mut &'a [u8]) -> Result<&'a [u8], WireError> {
    let n = get_len(input, "byte string length")?;
    take(input, n, "byte string")
}

/// A `var` used as a length or count of items of at least one byte each: larger than
/// the rest of the input means truncated (and is never allocated).
fn get_len(input: &mut &[u8], what: &'static str) -> Result<usize, WireError> {
    let n = get_var(input)?;
    if n > input.len() as u64 {
        return Err(WireError::Truncated { what });
    }
    Ok(n as usize)
}

// ---------------------------------------------------------------------------------
// Records.

fn kind_byte(k: LabelKind) -> u8 {
    match k {
        LabelKind::Field => 0,
        LabelKind::Tag => 1,
        LabelKind::BTag => 2,
    }
}

const fn host_layout() -> (bool, u8, u8) {
    (
        HOST_ENDIAN != 0,
        CType::Long.size() as u8,
        CType::LDouble.size() as u8,
    )
}

/// Encodes records for one destination node; see the [module documentation](self).
#[derive(Debug, Default)]
pub struct PeerEncoder {
    /// Indexed by [`Label::id`]: the label's peer number + 1, 0 if not announced yet.
    numbers: Vec<u32>,
    /// Labels announced so far.
    announced: u32,
}

impl PeerEncoder {
    /// An encoder that has announced no label yet (for a new peer).
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of labels announced to the peer so far.
    pub fn known_labels(&self) -> usize {
        self.announced as usize
    }

    /// Appends the encoding of `rec` to `out`.
    ///
    /// Fails, leaving `out` and the encoder unchanged, if a field holds a `pointer`
    /// value. Field bytes are copied once, straight into `out`.
    pub fn encode_record(&mut self, rec: &Record, out: &mut Vec<u8>) -> Result<(), WireError> {
        // Check first, so that a failure announces nothing.
        let mut reserve = 5 + 3 * VAR_MAX;
        for (l, v) in rec.fields() {
            reserve += VAR_MAX + 1 + VAR_MAX;
            if let Some(v) = v {
                if v.ctype() == CType::Pointer {
                    return Err(WireError::Pointer {
                        label: l.to_string(),
                    });
                }
                reserve += v.byte_len();
            }
        }
        reserve += (rec.tags().len() + rec.btags().len()) * (VAR_MAX + 4);
        for l in rec.labels() {
            if !self.is_announced(l) {
                reserve += 1 + 2 * VAR_MAX + l.name().len();
            }
        }
        out.reserve(reserve);

        put_u16(out, WIRE_VERSION);
        let mode = match rec.mode {
            DataMode::Textual => 0,
            DataMode::Binary => FLAG_BINARY,
        };
        put_u8(out, mode | HOST_ENDIAN);
        put_u8(out, CType::Long.size() as u8);
        put_u8(out, CType::LDouble.size() as u8);

        put_var(out, rec.fields().len() as u64);
        for (l, v) in rec.fields() {
            self.put_label(out, *l);
            match v {
                None => put_u8(out, NULL_FIELD),
                Some(v) => {
                    let code = v.ctype() as u32 as u8;
                    if v.is_scalar() {
                        put_u8(out, code);
                    } else {
                        put_u8(out, code | ARRAY_BIT);
                        put_var(out, v.len() as u64);
                    }
                    out.extend_from_slice(v.bytes());
                }
            }
        }
        for list in [rec.tags(), rec.btags()] {
            put_var(out, list.len() as u64);
            for (l, v) in list {
                self.put_label(out, *l);
                put_i32(out, *v);
            }
        }
        Ok(())
    }

    fn is_announced(&self, l: Label) -> bool {
        self.numbers.get(l.id() as usize).is_some_and(|&n| n != 0)
    }

    fn put_label(&mut self, out: &mut Vec<u8>, l: Label) {
        let i = l.id() as usize;
        if let Some(&n) = self.numbers.get(i) {
            if n != 0 {
                put_var(out, u64::from(n));
                return;
            }
        } else {
            self.numbers.resize(i + 1, 0);
        }
        self.announced += 1;
        self.numbers[i] = self.announced;
        put_var(out, 0);
        put_u8(out, kind_byte(l.kind()));
        put_bytes(out, l.name().as_bytes());
    }
}

/// Decodes records from one source node; see the [module documentation](self).
#[derive(Debug, Default)]
pub struct PeerDecoder {
    /// The peer's label numbers, in announcement order.
    labels: Vec<Label>,
}

impl PeerDecoder {
    /// A decoder that knows no label yet (for a new peer).
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of labels the peer has announced so far.
    pub fn known_labels(&self) -> usize {
        self.labels.len()
    }

    /// Decodes one record from the front of `input`, advancing it past the record.
    ///
    /// On error the decoder forgets the labels announced by this record, `input` is
    /// left somewhere inside it, and the stream should be considered broken.
    pub fn decode_record(&mut self, input: &mut &[u8]) -> Result<Record, WireError> {
        let known = self.labels.len();
        let r = self.decode_inner(input);
        if r.is_err() {
            self.labels.truncate(known);
        }
        r
    }

    fn decode_inner(&mut self, input: &mut &[u8]) -> Result<Record, WireError> {
        let version = get_u16(input)?;
        if version != WIRE_VERSION {
            return Err(WireError::Version { found: version });
        }
        let flags = get_u8(input)?;
        let long = get_u8(input)?;
        let ldouble = get_u8(input)?;
        let sender = (flags & FLAG_BIG_ENDIAN != 0, long, ldouble);
        if sender != host_layout() {
            return Err(WireError::Layout {
                sender,
                local: host_layout(),
            });
        }
        let mut rec = Record::new();
        rec.mode = if flags & FLAG_BINARY != 0 {
            DataMode::Binary
        } else {
            DataMode::Textual
        };

        let n = get_len(input, "field count")?;
        for _ in 0..n {
            let l = self.get_label(input, LabelKind::Field, &rec)?;
            let code = get_u8(input)?;
            let v = if code == NULL_FIELD {
                None
            } else {
                Some(get_value(input, code)?)
            };
            rec.push_field(l, v);
        }
        for kind in [LabelKind::Tag, LabelKind::BTag] {
            let n = get_len(input, "tag count")?;
            for _ in 0..n {
                let l = self.get_label(input, kind, &rec)?;
                let v = get_i32(input)?;
                rec.push_tag(l, v);
            }
        }
        Ok(rec)
    }

    /// Reads a label reference expected to be of `kind` and new to `rec`.
    fn get_label(
        &mut self,
        input: &mut &[u8],
        kind: LabelKind,
        rec: &Record,
    ) -> Result<Label, WireError> {
        let r = get_var(input)?;
        let l = if r == 0 {
            let k = match get_u8(input)? {
                0 => LabelKind::Field,
                1 => LabelKind::Tag,
                2 => LabelKind::BTag,
                kind => return Err(WireError::BadLabelKind { kind }),
            };
            let name =
                std::str::from_utf8(get_bytes(input)?).map_err(|_| WireError::BadLabelName)?;
            let l = Label::new(k, name);
            self.labels.push(l);
            l
        } else {
            *usize::try_from(r - 1)
                .ok()
                .and_then(|i| self.labels.get(i))
                .ok_or(WireError::UnknownLabel { number: r })?
        };
        if l.kind() != kind {
            return Err(WireError::MisplacedLabel {
                label: l.to_string(),
            });
        }
        if rec.has(l) {
            return Err(WireError::DuplicateLabel {
                label: l.to_string(),
            });
        }
        Ok(l)
    }
}

/// Reads the rest of a value whose type byte `code` (not NULL) was read.
fn get_value(input: &mut &[u8], code: u8) -> Result<Value, WireError> {
    let ctype = match CType::from_abi(u32::from(code & !ARRAY_BIT)) {
        Some(t) if t != CType::Pointer && code & !(ARRAY_BIT | 0x0F) == 0 => t,
        _ => return Err(WireError::BadType { code }),
    };
    let scalar = code & ARRAY_BIT == 0;
    let len = if scalar {
        1
    } else {
        usize::try_from(get_var(input)?).map_err(|_| WireError::Overflow {
            what: "element count",
        })?
    };
    let bytes = len.checked_mul(ctype.size()).ok_or(WireError::Overflow {
        what: "element count",
    })?;
    let data = take(input, bytes, "value bytes")?;
    Ok(Value::from_bytes(ctype, len, scalar, data))
}
