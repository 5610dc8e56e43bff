//! `Pool::run_on_each` and the `coop` protocol: long-running jobs that share the pool.

use snet_forkjoin::{coop, current_worker_index, join, Pool};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[test]
fn run_on_each_runs_job_i_on_worker_i() {
    let pool = Pool::new(3).unwrap();
    let hits: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(usize::MAX)).collect();
    pool.run_on_each(|i| hits[i].store(current_worker_index().unwrap(), Ordering::SeqCst));
    let got: Vec<usize> = hits.iter().map(|h| h.load(Ordering::SeqCst)).collect();
    assert_eq!(got, vec![0, 1, 2]);
}

#[test]
fn run_on_each_propagates_a_panic_after_all_returned() {
    let pool = Pool::new(2).unwrap();
    let finished = AtomicUsize::new(0);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.run_on_each(|i| {
            if i == 1 {
                panic!("job 1");
            }
            std::thread::sleep(Duration::from_millis(20));
            finished.fetch_add(1, Ordering::SeqCst);
        })
    }));
    assert!(r.is_err());
    assert_eq!(finished.load(Ordering::SeqCst), 1);
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// Job 0 forks (and its joins park); job 1 is a scheduler loop with nothing of its
/// own that only helps, yields and parks. The first half of each top join waits for
/// the second to start, so job 1 must take it; everything must terminate.
#[test]
fn a_helping_loop_takes_the_other_jobs_forks() {
    let pool = Pool::new(2).unwrap();
    let done = AtomicBool::new(false);
    let taken = AtomicUsize::new(0);
    let helped = AtomicUsize::new(0);
    pool.run_on_each(|i| {
        if i == 0 {
            for round in 0..5u64 {
                // Give the helper time to go to sleep.
                std::thread::sleep(Duration::from_millis(10));
                let started = AtomicUsize::new(usize::MAX);
                let (x, y) = join(
                    || {
                        let t = Instant::now();
                        while started.load(Ordering::SeqCst) == usize::MAX
                            && t.elapsed() < Duration::from_secs(2)
                        {
                            std::thread::yield_now();
                        }
                        fib(15 + round)
                    },
                    || {
                        started.store(current_worker_index().unwrap(), Ordering::SeqCst);
                        fib(16 + round)
                    },
                );
                assert_eq!(x + y, fib(17 + round));
                if started.load(Ordering::SeqCst) == 1 {
                    taken.fetch_add(1, Ordering::SeqCst);
                }
                coop::yield_now();
            }
            done.store(true, Ordering::SeqCst);
        } else {
            while !done.load(Ordering::SeqCst) {
                if coop::help() {
                    helped.fetch_add(1, Ordering::SeqCst);
                } else {
                    coop::park_idle(Duration::from_millis(1), || done.load(Ordering::SeqCst));
                }
            }
        }
    });
    assert!(
        taken.load(Ordering::SeqCst) >= 1,
        "the helper never took a fork"
    );
    assert!(helped.load(Ordering::SeqCst) >= 1);
}

#[test]
fn off_a_pool_the_coop_calls_do_nothing() {
    assert!(!coop::help());
    assert!(!coop::yield_now());
    coop::park_idle(Duration::from_millis(1), || true);
}
