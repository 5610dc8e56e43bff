//! Incremental reader of the XML record format (spec §11.2).
//!
//! The reader keeps one growing byte buffer over the source and parses in place: it
//! asks the source for more bytes only when a token is incomplete, and returns a record
//! as soon as its `</record>` (or `/>`) has been read, so records stream through a
//! pipe. Consumed bytes are dropped from the front of the buffer between records.
//!
//! How each numbered rule of §11.2 is met:
//!
//! 1. Text before a `<record` (or `<?xml`, `<!--`) is skipped, as is any other markup
//!    between records (`</record>` strays, unknown elements); XML declarations and
//!    comments are skipped up to `?>` / `-->`. Inside a record, text between entries is
//!    ignored and comments are allowed.
//! 2. `xmlns`, if present, must be `snet-home.org`: otherwise a fatal error.
//! 3. `type` is required (`MissingType`); `data` gives a record; `terminate` ends the
//!    input right after its start tag; `collect`, `sort_begin`, `sort_end`,
//!    `trigger_initializer` are fatal (`ReservedType`); anything else discards the
//!    record (`UnknownType`).
//! 4. `mode` absent or `binary` means binary, `textual` textual, else `UnknownMode`.
//!    A field in a binary record is fatal (`BinaryUnsupported`): binary encoding is not
//!    implemented. Records without fields are accepted in binary mode and keep
//!    [`DataMode::Binary`].
//! 5. The record's `interface` (if any), each field's own `interface` (which must equal
//!    the record's; the first one found becomes the record's when it has none): only
//!    `C4SNet` is supported. A field with no interface on either is `NoInterface`.
//!    Tag-only records need no interface [REF-DEVIATION in the reference's favour of
//!    the spec].
//! 6. `<field label="L" ...>` — `label` required; the value starts right after `>` and
//!    is parsed by [`parse_value`] from the text up to the next `<`, or, for a `char`
//!    or `unsigned char` value that this cuts short, up to `</field` (an element may
//!    be a raw `<`, spec §12.6); what the value does not consume is ignored; `</field>`
//!    must follow. `<field .../>` is fatal (`FieldWithoutValue`).
//! 7. `<tag>` / `<btag>`: `label` required, other attributes ignored, the text is read
//!    with C `atoi` (glibc: `strtol` saturating at the `long` range, truncated to
//!    `int`); `<tag .../>` and empty text give 0.
//! 8. Unknown labels are simply interned.
//! 9. A repeated label replaces the earlier value in place ([`Record::set_field`]).
//! 10. Records are returned one by one as soon as they are complete.
//! 11. A recoverable error discards the record; the next call resumes scanning at the
//!     problem's position (after the bad record's start), so it picks up the next
//!     `<record` — including one that starts before the bad record was closed.
//! 12. End of input without a terminate record ends the input like one
//!     ([`XmlReader::terminated`] tells the two apart).
//!
//! Attributes are `Name = "text"` or `Name = 'text'` (white space around `=` allowed);
//! an attribute value may not contain `<`. Attribute names and values are taken as
//! UTF-8 (invalid sequences replaced).

use crate::error::{InputError, InputErrorKind};
use snet_core::label::{Label, LabelKind};
use snet_core::record::{DataMode, Record};
use snet_core::value::text::{parse_value, parse_value_unescaped};
use std::borrow::Cow;
use std::collections::HashSet;
use std::io::{self, Read};
use std::ops::Range;

/// Bytes requested from the source per read.
pub(crate) const CHUNK: usize = 64 * 1024;

/// Reads S-Net XML records from a byte source (spec §11.2).
///
/// Iterating yields `Ok(record)` for each data record, `Err(e)` for each malformed
/// record (then continues if `!e.is_fatal()`), and ends at a terminate record, at end
/// of input, or after a fatal error.
#[derive(Debug)]
pub struct XmlReader<R> {
    src: R,
    buf: Vec<u8>,
    /// Next unparsed byte in `buf`.
    pos: usize,
    /// Input offset of `buf[0]`.
    base: u64,
    /// Line numbering: a buffer index whose line and line start are known, moved
    /// forwards and backwards by [`XmlReader::line_col`] (each move scans only the bytes
    /// in between, so positions cost linear time overall).
    lc: LineCursor,
    eof: bool,
    done: bool,
    terminated: bool,
    records: u64,
    /// Bytes other than whitespace skipped between records (text and unknown markup;
    /// XML declarations and comments are not counted).
    junk: u64,
    /// Whether [`XmlReader::skip_until`] counts what it skips into `junk`.
    counting_junk: bool,
    /// The first byte of the input that is not white space, once read.
    first: Option<u8>,
    /// Attributes of the element being parsed (reused to avoid allocation).
    attrs: Vec<Attr>,
    /// Labels of the record being parsed, kept once it has [`LINEAR_LABELS`] of them
    /// (a repeated label is then found by hashing instead of a scan of the record).
    seen: HashSet<Label>,
    /// Labels read so far by kind and name (see [`XmlReader::attr_label`]).
    labels: Vec<(LabelKind, Vec<u8>, Label)>,
}

/// Labels kept in [`XmlReader::attr_label`]'s cache (more are interned each time).
const LABEL_CACHE: usize = 32;

/// Up to this many labels a record is searched linearly for a repeated label.
const LINEAR_LABELS: usize = 16;

