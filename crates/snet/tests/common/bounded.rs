//! Checks shared by the engines with bounded inboxes (`lpel`, `threads`): each test
//! file passes a runner for its engine. Included with `#[path]` (not through
//! `common/mod.rs`, whose example helpers these files do not use).

use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Program, Record};
use snet_core::{Engine, Label, RunStats};

/// A run's output records and statistics, or its error.
pub(crate) type Outcome = Result<(Vec<Record>, RunStats), snet::RunError>;

/// Runs a program on an engine with this inbox capacity and worker count.
pub(crate) type Runner<'a> = &'a dyn Fn(&Program, usize, usize, Vec<Record>) -> Outcome;

/// Runs `prog` on `engine` with `workers` workers over `input`.
pub(crate) fn run_on(
    engine: &dyn Engine,
    prog: &Program,
    workers: usize,
    input: Vec<Record>,
) -> Outcome {
    prog.run_records_on(engine, input, workers)
}

pub(crate) fn tag(r: &Record, name: &str) -> Option<i32> {
    r.tag(Label::tag(name))
}

/// The output as a sorted list (engines agree on the multiset).
pub(crate) fn sorted(out: &[Record]) -> Vec<String> {
    let mut v: Vec<String> = out.iter().map(|r| format!("{r:?}")).collect();
    v.sort();
    v
}

/// `fan` re-emits `n` records per input into the loop until `<k>` reaches 0; `relay`
/// is a second box in the loop, so two box threads each write into the other's inbox.
/// `solo` is the same with `fan` alone in its loop (it writes into its own inbox).
pub(crate) fn big_feedback(solo: bool) -> Program {
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

/// 150 records per firing circulate at once in a feedback loop, at every capacity.
pub(crate) fn a_big_feedback_loop_runs_to_completion(run: Runner<'_>, capacities: &[usize]) {
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
        for &capacity in capacities {
            for workers in [1, 2] {
                let what = format!("solo {solo}, capacity {capacity}, {workers} workers");
                let (out, stats) = run(&p, capacity, workers, input.clone())
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

/// `net NAME connect a .. b;` on tag `<x>`: `a` passes `<x>` on, `b` is `b_box`.
fn a_then(
    name: &str,
    b_box: impl Fn(&BoxInput<'_>, &mut BoxOutput<'_>) -> Result<(), snet_core::BoxFailure>
        + Send
        + Sync
        + 'static,
) -> Program {
    let src =
        format!("net {name} {{ box a((<x>) -> (<x>)); box b((<x>) -> (<x>)); }} connect a .. b;");
    let mut p = Program::from_source(&format!("{name}.snet"), &src).unwrap();
    p.bind("a", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::tag(i.tag("x").unwrap_or(0))])
    })
    .unwrap();
    p.bind("b", b_box).unwrap();
    p
}

/// A slow second box: the records in flight stay bounded, order is kept.
pub(crate) fn back_pressure_bounds_the_records_in_flight(run: Runner<'_>) {
    // A slow second box: without blocking pushes the reader would queue all input.
    let p = a_then("pipe", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_micros(20) {
            std::hint::spin_loop();
        }
        o.emit(1, vec![Arg::tag(i.tag("x").unwrap_or(0))])
    });
    let input: Vec<Record> = (0..3000).map(|x| Record::new().with_tag("x", x)).collect();
    for workers in [1, 2] {
        let (out, stats) = run(&p, 4, workers, input.clone()).unwrap();
        let got: Vec<i32> = out.iter().map(|r| tag(r, "x").unwrap()).collect();
        assert_eq!(got, (0..3000).collect::<Vec<_>>(), "a pipeline keeps order");
        // Per box: 4 queued, a batch of at most 4 taken (one of them running), an
        // output waiting for room; the reader's record waiting for room.
        assert!(
            stats.peak_in_flight <= 2 * (4 + 4 + 1) + 1,
            "peak in flight {} with capacity 4",
            stats.peak_in_flight
        );
    }
}

/// A box error stops the run although producers are blocked.
pub(crate) fn a_failing_box_stops_the_run_even_with_blocked_producers(run: Runner<'_>) {
    let p = a_then("fail", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let x = i.tag("x").unwrap_or(0);
        if x == 500 {
            return Err(snet_core::BoxFailure("x is 500".into()));
        }
        o.emit(1, vec![Arg::tag(x)])
    });
    let input: Vec<Record> = (0..5000).map(|x| Record::new().with_tag("x", x)).collect();
    for workers in [1, 2] {
        let err = run(&p, 1, workers, input.clone())
            .map(|(o, _)| o.len())
            .unwrap_err();
        assert!(err.to_string().contains("`b`"), "{err}");
        assert!(err.to_string().contains("x is 500"), "{err}");
    }
}

/// An initialiser and a feedback loop entered from outside it, at capacity one.
pub(crate) fn initialisers_and_feedback_with_an_outside_writer_at_capacity_one(run: Runner<'_>) {
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
        let (out, _) = run(&p, 1, workers, input.clone()).unwrap();
        assert_eq!(tag(&out[0], "v"), Some(7), "the initialiser's record first");
        assert_eq!(sorted(&out), want);
    }
}
