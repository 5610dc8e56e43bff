//! Chrome / Perfetto trace-event JSON of box invocations per worker.
//!
//! Each worker records its invocations in a private buffer (no sharing on the hot
//! path); the buffers are written as one JSON document when the run ends. Load the file
//! in `ui.perfetto.dev` or `chrome://tracing`.

use std::io::{self, Write};
use std::sync::Arc;
use std::time::Instant;

/// What a trace event describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// A box invocation (a complete event with a duration).
    Box,
    /// A successful steal (an instant event).
    Steal,
    /// The worker parked (a complete event with a duration).
    Park,
}

/// One recorded event.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) kind: EventKind,
    pub(crate) name: Arc<str>,
    pub(crate) start_ns: u64,
    pub(crate) dur_ns: u64,
}

/// A worker's trace buffer.
#[derive(Debug)]
pub(crate) struct Tracer {
    epoch: Instant,
    pub(crate) events: Vec<Event>,
}

impl Tracer {
    /// A buffer whose timestamps count from `epoch`.
    pub(crate) fn new(epoch: Instant) -> Tracer {
        Tracer {
            epoch,
            events: Vec::new(),
        }
    }

    /// Nanoseconds since the epoch.
    #[inline]
    pub(crate) fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Records an event that started at `start_ns` and ends now.
    pub(crate) fn record(&mut self, kind: EventKind, name: &Arc<str>, start_ns: u64) {
        let end = self.now();
        self.events.push(Event {
            kind,
            name: name.clone(),
            start_ns,
            dur_ns: end.saturating_sub(start_ns),
        });
    }
}

fn json_str(out: &mut impl Write, s: &str) -> io::Result<()> {
    out.write_all(b"\"")?;
    for c in s.chars() {
        match c {
            '"' => out.write_all(b"\\\"")?,
            '\\' => out.write_all(b"\\\\")?,
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32)?,
            c => write!(out, "{c}")?,
        }
    }
    out.write_all(b"\"")
}

/// Writes the trace-event JSON of all workers' buffers (index = worker id = `tid`).
pub(crate) fn write_json(out: &mut impl Write, workers: &[Vec<Event>]) -> io::Result<()> {
    out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    let mut first = true;
    let mut sep = |out: &mut dyn Write| -> io::Result<()> {
        if !std::mem::take(&mut first) {
            out.write_all(b",\n")?;
        }
        Ok(())
    };
    for (tid, evs) in workers.iter().enumerate() {
        sep(out)?;
        write!(
            out,
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":{tid},\"args\":{{\"name\":\"worker {tid}\"}}}}"
        )?;
        for e in evs {
            sep(out)?;
            let ts = e.start_ns as f64 / 1000.0;
            let (ph, cat) = match e.kind {
                EventKind::Box => ("X", "box"),
                EventKind::Steal => ("i", "steal"),
                EventKind::Park => ("X", "park"),
            };
            out.write_all(b"{\"name\":")?;
            json_str(out, &e.name)?;
            write!(
                out,
                ",\"cat\":\"{cat}\",\"ph\":\"{ph}\",\"pid\":1,\"tid\":{tid},\"ts\":{ts:.3}"
            )?;
            if ph == "X" {
                write!(out, ",\"dur\":{:.3}", e.dur_ns as f64 / 1000.0)?;
            } else {
                out.write_all(b",\"s\":\"t\"")?;
            }
            out.write_all(b"}")?;
        }
    }
    out.write_all(b"\n]}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape() {
        let name: Arc<str> = Arc::from("fo\"o");
        let evs = vec![vec![
            Event {
                kind: EventKind::Box,
                name: name.clone(),
                start_ns: 1500,
                dur_ns: 2000,
            },
            Event {
                kind: EventKind::Steal,
                name,
                start_ns: 4000,
                dur_ns: 0,
            },
        ]];
        let mut out = Vec::new();
        write_json(&mut out, &evs).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(
            s.contains(
                r#""name":"fo\"o","cat":"box","ph":"X","pid":1,"tid":0,"ts":1.500,"dur":2.000"#
            ),
            "{s}"
        );
        assert!(s.contains(r#""ph":"i""#));
        assert!(s.trim_end().ends_with("]}"));
        assert_eq!(s.matches('{').count(), s.matches('}').count());
    }
}
