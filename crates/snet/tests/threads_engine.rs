//! The threads engine (`--engine threads`): bounded box inboxes never add a deadlock
//! that S-Net does not have (and the run fails rather than hangs if they ever did),
//! back pressure bounds what is in flight, errors stop the run, and every box thread
//! is joined before the run returns.

use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Program, Record};
use snet_core::{Engine, Label, RunOptions, RunStats};
use snet_threads::ThreadsEngine;
use std::sync::atomic::{AtomicUsize, Ordering};

fn run_threads(
    prog: &Program,
    engine: ThreadsEngine,
    workers: usize,
    input: Vec<Record>,
) -> Result<(Vec<Record>, RunStats), snet::RunError> {
    let mut out = Vec::new();
    let mut src = input.into_iter().fuse();
    let stats = engine.run(
        prog.net(),
        prog.boxes(),
        &mut src,
        &mut out,
        &RunOptions { workers },
    )?;
    Ok((out, stats))
}

fn cap(k: usize) -> ThreadsEngine {
    ThreadsEngine {
        stream_capacity: k,
        ..ThreadsEngine::default()
    }
}

fn tag(r: &Record, name: &str) -> Option<i32> {
    r.tag(Label::tag(name))
}

/// The output as a sorted list (engines agree on the multiset).
fn sorted(out: &[Record]) -> Vec<String> {
    let mut v: Vec<String> = out.iter().map(|r| format!("{r:?}")).collect();
    v.sort();
    v
}

/// `fan` re-emits `n` records per input into the loop until `<k>` reaches 0; `relay`
/// is a second box in the loop, so two box threads each write into the other's inbox.
/// `solo` is the same with `fan` alone in its loop (it writes into its own inbox).
fn big_feedback(solo: bool) -> Program {
    let src = if solo {
        "net bigfb { box fan((<n>, <k>) -> (<n>, <k>) | (<done>)); } connect fan \\ {<k>};"
    } else {
        "net bigfb {
            box fan((<n>, <k>) -> (<n>, <k>) | (<done>));
            box relay((<n>, <k>) -> (<n>, <k>));
         } connect (fan .. (relay | [{<done>} -> {<done>}])) \\ {<k>};"
    };
    let mut p = Program::from_source("bigfb.snet", src).unwrap();
    p.bind("fan", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let (n, k) = (i.tag("n").unwrap_or(0), i.tag("k").unwrap_or(0));
        if k == 0 {
            return o.emit(2, vec![Arg::tag(1)]);
        }
        for _ in 0..n {
            o.emit(1, vec![Arg::tag(n), Arg::tag(k - 1)])?;
        }
        Ok(())
    })
    .unwrap();
    if !solo {
        p.bind("relay", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
            o.emit(
                1,
                vec![
                    Arg::tag(i.tag("n").unwrap_or(0)),
                    Arg::tag(i.tag("k").unwrap_or(0)),
                ],
            )
        })
        .unwrap();
    }
    p
}

#[test]
fn a_big_feedback_loop_runs_to_completion_at_tiny_capacities() {
    // 150 records per firing, all circulating at once: 150 + 150^2 records pass the
    // loop; with blocking writes inside it, every capacity here would deadlock (see
    // the next test).
    for solo in [false, true] {
        let p = big_feedback(solo);
        let input = vec![
            Record::new().with_tag("n", 150).with_tag("k", 2),
            Record::new().with_tag("n", 3).with_tag("k", 3),
        ];
        let want = sorted(&p.run_records(EngineKind::Seq, input.clone()).unwrap());
        assert_eq!(want.len(), 150 * 150 + 27);
        let calls = if solo { 1 } else { 2 };
        for capacity in [1, 2, 256] {
            for workers in [1, 2] {
                let what = format!("solo {solo}, capacity {capacity}, {workers} workers");
                let (out, stats) = run_threads(&p, cap(capacity), workers, input.clone())
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(sorted(&out), want, "{what}");
                assert!(out.iter().all(|r| tag(r, "done") == Some(1)), "{what}");
                assert_eq!(
                    stats.box_calls,
                    2 + calls * (150 + 150 * 150 + 3 + 9 + 27),
                    "{what}"
                );
                assert!(stats.balanced(), "{what}");
            }
        }
    }
}