/// See [`XmlReader::line_col`].
#[derive(Debug, Default)]
struct LineCursor {
    /// Buffer index.
    at: usize,
    /// Newlines in the input before `at`.
    lines: u64,
    /// Input offset of the first byte of the line `at` is on.
    line_start: u64,
    /// Input offset of the first byte of the line `buf[0]` is on.
    line_start_at_0: u64,
}

/// One attribute: byte ranges of its name and value in the buffer.
#[derive(Debug, Clone)]
struct Attr {
    name: Range<usize>,
    value: Range<usize>,
}

/// A failure while parsing, at buffer index `at`. Boxed: the parser's primitives
/// return `Result<_, Fail>` on every byte, and a one-word error keeps those results in
/// registers (an inline `InputErrorKind` made each `byte()` return through memory).
struct Fail(Box<FailAt>);

struct FailAt {
    kind: InputErrorKind,
    /// Where the problem was found (reading resumes there).
    at: usize,
    /// Where the error is reported, if not at `at`: the start of a record that a new
    /// `<record` interrupts (its message names `at`).
    report_at: Option<usize>,
}

/// What [`XmlReader::seek_record`] found.
enum Seek {
    /// A `<record` at `pos`.
    Record,
    /// The end of input.
    End,
    /// An element that looks like a record but is not one (skipped; reported).
    Foreign(Fail),
}

#[cold]
fn fail<T>(kind: InputErrorKind, at: usize) -> Result<T, Fail> {
    Err(Fail(Box::new(FailAt {
        kind,
        at,
        report_at: None,
    })))
}

/// A record cut short at `at` (by a new `<record>` or the end of input), reported where
/// it starts, `start` (the user looks for the record that lacks its end).
#[cold]
fn cut_short<T>(msg: String, at: usize, start: usize) -> Result<T, Fail> {
    Err(Fail(Box::new(FailAt {
        kind: InputErrorKind::Syntax(msg),
        at,
        report_at: Some(start),
    })))
}

#[cold]
fn syntax<T>(msg: impl Into<String>, at: usize) -> Result<T, Fail> {
    fail(InputErrorKind::Syntax(msg.into()), at)
}

/// A checked `<record ...>` start tag: a data record (whether the tag is
/// self-closing, the index after it, its mode, whether it names its interface), or a
/// terminate record (the index after it).
enum Header {
    Data {
        self_closing: bool,
        after: usize,
        mode: DataMode,
        interface: bool,
    },
    Terminate(usize),
}

/// The interface attribute as the canonical start tags spell it.
const INTERFACE_ATTR: &[u8] = b" interface=\"C4SNet\"";

/// The start tag every writer of the format produces (spec §11.3, and the classic
/// runtime's output), recognised without parsing its attributes.
const CANONICAL_RECORD: &[u8] = b"<record xmlns=\"snet-home.org\" type=\"data\" mode=\"textual\"";

/// If the start tag at `start` is [`CANONICAL_RECORD`], optionally
/// ` interface="C4SNet"`, spaces and `>` (this writer puts a space before the `>`),
/// the index after it and whether it names the interface.
fn canonical_record(buf: &[u8], start: usize) -> Option<(usize, bool)> {
    let mut i = start + CANONICAL_RECORD.len();
    if !buf.get(start..)?.starts_with(CANONICAL_RECORD) {
        return None;
    }
    let interface = buf.get(i..)?.starts_with(INTERFACE_ATTR);
    if interface {
        i += INTERFACE_ATTR.len();
    }
    while *buf.get(i)? == b' ' {
        i += 1;
    }
    (buf[i] == b'>').then_some((i + 1, interface))
}

/// If the attributes at `i` (just after an element name) are exactly ` label="NAME"`
/// and then `>` or ` interface="C4SNet">`: the range of NAME, whether the interface is
/// named, and the index after the tag.
fn canonical_label(buf: &[u8], i: usize) -> Option<(Range<usize>, bool, usize)> {
    const LABEL: &[u8] = b" label=\"";
    let start = i + LABEL.len();
    if !buf.get(i..)?.starts_with(LABEL) {
        return None;
    }
    let len = buf
        .get(start..)?
        .iter()
        .position(|&b| matches!(b, b'"' | b'<' | b'>'))?;
    let end = start + len;
    if buf[end] != b'"' || len == 0 {
        return None;
    }
    let rest = &buf[end + 1..];
    if rest.first() == Some(&b'>') {
        return Some((start..end, false, end + 2));
    }
    (rest.starts_with(INTERFACE_ATTR) && rest.get(INTERFACE_ATTR.len()) == Some(&b'>')).then_some((
        start..end,
        true,
        end + 2 + INTERFACE_ATTR.len(),
    ))
}

enum Parsed {
    Data(Record),
    Terminate,
}

/// Number of `\n` bytes in `s`: counted in blocks of 255 bytes into a byte-wide sum,
/// which the compiler turns into vector code (the reader counts every input byte once,
/// for line numbers in error messages).
fn count_newlines(s: &[u8]) -> u64 {
    s.chunks(255)
        .map(|c| {
            c.iter()
                .map(|&b| u8::from(b == b'\n'))
                .fold(0u8, u8::wrapping_add) as u64
        })
        .sum()
}

