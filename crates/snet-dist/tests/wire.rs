//! Wire format: bit-for-bit round trips of every C4SNet type, label announcement per
//! peer, and errors (never panics) on pointer values and malformed input.

use proptest::prelude::*;
use snet_core::{CType, DataMode, Label, LabelKind, Record, Value};
use snet_dist::wire::{self, PeerDecoder, PeerEncoder, WireError};

/// Asserts that `a` and `b` hold the same labels in the same order with bit-identical
/// values (same type, scalar/array, count and bytes).
fn assert_identical(a: &Record, b: &Record) {
    assert_eq!(a.mode, b.mode);
    assert_eq!(a.tags(), b.tags());
    assert_eq!(a.btags(), b.btags());
    assert_eq!(a.fields().len(), b.fields().len());
    for ((la, va), (lb, vb)) in a.fields().iter().zip(b.fields()) {
        assert_eq!(la, lb);
        match (va, vb) {
            (None, None) => {}
            (Some(x), Some(y)) => {
                assert_eq!(x.ctype(), y.ctype(), "{la}");
                assert_eq!(x.is_scalar(), y.is_scalar(), "{la}");
                assert_eq!(x.len(), y.len(), "{la}");
                assert_eq!(x.bytes(), y.bytes(), "{la}");
            }
            _ => panic!("{la}: NULL on one side only"),
        }
    }
}

fn round_trip(enc: &mut PeerEncoder, dec: &mut PeerDecoder, rec: &Record) -> Record {
    let mut buf = Vec::new();
    enc.encode_record(rec, &mut buf).expect("encodes");
    let mut input = &buf[..];
    let back = dec.decode_record(&mut input).expect("decodes");
    assert!(input.is_empty(), "decoder consumed the whole record");
    back
}

fn arb_value() -> impl Strategy<Value = Option<Value>> {
    let transferable = 0u32..11; // every CType but Pointer
    prop_oneof![
        1 => Just(None),
        8 => (transferable, any::<bool>(), 0usize..40).prop_flat_map(|(t, scalar, n)| {
            let ctype = CType::from_abi(t).unwrap();
            let len = if scalar { 1 } else { n };
            proptest::collection::vec(any::<u8>(), len * ctype.size())
                .prop_map(move |bytes| Some(Value::from_bytes(ctype, len, scalar, &bytes)))
        }),
    ]
}

const NAMES: &[&str] = &["a", "b", "x", "long_field_name", "T", "é", "n0", "n1"];

fn arb_record() -> impl Strategy<Value = Record> {
    (
        proptest::collection::vec((0..NAMES.len(), arb_value()), 0..6),
        proptest::collection::vec((0..NAMES.len(), any::<i32>()), 0..5),
        proptest::collection::vec((0..NAMES.len(), any::<i32>()), 0..4),
        any::<bool>(),
    )
        .prop_map(|(fields, tags, btags, binary)| {
            let mut r = Record::new();
            for (i, v) in fields {
                let l = Label::field(NAMES[i]);
                if !r.has(l) {
                    r.push_field(l, v);
                }
            }
            for (kind, list) in [(LabelKind::Tag, tags), (LabelKind::BTag, btags)] {
                for (i, v) in list {
                    let l = Label::new(kind, NAMES[i]);
                    if !r.has(l) {
                        r.push_tag(l, v);
                    }
                }
            }
            if binary {
                r.mode = DataMode::Binary;
            }
            r
        })
}

