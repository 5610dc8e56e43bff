//! Textual serialisation of C4SNet values (spec §12.6), byte-exact with the C library.
//!
//! ```text
//! "(" TYPENAME [ "[" N "]" ] ")" ELEMENT { "," ELEMENT }
//! ```
//!
//! Element formats are C's: `char`/`uchar` raw bytes with `<` and `&` written as `&lt;`
//! and `&amp;`; `short` `%hd`, `unsigned short` `%hu`, `int` `%d`, `unsigned int` `%u`,
//! `long` `%ld`, `unsigned long` `%lu`, `float` `%.32f`, `double` `%.32le`,
//! `long double` `%.32Le`, `pointer` `%p`; reading uses the matching `scanf`
//! conversions. Integers are converted in Rust with exactly `scanf`'s rules (skip
//! white space, optional sign, decimal digits, value computed as `strtol`/`strtoul` do —
//! saturating at the `long` range — then truncated to the element type); `float`,
//! `double` and `pointer` call the C library (`cfmt`); `long double` is parsed by the C
//! library and formatted exactly in Rust (`ldouble`), because Rust cannot pass an x87
//! 80-bit value by value to `printf`. The `long double` layout assumed is x86-64's.
//!
//! Reading rules (spec §12.6 "Reading", numbered as there):
//! 1. `(`, a type name up to `)` or `[`, an optional `[N]` with decimal `N`, `)`.
//! 2. Exact type names only ([`ValueErrorKind::UnknownType`] otherwise).
//! 3. Scalars have one element, arrays `N`; exactly one `,` immediately after each
//!    element but the last.
//! 4. Numbers as `scanf` (leading white space allowed).
//! 5. A `char`/`uchar` element is one raw byte other than `<`, or `&lt;` / `&amp;`,
//!    followed immediately by `,` or by `<` (or the end of the text).
//! 6. [`parse_value`] reports how many bytes it consumed; the caller skips the rest up
//!    to the next `<`.
//! 7. `[N]` makes an array even for `N == 1`; no `[N]` makes a scalar.

mod cfmt;
mod dfmt;
mod ldouble;
#[cfg(test)]
mod tests;

use super::{CType, Value};
use std::fmt;

/// Appends the §12.6 text of `v` to `out`.
pub fn write_value(v: &Value, out: &mut Vec<u8>) {
    write_value_with(v, out, true);
}

/// Appends the §12.6 text of `v` to `out` without XML escapes: a `char` or `unsigned
/// char` element `<` or `&` is written as itself (for formats that are not XML, such
/// as JSON lines). [`parse_value_unescaped`] reads it back.
pub fn write_value_unescaped(v: &Value, out: &mut Vec<u8>) {
    write_value_with(v, out, false);
}

fn write_value_with(v: &Value, out: &mut Vec<u8>, xml: bool) {
    let ctype = v.ctype();
    out.push(b'(');
    out.extend_from_slice(ctype.name().as_bytes());
    if !v.is_scalar() {
        out.push(b'[');
        push_decimal(out, v.len() as u64, false);
        out.push(b']');
    }
    out.push(b')');
    let size = ctype.size();
    for (i, e) in v.bytes().chunks_exact(size).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_element(ctype, e, out, xml);
    }
}

/// The §12.6 text of `v` as a byte vector.
pub fn value_to_text(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    write_value(v, &mut out);
    out
}

/// Appends a decimal integer (the `%d`/`%u`/`%ld`/`%lu` text of `mag`, with `-` if
/// `negative`).
fn push_decimal(out: &mut Vec<u8>, mut mag: u64, negative: bool) {
    let mut buf = [0u8; 21];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (mag % 10) as u8;
        mag /= 10;
        if mag == 0 {
            break;
        }
    }
    if negative {
        i -= 1;
        buf[i] = b'-';
    }
    out.extend_from_slice(&buf[i..]);
}

fn push_signed(out: &mut Vec<u8>, x: i64) {
    push_decimal(out, x.unsigned_abs(), x < 0);
}

