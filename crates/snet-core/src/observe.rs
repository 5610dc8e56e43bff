//! Observers (spec §13.1): passive taps that report the records passing a box or net
//! boundary to a file or a TCP socket.
//!
//! # The protocol
//!
//! 1. **Lowering decides where.** The front end turns each `<observer />` of a box or
//!    net into an [`ObserverSpec`] and wraps the observed node in a serial composition
//!    with a pass-through node [`NodeKind::Observe`] in front of it (`before`), behind
//!    it (`after`) or both. A program without observers has no such node, so its
//!    records never pass one: the cost when absent is zero on the record path.
//! 2. **The run opens the targets once.** [`Observers::open`] runs when a
//!    [`crate::walk::Walker`] is made (once per run, on every engine): it opens (and
//!    truncates) each distinct `observer_file` once and connects each distinct socket
//!    address once. An unreachable socket or an unwritable file is reported once on
//!    standard error (spec §13.1 asks for exactly that) and the observer is ignored:
//!    the run goes on.
//! 3. **A record passing an observe node is reported inline**, by the thread that walks
//!    it, like a filter (decisions item 8): the report is formatted, then written to
//!    the target under the target's lock, so reports of one observer appear in the
//!    order its records pass and a report is never torn by another. The record then
//!    walks on unchanged.
//! 4. **Interactive observers** (sockets only) keep the target's lock after writing and
//!    read until the peer answers `<observer oid="ID"/>` for this observer (an
//!    `<?xml ...?>` prolog or other text before it is skipped, and so are answers for
//!    the other observers reporting on the same connection, e.g. to their reports
//!    that are not interactive). Only the walking record waits; after
//!    [`ACK_PATIENCE`] without an answer it says so on standard error (once per
//!    connection) and waits on. The wait ends with an error, and the observer is then
//!    disabled with one warning as for an unreachable one, when the peer closes the
//!    connection, answers for an observer that does not report on this connection
//!    (a wrong oid), or sends [`ACK_GARBAGE`] bytes without an answer (garbage; what
//!    is kept of it while waiting is bounded by that too).
//! 5. **Failures never stop the run.** A write error disables that target (one
//!    warning); the record stream is never changed, reordered or delayed beyond the
//!    interactive wait (spec §13.1). So reports to a socket that are not interactive
//!    are written without blocking: what the peer does not take yet waits in a buffer
//!    of at most [`SOCKET_BACKLOG`] bytes, reports beyond it are dropped (one warning),
//!    and what is left is sent at the end of the run, waiting at most
//!    [`SOCKET_LINGER`] for a peer that does not read. An interactive report first
//!    sends the buffer, blocking: its wait is allowed.
//!
//! Control records do not travel through the network in this implementation (the end
//! of the input ends the run), so only data records are reported.

