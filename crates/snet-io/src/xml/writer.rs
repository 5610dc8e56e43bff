//! Writer of the XML record format (spec §11.3), byte for byte:
//!
//! ```text
//! <?xml version="1.0" ?>⏎
//! <record xmlns="snet-home.org" type="data" mode="textual" >⏎
//! <field label="NAME" interface="C4SNet">VALUE</field>⏎     one line per field
//! <tag label="NAME">INT</tag>⏎                               one line per tag
//! <btag label="NAME">INT</btag>⏎                             one line per binding tag
//! </record>⏎
//! ```
//!
//! and `<?xml version="1.0" ?>⏎<record type="terminate" />⏎` at the end. Fields, tags
//! and binding tags are written in the record's insertion order. Labels are written as
//! they are (the reference does not escape them either).
//!
//! Binary mode: binary field encoding (§12.7) is not implemented. A binary-mode record
//! without fields is written with `mode="binary"` as the reference would; one with
//! fields is written in textual mode (values as §12.6 text, header `mode="textual"`),
//! so the output stays self-consistent and can be read back.
//!
//! Each record is formatted into one reused buffer and handed to the sink with a
//! single `write_all`. By default the sink is flushed after every record, as §11.3
//! requires; [`XmlWriter::set_flush_each_record`]`(false)` batches up to 64 KiB
//! instead (call [`XmlWriter::flush`] or [`XmlWriter::finish`]).

use crate::error::OutputError;
use snet_core::record::{DataMode, Record};
use snet_core::value::text::write_value;
use std::io::Write;

/// Pending bytes at which a non-flushing writer hands its buffer to the sink.
const BATCH: usize = 64 * 1024;

/// Writes records in the §11.3 format.
#[derive(Debug)]
pub struct XmlWriter<W: Write> {
    out: Option<W>,
    buf: Vec<u8>,
    flush_each: bool,
    records: u64,
}

impl<W: Write> XmlWriter<W> {
    /// A writer that flushes `out` after each record.
    pub fn new(out: W) -> XmlWriter<W> {
        XmlWriter {
            out: Some(out),
            buf: Vec::with_capacity(4096),
            flush_each: true,
            records: 0,
        }
    }

    /// Whether to flush after each record (default true, as §11.3 requires for
    /// streaming output). When false, output is batched until 64 KiB are pending.
    pub fn set_flush_each_record(&mut self, on: bool) {
        self.flush_each = on;
    }

    /// Number of data records written.
    pub fn records_written(&self) -> u64 {
        self.records
    }

    /// Writes one data record. A `NULL` field is an error and nothing of the record is
    /// written.
    pub fn write_record(&mut self, rec: &Record) -> Result<(), OutputError> {
        if let Some((l, _)) = rec.fields().iter().find(|(_, v)| v.is_none()) {
            return Err(OutputError::NullField {
                label: l.name().to_owned(),
                record: rec.describe(),
            });
        }
        format_record(rec, &mut self.buf);
        self.records += 1;
        if self.flush_each || self.buf.len() >= BATCH {
            self.drain(self.flush_each)?;
        }
        Ok(())
    }

    /// Writes pending bytes and flushes the sink.
    pub fn flush(&mut self) -> Result<(), OutputError> {
        self.drain(true)
    }

    /// Writes the terminate record, flushes, and returns the sink.
    pub fn finish(mut self) -> Result<W, OutputError> {
        self.buf
            .extend_from_slice(b"<?xml version=\"1.0\" ?>\n<record type=\"terminate\" />\n");
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

impl<W: Write> Drop for XmlWriter<W> {
    fn drop(&mut self) {
        // Best effort for a writer dropped without `finish`/`flush`; errors cannot be
        // reported from here.
        if !self.buf.is_empty() {
            let _ = self.drain(true);
        }
    }
}

/// Appends the §11.3 text of a data record (all fields must be non-NULL; a NULL field
/// is skipped).
pub(crate) fn format_record(rec: &Record, out: &mut Vec<u8>) {
    let binary = rec.mode == DataMode::Binary && rec.fields().is_empty();
    out.extend_from_slice(
        b"<?xml version=\"1.0\" ?>\n<record xmlns=\"snet-home.org\" type=\"data\" mode=\"",
    );
    out.extend_from_slice(if binary { b"binary" } else { b"textual" });
    out.extend_from_slice(b"\" >\n");
    for (l, v) in rec.fields() {
        let Some(v) = v else { continue };
        out.extend_from_slice(b"<field label=\"");
        out.extend_from_slice(l.name().as_bytes());
        out.extend_from_slice(b"\" interface=\"C4SNet\">");
        write_value(v, out);
        out.extend_from_slice(b"</field>\n");
    }
    for (l, v) in rec.tags() {
        out.extend_from_slice(b"<tag label=\"");
        out.extend_from_slice(l.name().as_bytes());
        out.extend_from_slice(b"\">");
        push_int(out, *v);
        out.extend_from_slice(b"</tag>\n");
    }
    for (l, v) in rec.btags() {
        out.extend_from_slice(b"<btag label=\"");
        out.extend_from_slice(l.name().as_bytes());
        out.extend_from_slice(b"\">");
        push_int(out, *v);
        out.extend_from_slice(b"</btag>\n");
    }
    out.extend_from_slice(b"</record>\n");
}

/// `%d`.
fn push_int(out: &mut Vec<u8>, v: i32) {
    let mut buf = [0u8; 11];
    let mut i = buf.len();
    let mut mag = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (mag % 10) as u8;
        mag /= 10;
        if mag == 0 {
            break;
        }
    }
    if v < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    out.extend_from_slice(&buf[i..]);
}
