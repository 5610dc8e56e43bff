//! Behaviour of the public API: results, panics, scopes, loops, external jobs.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

use snet_forkjoin::{for_each, for_each_with_grain, join, scope, BarrierMode, MadvisePolicy, Pool};

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn fib_serial(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_serial(n - 1) + fib_serial(n - 2)
    }
}

#[test]
fn fib_is_right_on_one_two_and_three_workers() {
    for threads in [1, 2, 3] {
        let pool = Pool::new(threads).unwrap();
        for n in [0, 1, 2, 10, 25] {
            assert_eq!(
                pool.install(|| fib(n)),
                fib_serial(n),
                "fib({n}) at {threads}"
            );
        }
    }
}

#[test]
fn fib_is_right_with_every_barrier_and_madvise_policy() {
    for barrier in [BarrierMode::Symmetric, BarrierMode::Asymmetric] {
        for madvise in [
            MadvisePolicy::None,
            MadvisePolicy::Free,
            MadvisePolicy::DontNeed,
        ] {
            let pool = Pool::builder()
                .threads(2)
                .barrier(barrier)
                .madvise(madvise)
                .build()
                .unwrap();
            assert_eq!(pool.install(|| fib(24)), 46368);
        }
    }
}

#[test]
fn the_default_barrier_is_symmetric_with_thieves_and_asymmetric_without() {
    // membarrier costs a thief ≈ 10 µs (it interrupts the other workers); a pool of one
    // worker has no thieves, so only there may the owner's pops skip their fence.
    let two = Pool::builder().threads(2).build().unwrap();
    assert_eq!(two.barrier_mode(), BarrierMode::Symmetric);
    let one = Pool::builder().threads(1).build().unwrap();
    let forced = Pool::builder()
        .threads(1)
        .barrier(BarrierMode::Asymmetric)
        .build()
        .unwrap();
    // Asymmetric where the kernel offers membarrier (what forcing it gives), else
    // symmetric.
    assert_eq!(one.barrier_mode(), forced.barrier_mode());
    assert_eq!(one.install(|| fib(20)), 6765);
}

#[test]
fn join_off_pool_runs_sequentially() {
    assert_eq!(fib(15), 610);
    let (a, b) = join(|| 1, || "two");
    assert_eq!((a, b), (1, "two"));
}

#[test]
fn join_can_borrow_and_mutate_disjoint_data() {
    let pool = Pool::new(2).unwrap();
    let mut v: Vec<u64> = (0..10_000).collect();
    fn inc_all(s: &mut [u64]) {
        if s.len() <= 64 {
            s.iter_mut().for_each(|x| *x += 1);
            return;
        }
        let (l, r) = s.split_at_mut(s.len() / 2);
        join(|| inc_all(l), || inc_all(r));
    }
    pool.install(|| inc_all(&mut v));
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 + 1));
}

#[test]
fn panic_in_a_propagates_after_b_finished() {
    let pool = Pool::new(2).unwrap();
    let b_ran = AtomicUsize::new(0);
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            join(
                || -> u32 { panic!("boom in a") },
                || {
                    // Long enough that a thief likely has it when a panics.
                    std::hint::black_box(fib(18));
                    b_ran.fetch_add(1, Ordering::SeqCst);
                },
            )
        })
    }));
    let msg = r.unwrap_err();
    assert_eq!(msg.downcast_ref::<&str>(), Some(&"boom in a"));
    // b either ran to completion (stolen) or was dropped unrun (popped after the panic).
    assert!(b_ran.load(Ordering::SeqCst) <= 1);
    // The pool still works.
    assert_eq!(pool.install(|| fib(20)), 6765);
}

#[test]
fn panic_in_b_propagates_at_any_depth() {
    let pool = Pool::new(2).unwrap();
    fn tree(n: u32, bad: u32) -> u32 {
        if n == 0 {
            return 1;
        }
        if n == bad {
            panic!("bad node");
        }
        let (a, b) = join(|| tree(n - 1, bad), || tree(n - 1, bad.wrapping_sub(1)));
        a + b
    }
    for _ in 0..20 {
        let r = panic::catch_unwind(AssertUnwindSafe(|| pool.install(|| tree(12, 3))));
        assert!(r.is_err());
    }
    assert_eq!(pool.install(|| tree(10, 99)), 1024);
}

