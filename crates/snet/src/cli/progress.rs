//! `snet run --progress`: live figures on standard error while a run goes on.
//!
//! A thread samples the run's [`Profile`] (records read and written, per-box busy time)
//! and shows records in, out, in flight (in − out, so records a box or filter creates or
//! consumes move it too), rates per second over the last interval and the three
//! busiest boxes (share of one core over the last interval). On a terminal the line is
//! redrawn in place (the `indicatif` crate) every 200 ms; otherwise a plain line is
//! printed every second (and once at the end), so a log stays readable. Never on
//! standard output. Off unless asked for: scripts and pipelines keep a quiet standard
//! error, and an unrequested progress line would mix with the warnings of the run.

use super::profile::Profile;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The progress thread of a run.
#[derive(Debug)]
pub(crate) struct Progress {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

/// What one sample showed, for rates over the next interval.
#[derive(Debug, Clone, Default)]
struct Sample {
    at: f64,
    records_in: u64,
    records_out: u64,
    busy_ns: Vec<u64>,
    /// Busy time per node of a distributed run.
    node_busy: Vec<(u32, u64)>,
}

fn sample(p: &Profile) -> Sample {
    Sample {
        at: p.start.elapsed().as_secs_f64(),
        records_in: p.records_in.load(Ordering::Relaxed),
        records_out: p.records_out.load(Ordering::Relaxed),
        busy_ns: p.busy_now(),
        node_busy: p.node_busy_now(),
    }
}

/// The progress line from the sample before (`prev`) to now (`cur`).
fn line(p: &Profile, prev: &Sample, cur: &Sample) -> String {
    let dt = (cur.at - prev.at).max(1e-3);
    let rate = |a: u64, b: u64| (a.saturating_sub(b)) as f64 / dt;
    let mut busy: Vec<(f64, &str)> = p
        .boxes
        .iter()
        .enumerate()
        .map(|(i, (name, _, _))| {
            let d = cur.busy_ns[i].saturating_sub(prev.busy_ns.get(i).copied().unwrap_or(0));
            (d as f64 / 1e9 / dt, name.as_str())
        })
        .filter(|(s, _)| *s > 0.0)
        .collect();
    busy.sort_by(|a, b| b.0.total_cmp(&a.0));
    let busiest: Vec<String> = busy
        .iter()
        .take(3)
        .map(|(s, n)| format!("{n} {:.0}%", s * 100.0))
        .collect();
    // A distributed run: each node's boxes' share of a core over the interval.
    let nodes: Vec<String> = cur
        .node_busy
        .iter()
        .map(|(n, b)| {
            let before = prev
                .node_busy
                .iter()
                .find(|(m, _)| m == n)
                .map_or(0, |(_, x)| *x);
            format!(
                "{n} {:.0}%",
                b.saturating_sub(before) as f64 / 1e9 / dt * 100.0
            )
        })
        .collect();
    let nodes = if nodes.is_empty() {
        String::new()
    } else {
        format!("  nodes busy: {}", nodes.join(", "))
    };
    format!(
        "{:.1} s  in {} ({:.0}/s)  out {} ({:.0}/s)  in flight {}  busiest: {}{nodes}",
        cur.at,
        cur.records_in,
        rate(cur.records_in, prev.records_in),
        cur.records_out,
        rate(cur.records_out, prev.records_out),
        cur.records_in as i64 - cur.records_out as i64,
        if busiest.is_empty() {
            "-".to_owned()
        } else {
            busiest.join(", ")
        }
    )
}

impl Progress {
    /// Starts showing the progress of the run that fills `p`.
    pub(crate) fn start(p: Arc<Profile>) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("snet-progress".into())
            .spawn(move || {
                if std::io::stderr().is_terminal() {
                    redraw(&p, &flag)
                } else {
                    plain(&p, &flag)
                }
            })
            .ok();
        Progress { stop, handle }
    }

    /// Stops the thread after it showed the final figures.
    pub(crate) fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// Waits up to `d`, or until asked to stop.
fn pause(flag: &AtomicBool, d: Duration) {
    let until = Instant::now() + d;
    while !flag.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= until {
            return;
        }
        std::thread::park_timeout(until - now);
    }
}

fn redraw(p: &Profile, flag: &AtomicBool) {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} snet run: {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let mut prev = Sample::default();
    loop {
        let stopping = flag.load(Ordering::Relaxed);
        let cur = sample(p);
        bar.set_message(line(p, &prev, &cur));
        bar.tick();
        prev = cur;
        if stopping {
            bar.finish();
            return;
        }
        pause(flag, Duration::from_millis(200));
    }
}

fn plain(p: &Profile, flag: &AtomicBool) {
    let mut prev = Sample::default();
    loop {
        pause(flag, Duration::from_secs(1));
        let stopping = flag.load(Ordering::Relaxed);
        let cur = sample(p);
        eprintln!("progress: {}", line(p, &prev, &cur));
        prev = cur;
        if stopping {
            return;
        }
    }
}
