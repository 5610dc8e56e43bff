use super::cfmt::reference;
use super::*;
use proptest::prelude::*;

fn text(v: &Value) -> String {
    String::from_utf8(value_to_text(v)).expect("test values print as UTF-8")
}

fn parse_str(s: &str) -> Result<(Value, usize), ValueParseError> {
    parse_value(s.as_bytes())
}

fn parse_ok(s: &str) -> Value {
    match parse_str(s) {
        Ok((v, _)) => v,
        Err(e) => panic!("`{s}` should parse: {e}"),
    }
}

fn err_kind(s: &str) -> ValueErrorKind {
    match parse_str(s) {
        Ok((v, n)) => panic!("`{s}` should not parse, got {v:?} using {n} bytes"),
        Err(e) => e.kind,
    }
}

#[test]
fn spec_examples_are_written_exactly() {
    assert_eq!(text(&Value::int(10)), "(int)10");
    assert_eq!(text(&Value::int_array(&[1, 2, 3])), "(int[3])1,2,3");
    assert_eq!(text(&Value::string("Done.")), "(char[5])D,o,n,e,.");
    assert_eq!(
        text(&Value::double(2.5)),
        "(double)2.50000000000000000000000000000000e+00"
    );
    let f = Value::from_bytes(CType::Float, 1, true, &1.5f32.to_ne_bytes());
    assert_eq!(text(&f), "(float)1.50000000000000000000000000000000");
    assert_eq!(text(&Value::int_array(&[])), "(int[0])");
    assert_eq!(text(&Value::int(-2147483648)), "(int)-2147483648");
}

#[test]
fn every_type_name_is_written_and_read() {
    for t in CType::ALL {
        let v = Value::alloc(t, 2, false);
        let s = text(&v);
        assert!(s.starts_with(&format!("({}[2])", t.name())), "{s}");
        let (back, used) = parse_ok_bytes(s.as_bytes());
        assert_eq!(used, s.len(), "{s}");
        assert_eq!(back, v, "{s}");
    }
}

fn parse_ok_bytes(b: &[u8]) -> (Value, usize) {
    match parse_value(b) {
        Ok(r) => r,
        Err(e) => panic!("{:?} should parse: {e}", String::from_utf8_lossy(b)),
    }
}

#[test]
fn integer_types_print_like_printf() {
    let cases: [(CType, Vec<u8>, &str); 8] = [
        (CType::UChar, vec![200], "(unsigned char)\u{c8}"),
        (
            CType::Short,
            (-32768i16).to_ne_bytes().to_vec(),
            "(short)-32768",
        ),
        (
            CType::UShort,
            65535u16.to_ne_bytes().to_vec(),
            "(unsigned short)65535",
        ),
        (
            CType::UInt,
            u32::MAX.to_ne_bytes().to_vec(),
            "(unsigned int)4294967295",
        ),
        (
            CType::Long,
            i64::MIN.to_ne_bytes().to_vec(),
            "(long)-9223372036854775808",
        ),
        (
            CType::ULong,
            u64::MAX.to_ne_bytes().to_vec(),
            "(unsigned long)18446744073709551615",
        ),
        (
            CType::Pointer,
            0u64.to_ne_bytes().to_vec(),
            "(pointer)(nil)",
        ),
        (
            CType::Pointer,
            0xdead_beefu64.to_ne_bytes().to_vec(),
            "(pointer)0xdeadbeef",
        ),
    ];
    for (t, bytes, want) in cases {
        let v = Value::from_bytes(t, 1, true, &bytes);
        let got = value_to_text(&v);
        if t == CType::UChar {
            assert_eq!(got, b"(unsigned char)\xc8");
        } else {
            assert_eq!(String::from_utf8_lossy(&got), want);
        }
    }
}

