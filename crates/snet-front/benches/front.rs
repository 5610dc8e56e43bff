//! In-process benchmark of the FRONT engine against `seq` (BENCHMARKS.md §1 programs
//! with Rust boxes, no XML I/O): `deep D`, `synchro N`, `fibtree N` (pure S-Net),
//! `pipe K` and `fan W`, each on seq and on front at 1 and 2 workers in the same
//! process, median of `RUNS` runs, with ratios. Every run checks its output.
//!
//! `cargo bench -p snet-front --bench front [-- NAME...]` (NAME filters by prefix, e.g.
//! `deep`, `synchro`); `RUNS=n` sets the number of runs (default 5); `ENGINES=front1`
//! (any of `seq,front1,front2`) restricts the engines, e.g. for profiling.
//! `cargo bench -p snet-front --bench front -- rss N W` prints the peak RSS of
//! `synchro N` (input generated on the fly) on front with W workers.

use snet_core::{
    Arg, BoxFailure, BoxFn, BoxTable, Emitter, Engine, Label, Net, Record, RecordSink, RunError,
    RunOptions, RunStats, SeqEngine, Value,
};
use snet_front::FrontEngine;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn compile(src: &str) -> Net {
    match snet_lang::compile_str("bench.snet", src) {
        Ok(c) => c.net,
        Err(d) => panic!("{}", d.render()),
    }
}

/// splitmix64 with a fixed seed: deterministic inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn int_arg(args: &[Arg]) -> Result<i32, BoxFailure> {
    match args.first() {
        Some(Arg::Field(Some(v))) => v.as_i32().ok_or_else(|| BoxFailure("not an int".into())),
        _ => Err(BoxFailure("missing argument".into())),
    }
}

/// A sink that checks records as they come and counts them.
struct Check<F: FnMut(&Record) -> bool + Send> {
    n: u64,
    bad: u64,
    f: F,
}

impl<F: FnMut(&Record) -> bool + Send> RecordSink for Check<F> {
    fn write_record(&mut self, rec: Record) -> Result<(), RunError> {
        self.n += 1;
        if !(self.f)(&rec) {
            self.bad += 1;
        }
        Ok(())
    }
}

struct Case {
    name: String,
    net: Net,
    boxes: BoxTable,
    input: Vec<Record>,
    /// Expected output count and a per-record check.
    expect: u64,
    check: fn(&Record) -> bool,
    /// Units of work for the per-unit figure (box firings, hops, ...), and its name.
    units: u64,
    unit: &'static str,
}

fn field(r: &Record, n: &str) -> Option<i32> {
    r.field(Label::field(n))?.as_ref()?.as_i32()
}

fn deep(d: u64) -> Case {
    let net = compile("net deep { box foo((A) -> (A) | (B)); } connect foo*{B};");
    let dec: Arc<dyn BoxFn> = Arc::new(|args: snet_core::Args, out: &mut dyn Emitter| {
        let a = int_arg(&args)?;
        if a > 0 {
            out.emit(1, snet_core::args![Arg::Field(Some(Value::int(a - 1)))])
        } else {
            out.emit(2, snet_core::args![Arg::Field(Some(Value::int(0)))])
        }
    });
    let mut boxes = BoxTable::new();
    boxes.insert("foo", dec);
    let mut rng = Rng(42);
    let vals: Vec<u64> = (0..1000).map(|_| rng.next() % (d + 1)).collect();
    let units = vals.iter().map(|a| a + 1).sum();
    Case {
        name: format!("deep {d}"),
        net,
        boxes,
        input: vals
            .iter()
            .map(|a| Record::new().with_field("A", Value::int(*a as i32)))
            .collect(),
        expect: 1000,
        check: |r| field(r, "B") == Some(0),
        units,
        unit: "firing",
    }
}

fn synchro(n: i32) -> Case {
    let net = compile("net synchro connect [|{A},{B}|]*{A,B};");
    let mut input = Vec::new();
    for k in 0..n {
        for j in 0..5 {
            input.push(Record::new().with_field("A", Value::int(k * 5 + j)));
        }
        for j in 0..5 {
            input.push(Record::new().with_field("B", Value::int(k * 5 + j)));
        }
    }
    Case {
        name: format!("synchro {n}"),
        net,
        boxes: BoxTable::new(),
        input,
        expect: 5 * n as u64,
        check: |r| field(r, "A").is_some() && field(r, "A") == field(r, "B"),
        units: 10 * n as u64,
        unit: "record",
    }
}

