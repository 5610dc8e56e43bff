//! The FRONT engine against the `seq` reference on small programs, at 1, 2 and 3
//! workers, plus engine-specific behaviour (input limit, errors, trace, statistics).

use snet_core::{
    Arg, BoxFailure, BoxTable, Emitter, Engine, Label, Net, Record, RecordSource, RunError,
    RunOptions, RunStats, SeqEngine, Value,
};
use snet_front::{BoxConcurrency, FrontEngine, FrontOptions, InputLimit};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn compile(src: &str) -> Net {
    match snet_lang::compile_str("t.snet", src) {
        Ok(c) => c.net,
        Err(d) => panic!("{}", d.render()),
    }
}

fn int(r: &Record, name: &str) -> Option<i32> {
    r.field(Label::field(name))?.as_ref()?.as_i32()
}

fn a(v: i32) -> Record {
    Record::new().with_field("A", Value::int(v))
}

fn int_arg(args: &[Arg], i: usize) -> Result<i32, BoxFailure> {
    match args.get(i) {
        Some(Arg::Field(Some(v))) => v.as_i32().ok_or_else(|| BoxFailure("not an int".into())),
        Some(Arg::Tag(t)) => Ok(*t),
        _ => Err(BoxFailure("missing argument".into())),
    }
}

fn boxes(list: Vec<(&str, Arc<dyn snet_core::BoxFn>)>) -> BoxTable {
    let mut t = BoxTable::new();
    for (n, f) in list {
        t.insert(n, f);
    }
    t
}

/// `foo`: A > 0 → {A-1}, else {B=0}.
fn dec() -> Arc<dyn snet_core::BoxFn> {
    Arc::new(|args: snet_core::Args, out: &mut dyn Emitter| {
        let a = int_arg(&args, 0)?;
        if a > 0 {
            out.emit(1, snet_core::args![Arg::Field(Some(Value::int(a - 1)))])
        } else {
            out.emit(2, snet_core::args![Arg::Field(Some(Value::int(0)))])
        }
    })
}

/// Identity on {A}.
fn id() -> Arc<dyn snet_core::BoxFn> {
    Arc::new(|mut args: snet_core::Args, out: &mut dyn Emitter| {
        let v = args.pop().ok_or_else(|| BoxFailure("no arg".into()))?;
        out.emit(1, snet_core::args![v])
    })
}

fn run(
    e: &dyn Engine,
    net: &Net,
    b: &BoxTable,
    input: &[Record],
    workers: usize,
) -> Result<(Vec<Record>, RunStats), RunError> {
    let mut out = Vec::new();
    let mut src = input.iter().cloned().fuse();
    let st = e.run(net, b, &mut src, &mut out, &RunOptions::new(workers))?;
    Ok((out, st))
}