#[test]
fn scope_spawns_borrow_and_all_finish() {
    let pool = Pool::new(2).unwrap();
    let data: Vec<usize> = (0..1000).collect();
    let sum = AtomicUsize::new(0);
    pool.install(|| {
        scope(|s| {
            for chunk in data.chunks(10) {
                let sum = &sum;
                s.spawn(move |s| {
                    let part: usize = chunk.iter().sum();
                    // Nested spawn into the same scope.
                    s.spawn(move |_| {
                        sum.fetch_add(part, Ordering::Relaxed);
                    });
                });
            }
        })
    });
    assert_eq!(sum.load(Ordering::Relaxed), 999 * 1000 / 2);
}

#[test]
fn scope_propagates_child_panic_after_all_children() {
    let pool = Pool::new(2).unwrap();
    let done = AtomicUsize::new(0);
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            scope(|s| {
                for i in 0..50 {
                    let done = &done;
                    s.spawn(move |_| {
                        if i == 25 {
                            panic!("child 25");
                        }
                        std::hint::black_box(fib(12));
                        done.fetch_add(1, Ordering::SeqCst);
                    });
                }
            })
        })
    }));
    assert!(r.is_err());
    assert_eq!(done.load(Ordering::SeqCst), 49);
}

#[test]
fn scope_inside_join_inside_scope() {
    let pool = Pool::new(3).unwrap();
    let total = AtomicUsize::new(0);
    pool.install(|| {
        scope(|s| {
            for _ in 0..8 {
                let total = &total;
                s.spawn(move |s2| {
                    let (a, b) = join(
                        || {
                            // Spawn into the outer scope from inside a join half.
                            s2.spawn(move |_| {
                                total.fetch_add(1, Ordering::Relaxed);
                            });
                            fib(10)
                        },
                        || fib(11),
                    );
                    total.fetch_add((a + b) as usize, Ordering::Relaxed);
                });
            }
        })
    });
    assert_eq!(total.load(Ordering::Relaxed), 8 * (55 + 89 + 1));
}

#[test]
fn for_each_visits_every_index_once() {
    let pool = Pool::new(2).unwrap();
    let hits: Vec<AtomicUsize> = (0..5000).map(|_| AtomicUsize::new(0)).collect();
    pool.install(|| {
        for_each(0..5000, &|i| {
            hits[i].fetch_add(1, Ordering::Relaxed);
        })
    });
    pool.install(|| {
        for_each_with_grain(100..5000, 7, &|i| {
            hits[i].fetch_add(1, Ordering::Relaxed);
        })
    });
    for (i, h) in hits.iter().enumerate() {
        assert_eq!(
            h.load(Ordering::Relaxed),
            if i < 100 { 1 } else { 2 },
            "index {i}"
        );
    }
}

#[test]
fn install_from_many_threads_at_once() {
    let pool = Arc::new(Pool::new(2).unwrap());
    let hs: Vec<_> = (0..4)
        .map(|k| {
            let pool = pool.clone();
            std::thread::spawn(move || pool.install(|| fib(18 + k)))
        })
        .collect();
    for (k, h) in hs.into_iter().enumerate() {
        assert_eq!(h.join().unwrap(), fib_serial(18 + k as u64));
    }
}

#[test]
fn install_propagates_panic_and_nested_install_runs_inline() {
    let pool = Pool::new(2).unwrap();
    let r = panic::catch_unwind(AssertUnwindSafe(|| pool.install(|| panic!("in install"))));
    assert!(r.is_err());
    let v = pool.install(|| pool.install(|| 5));
    assert_eq!(v, 5);
}

#[test]
fn spawn_job_runs_detached_jobs_that_join() {
    let pool = Pool::new(2).unwrap();
    let (tx, rx) = mpsc::channel();
    for n in 0..20u64 {
        let tx = tx.clone();
        pool.spawn_job(move || {
            tx.send((n, fib(n))).unwrap();
        });
    }
    drop(tx);
    let mut got: Vec<(u64, u64)> = rx.iter().collect();
    got.sort_unstable();
    assert_eq!(got.len(), 20);
    for (n, f) in got {
        assert_eq!(f, fib_serial(n));
    }
}