/// fib(N) by unfolding the recursion tree in a star of filters, then summing sibling
/// pairs in synchrocells selected by an index split inside a feedback loop.
const FIBTREE: &str = "
net fibtree ({<N>} -> {<F>}) {
  net start connect [{<N>} -> {<N>, <P=1>}];
  net unfold connect [{<N>, <P>} -> if <N <= 1> then {<F=N>, <P>, <leaf>}
                                    else {<N=N-1>, <P=2*P>}; {<N=N-2>, <P=2*P+1>}];
  net strip connect [{<leaf>} -> {}];
  net side connect [{<F>, <P>} -> if <P % 2 == 0> then {<F>, <Q=P/2>} else {<G=F>, <Q=P/2>}];
  net join connect [| {<F>}, {<G>} |] !<Q>;
  net add connect [{<F>, <G>, <Q>} -> {<F=F+G>, <P=Q>}];
  net sum connect (side .. join .. add) \\ {<P>} if <P != 1>;
  net finish connect [{<F>, <P>} -> {<F>}];
}
connect start .. (unfold * {<leaf>}) .. strip .. sum .. finish;";

fn fib(n: u64) -> u64 {
    (0..n).fold((0u64, 1u64), |(a, b), _| (b, a + b)).0
}

fn fibtree(n: i32) -> Case {
    let net = compile(FIBTREE);
    let want = fib(n as u64) as i32;
    let check: fn(&Record) -> bool = match n {
        20 => |r| r.tag(Label::tag("F")) == Some(6765),
        25 => |r| r.tag(Label::tag("F")) == Some(75025),
        _ => |r| r.tag(Label::tag("F")).is_some(),
    };
    let _ = want;
    Case {
        name: format!("fibtree {n}"),
        net,
        boxes: BoxTable::new(),
        input: vec![Record::new().with_tag("N", n)],
        expect: 1,
        check,
        // Records created: ~ 2 fib(N+1) unfold + the same again summing.
        units: 4 * fib(n as u64 + 1),
        unit: "record",
    }
}

fn pipe(k: usize, count: i32) -> Case {
    let stages = vec!["id"; k].join(" .. ");
    let net = compile(&format!(
        "net pipe {{ box id((A) -> (A)); }} connect {stages};"
    ));
    let id: Arc<dyn BoxFn> = Arc::new(|mut args: snet_core::Args, out: &mut dyn Emitter| {
        let v = args.pop().ok_or_else(|| BoxFailure("no arg".into()))?;
        out.emit(1, snet_core::args![v])
    });
    let mut boxes = BoxTable::new();
    boxes.insert("id", id);
    Case {
        name: format!("pipe {k}"),
        net,
        boxes,
        input: (0..count)
            .map(|i| Record::new().with_field("A", Value::int(i)))
            .collect(),
        expect: count as u64,
        check: |r| field(r, "A").is_some(),
        units: count as u64 * k as u64,
        unit: "hop",
    }
}

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// `fan W`: `(work)!<T>` with W tags; `work` spins 50 µs (or sleeps 200 µs if
/// `sleep`: shows the engine's parallelism even on a loaded machine).
fn fan(w: i32, count: i32, sleep: bool) -> Case {
    let net = compile("net fan { box work((A) -> (A)); } connect (work)!<T>;");
    let work: Arc<dyn BoxFn> = Arc::new(move |mut args: snet_core::Args, out: &mut dyn Emitter| {
        if sleep {
            std::thread::sleep(Duration::from_micros(200));
        } else {
            spin(Duration::from_micros(50));
        }
        let v = args.pop().ok_or_else(|| BoxFailure("no arg".into()))?;
        out.emit(1, snet_core::args![v])
    });
    let mut boxes = BoxTable::new();
    boxes.insert("work", work);
    Case {
        name: format!("fan{} {w}", if sleep { "-sleep" } else { "" }),
        net,
        boxes,
        input: (0..count)
            .map(|i| {
                Record::new()
                    .with_field("A", Value::int(i))
                    .with_tag("T", i % w)
            })
            .collect(),
        expect: count as u64,
        check: |r| field(r, "A").is_some(),
        units: count as u64,
        unit: "record",
    }
}

fn run_once(e: &dyn Engine, c: &Case, workers: usize) -> (Duration, RunStats) {
    let mut src = c.input.clone().into_iter().fuse();
    let mut sink = Check {
        n: 0,
        bad: 0,
        f: c.check,
    };
    let t = Instant::now();
    let st = e
        .run(
            &c.net,
            &c.boxes,
            &mut src,
            &mut sink,
            &RunOptions::new(workers),
        )
        .unwrap_or_else(|err| panic!("{} on {}: {err}", c.name, e.name()));
    let dt = t.elapsed();
    assert_eq!(
        sink.n,
        c.expect,
        "{} on {} -w {workers}: output count",
        c.name,
        e.name()
    );
    assert_eq!(
        sink.bad,
        0,
        "{} on {} -w {workers}: wrong values",
        c.name,
        e.name()
    );
    (dt, st)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2)
        .copied()
        .unwrap_or(Duration::from_nanos(1))
}

