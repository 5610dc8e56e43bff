//! `snet observe PORT`: a small client for socket observers (spec §13.1).
//!
//! Listens on 127.0.0.1:PORT, accepts the connections of running programs (one thread
//! each), and prints each report on one line on standard output:
//! `oid 0 inc after: {A=(int)7, <k>=1}` (field values only for `allvalues`). Every
//! report is acknowledged with `<observer oid="ID"/>`, which an interactive observer
//! waits for; a non-interactive one never reads its socket, so an acknowledgement that
//! would block is dropped instead. `--position` and `--label` filter what is printed
//! (everything is still acknowledged); `--count N` ends after N printed reports,
//! `--once` when the first connection closes (exit 1 if it ended with an error).
//!
//! Reports are found by their `</observer>`, not by lines: a value holding a newline
//! is printed with `\n` (control characters, and `\` itself, are escaped so that a
//! report stays on one line); bytes that are not UTF-8 are shown as U+FFFD; a
//! connection that sends more than [`MAX_REPORT`] bytes without a `</observer>` is
//! closed with an error on standard error, as is one whose read fails.

use clap::Args;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Arguments of `snet observe`.
#[derive(Debug, Args, Clone)]
pub(crate) struct ObserveArgs {
    /// TCP port to listen on (127.0.0.1), the `observer_port` of the program.
    pub(crate) port: u16,
    /// Print only reports of this box or net (repeatable).
    #[arg(long, value_name = "NAME")]
    pub(crate) position: Vec<String>,
    /// Print only reports of records with this label (`x`, `<t>` or `<#b>`; repeatable).
    #[arg(long, value_name = "LABEL")]
    pub(crate) label: Vec<String>,
    /// Stop after printing N reports (N ≥ 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) count: Option<u64>,
    /// Stop when the first connection closes (the observed run ended).
    #[arg(long)]
    pub(crate) once: bool,
}

/// One parsed report.
#[derive(Debug, Default, PartialEq)]
struct Report {
    oid: String,
    position: String,
    side: String,
    code: Option<String>,
    /// `(label as written, value)`.
    items: Vec<(String, Option<String>)>,
}

impl Report {
    fn show(&self) -> String {
        let items: Vec<String> = self
            .items
            .iter()
            .map(|(l, v)| match v {
                Some(v) => format!("{}={}", one_line(l), one_line(v)),
                None => one_line(l),
            })
            .collect();
        let code = self
            .code
            .as_ref()
            .map_or(String::new(), |c| format!(" [{c}]"));
        format!(
            "oid {} {} {}{code}: {{{}}}",
            self.oid,
            self.position,
            self.side,
            items.join(", ")
        )
    }
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let k = format!(" {name}=\"");
    let s = tag.find(&k)? + k.len();
    let e = tag[s..].find('"')?;
    Some(unescape(&tag[s..s + e]))
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// Parses one report document (from `<observer` to `</observer>`). Entries are found
/// as elements, not lines: a value may hold a newline.
fn parse(doc: &str) -> Option<Report> {
    let head_start = doc.find("<observer")?;
    let head = &doc[head_start..head_start + doc[head_start..].find('>')?];
    let mut r = Report {
        oid: attr(head, "oid")?,
        position: attr(head, "position").unwrap_or_default(),
        side: attr(head, "type").unwrap_or_default(),
        code: attr(head, "code"),
        items: Vec::new(),
    };
    let mut rest = &doc[head_start + head.len()..];
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt..];
        let kind = ["field", "tag", "btag"]
            .into_iter()
            .find(|k| rest[1..].starts_with(k) && rest[1 + k.len()..].starts_with([' ', '/', '>']));
        let Some(gt) = rest.find('>') else { break };
        let (tag, after) = (&rest[..gt + 1], &rest[gt + 1..]);
        rest = after;
        let Some(kind) = kind else { continue };
        let Some(label) = attr(tag, "label") else {
            continue;
        };
        let shown = match kind {
            "tag" => format!("<{label}>"),
            "btag" => format!("<#{label}>"),
            _ => label,
        };
        let value = if tag.ends_with("/>") {
            None
        } else {
            let close = format!("</{kind}>");
            let e = rest.find(&close)?;
            let v = unescape(&rest[..e]);
            rest = &rest[e + close.len()..];
            Some(v)
        };
        r.items.push((shown, value));
    }
    Some(r)
}