#[test]
fn blocking_inside_a_feedback_loop_is_reported_as_a_deadlock_not_a_hang() {
    // With the exemption for pushes inside a common feedback loop switched off, `fan`
    // blocks on `relay`'s full inbox while `relay` blocks on `fan`'s: the engine's
    // check must notice that nothing runs any more and fail the run.
    let p = big_feedback(false);
    let input = vec![Record::new().with_tag("n", 150).with_tag("k", 2)];
    for capacity in [1, 4, 256] {
        let engine = ThreadsEngine {
            block_in_loops: true,
            ..cap(capacity)
        };
        let err = run_threads(&p, engine, 2, input.clone())
            .map(|(o, _)| o.len())
            .unwrap_err();
        assert!(
            err.to_string().contains("internal deadlock"),
            "capacity {capacity}: {err}"
        );
    }
}

#[test]
fn back_pressure_bounds_the_records_in_flight() {
    // A slow second box: without blocking pushes the input thread would queue all the
    // input (up to 4096 pending jobs).
    let mut p = Program::from_source(
        "pipe.snet",
        "net pipe { box a((<x>) -> (<x>)); box b((<x>) -> (<x>)); } connect a .. b;",
    )
    .unwrap();
    p.bind("a", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::tag(i.tag("x").unwrap_or(0))])
    })
    .unwrap();
    p.bind("b", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_micros(20) {
            std::hint::spin_loop();
        }
        o.emit(1, vec![Arg::tag(i.tag("x").unwrap_or(0))])
    })
    .unwrap();
    let input: Vec<Record> = (0..3000).map(|x| Record::new().with_tag("x", x)).collect();
    for workers in [1, 2] {
        let (out, stats) = run_threads(&p, cap(4), workers, input.clone()).unwrap();
        let got: Vec<i32> = out.iter().map(|r| tag(r, "x").unwrap()).collect();
        assert_eq!(got, (0..3000).collect::<Vec<_>>(), "a pipeline keeps order");
        // Per box: 4 queued, a batch of at most 4 taken (one of them running), an
        // output waiting for room; the input thread's record waiting for room.
        assert!(
            stats.peak_in_flight <= 2 * (4 + 4 + 1) + 1,
            "peak in flight {} with capacity 4",
            stats.peak_in_flight
        );
    }
}

#[test]
fn a_failing_box_stops_the_run_even_with_blocked_producers() {
    let mut p = Program::from_source(
        "fail.snet",
        "net fail { box a((<x>) -> (<x>)); box b((<x>) -> (<x>)); } connect a .. b;",
    )
    .unwrap();
    p.bind("a", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::tag(i.tag("x").unwrap_or(0))])
    })
    .unwrap();
    p.bind("b", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let x = i.tag("x").unwrap_or(0);
        if x == 500 {
            return Err(snet_core::BoxFailure("x is 500".into()));
        }
        o.emit(1, vec![Arg::tag(x)])
    })
    .unwrap();
    let input: Vec<Record> = (0..5000).map(|x| Record::new().with_tag("x", x)).collect();
    for workers in [1, 2] {
        let err = run_threads(&p, cap(1), workers, input.clone())
            .map(|(o, _)| o.len())
            .unwrap_err();
        assert!(err.to_string().contains("`b`"), "{err}");
        assert!(err.to_string().contains("x is 500"), "{err}");
    }
}

