//! JSON lines: one record per line, an alternative to the XML format.
//!
//! Each line is one JSON object:
//!
//! ```text
//! {"fields":{"A":"(int)10","s":"hi","p":"(char[3])<,&,>"},"tags":{"T":2},"btags":{"b":1}}
//! {"type":"terminate"}
//! ```
//!
//! * `fields`: label → the value as a JSON string, in one of two forms:
//!   * a string that starts with `(` is the value's C4SNet textual serialisation (spec
//!     §12.6), without XML escapes: `<` and `&` in characters are themselves (`&lt;`
//!     and `&amp;` are still read as `<` and `&`, as older output wrote them);
//!   * any other string is a `char` array of its UTF-8 bytes (`"hi"` is
//!     `(char[2])h,i`, `""` is `(char[0])`): text needs no conversion.
//!
//!   The writer writes a `char` array as a plain string when its bytes are UTF-8 and
//!   do not start with `(`, every other value in the C4SNet form. A value whose text
//!   is not valid UTF-8 (character data with arbitrary bytes) is written as
//!   `{"bytes":[40,99,...]}`, the bytes of its C4SNet text; the reader accepts all
//!   three forms. The whole string must be one value (trailing white space is allowed).
//! * `tags`, `btags`: label → integer (`i32`).
//! * `type` (optional): `"data"` (default) or `"terminate"`, which ends the input.
//! * `mode` (optional): `"textual"` (default) or `"binary"`; it is only carried to the
//!   output (field values are text in JSON either way).
//!
//! All keys are optional, unknown keys are errors, key order is the output order, and a
//! label given twice keeps its first position and its last value. Blank lines are
//! ignored; end of input without a terminate line ends the input like one. The writer
//! always writes `fields`, `tags` and `btags` (in that order), adds `"mode":"binary"`
//! for binary-mode records, and ends with `{"type":"terminate"}` from
//! [`JsonWriter::finish`].
//!
//! Errors name the line number (as [`InputError::record`]) and the position in the
//! file (line, column and byte offset of the problem when the JSON parser names one,
//! else of the line's start); a malformed line is discarded and reading continues with
//! the next one. Only I/O errors are fatal, and a first line that is not blank and
//! starts with `<` ([`InputErrorKind::XmlNotJson`]: an XML file, every line of which
//! would be malformed).

use crate::error::{InputError, InputErrorKind, OutputError};
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use snet_core::label::Label;
use snet_core::record::{DataMode, Record};
use snet_core::value::text::{parse_value_unescaped, write_value_unescaped};
use snet_core::value::{CType, Value};
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};

/// Reads records from JSON lines.
#[derive(Debug)]
pub struct JsonReader<R> {
    src: BufReader<R>,
    line: Vec<u8>,
    line_no: u64,
    offset: u64,
    done: bool,
    terminated: bool,
    /// Whether a line that is not blank has been read.
    seen_line: bool,
}

impl<R: Read> JsonReader<R> {
    /// A reader over `src`.
    pub fn new(src: R) -> JsonReader<R> {
        JsonReader {
            src: BufReader::new(src),
            line: Vec::new(),
            line_no: 0,
            offset: 0,
            done: false,
            terminated: false,
            seen_line: false,
        }
    }

    /// True once a terminate line has been read.
    pub fn terminated(&self) -> bool {
        self.terminated
    }

    /// The next record, error, or `None` at the end of input.
    pub fn next_record(&mut self) -> Option<Result<Record, InputError>> {
        while !self.done {
            self.line.clear();
            let start = self.offset;
            match self.src.read_until(b'\n', &mut self.line) {
                Ok(0) => self.done = true,
                Ok(n) => {
                    self.offset += n as u64;
                    self.line_no += 1;
                    if self.line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let err = |kind, column: u64| InputError {
                        record: self.line_no,
                        offset: start + column - 1,
                        line: self.line_no,
                        column,
                        kind,
                    };
                    let first = !self.seen_line;
                    self.seen_line = true;
                    let indent = self.line.iter().take_while(|b| b.is_ascii_whitespace());
                    let indent = indent.count() as u64;
                    if first && self.line.get(indent as usize) == Some(&b'<') {
                        // An XML file: one error, not a warning per line.
                        self.done = true;
                        return Some(Err(InputError {
                            record: 0,
                            ..err(InputErrorKind::XmlNotJson, indent + 1)
                        }));
                    }
                    // Parsed without its newline, so that serde_json's position is
                    // always on line 1 and its column is the column in the file.
                    let text = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
                    let line: Line = match serde_json::from_slice(text) {
                        Ok(l) => l,
                        Err(e) => {
                            let hint = if text[indent as usize..].starts_with(b"<") {
                                " (this line is XML: XML records are read without --format json)"
                            } else {
                                ""
                            };
                            let (msg, column) = json_message(&e);
                            let kind = InputErrorKind::Json(format!("{msg}{hint}"));
                            return Some(Err(err(kind, column)));
                        }
                    };
                    match line.into_record() {
                        Ok(Some(r)) => return Some(Ok(r)),
                        Ok(None) => {
                            self.done = true;
                            self.terminated = true;
                        }
                        Err(kind) => return Some(Err(err(kind, 1))),
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(InputError {
                        record: 0,
                        offset: self.offset,
                        line: 0,
                        column: 0,
                        kind: InputErrorKind::Io(e),
                    }));
                }
            }
        }
        None
    }
}