/// `v` on one line: a backslash, newline, carriage return, tab and other control
/// characters are written as `\\`, `\n`, `\r`, `\t` and `\xNN`.
fn one_line(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The largest report kept while its `</observer>` has not arrived: a peer that sends
/// more without one is not an observer, and its connection is closed.
const MAX_REPORT: usize = 256 << 20;

struct Shared {
    args: ObserveArgs,
    /// [`MAX_REPORT`] (smaller in tests).
    max_report: usize,
    printed: AtomicU64,
    out: Mutex<std::io::Stdout>,
}

/// Runs `snet observe`.
pub(crate) fn run(args: ObserveArgs) -> ExitCode {
    let listener = match TcpListener::bind(("127.0.0.1", args.port)) {
        Ok(l) => l,
        Err(e) => return super::fail(format!("cannot listen on 127.0.0.1:{}: {e}", args.port)),
    };
    // Port 0 asks the system for a free port: say which one it gave.
    let port = listener.local_addr().map_or(args.port, |a| a.port());
    eprintln!("snet observe: listening on 127.0.0.1:{port}");
    let shared = Arc::new(Shared {
        args,
        max_report: MAX_REPORT,
        printed: AtomicU64::new(0),
        out: Mutex::new(std::io::stdout()),
    });
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let s = shared.clone();
        if shared.args.once {
            return match serve(conn, &s) {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::from(1),
            };
        }
        std::thread::spawn(move || serve(conn, &s));
    }
    ExitCode::SUCCESS
}

/// Serves one connection until it closes; an error (a failed read, a report beyond
/// [`MAX_REPORT`]) is said on standard error and returned.
fn serve(conn: TcpStream, s: &Shared) -> Result<(), String> {
    let peer = conn
        .peer_addr()
        .map_or_else(|_| "a peer".to_owned(), |a| a.to_string());
    let mut ack = conn
        .try_clone()
        .map_err(|e| say(format!("connection from {peer}: {e}")))?;
    let mut conn = conn;
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    // Where the search for `</observer>` resumes.
    let mut from = 0;
    loop {
        let n = match conn.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(say(format!("connection from {peer}: {e}"))),
        };
        buf.extend_from_slice(&chunk[..n]);
        const END: &[u8] = b"</observer>";
        while let Some(at) = buf[from..].windows(END.len()).position(|w| w == END) {
            let end = from + at + END.len();
            // Reports are XML text; a byte that is not UTF-8 is shown replaced, never
            // a reason to drop the connection.
            let doc = String::from_utf8_lossy(&buf[..end]).into_owned();
            buf.drain(..end);
            from = 0;
            if let Some(r) = parse(&doc) {
                handle(&r, &mut ack, s);
            }
        }
        from = buf.len().saturating_sub(END.len() - 1);
        if buf.len() > s.max_report {
            return Err(say(format!(
                "connection from {peer}: more than {} bytes without `</observer>`: not an \
                 observer report; connection closed",
                s.max_report
            )));
        }
    }
}

/// Prints `msg` as an error of `snet observe` on standard error and returns it.
fn say(msg: String) -> String {
    eprintln!("snet observe: error: {msg}");
    msg
}

/// Acknowledges and (if wanted) prints one report.
fn handle(r: &Report, ack: &mut TcpStream, s: &Shared) {
    // An interactive observer waits for this; a non-interactive one never reads it, so
    // a full socket buffer drops the answer rather than blocking.
    let _ = ack.set_nonblocking(true);
    let _ = ack.write_all(format!("<observer oid=\"{}\"/>\n", r.oid).as_bytes());
    let _ = ack.set_nonblocking(false);
    if wanted(r, &s.args) {
        let n = s.printed.fetch_add(1, Ordering::Relaxed) + 1;
        {
            let mut out = s.out.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(out, "{}", r.show());
            let _ = out.flush();
        }
        if s.args.count.is_some_and(|c| n >= c) {
            std::process::exit(0);
        }
    }
}