#[test]
fn characters_escape_lt_and_amp_both_ways() {
    let v = Value::string("a<b&c,d");
    let s = text(&v);
    assert_eq!(s, "(char[7])a,&lt;,b,&amp;,c,,,d");
    let (back, used) = parse_ok_bytes(format!("{s}</field>").as_bytes());
    assert_eq!(used, s.len());
    assert_eq!(back.to_string_lossy().as_deref(), Some("a<b&c,d"));
}

#[test]
fn comma_space_and_newline_are_characters() {
    // rule 5: the example from the spec.
    let v = parse_ok("(char[3])a,,,b</field>");
    assert_eq!(v.bytes(), b"a,b");
    let v = parse_ok("(char[3]) ,\n,\t");
    assert_eq!(v.bytes(), b" \n\t");
    let v = parse_ok("(unsigned char)&");
    assert_eq!(v.bytes(), b"&");
    assert_eq!(v.ctype(), CType::UChar);
}

#[test]
fn char_elements_must_be_followed_by_comma_or_lt() {
    assert_eq!(
        err_kind("(char[2])ab,c"),
        ValueErrorKind::CharNotTerminated { index: 0 }
    );
    assert_eq!(
        err_kind("(char)ab</field>"),
        ValueErrorKind::CharNotTerminated { index: 0 }
    );
    // Fewer elements than declared: said so, for characters and numbers.
    assert_eq!(
        err_kind("(char[2])a</field>"),
        ValueErrorKind::TooFewElements {
            declared: 2,
            found: 1
        }
    );
    assert_eq!(
        err_kind("(int[3])1,2</field>"),
        ValueErrorKind::TooFewElements {
            declared: 3,
            found: 2
        }
    );
    let e = parse_value(b"(char[3])a,b</field>").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("the array declares 3 elements but the value ends after 2"),
        "{e}"
    );
    // A raw `<` is never a character: it ends the value.
    assert_eq!(err_kind("(char)<"), ValueErrorKind::BadElement { index: 0 });
    assert_eq!(
        err_kind("(char[2])a,"),
        ValueErrorKind::BadElement { index: 1 }
    );
}

#[test]
fn scalars_and_one_element_arrays_stay_distinct() {
    // rule 7
    let a = parse_ok("(int[1])7");
    assert!(!a.is_scalar());
    assert_eq!(text(&a), "(int[1])7");
    let s = parse_ok("(int)7");
    assert!(s.is_scalar());
    assert_eq!(s.len(), 1);
    assert_eq!(text(&s), "(int)7");
    let e = parse_ok("(double[0])</field>");
    assert!(e.is_empty() && !e.is_scalar());
}

#[test]
fn numbers_are_read_like_scanf() {
    assert_eq!(parse_ok("(int) 42").as_i32(), Some(42));
    assert_eq!(
        parse_ok("(int[3])1, 2,\n-3").to_i32_vec(),
        Some(vec![1, 2, -3])
    );
    assert_eq!(parse_ok("(int)+5x").as_i32(), Some(5));
    // consumed count stops where scanf stops (rule 6: the caller skips the rest)
    assert_eq!(parse_str("(int)12 junk").map(|(_, n)| n), Ok(7));
    assert_eq!(parse_ok("(double)1e3").get_f64(0), Some(1000.0));
    assert_eq!(
        parse_ok("(double[2])0.5,-.25").to_f64_vec(),
        Some(vec![0.5, -0.25])
    );
    let f = parse_ok("(float)3.25");
    assert_eq!(f.bytes(), 3.25f32.to_ne_bytes());
    // overflow behaves as glibc: strtol saturates, then the store truncates
    assert_eq!(parse_ok("(int)4294967297").as_i32(), Some(1));
    assert_eq!(parse_ok("(int)99999999999999999999").as_i32(), Some(-1));
    let us = parse_ok("(unsigned short)-1");
    assert_eq!(us.bytes(), 65535u16.to_ne_bytes());
    let p = parse_ok("(pointer)0x10");
    assert_eq!(p.bytes(), 16u64.to_ne_bytes());
}

