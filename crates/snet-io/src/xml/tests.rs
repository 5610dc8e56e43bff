use super::reader::CHUNK;
use super::*;
use crate::error::{InputError, InputErrorKind};
use proptest::prelude::*;
use snet_core::label::Label;
use snet_core::record::{DataMode, Record};
use snet_core::value::{CType, Value};

const HEAD: &str =
    r#"<record xmlns="snet-home.org" type="data" mode="textual" interface="C4SNet">"#;
const TERM: &str = r#"<record xmlns="snet-home.org" type="terminate"/>"#;

fn read(input: &str) -> Vec<Result<Record, InputError>> {
    XmlReader::new(input.as_bytes()).collect()
}

fn ok_records(input: &str) -> Vec<Record> {
    read(input)
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("unexpected error: {e}")))
        .collect()
}

fn one(input: &str) -> Record {
    let mut v = ok_records(input);
    assert_eq!(v.len(), 1, "{v:?}");
    v.remove(0)
}

fn single_error(input: &str) -> InputError {
    let v = read(input);
    let errs: Vec<_> = v.into_iter().filter_map(Result::err).collect();
    assert_eq!(errs.len(), 1, "{errs:?}");
    errs.into_iter().next().unwrap_or_else(|| unreachable!())
}

fn field(r: &Record, name: &str) -> Option<Value> {
    r.field(Label::field(name)).cloned().flatten()
}

// ----- the typical input of §11.2 -------------------------------------------------

#[test]
fn typical_input_of_the_spec() {
    let input = r#"<?xml version="1.0" encoding="ISO-8859-1" ?>
<record xmlns="snet-home.org" type="data" mode="textual" interface="C4SNet">
  <field label="A" >(int)10</field>
  <tag label="T" >2</tag>
</record>
<record xmlns="snet-home.org" type="terminate"/>
"#;
    let mut r = XmlReader::new(input.as_bytes());
    let rec = r.next().and_then(Result::ok).unwrap_or_default();
    assert_eq!(field(&rec, "A"), Some(Value::int(10)));
    assert_eq!(rec.tag(Label::tag("T")), Some(2));
    assert_eq!(rec.mode, DataMode::Textual);
    assert!(r.next().is_none());
    assert!(r.terminated());
    assert_eq!(r.records_seen(), 2);
}

// ----- rule 1: junk, declarations, comments ----------------------------------------

#[test]
fn rule1_junk_declarations_and_comments_are_skipped() {
    let input = format!(
        "garbage text <foo>bar</foo> </record> <?xml version='1.0'?>\n<!-- <record type=\"data\"/> -->\
         <?xml version=\"1.0\" ?>{HEAD}<!-- inside --> junk <tag label=\"t\">1</tag>\n more junk </record>\
         <records> <recordx/> <!-- c --> <?xml version=\"1.0\" standalone=\"yes\"?>{HEAD}<tag label=\"t\">2</tag></record>{TERM}"
    );
    let recs = ok_records(&input);
    let ts: Vec<_> = recs.iter().map(|r| r.tag(Label::tag("t"))).collect();
    assert_eq!(ts, vec![Some(1), Some(2)]);
}

// ----- rule 2: xmlns -----------------------------------------------------------------