fn show(rs: &[Record]) -> Vec<String> {
    rs.iter().map(|r| format!("{r:?}")).collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// Runs on seq and on front (plain and on a fork-join pool) at 1..=3 workers;
/// compares (in order if `ordered`).
fn agree(net: &Net, b: &BoxTable, input: &[Record], ordered: bool) -> Vec<Record> {
    let (want, _) = run(&SeqEngine, net, b, input, 1).expect("seq run");
    let variants = (1..=3).flat_map(|w| [(w, false, 1), (w, true, 1), (w, false, 3)]);
    for (w, forkjoin, k) in variants {
        let e = FrontEngine::new(FrontOptions {
            forkjoin,
            box_concurrency: BoxConcurrency {
                default: k,
                by_name: Vec::new(),
            },
            ..FrontOptions::default()
        });
        let (got, st) = run(&e, net, b, input, w)
            .unwrap_or_else(|e| panic!("front -w {w} forkjoin {forkjoin} K {k}: {e}"));
        assert!(st.balanced(), "front -w {w}: unbalanced\n{st}");
        assert_eq!(st.workers.len(), w);
        if ordered {
            assert_eq!(show(&got), show(&want), "front -w {w}");
        } else {
            assert_eq!(sorted(show(&got)), sorted(show(&want)), "front -w {w}");
        }
    }
    want
}

#[test]
fn deep_star_of_boxes() {
    let net = compile("net deep { box foo((A) -> (A) | (B)); } connect foo*{B};");
    let b = boxes(vec![("foo", dec())]);
    let input: Vec<Record> = (0..60).map(|i| a(i % 17).with_tag("id", i)).collect();
    let out = agree(&net, &b, &input, false);
    assert_eq!(out.len(), 60);
    assert!(out.iter().all(|r| int(r, "B") == Some(0)));
}

#[test]
fn deterministic_star_keeps_input_order() {
    let net = compile("net deep { box foo((A) -> (A) | (B)); } connect foo**{B};");
    let b = boxes(vec![("foo", dec())]);
    let input: Vec<Record> = (0..50).map(|i| a((i * 7) % 13).with_tag("id", i)).collect();
    let out = agree(&net, &b, &input, true);
    let ids: Vec<i32> = out
        .iter()
        .map(|r| r.tag(Label::tag("id")).unwrap())
        .collect();
    assert_eq!(ids, (0..50).collect::<Vec<_>>());
}

#[test]
fn pipeline_keeps_order() {
    let net = compile(
        "net pipe { box f((A) -> (A)); box g((A) -> (A)); box h((A) -> (A)); } connect f .. g .. h;",
    );
    let b = boxes(vec![("f", id()), ("g", id()), ("h", id())]);
    let input: Vec<Record> = (0..500).map(a).collect();
    let out = agree(&net, &b, &input, true);
    assert_eq!(out.len(), 500);
}

#[test]
fn synchro_star() {
    let net = compile("net synchro connect [|{A},{B}|]*{A,B};");
    let mut input = Vec::new();
    for g in 0..40 {
        for k in 0..5 {
            input.push(a(g * 5 + k));
        }
        for k in 0..5 {
            input.push(Record::new().with_field("B", Value::int(g * 5 + k)));
        }
    }
    let out = agree(&net, &BoxTable::new(), &input, true);
    assert_eq!(out.len(), 200);
    assert!(out.iter().all(|r| int(r, "A") == int(r, "B")));
}

#[test]
fn split_with_many_outputs_per_box() {
    // One box call emits many records to many replicas (licences, not walking).
    let net = compile(
        "net fan { box spread((N) -> (A, <T>)); box work((A) -> (A)); } connect spread .. (work)!<T>;",
    );
    let spread: Arc<dyn snet_core::BoxFn> =
        Arc::new(|args: snet_core::Args, out: &mut dyn Emitter| {
            let n = int_arg(&args, 0)?;
            for i in 0..n {
                out.emit(
                    1,
                    snet_core::args![Arg::Field(Some(Value::int(i))), Arg::Tag(i % 7)],
                )?;
            }
            Ok(())
        });
    let b = boxes(vec![("spread", spread), ("work", id())]);
    let input: Vec<Record> = (0..10)
        .map(|i| Record::new().with_field("N", Value::int(30 + i)))
        .collect();
    let out = agree(&net, &b, &input, false);
    assert_eq!(out.len(), (0..10).map(|i| 30 + i).sum::<i32>() as usize);
}

#[test]
fn det_split_orders_by_input() {
    let net = compile("net fan { box work((A) -> (A)); } connect (work)!!<T>;");
    let b = boxes(vec![("work", id())]);
    let input: Vec<Record> = (0..300).map(|i| a(i).with_tag("T", i % 5)).collect();
    let out = agree(&net, &b, &input, true);
    assert_eq!(out.len(), 300);
}

#[test]
fn feedback_through_a_box() {
    let net = compile("net fb { box foo((A) -> (A) | (B)); } connect foo \\ {A};");
    let b = boxes(vec![("foo", dec())]);
    let input: Vec<Record> = (0..40).map(|i| a(i % 9)).collect();
    let out = agree(&net, &b, &input, false);
    assert_eq!(out.len(), 40);
}

#[test]
fn initialisers_run_once_before_data() {
    let net = compile("net ini { box init( -> (A)); box f((A) -> (A)); } connect (init | f) .. f;");
    let init: Arc<dyn snet_core::BoxFn> =
        Arc::new(|_args: snet_core::Args, out: &mut dyn Emitter| {
            out.emit(1, snet_core::args![Arg::Field(Some(Value::int(-1)))])
        });
    let b = boxes(vec![("init", init), ("f", id())]);
    let input: Vec<Record> = (0..20).map(a).collect();
    let out = agree(&net, &b, &input, false);
    assert_eq!(out.len(), 21);
    assert_eq!(int(&out[0], "A"), Some(-1));
}

#[test]
fn a_failing_box_stops_the_run_with_its_error() {
    let net = compile("net deep { box foo((A) -> (A) | (B)); } connect foo*{B};");
    let bad: Arc<dyn snet_core::BoxFn> =
        Arc::new(|args: snet_core::Args, out: &mut dyn Emitter| {
            let a = int_arg(&args, 0)?;
            if a == 3 {
                return Err(BoxFailure("three is bad".into()));
            }
            if a > 0 {
                out.emit(1, snet_core::args![Arg::Field(Some(Value::int(a - 1)))])
            } else {
                out.emit(2, snet_core::args![Arg::Field(Some(Value::int(0)))])
            }
        });
    let b = boxes(vec![("foo", bad)]);
    let input: Vec<Record> = (0..100).map(|i| a(i % 10)).collect();
    for w in 1..=2 {
        let e = run(&FrontEngine::default(), &net, &b, &input, w).expect_err("must fail");
        assert!(e.to_string().contains("three is bad"), "{e}");
    }
}

#[test]
fn input_errors_stop_the_run() {
    struct Bad(u32);
    impl RecordSource for Bad {
        fn next_record(&mut self) -> Result<Option<Record>, RunError> {
            self.0 += 1;
            if self.0 > 5 {
                Err(RunError::new("input", None, "broken pipe"))
            } else {
                Ok(Some(a(1)))
            }
        }
    }
    let net = compile("net deep { box foo((A) -> (A) | (B)); } connect foo*{B};");
    let b = boxes(vec![("foo", dec())]);
    let mut out = Vec::new();
    let e = FrontEngine::default()
        .run(&net, &b, &mut Bad(0), &mut out, &RunOptions::new(2))
        .expect_err("must fail");
    assert!(e.to_string().contains("broken pipe"), "{e}");
}

/// A source that records how far ahead of the output the engine read.
struct Watched {
    next: i32,
    n: i32,
    max_ahead: Arc<std::sync::atomic::AtomicI64>,
    out: Arc<std::sync::atomic::AtomicI64>,
}

impl RecordSource for Watched {
    fn next_record(&mut self) -> Result<Option<Record>, RunError> {
        if self.next == self.n {
            return Ok(None);
        }
        self.next += 1;
        let ahead = self.next as i64 - self.out.load(std::sync::atomic::Ordering::SeqCst);
        self.max_ahead
            .fetch_max(ahead, std::sync::atomic::Ordering::SeqCst);
        Ok(Some(a(self.next % 20)))
    }
}

struct Counted(Arc<std::sync::atomic::AtomicI64>, usize);

impl snet_core::RecordSink for Counted {
    fn write_record(&mut self, _rec: Record) -> Result<(), RunError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.1 += 1;
        Ok(())
    }
}

