//! The LPEL engine (`--engine lpel`): bounded inboxes never add a deadlock that S-Net
//! does not have, back pressure bounds what is in flight, deep replication runs on
//! small task stacks, deterministic combinators keep their order under concurrency,
//! errors stop the run, and monitoring / trace / placement are wired to the layer.

use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Program, Record};
use snet_lpel::snet_engine::{CliOptions, LpelConfig, LpelEngine};

#[path = "common/bounded.rs"]
mod bounded;
use bounded::tag;

fn run_lpel(
    prog: &Program,
    cfg: LpelConfig,
    workers: usize,
    input: Vec<Record>,
) -> bounded::Outcome {
    bounded::run_on(&LpelEngine::new(cfg), prog, workers, input)
}

fn cap(k: usize) -> LpelConfig {
    LpelConfig {
        stream_capacity: k,
        ..LpelConfig::default()
    }
}

/// The shared checks' runner: the lpel engine with inbox capacity `k`.
fn lpel(p: &Program, k: usize, workers: usize, input: Vec<Record>) -> bounded::Outcome {
    run_lpel(p, cap(k), workers, input)
}

#[test]
fn a_big_feedback_loop_runs_to_completion_at_tiny_capacities() {
    bounded::a_big_feedback_loop_runs_to_completion(&lpel, &[1, 2, 16]);
}

#[test]
fn back_pressure_bounds_the_records_in_flight() {
    bounded::back_pressure_bounds_the_records_in_flight(&lpel);
}

fn dec_box(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), snet_core::BoxFailure> {
    let n = i.tag("n").unwrap_or(0);
    if n == 0 {
        o.emit(2, vec![Arg::tag(1)])
    } else {
        o.emit(1, vec![Arg::tag(n - 1)])
    }
}

#[test]
fn a_star_of_depth_100000_with_a_box_runs_on_small_task_stacks() {
    // 10^5 stages, one box task each: tasks park when their inbox is empty and at most
    // `max_parked` stay parked, so stacks are recycled instead of piling up.
    let mut p = Program::from_source(
        "deepbox.snet",
        "net deepbox { box dec((<n>) -> (<n>) | (<done>)); } connect dec * {<done>};",
    )
    .unwrap();
    p.bind("dec", dec_box).unwrap();
    for (workers, max_parked, blocks) in [(1, 512, None), (2, 8, None), (2, 64, Some(16))] {
        let cfg = LpelConfig {
            max_parked,
            blocks,
            ..LpelConfig::default()
        };
        let (out, stats) =
            run_lpel(&p, cfg, workers, vec![Record::new().with_tag("n", 100_000)]).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(tag(&out[0], "done"), Some(1));
        assert_eq!(stats.box_calls, 100_001);
    }
}

fn spin(us: u64) {
    let t = std::time::Instant::now();
    while t.elapsed() < std::time::Duration::from_micros(us) {
        std::hint::spin_loop();
    }
}

#[test]
fn deterministic_combinators_keep_their_order_at_two_workers() {
    // `**`: records entering at once finish in a different order; `||`: the left
    // branch takes two box hops; `!!`: replicas of different cost. Each run at
    // capacity 1 and 2 workers, 100 times, against the order seq produces.
    let mut star = Program::from_source(
        "stardet.snet",
        "net stardet { box gen((<go>) -> (<a>, <i>)); box foo((<a>) -> (<a>) | (<b>)); }
         connect gen .. foo ** {<b>};",
    )
    .unwrap();
    star.bind("gen", |_i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        for a in [5, 0, 3, 1, 4, 2] {
            o.emit(1, vec![Arg::tag(a), Arg::tag(a)])?;
        }
        Ok(())
    })
    .unwrap();
    star.bind("foo", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let a = i.tag("a").unwrap_or(0);
        if a == 0 {
            o.emit(2, vec![Arg::tag(0)])
        } else {
            o.emit(1, vec![Arg::tag(a - 1)])
        }
    })
    .unwrap();
    let mut par = Program::from_source(
        "pardet.snet",
        "net pardet { box a((<k>) -> (<k>)); box b((<k>) -> (<k>, <l>)); box c((<j>) -> (<j>, <r>)); }
         connect [{<x>} -> {<k=x>}; {<j=x>}] .. ((a .. b) || c);",
    )
    .unwrap();
    par.bind("a", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        spin(2);
        o.emit(1, vec![Arg::tag(i.tag("k").unwrap_or(0))])
    })
    .unwrap();
    par.bind("b", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::tag(i.tag("k").unwrap_or(0)), Arg::tag(1)])
    })
    .unwrap();
    par.bind("c", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::tag(i.tag("j").unwrap_or(0)), Arg::tag(1)])
    })
    .unwrap();
    let mut split = Program::from_source(
        "splitdet.snet",
        "net splitdet { box work((<t>, <x>) -> (<t>, <x>, <y>)); } connect work !! <t>;",
    )
    .unwrap();
    split
        .bind("work", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
            let (t, x) = (i.tag("t").unwrap_or(0), i.tag("x").unwrap_or(0));
            spin(if t == 0 { 5 } else { 0 });
            for y in 0..2 {
                o.emit(1, vec![Arg::tag(t), Arg::tag(x), Arg::tag(y)])?;
            }
            Ok(())
        })
        .unwrap();
    let cases: Vec<(&Program, Vec<Record>)> = vec![
        (&star, vec![Record::new().with_tag("go", 1); 2]),
        (
            &par,
            (0..6).map(|x| Record::new().with_tag("x", x)).collect(),
        ),
        (
            &split,
            (0..12)
                .map(|x| Record::new().with_tag("t", x % 3).with_tag("x", x))
                .collect(),
        ),
    ];
    for (prog, input) in cases {
        let want: Vec<String> = prog
            .run_records(EngineKind::Seq, input.clone())
            .unwrap()
            .iter()
            .map(|r| format!("{r:?}"))
            .collect();
        for round in 0..100 {
            let (out, _) = run_lpel(prog, cap(1), 2, input.clone()).unwrap();
            let got: Vec<String> = out.iter().map(|r| format!("{r:?}")).collect();
            assert_eq!(got, want, "{} round {round}", prog.net().entry);
        }
    }
}

