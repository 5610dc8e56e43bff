//! Random fork trees: every result checked against the sequential evaluation of the
//! same tree (off a pool, `join`/`scope`/`for_each` run sequentially).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use snet_forkjoin::{for_each_with_grain, join, scope, BarrierMode, MadvisePolicy, Pool};

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Evaluates a random tree with `budget` forks below it; counts forks in `forks`.
fn node(seed: u64, budget: u64, forks: &AtomicUsize) -> u64 {
    if budget == 0 {
        // Leaf: a little work of random length.
        let mut x = seed;
        for _ in 0..(seed % 24) {
            x = mix(x);
        }
        return x;
    }
    let h = mix(seed);
    match h % 16 {
        // Binary join (most nodes).
        0..=12 => {
            forks.fetch_add(1, Ordering::Relaxed);
            let rest = budget - 1;
            let l = if rest == 0 { 0 } else { mix(h) % (rest + 1) };
            let (a, b) = join(
                || node(mix(h ^ 1), l, forks),
                || node(mix(h ^ 2), rest - l, forks),
            );
            a.wrapping_mul(3) ^ b
        }
        // Scope with 2-4 spawned children (one fork each).
        13 | 14 => {
            let k = (2 + h % 3).min(budget);
            let rest = budget - k;
            let slots: Vec<AtomicU64> = (0..k).map(|_| AtomicU64::new(0)).collect();
            scope(|s| {
                for (i, slot) in slots.iter().enumerate() {
                    let share = rest / k + u64::from((i as u64) < rest % k);
                    forks.fetch_add(1, Ordering::Relaxed);
                    s.spawn(move |_| {
                        slot.store(
                            node(mix(h ^ (10 + i as u64)), share, forks),
                            Ordering::Relaxed,
                        );
                    });
                }
            });
            slots
                .iter()
                .fold(h, |acc, s| mix(acc ^ s.load(Ordering::Relaxed)))
        }
        // Parallel loop over 2-5 indices (k - 1 forks inside for_each).
        _ => {
            let k = (2 + h % 4).min(budget + 1);
            let rest = budget - (k - 1);
            let slots: Vec<AtomicU64> = (0..k).map(|_| AtomicU64::new(0)).collect();
            forks.fetch_add((k - 1) as usize, Ordering::Relaxed);
            for_each_with_grain(0..k as usize, 1, &|i| {
                let share = rest / k + u64::from((i as u64) < rest % k);
                slots[i].store(
                    node(mix(h ^ (20 + i as u64)), share, forks),
                    Ordering::Relaxed,
                );
            });
            slots
                .iter()
                .fold(h, |acc, s| mix(acc ^ s.load(Ordering::Relaxed)))
        }
    }
}

fn check_tree(pool: &Pool, seed: u64, budget: u64) {
    let forks_seq = AtomicUsize::new(0);
    let expect = node(seed, budget, &forks_seq);
    let forks_par = AtomicUsize::new(0);
    let got = pool.install(|| node(seed, budget, &forks_par));
    assert_eq!(got, expect, "seed {seed} budget {budget}");
    assert_eq!(
        forks_par.load(Ordering::Relaxed),
        forks_seq.load(Ordering::Relaxed)
    );
    assert_eq!(forks_seq.load(Ordering::Relaxed) as u64, budget);
}

#[test]
fn random_trees_small_many_seeds() {
    for threads in [1, 2, 3] {
        let pool = Pool::new(threads).unwrap();
        for seed in 0..200 {
            check_tree(&pool, seed, mix(seed) % 2000);
        }
    }
}

#[test]
fn random_trees_every_configuration() {
    for barrier in [BarrierMode::Symmetric, BarrierMode::Asymmetric] {
        for madvise in [MadvisePolicy::None, MadvisePolicy::DontNeed] {
            // Tiny deques force the "deque full, run inline" path too; publish limits
            // from "only when empty" to "every join".
            for (cap, limit) in [(2, usize::MAX), (4096, 1), (4096, usize::MAX)] {
                let pool = Pool::builder()
                    .threads(2)
                    .barrier(barrier)
                    .madvise(madvise)
                    .deque_capacity(cap)
                    .publish_limit(limit)
                    .build()
                    .unwrap();
                for seed in 1000..1008 {
                    check_tree(&pool, seed, 50_000);
                }
            }
        }
    }
}

/// 10^7 forks at 2 workers, result checked against the sequential evaluation. Every
/// join is published (no lazy publication), so all 10^7 go through the deque.
#[test]
fn ten_million_forks_at_two_workers() {
    let pool = Pool::builder()
        .threads(2)
        .publish_limit(usize::MAX)
        .build()
        .unwrap();
    check_tree(&pool, 42, 10_000_000);
    // The second worker steals only if it gets a core meanwhile: on a busy machine give
    // it a few more trees (checked as well) before judging.
    for seed in 43..46 {
        if pool.stats().steals > 0 {
            break;
        }
        check_tree(&pool, seed, 1_000_000);
    }
    let st = pool.stats();
    assert!(st.steals > 0, "{st:?}");
}

#[test]
fn concurrent_installs_of_random_trees() {
    let pool = Pool::new(2).unwrap();
    std::thread::scope(|s| {
        for t in 0..3u64 {
            let pool = &pool;
            s.spawn(move || {
                for seed in 0..20 {
                    check_tree(pool, 7000 + t * 100 + seed, 20_000);
                }
            });
        }
    });
}