#[test]
fn malformed_values_are_rejected_with_offsets() {
    assert_eq!(err_kind("int)5"), ValueErrorKind::MissingOpenParen);
    assert_eq!(err_kind("(int 5"), ValueErrorKind::UnterminatedTypeName);
    // rule 2: exact names only, no prefixes
    assert_eq!(
        err_kind("(unsig)5"),
        ValueErrorKind::UnknownType("unsig".into())
    );
    assert_eq!(
        err_kind("(Int)5"),
        ValueErrorKind::UnknownType("Int".into())
    );
    assert_eq!(err_kind("(int[])"), ValueErrorKind::BadCount);
    assert_eq!(err_kind("(int[x])"), ValueErrorKind::BadCount);
    assert_eq!(err_kind("(int[2)1,2"), ValueErrorKind::BadCount);
    assert_eq!(err_kind("(int[2]1,2"), ValueErrorKind::MissingCloseParen);
    assert_eq!(
        err_kind("(int[99999999999999])1"),
        ValueErrorKind::CountTooLarge(99999999999999)
    );
    assert_eq!(
        err_kind("(int[99999999999999999999999])1"),
        ValueErrorKind::BadCount
    );
    // rule 3: no white space before a comma
    assert_eq!(
        err_kind("(int[2])1 ,2"),
        ValueErrorKind::MissingComma { index: 0 }
    );
    assert_eq!(
        err_kind("(int[2])1   "),
        ValueErrorKind::MissingComma { index: 0 }
    );
    assert_eq!(err_kind("(int[2])1"), ValueErrorKind::CountTooLarge(2));
    assert_eq!(err_kind("(int)"), ValueErrorKind::BadElement { index: 0 });
    assert_eq!(err_kind("(int)x"), ValueErrorKind::BadElement { index: 0 });
    assert_eq!(
        err_kind("(double)<"),
        ValueErrorKind::BadElement { index: 0 }
    );
    let e = parse_str("(int[3])1,2,x").err().map(|e| e.offset);
    assert_eq!(e, Some(12));
    let msg = parse_str("(foo)1")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        msg.contains("unknown type `foo`") && msg.contains("at byte 1"),
        "{msg}"
    );
}