fn wanted(r: &Report, args: &ObserveArgs) -> bool {
    (args.position.is_empty() || args.position.contains(&r.position))
        && (args.label.is_empty() || r.items.iter().any(|(l, _)| args.label.contains(l)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> ObserveArgs {
        ObserveArgs {
            port: 0,
            position: Vec::new(),
            label: Vec::new(),
            count: None,
            once: true,
        }
    }

    #[test]
    fn a_value_holding_a_newline_is_kept_and_shown_on_one_line() {
        let doc = "<observer oid=\"0\" position=\"p\" type=\"before\" >\n<record type=\"data\" mode=\"textual\" >\n<field label=\"s\" interface=\"C4SNet\" >(char[3])a,\n,\\</field>\n<tag label=\"t\" >1</tag>\n</record>\n</observer>\n";
        let r = parse(doc).unwrap();
        assert_eq!(r.show(), "oid 0 p before: {s=(char[3])a,\\n,\\\\, <t>=1}");
    }

    /// Serves one connection that sends `bytes`; returns the result, the reports
    /// printed and the answers the peer got.
    fn serve_bytes(bytes: Vec<u8>, max_report: usize) -> (Result<(), String>, u64, String) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let peer = std::thread::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            let _ = c.write_all(&bytes);
            let _ = c.shutdown(std::net::Shutdown::Write);
            let mut got = String::new();
            let _ = c.read_to_string(&mut got);
            got
        });
        let (conn, _) = l.accept().unwrap();
        let shared = Shared {
            args: args(),
            max_report,
            printed: AtomicU64::new(0),
            out: Mutex::new(std::io::stdout()),
        };
        let r = serve(conn, &shared);
        let printed = shared.printed.load(Ordering::Relaxed);
        (r, printed, peer.join().unwrap())
    }

    #[test]
    fn a_byte_that_is_not_utf8_keeps_the_connection_and_a_report_without_end_is_bounded() {
        let one = |v: &[u8]| {
            let mut d = b"<observer oid=\"1\" position=\"p\" type=\"after\" >\n<record type=\"data\" mode=\"textual\" >\n<field label=\"s\" >(unsigned char[1])".to_vec();
            d.extend_from_slice(v);
            d.extend_from_slice(b"</field>\n</record>\n</observer>\n");
            d
        };
        let mut bytes = one(&[0xff]);
        bytes.extend(one(b"x"));
        let (r, printed, acks) = serve_bytes(bytes, MAX_REPORT);
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(printed, 2);
        assert_eq!(acks, "<observer oid=\"1\"/>\n<observer oid=\"1\"/>\n");
        // No newline and no end: closed with an error once past the limit.
        let (r, printed, _) = serve_bytes(vec![b'x'; 1 << 20], 100_000);
        assert!(r.unwrap_err().contains("without `</observer>`"));
        assert_eq!(printed, 0);
    }

    #[test]
    fn a_report_prints_on_one_line_with_its_values() {
        let doc = "<?xml version=\"1.0\"?>\n<observer xmlns=\"snet-home.org\" oid=\"2\" position=\"inc\" type=\"after\" code=\"a&amp;b\" >\n<record type=\"data\" mode=\"textual\" >\n<field label=\"A\" interface=\"C4SNet\" >(int)7</field>\n<field label=\"B\" />\n<tag label=\"k\" >1</tag>\n<btag label=\"b\" />\n</record>\n</observer>\n";
        let r = parse(doc).unwrap();
        assert_eq!(
            r.show(),
            "oid 2 inc after [a&b]: {A=(int)7, B, <k>=1, <#b>}"
        );
        let mut args = ObserveArgs {
            port: 1,
            position: vec!["inc".into()],
            label: vec!["<k>".into()],
            count: None,
            once: false,
        };
        assert!(wanted(&r, &args));
        args.label = vec!["C".into()];
        assert!(!wanted(&r, &args));
    }
}