use crate::net::{Net, NodeKind};
use crate::record::Record;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Which side of the observed box or net an observer sits on (`observer_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Records entering.
    Before,
    /// Records leaving.
    After,
}

impl Side {
    /// `before` or `after`, as in a report.
    pub fn name(self) -> &'static str {
        match self {
            Side::Before => "before",
            Side::After => "after",
        }
    }
}

/// How much of a record a report shows (`observer_data`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Labels only.
    Labels,
    /// Labels, tag and binding-tag values (the default).
    TagValues,
    /// Also field values, in their C4SNet textual form.
    AllValues,
}

/// Where reports go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// Appended to a file, truncated when the run starts (`observer_file`).
    File(PathBuf),
    /// Sent over TCP (`observer_address`, `observer_port`).
    Socket {
        /// Host name or address.
        address: String,
        /// Port.
        port: u16,
    },
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::File(p) => write!(f, "file {}", p.display()),
            Target::Socket { address, port } => write!(f, "socket {address}:{port}"),
        }
    }
}

/// One observer, as declared in the program's metadata (spec §13.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObserverSpec {
    /// Observer id: observers are numbered from 0 in the order lowering creates them.
    pub oid: u32,
    /// The observed box or net name.
    pub position: String,
    /// Entering or leaving records.
    pub side: Side,
    /// What a report shows.
    pub detail: Detail,
    /// Text copied into each report (`observer_code`).
    pub code: Option<String>,
    /// Where reports go.
    pub target: Target,
    /// Wait for the peer's acknowledgement after each report (sockets only).
    pub interactive: bool,
}

/// An open report target, shared by every observer that names it.
#[derive(Debug)]
struct Sink {
    target: Target,
    /// The observers reporting to this target.
    oids: Vec<u32>,
    conn: Mutex<Conn>,
    /// Set once the target failed; later reports are dropped.
    dead: AtomicBool,
}

#[derive(Debug)]
enum Conn {
    File(std::io::BufWriter<std::fs::File>),
    Socket(Socket),
}

/// Bytes of reports a socket observer's peer has not taken yet that are kept; reports
/// beyond them are dropped (protocol step 5).
pub const SOCKET_BACKLOG: usize = 4 << 20;
/// How long the end of a run waits for a socket observer's peer to take what is left.
pub const SOCKET_LINGER: Duration = Duration::from_secs(2);

/// How long an interactive report waits for its answer before saying so (the wait goes
/// on: spec §13.1 has no timeout).
pub const ACK_PATIENCE: Duration = Duration::from_secs(10);
/// Bytes a peer may send without a single acknowledgement before the wait for one ends
/// with an error.
pub const ACK_GARBAGE: usize = 64 << 10;

/// A socket target: the stream, bytes read past an acknowledgement, reports not sent
/// yet, and whether the stream is in non-blocking mode.
#[derive(Debug)]
struct Socket {
    s: TcpStream,
    acks: Vec<u8>,
    out: Vec<u8>,
    nonblocking: bool,
    dropped: u64,
    /// Whether a slow acknowledgement was said already (once per connection).
    said_slow: bool,
}

impl Socket {
    fn blocking(&mut self, on: bool) -> std::io::Result<()> {
        if self.nonblocking == on {
            self.s.set_nonblocking(!on)?;
            self.nonblocking = !on;
        }
        Ok(())
    }

    /// Sends what it can of `out` without blocking.
    fn push(&mut self) -> std::io::Result<()> {
        self.blocking(false)?;
        while !self.out.is_empty() {
            match self.s.write(&self.out) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.out.drain(..n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// A report that is not interactive (protocol step 5); true if it was dropped.
    fn report(&mut self, doc: &[u8]) -> std::io::Result<bool> {
        if self.out.len() + doc.len() > SOCKET_BACKLOG {
            self.push()?;
            if self.out.len() + doc.len() > SOCKET_BACKLOG {
                self.dropped += 1;
                return Ok(true);
            }
        }
        self.out.extend_from_slice(doc);
        self.push()?;
        Ok(false)
    }

    /// An interactive report: everything before it, then it, then the wait.
    fn report_and_wait(
        &mut self,
        doc: &[u8],
        oid: u32,
        target: &Target,
        oids: &[u32],
    ) -> std::io::Result<()> {
        self.blocking(true)?;
        let out = std::mem::take(&mut self.out);
        self.s.write_all(&out)?;
        self.s.write_all(doc)?;
        let _ = self.s.set_read_timeout(Some(ACK_PATIENCE));
        let said = &mut self.said_slow;
        let r = await_ack(&mut self.s, &mut self.acks, oid, oids, &mut || {
            if !*said {
                *said = true;
                warn(&format!(
                    "observer {} ({}): no acknowledgement from the peer after {} s; the \
                     record waits for it (an interactive observer)",
                    oid,
                    target,
                    ACK_PATIENCE.as_secs()
                ));
            }
        });
        let _ = self.s.set_read_timeout(None);
        r
    }
}

impl Drop for Socket {
    /// Sends what is left, waiting at most [`SOCKET_LINGER`] for the peer.
    fn drop(&mut self) {
        if self.out.is_empty() || self.blocking(true).is_err() {
            return;
        }
        let _ = self.s.set_write_timeout(Some(SOCKET_LINGER));
        let _ = self.s.write_all(&self.out);
    }
}

/// Where a node other than 0 of a distributed run sends a report: to node 0, with the
/// observer id.
pub type Forward = Arc<dyn Fn(u32, Vec<u8>) + Send + Sync>;

/// The observers of one run: each observer's open target, by observer id.
#[derive(Default)]
pub struct Observers {
    sinks: Vec<Option<Arc<Sink>>>,
    /// A distributed run's node other than 0: reports go to node 0, which writes them
    /// (one file, one connection per target for the whole run).
    forward: Option<Forward>,
    /// Whether each observer (by id) is interactive (for forwarded reports).
    interactive: Vec<bool>,
}

impl std::fmt::Debug for Observers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observers")
            .field("sinks", &self.sinks)
            .field("forwarding", &self.forward.is_some())
            .finish()
    }
}

impl Observers {
    /// Opens the targets of every observer of `net` (protocol step 2). Without
    /// observers it allocates nothing.
    pub fn open(net: &Net) -> Observers {
        let specs: Vec<&ObserverSpec> = net
            .nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Observe(s) => Some(&**s),
                _ => None,
            })
            .collect();
        if specs.is_empty() {
            return Observers::default();
        }
        let n = specs.iter().map(|s| s.oid as usize + 1).max().unwrap_or(0);
        let mut sinks: Vec<Option<Arc<Sink>>> = vec![None; n];
        let mut interactive = vec![false; n];
        for s in &specs {
            interactive[s.oid as usize] = s.interactive;
        }
        // Each distinct target once, with the observers that report to it.
        let mut targets: Vec<(&Target, Vec<u32>)> = Vec::new();
        for s in &specs {
            match targets.iter_mut().find(|(t, _)| **t == s.target) {
                Some((_, oids)) => oids.push(s.oid),
                None => targets.push((&s.target, vec![s.oid])),
            }
        }
        for (target, oids) in targets {
            let sink = connect(target, oids.clone()).map(Arc::new);
            for oid in oids {
                sinks[oid as usize] = sink.clone();
            }
        }
        Observers {
            sinks,
            forward: None,
            interactive,
        }
    }

    /// The observers of a distributed run's node other than 0: nothing is opened here;
    /// each report is formatted and handed to `forward` (with the observer id), which
    /// sends it to node 0 (see [`Observers::write_forwarded`]).
    pub fn forwarding(net: &Net, forward: Forward) -> Observers {
        let any = net
            .nodes
            .iter()
            .any(|n| matches!(n.kind, NodeKind::Observe(_)));
        Observers {
            sinks: Vec::new(),
            forward: any.then_some(forward),
            interactive: Vec::new(),
        }
    }

    /// Node 0 of a distributed run: writes a report another node formatted for
    /// observer `oid` to its target (an interactive observer waits for the answer
    /// here, on node 0; the record on the other node has gone on).
    pub fn write_forwarded(&self, oid: u32, doc: &[u8]) {
        let Some(Some(sink)) = self.sinks.get(oid as usize) else {
            return;
        };
        let interactive = self.interactive.get(oid as usize).copied().unwrap_or(false);
        write_doc(sink, oid, interactive, doc);
    }

    /// Reports `rec` passing observer `spec` (protocol steps 3-5). Never inlined (and
    /// cold): formatting and writing a report dwarf a call, and inlined into the walk it
    /// made the walk of programs without observers larger and slower.
    #[cold]
    #[inline(never)]
    pub fn report(&self, spec: &ObserverSpec, rec: &Record) {
        if let Some(f) = &self.forward {
            f(spec.oid, format_report(spec, rec));
            return;
        }
        let Some(Some(sink)) = self.sinks.get(spec.oid as usize) else {
            return;
        };
        let doc = format_report(spec, rec);
        write_doc(sink, spec.oid, spec.interactive, &doc);
    }
}

/// Writes one formatted report to `sink` (protocol steps 3-5).
fn write_doc(sink: &Sink, oid: u32, interactive: bool, doc: &[u8]) {
    {
        if sink.dead.load(Ordering::Relaxed) {
            return;
        }
        let mut conn = match sink.conn.lock() {
            Ok(c) => c,
            Err(e) => e.into_inner(),
        };
        let r = match &mut *conn {
            Conn::File(f) => f.write_all(doc).and_then(|()| f.flush()),
            Conn::Socket(s) if interactive => s.report_and_wait(doc, oid, &sink.target, &sink.oids),
            Conn::Socket(s) => s.report(doc).map(|dropped| {
                if dropped && s.dropped == 1 {
                    warn(&format!(
                        "observer {} ({}): the peer does not take the reports as fast as \
                         they come; reports beyond {} MiB not yet taken are dropped (the \
                         run is not held up)",
                        oid,
                        sink.target,
                        SOCKET_BACKLOG >> 20
                    ));
                }
            }),
        };
        if let Err(e) = r {
            if !sink.dead.swap(true, Ordering::Relaxed) {
                warn(&format!(
                    "observer {} ({}): {e}; its reports are dropped from now on",
                    oid, sink.target
                ));
            }
        }
    }
}

/// Prints a warning on standard error: spec §13.1 asks for an unreachable observer to be
/// reported there once, while the run goes on (not an error value: nothing fails).
fn warn(msg: &str) {
    eprintln!("warning: {msg}");
}

fn connect(target: &Target, oids: Vec<u32>) -> Option<Sink> {
    let conn = match target {
        Target::File(p) => match std::fs::File::create(p) {
            Ok(f) => Conn::File(std::io::BufWriter::new(f)),
            Err(e) => {
                warn(&format!(
                    "cannot open the observer file {}: {e}; the observer is ignored",
                    p.display()
                ));
                return None;
            }
        },
        Target::Socket { address, port } => match TcpStream::connect((address.as_str(), *port)) {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                Conn::Socket(Socket {
                    s,
                    acks: Vec::new(),
                    out: Vec::new(),
                    nonblocking: false,
                    dropped: 0,
                    said_slow: false,
                })
            }
            Err(e) => {
                warn(&format!(
                        "cannot connect to the observer at {address}:{port}: {e}; the observer is ignored"
                    ));
                return None;
            }
        },
    };
    Some(Sink {
        target: target.clone(),
        oids,
        conn: Mutex::new(conn),
        dead: AtomicBool::new(false),
    })
}

/// Reads from `s` until `<observer oid="ID"/>` for `oid` arrives (protocol step 4).
/// `buf` keeps bytes read past an answer for the next wait. Answers for the other
/// observers in `oids` are skipped; one for an observer not in `oids`, or
/// [`ACK_GARBAGE`] bytes without any answer, end the wait with an error. A read that
/// times out (the caller sets the stream's read timeout) calls `waiting` and reads on.
fn await_ack(
    s: &mut impl Read,
    buf: &mut Vec<u8>,
    oid: u32,
    oids: &[u32],
    waiting: &mut dyn FnMut(),
) -> std::io::Result<()> {
    let bad = |msg: String| std::io::Error::new(std::io::ErrorKind::InvalidData, msg);
    // Bytes received since the last answer (or the start of this wait).
    let mut unanswered = buf.len();
    loop {
        while let Some(start) = find(buf, b"<observer") {
            let Some(len) = find(&buf[start..], b">") else {
                break;
            };
            let end = start + len + 1;
            let tag = String::from_utf8_lossy(&buf[start..end]).into_owned();
            buf.drain(..end);
            let answered = ack_oid(&tag);
            match answered {
                Some(a) if a == oid => return Ok(()),
                Some(a) if oids.contains(&a) => unanswered = buf.len(),
                Some(a) => {
                    return Err(bad(format!(
                        "the peer acknowledged observer {a}, which does not report on this \
                         connection, while observer {oid} waited for its answer"
                    )))
                }
                // Not an answer: skipped like other text (and counted).
                None => {}
            }
        }
        if unanswered >= ACK_GARBAGE {
            return Err(bad(format!(
                "the peer sent {unanswered} bytes without an acknowledgement \
                 (`<observer oid=\"{oid}\"/>` expected)"
            )));
        }
        // Text before a possible answer is skipped; keep only what may start one.
        if find(buf, b"<observer").is_none() {
            let keep = buf.len().min(b"<observer".len() - 1);
            buf.drain(..buf.len() - keep);
        }
        let mut chunk = [0u8; 4096];
        let n = match s.read(&mut chunk) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                waiting();
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the peer closed the connection before acknowledging a report",
            ));
        }
        unanswered += n;
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The observer an answer `<observer oid="ID"/>` (or `oid='ID'`) is for, if `tag` is one.
fn ack_oid(tag: &str) -> Option<u32> {
    let rest = &tag[tag.find("oid=")? + 4..];
    let q = rest.chars().next().filter(|&c| c == '"' || c == '\'')?;
    let rest = &rest[1..];
    rest[..rest.find(q)?].trim().parse().ok()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The report document of `rec` passing `spec` (spec §13.1's shape).
pub fn format_report(spec: &ObserverSpec, rec: &Record) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"<?xml version=\"1.0\"?>\n<observer xmlns=\"snet-home.org\" oid=\"");
    out.extend_from_slice(spec.oid.to_string().as_bytes());
    out.extend_from_slice(b"\" position=\"");
    escape(spec.position.as_bytes(), &mut out);
    out.extend_from_slice(b"\" type=\"");
    out.extend_from_slice(spec.side.name().as_bytes());
    out.push(b'"');
    if let Some(code) = &spec.code {
        out.extend_from_slice(b" code=\"");
        escape(code.as_bytes(), &mut out);
        out.push(b'"');
    }
    out.extend_from_slice(b" >\n<record type=\"data\" mode=\"textual\" >\n");
    for (l, v) in rec.fields() {
        out.extend_from_slice(b"<field label=\"");
        out.extend_from_slice(l.name().as_bytes());
        match (spec.detail, v) {
            (Detail::AllValues, Some(v)) => {
                out.extend_from_slice(b"\" interface=\"C4SNet\" >");
                // The textual C4SNet form as the global output writes it (spec §12.6:
                // it already writes `<` and `&` of characters as entities; escaping it
                // again turned `&lt;` into `&amp;lt;`).
                crate::value::text::write_value(v, &mut out);
                out.extend_from_slice(b"</field>\n");
            }
            _ => out.extend_from_slice(b"\" />\n"),
        }
    }
    for (kind, list) in [("tag", rec.tags()), ("btag", rec.btags())] {
        for (l, v) in list {
            out.extend_from_slice(format!("<{kind} label=\"{}\"", l.name()).as_bytes());
            if spec.detail == Detail::Labels {
                out.extend_from_slice(b" />\n");
            } else {
                out.extend_from_slice(format!(" >{v}</{kind}>\n").as_bytes());
            }
        }
    }
    out.extend_from_slice(b"</record>\n</observer>\n");
    out
}