#[test]
fn double_and_float_text_matches_exact_decimal_expansion() {
    // Rust's `{:.32e}` is an exact, correctly rounded expansion: an independent
    // check of the C library call (only the exponent spelling differs).
    for x in [0.1f64, 1.0 / 3.0, 6.02214076e23, -1e-300, 5e-324, f64::MAX] {
        let got = text(&Value::double(x));
        let rust = format!("{x:.32e}");
        let (mant, exp) = rust.split_once('e').unwrap_or((&rust, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        assert_eq!(got, format!("(double){mant}e{sign}{:02}", exp.abs()));
    }
    let v = Value::double(f64::INFINITY);
    assert_eq!(text(&v), "(double)inf");
    assert_eq!(text(&Value::double(-f64::INFINITY)), "(double)-inf");
}

fn rust_exp_form(x: f64) -> String {
    let rust = format!("{x:.32e}");
    let (mant, exp) = rust.split_once('e').unwrap_or((&rust, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mant}e{sign}{:02}", exp.abs())
}

/// `long double` bytes (10 significant, 6 padding) for `x` (exact widening).
fn ld_from_f64(x: f64) -> [u8; 16] {
    let bits = x.to_bits();
    let sign = (bits >> 63) as u16;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    let (e, m) = if exp == 0 {
        if frac == 0 {
            (0u16, 0u64)
        } else {
            let lz = frac.leading_zeros() as i32; // >= 12
            let m = frac << lz;
            ((-1022 - (lz - 11) + 16383) as u16, m)
        }
    } else if exp == 0x7ff {
        (0x7fff, (1 << 63) | (frac << 11))
    } else {
        ((exp - 1023 + 16383) as u16, (1 << 63) | (frac << 11))
    };
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&m.to_le_bytes());
    out[8..10].copy_from_slice(&((sign << 15) | e).to_le_bytes());
    out
}

#[test]
fn long_double_widened_from_double_prints_like_double() {
    for x in [1.0, 2.5, -0.1, 1e300, 3e-310, 123456789.125, 0.0, -0.0] {
        let v = Value::from_bytes(CType::LDouble, 1, true, &ld_from_f64(x));
        let want = format!("(long double){}", rust_exp_form(x));
        assert_eq!(text(&v), want);
        let (back, _) = parse_ok_bytes(want.as_bytes());
        assert_eq!(back.bytes()[..10], ld_from_f64(x)[..10], "{want}");
    }
}

#[test]
fn exact_ties_round_to_even_like_glibc() {
    // odd * 2^-25 near 2^27 has exactly 34 significant digits ending in 5: a tie at
    // the 33 digits printed. glibc rounds ties to even (checked with a C program).
    let want = [
        "1.34217728000000029802322387695312e+08",
        "1.34217728000000089406967163085938e+08",
        "1.34217728000000149011611938476562e+08",
        "1.34217728000000208616256713867188e+08",
        "1.34217728000000268220901489257812e+08",
    ];
    for (k, want) in want.iter().enumerate() {
        let m = (1u64 << 52) | (2 * k as u64 + 1);
        let x = m as f64 * (-25f64).exp2();
        assert_eq!(text(&Value::double(x)), format!("(double){want}"));
        let v = Value::from_bytes(CType::LDouble, 1, true, &ld_from_f64(x));
        assert_eq!(text(&v), format!("(long double){want}"));
    }
}

/// A C program that prints `%.32Le` of each 10-byte little-endian value given as 20
/// hex digits per input line, compiled with the system C compiler. `None` if there is
/// no C compiler (the comparison then cannot run).
fn c_long_double_printer() -> Option<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("snet-ld-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let src = dir.join("ld.c");
    let exe = dir.join("ld");
    std::fs::write(
        &src,
        r#"#include <stdio.h>
#include <string.h>
int main(void) {
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        unsigned char b[16] = {0};
        for (int i = 0; i < 10; i++) { unsigned x; sscanf(line + 2 * i, "%2x", &x); b[i] = (unsigned char)x; }
        long double v; memcpy(&v, b, sizeof v);
        printf("%.32Le\n", v);
    }
    return 0;
}
"#,
    )
    .ok()?;
    let status = std::process::Command::new("cc")
        .arg("-O1")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .ok()?;
    status.success().then_some(exe)
}

fn compare_long_doubles_with_c(values: &[[u8; 10]]) {
    let Some(exe) = c_long_double_printer() else {
        eprintln!("no C compiler: long double comparison skipped");
        return;
    };
    // Feed the input from a file: writing to a pipe while the child fills its output
    // pipe would deadlock.
    let input = exe.with_extension("in");
    let mut hex = String::new();
    for v in values {
        for b in v {
            hex.push_str(&format!("{b:02x}"));
        }
        hex.push('\n');
    }
    std::fs::write(&input, hex).expect("write the C printer's input");
    let out = std::process::Command::new(&exe)
        .stdin(std::fs::File::open(&input).expect("open input"))
        .output()
        .expect("run the C printer");
    let c = String::from_utf8(out.stdout).expect("ASCII");
    let lines: Vec<&str> = c.lines().collect();
    assert_eq!(lines.len(), values.len());
    for (v, want) in values.iter().zip(lines) {
        let mut got = Vec::new();
        ldouble::write_long_double(v, &mut got);
        assert_eq!(String::from_utf8_lossy(&got), want, "bytes {v:02x?}");
    }
}

fn ld(mant: u64, se: u16) -> [u8; 10] {
    let mut b = [0u8; 10];
    b[..8].copy_from_slice(&mant.to_le_bytes());
    b[8..].copy_from_slice(&se.to_le_bytes());
    b
}

#[test]
fn long_double_matches_the_c_library() {
    let mut values = vec![
        ld(0, 0),
        ld(0, 0x8000),
        ld(1 << 63, 16383),               // 1.0
        ld(1 << 63, 0x8000 | 16383),      // -1.0
        ld(u64::MAX, 0x7ffe),             // LDBL_MAX
        ld(1 << 63, 1),                   // LDBL_MIN
        ld(1, 0),                         // smallest denormal
        ld(u64::MAX >> 1, 0),             // largest denormal
        ld(1 << 63, 0),                   // pseudo-denormal
        ld(1 << 63, 0x7fff),              // inf
        ld(1 << 63, 0xffff),              // -inf
        ld(3 << 62, 0x7fff),              // quiet NaN
        ld(3 << 62, 0xffff),              // -NaN
        ld(0, 0x7fff),                    // pseudo-infinity
        ld(1 << 62, 0x7fff),              // pseudo-NaN
        ld(1 << 62, 16383),               // unnormal
        ld(0, 16383),                     // pseudo-zero with exponent
        ld(0xcccc_cccc_cccc_cccd, 16379), // ~0.1
    ];
    // Ties: m * 2^e with exactly 34 significant digits ending in 5 are rare; powers of
    // two with small exponents and values near digit boundaries exercise rounding.
    for e in 16383 - 120..16383 + 120 {
        values.push(ld(1 << 63, e));
        values.push(ld(u64::MAX, e));
        values.push(ld((1 << 63) | 1, e));
    }
    let mut rng = proptest::test_runner::TestRng::deterministic_rng(
        proptest::test_runner::RngAlgorithm::ChaCha,
    );
    for _ in 0..3000 {
        let m = rng.next_u64();
        let se = rng.next_u64() as u16;
        values.push(ld(m, se));
        values.push(ld(m | (1 << 63), (se & 0x803f) | 0x3fc0));
    }
    compare_long_doubles_with_c(&values);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn integer_scans_match_the_c_library(s in "[ \t\n]{0,2}[-+]{0,2}[0-9]{0,24}[a-z.]{0,2}") {
        let b = s.as_bytes();
        let mut out = ElementBytes::new();
        let rust = parse_element(CType::Short, b, &mut out, true).map(|n| (i16::from_ne_bytes([out[0], out[1]]), n));
        prop_assert_eq!(rust, reference::scan_hd(b));
        out.clear();
        let rust = parse_element(CType::UShort, b, &mut out, true).map(|n| (u16::from_ne_bytes([out[0], out[1]]), n));
        prop_assert_eq!(rust, reference::scan_hu(b));
        out.clear();
        let rust = parse_element(CType::Int, b, &mut out, true).map(|n| (i32::from_ne_bytes(arr(&out)), n));
        prop_assert_eq!(rust, reference::scan_d(b));
        out.clear();
        let rust = parse_element(CType::UInt, b, &mut out, true).map(|n| (u32::from_ne_bytes(arr(&out)), n));
        prop_assert_eq!(rust, reference::scan_u(b));
        out.clear();
        let rust = parse_element(CType::Long, b, &mut out, true).map(|n| (i64::from_ne_bytes(arr(&out)), n));
        prop_assert_eq!(rust, reference::scan_ld(b));
        out.clear();
        let rust = parse_element(CType::ULong, b, &mut out, true).map(|n| (u64::from_ne_bytes(arr(&out)), n));
        prop_assert_eq!(rust, reference::scan_lu(b));
    }

    #[test]
    fn integer_scans_match_on_arbitrary_bytes(b in proptest::collection::vec(any::<u8>(), 0..12)) {
        let mut out = ElementBytes::new();
        let rust = parse_element(CType::Long, &b, &mut out, true).map(|n| (i64::from_ne_bytes(arr(&out)), n));
        // the C scan sees the text up to a NUL, as our NUL-terminated copy does
        let upto = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        prop_assert_eq!(rust, reference::scan_ld(&b[..upto]));
    }

    #[test]
    fn float_fast_path_matches_the_c_library(
        s in "[ \t]{0,1}[-+]{0,1}[0-9]{0,20}[.]{0,1}[0-9]{0,20}([eE][-+]{0,1}[0-9]{0,4}){0,1}[ ,<x]{0,1}[0-9]{0,2}",
    ) {
        let b = s.as_bytes();
        let mut out = ElementBytes::new();
        let rust = parse_element(CType::Double, b, &mut out, true).map(|n| (f64::from_ne_bytes(arr(&out)).to_bits(), n));
        let c = cfmt::scan_double(number_token(b)).map(|(x, n)| (x.to_bits(), n));
        prop_assert_eq!(rust, c, "{:?}", s);
        out.clear();
        let rust = parse_element(CType::Float, b, &mut out, true).map(|n| (f32::from_ne_bytes(arr(&out)).to_bits(), n));
        let c = cfmt::scan_float(number_token(b)).map(|(x, n)| (x.to_bits(), n));
        prop_assert_eq!(rust, c, "{:?}", s);
    }

    #[test]
    fn float_fast_path_matches_on_printed_values(bits in any::<u64>(), prec in 0usize..40) {
        let x = f64::from_bits(bits);
        prop_assume!(x.is_finite());
        for s in [format!("{x:.prec$e}"), format!("{x:.prec$}"), format!("{x}")] {
            let b = s.as_bytes();
            let mut out = ElementBytes::new();
            let rust = parse_element(CType::Double, b, &mut out, true).map(|n| (f64::from_ne_bytes(arr(&out)).to_bits(), n));
            let c = cfmt::scan_double(b).map(|(x, n)| (x.to_bits(), n));
            prop_assert_eq!(rust, c, "{:?}", s);
            out.clear();
            let rust = parse_element(CType::Float, b, &mut out, true).map(|n| (f32::from_ne_bytes(arr(&out)).to_bits(), n));
            let c = cfmt::scan_float(b).map(|(x, n)| (x.to_bits(), n));
            prop_assert_eq!(rust, c, "{:?}", s);
        }
    }

    #[test]
    fn doubles_print_exactly(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assume!(x.is_finite());
        prop_assert_eq!(text(&Value::double(x)), format!("(double){}", rust_exp_form(x)));
    }

    #[test]
    fn floats_print_exactly(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        prop_assume!(x.is_finite());
        let v = Value::from_bytes(CType::Float, 1, true, &bits.to_ne_bytes());
        prop_assert_eq!(text(&v), format!("(float){:.32}", f64::from(x)));
    }

    #[test]
    fn doubles_round_trip(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assume!(!x.is_nan());
        let v = Value::double(x);
        let (back, used) = parse_ok_bytes(&value_to_text(&v));
        prop_assert_eq!(used, value_to_text(&v).len());
        prop_assert_eq!(back.bytes(), v.bytes());
    }

    #[test]
    fn long_doubles_round_trip(m in any::<u64>(), se in any::<u16>()) {
        // canonical finite encodings only (others print as nan/inf)
        let exp = se & 0x7fff;
        prop_assume!(exp != 0x7fff);
        let m = if exp == 0 { m >> 1 } else { m | (1 << 63) };
        let mut bytes = [0u8; 16];
        bytes[..10].copy_from_slice(&ld(m, se));
        let v = Value::from_bytes(CType::LDouble, 1, true, &bytes);
        let t = value_to_text(&v);
        let (back, _) = parse_ok_bytes(&t);
        prop_assert_eq!(&back.bytes()[..10], &bytes[..10], "{}", String::from_utf8_lossy(&t));
    }

    #[test]
    fn arrays_of_every_type_round_trip(
        t in 0usize..12,
        n in 0usize..6,
        scalar in any::<bool>(),
        seed in proptest::collection::vec(any::<u8>(), 96),
    ) {
        let ctype = CType::ALL[t];
        let n = if scalar { 1 } else { n };
        let size = ctype.size();
        let mut bytes: Vec<u8> = seed.iter().copied().cycle().take(n * size).collect();
        // Make floating elements finite and representable by their text.
        for e in bytes.chunks_exact_mut(size) {
            match ctype {
                CType::Float => {
                    let x = f32::from_ne_bytes(arr(e));
                    let x = if x.is_finite() && x.abs() > 1e-20 { x } else { 1.25 };
                    e.copy_from_slice(&x.to_ne_bytes());
                }
                CType::Double => {
                    let x = f64::from_ne_bytes(arr(e));
                    let x = if x.is_nan() { 0.5 } else { x };
                    e.copy_from_slice(&x.to_ne_bytes());
                }
                CType::LDouble => {
                    e[7] |= 0x80; // integer bit
                    e[9] &= 0xbf; // exponent below 0x7fff
                    if e[8] == 0 && e[9] & 0x7f == 0 {
                        // Exponent 0 with the integer bit set is a pseudo-denormal: a
                        // non-canonical encoding whose text parses back to the
                        // canonical one. Use the smallest normal exponent instead.
                        e[8] = 1;
                    }
                    e[10..].fill(0);
                }
                _ => {}
            }
        }
        let v = Value::from_bytes(ctype, n, scalar, &bytes);
        let mut t = value_to_text(&v);
        let len = t.len();
        t.extend_from_slice(b"</field>");
        let (back, used) = parse_ok_bytes(&t);
        prop_assert_eq!(used, len);
        prop_assert_eq!(back, v);
    }

    #[test]
    fn arbitrary_text_never_panics(b in proptest::collection::vec(any::<u8>(), 0..40)) {
        let mut t = b"(".to_vec();
        t.extend_from_slice(&b);
        let _ = parse_value(&t);
        let _ = parse_value(&b);
    }

    #[test]
    fn structured_garbage_never_panics(
        ty in "(int|char|unsigned char|double|long double|pointer|float|short)",
        count in "(\\[[0-9]{0,3}\\]?)?",
        body in "[0-9a-z,<&;. -]{0,20}",
    ) {
        let s = format!("({ty}{count}){body}");
        if let Ok((v, used)) = parse_value(s.as_bytes()) {
            prop_assert!(used <= s.len());
            prop_assert!(v.len() <= s.len());
        }
    }
}

/// A xorshift64 generator (deterministic test inputs).
fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// Formats every value with `ours` and, where it does not decline, checks the text
/// against the C library's (`c`); returns how many `ours` took.
fn compare_with_c<T: Copy + std::fmt::LowerExp>(
    values: &[T],
    ours: fn(T, &mut Vec<u8>) -> bool,
    c: fn(T, &mut Vec<u8>),
) -> usize {
    let (mut fast, mut mine, mut theirs) = (0, Vec::new(), Vec::new());
    for &x in values {
        mine.clear();
        theirs.clear();
        if ours(x, &mut mine) {
            fast += 1;
            c(x, &mut theirs);
            assert_eq!(
                String::from_utf8_lossy(&mine),
                String::from_utf8_lossy(&theirs),
                "C's text of {x:e}"
            );
        } else {
            assert!(mine.is_empty(), "{x:e} was declined but text was appended");
        }
    }
    fast
}

/// The Rust path for `%.32le` (`dfmt`) against the C library's `snprintf` on random
/// values around and inside its range, exact ties (`n * 2^-j` with few significant
/// bits, whose expansions end at the 34th digit), decimal fractions, powers of ten and
/// their neighbours, and the range boundaries. Also checks that the Rust path is
/// actually taken for most values inside its range.
#[test]
fn double_text_matches_the_c_library() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let mut values = Vec::new();
    for _ in 0..300_000 {
        // Random significand, exponent spanning 1e-30 .. 1e40.
        let exp = 1023 - 100 + next() % 233;
        let bits = (next() & ((1 << 52) - 1)) | (exp << 52) | (next() & (1 << 63));
        values.push(f64::from_bits(bits));
    }
    for j in 0..=130 {
        for n in 1..=40u64 {
            values.push(n as f64 * 2f64.powi(-j));
            values.push((n * 1_000_003 % 8191) as f64 * 2f64.powi(-j));
        }
        values.push((next() & ((1 << 53) - 1)) as f64 * 2f64.powi(-j));
    }
    for j in 0..=25 {
        for _ in 0..200 {
            values.push((next() % 1_000_000) as f64 / 10f64.powi(j));
        }
    }
    for p in -30..=40 {
        let x = 10f64.powi(p);
        values.extend([
            x,
            -x,
            f64::from_bits(x.to_bits() + 1),
            f64::from_bits(x.to_bits() - 1),
        ]);
        values.extend([
            9.5 * x,
            9.999_999_999_999_999 * x,
            0.999_999_999_999_999_9 * x,
        ]);
    }
    values.extend([
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        0.1,
        1.0 / 3.0,
        2.0 / 3.0,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        1e-23,
        f64::from_bits(1e-23f64.to_bits() - 1),
        1e33,
        f64::from_bits(1e33f64.to_bits() - 1),
        2f64.powi(-48),
        2f64.powi(-49),
        3.0 * 2f64.powi(-50),
        f64::INFINITY,
        f64::NAN,
    ]);
    let fast = compare_with_c(
        &values,
        super::dfmt::write_double,
        super::cfmt::write_double,
    );
    let in_range: Vec<f64> = values
        .iter()
        .copied()
        .filter(|x| *x != 0.0 && (1.000_001e-23..9.999_99e32).contains(&x.abs()))
        .collect();
    for &x in &in_range {
        assert!(
            super::dfmt::write_double(x, &mut Vec::new()),
            "{x:e} is in the fast path's range but was declined"
        );
    }
    let in_range = in_range.len();
    assert!(
        fast >= in_range && in_range > 100_000,
        "{fast} fast, {in_range} in range"
    );
}