impl<R: Read> Iterator for JsonReader<R> {
    type Item = Result<Record, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record()
    }
}

/// serde_json's message without the position it appends (` at line 1 column C`, the
/// line being parsed alone), and that column (1 if it names none): the caller gives the
/// position in the file instead.
fn json_message(e: &serde_json::Error) -> (String, u64) {
    let msg = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match msg.strip_suffix(&suffix) {
        Some(m) if e.line() == 1 => (m.to_owned(), e.column().max(1) as u64),
        Some(m) => (m.to_owned(), 1),
        None => (msg, 1),
    }
}

/// A field value as found in JSON.
enum FieldText {
    Text(String),
    Bytes(Vec<u8>),
}

/// One parsed line.
#[derive(Default)]
struct Line {
    kind: Option<String>,
    mode: Option<String>,
    fields: Vec<(String, FieldText)>,
    tags: Vec<(String, i32)>,
    btags: Vec<(String, i32)>,
}

impl Line {
    /// The record, `None` for a terminate line.
    fn into_record(self) -> Result<Option<Record>, InputErrorKind> {
        match self.kind.as_deref() {
            None | Some("data") => {}
            Some("terminate") => return Ok(None),
            Some(t) => return Err(InputErrorKind::UnknownType(t.to_owned())),
        }
        let mut rec = Record::new();
        rec.mode = match self.mode.as_deref() {
            None | Some("textual") => DataMode::Textual,
            Some("binary") => DataMode::Binary,
            Some(m) => return Err(InputErrorKind::UnknownMode(m.to_owned())),
        };
        for (label, text) in self.fields {
            let bytes = match &text {
                FieldText::Text(s) if !s.starts_with('(') => {
                    // A plain string: a `char` array of its bytes.
                    let v = Value::from_bytes(CType::Char, s.len(), false, s.as_bytes());
                    rec.set_field(Label::field(&label), Some(v));
                    continue;
                }
                FieldText::Text(s) => s.as_bytes(),
                FieldText::Bytes(b) => b.as_slice(),
            };
            let value = match parse_value_unescaped(bytes) {
                Ok((v, used)) if bytes[used..].iter().all(u8::is_ascii_whitespace) => v,
                Ok((_, used)) => {
                    return Err(InputErrorKind::Json(format!(
                        "field {label}: unexpected text after the value at byte {used}"
                    )))
                }
                Err(error) => return Err(InputErrorKind::Value { label, error }),
            };
            rec.set_field(Label::field(&label), Some(value));
        }
        for (label, v) in self.tags {
            rec.set_tag(Label::tag(&label), v);
        }
        for (label, v) in self.btags {
            rec.set_tag(Label::btag(&label), v);
        }
        Ok(Some(rec))
    }
}

impl<'de> Deserialize<'de> for Line {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Line, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Line;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a record object with fields, tags, btags, type, mode")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Line, A::Error> {
                let mut line = Line::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "type" => line.kind = Some(map.next_value()?),
                        "mode" => line.mode = Some(map.next_value()?),
                        "fields" => line.fields = map.next_value::<Ordered<FieldText>>()?.0,
                        "tags" => line.tags = map.next_value::<Ordered<i32>>()?.0,
                        "btags" => line.btags = map.next_value::<Ordered<i32>>()?.0,
                        other => {
                            return Err(de::Error::unknown_field(
                                other,
                                &["type", "mode", "fields", "tags", "btags"],
                            ))
                        }
                    }
                }
                Ok(line)
            }
        }
        d.deserialize_map(V)
    }
}

