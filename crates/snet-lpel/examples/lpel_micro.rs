//! Micro-costs of the LPEL primitives on this machine (ns per operation):
//! stream write+read without blocking, yield between two tasks, ping-pong between
//! two tasks on one worker, spawn of a task.
//!
//! ```text
//! cargo run --release -p snet-lpel --example lpel_micro
//! cargo run --release -p snet-lpel --example lpel_micro -- yield   # one task yielding (YIELDS=n)
//! ```

use snet_lpel::{stream, thread_cpu_ns, yield_now, Config, Quiescence, Runtime, TaskSpec};
use std::time::Instant;

fn main() {
    let only_yield = std::env::args().any(|a| a == "yield");
    let rt = Runtime::start(Config::with_workers(1)).unwrap();
    if only_yield {
        rt.spawn(TaskSpec::new("a"), || {
            let t0 = Instant::now();
            let c0 = thread_cpu_ns();
            let iters: u64 = std::env::var("YIELDS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(20_000_000);
            for _ in 0..iters {
                yield_now();
            }
            let _ = iters;
            println!(
                "yield alone: {:.1} ns wall, {:.1} ns thread CPU",
                t0.elapsed().as_nanos() as f64 / 2e7,
                (thread_cpu_ns() - c0) as f64 / 2e7
            );
        });
        assert_eq!(rt.wait(), Quiescence::Finished);
        return;
    }
    const N: u64 = 2_000_000;
    let (mut out, mut res) = stream::<(String, f64)>(16);
    rt.spawn(TaskSpec::new("micro"), move || {
        // 1. write + read on the same task, no blocking.
        let (mut tx, mut rx) = stream::<u64>(1024);
        let t0 = Instant::now();
        for i in 0..N {
            tx.write(i).unwrap();
            std::hint::black_box(rx.read());
        }
        let ns = t0.elapsed().as_nanos() as f64 / N as f64;
        out.write(("write+read, no blocking".into(), ns)).unwrap();

        // 2. yield_now with one other ready task (two dispatches per round).
        let mut o2 = stream::<()>(1);
        let (mut stop_tx, mut stop_rx) = stream::<()>(1);
        snet_lpel::spawn(TaskSpec::new("yielder"), move || {
            while stop_rx.try_read().is_err() {
                yield_now();
            }
            drop(o2.0.write(()));
        });
        let t0 = Instant::now();
        for _ in 0..N {
            yield_now();
        }
        let ns = t0.elapsed().as_nanos() as f64 / (2 * N) as f64;
        stop_tx.write(()).unwrap();
        let _ = o2.1.read();
        out.write(("yield (per dispatch)".into(), ns)).unwrap();

        // 3. ping-pong with capacity-1 streams (one transaction = send, switch, receive).
        let (mut ping_tx, mut ping_rx) = stream::<u64>(1);
        let (mut pong_tx, mut pong_rx) = stream::<u64>(1);
        snet_lpel::spawn(TaskSpec::new("pong"), move || {
            while let Some(v) = ping_rx.read() {
                pong_tx.write(v).unwrap();
            }
        });
        let t0 = Instant::now();
        for i in 0..N {
            ping_tx.write(i).unwrap();
            std::hint::black_box(pong_rx.read());
        }
        let ns = t0.elapsed().as_nanos() as f64 / (2 * N) as f64;
        out.write(("ping-pong (per transaction)".into(), ns))
            .unwrap();
        drop(ping_tx);

        // 4. spawn + run + finish of an empty task.
        let t0 = Instant::now();
        const S: u64 = 100_000;
        for _ in 0..S {
            snet_lpel::spawn(TaskSpec::new("empty"), || {});
            yield_now();
        }
        let ns = t0.elapsed().as_nanos() as f64 / S as f64;
        out.write(("spawn + run empty task".into(), ns)).unwrap();
    });
    for _ in 0..4 {
        let (what, ns) = res.read().unwrap();
        println!("{what:32} {ns:8.1} ns");
    }
    assert_eq!(rt.wait(), Quiescence::Finished);
}