/// The Rust path for a float's `%.32f` (`dfmt`) against the C library's `snprintf`:
/// every exponent, random significands, ties, whole numbers, subnormals, signs.
#[test]
fn float_text_matches_the_c_library() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let mut values: Vec<f32> = Vec::new();
    for biased in 0..255u32 {
        for _ in 0..600 {
            let bits = (next() as u32 & 0x807f_ffff) | (biased << 23);
            values.push(f32::from_bits(bits));
        }
        // Few significant bits: exact expansions that end at or near the 32nd digit.
        for n in 1..=8u32 {
            values.push(f32::from_bits((biased << 23) | (n << 20)));
        }
    }
    for i in 0..2000 {
        values.push(i as f32 / 8.0);
        values.push((next() % 100_000) as f32 / 100.0);
    }
    values.extend([
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        16_777_216.0,
        3.0e38,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        2f32.powi(-33),
        2f32.powi(-32),
        3.0 * 2f32.powi(-34),
        f32::INFINITY,
        f32::NAN,
    ]);
    let fast = compare_with_c(&values, super::dfmt::write_float, super::cfmt::write_float);
    let finite = values.iter().filter(|x| x.is_finite()).count();
    // Only the band 2^21 <= |x| < 2^23 (and infinities, NaNs) may be declined.
    assert!(
        fast * 100 >= finite * 97,
        "{fast} of {finite} finite values fast"
    );
}