/// XML-escapes `s` into `out` (`&`, `<`, `>`, `"`).
fn escape(s: &[u8], out: &mut Vec<u8>) {
    for &b in s {
        match b {
            b'&' => out.extend_from_slice(b"&amp;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            _ => out.push(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn spec(detail: Detail, code: Option<&str>) -> ObserverSpec {
        ObserverSpec {
            oid: 3,
            position: "dec".into(),
            side: Side::After,
            detail,
            code: code.map(str::to_owned),
            target: Target::File("x".into()),
            interactive: false,
        }
    }

    fn rec() -> Record {
        Record::new()
            .with_field("A", Value::int(7))
            .with_tag("T", 2)
            .with_btag("B", 1)
    }

    #[test]
    fn report_with_all_values_has_the_spec_shape() {
        let doc = format_report(&spec(Detail::AllValues, Some("a<b")), &rec());
        assert_eq!(
            String::from_utf8(doc).unwrap(),
            "<?xml version=\"1.0\"?>\n\
             <observer xmlns=\"snet-home.org\" oid=\"3\" position=\"dec\" type=\"after\" code=\"a&lt;b\" >\n\
             <record type=\"data\" mode=\"textual\" >\n\
             <field label=\"A\" interface=\"C4SNet\" >(int)7</field>\n\
             <tag label=\"T\" >2</tag>\n\
             <btag label=\"B\" >1</btag>\n\
             </record>\n\
             </observer>\n"
        );
    }

    #[test]
    fn a_field_value_is_reported_in_the_textual_form_the_output_writes() {
        // `a`, `<`, `"`: the textual form writes `<` as `&lt;` (spec §12.6), and the
        // report carries that text as the global output does, not escaped again.
        let rec = Record::new().with_field("S", Value::string("a<\""));
        let doc = String::from_utf8(format_report(&spec(Detail::AllValues, None), &rec)).unwrap();
        let mut out = Vec::new();
        crate::value::text::write_value(
            rec.field(crate::Label::field("S"))
                .unwrap()
                .as_ref()
                .unwrap(),
            &mut out,
        );
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "(char[3])a,&lt;,\"");
        assert!(
            doc.contains(&format!(
                "<field label=\"S\" interface=\"C4SNet\" >{text}</field>"
            )),
            "{doc}"
        );
    }

    #[test]
    fn report_with_labels_only_has_no_values() {
        let doc = String::from_utf8(format_report(&spec(Detail::Labels, None), &rec())).unwrap();
        assert!(doc.contains("<field label=\"A\" />\n<tag label=\"T\" />\n<btag label=\"B\" />\n"));
        assert!(!doc.contains("code="));
        let tv = String::from_utf8(format_report(&spec(Detail::TagValues, None), &rec())).unwrap();
        assert!(tv.contains("<field label=\"A\" />\n<tag label=\"T\" >2</tag>\n"));
    }

    /// A peer's answers, read in chunks, with `WouldBlock` (a read timeout) once at
    /// `stall`.
    struct Peer {
        data: Vec<u8>,
        at: usize,
        stall: Option<usize>,
    }

    impl Read for Peer {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.stall == Some(self.at) {
                self.stall = None;
                return Err(std::io::ErrorKind::WouldBlock.into());
            }
            let n = out.len().min(self.data.len() - self.at).min(10);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn wait(data: &[u8], stall: Option<usize>) -> (std::io::Result<()>, usize, usize) {
        let mut peer = Peer {
            data: data.to_vec(),
            at: 0,
            stall,
        };
        let mut buf = Vec::new();
        let mut waited = 0;
        let r = await_ack(&mut peer, &mut buf, 2, &[1, 2], &mut || waited += 1);
        (r, waited, buf.len())
    }

    #[test]
    fn an_interactive_wait_ends_on_a_wrong_oid_on_garbage_and_says_when_it_is_long() {
        // A prolog, an answer for another observer of the connection, then ours.
        let (r, waited, _) = wait(
            b"<?xml version=\"1.0\"?>\n<observer oid=\"1\"/>\n<observer oid='2'/>",
            Some(30),
        );
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(waited, 1, "a timed-out read is said, and the wait goes on");
        // An answer for an observer that does not report here: an error.
        let (r, _, _) = wait(b"<observer oid=\"7\"/>", None);
        let e = r.unwrap_err().to_string();
        assert!(e.contains("acknowledged observer 7"), "{e}");
        // Garbage without an answer ends the wait, and what is kept stays small.
        let junk = vec![b'x'; 3 * ACK_GARBAGE];
        let (r, _, kept) = wait(&junk, None);
        let e = r.unwrap_err().to_string();
        assert!(e.contains("without an acknowledgement"), "{e}");
        assert!(kept < 64, "{kept}");
        // An answer that never closes: bounded too.
        let mut open = b"<observer oid=\"2\"".to_vec();
        open.extend(vec![b' '; 2 * ACK_GARBAGE]);
        let (r, _, kept) = wait(&open, None);
        assert!(r.is_err());
        assert!(kept <= ACK_GARBAGE + 4096, "{kept}");
        // The end of the stream.
        let (r, _, _) = wait(b"<observer oid=\"1\"/>", None);
        assert_eq!(r.unwrap_err().kind(), std::io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn a_socket_observer_whose_peer_does_not_read_never_holds_up_the_run() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        // The peer accepts and then reads nothing until told to.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let peer = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let _ = rx.recv();
            let mut all = Vec::new();
            let _ = c.read_to_end(&mut all);
            all
        });
        let mut sp = spec(Detail::AllValues, None);
        sp.target = Target::Socket {
            address: "127.0.0.1".into(),
            port,
        };
        let sink = connect(&sp.target, vec![3]).expect("connects");
        let obs = Observers {
            sinks: vec![None, None, None, Some(Arc::new(sink))],
            ..Default::default()
        };
        let r = rec();
        let one = format_report(&sp, &r).len();
        // Far more than the peer's socket buffers and the backlog hold.
        let n = 3 * SOCKET_BACKLOG / one;
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let reporter = std::thread::spawn(move || {
            for _ in 0..n {
                obs.report(&sp, &r);
            }
            done_tx.send(()).unwrap();
            obs
        });
        done_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("reporting did not block on a peer that does not read");
        let obs = reporter.join().unwrap();
        tx.send(()).unwrap();
        drop(obs); // sends what is left (the peer reads now)
        let got = peer.join().unwrap();
        assert!(
            got.len() >= SOCKET_BACKLOG,
            "the backlog reached the peer: {}",
            got.len()
        );
        assert_eq!(got.len() % one, 0, "whole reports only");
        assert!(got.len() < n * one, "the rest was dropped");
    }
}