/// `synchro N` input generated on the fly (nothing held in memory).
struct SynchroSource {
    n: i32,
    i: i32,
}

impl snet_core::RecordSource for SynchroSource {
    fn next_record(&mut self) -> Result<Option<Record>, RunError> {
        if self.i >= self.n * 10 {
            return Ok(None);
        }
        let (g, j) = (self.i / 10, self.i % 10);
        self.i += 1;
        let name = if j < 5 { "A" } else { "B" };
        Ok(Some(
            Record::new().with_field(name, Value::int(g * 5 + j % 5)),
        ))
    }
}

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// `front rss N W`: peak RSS of `synchro N` on front with W workers (one run per
/// process, since the peak is per process).
fn rss(n: i32, workers: usize) {
    let c = synchro(1);
    let mut src = SynchroSource { n, i: 0 };
    let mut sink = Check {
        n: 0,
        bad: 0,
        f: c.check,
    };
    let t = Instant::now();
    let st = FrontEngine::default()
        .run(
            &c.net,
            &c.boxes,
            &mut src,
            &mut sink,
            &RunOptions::new(workers),
        )
        .unwrap_or_else(|e| panic!("synchro {n}: {e}"));
    assert_eq!((sink.n, sink.bad), (5 * n as u64, 0));
    println!(
        "synchro {n} front -w {workers}: {:.3} s, peak RSS {} MiB, entities {}",
        t.elapsed().as_secs_f64(),
        vm_hwm_kib() / 1024,
        st.entities_created
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("rss") {
        let n = args
            .get(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(1_000_000);
        let w = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
        rss(n, w);
        return;
    }
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    type Maker = Box<dyn Fn() -> Case>;
    let makers: Vec<(&str, Maker)> = vec![
        ("deep 1000", Box::new(|| deep(1000))),
        ("deep 10000", Box::new(|| deep(10000))),
        ("synchro 10000", Box::new(|| synchro(10000))),
        ("fibtree 20", Box::new(|| fibtree(20))),
        ("fibtree 25", Box::new(|| fibtree(25))),
        ("pipe 1", Box::new(|| pipe(1, 200_000))),
        ("pipe 10", Box::new(|| pipe(10, 200_000))),
        ("fan 64", Box::new(|| fan(64, 4000, false))),
        ("fan-sleep 64", Box::new(|| fan(64, 1000, true))),
    ];
    println!(
        "{:<14} {:>10} {:>10} {:>10} {:>8} {:>8} {:>12} {:>7} {:>9} {:>9}",
        "program",
        "seq",
        "front-1",
        "front-2",
        "f1/seq",
        "f2/f1",
        "ns/unit f1",
        "steals",
        "peak",
        "busy(f2)"
    );
    for (name, make) in &makers {
        let selected = filters.iter().any(|f| {
            // "deep" selects every deep row, "deep 1000" only that one.
            if f.contains(' ') {
                name == f
            } else {
                name.starts_with(f.as_str())
            }
        });
        if !filters.is_empty() && !selected {
            continue;
        }
        let c = make();
        let front = FrontEngine::default();
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); 3];
        let mut last: Option<RunStats> = None;
        let only = std::env::var("ENGINES").unwrap_or_else(|_| "seq,front1,front2".into());
        for _ in 0..runs {
            if only.contains("seq") {
                times[0].push(run_once(&SeqEngine, &c, 1).0);
            }
            if only.contains("front1") {
                times[1].push(run_once(&front, &c, 1).0);
            }
            if only.contains("front2") {
                let (t, st) = run_once(&front, &c, 2);
                times[2].push(t);
                last = Some(st);
            }
        }
        let m: Vec<Duration> = times.into_iter().map(median).collect();
        let st = last.unwrap_or_default();
        let busy: Vec<String> = st
            .workers
            .iter()
            .map(|w| {
                format!(
                    "{:.0}%",
                    100.0 * w.busy.as_secs_f64() / st.wall.as_secs_f64().max(1e-9)
                )
            })
            .collect();
        println!(
            "{:<14} {:>9.4}s {:>9.4}s {:>9.4}s {:>8.2} {:>8.2} {:>7.1}/{:<4} {:>7} {:>9} {:>9}",
            c.name,
            m[0].as_secs_f64(),
            m[1].as_secs_f64(),
            m[2].as_secs_f64(),
            m[1].as_secs_f64() / m[0].as_secs_f64(),
            m[2].as_secs_f64() / m[1].as_secs_f64(),
            m[1].as_nanos() as f64 / c.units as f64,
            c.unit,
            st.steals,
            st.peak_in_flight,
            busy.join("/"),
        );
    }
}