#[test]
fn a_failing_box_stops_the_run_even_with_blocked_producers() {
    bounded::a_failing_box_stops_the_run_even_with_blocked_producers(&lpel);
}

#[test]
fn initialisers_and_feedback_with_an_outside_writer_at_capacity_one() {
    bounded::initialisers_and_feedback_with_an_outside_writer_at_capacity_one(&lpel);
}

#[test]
fn monitoring_trace_and_placement_are_wired_to_the_layer() {
    let mut p = Program::from_source(
        "mon.snet",
        "net mon { box dec((<n>) -> (<n>) | (<done>)); } connect dec * {<done>};",
    )
    .unwrap();
    p.bind("dec", dec_box).unwrap();
    let dir = std::env::temp_dir().join(format!("snet-lpel-engine-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let trace = dir.join("run.json");
    let cfg = LpelConfig::from_cli(&CliOptions {
        stream_capacity: Some(2),
        monitor: Some("b".into()),
        monitor_dir: Some(dir.clone()),
        placement: Some("random:0.5".into()),
        trace: Some(trace.clone()),
        assign: Some("balanced".into()),
        sched: Some("priority".into()),
    })
    .unwrap();
    let input: Vec<Record> = (0..50).map(|n| Record::new().with_tag("n", n)).collect();
    let (out, _) = run_lpel(&p, cfg, 2, input).unwrap();
    assert_eq!(out.len(), 50);
    let log = std::fs::read_to_string(dir.join("mon_w0.log")).unwrap()
        + &std::fs::read_to_string(dir.join("mon_w1.log")).unwrap();
    let dispatches = log.lines().filter(|l| l.contains(" tid ")).count();
    assert!(dispatches >= 50, "{dispatches} dispatch lines");
    assert!(
        log.lines().any(|l| l.contains(" st Z ")),
        "tasks end: {log:.300}"
    );
    let map = std::fs::read_to_string(dir.join("tasks.map")).unwrap();
    assert!(map.lines().all(|l| l.ends_with(" box dec")), "{map:.300}");
    let json = std::fs::read_to_string(&trace).unwrap();
    assert!(json.starts_with("{\"traceEvents\":["), "{json:.100}");
    assert!(json.contains("\"name\":\"dec\""));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The worker of every box task in spawn order, from the monitoring's `tasks.map`.
fn task_workers(cfg_assign: Option<&str>, dir: &std::path::Path) -> Vec<usize> {
    let mut p = Program::from_source(
        "stages.snet",
        "net stages { box dec((<n>) -> (<n>) | (<done>)); } connect dec * {<done>};",
    )
    .unwrap();
    p.bind("dec", dec_box).unwrap();
    let _ = std::fs::remove_dir_all(dir);
    let cfg = LpelConfig::from_cli(&CliOptions {
        monitor: Some("a".into()),
        monitor_dir: Some(dir.to_path_buf()),
        assign: cfg_assign.map(String::from),
        ..CliOptions::default()
    })
    .unwrap();
    // One record that walks down 100 stages: each stage's task is spawned in turn.
    let (out, _) = run_lpel(&p, cfg, 2, vec![Record::new().with_tag("n", 99)]).unwrap();
    assert_eq!(out.len(), 1);
    let map = std::fs::read_to_string(dir.join("tasks.map")).unwrap();
    let mut tasks: Vec<(u64, usize)> = map
        .lines()
        .filter(|l| l.ends_with(" box dec"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].parse().unwrap(), f[1].parse().unwrap())
        })
        .collect();
    tasks.sort();
    let _ = std::fs::remove_dir_all(dir);
    tasks.into_iter().map(|(_, w)| w).collect()
}

#[test]
fn star_stages_share_a_worker_in_runs_by_default() {
    let dir = std::env::temp_dir().join(format!("snet-lpel-stages-{}", std::process::id()));
    let ws = task_workers(None, &dir);
    assert_eq!(ws.len(), 100, "one task per stage");
    // Runs of 32 consecutive stages per worker, alternating.
    let runs: Vec<usize> = ws.chunk_by(|a, b| a == b).map(|r| r.len()).collect();
    assert_eq!(runs, [32, 32, 32, 4], "{ws:?}");
    let ws = task_workers(Some("stages:10"), &dir);
    assert!(ws.chunk_by(|a, b| a == b).all(|r| r.len() == 10), "{ws:?}");
    // Plain round-robin alternates at every stage.
    let ws = task_workers(Some("round-robin"), &dir);
    assert!(ws.windows(2).all(|w| w[0] != w[1]), "{ws:?}");
}