proptest! {
    /// A stream of records through one encoder/decoder pair arrives bit for bit, and
    /// every label is announced exactly once.
    #[test]
    fn streams_round_trip_bit_for_bit(recs in proptest::collection::vec(arb_record(), 1..8)) {
        let mut enc = PeerEncoder::new();
        let mut dec = PeerDecoder::new();
        let mut seen = std::collections::HashSet::new();
        for r in &recs {
            let back = round_trip(&mut enc, &mut dec, r);
            assert_identical(r, &back);
            seen.extend(r.labels());
            prop_assert_eq!(enc.known_labels(), seen.len());
            prop_assert_eq!(dec.known_labels(), seen.len());
        }
    }

    /// Every strict prefix of a valid encoding is an error, not a panic or a record.
    #[test]
    fn truncated_records_are_errors(r in arb_record()) {
        let mut buf = Vec::new();
        PeerEncoder::new().encode_record(&r, &mut buf).unwrap();
        for cut in 0..buf.len() {
            let mut input = &buf[..cut];
            let res = PeerDecoder::new().decode_record(&mut input);
            prop_assert!(matches!(res, Err(WireError::Truncated { .. })), "cut {cut}: {res:?}");
        }
    }

    /// Random bytes, and valid encodings with one byte changed, decode to an error or to
    /// a record that itself round-trips exactly (the decoder never panics, and what it
    /// accepts is a well-formed record).
    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200),
                            r in arb_record(), pos in any::<usize>(), byte in any::<u8>()) {
        let mut with_header = vec![1, 0, 0, 8, 16];
        with_header.extend_from_slice(&bytes);
        let mut mutated = Vec::new();
        PeerEncoder::new().encode_record(&r, &mut mutated).unwrap();
        let i = pos % mutated.len();
        mutated[i] = byte;
        for buf in [&bytes, &with_header, &mutated] {
            let mut input = &buf[..];
            match PeerDecoder::new().decode_record(&mut input) {
                Ok(back) => {
                    let again = round_trip(&mut PeerEncoder::new(), &mut PeerDecoder::new(), &back);
                    assert_identical(&back, &again);
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }

    /// The envelope helpers round-trip.
    #[test]
    fn helpers_round_trip(a in any::<u8>(), b in any::<u16>(), c in any::<u32>(), d in any::<u64>(),
                          e in any::<i32>(), f in any::<u64>(), g in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut out = Vec::new();
        wire::put_u8(&mut out, a);
        wire::put_u16(&mut out, b);
        wire::put_u32(&mut out, c);
        wire::put_u64(&mut out, d);
        wire::put_i32(&mut out, e);
        wire::put_var(&mut out, f);
        wire::put_bytes(&mut out, &g);
        let mut i = &out[..];
        prop_assert_eq!(wire::get_u8(&mut i).unwrap(), a);
        prop_assert_eq!(wire::get_u16(&mut i).unwrap(), b);
        prop_assert_eq!(wire::get_u32(&mut i).unwrap(), c);
        prop_assert_eq!(wire::get_u64(&mut i).unwrap(), d);
        prop_assert_eq!(wire::get_i32(&mut i).unwrap(), e);
        prop_assert_eq!(wire::get_var(&mut i).unwrap(), f);
        prop_assert_eq!(wire::get_bytes(&mut i).unwrap(), &g[..]);
        prop_assert!(i.is_empty());
        prop_assert!(wire::get_u8(&mut i).is_err());
    }
}

/// Special floating-point bit patterns survive: NaN payloads (quiet and signalling),
/// negative zero, infinities, and `long double` values including the padding bytes.
#[test]
fn special_floats_are_bit_exact() {
    let f32s: [u32; 5] = [
        0x7fc0_1234,
        0x7f80_0001,
        0x8000_0000,
        0xff80_0000,
        0x0000_0001,
    ];
    let f64s: [u64; 4] = [
        0x7ff8_dead_beef_0001,
        0x7ff0_0000_0000_0001,
        0x8000_0000_0000_0000,
        0x000f_ffff_ffff_ffff,
    ];
    let f32_bytes: Vec<u8> = f32s.iter().flat_map(|x| x.to_ne_bytes()).collect();
    let f64_bytes: Vec<u8> = f64s.iter().flat_map(|x| x.to_ne_bytes()).collect();
    let ld = CType::LDouble.size();
    // x87 extended: pseudo-NaN, negative zero, unnormal, with non-zero padding bytes.
    let ld_bytes: Vec<u8> = (0..3 * ld)
        .map(|i| (i as u8).wrapping_mul(37) | 0x80)
        .collect();
    let rec = Record::new()
        .with_field("f", Value::from_bytes(CType::Float, 5, false, &f32_bytes))
        .with_field("d", Value::from_bytes(CType::Double, 4, false, &f64_bytes))
        .with_field("nz", Value::double(-0.0))
        .with_field("ld", Value::from_bytes(CType::LDouble, 3, false, &ld_bytes))
        .with_field(
            "lds",
            Value::from_bytes(CType::LDouble, 1, true, &ld_bytes[..ld]),
        );
    let back = round_trip(&mut PeerEncoder::new(), &mut PeerDecoder::new(), &rec);
    assert_identical(&rec, &back);
    let nz = back.field(Label::field("nz")).unwrap().as_ref().unwrap();
    assert!(nz.get_f64(0).unwrap().is_sign_negative());
    assert_eq!(
        back.field(Label::field("ld"))
            .unwrap()
            .as_ref()
            .unwrap()
            .bytes(),
        &ld_bytes[..]
    );
}

/// Every type as scalar, as an array, as an empty array; arrays of one element stay
/// arrays; NULL fields stay NULL.
#[test]
fn every_type_scalar_and_array() {
    let mut rec = Record::new();
    for t in CType::ALL.into_iter().filter(|t| *t != CType::Pointer) {
        let bytes: Vec<u8> = (0..4 * t.size()).map(|i| i as u8 ^ 0xA5).collect();
        rec.push_field(
            Label::field(&format!("s_{}", t.name())),
            Some(Value::from_bytes(t, 1, true, &bytes)),
        );
        rec.push_field(
            Label::field(&format!("a_{}", t.name())),
            Some(Value::from_bytes(t, 4, false, &bytes)),
        );
        rec.push_field(
            Label::field(&format!("one_{}", t.name())),
            Some(Value::from_bytes(t, 1, false, &bytes)),
        );
        rec.push_field(
            Label::field(&format!("e_{}", t.name())),
            Some(Value::alloc(t, 0, false)),
        );
    }
    rec.push_field(Label::field("null"), None);
    let back = round_trip(&mut PeerEncoder::new(), &mut PeerDecoder::new(), &rec);
    assert_identical(&rec, &back);
    let one = back
        .field(Label::field("one_int"))
        .unwrap()
        .as_ref()
        .unwrap();
    assert!(!one.is_scalar() && one.len() == 1);
    assert_eq!(back.field(Label::field("null")), Some(&None));
}

/// Labels are sent by name once per peer: the second record of the same shape is
/// shorter, and a second peer gets its own announcements.
#[test]
fn labels_are_announced_once_per_peer() {
    let rec = Record::new()
        .with_field("some_field", Value::int(1))
        .with_tag("some_tag", 2)
        .with_btag("some_btag", 3);
    let mut enc = PeerEncoder::new();
    let (mut first, mut second) = (Vec::new(), Vec::new());
    enc.encode_record(&rec, &mut first).unwrap();
    enc.encode_record(&rec, &mut second).unwrap();
    assert!(second.len() + "some_fieldsome_tagsome_btag".len() <= first.len());
    assert!(!second.windows(4).any(|w| w == b"some"));
    // A decoder that missed the first record cannot read the second.
    let mut input = &second[..];
    assert_eq!(
        PeerDecoder::new().decode_record(&mut input),
        Err(WireError::UnknownLabel { number: 1 })
    );
    // In order, both decode.
    let mut dec = PeerDecoder::new();
    for buf in [&first, &second] {
        let mut input = &buf[..];
        assert_identical(&rec, &dec.decode_record(&mut input).unwrap());
    }
    // Another peer's encoder announces again.
    let mut other = Vec::new();
    PeerEncoder::new().encode_record(&rec, &mut other).unwrap();
    assert_eq!(other, first);
}

/// Same-named labels of different kinds are different labels on the wire.
#[test]
fn kinds_stay_apart() {
    let rec = Record::new()
        .with_field("t", Value::int(5))
        .with_tag("t", 6)
        .with_btag("t", 7);
    let mut enc = PeerEncoder::new();
    let mut dec = PeerDecoder::new();
    let back = round_trip(&mut enc, &mut dec, &rec);
    assert_identical(&rec, &back);
    assert_eq!(dec.known_labels(), 3);
}

/// A pointer field is an error naming the label, and leaves buffer and encoder as they
/// were, so the stream stays usable.
#[test]
fn pointers_do_not_travel() {
    let mut enc = PeerEncoder::new();
    let mut dec = PeerDecoder::new();
    let ok = Record::new().with_field("a", Value::int(1));
    let bad = Record::new()
        .with_field("fresh", Value::int(2))
        .with_field("p", Value::alloc(CType::Pointer, 1, true));
    let mut buf = vec![9, 9];
    let e = enc.encode_record(&bad, &mut buf).unwrap_err();
    assert_eq!(e, WireError::Pointer { label: "p".into() });
    assert!(e.to_string().contains("field p"));
    assert_eq!(buf, [9, 9]);
    assert_eq!(enc.known_labels(), 0);
    let back = round_trip(&mut enc, &mut dec, &ok);
    assert_identical(&ok, &back);
    // A pointer type byte on the wire is refused too.
    let mut buf = Vec::new();
    enc.encode_record(&Record::new().with_field("q", Value::int(0)), &mut buf)
        .unwrap();
    let code_at = buf.len() - 7; // type byte, 4 value bytes, two empty tag lists
    assert_eq!(buf[code_at], CType::Int as u8);
    buf[code_at] = CType::Pointer as u8;
    let mut input = &buf[..];
    assert_eq!(
        dec.decode_record(&mut input),
        Err(WireError::BadType {
            code: CType::Pointer as u8
        })
    );
}

/// A 1 MiB field round-trips; an absurd element count in a short input is refused
/// before anything is allocated.
#[test]
fn large_fields_and_lying_counts() {
    let big: Vec<u8> = (0..1 << 20)
        .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let rec = Record::new().with_field(
        "big",
        Value::from_bytes(CType::UChar, big.len(), false, &big),
    );
    let mut out = Vec::new();
    PeerEncoder::new().encode_record(&rec, &mut out).unwrap();
    assert!(out.len() < big.len() + 64);
    // One reservation up front, no growth by doubling (which would also copy).
    assert!(
        out.capacity() < out.len() + 4096,
        "capacity {}",
        out.capacity()
    );
    let back = PeerDecoder::new().decode_record(&mut &out[..]).unwrap();
    assert_identical(&rec, &back);

    // header, 1 field, announce field "x", double array of 2^60 elements, 8 bytes.
    let mut lie = vec![1, 0, 0, 8, 16, 1, 0, 0, 1, b'x', 0x19];
    wire::put_var(&mut lie, 1 << 60);
    lie.extend_from_slice(&[0; 8]);
    assert!(matches!(
        PeerDecoder::new().decode_record(&mut &lie[..]),
        Err(WireError::Truncated { .. } | WireError::Overflow { .. })
    ));
    let mut lie = vec![1, 0, 0, 8, 16];
    wire::put_var(&mut lie, u64::MAX);
    assert!(PeerDecoder::new().decode_record(&mut &lie[..]).is_err());
}

/// Wrong version, foreign layout, misplaced and duplicate labels.
#[test]
fn header_and_label_errors() {
    let mut buf = Vec::new();
    PeerEncoder::new()
        .encode_record(&Record::new().with_tag("t", 1), &mut buf)
        .unwrap();
    let mut v2 = buf.clone();
    v2[0] = 2;
    assert_eq!(
        PeerDecoder::new().decode_record(&mut &v2[..]),
        Err(WireError::Version { found: 2 })
    );
    let mut foreign = buf.clone();
    foreign[2] ^= 0x80;
    assert!(matches!(
        PeerDecoder::new().decode_record(&mut &foreign[..]),
        Err(WireError::Layout { .. })
    ));
    // A tag announced in the field list.
    let mut misplaced = buf[..5].to_vec();
    misplaced.extend_from_slice(&[1, 0, 1, 1, b't', 0xFF, 0, 0]);
    assert_eq!(
        PeerDecoder::new().decode_record(&mut &misplaced[..]),
        Err(WireError::MisplacedLabel {
            label: "<t>".into()
        })
    );
    // The same tag twice (announced, then referenced as number 1).
    let mut dup = buf[..5].to_vec();
    dup.extend_from_slice(&[0, 2, 0, 1, 1, b't', 1, 0, 0, 0, 1, 2, 0, 0, 0, 0]);
    let mut dec = PeerDecoder::new();
    assert_eq!(
        dec.decode_record(&mut &dup[..]),
        Err(WireError::DuplicateLabel {
            label: "<t>".into()
        })
    );
    assert_eq!(dec.known_labels(), 0, "a failed record announces nothing");
}
