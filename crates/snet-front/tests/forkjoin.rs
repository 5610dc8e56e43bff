//! `FrontOptions::forkjoin`: boxes fork with `snet_forkjoin` onto the engine's workers.

use snet_core::{
    Arg, BoxFailure, BoxTable, Emitter, Engine, Label, Net, Record, RunOptions, Value,
};
use snet_front::{FrontEngine, FrontOptions};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn compile(src: &str) -> Net {
    match snet_lang::compile_str("t.snet", src) {
        Ok(c) => c.net,
        Err(d) => panic!("{}", d.render()),
    }
}

fn int_arg(args: &[Arg], i: usize) -> Result<i32, BoxFailure> {
    match args.get(i) {
        Some(Arg::Field(Some(v))) => v.as_i32().ok_or_else(|| BoxFailure("not an int".into())),
        Some(Arg::Tag(t)) => Ok(*t),
        _ => Err(BoxFailure("missing argument".into())),
    }
}

fn engine() -> FrontEngine {
    FrontEngine::new(FrontOptions {
        forkjoin: true,
        ..FrontOptions::default()
    })
}

fn run(net: &Net, b: &BoxTable, input: Vec<Record>, workers: usize) -> Vec<Record> {
    let mut out = Vec::new();
    let mut src = input.into_iter().fuse();
    engine()
        .run(net, b, &mut src, &mut out, &RunOptions::new(workers))
        .unwrap();
    out
}