fn write_element(ctype: CType, e: &[u8], out: &mut Vec<u8>, xml: bool) {
    match ctype {
        CType::UChar | CType::Char => match e[0] {
            b'<' if xml => out.extend_from_slice(b"&lt;"),
            b'&' if xml => out.extend_from_slice(b"&amp;"),
            b => out.push(b),
        },
        CType::UShort => push_decimal(out, u16::from_ne_bytes([e[0], e[1]]).into(), false),
        CType::Short => push_signed(out, i16::from_ne_bytes([e[0], e[1]]).into()),
        CType::UInt => push_decimal(out, u32::from_ne_bytes(arr(e)).into(), false),
        CType::Int => push_signed(out, i32::from_ne_bytes(arr(e)).into()),
        CType::ULong => push_decimal(out, read_ulong(e), false),
        CType::Long => push_signed(out, read_long(e)),
        CType::Float => {
            let x = f32::from_ne_bytes(arr(e));
            if !dfmt::write_float(x, out) {
                cfmt::write_float(x, out);
            }
        }
        CType::Double => {
            let x = f64::from_ne_bytes(arr(e));
            if !dfmt::write_double(x, out) {
                cfmt::write_double(x, out);
            }
        }
        CType::LDouble => {
            if e.len() >= 10 {
                ldouble::write_long_double(e, out);
            } else {
                // `long double` is plain `double` on this target.
                cfmt::write_double(f64::from_ne_bytes(arr(e)), out);
            }
        }
        CType::Pointer => cfmt::write_pointer(read_ulong(e) as usize, out),
    }
}

/// The first `N` bytes of `e` as an array (callers pass chunks of the element size).
fn arr<const N: usize>(e: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&e[..N]);
    a
}

/// A C `unsigned long` / pointer of the target's size.
fn read_ulong(e: &[u8]) -> u64 {
    if e.len() >= 8 {
        u64::from_ne_bytes(arr(e))
    } else {
        u32::from_ne_bytes(arr(e)).into()
    }
}

/// A C `long` of the target's size.
fn read_long(e: &[u8]) -> i64 {
    if e.len() >= 8 {
        i64::from_ne_bytes(arr(e))
    } else {
        i32::from_ne_bytes(arr(e)).into()
    }
}

/// What was wrong with a textual value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueErrorKind {
    /// The text does not start with `(` (rule 1).
    MissingOpenParen,
    /// No `)` or `[` ends the type name (rule 1).
    UnterminatedTypeName,
    /// The type name is not one of the twelve (rule 2).
    UnknownType(String),
    /// `[N]` is not a decimal count followed by `]` (rule 1).
    BadCount,
    /// The count cannot possibly fit in the remaining text.
    CountTooLarge(u64),
    /// No `)` after the type (rule 1).
    MissingCloseParen,
    /// Element `index` could not be read as the type's C conversion (rules 4, 5).
    BadElement {
        /// 0-based element index.
        index: usize,
    },
    /// Element `index` is not followed immediately by `,` (rule 3).
    MissingComma {
        /// 0-based index of the element before the missing comma.
        index: usize,
    },
    /// The value ends (at `<` or the end of the text) after `found` of the `declared`
    /// elements of its array.
    TooFewElements {
        /// The count written in `[N]`.
        declared: usize,
        /// The elements read before the value ended.
        found: usize,
    },
    /// The last character element is not followed by `<` or the end (rule 5).
    CharNotTerminated {
        /// 0-based element index.
        index: usize,
    },
}

/// A textual value that could not be parsed: the problem and its byte offset in the
/// text given to [`parse_value`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueParseError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// The problem.
    pub kind: ValueErrorKind,
}

