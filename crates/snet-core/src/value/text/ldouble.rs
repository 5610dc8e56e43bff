//! `printf("%.32Le")` of an x87 80-bit `long double`, computed exactly in Rust.
//!
//! Rust cannot pass an 80-bit `long double` by value to a variadic C function, so the
//! conversion glibc performs is reproduced here: the value `m * 2^e` is expanded to its
//! exact decimal digits with a small big-integer routine and rounded to 33 significant
//! digits with glibc's rule for round-to-nearest (round up iff the next digit is at least
//! 5 and either the last kept digit is odd or something non-zero follows it: ties to
//! even). Special encodings follow glibc's `__isnanl`/`__isinfl` for the ldbl-96 format:
//! a non-zero exponent with a clear integer bit (unnormal, pseudo-infinity, pseudo-NaN)
//! is NaN; exponent 0x7fff is infinity if the 63 fraction bits are zero and NaN
//! otherwise. Zero exponents (denormals and pseudo-denormals) have the value
//! `m * 2^-16445`. The tests compare every case with a C program compiled at test time.

/// Significant digits printed by `%.32Le`.
const DIGITS: usize = 33;

/// Appends `%.32Le` of the 80-bit extended value whose little-endian encoding is
/// `bytes[0..10]` (the 64-bit significand, then sign and 15-bit exponent).
pub(super) fn write_long_double(bytes: &[u8], out: &mut Vec<u8>) {
    let mut m8 = [0u8; 8];
    m8.copy_from_slice(&bytes[..8]);
    let mant = u64::from_le_bytes(m8);
    let se = u16::from_le_bytes([bytes[8], bytes[9]]);
    let negative = se & 0x8000 != 0;
    let exp = i32::from(se & 0x7fff);
    let int_bit = mant >> 63 == 1;
    let fraction = mant & !(1 << 63);

    if negative {
        out.push(b'-');
    }
    if (exp != 0 && !int_bit) || (exp == 0x7fff && fraction != 0) {
        out.extend_from_slice(b"nan");
        return;
    }
    if exp == 0x7fff {
        out.extend_from_slice(b"inf");
        return;
    }
    if mant == 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', DIGITS - 1));
        out.extend_from_slice(b"e+00");
        return;
    }

    // value = mant * 2^e2
    let e2 = exp.max(1) - 16383 - 63;
    let (digits, dec_shift) = if e2 >= 0 {
        let mut n = BigUint::from_u64(mant);
        n.shl(e2.unsigned_abs());
        (n.into_decimal(), 0i64)
    } else {
        // mant / 2^k = mant * 5^k / 10^k
        let k = e2.unsigned_abs();
        let mut n = BigUint::from_u64(mant);
        n.mul_pow5(k);
        (n.into_decimal(), -i64::from(k))
    };
    // value = digits * 10^dec_shift, digits without leading zeros.
    let mut sci_exp = digits.len() as i64 - 1 + dec_shift;
    let mut kept: Vec<u8> = digits.iter().take(DIGITS).copied().collect();
    kept.resize(DIGITS, b'0');
    if digits.len() > DIGITS {
        let next = digits[DIGITS];
        let more = next != b'0' && next != b'5' || digits[DIGITS + 1..].iter().any(|&d| d != b'0');
        let last_odd = (kept[DIGITS - 1] - b'0') % 2 == 1;
        if next >= b'5' && (last_odd || more) {
            let mut i = DIGITS;
            loop {
                if i == 0 {
                    // Every kept digit was 9: 99..9 -> 100..0 with one more exponent.
                    kept.insert(0, b'1');
                    kept.truncate(DIGITS);
                    sci_exp += 1;
                    break;
                }
                i -= 1;
                if kept[i] == b'9' {
                    kept[i] = b'0';
                } else {
                    kept[i] += 1;
                    break;
                }
            }
        }
    }
    super::dfmt::push_scientific(out, &kept, sci_exp);
}

/// A minimal unsigned big integer: little-endian base-2^32 limbs.
struct BigUint(Vec<u32>);

impl BigUint {
    fn from_u64(x: u64) -> BigUint {
        BigUint(vec![x as u32, (x >> 32) as u32])
    }

    fn shl(&mut self, bits: u32) {
        let words = (bits / 32) as usize;
        let rest = bits % 32;
        if rest > 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let v = (u64::from(*limb) << rest) | u64::from(carry);
                *limb = v as u32;
                carry = (v >> 32) as u32;
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        self.0.splice(0..0, std::iter::repeat_n(0, words));
    }

    fn mul_small(&mut self, f: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let v = u64::from(*limb) * u64::from(f) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow5(&mut self, mut k: u32) {
        const POW5_13: u32 = 1_220_703_125; // 5^13, the largest power of 5 in a u32
        while k >= 13 {
            self.mul_small(POW5_13);
            k -= 13;
        }
        self.mul_small(5u32.pow(k));
    }

    /// Divides in place by `d`, returning the remainder.
    fn div_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for limb in self.0.iter_mut().rev() {
            let v = (rem << 32) | u64::from(*limb);
            *limb = (v / u64::from(d)) as u32;
            rem = v % u64::from(d);
        }
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        rem as u32
    }

    /// The decimal digits, most significant first (ASCII), without leading zeros.
    fn into_decimal(mut self) -> Vec<u8> {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        let mut chunks = Vec::new();
        while !self.0.is_empty() {
            chunks.push(self.div_small(1_000_000_000));
        }
        let mut s = Vec::with_capacity(chunks.len() * 9);
        for (i, c) in chunks.iter().rev().enumerate() {
            if i == 0 {
                s.extend_from_slice(c.to_string().as_bytes());
            } else {
                s.extend_from_slice(format!("{c:09}").as_bytes());
            }
        }
        s
    }
}