/// The attributes of a well-formed start tag that lies in `buf` from `i` (just after
/// its name) into `attrs`, and whether it is self-closing and the index after its `>`;
/// `None` if the tag runs past the end of `buf` or is malformed (the caller then parses
/// it byte by byte, reading more input or reporting the error).
#[inline]
fn attrs_in(buf: &[u8], mut i: usize, attrs: &mut Vec<Attr>) -> Option<(bool, usize)> {
    attrs.clear();
    loop {
        while is_ws(*buf.get(i)?) {
            i += 1;
        }
        match *buf.get(i)? {
            b'>' => return Some((false, i + 1)),
            b'/' => return (*buf.get(i + 1)? == b'>').then_some((true, i + 2)),
            _ => {}
        }
        let name_start = i;
        while !matches!(
            *buf.get(i)?,
            b' ' | b'\t' | b'\n' | b'\r' | b'=' | b'>' | b'/' | b'<' | b'"' | b'\''
        ) {
            i += 1;
        }
        if i == name_start {
            return None;
        }
        let name = name_start..i;
        while is_ws(*buf.get(i)?) {
            i += 1;
        }
        if *buf.get(i)? != b'=' {
            return None;
        }
        i += 1;
        while is_ws(*buf.get(i)?) {
            i += 1;
        }
        let quote = *buf.get(i)?;
        if quote != b'"' && quote != b'\'' {
            return None;
        }
        let start = i + 1;
        let len = buf
            .get(start..)?
            .iter()
            .position(|&b| b == quote || b == b'<')?;
        if buf[start + len] != quote {
            return None;
        }
        attrs.push(Attr {
            name,
            value: start..start + len,
        });
        i = start + len + 1;
    }
}

/// XML white space.
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Bytes of `b` that are not XML whitespace.
fn count_non_ws(b: &[u8]) -> u64 {
    b.iter().filter(|c| !is_ws(**c)).count() as u64
}

/// A byte that may end an element name.
fn ends_name(b: Option<u8>) -> bool {
    match b {
        Some(b) => is_ws(b) || b == b'>' || b == b'/',
        None => false,
    }
}

const RESERVED_TYPES: [&str; 4] = ["collect", "sort_begin", "sort_end", "trigger_initializer"];
const INTERFACE: &str = "C4SNet";
const NAMESPACE: &str = "snet-home.org";

impl<R: Read> XmlReader<R> {
    /// A reader over `src`. Wrapping `src` in a `BufReader` is unnecessary: the reader
    /// buffers itself.
    pub fn new(src: R) -> XmlReader<R> {
        XmlReader {
            src,
            buf: Vec::new(),
            pos: 0,
            base: 0,
            lc: LineCursor::default(),
            eof: false,
            done: false,
            terminated: false,
            records: 0,
            junk: 0,
            counting_junk: false,
            first: None,
            attrs: Vec::new(),
            seen: HashSet::new(),
            labels: Vec::new(),
        }
    }

    /// Number of `<record` elements seen so far (data, terminate and malformed ones).
    pub fn records_seen(&self) -> u64 {
        self.records
    }

    /// Bytes other than whitespace skipped outside records so far: text and unknown
    /// markup (spec §11.2 rule 1 skips them; an input made only of them is not a
    /// record file, which a caller may want to say).
    pub fn junk_bytes(&self) -> u64 {
        self.junk
    }

    /// True if the input starts (after white space) with `{`, as JSON lines do and an
    /// XML record file cannot: a caller that found no record may suggest
    /// `--format json`.
    pub fn looks_like_json(&self) -> bool {
        self.first == Some(b'{')
    }

    /// True once a terminate record has been read (false if the input simply ended).
    pub fn terminated(&self) -> bool {
        self.terminated
    }

    /// Input bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// The underlying source.
    pub fn get_ref(&self) -> &R {
        &self.src
    }

    /// Bytes currently held in the buffer (for tests of bounded memory).
    #[cfg(test)]
    pub(crate) fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The underlying source, consuming the reader.
    pub fn into_inner(self) -> R {
        self.src
    }

    /// The next record, error, or `None` at the end of input (spec §11.2).
    pub fn next_record(&mut self) -> Option<Result<Record, InputError>> {
        if self.done {
            return None;
        }
        match self.seek_record() {
            Ok(Seek::Record) => {}
            Ok(Seek::End) => {
                self.done = true;
                return None;
            }
            Ok(Seek::Foreign(f)) => return Some(Err(self.error(f, 0))),
            Err(f) => {
                self.done = true;
                return Some(Err(self.error(f, 0)));
            }
        }
        self.records += 1;
        let start = self.pos;
        match self.parse_record() {
            Ok(Parsed::Data(r)) => Some(Ok(r)),
            Ok(Parsed::Terminate) => {
                self.done = true;
                self.terminated = true;
                None
            }
            Err(f) => {
                let at = f.0.at.max(start + 1);
                let e = self.error(f, self.records);
                if e.is_fatal() {
                    self.done = true;
                } else {
                    self.pos = at.min(self.buf.len());
                }
                Some(Err(e))
            }
        }
    }

    fn error(&mut self, f: Fail, record: u64) -> InputError {
        let f = *f.0;
        let at = f.report_at.unwrap_or(f.at).min(self.buf.len());
        let (line, column) = self.line_col(at);
        InputError {
            record,
            offset: self.base + at as u64,
            line,
            column,
            kind: f.kind,
        }
    }

