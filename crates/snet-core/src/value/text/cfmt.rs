//! The C library's own `printf`/`scanf` for the element formats whose exact text only
//! the C library defines (unsafe leaf module).
//!
//! Spec §12.6 fixes the number formats as C `printf`/`scanf` conversions. Integers are
//! simple enough to reproduce in Rust (and are property-tested against `sscanf` in the
//! tests); `float`, `double` and `pointer` go through `snprintf`/`sscanf` here so the
//! bytes are those of the C library the reference runtime links with. `long double`
//! cannot be passed by value from Rust (x87 80-bit), so it is *formatted* in Rust
//! (`ldouble.rs`) but *parsed* here with `sscanf("%Lf")`, which writes through a pointer.
//!
//! Invariants: every format string is a NUL-terminated literal with exactly one
//! conversion plus an optional `%n`, and each variadic argument has the C type that
//! conversion expects (`double` for `%f`/`%e`, `void *` for `%p`; `float *`, `double *`,
//! `long double *`, `void **` and `int *` for the scan conversions). The scan input is a
//! private NUL-terminated copy, so the C library never reads past our buffer. Rust
//! programs run in the "C" locale unless someone calls `setlocale`, which the runtime
//! never does, so the decimal point is `.`.

use std::ffi::{c_char, c_int, c_void, CStr};

/// Runs `snprintf` with a one-conversion format and appends the result to `out`.
fn printf_into(out: &mut Vec<u8>, call: impl Fn(*mut c_char, usize) -> c_int) {
    let mut buf = [0u8; 128];
    let n = call(buf.as_mut_ptr().cast(), buf.len());
    let Ok(n) = usize::try_from(n) else {
        return; // encoding error: cannot happen for these formats.
    };
    if n < buf.len() {
        out.extend_from_slice(&buf[..n]);
    } else {
        let mut big = vec![0u8; n + 1];
        let m = call(big.as_mut_ptr().cast(), big.len());
        let m = usize::try_from(m).unwrap_or(0).min(n);
        out.extend_from_slice(&big[..m]);
    }
}

/// Appends `x` formatted as `%.32f` (the float is promoted to double, as in C).
pub(super) fn write_float(x: f32, out: &mut Vec<u8>) {
    printf_into(out, |p, n| {
        // SAFETY: `p` is valid for `n` bytes; the format has one `%f` and receives a
        // `double` (module invariant).
        unsafe { libc::snprintf(p, n, c"%.32f".as_ptr(), f64::from(x)) }
    });
}

/// Appends `x` formatted as `%.32le`.
pub(super) fn write_double(x: f64, out: &mut Vec<u8>) {
    printf_into(out, |p, n| {
        // SAFETY: `p` is valid for `n` bytes; `%le` receives a `double`.
        unsafe { libc::snprintf(p, n, c"%.32le".as_ptr(), x) }
    });
}

/// Appends the pointer value `x` formatted as `%p` (`(nil)` for 0 with glibc).
pub(super) fn write_pointer(x: usize, out: &mut Vec<u8>) {
    printf_into(out, |p, n| {
        // SAFETY: `p` is valid for `n` bytes; `%p` receives a `void *` (never
        // dereferenced by printf).
        unsafe { libc::snprintf(p, n, c"%p".as_ptr(), x as *const c_void) }
    });
}

/// Storage for one `long double`, aligned as C requires.
#[repr(C, align(16))]
struct LongDoubleSlot([u8; 16]);

/// Runs `sscanf(text, fmt, dst, &n)` on a NUL-terminated copy of `text` and returns the
/// number of bytes consumed, or `None` if the conversion failed.
///
/// # Safety
/// `fmt` must be a format with exactly one conversion followed by `%n`, and `dst` must
/// point to writable storage of the type that conversion stores.
unsafe fn scan(text: &[u8], fmt: &CStr, dst: *mut c_void) -> Option<usize> {
    let mut buf = Vec::with_capacity(text.len() + 1);
    buf.extend_from_slice(text);
    buf.push(0);
    let mut consumed: c_int = -1;
    // SAFETY: `buf` is NUL-terminated; `dst` and `&mut consumed` match the format
    // (caller's contract and `%n` takes an `int *`).
    let r = unsafe { libc::sscanf(buf.as_ptr().cast(), fmt.as_ptr(), dst, &mut consumed) };
    if r != 1 {
        return None;
    }
    usize::try_from(consumed).ok()
}

/// `scanf("%f")`: the float and the number of bytes consumed.
pub(super) fn scan_float(text: &[u8]) -> Option<(f32, usize)> {
    let mut x: f32 = 0.0;
    // SAFETY: `%f` stores a `float`.
    let n = unsafe { scan(text, c"%f%n", (&raw mut x).cast()) }?;
    Some((x, n))
}

/// `scanf("%lf")`.
pub(super) fn scan_double(text: &[u8]) -> Option<(f64, usize)> {
    let mut x: f64 = 0.0;
    // SAFETY: `%lf` stores a `double`.
    let n = unsafe { scan(text, c"%lf%n", (&raw mut x).cast()) }?;
    Some((x, n))
}

/// `scanf("%Lf")`: the 16 bytes of C `long double` storage (padding zero).
pub(super) fn scan_long_double(text: &[u8]) -> Option<([u8; 16], usize)> {
    let mut slot = LongDoubleSlot([0; 16]);
    // SAFETY: `%Lf` stores a `long double`; the slot has its size (16 on LP64 x86-64
    // and aarch64; 8 elsewhere, which fits too) and alignment.
    let n = unsafe { scan(text, c"%Lf%n", (&raw mut slot.0).cast()) }?;
    Some((slot.0, n))
}

/// `scanf("%p")`.
pub(super) fn scan_pointer(text: &[u8]) -> Option<(usize, usize)> {
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: `%p` stores a `void *`.
    let n = unsafe { scan(text, c"%p%n", (&raw mut p).cast()) }?;
    Some((p as usize, n))
}

/// Test support: the C library's integer scan conversions, to check the Rust versions.
#[cfg(test)]
pub(super) mod reference {
    use super::scan;
    use std::ffi::c_void;

    macro_rules! scan_fn {
        ($name:ident, $t:ty, $fmt:literal) => {
            /// The C library's conversion of `text`.
            pub(in crate::value::text) fn $name(text: &[u8]) -> Option<($t, usize)> {
                let mut x: $t = 0;
                // SAFETY: the format's conversion stores exactly a `$t`.
                let n = unsafe { scan(text, $fmt, (&raw mut x).cast::<c_void>()) }?;
                Some((x, n))
            }
        };
    }
    scan_fn!(scan_hd, i16, c"%hd%n");
    scan_fn!(scan_hu, u16, c"%hu%n");
    scan_fn!(scan_d, i32, c"%d%n");
    scan_fn!(scan_u, u32, c"%u%n");
    scan_fn!(scan_ld, i64, c"%ld%n");
    scan_fn!(scan_lu, u64, c"%lu%n");
}