#[test]
fn input_limit_bounds_records_in_flight() {
    let net = compile("net deep { box foo((A) -> (A) | (B)); } connect foo*{B};");
    let b = boxes(vec![("foo", dec())]);
    for (limit, w) in [("4 + output", 1), ("4 + output", 2), ("1,1", 2)] {
        let l: InputLimit = limit.parse().unwrap();
        let max_ahead = Arc::new(std::sync::atomic::AtomicI64::new(0));
        let outc = Arc::new(std::sync::atomic::AtomicI64::new(0));
        let mut src = Watched {
            next: 0,
            n: 300,
            max_ahead: max_ahead.clone(),
            out: outc.clone(),
        };
        let mut sink = Counted(outc, 0);
        let e = FrontEngine::new(FrontOptions {
            input_limit: Some(l),
            ..FrontOptions::default()
        });
        let st = e
            .run(&net, &b, &mut src, &mut sink, &RunOptions::new(w))
            .unwrap();
        assert_eq!(sink.1, 300);
        assert!(
            st.peak_in_flight <= l.base + w as u64,
            "{limit}: peak {}",
            st.peak_in_flight
        );
        assert!(
            max_ahead.load(std::sync::atomic::Ordering::SeqCst) <= l.base as i64,
            "{limit}: read too far ahead"
        );
    }
}