    /// 1-based line and byte column of buffer index `at` (at most `buf.len()`).
    fn line_col(&mut self, at: usize) -> (u64, u64) {
        let lc = &mut self.lc;
        if at >= lc.at {
            let span = &self.buf[lc.at..at];
            let n = count_newlines(span);
            if n > 0 {
                lc.lines += n;
                // Some: `span` holds a newline.
                let i = span.iter().rposition(|&b| b == b'\n').unwrap_or(0);
                lc.line_start = self.base + (lc.at + i) as u64 + 1;
            }
        } else {
            let span = &self.buf[at..lc.at];
            let back = count_newlines(span);
            if back > 0 {
                lc.lines -= back;
                // The line of `at` starts after the last newline before it; if that
                // newline has been dropped from the buffer, at the line start known
                // for `buf[0]`.
                lc.line_start = match self.buf[..at].iter().rposition(|&b| b == b'\n') {
                    Some(i) => self.base + i as u64 + 1,
                    None => lc.line_start_at_0,
                };
            }
        }
        lc.at = at;
        let offset = self.base + at as u64;
        (lc.lines + 1, offset - lc.line_start + 1)
    }

    // ----- buffer primitives -------------------------------------------------------

    /// Reads more input; false at end of input.
    fn fill(&mut self) -> Result<bool, Fail> {
        if self.eof {
            return Ok(false);
        }
        let old = self.buf.len();
        self.buf.resize(old + CHUNK, 0);
        loop {
            match self.src.read(&mut self.buf[old..]) {
                Ok(0) => {
                    self.buf.truncate(old);
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.buf.truncate(old + n);
                    if self.first.is_none() {
                        self.first = self.buf[old..].iter().copied().find(|&b| !is_ws(b));
                    }
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.buf.truncate(old);
                    return fail(InputErrorKind::Io(e), old);
                }
            }
        }
    }