#[test]
fn initialisers_and_feedback_with_an_outside_writer_at_capacity_one() {
    // An initialiser inside a parallel composition (its gate orders data after the
    // initialiser's record) and a feedback loop entered from a box outside it: the
    // outside writer blocks, writes inside the loop do not.
    let mut p = Program::from_source(
        "initfb.snet",
        "net initfb {
            box init( -> (<v>));
            box pre((<x>) -> (<x>, <c>));
            box step((<x>, <c>) -> (<x>, <c>) | (<x>, <fin>));
         } connect (init | pre) .. ([{<v>} -> {<v>}] | (step \\ {<c>}));",
    )
    .unwrap();
    p.bind("init", |_i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::tag(7)])
    })
    .unwrap();
    p.bind("pre", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::tag(i.tag("x").unwrap_or(0)), Arg::tag(3)])
    })
    .unwrap();
    p.bind("step", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let (x, c) = (i.tag("x").unwrap_or(0), i.tag("c").unwrap_or(0));
        if c == 0 {
            o.emit(2, vec![Arg::tag(x), Arg::tag(1)])
        } else {
            o.emit(1, vec![Arg::tag(x), Arg::tag(c - 1)])
        }
    })
    .unwrap();
    let input: Vec<Record> = (0..200).map(|x| Record::new().with_tag("x", x)).collect();
    let want = sorted(&p.run_records(EngineKind::Seq, input.clone()).unwrap());
    assert_eq!(want.len(), 201);
    for workers in [1, 2] {
        let (out, _) = run_threads(&p, cap(1), workers, input.clone()).unwrap();
        assert_eq!(tag(&out[0], "v"), Some(7), "the initialiser's record first");
        assert_eq!(sorted(&out), want);
    }
}

/// Thread-local state of the `keep` box's threads whose destructor has finished.
static DROPPED: AtomicUsize = AtomicUsize::new(0);
/// Threads that created such state.
static CREATED: AtomicUsize = AtomicUsize::new(0);

/// Thread-local state of a box thread, dropped when the thread ends (slowly).
struct Local;

impl Local {
    fn new() -> Local {
        CREATED.fetch_add(1, Ordering::SeqCst);
        Local
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        std::thread::sleep(std::time::Duration::from_millis(20));
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

thread_local! {
    static LOCAL: Local = Local::new();
}

#[test]
fn every_box_thread_is_joined_before_the_run_returns() {
    // 24 replicas of `keep`, each a box thread with thread-local state whose destructor
    // takes a while: once the run returns, every thread has ended, destructors
    // included (the scope only waited for the threads' closures, so the run returned
    // while they were still being dropped). The same after a box error.
    let mut p = Program::from_source(
        "keep.snet",
        "net keep { box keep((<k>) -> (<k>)); } connect keep ! <k>;",
    )
    .unwrap();
    p.bind("keep", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        LOCAL.with(|_| {});
        let k = i.tag("k").unwrap_or(0);
        if k == 1000 {
            return Err(snet_core::BoxFailure("k is 1000".into()));
        }
        o.emit(1, vec![Arg::tag(k)])
    })
    .unwrap();
    let input: Vec<Record> = (0..24).map(|k| Record::new().with_tag("k", k)).collect();
    let (out, _) = run_threads(&p, ThreadsEngine::default(), 2, input.clone()).unwrap();
    assert_eq!(out.len(), 24);
    assert_eq!(CREATED.load(Ordering::SeqCst), 24);
    assert_eq!(
        DROPPED.load(Ordering::SeqCst),
        24,
        "box threads still running"
    );
    let mut failing = input;
    failing.push(Record::new().with_tag("k", 1000));
    failing.extend((2000..2024).map(|k| Record::new().with_tag("k", k)));
    let err = run_threads(&p, ThreadsEngine::default(), 2, failing)
        .map(|(o, _)| o.len())
        .unwrap_err();
    assert!(err.to_string().contains("k is 1000"), "{err}");
    let created = CREATED.load(Ordering::SeqCst);
    assert!(created > 24, "{created}");
    assert_eq!(
        DROPPED.load(Ordering::SeqCst),
        created,
        "box threads still running after an error"
    );
}
