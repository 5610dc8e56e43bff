//! `snet bench`: the S-Net benchmarks of bench/BENCHMARKS.md §1 in-process, on every engine
//! and worker count, side by side with the classic runtime's published figures.
//!
//! Each configuration's output is checked (counts and values) before it is timed; the
//! time is the median of `--runs` runs of `Engine::run` on records already in memory,
//! so XML parsing and writing are not in it (whole-process figures, with I/O, come
//! from `bench/run.py`).

use super::fail;
use clap::Args;
use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Program, Record, RunOptions, Value};
use snet_core::engine::MAX_WORKERS;
use snet_core::Label;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Arguments of `snet bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// Benchmark: deep, synchro, fibtree or pipe (bench/BENCHMARKS.md §1).
    #[arg(value_name = "NAME")]
    name: String,
    /// Size: the depth D for deep (default 1000), N for synchro (1000) and fibtree (20),
    /// the number of records for pipe (100000).
    #[arg(value_name = "SIZE")]
    size: Option<u32>,
    /// Engines to run, comma-separated or repeated (default: seq,threads,front,lpel).
    #[arg(
        long = "engine",
        short = 'e',
        value_delimiter = ',',
        value_name = "ENGINE"
    )]
    engines: Vec<String>,
    /// Worker counts, comma-separated or repeated (default: 1,2; seq always runs once).
    #[arg(long = "workers", short = 'w', value_delimiter = ',', value_name = "N")]
    workers: Vec<usize>,
    /// Timed runs per configuration; the median and the minimum are reported.
    #[arg(long, default_value_t = 3, value_name = "R")]
    runs: usize,
    /// deep and pipe: run the box written in C (compiled through C4SNet with the system
    /// C compiler) instead of the same box written in Rust.
    #[arg(long)]
    c_boxes: bool,
}

/// Checks a configuration's output records (an error says what is wrong).
type Check = dyn Fn(&[Record]) -> Result<(), String>;

/// A benchmark ready to run: the program with its boxes bound, the input records, and
/// a check of the output.
struct Bench {
    title: String,
    prog: Program,
    input: Vec<Record>,
    check: Box<Check>,
    /// Classic runtime figures for this row (bench/BENCHMARKS.md §1, whole process, seconds):
    /// (engine, workers, seconds).
    classic: Vec<(&'static str, usize, f64)>,
}

/// bench/BENCHMARKS.md §1, classic S-Net runtime: (benchmark, size, seconds for FRONT 1w,
/// FRONT 2w, LPEL 1w, LPEL 2w, threads 1w, threads 2w).
const CLASSIC: &[(&str, u32, [f64; 6])] = &[
    ("deep", 0, [0.017, 0.015, 0.019, 0.033, 0.030, 0.022]),
    ("deep", 1000, [0.530, 0.348, 0.332, 0.261, 1.549, 0.841]),
    ("deep", 10000, [10.47, 7.85, 3.05, 2.39, 53.3, 50.6]),
    ("synchro", 10000, [0.975, 0.982, 3.06, 3.56, 5.47, 4.25]),
    ("fibtree", 20, [0.071, 0.059, 0.644, 0.583, 7.29, 4.38]),
    ("fibtree", 25, [0.968, 0.924, 11.40, 7.97, 107.0, 59.0]),
];

/// The classic figures of one benchmark row as (engine, workers, seconds); empty for
/// sizes the classic runtime was not measured at.
fn classic_figures(name: &str, size: u32) -> Vec<(&'static str, usize, f64)> {
    const COLUMNS: [(&str, usize); 6] = [
        ("front", 1),
        ("front", 2),
        ("lpel", 1),
        ("lpel", 2),
        ("threads", 1),
        ("threads", 2),
    ];
    CLASSIC
        .iter()
        .find(|(n, s, _)| *n == name && *s == size)
        .map(|(_, _, t)| {
            COLUMNS
                .iter()
                .zip(t)
                .map(|(&(e, w), &t)| (e, w, t))
                .collect()
        })
        .unwrap_or_default()
}

/// The deterministic input generator of the in-process benchmarks (seed 42).
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

fn fib(n: u32) -> i64 {
    let (mut a, mut b) = (0i64, 1i64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

fn int_field(r: &Record, name: &str) -> Option<i32> {
    r.field(Label::field(name))?.as_ref()?.as_i32()
}

/// Binds the C box in `source` (file name `file`) to `prog` through C4SNet.
fn bind_c(prog: &mut Program, file: &str, source: &str) -> Result<(), String> {
    // A fixed path: the compiled object is cached by source path and content, so every
    // later run finds it (a per-process directory recompiled the box every time).
    let dir = std::env::temp_dir().join("snet-bench-boxes");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(file);
    if std::fs::read_to_string(&path).ok().as_deref() != Some(source) {
        // Written aside and renamed, so a concurrent run never sees half a file.
        let tmp = dir.join(format!("{file}.{}", std::process::id()));
        std::fs::write(&tmp, source).map_err(|e| format!("{}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let sigs = prog.net().boxes.clone();
    let boxes = snet_c4snet::load_boxes(&sigs, &[path], &snet_c4snet::BuildOptions::default())
        .map_err(|e| e.to_string())?;
    prog.bind_table(&boxes.into_table());
    Ok(())
}

fn deep(d: u32, c_boxes: bool) -> Result<Bench, String> {
    let src = "net deep { box foo((A) -> (A) | (B)); } connect foo*{B};";
    let mut prog = Program::from_source("deep.snet", src).map_err(|e| e.to_string())?;
    if c_boxes {
        bind_c(
            &mut prog,
            "foo.c",
            include_str!("../../../../bench/programs/deep/foo.c"),
        )?;
    } else {
        prog.bind("foo", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
            let a = i.int("A").unwrap_or(0);
            if a > 0 {
                o.emit(1, [Arg::int(a - 1)])
            } else {
                o.emit(2, [Arg::int(0)])
            }
        })
        .map_err(|e| e.to_string())?;
    }
    let mut seed = 42;
    let input = (0..1000)
        .map(|_| {
            Record::new().with_field("A", Value::int((lcg(&mut seed) % (d as u64 + 1)) as i32))
        })
        .collect();
    Ok(Bench {
        title: format!("deep {d}"),
        prog,
        input,
        check: Box::new(|out| {
            if out.len() != 1000 {
                return Err(format!("{} output records, expected 1000", out.len()));
            }
            match out
                .iter()
                .find(|r| r.len() != 1 || int_field(r, "B") != Some(0))
            {
                Some(r) => Err(format!("output {r:?}, expected {{B=0}}")),
                None => Ok(()),
            }
        }),
        classic: classic_figures("deep", d),
    })
}

fn synchro(n: u32) -> Result<Bench, String> {
    let prog = Program::from_source("synchro.snet", "net synchro connect [|{A},{B}|]*{A,B};")
        .map_err(|e| e.to_string())?;
    let mut input = Vec::new();
    for k in 0..n as i32 {
        for j in 0..5 {
            input.push(Record::new().with_field("A", Value::int(k * 5 + j)));
        }
        for j in 0..5 {
            input.push(Record::new().with_field("B", Value::int(k * 5 + j)));
        }
    }
    let want = 5 * n as usize;
    Ok(Bench {
        title: format!("synchro {n}"),
        prog,
        input,
        check: Box::new(move |out| {
            if out.len() != want {
                return Err(format!("{} output records, expected {want}", out.len()));
            }
            match out.iter().find(|r| {
                let (a, b) = (int_field(r, "A"), int_field(r, "B"));
                a.is_none() || a != b
            }) {
                Some(r) => Err(format!("output {r:?}, expected A == B")),
                None => Ok(()),
            }
        }),
        classic: classic_figures("synchro", n),
    })
}

fn fibtree(n: u32) -> Result<Bench, String> {
    let prog = Program::from_source(
        "fibtree.snet",
        include_str!("../../../../examples/compute/fibtree/fibtree.snet"),
    )
    .map_err(|e| e.to_string())?;
    let input = vec![Record::new().with_tag("N", n as i32)];
    let want = fib(n);
    Ok(Bench {
        title: format!("fibtree {n}"),
        prog,
        input,
        check: Box::new(move |out| {
            let got: Vec<Option<i32>> = out.iter().map(|r| r.tag(Label::tag("F"))).collect();
            if got.len() == 1 && got[0].map(i64::from) == Some(want) {
                Ok(())
            } else {
                Err(format!("output tags <F> {got:?}, expected [{want}]"))
            }
        }),
        classic: classic_figures("fibtree", n),
    })
}

fn pipe(count: u32, c_boxes: bool) -> Result<Bench, String> {
    let src = format!(
        "net stage {{ box id((A) -> (A)); }} connect id; net pipe connect {};",
        ["stage"; 10].join(" .. ")
    );
    let mut prog = Program::from_source("pipe.snet", &src).map_err(|e| e.to_string())?;
    if c_boxes {
        bind_c(
            &mut prog,
            "id.c",
            include_str!("../../../../bench/programs/pipe/id.c"),
        )?;
    } else {
        prog.bind("id", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
            match i.field("A") {
                Some(v) => o.emit(1, vec![Arg::field(v.clone())]),
                None => Err(snet_core::BoxFailure("no field A".into())),
            }
        })
        .map_err(|e| e.to_string())?;
    }
    let input = (0..count as i32)
        .map(|i| Record::new().with_field("A", Value::int(i)))
        .collect();
    Ok(Bench {
        title: format!("pipe {count} (10 boxes)"),
        prog,
        input,
        check: Box::new(move |out| {
            // A serial pipeline is deterministic: the input order is kept.
            let bad = out
                .iter()
                .enumerate()
                .find(|(i, r)| int_field(r, "A") != Some(*i as i32));
            match (out.len() == count as usize, bad) {
                (true, None) => Ok(()),
                (false, _) => Err(format!("{} output records, expected {count}", out.len())),
                (_, Some((i, r))) => Err(format!("output {i} is {r:?}, expected A={i}")),
            }
        }),
        classic: Vec::new(),
    })
}

/// Runs `b` once on `engine` with `workers`, returning the output and statistics.
fn run_once(
    b: &Bench,
    engine: EngineKind,
    workers: usize,
) -> Result<(Vec<Record>, snet_core::RunStats, Duration), String> {
    let mut out = Vec::new();
    let mut src = b.input.clone().into_iter().fuse();
    let t = Instant::now();
    let stats = b
        .prog
        .run(engine, &mut src, &mut out, &RunOptions::new(workers))
        .map_err(|e| e.to_string())?;
    Ok((out, stats, t.elapsed()))
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Runs `snet bench`.
pub(crate) fn run(args: BenchArgs) -> ExitCode {
    let usage = |msg: String| {
        super::usage(format!(
            "{msg}\nusage: snet bench deep|synchro|fibtree|pipe [SIZE] [--engine E,..] [-w N,..] [--runs R] [--c-boxes]"
        ))
    };
    let mut engines = Vec::new();
    for e in &args.engines {
        match EngineKind::parse(e) {
            Some(k) => engines.push(k),
            None => return usage(super::unknown_engine(e)),
        }
    }
    if engines.is_empty() {
        engines = EngineKind::ALL.to_vec();
    }
    let workers = if args.workers.is_empty() {
        vec![1, 2]
    } else {
        args.workers.clone()
    };
    if workers.contains(&0) || args.runs == 0 {
        return usage("worker counts and --runs must be at least 1".into());
    }
    if let Some(w) = workers.iter().find(|w| **w > MAX_WORKERS) {
        return usage(format!(
            "-w {w}: at most {MAX_WORKERS} workers are supported"
        ));
    }
    if args.c_boxes && !matches!(args.name.as_str(), "deep" | "pipe") {
        return usage(format!("--c-boxes: benchmark `{}` has no boxes", args.name));
    }
    let bench = match args.name.as_str() {
        "deep" => deep(args.size.unwrap_or(1000), args.c_boxes),
        "synchro" => synchro(args.size.unwrap_or(1000)),
        "fibtree" => fibtree(args.size.unwrap_or(20)),
        "pipe" => pipe(args.size.unwrap_or(100_000), args.c_boxes),
        other => return usage(format!("unknown benchmark `{other}`")),
    };
    let b = match bench {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    let boxes = if b.prog.net().boxes.is_empty() {
        "no boxes"
    } else if args.c_boxes {
        "C boxes"
    } else {
        "Rust boxes"
    };
    println!(
        "{} — {} input records, {boxes}, in-process (no XML), median of {} run(s)",
        b.title,
        b.input.len(),
        args.runs
    );
    if !b.classic.is_empty() {
        println!("classic: the classic runtime's figure for the same engine family and workers (bench/BENCHMARKS.md §1, whole process incl. XML)");
    }
    println!(
        "{:8} {:>2} {:>9} {:>9} {:>10} {:>11} {:>9} {:>9}",
        "engine", "w", "median s", "min s", "box calls", "ns/firing", "classic", "speedup"
    );
    let mut seq_time = None;
    for &engine in &engines {
        let ws: &[usize] = if engine == EngineKind::Seq {
            &[1]
        } else {
            &workers
        };
        for &w in ws {
            // The first run is checked (and warms caches and stack pools); the timed
            // runs follow.
            let stats = match run_once(&b, engine, w) {
                Ok((out, stats, _)) => match (b.check)(&out) {
                    Ok(()) => stats,
                    Err(e) => {
                        return fail(format!(
                            "{} on {} -w {w}: wrong output: {e}",
                            b.title,
                            engine.name()
                        ))
                    }
                },
                Err(e) => return fail(format!("{} on {} -w {w}: {e}", b.title, engine.name())),
            };
            let mut times = Vec::with_capacity(args.runs);
            for _ in 0..args.runs {
                match run_once(&b, engine, w) {
                    Ok((_, _, dt)) => times.push(dt.as_secs_f64()),
                    Err(e) => return fail(format!("{} on {} -w {w}: {e}", b.title, engine.name())),
                }
            }
            let min = times.iter().copied().fold(f64::INFINITY, f64::min);
            let med = median(&mut times);
            if engine == EngineKind::Seq {
                seq_time = Some(med);
            }
            let per = if stats.box_calls > 0 {
                format!("{:.0}", med * 1e9 / stats.box_calls as f64)
            } else {
                "-".into()
            };
            let classic = b
                .classic
                .iter()
                .find(|(e, cw, _)| *e == engine.name() && *cw == w)
                .map(|c| c.2);
            let (cl, sp) = match classic {
                Some(c) => (format!("{c:.3}"), format!("{:.1}x", c / med)),
                None => ("-".into(), "-".into()),
            };
            println!(
                "{:8} {:>2} {:>9.4} {:>9.4} {:>10} {:>11} {:>9} {:>9}",
                engine.name(),
                w,
                med,
                min,
                stats.box_calls,
                per,
                cl,
                sp
            );
        }
    }
    if let Some(s) = seq_time {
        println!(
            "seq: {s:.4} s (the single-threaded reference; its time is the semantics core's cost)"
        );
    }
    if let Some(best) = b.classic.iter().map(|c| c.2).reduce(f64::min) {
        println!("best classic figure: {best:.3} s");
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec_b(v: i32) -> Record {
        Record::new().with_field("B", Value::int(v))
    }

    #[test]
    fn checks_reject_wrong_outputs() {
        let d = deep(3, false).expect("deep");
        assert!((d.check)(&vec![rec_b(0); 1000]).is_ok());
        assert!((d.check)(&vec![rec_b(0); 999]).is_err(), "a lost record");
        let mut out = vec![rec_b(0); 1000];
        out[7] = rec_b(1);
        assert!((d.check)(&out).is_err(), "a wrong value");
        out[7] = rec_b(0).with_field("A", Value::int(0));
        assert!((d.check)(&out).is_err(), "an extra label");

        let s = synchro(1).expect("synchro");
        let pair = |a, b| {
            Record::new()
                .with_field("A", Value::int(a))
                .with_field("B", Value::int(b))
        };
        assert!((s.check)(&(0..5).map(|k| pair(k, k)).collect::<Vec<_>>()).is_ok());
        assert!((s.check)(&(0..5).map(|k| pair(k, 4 - k)).collect::<Vec<_>>()).is_err());

        let f = fibtree(10).expect("fibtree");
        assert!((f.check)(&[Record::new().with_tag("F", 55)]).is_ok());
        assert!((f.check)(&[Record::new().with_tag("F", 54)]).is_err());
        assert!((f.check)(&[]).is_err());

        let p = pipe(3, false).expect("pipe");
        let a = |v| Record::new().with_field("A", Value::int(v));
        assert!((p.check)(&[a(0), a(1), a(2)]).is_ok());
        assert!(
            (p.check)(&[a(1), a(0), a(2)]).is_err(),
            "order of a serial pipeline"
        );
    }

    #[test]
    fn classic_rows_follow_benchmarks_md() {
        let row = classic_figures("deep", 10000);
        assert_eq!(row.len(), 6);
        assert!(row.contains(&("lpel", 2, 2.39)));
        assert!(row.contains(&("front", 1, 10.47)));
        assert!(classic_figures("deep", 77).is_empty());
        assert_eq!(fib(25), 75025);
    }
}