impl fmt::Display for ValueParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ValueErrorKind::MissingOpenParen => write!(f, "value does not start with `(`"),
            ValueErrorKind::UnterminatedTypeName => {
                write!(f, "type name not closed by `)` or `[`")
            }
            ValueErrorKind::UnknownType(t) => write!(
                f,
                "unknown type `{t}` (expected one of: unsigned char, char, unsigned short, \
                 short, unsigned int, int, unsigned long, long, float, double, long double, \
                 pointer)"
            ),
            ValueErrorKind::BadCount => write!(f, "array count is not `[N]` with decimal N"),
            ValueErrorKind::CountTooLarge(n) => {
                write!(f, "array count {n} exceeds the length of the value text")
            }
            ValueErrorKind::MissingCloseParen => write!(f, "missing `)` after the type"),
            ValueErrorKind::BadElement { index } => write!(f, "element {index} is malformed"),
            ValueErrorKind::MissingComma { index } => {
                write!(f, "expected `,` immediately after element {index}")
            }
            ValueErrorKind::TooFewElements { declared, found } => write!(
                f,
                "the array declares {declared} elements but the value ends after {found}"
            ),
            ValueErrorKind::CharNotTerminated { index } => write!(
                f,
                "character element {index} must be followed immediately by `,` or `<`"
            ),
        }?;
        write!(f, " (at byte {})", self.offset)
    }
}

impl std::error::Error for ValueParseError {}

fn err<T>(offset: usize, kind: ValueErrorKind) -> Result<T, ValueParseError> {
    Err(ValueParseError { offset, kind })
}

/// Parses one §12.6 value at the start of `text`; returns it and the number of bytes
/// consumed. Text after the value is not examined, except that a character value's last
/// element must be followed by `<` or the end of `text` (rule 5), and numbers stop at
/// the first byte that cannot continue them (as `scanf` does).
pub fn parse_value(text: &[u8]) -> Result<(Value, usize), ValueParseError> {
    parse_value_with(text, true)
}

/// Parses one value written by [`write_value_unescaped`] at the start of `text`: as
/// [`parse_value`], except that a character element may be any byte, `<` included,
/// and the last one may be followed by anything (the caller checks what follows).
/// `&lt;` and `&amp;` are still read as `<` and `&`; this is unambiguous, as every
/// element is one byte followed by `,` or the end of the value.
pub fn parse_value_unescaped(text: &[u8]) -> Result<(Value, usize), ValueParseError> {
    parse_value_with(text, false)
}

fn parse_value_with(text: &[u8], xml: bool) -> Result<(Value, usize), ValueParseError> {
    if text.first() != Some(&b'(') {
        return err(0, ValueErrorKind::MissingOpenParen);
    }
    let name_end = text
        .iter()
        .position(|&b| b == b')' || b == b'[')
        .ok_or(ValueParseError {
            offset: text.len(),
            kind: ValueErrorKind::UnterminatedTypeName,
        })?;
    let name = &text[1..name_end];
    let Some(ctype) = std::str::from_utf8(name).ok().and_then(CType::from_name) else {
        return err(
            1,
            ValueErrorKind::UnknownType(String::from_utf8_lossy(name).into_owned()),
        );
    };
    let mut pos = name_end;
    let mut count: Option<u64> = None;
    if text[pos] == b'[' {
        pos += 1;
        let start = pos;
        let mut n: u64 = 0;
        while let Some(d) = text.get(pos).filter(|b| b.is_ascii_digit()) {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(d - b'0')))
                .ok_or(ValueParseError {
                    offset: start,
                    kind: ValueErrorKind::BadCount,
                })?;
            pos += 1;
        }
        if pos == start || text.get(pos) != Some(&b']') {
            return err(pos, ValueErrorKind::BadCount);
        }
        pos += 1;
        count = Some(n);
    }
    if text.get(pos) != Some(&b')') {
        return err(pos, ValueErrorKind::MissingCloseParen);
    }
    pos += 1;
    let scalar = count.is_none();
    let n = count.unwrap_or(1);
    // Every element takes at least one byte: refuse counts the text cannot hold before
    // allocating anything.
    let remaining = (text.len() - pos) as u64;
    if !scalar && n > remaining {
        return err(pos, ValueErrorKind::CountTooLarge(n));
    }
    let n = n as usize;
    let size = ctype.size();
    // Scalars (and short arrays) are parsed on the stack: the value is allocated once.
    let mut bytes = ElementBytes::with_capacity(n * size);
    for index in 0..n {
        if index > 0 {
            if text.get(pos) != Some(&b',') {
                if matches!(text.get(pos), None | Some(b'<')) {
                    let kind = ValueErrorKind::TooFewElements {
                        declared: n,
                        found: index,
                    };
                    return err(pos, kind);
                }
                return err(pos, ValueErrorKind::MissingComma { index: index - 1 });
            }
            pos += 1;
        }
        let Some(used) = parse_element(ctype, &text[pos..], &mut bytes, xml) else {
            return err(pos, ValueErrorKind::BadElement { index });
        };
        pos += used;
        if matches!(ctype, CType::Char | CType::UChar) {
            let next = text.get(pos);
            let ok = if index + 1 < n {
                next == Some(&b',')
            } else {
                !xml || next.is_none() || next == Some(&b'<')
            };
            if !ok && index + 1 < n && matches!(next, None | Some(b'<')) {
                let kind = ValueErrorKind::TooFewElements {
                    declared: n,
                    found: index + 1,
                };
                return err(pos, kind);
            }
            if !ok {
                return err(pos, ValueErrorKind::CharNotTerminated { index });
            }
        }
    }
    Ok((Value::from_bytes(ctype, n, scalar, &bytes), pos))
}