#[test]
fn trace_file_lists_box_invocations_per_worker() {
    let net = compile("net deep { box foo((A) -> (A) | (B)); } connect foo*{B};");
    let b = boxes(vec![("foo", dec())]);
    let dir = std::env::temp_dir().join(format!("snet-front-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.json");
    let e = FrontEngine::new(FrontOptions {
        trace: Some(path.clone()),
        ..FrontOptions::default()
    });
    let input: Vec<Record> = (0..10).map(a).collect();
    let (_, st) = run(&e, &net, &b, &input, 2).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let boxes_traced = text.matches("\"cat\":\"box\"").count() as u64;
    assert_eq!(boxes_traced, st.box_calls);
    assert!(text.contains("\"name\":\"worker 1\""));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stats_are_filled() {
    let net = compile("net deep { box foo((A) -> (A) | (B)); } connect foo*{B};");
    let b = boxes(vec![("foo", dec())]);
    let input: Vec<Record> = (0..30).map(|i| a(i % 6)).collect();
    let (_, st) = run(&FrontEngine::default(), &net, &b, &input, 2).unwrap();
    assert_eq!(st.engine, "front");
    assert_eq!(st.records_in, 30);
    assert_eq!(st.records_out, 30);
    assert_eq!(st.box_calls, (0..30).map(|i| i % 6 + 1).sum::<u64>());
    assert!(st.entities_created >= 6);
    assert!(st.peak_in_flight >= 1);
    assert!(st.workers.iter().all(|w| w.busy + w.idle <= st.wall * 2));
}

#[test]
fn star_of_depth_100k_does_not_overflow() {
    let net = compile("net deep { box foo((A) -> (A) | (B)); } connect foo*{B};");
    let b = boxes(vec![("foo", dec())]);
    let (out, st) = run(&FrontEngine::default(), &net, &b, &[a(100_000)], 2).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(st.box_calls, 100_001);
}

#[test]
fn det_initialisers() {
    let net =
        compile("net ini { box init( -> (A)); box f((A) -> (A)); } connect (init || f) .. f;");
    let init: Arc<dyn snet_core::BoxFn> =
        Arc::new(|_args: snet_core::Args, out: &mut dyn Emitter| {
            out.emit(1, snet_core::args![Arg::Field(Some(Value::int(-1)))])?;
            out.emit(1, snet_core::args![Arg::Field(Some(Value::int(-2)))])
        });
    let b = boxes(vec![("init", init), ("f", id())]);
    let input: Vec<Record> = (0..20).map(|i| a(i % 7).with_tag("id", i)).collect();
    let out = agree(&net, &b, &input, true);
    assert_eq!(out.len(), 22);
}

/// A box that sleeps longer for earlier records (so later invocations finish first when
/// they run concurrently) and emits 0, 1 or 3 records; counts how many of its
/// invocations overlap.
fn jittered(now: Arc<AtomicUsize>, peak: Arc<AtomicUsize>) -> Arc<dyn snet_core::BoxFn> {
    Arc::new(move |args: snet_core::Args, out: &mut dyn Emitter| {
        let a = int_arg(&args, 0)?;
        let n = now.fetch_add(1, Ordering::SeqCst) + 1;
        peak.fetch_max(n, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_micros(20 * (8 - (a % 8)) as u64));
        now.fetch_sub(1, Ordering::SeqCst);
        for k in 0..[0, 1, 3][(a % 3) as usize] {
            out.emit(
                1,
                snet_core::args![Arg::Field(Some(Value::int(a * 10 + k)))],
            )?;
        }
        Ok(())
    })
}

#[test]
fn concurrent_invocations_of_one_box_keep_stream_order() {
    let net = compile("net one { box work((A) -> (A)); box g((A) -> (A)); } connect work .. g;");
    let now = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let b = boxes(vec![("work", jittered(now, peak.clone())), ("g", id())]);
    let input: Vec<Record> = (0..200).map(a).collect();
    let (want, _) = run(&SeqEngine, &net, &b, &input, 1).unwrap();
    let expect: usize = (0..200).map(|a| [0, 1, 3][a % 3]).sum();
    assert_eq!(want.len(), expect);
    for w in [2, 3] {
        let e = FrontEngine::new(FrontOptions {
            box_concurrency: "1,work=4".parse().unwrap(),
            ..FrontOptions::default()
        });
        // Overlap depends on scheduling: some of the runs must show it.
        peak.store(0, Ordering::SeqCst);
        for _ in 0..10 {
            let (got, st) = run(&e, &net, &b, &input, w).unwrap();
            assert!(st.balanced(), "{st}");
            assert_eq!(show(&got), show(&want), "-w {w}: stream order");
        }
        let p = peak.load(Ordering::SeqCst);
        assert!((2..=4).contains(&p), "-w {w}: {p} overlapping invocations");
    }
}

#[test]
fn concurrent_invocations_inside_a_deterministic_split() {
    let net = compile("net one { box work((A) -> (A)); } connect (work .. work)!!<T>;");
    let now = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let b = boxes(vec![("work", jittered(now, peak))]);
    let input: Vec<Record> = (0..150).map(|i| a(i).with_tag("T", i % 4)).collect();
    let (want, _) = run(&SeqEngine, &net, &b, &input, 1).unwrap();
    let e = FrontEngine::new(FrontOptions {
        box_concurrency: "3".parse().unwrap(),
        ..FrontOptions::default()
    });
    for _ in 0..5 {
        let (got, st) = run(&e, &net, &b, &input, 2).unwrap();
        assert!(st.balanced(), "{st}");
        assert_eq!(show(&got), show(&want));
    }
}

#[test]
fn a_failing_concurrent_box_stops_the_run() {
    let net = compile("net one { box work((A) -> (A)); } connect work;");
    let bad: Arc<dyn snet_core::BoxFn> =
        Arc::new(|args: snet_core::Args, out: &mut dyn Emitter| {
            let a = int_arg(&args, 0)?;
            if a == 57 {
                return Err(BoxFailure("fifty-seven".into()));
            }
            out.emit(1, snet_core::args![Arg::Field(Some(Value::int(a)))])
        });
    let b = boxes(vec![("work", bad)]);
    let input: Vec<Record> = (0..300).map(a).collect();
    let e = FrontEngine::new(FrontOptions {
        box_concurrency: "4".parse().unwrap(),
        ..FrontOptions::default()
    });
    for w in 1..=3 {
        let err = run(&e, &net, &b, &input, w).expect_err("must fail");
        assert!(err.to_string().contains("fifty-seven"), "{err}");
    }
}
