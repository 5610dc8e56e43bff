//! Micro-benchmark of the `join` fast path: fib(n) serial vs 1 worker, min of runs.
use std::time::Instant;

fn fib_s(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_s(n - 1) + fib_s(n - 2)
    }
}

fn fib_f(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = snet_forkjoin::join(|| fib_f(n - 1), || fib_f(n - 2));
    a + b
}

fn main() {
    let n: u64 = std::env::args().nth(1).map_or(35, |s| s.parse().unwrap());
    let runs = 9;
    let mode = match std::env::args().nth(2).as_deref() {
        Some("sym") => snet_forkjoin::BarrierMode::Symmetric,
        _ => snet_forkjoin::BarrierMode::Asymmetric,
    };
    let limit: usize = std::env::args().nth(3).map_or(4, |s| s.parse().unwrap());
    let pool = |n| {
        snet_forkjoin::Pool::builder()
            .threads(n)
            .barrier(mode)
            .publish_limit(limit)
            .build()
            .unwrap()
    };
    let (pool1, pool2) = (pool(1), pool(2));
    let (mut ts, mut t1, mut t2) = (f64::MAX, f64::MAX, f64::MAX);
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(fib_s(std::hint::black_box(n)));
        ts = ts.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        std::hint::black_box(pool1.install(|| fib_f(n)));
        t1 = t1.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        std::hint::black_box(pool2.install(|| fib_f(n)));
        t2 = t2.min(t.elapsed().as_secs_f64());
    }
    let joins = (fib_s(n + 1) - 1) as f64;
    println!(
        "{mode:?} limit {limit} fib({n}) min of {runs}: Ts {ts:.4} T1 {t1:.4} T2 {t2:.4}  T1/Ts {:.2} T2/T1 {:.2}  join overhead {:.2} ns",
        t1 / ts,
        t2 / t1,
        (t1 - ts) / joins * 1e9
    );
    println!("T2 pool stats: {:?}", pool2.stats());
}