/// Reads one element at the start of `t`, appending its bytes; returns the bytes used.
/// The bytes of the elements parsed so far.
type ElementBytes = smallvec::SmallVec<[u8; 16]>;

fn parse_element(ctype: CType, t: &[u8], out: &mut ElementBytes, xml: bool) -> Option<usize> {
    match ctype {
        CType::UChar | CType::Char => {
            let (b, used) = if t.starts_with(b"&lt;") {
                (b'<', 4)
            } else if t.starts_with(b"&amp;") {
                (b'&', 5)
            } else {
                match t.first() {
                    None => return None,
                    Some(b'<') if xml => return None,
                    Some(&b) => (b, 1),
                }
            };
            out.push(b);
            Some(used)
        }
        CType::Short => {
            let (x, used) = scan_signed(t)?;
            out.extend_from_slice(&(x as i16).to_ne_bytes());
            Some(used)
        }
        CType::UShort => {
            let (x, used) = scan_unsigned(t)?;
            out.extend_from_slice(&(x as u16).to_ne_bytes());
            Some(used)
        }
        CType::Int => {
            let (x, used) = scan_signed(t)?;
            out.extend_from_slice(&(x as i32).to_ne_bytes());
            Some(used)
        }
        CType::UInt => {
            let (x, used) = scan_unsigned(t)?;
            out.extend_from_slice(&(x as u32).to_ne_bytes());
            Some(used)
        }
        CType::Long => {
            let (x, used) = scan_signed(t)?;
            out.extend_from_slice(&x.to_ne_bytes()[..ctype.size()]);
            Some(used)
        }
        CType::ULong => {
            let (x, used) = scan_unsigned(t)?;
            out.extend_from_slice(&x.to_ne_bytes()[..ctype.size()]);
            Some(used)
        }
        CType::Float => {
            let (x, used) = match plain_decimal(t) {
                Some((s, used)) => (s.parse::<f32>().ok()?, used),
                None => cfmt::scan_float(number_token(t))?,
            };
            out.extend_from_slice(&x.to_ne_bytes());
            Some(used)
        }
        CType::Double => {
            let (x, used) = match plain_decimal(t) {
                Some((s, used)) => (s.parse::<f64>().ok()?, used),
                None => cfmt::scan_double(number_token(t))?,
            };
            out.extend_from_slice(&x.to_ne_bytes());
            Some(used)
        }
        CType::LDouble => {
            let (x, used) = cfmt::scan_long_double(number_token(t))?;
            out.extend_from_slice(&x[..ctype.size()]);
            Some(used)
        }
        CType::Pointer => {
            let (x, used) = cfmt::scan_pointer(number_token(t))?;
            out.extend_from_slice(&(x as u64).to_ne_bytes()[..ctype.size()]);
            Some(used)
        }
    }
}

/// The prefix of `t` that a number conversion can possibly read: no number contains `,`
/// or `<`, so `scanf` on this prefix behaves exactly as on the whole text.
fn number_token(t: &[u8]) -> &[u8] {
    let end = t
        .iter()
        .position(|&b| b == b',' || b == b'<' || b == 0)
        .unwrap_or(t.len());
    &t[..end]
}