#[test]
fn spawn_job_panic_goes_to_handler() {
    let (tx, rx) = mpsc::channel::<String>();
    let tx = std::sync::Mutex::new(tx);
    let pool = Pool::builder()
        .threads(2)
        .panic_handler(move |p| {
            let msg = p.downcast_ref::<&str>().copied().unwrap_or("?").to_string();
            tx.lock().unwrap().send(msg).unwrap();
        })
        .build()
        .unwrap();
    pool.spawn_job(|| panic!("detached boom"));
    assert_eq!(rx.recv().unwrap(), "detached boom");
}

#[test]
fn dropping_the_pool_runs_queued_jobs_first() {
    let count = Arc::new(AtomicUsize::new(0));
    {
        let pool = Pool::new(2).unwrap();
        for _ in 0..100 {
            let count = count.clone();
            pool.spawn_job(move || {
                let _ = fib(10);
                count.fetch_add(1, Ordering::SeqCst);
            });
        }
    }
    assert_eq!(count.load(Ordering::SeqCst), 100);
}

#[test]
fn parks_and_steals_happen_and_are_counted() {
    // Whether the second worker steals depends on its getting a core while there is
    // something to steal (it may be parked, or descheduled on a busy machine): keep
    // giving it work until it has stolen, for up to 30 s.
    let pool = Pool::new(2).unwrap();
    let start = std::time::Instant::now();
    loop {
        assert_eq!(pool.install(|| fib(27)), 196418);
        if pool.stats().steals > 0 || start.elapsed() > std::time::Duration::from_secs(30) {
            break;
        }
    }
    let st = pool.stats();
    assert!(st.steals > 0, "{st:?}");
    assert!(st.fibers >= 2, "{st:?}");
}

#[test]
fn worker_index_and_thread_count_are_visible_inside_jobs() {
    assert_eq!(snet_forkjoin::current_worker_index(), None);
    assert_eq!(snet_forkjoin::current_num_threads(), 1);
    let pool = Pool::new(3).unwrap();
    let (idx, n) = pool.install(|| {
        (
            snet_forkjoin::current_worker_index(),
            snet_forkjoin::current_num_threads(),
        )
    });
    assert!(idx.is_some_and(|i| i < 3));
    assert_eq!(n, 3);
}

#[test]
fn install_into_another_pool_from_a_worker() {
    let a = Pool::new(2).unwrap();
    let b = Pool::new(2).unwrap();
    let v = a.install(|| {
        let (x, y) = join(|| b.install(|| fib(20)), || fib(19));
        x + y
    });
    assert_eq!(v, 6765 + 4181);
}

#[test]
fn off_pool_scope_waits_for_children_spawned_on_a_pool() {
    let pool = Pool::new(2).unwrap();
    let done = AtomicUsize::new(0);
    scope(|s| {
        for _ in 0..4 {
            pool.install(|| {
                let done = &done;
                s.spawn(move |_| {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    done.fetch_add(1, Ordering::SeqCst);
                });
            });
        }
    });
    assert_eq!(done.load(Ordering::SeqCst), 4);
}

/// A scope inside a join half parks while the join's own frame is still in the deque
/// (its only child runs on another pool); the frame must survive the park.
#[test]
fn scope_parks_with_enclosing_join_frame_in_the_deque() {
    let a = Pool::new(1).unwrap();
    let b = Pool::new(1).unwrap();
    let done = AtomicUsize::new(0);
    let (x, y) = a.install(|| {
        join(
            || {
                scope(|s| {
                    b.install(|| {
                        let done = &done;
                        s.spawn(move |_| {
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            done.fetch_add(1, Ordering::SeqCst);
                        });
                    });
                });
                done.load(Ordering::SeqCst)
            },
            || fib(15),
        )
    });
    assert_eq!((x, y), (1, 610));
    assert_eq!(a.stats().parks, 1);
}