#[test]
fn rule2_wrong_namespace_is_fatal_and_absent_is_fine() {
    let e = single_error(&format!(
        r#"<record xmlns="example.org" type="data" mode="textual"/>{HEAD}</record>"#
    ));
    assert!(e.is_fatal());
    assert!(matches!(e.kind, InputErrorKind::Namespace(ref n) if n == "example.org"));
    assert_eq!(e.record, 1);
    let r = one(r#"<record type="data" mode="textual"><tag label="a">1</tag></record>"#);
    assert_eq!(r.tag(Label::tag("a")), Some(1));
}

// ----- rule 3: type --------------------------------------------------------------------

#[test]
fn rule3_type_is_required_and_unknown_types_are_discarded() {
    let input = format!(
        r#"<record mode="textual"><tag label="a">1</tag></record>
<record type="dta" mode="textual"><tag label="a">2</tag></record>
{HEAD}<tag label="a">3</tag></record>"#
    );
    let v = read(&input);
    assert_eq!(v.len(), 3);
    let e0 = v[0].as_ref().err().map(|e| (e.record, e.is_fatal()));
    assert_eq!(e0, Some((1, false)));
    assert!(matches!(
        v[0].as_ref().err().map(|e| &e.kind),
        Some(InputErrorKind::MissingType)
    ));
    assert!(matches!(
        v[1].as_ref().err().map(|e| &e.kind),
        Some(InputErrorKind::UnknownType(t)) if t == "dta"
    ));
    assert_eq!(
        v[2].as_ref().ok().and_then(|r| r.tag(Label::tag("a"))),
        Some(3)
    );
}

#[test]
fn rule3_nothing_after_terminate_is_read() {
    let input = format!("{HEAD}</record>{TERM}{HEAD}</record> <record broken");
    let mut r = XmlReader::new(input.as_bytes());
    assert!(matches!(r.next(), Some(Ok(_))));
    assert!(r.next().is_none());
    assert!(r.next().is_none());
    assert!(r.terminated());
    // A terminate record with a body: reading stops right after its start tag.
    let input = "<record type=\"terminate\"><field label=\"x\"/></record>";
    assert!(read(input).is_empty());
}

#[test]
fn rule3_reserved_types_are_fatal() {
    for t in ["collect", "sort_begin", "sort_end", "trigger_initializer"] {
        let input = format!("<record type=\"{t}\"/>{HEAD}</record>");
        let v = read(&input);
        assert_eq!(v.len(), 1, "{t}: reading stops");
        let e = v.into_iter().next().and_then(Result::err);
        assert!(e.as_ref().is_some_and(InputError::is_fatal), "{t}");
        assert!(matches!(e.map(|e| e.kind), Some(InputErrorKind::ReservedType(x)) if x == t));
    }
}

// ----- rule 4: mode ----------------------------------------------------------------------

#[test]
fn rule4_absent_mode_is_binary_and_binary_fields_are_fatal() {
    let input = r#"<record type="data" interface="C4SNet"><field label="A">AAAAAAAAAA==</field></record><record type="data" mode="textual"/>"#;
    let v = read(input);
    assert_eq!(v.len(), 1);
    let e = v.into_iter().next().and_then(Result::err);
    assert!(e.as_ref().is_some_and(InputError::is_fatal));
    let msg = e.as_ref().map(ToString::to_string).unwrap_or_default();
    assert!(
        msg.contains("binary") && msg.contains("mode=\"textual\""),
        "{msg}"
    );
    assert!(
        matches!(e.map(|e| e.kind), Some(InputErrorKind::BinaryUnsupported { label }) if label == "A")
    );
    let e = single_error(
        r#"<record type="data" mode="binary" interface="C4SNet"><field label="B">x</field></record>"#,
    );
    assert!(e.is_fatal());
}

#[test]
fn rule4_tag_only_binary_records_are_accepted() {
    let r = one(r#"<record type="data"><tag label="T">5</tag><btag label="b">6</btag></record>"#);
    assert_eq!(r.mode, DataMode::Binary);
    assert_eq!(r.tag(Label::tag("T")), Some(5));
    assert_eq!(r.tag(Label::btag("b")), Some(6));
    let r = one(r#"<record type="data" mode="binary"/>"#);
    assert_eq!(r.mode, DataMode::Binary);
    assert!(r.is_empty());
}

#[test]
fn rule4_unknown_mode_is_discarded() {
    let e = single_error(r#"<record type="data" mode="text"/>"#);
    assert!(!e.is_fatal());
    assert!(matches!(e.kind, InputErrorKind::UnknownMode(ref m) if m == "text"));
}

// ----- rule 5: interface ---------------------------------------------------------------

#[test]
fn rule5_interfaces() {
    // the field's interface becomes the record's
    let r = one(
        r#"<record type="data" mode="textual"><field label="a" interface="C4SNet">(int)1</field><field label="b">(int)2</field></record>"#,
    );
    assert_eq!(field(&r, "b"), Some(Value::int(2)));
    // a field with no interface anywhere
    let e = single_error(
        r#"<record type="data" mode="textual"><field label="a">(int)1</field></record>"#,
    );
    assert!(matches!(e.kind, InputErrorKind::NoInterface { ref label } if label == "a"));
    assert!(!e.is_fatal());
    // mismatch between record and field
    let e = single_error(&format!(
        r#"{HEAD}<field label="a" interface="SAC4SNet">(int)1</field></record>"#
    ));
    assert!(matches!(e.kind, InputErrorKind::InterfaceMismatch { .. }));
    // mismatch between first and second field
    let e = single_error(
        r#"<record type="data" mode="textual"><field label="a" interface="C4SNet">(int)1</field><field label="b" interface="X">(int)2</field></record>"#,
    );
    assert!(matches!(e.kind, InputErrorKind::InterfaceMismatch { .. }));
    // unsupported interfaces
    let e = single_error(r#"<record type="data" mode="textual" interface="SAC4SNet"/>"#);
    assert!(matches!(e.kind, InputErrorKind::UnsupportedInterface(ref i) if i == "SAC4SNet"));
    let e = single_error(
        r#"<record type="data" mode="textual"><field label="a" interface="SAC4SNet">(int)1</field></record>"#,
    );
    assert!(matches!(e.kind, InputErrorKind::UnsupportedInterface(_)));
    // [REF-DEVIATION] tag-only records without interface are accepted
    let r = one(r#"<record type="data" mode="textual"><tag label="t">3</tag></record>"#);
    assert_eq!(r.tag(Label::tag("t")), Some(3));
}

// ----- rule 6: fields ----------------------------------------------------------------

#[test]
fn rule6_field_values() {
    let r = one(&format!(
        "{HEAD}<field label=\"s\">(char[3])a,,,b</field><field label=\"d\" >(double[2])1.5, 2e1 trailing junk</field>\
         <field label='x'>(int)7   \n</field ></record>"
    ));
    assert_eq!(
        field(&r, "s").map(|v| v.bytes().to_vec()),
        Some(b"a,b".to_vec())
    );
    assert_eq!(
        field(&r, "d").and_then(|v| v.to_f64_vec()),
        Some(vec![1.5, 20.0])
    );
    assert_eq!(field(&r, "x").and_then(|v| v.as_i32()), Some(7));
    // the value starts immediately after `>` (char values keep leading blanks)
    let r = one(&format!(
        "{HEAD}<field label=\"c\">(char[2]) ,x</field></record>"
    ));
    assert_eq!(
        field(&r, "c").map(|v| v.bytes().to_vec()),
        Some(b" x".to_vec())
    );
    let e = single_error(&format!(
        "{HEAD}<field label=\"c\"> (int)1</field></record>"
    ));
    assert!(matches!(e.kind, InputErrorKind::Value { .. }));
}

#[test]
fn rule6_a_char_element_may_be_a_raw_less_than() {
    // Spec §12.6 reading rule 5: an element is any one byte, followed immediately by
    // `,` or by the `<` of `</field>`.
    let r = one(&format!(
        "{HEAD}<field label=\"s\">(char[3])a,<,b</field><field label=\"t\">(char)<</field>\
         <field label=\"u\">(unsigned char[2])<,<</field></record>"
    ));
    let bytes = |l| field(&r, l).map(|v| v.bytes().to_vec());
    assert_eq!(bytes("s"), Some(b"a<b".to_vec()));
    assert_eq!(bytes("t"), Some(b"<".to_vec()));
    assert_eq!(bytes("u"), Some(b"<<".to_vec()));
    // Not before `</field>`: the first reading's error stands.
    let e = single_error(&format!(
        "{HEAD}<field label=\"s\">(char[2])a,<x</field></record>"
    ));
    assert!(matches!(e.kind, InputErrorKind::Value { .. }), "{e}");
    // Other types still end at the first `<`.
    let e = single_error(&format!(
        "{HEAD}<field label=\"a\">(int[2])1,<</field></record>"
    ));
    assert!(matches!(e.kind, InputErrorKind::Value { .. }), "{e}");
}

#[test]
fn rule6_label_is_required_and_empty_fields_are_fatal() {
    let e = single_error(&format!("{HEAD}<field>(int)1</field></record>"));
    assert!(matches!(e.kind, InputErrorKind::MissingLabel("field")));
    assert!(!e.is_fatal());
    let v = read(&format!(
        "{HEAD}<field label=\"a\"/></record>{HEAD}</record>"
    ));
    assert_eq!(v.len(), 1);
    let e = v.into_iter().next().and_then(Result::err);
    assert!(e.as_ref().is_some_and(InputError::is_fatal));
    assert!(
        matches!(e.map(|e| e.kind), Some(InputErrorKind::FieldWithoutValue { label }) if label == "a")
    );
}

#[test]
fn rule6_bad_values_report_offset_and_label() {
    let input = format!("{HEAD}<field label=\"a\">(int[2])1;2</field></record>");
    let e = single_error(&input);
    let at = input.find("(int[2])").unwrap_or(0) + "(int[2])1".len();
    assert_eq!(e.offset, at as u64);
    let msg = e.to_string();
    assert!(
        msg.contains("input record 1") && msg.contains("field a"),
        "{msg}"
    );
    let e = single_error(&format!("{HEAD}<field label=\"a\">(int)1</flied></record>"));
    assert!(matches!(e.kind, InputErrorKind::Syntax(ref m) if m.contains("</field>")));
}

// ----- rule 7: tags ------------------------------------------------------------------

#[test]
fn rule7_tags_are_read_like_atoi() {
    let r = one(&format!(
        "{HEAD}<tag label=\"a\">  -12xyz</tag><tag label=\"b\"/><tag label=\"c\"></tag>\
         <tag label=\"d\">abc</tag><tag label=\"e\" interface=\"C4SNet\">+7</tag>\
         <tag label=\"f\">4294967297</tag><tag label=\"g\">\n 3 </tag><btag label=\"h\">-0</btag></record>"
    ));
    let t = |n| r.tag(Label::tag(n));
    assert_eq!(
        [t("a"), t("b"), t("c"), t("d"), t("e"), t("f"), t("g")],
        [
            Some(-12),
            Some(0),
            Some(0),
            Some(0),
            Some(7),
            Some(1),
            Some(3)
        ]
    );
    assert_eq!(r.tag(Label::btag("h")), Some(0));
    assert_eq!(atoi(b"99999999999999999999"), -1);
    assert_eq!(atoi(b"-99999999999999999999"), 0);
    assert_eq!(atoi(b"2147483648"), i32::MIN);
    let e = single_error(&format!("{HEAD}<tag label=\"a\">1</btag></record>"));
    assert!(matches!(e.kind, InputErrorKind::Syntax(_)));
    let e = single_error(&format!("{HEAD}<btag>1</btag></record>"));
    assert!(matches!(e.kind, InputErrorKind::MissingLabel("btag")));
}

// ----- rules 8, 9 --------------------------------------------------------------------

#[test]
fn rule8_unknown_labels_are_carried_and_rule9_last_value_wins() {
    let r = one(&format!(
        "{HEAD}<field label=\"neverSeenBefore\">(int)1</field><tag label=\"x\">1</tag>\
         <field label=\"q\">(int)5</field><tag label=\"x\">2</tag><field label=\"neverSeenBefore\">(int)3</field></record>"
    ));
    assert_eq!(field(&r, "neverSeenBefore"), Some(Value::int(3)));
    assert_eq!(r.tag(Label::tag("x")), Some(2));
    assert_eq!(r.fields().len(), 2);
    assert_eq!(
        r.fields()[0].0,
        Label::field("neverSeenBefore"),
        "position kept"
    );
    // fields, tags and binding tags are separate namespaces
    let r = one(&format!(
        "{HEAD}<field label=\"n\">(int)1</field><tag label=\"n\">2</tag><btag label=\"n\">3</btag></record>"
    ));
    assert_eq!(r.len(), 3);
}

// ----- rule 10: streaming --------------------------------------------------------------

/// A source that hands out its chunks one `read` at a time and counts the reads.
struct Chunks {
    chunks: Vec<Vec<u8>>,
    next: usize,
}

impl std::io::Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(c) = self.chunks.get(self.next) else {
            return Ok(0);
        };
        assert!(c.len() <= buf.len());
        buf[..c.len()].copy_from_slice(c);
        self.next += 1;
        Ok(c.len())
    }
}

#[test]
fn rule10_records_are_yielded_as_soon_as_they_are_complete() {
    let first = format!("{HEAD}<tag label=\"t\">1</tag></record>");
    let chunks = Chunks {
        chunks: vec![
            first.as_bytes()[..10].to_vec(),
            first.as_bytes()[10..].to_vec(),
            format!("{HEAD}<tag label=\"t\">2</tag>").into_bytes(),
            b"</record>".to_vec(),
            TERM.as_bytes().to_vec(),
        ],
        next: 0,
    };
    let mut r = XmlReader::new(chunks);
    assert!(matches!(r.next(), Some(Ok(_))));
    // Only the two chunks holding the first record were read (a pipe would block on
    // the third).
    assert_eq!(r.get_ref().next, 2);
    assert!(matches!(r.next(), Some(Ok(_))));
    assert_eq!(r.get_ref().next, 4);
    assert!(r.next().is_none());
    assert!(r.terminated());
    assert_eq!(r.into_inner().next, 5);
}

// ----- rules 11, 12 --------------------------------------------------------------------

#[test]
fn rule11_resynchronises_after_bad_records() {
    let input = format!(
        "{HEAD}<tag label=\"t\">1</tag></record>\
         {HEAD}<field label=\"a\">(nonsense)1</field><tag label=\"t\">99</tag></record>\
         {HEAD}<tag label=\"t\" value>2</tag></record>\
         {HEAD}<tag label=\"t\">3</tag>\
         {HEAD}<tag label=\"t\">4</tag><bogus/></record>\
         {HEAD}<tag label=\"t\">5</tag></record>{TERM}"
    );
    let v = read(&input);
    let summary: Vec<Result<Option<i32>, u64>> = v
        .iter()
        .map(|r| match r {
            Ok(r) => Ok(r.tag(Label::tag("t"))),
            Err(e) => {
                assert!(!e.is_fatal(), "{e}");
                Err(e.record)
            }
        })
        .collect();
    // record 4 lacks </record>: reading resumes at record 5, which has a bogus element.
    assert_eq!(
        summary,
        vec![Ok(Some(1)), Err(2), Err(3), Err(4), Err(5), Ok(Some(5))]
    );
}

#[test]
fn rule12_end_of_input_without_terminate_ends_reading() {
    let input = format!("{HEAD}</record>\n  ");
    let mut r = XmlReader::new(input.as_bytes());
    assert!(matches!(r.next(), Some(Ok(_))));
    assert!(r.next().is_none());
    assert!(!r.terminated());
    // a record cut off by the end of input is an error, then the input ends
    let v = read(&format!("{HEAD}<tag label=\"t\">1</tag>"));
    assert_eq!(v.len(), 1);
    assert!(v[0].as_ref().is_err_and(|e| !e.is_fatal()));
    assert!(read("").is_empty());
    assert!(read("<record").is_empty());
}

#[test]
fn long_junk_and_comments_take_bounded_memory() {
    let mut input = "x".repeat(1 << 20);
    input.push_str("<!--");
    input.push_str(&"y".repeat(1 << 20));
    input.push_str("--><?xml ");
    input.push_str(&"z".repeat(1 << 20));
    input.push_str("?>");
    input.push_str(&format!("{HEAD}<tag label=\"t\">1</tag></record>"));
    input.push_str(&"w".repeat(1 << 20));
    let mut r = XmlReader::new(input.as_bytes());
    assert!(matches!(r.next(), Some(Ok(_))));
    assert!(r.buffered() < 4 * 65536, "{}", r.buffered());
    assert!(r.next().is_none());
    assert!(r.buffered() < 4 * 65536, "{}", r.buffered());
    assert_eq!(r.offset(), input.len() as u64);
}

#[test]
fn attributes_take_either_quote_and_white_space() {
    let r = one("<record\n type = 'data'\tmode=\"textual\" interface='C4SNet' ><field label = 'a' >(int)1</field></record>");
    assert_eq!(field(&r, "a"), Some(Value::int(1)));
    let e = single_error("<record type=data mode=\"textual\"/>");
    assert!(matches!(e.kind, InputErrorKind::Syntax(ref m) if m.contains("quoted")));
    let e = single_error("<record type=\"data\" mode=\"textual />");
    assert!(matches!(e.kind, InputErrorKind::Syntax(ref m) if m.contains("unterminated")));
}

#[test]
fn io_errors_are_fatal() {
    struct Failing;
    impl std::io::Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    let v: Vec<_> = XmlReader::new(Failing).collect();
    assert_eq!(v.len(), 1);
    let e = v.into_iter().next().and_then(Result::err);
    assert!(e.as_ref().is_some_and(InputError::is_fatal));
    assert!(e
        .map(|e| e.to_string())
        .unwrap_or_default()
        .contains("disk on fire"));
}

// ----- writer --------------------------------------------------------------------------

#[test]
fn writer_output_is_byte_exact() {
    let rec = Record::new()
        .with_field("A", Value::int(10))
        .with_field("s", Value::string("Done."))
        .with_field("d", Value::double(2.5))
        .with_tag("T", 2)
        .with_tag("N", -7)
        .with_btag("b", 1);
    let mut w = XmlWriter::new(Vec::new());
    w.write_record(&rec).unwrap();
    w.write_record(&Record::new()).unwrap();
    let out = w.finish().unwrap();
    let want = "<?xml version=\"1.0\" ?>\n\
<record xmlns=\"snet-home.org\" type=\"data\" mode=\"textual\" >\n\
<field label=\"A\" interface=\"C4SNet\">(int)10</field>\n\
<field label=\"s\" interface=\"C4SNet\">(char[5])D,o,n,e,.</field>\n\
<field label=\"d\" interface=\"C4SNet\">(double)2.50000000000000000000000000000000e+00</field>\n\
<tag label=\"T\">2</tag>\n\
<tag label=\"N\">-7</tag>\n\
<btag label=\"b\">1</btag>\n\
</record>\n\
<?xml version=\"1.0\" ?>\n\
<record xmlns=\"snet-home.org\" type=\"data\" mode=\"textual\" >\n\
</record>\n\
<?xml version=\"1.0\" ?>\n\
<record type=\"terminate\" />\n";
    assert_eq!(String::from_utf8(out).unwrap(), want);
}

#[test]
fn writer_matches_the_reference_expected_output_file_layout() {
    // The layout of examples/tests/C/initbox/input style expected files (spec §11.3).
    let rec = Record::new()
        .with_field("x", Value::int(1))
        .with_tag("i", 0);
    let mut w = XmlWriter::new(Vec::new());
    w.write_record(&rec).unwrap();
    let out = String::from_utf8(w.finish().unwrap()).unwrap();
    assert_eq!(
        out,
        "<?xml version=\"1.0\" ?>\n<record xmlns=\"snet-home.org\" type=\"data\" mode=\"textual\" >\n<field label=\"x\" interface=\"C4SNet\">(int)1</field>\n<tag label=\"i\">0</tag>\n</record>\n<?xml version=\"1.0\" ?>\n<record type=\"terminate\" />\n"
    );
}

#[test]
fn writer_binary_mode_and_null_fields() {
    let mut rec = Record::new().with_tag("t", 1);
    rec.mode = DataMode::Binary;
    let mut w = XmlWriter::new(Vec::new());
    w.write_record(&rec).unwrap();
    let mut with_field = rec.clone().with_field("a", Value::int(1));
    with_field.mode = DataMode::Binary;
    w.write_record(&with_field).unwrap();
    let mut null = Record::new().with_tag("t", 1);
    null.set_field(Label::field("probe"), None);
    let e = w
        .write_record(&null)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("probe") && e.contains("NULL"), "{e}");
    let out = String::from_utf8(w.finish().unwrap()).unwrap();
    assert!(
        out.contains("mode=\"binary\" >\n<tag label=\"t\">1</tag>"),
        "{out}"
    );
    assert!(
        out.contains("mode=\"textual\" >\n<field label=\"a\""),
        "{out}"
    );
    assert!(
        !out.contains("probe"),
        "nothing of the failed record is written"
    );
}

#[test]
fn writer_flushes_each_record_unless_told_otherwise() {
    #[derive(Default)]
    struct Counting {
        data: Vec<u8>,
        flushes: usize,
    }
    impl std::io::Write for Counting {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.data.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.flushes += 1;
            Ok(())
        }
    }
    let rec = Record::new().with_tag("t", 1);
    let mut w = XmlWriter::new(Counting::default());
    w.write_record(&rec).unwrap();
    w.write_record(&rec).unwrap();
    let c = w.finish().unwrap();
    assert_eq!(c.flushes, 3);
    let mut w = XmlWriter::new(Counting::default());
    w.set_flush_each_record(false);
    w.write_record(&rec).unwrap();
    w.write_record(&rec).unwrap();
    let c = w.finish().unwrap();
    assert_eq!(c.flushes, 1);
    assert_eq!(ok_records(&String::from_utf8_lossy(&c.data)).len(), 2);
}

#[test]
fn written_output_reads_back_and_compares_equal() {
    let recs = vec![
        Record::new()
            .with_field("A", Value::int(10))
            .with_tag("T", 2),
        Record::new().with_field("s", Value::string("a<b&c>d,e")),
    ];
    let mut w = XmlWriter::new(Vec::new());
    for r in &recs {
        w.write_record(r).unwrap();
    }
    let out = String::from_utf8(w.finish().unwrap()).unwrap();
    assert_eq!(ok_records(&out), recs);
    assert_eq!(crate::compare_outputs(&out, &out, true), Ok(()));
}

// ----- property tests --------------------------------------------------------------------

fn arb_value() -> impl Strategy<Value = Value> {
    (
        0usize..12,
        0usize..5,
        any::<bool>(),
        proptest::collection::vec(any::<u8>(), 80),
    )
        .prop_map(|(t, n, scalar, seed)| {
            let ctype = CType::ALL[t];
            let n = if scalar { 1 } else { n };
            let size = ctype.size();
            let mut bytes: Vec<u8> = seed.iter().copied().cycle().take(n * size).collect();
            for e in bytes.chunks_exact_mut(size) {
                match ctype {
                    CType::Float => {
                        let x = f32::from_ne_bytes([e[0], e[1], e[2], e[3]]);
                        let x = if x.is_finite() && x.abs() > 1e-20 {
                            x
                        } else {
                            -3.5
                        };
                        e.copy_from_slice(&x.to_ne_bytes());
                    }
                    CType::Double => {
                        let mut a = [0u8; 8];
                        a.copy_from_slice(e);
                        if f64::from_ne_bytes(a).is_nan() {
                            e.copy_from_slice(&0.25f64.to_ne_bytes());
                        }
                    }
                    CType::LDouble => {
                        e[7] |= 0x80;
                        e[9] &= 0xbf;
                        // Exponent 0 with the integer bit set is a pseudo-denormal, an
                        // encoding no arithmetic produces: it reads back as the equal
                        // normal number with exponent 1, so its bits cannot round-trip.
                        if e[8] == 0 && e[9] & 0x7f == 0 {
                            e[8] = 1;
                        }
                        e[10..].fill(0);
                    }
                    _ => {}
                }
            }
            Value::from_bytes(ctype, n, scalar, &bytes)
        })
}

fn arb_record() -> impl Strategy<Value = Record> {
    let name = "[a-zA-Z_][a-zA-Z0-9_]{0,6}";
    (
        proptest::collection::vec((name, arb_value()), 0..4),
        proptest::collection::vec((name, any::<i32>()), 0..4),
        proptest::collection::vec((name, any::<i32>()), 0..3),
    )
        .prop_map(|(fields, tags, btags)| {
            let mut r = Record::new();
            for (n, v) in fields {
                r.set_field(Label::field(&n), Some(v));
            }
            for (n, v) in tags {
                r.set_tag(Label::tag(&n), v);
            }
            for (n, v) in btags {
                r.set_tag(Label::btag(&n), v);
            }
            r
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn records_survive_an_xml_round_trip(recs in proptest::collection::vec(arb_record(), 0..5)) {
        let mut w = XmlWriter::new(Vec::new());
        for r in &recs {
            w.write_record(r).unwrap();
        }
        let out = w.finish().unwrap();
        let back: Vec<Record> = XmlReader::new(out.as_slice())
            .map(|r| r.map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()
            .map_err(TestCaseError::fail)?;
        prop_assert_eq!(&back, &recs);
        // and through JSON lines
        let mut w = crate::JsonWriter::new(Vec::new());
        for r in &recs {
            w.write_record(r).unwrap();
        }
        let out = w.finish().unwrap();
        let back: Vec<Record> = crate::JsonReader::new(out.as_slice())
            .map(|r| r.map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()
            .map_err(TestCaseError::fail)?;
        prop_assert_eq!(back, recs);
    }

    #[test]
    fn reading_byte_by_byte_gives_the_same_results(
        recs in proptest::collection::vec(arb_record(), 0..3),
        junk in "[<>/=\"' a-z()\\[\\],0-9&;!?-]{0,20}",
        cut in 0usize..400,
    ) {
        let mut w = XmlWriter::new(Vec::new());
        for r in &recs {
            w.write_record(r).unwrap();
        }
        let mut input = w.finish().unwrap();
        let cut = cut.min(input.len());
        input.splice(cut..cut, junk.bytes());
        let show = |it: Vec<Result<Record, InputError>>| -> Vec<String> {
            it.into_iter()
                .map(|r| match r {
                    Ok(r) => format!("{r:?}"),
                    Err(e) => format!("{e}"),
                })
                .collect()
        };
        let whole = show(XmlReader::new(input.as_slice()).collect());
        let bytewise = show(
            XmlReader::new(Chunks {
                chunks: input.iter().map(|&b| vec![b]).collect(),
                next: 0,
            })
            .collect(),
        );
        prop_assert_eq!(whole, bytewise);
    }

    #[test]
    fn random_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..300)) {
        let n = XmlReader::new(b.as_slice()).take(1000).count();
        prop_assert!(n <= b.len() + 1);
        let _ = crate::JsonReader::new(b.as_slice()).take(1000).count();
        let _ = crate::parse_output(&String::from_utf8_lossy(&b));
    }

    #[test]
    fn mangled_records_never_panic_and_later_records_survive(
        cut in 0usize..200,
        junk in "[<>/=\"' a-z()\\[\\],0-9&;!?-]{0,30}",
    ) {
        let good = format!("{HEAD}<field label=\"a\">(int[2])1,2</field><tag label=\"t\">3</tag></record>");
        let cut = cut.min(good.len());
        let input = format!("{}{junk}{good}{TERM}", &good[..cut]);
        let items: Vec<_> = XmlReader::new(input.as_bytes()).collect();
        // The last item is always the intact record, unless the junk is fatal or
        // swallowed it.
        if !items.iter().any(|r| r.as_ref().is_err_and(InputError::is_fatal)) {
            let last_ok = items.iter().rev().find_map(|r| r.as_ref().ok());
            if !junk.contains("<!--") && !junk.contains("<?xml") && !junk.contains('\'') && !junk.contains('"') {
                prop_assert!(last_ok.is_some_and(|r| r.tag(Label::tag("t")) == Some(3)), "{items:?}");
            }
        }
    }
}

// ----- positions (found by tools/fuzz_records.py) ------------------------------------

/// 1-based line and byte column of byte `offset` of `text`.
fn line_col_of(text: &str, offset: usize) -> (u64, u64) {
    let before = &text[..offset];
    let line = before.matches('\n').count() as u64 + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, (offset - start + 1) as u64)
}

#[test]
fn errors_name_line_and_column() {
    let input = "<?xml version=\"1.0\"?>\n\n  <record type=\"datum\"/>\n";
    let e = single_error(input);
    assert_eq!((e.line, e.column), line_col_of(input, e.offset as usize));
    assert_eq!(e.line, 3);
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("input record 1 (line 3, column {}", e.column)),
        "{msg}"
    );
}

/// A record that a new `<record` interrupts is reported where it starts, and the
/// message says where the new one starts (the user looks for the unclosed record, not
/// for the next one, which is read).
#[test]
fn an_unclosed_record_is_reported_where_it_starts() {
    let input = format!(
        "{HEAD}<tag label=\"t\">1</tag></record>\n\
         <record type=\"data\" mode=\"textual\"><tag label=\"a\">1</tag>\n\
         {HEAD}<tag label=\"t\">3</tag></record>\n"
    );
    let v = read(&input);
    assert_eq!(v.len(), 3, "{v:?}");
    assert!(v[0].is_ok() && v[2].is_ok(), "{v:?}");
    let e = v[1].as_ref().expect_err("record 2 is malformed");
    let second = input.find("\n").unwrap_or(0) + 1;
    let third = second + input[second..].find("\n").unwrap_or(0) + 1;
    assert_eq!((e.record, e.line, e.column), (2, 2, 1));
    assert_eq!(e.offset, second as u64);
    assert_eq!(
        e.to_string(),
        format!(
            "input record 2 (line 2, column 1, byte {second}): a new <record> starts at \
             line 3, column 1 (byte {third}) before its </record>"
        )
    );
}

#[test]
fn a_record_the_input_ends_in_is_reported_where_it_starts() {
    let input = format!(
        "{HEAD}<tag label=\"t\">1</tag></record>\n\
         <record type=\"data\" mode=\"textual\"><tag label=\"a\">1</tag>\n"
    );
    let v = read(&input);
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(v[0].is_ok(), "{v:?}");
    let e = v[1].as_ref().expect_err("record 2 has no end");
    let second = input.find('\n').unwrap_or(0) + 1;
    assert_eq!((e.record, e.line, e.column), (2, 2, 1));
    assert_eq!(e.offset, second as u64);
    assert_eq!(
        e.to_string(),
        format!(
            "input record 2 (line 2, column 1, byte {second}): end of input at line 3, \
             column 1 inside the record (missing </record>)"
        )
    );
}

/// Positions stay right after the reader has dropped consumed input (it keeps at most
/// a few chunks of 64 KiB).
#[test]
fn error_positions_survive_buffer_compaction() {
    let good = format!("{HEAD}<tag label=\"t\">1</tag>\n</record>\n");
    let mut input = good.repeat(3 * CHUNK / good.len() + 7);
    input.push_str("   <record type=\"data\" mode=\"textual\"><tag label=\"t\">1</tga></record>\n");
    input.push_str(&good);
    let v = read(&input);
    let errs: Vec<_> = v.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(errs.len(), 1);
    let e = errs[0];
    assert_eq!((e.line, e.column), line_col_of(&input, e.offset as usize));
    assert!(e.line > 3 * CHUNK as u64 / good.len() as u64, "{e}");
}

/// A comment or XML declaration between records that is never closed swallows the rest
/// of the input: that is reported (fatal, with where it starts), not silently ignored.
#[test]
fn unterminated_comment_or_declaration_is_reported() {
    for (open, at) in [("<!-- no end", "<!--"), ("<?xml version=\"1.0\"", "<?xml")] {
        let good = format!("{HEAD}<tag label=\"t\">1</tag></record>\n");
        let input = format!("{good}  {open}\n{good}{TERM}\n");
        let v = read(&input);
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(v[0].is_ok());
        let e = v[1].as_ref().err().unwrap_or_else(|| unreachable!());
        assert!(e.is_fatal(), "{e}");
        assert!(
            matches!(e.kind, InputErrorKind::Unterminated { what, line: 2, column: 3 } if what == at),
            "{e}"
        );
        assert!(e.to_string().contains("line 2, column 3"), "{e}");
    }
    // The same inside a record: the record is discarded and the end of input reported.
    let input = format!("{HEAD}<!-- x </record>\n{HEAD}<tag label=\"t\">1</tag></record>\n");
    let v = read(&input);
    assert!(v.iter().all(Result::is_err), "{v:?}");
    assert!(v
        .last()
        .is_some_and(|r| r.as_ref().is_err_and(InputError::is_fatal)));
}

/// Positions of errors that come before the last position asked for (the line cursor
/// moves backwards) and of errors on a long first line.
#[test]
fn error_positions_in_any_order() {
    let bad = "<record type=\"datum\"/>";
    let input = format!("{}{bad}\n\n{bad} {bad}\n", " ".repeat(2 * CHUNK + 5));
    let errs: Vec<_> = read(&input).into_iter().filter_map(Result::err).collect();
    assert_eq!(errs.len(), 3);
    for e in &errs {
        assert_eq!(
            (e.line, e.column),
            line_col_of(&input, e.offset as usize),
            "{e}"
        );
    }
}

// ----- the canonical start tags (read without the attribute parser) ----------------

/// The canonical tags every writer produces and spellings of the same record that the
/// general attribute parser reads (white space, quotes, order, repeated interface)
/// give the same record; a canonical-looking field without any interface is still an
/// error, and so is one in binary mode.
#[test]
fn canonical_and_general_start_tags_read_alike() {
    let canonical = concat!(
        r#"<record xmlns="snet-home.org" type="data" mode="textual" interface="C4SNet">"#,
        r#"<field label="A">(int)5</field><field label="B" interface="C4SNet">(int)6</field>"#,
        r#"<tag label="T">3</tag><btag label="K">-2</btag></record>"#
    );
    let general = concat!(
        r#"<record  mode='textual' type="data" interface="C4SNet" xmlns="snet-home.org" >"#,
        r#"<field label = "A" >(int)5</field><field interface="C4SNet" label="B">(int)6</field>"#,
        r#"<tag label='T' >3</tag><btag label="K" >-2</btag></record>"#
    );
    let a = one(canonical);
    assert_eq!(a, one(general));
    assert_eq!(field(&a, "A").and_then(|v| v.get_i32(0)), Some(5));
    assert_eq!(field(&a, "B").and_then(|v| v.get_i32(0)), Some(6));
    assert_eq!(a.tag(Label::tag("T")), Some(3));
    assert_eq!(a.tag(Label::btag("K")), Some(-2));
    // The record does not name its interface; a field that names it makes the next
    // fields fine, and a record where none does is an error naming the field.
    let r = one(concat!(
        r#"<record xmlns="snet-home.org" type="data" mode="textual">"#,
        r#"<field label="A" interface="C4SNet">(int)5</field><field label="B">(int)6</field></record>"#
    ));
    assert_eq!(field(&r, "B").and_then(|v| v.get_i32(0)), Some(6));
    let e = single_error(concat!(
        r#"<record xmlns="snet-home.org" type="data" mode="textual">"#,
        r#"<field label="a">(int)5</field></record>"#
    ));
    assert!(matches!(e.kind, InputErrorKind::NoInterface { ref label } if label == "a"));
    let e = single_error(concat!(
        r#"<record xmlns="snet-home.org" type="data" mode="binary" interface="C4SNet">"#,
        r#"<field label="a">(int)5</field></record>"#
    ));
    assert!(
        matches!(e.kind, InputErrorKind::BinaryUnsupported { ref label } if label == "a"),
        "{e}"
    );
}

#[test]
fn a_label_with_a_double_quote_is_refused_since_output_could_not_write_it() {
    for body in [
        r#"<tag label='it"s'>1</tag>"#,
        r#"<btag label='x"'>1</btag>"#,
        r#"<field label='"f' interface="C4SNet">(int)1</field>"#,
    ] {
        let input = format!("{HEAD}{body}</record><record type=\"data\" mode=\"textual\"><tag label=\"ok\">2</tag></record>{TERM}");
        let v = read(&input);
        let errs: Vec<_> = v.iter().filter_map(|r| r.as_ref().err()).collect();
        assert_eq!(errs.len(), 1, "{body}: {errs:?}");
        assert!(errs[0].to_string().contains("double quote"), "{}", errs[0]);
        // The next record is still read.
        let oks: Vec<_> = v.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(oks.len(), 1);
        assert_eq!(oks[0].tag(Label::tag("ok")), Some(2));
    }
    // A single quote is fine (written back inside double quotes).
    let r = one(&format!("{HEAD}<tag label=\"it's\">3</tag></record>{TERM}"));
    assert_eq!(r.tag(Label::tag("it's")), Some(3));
}

#[test]
fn an_element_that_looks_like_a_record_is_reported_not_skipped_silently() {
    let input = format!(
        "<snet:record xmlns:snet=\"snet-home.org\" type=\"data\"><tag label=\"a\">1</tag></snet:record>\
         <Record type=\"data\"><tag label=\"b\">2</tag></Record>\
         <records>{HEAD}<tag label=\"c\">3</tag></record></records><recordx/>{TERM}"
    );
    let v = read(&input);
    let errs: Vec<String> = v
        .iter()
        .filter_map(|r| r.as_ref().err())
        .map(|e| e.to_string())
        .collect();
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(
        errs[0].contains("<snet:record>") && errs[1].contains("<Record>"),
        "{errs:?}"
    );
    // Other markup (a wrapper element, another name) is skipped as before; the real
    // record is read.
    let oks: Vec<_> = v.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(oks.len(), 1);
    assert_eq!(oks[0].tag(Label::tag("c")), Some(3));
}