    /// Drops consumed bytes from the front of the buffer (only between records and
    /// while skipping junk, when no buffer index is held).
    fn compact(&mut self) {
        if self.pos >= CHUNK || (self.pos > 0 && self.pos == self.buf.len()) {
            // Move the line cursor to the new `buf[0]` before its bytes go.
            self.line_col(self.pos);
            self.lc.at = 0;
            self.lc.line_start_at_0 = self.lc.line_start;
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
    }

    #[inline(always)]
    fn byte(&mut self, i: usize) -> Result<Option<u8>, Fail> {
        match self.buf.get(i) {
            Some(&b) => Ok(Some(b)),
            None => self.byte_after_fill(i),
        }
    }

    #[inline(never)]
    fn byte_after_fill(&mut self, i: usize) -> Result<Option<u8>, Fail> {
        while self.buf.len() <= i {
            if !self.fill()? {
                return Ok(None);
            }
        }
        Ok(Some(self.buf[i]))
    }

    #[inline]
    fn has_prefix(&mut self, i: usize, pat: &[u8]) -> Result<bool, Fail> {
        if let Some(s) = self.buf.get(i..i + pat.len()) {
            return Ok(s == pat);
        }
        while self.buf.len() < i + pat.len() {
            if !self.fill()? {
                return Ok(false);
            }
        }
        Ok(&self.buf[i..i + pat.len()] == pat)
    }

    /// True if an element named `pat` (e.g. `<field`) starts at `i`.
    fn is_elem(&mut self, i: usize, pat: &[u8]) -> Result<bool, Fail> {
        Ok(self.has_prefix(i, pat)? && ends_name(self.byte(i + pat.len())?))
    }

    fn find_byte(&mut self, from: usize, b: u8) -> Result<Option<usize>, Fail> {
        let mut i = from;
        loop {
            if let Some(k) = self
                .buf
                .get(i..)
                .and_then(|s| s.iter().position(|&c| c == b))
            {
                return Ok(Some(i + k));
            }
            i = self.buf.len().max(from);
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    fn find_seq(&mut self, from: usize, pat: &[u8]) -> Result<Option<usize>, Fail> {
        let mut i = from;
        loop {
            if let Some(k) = self
                .buf
                .get(i..)
                .and_then(|s| s.windows(pat.len()).position(|w| w == pat))
            {
                return Ok(Some(i + k));
            }
            i = (self.buf.len() + 1).saturating_sub(pat.len()).max(from);
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    fn skip_ws(&mut self, mut i: usize) -> Result<usize, Fail> {
        while self.byte(i)?.is_some_and(is_ws) {
            i += 1;
        }
        Ok(i)
    }

    fn text(&self, r: &Range<usize>) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.buf[r.clone()])
    }

    /// The value of attribute `name` of the element just parsed (the last one wins if
    /// an attribute is repeated).
    fn attr(&self, name: &[u8]) -> Option<&[u8]> {
        self.attr_range(name).map(|r| &self.buf[r])
    }

    /// Where the value of attribute `name` lies in the buffer (see [`XmlReader::attr`]).
    fn attr_range(&self, name: &[u8]) -> Option<Range<usize>> {
        self.attrs
            .iter()
            .rev()
            .find(|a| &self.buf[a.name.clone()] == name)
            .map(|a| a.value.clone())
    }

    /// [`XmlReader::attr`] as text (for messages and labels).
    fn attr_string(&self, name: &[u8]) -> Option<String> {
        self.attr(name)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// The label named by attribute `label` of the element just parsed, as a label of
    /// `kind` (`None` if the attribute is missing). Labels are looked up in a small
    /// cache of the ones this reader has seen before interning: inputs repeat a few
    /// labels in every record.
    /// A label with a double quote (possible with single-quoted attributes) is an
    /// error: output writes `label="NAME"` (§11.3), which could not be read back.
    fn attr_label(&mut self, kind: LabelKind, at: usize) -> Result<Option<Label>, Fail> {
        let Some(v) = self.attr_range(b"label") else {
            return Ok(None);
        };
        if self.buf[v.clone()].contains(&b'"') {
            let name = String::from_utf8_lossy(&self.buf[v]).into_owned();
            return syntax(
                format!(
                    "label '{name}' contains a double quote, which the output format \
                     (label=\"NAME\", spec §11.3) cannot write"
                ),
                at,
            );
        }
        Ok(Some(self.label_at(kind, v)))
    }

    /// The label of `kind` named by the bytes `name` of the buffer (see
    /// [`XmlReader::attr_label`] on the cache).
    fn label_at(&mut self, kind: LabelKind, name: Range<usize>) -> Label {
        let v = &self.buf[name];
        if let Some((_, _, l)) = self
            .labels
            .iter()
            .find(|(k, name, _)| *k == kind && name.as_slice() == v)
        {
            return *l;
        }
        let name = String::from_utf8_lossy(v);
        let l = match kind {
            LabelKind::Field => Label::field(&name),
            LabelKind::Tag => Label::tag(&name),
            LabelKind::BTag => Label::btag(&name),
        };
        if self.labels.len() < LABEL_CACHE {
            let bytes = v.to_vec();
            self.labels.push((kind, bytes, l));
        }
        l
    }

    // ----- grammar -----------------------------------------------------------------

    /// Skips junk, XML declarations and comments up to the next `<record`; false at
    /// end of input. Skipped bytes are dropped from the buffer as it goes, so junk of
    /// any length takes bounded memory.
    fn seek_record(&mut self) -> Result<Seek, Fail> {
        loop {
            self.counting_junk = true;
            let more = self.skip_until(b"<");
            self.counting_junk = false;
            if !more? {
                return Ok(Seek::End);
            }
            let lt = self.pos;
            if self.is_elem(lt, b"<record")? {
                return Ok(Seek::Record);
            }
            if let Some(name) = self.record_like(lt)? {
                // Skipped like other markup, but said: its data would be lost silently.
                self.junk += 1;
                self.pos = lt + 1;
                return Ok(Seek::Foreign(Fail(Box::new(FailAt {
                    kind: InputErrorKind::Syntax(format!(
                        "element <{name}> is not a record and is skipped: records are \
                         <record ...> elements, without a namespace prefix, in lower \
                         case (spec §11.2)"
                    )),
                    at: lt,
                    report_at: None,
                }))));
            }
            // Where an unterminated declaration or comment starts (the buffer may be
            // compacted past it while its end is searched for).
            let (line, column) = self.line_col(lt);
            let unterminated = |what| InputErrorKind::Unterminated { what, line, column };
            let found = if self.has_prefix(lt, b"<?xml")? {
                self.pos = lt + 5;
                self.skip_until(b"?>")? && {
                    self.pos += 2;
                    true
                }
            } else if self.has_prefix(lt, b"<!--")? {
                self.pos = lt + 4;
                self.skip_until(b"-->")? && {
                    self.pos += 3;
                    true
                }
            } else {
                self.junk += 1;
                self.pos = lt + 1;
                true
            };
            if !found {
                // Records after it would be lost without a word (§11.2 rule 11 cannot
                // resynchronise: the rest of the input is inside it).
                let what = if self.has_prefix(lt, b"<?xml")? {
                    "<?xml"
                } else {
                    "<!--"
                };
                return fail(unterminated(what), self.buf.len());
            }
        }
    }

    /// The name of the element starting at `lt` if it looks like a record but is not
    /// one: its name without a namespace prefix is `record` in any case (`<Record>`,
    /// `<snet:record>`). Other markup between records is skipped without a word.
    fn record_like(&mut self, lt: usize) -> Result<Option<String>, Fail> {
        const MAX: usize = 64;
        let mut end = lt + 1;
        loop {
            match self.byte(end)? {
                // (At the end of input: nothing to lose.)
                None => return Ok(None),
                b if ends_name(b) => break,
                _ if end - lt > MAX => return Ok(None),
                _ => end += 1,
            }
        }
        let name = &self.buf[lt + 1..end];
        let local = name.rsplit(|&b| b == b':').next().unwrap_or(name);
        if local.eq_ignore_ascii_case(b"record") {
            return Ok(Some(String::from_utf8_lossy(name).into_owned()));
        }
        Ok(None)
    }

    /// Advances `self.pos` to the next occurrence of `pat` (true), or to the end of
    /// input (false), compacting the buffer while searching.
    fn skip_until(&mut self, pat: &[u8]) -> Result<bool, Fail> {
        loop {
            self.compact();
            let rest = &self.buf[self.pos..];
            let hit = match pat {
                [b] => rest.iter().position(|c| c == b),
                _ => rest.windows(pat.len()).position(|w| w == pat),
            };
            if let Some(k) = hit {
                if self.counting_junk {
                    self.junk += count_non_ws(&rest[..k]);
                }
                self.pos += k;
                return Ok(true);
            }
            // Keep a possible partial match at the end of the buffer.
            let next = (self.buf.len() + 1).saturating_sub(pat.len()).max(self.pos);
            if self.counting_junk {
                self.junk += count_non_ws(&self.buf[self.pos..next]);
            }
            self.pos = next;
            if !self.fill()? {
                self.pos = self.buf.len();
                return Ok(false);
            }
        }
    }

    /// Parses the attributes of an element starting at `i` (just after its name) into
    /// `self.attrs`; returns whether the element is self-closing and the index after
    /// its `>`.
    fn parse_attrs(&mut self, i: usize, elem: &str) -> Result<(bool, usize), Fail> {
        if let Some(r) = attrs_in(&self.buf, i, &mut self.attrs) {
            return Ok(r);
        }
        self.parse_attrs_slow(i, elem)
    }

    /// [`XmlReader::parse_attrs`] byte by byte, reading more input as needed and
    /// naming what is wrong.
    #[inline(never)]
    fn parse_attrs_slow(&mut self, mut i: usize, elem: &str) -> Result<(bool, usize), Fail> {
        self.attrs.clear();
        loop {
            i = self.skip_ws(i)?;
            match self.byte(i)? {
                None => return syntax(format!("end of input inside <{elem} ...>"), i),
                Some(b'>') => return Ok((false, i + 1)),
                Some(b'/') => {
                    if self.byte(i + 1)? == Some(b'>') {
                        return Ok((true, i + 2));
                    }
                    return syntax(format!("`/` not followed by `>` in <{elem} ...>"), i);
                }
                Some(_) => {}
            }
            let name_start = i;
            while let Some(b) = self.byte(i)? {
                if is_ws(b) || matches!(b, b'=' | b'>' | b'/' | b'<' | b'"' | b'\'') {
                    break;
                }
                i += 1;
            }
            if i == name_start {
                return syntax(
                    format!("expected an attribute name or `>` in <{elem} ...>"),
                    i,
                );
            }
            let name = name_start..i;
            i = self.skip_ws(i)?;
            if self.byte(i)? != Some(b'=') {
                return syntax(
                    format!(
                        "attribute `{}` of <{elem}> has no value (`=` expected)",
                        self.text(&name)
                    ),
                    i,
                );
            }
            i = self.skip_ws(i + 1)?;
            let quote = match self.byte(i)? {
                Some(q @ (b'"' | b'\'')) => q,
                _ => {
                    return syntax(
                        format!(
                            "value of attribute `{}` of <{elem}> must be quoted with ' or \"",
                            self.text(&name)
                        ),
                        i,
                    )
                }
            };
            let vstart = i + 1;
            let mut j = vstart;
            loop {
                match self.byte(j)? {
                    Some(b) if b == quote => break,
                    Some(b'<') | None => {
                        return syntax(
                            format!(
                                "unterminated value of attribute `{}` of <{elem}>",
                                self.text(&name)
                            ),
                            j,
                        )
                    }
                    Some(_) => j += 1,
                }
            }
            self.attrs.push(Attr {
                name,
                value: vstart..j,
            });
            i = j + 1;
            // Attributes must be separated by white space; `a="1"b="2"` is accepted
            // leniently, as by the reference's lexer.
        }
    }

    /// The attributes of the `<record` start tag at `start`, checked (spec §11.2).
    fn record_header(&mut self, start: usize) -> Result<Header, Fail> {
        let (self_closing, after) = self.parse_attrs(start + b"<record".len(), "record")?;
        if let Some(ns) = self.attr(b"xmlns") {
            if ns != NAMESPACE.as_bytes() {
                let ns = String::from_utf8_lossy(ns).into_owned();
                return fail(InputErrorKind::Namespace(ns), start);
            }
        }
        match self.attr(b"type") {
            None => return fail(InputErrorKind::MissingType, start),
            Some(b"data") => {}
            Some(b"terminate") => return Ok(Header::Terminate(after)),
            Some(t) => {
                let t = String::from_utf8_lossy(t).into_owned();
                if RESERVED_TYPES.contains(&t.as_str()) {
                    return fail(InputErrorKind::ReservedType(t), start);
                }
                return fail(InputErrorKind::UnknownType(t), start);
            }
        }
        let mode = match self.attr(b"mode") {
            None | Some(b"binary") => DataMode::Binary,
            Some(b"textual") => DataMode::Textual,
            Some(m) => {
                let m = String::from_utf8_lossy(m).into_owned();
                return fail(InputErrorKind::UnknownMode(m), start);
            }
        };
        // Whether the record names its interface: it can only be C4SNet, the one
        // interface there is.
        let interface = match self.attr(b"interface") {
            None => false,
            Some(name) if name == INTERFACE.as_bytes() => true,
            Some(name) => {
                let name = String::from_utf8_lossy(name).into_owned();
                return fail(InputErrorKind::UnsupportedInterface(name), start);
            }
        };
        Ok(Header::Data {
            self_closing,
            after,
            mode,
            interface,
        })
    }

    /// Parses a record whose `<record` starts at `self.pos`.
    fn parse_record(&mut self) -> Result<Parsed, Fail> {
        let start = self.pos;
        let (self_closing, mut i, mode, mut interface) = match canonical_record(&self.buf, start) {
            Some((after, interface)) => (false, after, DataMode::Textual, interface),
            None => match self.record_header(start)? {
                Header::Data {
                    self_closing,
                    after,
                    mode,
                    interface,
                } => (self_closing, after, mode, interface),
                Header::Terminate(after) => {
                    // Nothing after a terminate record is read (rule 3).
                    self.pos = after;
                    return Ok(Parsed::Terminate);
                }
            },
        };
        let mut rec = Record::new();
        rec.mode = mode;
        self.seen.clear();
        if self_closing {
            self.pos = i;
            return Ok(Parsed::Data(rec));
        }
        loop {
            let Some(lt) = self.find_byte(i, b'<')? else {
                // Reported where this record starts, as an interrupted one is.
                let end = self.buf.len();
                let (line, column) = self.line_col(end);
                let msg = format!(
                    "end of input at line {line}, column {column} inside the record \
                     (missing </record>)"
                );
                return cut_short(msg, end, start);
            };
            i = lt;
            if self.has_prefix(i, b"<!--")? {
                match self.find_seq(i + 4, b"-->")? {
                    Some(e) => i = e + 3,
                    None => return syntax("unterminated comment inside a record", i),
                }
            } else if self.has_prefix(i, b"</record")? {
                let j = self.skip_ws(i + b"</record".len())?;
                if self.byte(j)? != Some(b'>') {
                    return syntax("malformed </record>", j);
                }
                self.pos = j + 1;
                return Ok(Parsed::Data(rec));
            } else if self.is_elem(i, b"<field")? {
                i = self.parse_field(i, &mut rec, &mut interface)?;
            } else if self.is_elem(i, b"<tag")? {
                i = self.parse_tag(i, &mut rec, false)?;
            } else if self.is_elem(i, b"<btag")? {
                i = self.parse_tag(i, &mut rec, true)?;
            } else if self.is_elem(i, b"<record")? {
                // Reported where this record starts (the user looks for the record that
                // lacks its end), naming where the next one starts.
                let (line, column) = self.line_col(i);
                let offset = self.base + i as u64;
                let msg = format!(
                    "a new <record> starts at line {line}, column {column} (byte {offset}) \
                     before its </record>"
                );
                return cut_short(msg, i, start);
            } else {
                // Name the element: `<` and what follows up to white space or `>`.
                let mut end = i + 1;
                while end < i + 32 && self.byte(end)?.is_some_and(|b| !is_ws(b) && b != b'>') {
                    end += 1;
                }
                let what = String::from_utf8_lossy(&self.buf[i..end]).into_owned();
                return syntax(
                    format!(
                        "unexpected `{what}` inside a record \
                         (expected <field>, <tag>, <btag> or </record>)"
                    ),
                    i,
                );
            }
        }
    }

    /// Expects `</NAME` white space `>` at `i`, closing the element of label `label`;
    /// returns the index after it.
    fn expect_close(&mut self, i: usize, name: &str, label: Label) -> Result<usize, Fail> {
        if self.has_prefix(i, b"</")? && self.has_prefix(i + 2, name.as_bytes())? {
            let j = self.skip_ws(i + 2 + name.len())?;
            if self.byte(j)? == Some(b'>') {
                return Ok(j + 1);
            }
        }
        syntax(
            format!("expected </{name}> to close {name} {}", label.name()),
            i,
        )
    }

    fn parse_field(
        &mut self,
        at: usize,
        rec: &mut Record,
        interface: &mut bool,
    ) -> Result<usize, Fail> {
        let (l, i) = match canonical_label(&self.buf, at + b"<field".len()) {
            // The canonical form; a field without an interface inside a record without
            // one takes the general path below for its message.
            Some((name, iface, after)) if iface || *interface => {
                *interface = true;
                (self.label_at(LabelKind::Field, name), after)
            }
            _ => self.field_header(at, interface)?,
        };
        if rec.mode == DataMode::Binary {
            let label = l.name().to_owned();
            return fail(InputErrorKind::BinaryUnsupported { label }, at);
        }
        let end = match self.find_byte(i, b'<')? {
            Some(e) => e,
            None => self.buf.len(),
        };
        let (value, end) = match parse_value(&self.buf[i..end]) {
            Ok((v, _used)) => (v, end),
            Err(error) => match self.raw_lt_chars(i, end)? {
                // A `char` array with a raw `<` among its bytes (spec §12.6, reading
                // rule 5: an element is any one byte).
                Some((v, close)) => (v, close),
                None => {
                    let off = i + error.offset;
                    let label = l.name().to_owned();
                    return fail(InputErrorKind::Value { label, error }, off);
                }
            },
        };
        let next = self.expect_close(end, "field", l)?;
        if self.is_new_label(rec, l) {
            rec.push_field(l, Some(value));
        } else {
            rec.set_field(l, Some(value));
        }
        Ok(next)
    }

    /// A `char` or `unsigned char` value at `i` that the first `<` (at `lt`) cut short
    /// because one of its elements is a raw `<` byte: read again up to the field's
    /// `</field`. Returns the value and the index of that `</field`, or `None` (not a
    /// char value, no `</field` ahead, or no better reading): the first error stands.
    fn raw_lt_chars(
        &mut self,
        i: usize,
        lt: usize,
    ) -> Result<Option<(snet_core::Value, usize)>, Fail> {
        let text = &self.buf[i..lt];
        if !(text.starts_with(b"(char") || text.starts_with(b"(unsigned char")) {
            return Ok(None);
        }
        let Some(close) = self.find_seq(lt, b"</field")? else {
            return Ok(None);
        };
        // Every byte up to `</field` is an element or a separator: the last element
        // is followed immediately by the `<` of `</field>`.
        Ok(parse_value_unescaped(&self.buf[i..close])
            .ok()
            .filter(|(_, used)| i + used == close)
            .map(|(v, _)| (v, close)))
    }

    /// The attributes of the `<field` start tag at `at`, checked: its label and the
    /// index after the tag; notes in `interface` that the record now names one.
    fn field_header(&mut self, at: usize, interface: &mut bool) -> Result<(Label, usize), Fail> {
        let (self_closing, i) = self.parse_attrs(at + b"<field".len(), "field")?;
        let Some(l) = self.attr_label(LabelKind::Field, at)? else {
            return fail(InputErrorKind::MissingLabel("field"), at);
        };
        if self_closing {
            let label = self.label_text();
            return fail(InputErrorKind::FieldWithoutValue { label }, at);
        }
        match self.attr(b"interface") {
            Some(f) if f == INTERFACE.as_bytes() => *interface = true,
            Some(f) => {
                let f = String::from_utf8_lossy(f).into_owned();
                if *interface {
                    return fail(
                        InputErrorKind::InterfaceMismatch {
                            record: INTERFACE.to_owned(),
                            field: f,
                        },
                        at,
                    );
                }
                return fail(InputErrorKind::UnsupportedInterface(f), at);
            }
            None if !*interface => {
                let label = self.label_text();
                return fail(InputErrorKind::NoInterface { label }, at);
            }
            None => {}
        }
        Ok((l, i))
    }

    /// The `label` attribute of the element just parsed, for a message.
    #[cold]
    fn label_text(&self) -> String {
        self.attr_string(b"label").unwrap_or_default()
    }

    fn parse_tag(&mut self, at: usize, rec: &mut Record, binding: bool) -> Result<usize, Fail> {
        let name = if binding { "btag" } else { "tag" };
        let kind = if binding {
            LabelKind::BTag
        } else {
            LabelKind::Tag
        };
        let (l, self_closing, i) = match canonical_label(&self.buf, at + 1 + name.len()) {
            Some((label, false, after)) => (self.label_at(kind, label), false, after),
            _ => {
                let (self_closing, i) = self.parse_attrs(at + 1 + name.len(), name)?;
                let Some(l) = self.attr_label(kind, at)? else {
                    return fail(InputErrorKind::MissingLabel(name), at);
                };
                (l, self_closing, i)
            }
        };
        let (value, next) = if self_closing {
            (0, i)
        } else {
            let Some(end) = self.find_byte(i, b'<')? else {
                let label = l.name();
                return syntax(
                    format!("end of input inside {name} {label}"),
                    self.buf.len(),
                );
            };
            let v = atoi(&self.buf[i..end]);
            (v, self.expect_close(end, name, l)?)
        };
        if self.is_new_label(rec, l) {
            rec.push_tag(l, value);
        } else {
            rec.set_tag(l, value);
        }
        Ok(next)
    }

    /// True if `rec` (the record being parsed) does not carry `l` yet; then `l` is
    /// about to be added. Linear in small records, hashed in large ones, so reading a
    /// record costs linear time in its number of labels.
    fn is_new_label(&mut self, rec: &Record, l: Label) -> bool {
        if rec.len() < LINEAR_LABELS {
            return !rec.has(l);
        }
        if self.seen.is_empty() {
            self.seen.extend(rec.labels());
        }
        self.seen.insert(l)
    }
}

impl<R: Read> Iterator for XmlReader<R> {
    type Item = Result<Record, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record()
    }
}

/// C `atoi` as glibc computes it: `(int) strtol(s, NULL, 10)` — leading white space,
/// optional sign, decimal digits up to the first non-digit, saturating at the `long`
/// range, then truncated to `int`; no digits give 0.
pub(crate) fn atoi(s: &[u8]) -> i32 {
    let mut i = 0;
    while s
        .get(i)
        .is_some_and(|&b| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
    {
        i += 1;
    }
    let mut negative = false;
    if let Some(&c @ (b'+' | b'-')) = s.get(i) {
        negative = c == b'-';
        i += 1;
    }
    let mut mag: u128 = 0;
    while let Some(&d) = s.get(i).filter(|b| b.is_ascii_digit()) {
        mag = (mag * 10 + u128::from(d - b'0')).min(1 << 80);
        i += 1;
    }
    // LP64: `long` is 64 bits.
    let (lo, hi) = (i64::MIN, i64::MAX);
    let x = if negative {
        if mag > u128::from(lo.unsigned_abs()) {
            lo
        } else {
            (mag as i128).wrapping_neg() as i64
        }
    } else if mag > hi as u128 {
        hi
    } else {
        mag as i64
    };
    x as i32
}