/// Fast path for `%f`/`%lf`: if `t` starts with (white space and) a plain decimal
/// number `[+-]? digits [. digits] [(e|E) [+-]? digits]` (or `.digits`) followed by
/// `,`, `<`, white space or the end, returns the number text and the bytes used.
/// For such text `scanf` consumes exactly the number and converts it with a correctly
/// rounded `strtod`/`strtof`, which is what Rust's `parse` computes, so the result is
/// identical (property-tested against the C library). Anything else — hex floats,
/// `inf`, `nan`, an exponent without digits, a number running into other text — goes
/// to the C library.
fn plain_decimal(t: &[u8]) -> Option<(&str, usize)> {
    let start = t.iter().position(|&b| !is_c_space(b))?;
    let mut i = start;
    let digits = |i: &mut usize| {
        let s = *i;
        while t.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - s
    };
    if matches!(t.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let mut mantissa = digits(&mut i);
    if t.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return None;
    }
    if matches!(t.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(t.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return None;
        }
    }
    match t.get(i) {
        None | Some(b',' | b'<') => {}
        Some(&b) if is_c_space(b) => {}
        Some(_) => return None,
    }
    let s = std::str::from_utf8(&t[start..i]).ok()?;
    Some((s, i))
}

/// C `isspace` in the "C" locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// White space, optional sign and decimal digits, as `scanf` collects them for `%d`:
/// returns (negative, digits, bytes used), or `None` if there is no digit.
fn scan_digits(t: &[u8]) -> Option<(bool, &[u8], usize)> {
    let mut pos = t.iter().position(|&b| !is_c_space(b))?;
    let mut negative = false;
    if let Some(&s @ (b'+' | b'-')) = t.get(pos) {
        negative = s == b'-';
        pos += 1;
    }
    let start = pos;
    while t.get(pos).is_some_and(u8::is_ascii_digit) {
        pos += 1;
    }
    (pos > start).then_some((negative, &t[start..pos], pos))
}

/// `scanf` `%d`/`%hd`/`%ld`: the value as `strtol` computes it (saturating at the
/// `long` range); the caller truncates to the element type, as glibc stores it.
fn scan_signed(t: &[u8]) -> Option<(i64, usize)> {
    let (negative, digits, used) = scan_digits(t)?;
    let (lo, hi) = long_range();
    let mut mag: u128 = 0;
    for &d in digits {
        mag = (mag * 10 + u128::from(d - b'0')).min(1 << 80);
    }
    let x = if negative {
        if mag > lo.unsigned_abs().into() {
            lo
        } else {
            (mag as i128).wrapping_neg() as i64
        }
    } else if mag > hi as u128 {
        hi
    } else {
        mag as i64
    };
    Some((x, used))
}

/// `scanf` `%u`/`%hu`/`%lu`: the value as `strtoul` computes it (saturating at
/// `ULONG_MAX`, a `-` negating modulo 2^bits).
fn scan_unsigned(t: &[u8]) -> Option<(u64, usize)> {
    let (negative, digits, used) = scan_digits(t)?;
    let max = ulong_max();
    let mut mag: u128 = 0;
    for &d in digits {
        mag = (mag * 10 + u128::from(d - b'0')).min(1 << 80);
    }
    let x = if mag > u128::from(max) {
        max
    } else if negative {
        (mag as u64).wrapping_neg() & max
    } else {
        mag as u64
    };
    Some((x, used))
}

/// `LONG_MIN`, `LONG_MAX` of the target.
#[expect(
    clippy::useless_conversion,
    reason = "`c_long` is `i64` only on LP64 targets"
)]
fn long_range() -> (i64, i64) {
    (std::ffi::c_long::MIN.into(), std::ffi::c_long::MAX.into())
}

/// `ULONG_MAX` of the target.
#[expect(
    clippy::useless_conversion,
    reason = "`c_ulong` is `u64` only on LP64 targets"
)]
fn ulong_max() -> u64 {
    std::ffi::c_ulong::MAX.into()
}
