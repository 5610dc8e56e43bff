//! `printf("%.32le")` of a `double` and `printf("%.32f")` of a `float` in Rust, for
//! the values most data lives in.
//!
//! The C library's conversion expands the exact binary value; `snprintf` costs about
//! 0.6 µs per element here, which dominated writing `double` arrays. For
//! `1e-23 <= |x| < 1e33` (decimal exponent `k` in `-23..=32`) the 33 significant
//! digits are computed exactly with 192-bit integers: with `x = m * 2^e` and
//! `s = 32 - k` in `0..=55`, `x * 10^s = m * 5^s * 2^(e + s)`, where `m * 5^s` fits in
//! 192 bits (`5^55 < 2^128`, `m < 2^53`) and the power of two is a shift. Rounding is
//! glibc's in the default rounding mode: to nearest, ties to even, on the exact value.
//! Every other value (zero excepted), and infinities and NaNs, go to `snprintf`.
//!
//! `%.32f` of a `float` (promoted to `double`, as C passes it) is
//! `round(m * 5^32 * 2^(e + 32))` with the decimal point 32 digits from the right:
//! `m < 2^24`, so `m * 5^32 < 2^99` and the power of two is again a shift; floats that
//! are whole numbers print their integer and 32 zeros. Infinities, NaNs and the few
//! floats where the shift would overflow go to `snprintf`.
//!
//! The tests compare both paths with the C library on hundreds of thousands of values,
//! exact ties included.

/// Significant digits printed by `%.32le`.
const DIGITS: usize = 33;

/// 10^32: the smallest 33-digit integer.
const TEN32: u128 = 100_000_000_000_000_000_000_000_000_000_000;

/// Appends `%.32le` of `x` and returns true, or returns false (appending nothing) if
/// `x` is outside the range this path handles.
pub(super) fn write_double(x: f64, out: &mut Vec<u8>) -> bool {
    let bits = x.to_bits();
    let negative = bits >> 63 != 0;
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    if biased == 0x7ff {
        return false; // inf, nan
    }
    if biased == 0 && fraction == 0 {
        if negative {
            out.push(b'-');
        }
        out.extend_from_slice(b"0.00000000000000000000000000000000e+00");
        return true;
    }
    if biased == 0 {
        return false; // subnormal: far outside the range
    }
    let m = fraction | (1 << 52);
    let e = biased - 1075;
    // Decimal exponent estimate; corrected below when it is off by one.
    // floor(log10(2^n)) for the value's binary exponent n: floor(log10 |x|) is this or
    // one more (78913 / 2^18 is log10(2) to within 2^-20, exact enough for |n| < 1100).
    let mut k = ((biased - 1023) * 78913) >> 18;
    if k == -24 {
        // The estimate may be one low at the lower end of the range: try the larger
        // exponent first (a value that really has k = -24 comes back down and is
        // declined).
        k = -23;
    }

    let mut tries = 0;
    let (d, k) = loop {
        tries += 1;
        if tries > 3 {
            return false;
        }
        let s = 32 - k;
        if !(0..=55).contains(&s) {
            return false;
        }
        let Some(q) = scaled(m, e, s as u32) else {
            return false;
        };
        if q == TEN32 * 10 {
            // 10^33 (e.g. rounded up from 99…9.5): 10^32 with one more decimal
            // exponent, which is also what rounding at that exponent gives.
            break (TEN32, k + 1);
        }
        if q > TEN32 * 10 {
            k += 1;
            continue;
        }
        if q < TEN32 {
            k -= 1;
            continue;
        }
        break (q, k);
    };
    if negative {
        out.push(b'-');
    }
    // 33 digits: 17 from the high part, 16 from the low part.
    let hi = (d / 10_000_000_000_000_000) as u64;
    let lo = (d % 10_000_000_000_000_000) as u64;
    let mut digits = [0u8; DIGITS];
    put_digits(&mut digits[..17], hi);
    put_digits(&mut digits[17..], lo);
    push_scientific(out, &digits, i64::from(k));
    true
}

/// 5^s for s in 0..=55 (5^55 < 2^128).
const POW5: [u128; 56] = {
    let mut t = [1u128; 56];
    let mut i = 1;
    while i < 56 {
        t[i] = t[i - 1] * 5;
        i += 1;
    }
    t
};

/// Appends `d.ddd…e±XX`: the first digit, a point, the other digits, and the decimal
/// exponent with a sign and at least two digits (C's `%e` layout).
pub(super) fn push_scientific(out: &mut Vec<u8>, digits: &[u8], exp: i64) {
    out.push(digits[0]);
    out.push(b'.');
    out.extend_from_slice(&digits[1..]);
    out.push(b'e');
    out.push(if exp < 0 { b'-' } else { b'+' });
    let mut e = exp.unsigned_abs();
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while e > 0 || i > buf.len() - 2 {
        i -= 1;
        buf[i] = b'0' + (e % 10) as u8;
        e /= 10;
    }
    out.extend_from_slice(&buf[i..]);
}