fn fib(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    if n < 12 {
        return fib(n - 1) + fib(n - 2);
    }
    let (a, b) = snet_forkjoin::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn fib_seq(n: u32) -> u64 {
    if n < 2 {
        u64::from(n)
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// Sum of `i * i % 7` over `0..n`, split by `for_each` into per-index cells.
fn squares(n: usize) -> u64 {
    let cells: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
    snet_forkjoin::for_each_with_grain(0..n, 64, &|i| {
        cells[i].store(i * i % 7, Ordering::Relaxed);
    });
    cells.iter().map(|c| c.load(Ordering::Relaxed) as u64).sum()
}

/// Boxes `fib` (join) and `sq` (for_each), replicated by `!` so that several box
/// invocations fork at once, with nested joins that park.
#[test]
fn boxes_fork_onto_the_engine_workers_and_results_are_right() {
    let net = compile(
        "net t { box fib((A, <k>) -> (A, F, <k>)); box sq((A, F, <k>) -> (A, F, S)); } \
         connect (fib .. sq) ! <k>;",
    );
    let off_pool = Arc::new(AtomicBool::new(false));
    let mut b = BoxTable::new();
    let flag = off_pool.clone();
    b.insert(
        "fib",
        Arc::new(move |args: snet_core::Args, out: &mut dyn Emitter| {
            if snet_forkjoin::current_worker_index().is_none() {
                flag.store(true, Ordering::SeqCst);
            }
            let a = int_arg(&args, 0)?;
            let k = int_arg(&args, 1)?;
            let f = fib(14 + (a % 8) as u32) as i32;
            out.emit(
                1,
                snet_core::args![
                    Arg::Field(Some(Value::int(a))),
                    Arg::Field(Some(Value::int(f))),
                    Arg::Tag(k)
                ],
            )
        }) as Arc<dyn snet_core::BoxFn>,
    );
    b.insert(
        "sq",
        Arc::new(|args: snet_core::Args, out: &mut dyn Emitter| {
            let a = int_arg(&args, 0)?;
            let f = int_arg(&args, 1)?;
            let s = squares(500 + 10 * a as usize) as i32;
            out.emit(
                1,
                snet_core::args![
                    Arg::Field(Some(Value::int(a))),
                    Arg::Field(Some(Value::int(f))),
                    Arg::Field(Some(Value::int(s)))
                ],
            )
        }),
    );
    let n = 300;
    let input: Vec<Record> = (0..n)
        .map(|i| {
            Record::new()
                .with_field("A", Value::int(i))
                .with_tag("k", i % 3)
        })
        .collect();
    for workers in [1, 2, 3] {
        let out = run(&net, &b, input.clone(), workers);
        assert_eq!(out.len(), n as usize, "{workers} workers");
        let mut seen: Vec<i32> = Vec::new();
        for r in &out {
            let get = |l: &str| r.field(Label::field(l)).and_then(|v| v.as_ref()?.as_i32());
            let a = get("A").unwrap();
            assert_eq!(get("F").unwrap() as u64, fib_seq(14 + (a % 8) as u32));
            let s: u64 = (0..500 + 10 * a as u64).map(|i| i * i % 7).sum();
            assert_eq!(get("S").unwrap() as u64, s, "record {a}");
            seen.push(a);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..n).collect::<Vec<_>>());
    }
    assert!(!off_pool.load(Ordering::SeqCst), "a box ran off the pool");
}

/// One box entity (no S-Net parallelism): the other worker is idle — parked, after
/// the pause — when the box forks, and must still come and take the stolen half. The
/// first half waits (bounded) for the second to start elsewhere, so seeing the
/// halves on two workers proves the idle worker helped.
#[test]
fn an_idle_parked_worker_takes_a_boxes_fork() {
    let net = compile("net t { box w((A) -> (A, B)); } connect w;");
    let stolen = Arc::new(AtomicUsize::new(0));
    let st = stolen.clone();
    let mut b = BoxTable::new();
    b.insert(
        "w",
        Arc::new(move |args: snet_core::Args, out: &mut dyn Emitter| {
            let a = int_arg(&args, 0)?;
            // Long enough for the idle worker to go through spinning into parking.
            std::thread::sleep(Duration::from_millis(30));
            let started = AtomicUsize::new(usize::MAX);
            let me = snet_forkjoin::current_worker_index();
            let (x, y) = snet_forkjoin::join(
                || {
                    let t = Instant::now();
                    while started.load(Ordering::SeqCst) == usize::MAX
                        && t.elapsed() < Duration::from_secs(2)
                    {
                        std::thread::yield_now();
                    }
                    a + 1
                },
                || {
                    started.store(
                        snet_forkjoin::current_worker_index().unwrap_or(usize::MAX - 1),
                        Ordering::SeqCst,
                    );
                    a * 2
                },
            );
            if started.load(Ordering::SeqCst) != me.unwrap_or(usize::MAX) {
                st.fetch_add(1, Ordering::SeqCst);
            }
            out.emit(
                1,
                snet_core::args![
                    Arg::Field(Some(Value::int(x))),
                    Arg::Field(Some(Value::int(y)))
                ],
            )
        }) as Arc<dyn snet_core::BoxFn>,
    );
    let input: Vec<Record> = (0..4)
        .map(|i| Record::new().with_field("A", Value::int(i)))
        .collect();
    let out = run(&net, &b, input, 2);
    let mut got: Vec<(i32, i32)> = out
        .iter()
        .map(|r| {
            let get = |l: &str| r.field(Label::field(l)).and_then(|v| v.as_ref()?.as_i32());
            (get("A").unwrap(), get("B").unwrap())
        })
        .collect();
    got.sort_unstable();
    assert_eq!(got, vec![(1, 0), (2, 2), (3, 4), (4, 6)]);
    assert!(
        stolen.load(Ordering::SeqCst) >= 1,
        "the idle worker never took a fork"
    );
}

/// A box that fails (after forking) stops the run with its error, at 1 and 2 workers.
#[test]
fn a_failing_forking_box_stops_the_run() {
    let net = compile("net t { box w((A) -> (A)); } connect w;");
    let mut b = BoxTable::new();
    b.insert(
        "w",
        Arc::new(|args: snet_core::Args, out: &mut dyn Emitter| {
            let a = int_arg(&args, 0)?;
            let s = squares(2000);
            if a == 50 {
                return Err(BoxFailure(format!("record {a} rejected")));
            }
            out.emit(1, snet_core::args![Arg::Field(Some(Value::int(s as i32)))])
        }) as Arc<dyn snet_core::BoxFn>,
    );
    for workers in [1, 2] {
        let input: Vec<Record> = (0..200)
            .map(|i| Record::new().with_field("A", Value::int(i)))
            .collect();
        let mut out = Vec::new();
        let mut src = input.into_iter().fuse();
        let r = engine().run(&net, &b, &mut src, &mut out, &RunOptions::new(workers));
        let e = r.expect_err("the run must fail");
        assert!(e.to_string().contains("record 50 rejected"), "{e}");
    }
}
