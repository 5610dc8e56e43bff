//! `snet observe PORT`: a small client for socket observers (spec §13.1).
//!
//! Listens on 127.0.0.1:PORT, accepts the connections of running programs (one thread
//! each), and prints each report on one line on standard output:
//! `oid 0 inc after: {A=(int)7, <k>=1}` (field values only for `allvalues`). Every
//! report is acknowledged with `<observer oid="ID"/>`, which an interactive observer
//! waits for; a non-interactive one never reads its socket, so an acknowledgement that
//! would block is dropped instead. `--position` and `--label` filter what is printed
//! (everything is still acknowledged); `--count N` ends after N printed reports,
//! `--once` when the first connection closes.

use clap::Args;
use std::io::{BufRead, BufReader, Write};
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
                Some(v) => format!("{l}={v}"),
                None => l.clone(),
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

/// Parses one report document (the lines from `<observer` to `</observer>`).
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
    for line in doc.lines() {
        let line = line.trim();
        let kind = ["field", "tag", "btag"]
            .into_iter()
            .find(|k| line.starts_with(&format!("<{k} ")));
        let Some(kind) = kind else { continue };
        let Some(label) = attr(line, "label") else {
            continue;
        };
        let shown = match kind {
            "tag" => format!("<{label}>"),
            "btag" => format!("<#{label}>"),
            _ => label,
        };
        let value = line.find('>').and_then(|s| {
            let rest = &line[s + 1..];
            let e = rest.find("</")?;
            Some(unescape(&rest[..e]))
        });
        r.items.push((shown, value));
    }
    Some(r)
}

struct Shared {
    args: ObserveArgs,
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
        printed: AtomicU64::new(0),
        out: Mutex::new(std::io::stdout()),
    });
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let s = shared.clone();
        if shared.args.once {
            serve(conn, &s);
            return ExitCode::SUCCESS;
        }
        std::thread::spawn(move || serve(conn, &s));
    }
    ExitCode::SUCCESS
}

fn serve(conn: TcpStream, s: &Shared) {
    let Ok(mut ack) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    let mut doc = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        doc.push_str(&line);
        if line.trim_end() != "</observer>" {
            continue;
        }
        if let Some(r) = parse(&doc) {
            // An interactive observer waits for this; a non-interactive one never reads
            // it, so a full socket buffer drops the answer rather than blocking.
            let _ = ack.set_nonblocking(true);
            let _ = ack.write_all(format!("<observer oid=\"{}\"/>\n", r.oid).as_bytes());
            let _ = ack.set_nonblocking(false);
            if wanted(&r, &s.args) {
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
        doc.clear();
    }
}

fn wanted(r: &Report, args: &ObserveArgs) -> bool {
    (args.position.is_empty() || args.position.contains(&r.position))
        && (args.label.is_empty() || r.items.iter().any(|(l, _)| args.label.contains(l)))
}

#[cfg(test)]
mod tests {
    use super::*;

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