/// Writes `v` as exactly `dst.len()` (at most 24) decimal digits, leading zeros kept:
/// in independent 8-digit pieces, two digits at a time.
fn put_digits(dst: &mut [u8], v: u64) {
    let mut end = dst.len();
    let mut v = v;
    while end > 0 {
        let n = end.min(8);
        put8(&mut dst[end - n..end], (v % 100_000_000) as u32);
        v /= 100_000_000;
        end -= n;
    }
}

/// Two-digit strings "00".."99".
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes the low `dst.len()` (at most 8) digits of `v`.
fn put8(dst: &mut [u8], mut v: u32) {
    let mut i = dst.len();
    while i >= 2 {
        let p = (v % 100) as usize * 2;
        v /= 100;
        dst[i - 2..i].copy_from_slice(&PAIRS[p..p + 2]);
        i -= 2;
    }
    if i == 1 {
        dst[0] = b'0' + (v % 10) as u8;
    }
}

/// `q`, the quotient of a right shift by `r` (`1..128`) bits whose low 128 bits were
/// `low`, rounded to nearest with ties to even on the bits shifted out.
fn round_even(q: u128, low: u128, r: u32) -> u128 {
    let rem = low & ((1u128 << r) - 1);
    let half = 1u128 << (r - 1);
    q + u128::from(rem > half || (rem == half && q & 1 == 1))
}

/// `m * 5^s * 2^(e + s)` rounded to an integer (to nearest, ties to even), if it fits
/// in a `u128`.
fn scaled(m: u64, e: i32, s: u32) -> Option<u128> {
    let p5 = POW5[s as usize];
    // P = m * p5 in three 64-bit limbs, little-endian.
    let (a0, a1) = (p5 as u64, (p5 >> 64) as u64);
    let x0 = u128::from(m) * u128::from(a0);
    let x1 = u128::from(m) * u128::from(a1);
    let mid = (x0 >> 64) + (x1 & u128::from(u64::MAX));
    let l0 = x0 as u64;
    let l1 = mid as u64;
    // P < 2^181: the high limb holds at most 53 bits.
    let l2 = ((x1 >> 64) + (mid >> 64)) as u64;
    let low = (u128::from(l1) << 64) | u128::from(l0);
    let t = e + s as i32;
    if t >= 0 {
        // Exact: P * 2^t, which must fit.
        if l2 != 0 {
            return None;
        }
        let t = t as u32;
        if t >= 128 || low.leading_zeros() < t {
            return None;
        }
        return Some(low << t);
    }
    let r = t.unsigned_abs();
    if r == 0 || r >= 128 {
        return None;
    }
    // q = P >> r; the high limb contributes `l2 << (128 - r)`, which must fit.
    if l2 != 0 && u128::from(l2).leading_zeros() < 128 - r {
        return None;
    }
    let q = (low >> r)
        | if l2 != 0 {
            u128::from(l2) << (128 - r)
        } else {
            0
        };
    Some(round_even(q, low, r))
}

/// Appends `%.32f` of `x` (promoted to `double`) and returns true, or returns false
/// (appending nothing) if `x` is outside the range this path handles.
pub(super) fn write_float(x: f32, out: &mut Vec<u8>) -> bool {
    let bits = x.to_bits();
    let negative = bits >> 31 != 0;
    let biased = ((bits >> 23) & 0xff) as i32;
    let fraction = bits & ((1 << 23) - 1);
    if biased == 0xff {
        return false; // inf, nan
    }
    let (m, e) = if biased == 0 {
        (fraction, -149)
    } else {
        (fraction | (1 << 23), biased - 150)
    };
    // The value times 10^32, rounded: integer part and 32 fraction digits.
    let (int_part, frac) = if e >= 0 {
        // A whole number below 2^128.
        (u128::from(m) << e, 0)
    } else {
        let p = u128::from(m) * 5u128.pow(32);
        let t = e + 32;
        let n = if t >= 0 {
            let t = t as u32;
            if p.leading_zeros() < t {
                return false;
            }
            p << t
        } else {
            let r = t.unsigned_abs();
            round_even(p >> r, p, r)
        };
        (n / TEN32, n % TEN32)
    };
    if negative {
        out.push(b'-');
    }
    push_u128(out, int_part);
    out.push(b'.');
    let mut digits = [0u8; 32];
    put_digits(&mut digits[..16], (frac / 10_000_000_000_000_000) as u64);
    put_digits(&mut digits[16..], (frac % 10_000_000_000_000_000) as u64);
    out.extend_from_slice(&digits);
    true
}

/// Appends the decimal digits of `v` (no leading zeros; "0" for zero).
fn push_u128(out: &mut Vec<u8>, mut v: u128) {
    let mut buf = [0u8; 40];
    let mut i = buf.len();
    loop {
        // 19 digits at a time in u64 arithmetic.
        let chunk = (v % 10_000_000_000_000_000_000) as u64;
        v /= 10_000_000_000_000_000_000;
        let mut c = chunk;
        let stop = if v == 0 { 0 } else { i - 19 };
        loop {
            i -= 1;
            buf[i] = b'0' + (c % 10) as u8;
            c /= 10;
            if i == stop || (v == 0 && c == 0) {
                break;
            }
        }
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}
