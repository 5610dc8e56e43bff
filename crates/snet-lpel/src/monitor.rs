//! Monitoring (seed 000 §4.3.4, §5.4.3): one log file per worker with a line per task
//! dispatch, in the seed's exact format, and optionally the same events as a
//! Chrome/Perfetto trace-event JSON with stream fill levels as counters.
//!
//! Log line (one per dispatch; wrapped here only):
//!
//! ```text
//! 248954687985216 tid 191 disp 3 st Z et 7473 creat 248954684456346 [246,w,C,2,-!*;245,r,C,2,--*;]
//! ```
//!
//! timestamp at return to the worker (ns, `CLOCK_MONOTONIC`), task id, dispatch count,
//! state after the dispatch (`R`, `Bi`, `Bo`, `Ba`, `Z`), execution time (ns),
//! `creat` (creation timestamp, zombies only), and the streams used during the
//! dispatch: `id,mode(w|r),state(O|I|C),items so far,flags` with flags `?` (blocked
//! on it), `!` (woke the peer), `*` (moved items); `-` when unset.
//!
//! Levels: `a` box tasks, time only; `b` box tasks with streams; `c` all tasks with
//! streams; `d` like `c` plus worker lines `<ts> *** worker N waited (k) for S` and
//! `<ts> *** Worker N exited. wait_cnt K, wait_time S`.
//!
//! `tasks.map` (written by the runtime) maps `tid worker kind name` for log analysis
//! (`tools/lpel_log_totals.py`).

use crate::clock::now_ns;
use crate::config::{MonitorConfig, MonitorLevel};
use crate::stream::Dirty;
use crate::task::{Task, TaskKind, TaskState};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// One worker's monitoring output.
pub(crate) struct WorkerMonitor {
    level: MonitorLevel,
    index: usize,
    log: BufWriter<File>,
    trace: Option<BufWriter<File>>,
    line: String,
}

impl WorkerMonitor {
    pub(crate) fn new(cfg: &MonitorConfig, index: usize) -> std::io::Result<WorkerMonitor> {
        std::fs::create_dir_all(&cfg.dir)?;
        let log = BufWriter::new(File::create(cfg.dir.join(format!("mon_w{index}.log")))?);
        let trace = if cfg.trace {
            Some(BufWriter::new(File::create(
                cfg.dir.join(format!("trace_w{index}.part")),
            )?))
        } else {
            None
        };
        Ok(WorkerMonitor {
            level: cfg.level,
            index,
            log,
            trace,
            line: String::with_capacity(256),
        })
    }

    /// Whether stream activity must be collected.
    pub(crate) fn wants_streams(&self) -> bool {
        self.level >= MonitorLevel::B || self.trace.is_some()
    }

    pub(crate) fn dispatch(
        &mut self,
        t: &Task,
        state: TaskState,
        disp: u64,
        start: u64,
        end: u64,
        dirty: &[Dirty],
    ) {
        use std::fmt::Write as _;
        let is_box = t.kind == TaskKind::Box;
        if self.level >= MonitorLevel::C || is_box {
            self.line.clear();
            let _ = write!(
                self.line,
                "{end} tid {} disp {disp} st {} et {}",
                t.id.0,
                state.code(),
                end - start
            );
            if state == TaskState::Zombie {
                let _ = write!(self.line, " creat {}", t.created_ns);
            }
            if self.level >= MonitorLevel::B {
                self.line.push_str(" [");
                for d in dirty {
                    d.log_entry(&mut self.line);
                }
                self.line.push(']');
            }
            self.line.push('\n');
            let _ = self.log.write_all(self.line.as_bytes());
        }
        if let Some(tr) = &mut self.trace {
            let _ = writeln!(
                tr,
                "{{\"name\":\"{}\",\"cat\":\"{}\",\"ph\":\"X\",\"ts\":{:.3},\"dur\":{:.3},\"pid\":1,\"tid\":{},\"args\":{{\"tid\":{},\"disp\":{disp},\"st\":\"{}\"}}}},",
                json_escape(&t.name),
                if is_box { "box" } else { "task" },
                start as f64 / 1000.0,
                (end - start) as f64 / 1000.0,
                self.index,
                t.id.0,
                state.code()
            );
            for d in dirty {
                let _ = writeln!(
                    tr,
                    "{{\"name\":\"stream {}\",\"ph\":\"C\",\"ts\":{:.3},\"pid\":1,\"args\":{{\"fill\":{}}}}},",
                    d.meta.id(),
                    end as f64 / 1000.0,
                    d.fill()
                );
            }
        }
    }

    pub(crate) fn worker_waited(&mut self, index: usize, count: u64, ns: u64) {
        if self.level >= MonitorLevel::D {
            let _ = writeln!(
                self.log,
                "{} *** worker {index} waited ({count}) for {:.9}",
                now_ns(),
                ns as f64 / 1e9
            );
        }
    }

    pub(crate) fn finish(mut self, index: usize, waits: u64, wait_ns: u64) {
        if self.level >= MonitorLevel::D {
            let _ = writeln!(
                self.log,
                "{} *** Worker {index} exited. wait_cnt {waits}, wait_time {:.9}",
                now_ns(),
                wait_ns as f64 / 1e9
            );
        }
        let _ = self.log.flush();
        if let Some(mut t) = self.trace.take() {
            let _ = t.flush();
        }
    }
}

fn json_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o
}

/// Joins the per-worker trace parts into `trace.json` (trace-event format).
pub(crate) fn merge_traces(dir: &Path, workers: usize) -> std::io::Result<()> {
    let mut out = BufWriter::new(File::create(dir.join("trace.json"))?);
    writeln!(out, "{{\"traceEvents\":[")?;
    writeln!(
        out,
        "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{{\"name\":\"lpel\"}}}}"
    )?;
    for w in 0..workers {
        writeln!(out, ",{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":{w},\"args\":{{\"name\":\"worker {w}\"}}}}")?;
    }
    for w in 0..workers {
        let part = dir.join(format!("trace_w{w}.part"));
        let text = std::fs::read_to_string(&part).unwrap_or_default();
        for line in text.lines() {
            let ev = line.trim_end_matches(',');
            if !ev.is_empty() {
                writeln!(out, ",{ev}")?;
            }
        }
        let _ = std::fs::remove_file(part);
    }
    writeln!(out, "]}}")?;
    out.flush()
}
