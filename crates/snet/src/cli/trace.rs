//! `snet trace`: a summary of a Chrome/Perfetto trace written by `snet run --trace`
//! (front: one event per box invocation, steals and parks; lpel: one event per task
//! dispatch and stream fill counters): per worker busy time, per box or task the
//! number of events and their total, mean and longest duration, instant events and
//! counter maxima. For the timeline itself, open the file in ui.perfetto.dev.

use super::fail;
use clap::Args;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `snet trace`.
#[derive(Debug, Args)]
pub(crate) struct TraceArgs {
    /// A trace-event JSON file (`snet run --trace FILE.json`).
    #[arg(value_name = "FILE.json")]
    file: PathBuf,
    /// Names listed in the per-name table (by total time).
    #[arg(long, default_value_t = 20, value_name = "N")]
    top: usize,
}

/// Totals of the complete events (`"ph":"X"`) of one worker or one name.
#[derive(Debug, Default, Clone, PartialEq)]
struct Totals {
    events: u64,
    /// Sum of durations, µs.
    total: f64,
    /// Longest duration, µs.
    max: f64,
}

impl Totals {
    fn add(&mut self, dur: f64) {
        self.events += 1;
        self.total += dur;
        self.max = self.max.max(dur);
    }
}

/// What a trace contains, summed.
#[derive(Debug, Default)]
struct Summary {
    /// First event start and last event end, µs.
    span: Option<(f64, f64)>,
    /// Complete events per thread id (without parks).
    workers: HashMap<i64, Totals>,
    /// Time each thread spent parked (front's `park` events), µs.
    parked: HashMap<i64, f64>,
    /// Thread names from metadata events.
    worker_names: HashMap<i64, String>,
    /// Complete events per (category, name).
    names: HashMap<(String, String), Totals>,
    /// Instant events per name.
    instants: HashMap<String, u64>,
    /// Largest value of every counter series, keyed "counter name.argument".
    counters: HashMap<String, f64>,
}

/// Sums the events of a trace (either `{"traceEvents": [...]}` or a bare array).
fn summarise(trace: &Json) -> Result<Summary, String> {
    let events = match trace {
        Json::Array(a) => a,
        Json::Object(o) => match o.get("traceEvents") {
            Some(Json::Array(a)) => a,
            _ => return Err("the JSON object has no \"traceEvents\" array".into()),
        },
        _ => return Err("a trace is a JSON array or an object with \"traceEvents\"".into()),
    };
    let mut s = Summary::default();
    for (i, e) in events.iter().enumerate() {
        let bad = |what: &str| format!("trace event {i}: {what}: {e}");
        let ph = e
            .get("ph")
            .and_then(Json::as_str)
            .ok_or_else(|| bad("no \"ph\""))?;
        let name = e
            .get("name")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let tid = e.get("tid").and_then(Json::as_i64).unwrap_or(0);
        let ts = e.get("ts").and_then(Json::as_f64);
        match ph {
            "X" => {
                let ts = ts.ok_or_else(|| bad("complete event without \"ts\""))?;
                let dur = e
                    .get("dur")
                    .and_then(Json::as_f64)
                    .ok_or_else(|| bad("complete event without \"dur\""))?;
                let cat = e
                    .get("cat")
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .to_string();
                if cat == "park" {
                    *s.parked.entry(tid).or_default() += dur;
                } else {
                    s.workers.entry(tid).or_default().add(dur);
                }
                s.names.entry((cat, name)).or_default().add(dur);
                s.extend_span(ts, ts + dur);
            }
            "i" | "I" => {
                *s.instants.entry(name).or_default() += 1;
                if let Some(ts) = ts {
                    s.extend_span(ts, ts);
                }
            }
            "C" => {
                if let Some(Json::Object(args)) = e.get("args") {
                    for (k, v) in args {
                        if let Some(v) = v.as_f64() {
                            let m = s.counters.entry(format!("{name}.{k}")).or_insert(v);
                            *m = m.max(v);
                        }
                    }
                }
                if let Some(ts) = ts {
                    s.extend_span(ts, ts);
                }
            }
            "M" if name == "thread_name" => {
                if let Some(n) = e.pointer("/args/name").and_then(Json::as_str) {
                    s.worker_names.insert(tid, n.to_string());
                }
            }
            _ => {}
        }
    }
    Ok(s)
}

impl Summary {
    fn extend_span(&mut self, from: f64, to: f64) {
        self.span = Some(match self.span {
            None => (from, to),
            Some((a, b)) => (a.min(from), b.max(to)),
        });
    }

