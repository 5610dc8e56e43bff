//! The threads engine (`--engine threads`): bounded box inboxes never add a deadlock
//! that S-Net does not have (and the run fails rather than hangs if they ever did),
//! back pressure bounds what is in flight, errors stop the run, and every box thread
//! is joined before the run returns.

use snet::{Arg, ArgExt, BoxInput, BoxOutput, Program, Record};
use snet_threads::ThreadsEngine;
use std::sync::atomic::{AtomicUsize, Ordering};

#[path = "common/bounded.rs"]
mod bounded;
use bounded::big_feedback;

fn run_threads(
    prog: &Program,
    engine: ThreadsEngine,
    workers: usize,
    input: Vec<Record>,
) -> bounded::Outcome {
    bounded::run_on(&engine, prog, workers, input)
}

fn cap(k: usize) -> ThreadsEngine {
    ThreadsEngine {
        stream_capacity: k,
        ..ThreadsEngine::default()
    }
}

/// The shared checks' runner: the threads engine with inbox capacity `k`.
fn threads(p: &Program, k: usize, workers: usize, input: Vec<Record>) -> bounded::Outcome {
    run_threads(p, cap(k), workers, input)
}

#[test]
fn a_big_feedback_loop_runs_to_completion_at_tiny_capacities() {
    bounded::a_big_feedback_loop_runs_to_completion(&threads, &[1, 2, 256]);
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
    bounded::back_pressure_bounds_the_records_in_flight(&threads);
}

#[test]
fn a_failing_box_stops_the_run_even_with_blocked_producers() {
    bounded::a_failing_box_stops_the_run_even_with_blocked_producers(&threads);
}

#[test]
fn initialisers_and_feedback_with_an_outside_writer_at_capacity_one() {
    bounded::initialisers_and_feedback_with_an_outside_writer_at_capacity_one(&threads);
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