/// A JSON object read as an ordered list of entries.
struct Ordered<T>(Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ordered<T>, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of labels")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered<T>, A::Error> {
                let mut v = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    v.push((k, map.next_value()?));
                }
                Ok(Ordered(v))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl<'de> Deserialize<'de> for FieldText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FieldText, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FieldText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value text such as \"(int)10\" or {\"bytes\":[...]}")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<FieldText, E> {
                Ok(FieldText::Text(s.to_owned()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<FieldText, E> {
                Ok(FieldText::Text(s))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FieldText, A::Error> {
                let mut bytes = None;
                while let Some(k) = map.next_key::<String>()? {
                    if k != "bytes" {
                        return Err(de::Error::unknown_field(&k, &["bytes"]));
                    }
                    bytes = Some(map.next_value::<Vec<u8>>()?);
                }
                bytes
                    .map(FieldText::Bytes)
                    .ok_or_else(|| de::Error::missing_field("bytes"))
            }
        }
        d.deserialize_any(V)
    }
}

/// Writes records as JSON lines.
#[derive(Debug)]
pub struct JsonWriter<W: Write> {
    out: Option<W>,
    buf: Vec<u8>,
    text: Vec<u8>,
    flush_each: bool,
    records: u64,
}

impl<W: Write> JsonWriter<W> {
    /// A writer that flushes `out` after each record.
    pub fn new(out: W) -> JsonWriter<W> {
        JsonWriter {
            out: Some(out),
            buf: Vec::with_capacity(4096),
            text: Vec::new(),
            flush_each: true,
            records: 0,
        }
    }

    /// Whether to flush after each record (default true); when false, output is
    /// batched until 64 KiB are pending.
    pub fn set_flush_each_record(&mut self, on: bool) {
        self.flush_each = on;
    }

    /// Number of data records written.
    pub fn records_written(&self) -> u64 {
        self.records
    }

    /// Writes one record as one line. A `NULL` field is an error.
    pub fn write_record(&mut self, rec: &Record) -> Result<(), OutputError> {
        if let Some((l, _)) = rec.fields().iter().find(|(_, v)| v.is_none()) {
            return Err(OutputError::NullField {
                label: l.name().to_owned(),
                record: rec.describe(),
            });
        }
        let b = &mut self.buf;
        b.extend_from_slice(b"{\"fields\":{");
        for (i, (l, v)) in rec.fields().iter().enumerate() {
            let Some(v) = v else { continue };
            if i > 0 {
                b.push(b',');
            }
            json_string(b, l.name())?;
            b.push(b':');
            if v.ctype() == CType::Char && !v.is_scalar() && v.bytes().first() != Some(&b'(') {
                if let Ok(text) = std::str::from_utf8(v.bytes()) {
                    json_string(b, text)?;
                    continue;
                }
            }
            self.text.clear();
            write_value_unescaped(v, &mut self.text);
            match std::str::from_utf8(&self.text) {
                Ok(s) => json_string(b, s)?,
                Err(_) => {
                    b.extend_from_slice(b"{\"bytes\":");
                    serde_json::to_writer(&mut *b, &self.text).map_err(json_io)?;
                    b.push(b'}');
                }
            }
        }
        for (key, list) in [
            (&b"},\"tags\":{"[..], rec.tags()),
            (b"},\"btags\":{", rec.btags()),
        ] {
            b.extend_from_slice(key);
            for (i, (l, v)) in list.iter().enumerate() {
                if i > 0 {
                    b.push(b',');
                }
                json_string(b, l.name())?;
                b.push(b':');
                b.extend_from_slice(v.to_string().as_bytes());
            }
        }
        b.push(b'}');
        if rec.mode == DataMode::Binary {
            b.extend_from_slice(b",\"mode\":\"binary\"");
        }
        b.extend_from_slice(b"}\n");
        self.records += 1;
        if self.flush_each || self.buf.len() >= 64 * 1024 {
            self.drain(self.flush_each)?;
        }
        Ok(())
    }

    /// Writes pending bytes and flushes the sink.
    pub fn flush(&mut self) -> Result<(), OutputError> {
        self.drain(true)
    }

    /// Writes the terminate line, flushes, and returns the sink.
    pub fn finish(mut self) -> Result<W, OutputError> {
        self.buf.extend_from_slice(b"{\"type\":\"terminate\"}\n");
        self.drain(true)?;
        self.out
            .take()
            .ok_or_else(|| OutputError::Io(std::io::Error::other("writer already finished")))
    }

    fn drain(&mut self, flush: bool) -> Result<(), OutputError> {
        let Some(out) = self.out.as_mut() else {
            return Ok(());
        };
        let r = out.write_all(&self.buf);
        self.buf.clear();
        r?;
        if flush {
            out.flush()?;
        }
        Ok(())
    }
}

impl<W: Write> Drop for JsonWriter<W> {
    fn drop(&mut self) {
        // Best effort for a writer dropped without `finish`/`flush`.
        if !self.buf.is_empty() {
            let _ = self.drain(true);
        }
    }
}

fn json_string(b: &mut Vec<u8>, s: &str) -> Result<(), OutputError> {
    serde_json::to_writer(b, s).map_err(json_io)
}

fn json_io(e: serde_json::Error) -> OutputError {
    OutputError::Io(std::io::Error::other(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use snet_core::value::{CType, Value};

    fn read_all(s: &[u8]) -> Vec<Result<Record, InputError>> {
        JsonReader::new(s).collect()
    }

    #[test]
    fn documented_example_reads_and_writes_back_identically() {
        let line = "{\"fields\":{\"A\":\"(int)10\",\"s\":\"hi\",\"p\":\"(char[3])<,&,>\"},\"tags\":{\"T\":2},\"btags\":{\"b\":1}}\n";
        let recs = read_all(format!("{line}{{\"type\":\"terminate\"}}\n{line}").as_bytes());
        assert_eq!(recs.len(), 1, "nothing after terminate is read");
        let rec = recs
            .into_iter()
            .next()
            .and_then(Result::ok)
            .unwrap_or_default();
        assert_eq!(rec.field(Label::field("A")), Some(&Some(Value::int(10))));
        assert_eq!(
            rec.field(Label::field("s")),
            Some(&Some(Value::string("hi")))
        );
        assert_eq!(
            rec.field(Label::field("p")),
            Some(&Some(Value::string("<&>")))
        );
        assert_eq!(rec.tag(Label::btag("b")), Some(1));
        let mut w = JsonWriter::new(Vec::new());
        w.write_record(&rec).unwrap();
        let out = w.finish().unwrap();
        // A char array is written as a plain string.
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "{}{{\"type\":\"terminate\"}}\n",
                line.replace("(char[3])<,&,>", "<&>")
            )
        );
    }

    #[test]
    fn strings_are_json_without_xml_escapes_and_char_arrays_are_plain_text() {
        let cases = [
            // (value, as written)
            (
                Value::string("Hello, <world> & \"you\"\n"),
                r#""Hello, <world> & \"you\"\n""#,
            ),
            (Value::string(""), r#""""#),
            // A char array whose text starts with `(` keeps the C4SNet form.
            (Value::string("(int)1"), r#""(char[6])(,i,n,t,),1""#),
            (
                Value::from_bytes(CType::UChar, 2, false, b"<&"),
                r#""(unsigned char[2])<,&""#,
            ),
            (
                Value::from_bytes(CType::Char, 1, true, b"<"),
                r#""(char)<""#,
            ),
            (Value::int_array(&[1, -2]), r#""(int[2])1,-2""#),
        ];
        for (v, written) in cases {
            let rec = Record::new().with_field("x", v.clone());
            let mut w = JsonWriter::new(Vec::new());
            w.write_record(&rec).unwrap();
            let out = w.finish().unwrap();
            let text = String::from_utf8(out.clone()).unwrap();
            assert!(
                text.starts_with(&format!("{{\"fields\":{{\"x\":{written}}}")),
                "{text}"
            );
            let back: Vec<_> = JsonReader::new(out.as_slice()).collect();
            assert_eq!(back.len(), 1);
            assert_eq!(back[0].as_ref().ok(), Some(&rec), "{text}");
        }
        // Older output with XML escapes still reads.
        let old = read_all(b"{\"fields\":{\"x\":\"(char[2])&lt;,&amp;\"}}\n");
        assert_eq!(
            old[0]
                .as_ref()
                .ok()
                .and_then(|r| r.field(Label::field("x")).cloned()),
            Some(Some(Value::string("<&")))
        );
    }

    #[test]
    fn non_utf8_text_is_written_as_bytes_and_read_back() {
        let v = Value::from_bytes(CType::UChar, 2, false, &[0xff, b'<']);
        let rec = Record::new().with_field("x", v.clone());
        let mut w = JsonWriter::new(Vec::new());
        w.write_record(&rec).unwrap();
        let out = w.finish().unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(
            text.starts_with("{\"fields\":{\"x\":{\"bytes\":[40,"),
            "{text}"
        );
        let back: Vec<_> = JsonReader::new(out.as_slice()).collect();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].as_ref().ok(), Some(&rec));
    }

    #[test]
    fn bad_lines_are_skipped_with_their_line_number() {
        let input = b"{\"fields\":{\"A\":\"(int)1\"}}\n\nnot json\n{\"fields\":{\"A\":\"(int)x\"}}\n{\"tags\":{\"T\":99999999999}}\n{\"colour\":1}\n{\"type\":\"other\"}\n{\"fields\":{\"A\":\"(int)1 junk\"}}\n{\"tags\":{\"T\":3,\"T\":4}}\n";
        let recs = read_all(input);
        let lines: Vec<_> = recs
            .iter()
            .map(|r| match r {
                Ok(_) => 0,
                Err(e) => {
                    assert!(!e.is_fatal());
                    e.record
                }
            })
            .collect();
        assert_eq!(lines, vec![0, 3, 4, 5, 6, 7, 8, 0]);
        let last = recs
            .last()
            .and_then(|r| r.as_ref().ok())
            .cloned()
            .unwrap_or_default();
        assert_eq!(last.tag(Label::tag("T")), Some(4), "last value wins");
        assert_eq!(last.tags().len(), 1);
    }

    #[test]
    fn an_xml_line_suggests_reading_it_as_xml() {
        // After a JSON line (an XML first line is one fatal error, below).
        let recs = read_all(b"{}\n  <record type=\"data\" mode=\"textual\"/>\n");
        let e = recs[1]
            .as_ref()
            .err()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(
            e.contains("XML records are read without --format json"),
            "{e}"
        );
        let recs = read_all(b"nonsense\n");
        let e = recs[0]
            .as_ref()
            .err()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(!e.contains("XML"), "{e}");
    }

    /// An XML file read as JSON lines: one fatal error at its first line, which says to
    /// read it without `--format json`, not a warning per line.
    #[test]
    fn an_xml_file_is_one_fatal_error_at_its_first_line() {
        let xml = b"\n  <?xml version=\"1.0\" ?>\n<record type=\"data\" mode=\"textual\">\n<tag label=\"T\">3</tag>\n</record>\n";
        let recs = read_all(xml);
        assert_eq!(recs.len(), 1);
        let e = recs[0].as_ref().expect_err("an error");
        assert!(e.is_fatal());
        assert_eq!((e.line, e.column, e.offset), (2, 3, 3));
        assert_eq!(
            e.to_string(),
            "input (line 2, column 3, byte 3): the input looks like XML, not JSON lines \
             (it starts with `<`): read it without --format json"
        );
    }

    /// A JSON syntax error names one position, the parser's, as line and column in the
    /// file (not also serde_json's "at line 1 column C" of the line read alone).
    #[test]
    fn a_json_syntax_error_names_its_position_in_the_file() {
        let recs = read_all(b"{}\n{\"tags\":{\"T\":1}, x}\n{\"fields\":\n{\"a\":1}\n");
        let shown: Vec<_> = recs
            .iter()
            .filter_map(|r| r.as_ref().err().map(ToString::to_string))
            .collect();
        assert_eq!(
            shown,
            [
                "input record 2 (line 2, column 18, byte 20): invalid JSON record: \
                 key must be a string",
                "input record 3 (line 3, column 10, byte 32): invalid JSON record: \
                 EOF while parsing a value",
                "input record 4 (line 4, column 4, byte 37): invalid JSON record: \
                 unknown field `a`, expected one of `type`, `mode`, `fields`, `tags`, `btags`",
            ]
        );
    }

    #[test]
    fn null_fields_cannot_be_written() {
        let mut rec = Record::new();
        rec.set_field(Label::field("probe"), None);
        let mut w = JsonWriter::new(Vec::new());
        let e = w
            .write_record(&rec)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("probe") && e.contains("NULL"), "{e}");
    }
}