    fn print(&self, file: &str, top: usize) {
        let span = self.span.map_or(0.0, |(a, b)| b - a);
        let events: u64 = self.workers.values().map(|t| t.events).sum();
        println!(
            "{file}: {events} timed events on {} worker(s) over {:.6} s",
            self.workers.len(),
            span / 1e6
        );
        if events == 0 {
            println!(
                "(events are box invocations: this run invoked no box, e.g. a program of \
                 filters and synchrocells only, which run inline as records walk; \
                 `snet run --stats` counts its records)"
            );
        }
        println!(
            "{:<12} {:>10} {:>12} {:>7} {:>10}",
            "worker", "events", "busy s", "busy %", "parked s"
        );
        let mut tids: Vec<&i64> = self.workers.keys().collect();
        tids.sort();
        for tid in tids {
            let t = &self.workers[tid];
            let name = self
                .worker_names
                .get(tid)
                .cloned()
                .unwrap_or_else(|| format!("tid {tid}"));
            let pct = if span > 0.0 {
                100.0 * t.total / span
            } else {
                0.0
            };
            let parked = self.parked.get(tid).copied().unwrap_or(0.0) / 1e6;
            println!(
                "{name:<12} {:>10} {:>12.6} {pct:>7.1} {parked:>10.6}",
                t.events,
                t.total / 1e6
            );
        }
        let mut names: Vec<(&(String, String), &Totals)> = self.names.iter().collect();
        names.sort_by(|a, b| b.1.total.total_cmp(&a.1.total).then(a.0.cmp(b.0)));
        let busy: f64 = self.names.values().map(|t| t.total).sum();
        println!(
            "{:<28} {:<6} {:>10} {:>12} {:>10} {:>10} {:>7}",
            "name", "kind", "events", "total s", "mean us", "max us", "share %"
        );
        for ((cat, name), t) in names.iter().take(top) {
            println!(
                "{:<28} {:<6} {:>10} {:>12.6} {:>10.2} {:>10.2} {:>7.1}",
                name,
                cat,
                t.events,
                t.total / 1e6,
                t.total / t.events.max(1) as f64,
                t.max,
                if busy > 0.0 {
                    100.0 * t.total / busy
                } else {
                    0.0
                }
            );
        }
        if names.len() > top {
            println!("({} more names; --top N lists more)", names.len() - top);
        }
        let mut instants: Vec<_> = self.instants.iter().collect();
        instants.sort();
        for (name, n) in instants {
            println!("instant `{name}`: {n}");
        }
        let mut counters: Vec<_> = self.counters.iter().collect();
        counters.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
        for (name, max) in counters.iter().take(top) {
            println!("counter `{name}`: max {max}");
        }
        if counters.len() > top {
            println!("({} more counters, lower maxima)", counters.len() - top);
        }
    }
}

/// Runs `snet trace`.
pub(crate) fn run(args: TraceArgs) -> ExitCode {
    let text = match std::fs::read_to_string(&args.file) {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot read {}: {e}", args.file.display())),
    };
    let json: Json = match serde_json::from_str(&text) {
        Ok(j) => j,
        Err(e) => {
            return fail(format!(
                "{}:{}:{}: not a trace-event JSON file: {e}",
                args.file.display(),
                e.line(),
                e.column()
            ))
        }
    };
    match summarise(&json) {
        Ok(s) => {
            s.print(&args.file.display().to_string(), args.top);
            ExitCode::SUCCESS
        }
        Err(e) => fail(format!("{}: {e}", args.file.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_complete_instant_and_counter_events() {
        let j: Json = serde_json::from_str(
            r#"{"traceEvents":[
                {"ph":"M","name":"thread_name","pid":1,"tid":0,"args":{"name":"worker 0"}},
                {"name":"f","cat":"box","ph":"X","pid":1,"tid":0,"ts":10,"dur":5},
                {"name":"f","cat":"box","ph":"X","pid":1,"tid":1,"ts":12,"dur":7},
                {"name":"g","cat":"box","ph":"X","pid":1,"tid":0,"ts":20,"dur":1},
                {"name":"steal","cat":"steal","ph":"i","pid":1,"tid":1,"ts":30,"s":"t"},
                {"name":"parked","cat":"park","ph":"X","pid":1,"tid":1,"ts":21,"dur":4},
                {"name":"stream s","ph":"C","ts":25,"pid":1,"args":{"fill":3}},
                {"name":"stream s","ph":"C","ts":26,"pid":1,"args":{"fill":9}}
            ]}"#,
        )
        .unwrap();
        let s = summarise(&j).unwrap();
        assert_eq!(s.span, Some((10.0, 30.0)));
        assert_eq!(s.workers[&0].events, 2);
        assert_eq!(s.workers[&0].total, 6.0);
        assert_eq!(s.workers[&1].max, 7.0);
        assert_eq!(
            (s.workers[&1].events, s.parked[&1]),
            (1, 4.0),
            "parks are not busy time"
        );
        let f = &s.names[&("box".to_string(), "f".to_string())];
        assert_eq!((f.events, f.total, f.max), (2, 12.0, 7.0));
        assert_eq!(s.instants["steal"], 1);
        assert_eq!(s.counters["stream s.fill"], 9.0);
        assert_eq!(s.worker_names[&0], "worker 0");
    }

    #[test]
    fn rejects_events_that_are_not_trace_events() {
        let no_ph: Json = serde_json::from_str(r#"[{"name":"x"}]"#).unwrap();
        assert!(summarise(&no_ph).unwrap_err().contains("event 0"));
        let no_dur: Json = serde_json::from_str(r#"[{"ph":"X","ts":1}]"#).unwrap();
        assert!(summarise(&no_dur).unwrap_err().contains("dur"));
        let obj: Json = serde_json::from_str(r#"{"events":[]}"#).unwrap();
        assert!(summarise(&obj).is_err());
    }
}
