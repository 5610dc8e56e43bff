//! The hand-over of an item to a blocked reader (`chan` protocol step 1b) and the
//! FIFO ready-set head slot, exercised through the transitions around them: readers
//! on another worker, reads mixed with polls and `try_read`, rings whose repeat
//! tasks migrate between workers mid-run, rings with monitoring on, and readers
//! outside the runtime.

use snet_lpel::kpn::{channel, Network};
use snet_lpel::{
    poll, stream, Activation, Config, MonitorConfig, MonitorLevel, PlacementConfig, Pollable,
    Quiescence, Runtime, Strategy, TaskSpec,
};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A producer writes 0..N; the consumer reads them in turns by a blocking read, a
/// poll followed by `try_read`, and a `try_read` that may find nothing. Returns the
/// items in arrival order.
fn mixed_reader(workers: usize, prod_on: usize, cons_on: usize, cap: usize) -> Vec<u64> {
    const N: u64 = 20_000;
    let rt = Runtime::start(Config::with_workers(workers)).unwrap();
    let (mut tx, mut rx) = stream::<u64>(cap);
    let (mut res_tx, mut res_rx) = stream::<Vec<u64>>(1);
    rt.spawn(TaskSpec::new("producer").on_worker(prod_on), move || {
        for i in 0..N {
            tx.write(i).unwrap();
            if i % 7 == 0 {
                snet_lpel::yield_now();
            }
        }
    });
    rt.spawn(TaskSpec::new("consumer").on_worker(cons_on), move || {
        let mut got = Vec::with_capacity(N as usize);
        let mut k = 0u64;
        loop {
            k += 1;
            let v = match k % 3 {
                0 => rx.read(),
                1 => {
                    let set: [&dyn Pollable; 1] = [&rx];
                    assert_eq!(poll(&set), 0);
                    assert!(rx.is_readable());
                    match rx.try_read() {
                        Ok(v) => Some(v),
                        Err(snet_lpel::TryReadError::Closed) => None,
                        Err(e) => panic!("readable stream gave {e:?}"),
                    }
                }
                _ => match rx.try_read() {
                    Ok(v) => Some(v),
                    Err(snet_lpel::TryReadError::Empty) => continue,
                    Err(snet_lpel::TryReadError::Closed) => None,
                },
            };
            match v {
                Some(v) => got.push(v),
                None => break,
            }
        }
        res_tx.write(got).unwrap();
    });
    let got = res_rx.read().unwrap();
    assert_eq!(rt.wait(), Quiescence::Finished);
    assert_eq!(got.len() as u64, N);
    got
}

#[test]
fn hand_over_keeps_order_on_one_worker() {
    for cap in [1, 3] {
        let got = mixed_reader(1, 0, 0, cap);
        assert!(got.iter().copied().eq(0..got.len() as u64), "cap {cap}");
    }
}

#[test]
fn hand_over_keeps_order_to_a_reader_on_another_worker() {
    for cap in [1, 3] {
        let got = mixed_reader(2, 0, 1, cap);
        assert!(got.iter().copied().eq(0..got.len() as u64), "cap {cap}");
    }
}

#[test]
fn hand_over_to_a_thread_outside_the_runtime() {
    // The reader is the test thread (an external waiter); the writer a task.
    let rt = Runtime::start(Config::with_workers(1)).unwrap();
    let (mut tx, mut rx) = stream::<u64>(1);
    rt.spawn(TaskSpec::new("writer"), move || {
        for i in 0..5_000 {
            tx.write(i).unwrap();
        }
    });
    let mut expect = 0;
    while let Some(v) = rx.read() {
        assert_eq!(v, expect);
        expect += 1;
    }
    assert_eq!(expect, 5_000);
    assert_eq!(rt.wait(), Quiescence::Finished);
}

#[test]
fn close_after_a_hand_over_delivers_the_item_first() {
    // Each writer writes once (often handed to the blocked reader) and closes at
    // once: the reader must see the item, then the end of the stream.
    let rt = Runtime::start(Config::with_workers(2)).unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    for k in 0..200usize {
        let (mut tx, mut rx) = stream::<usize>(1);
        let seen = Arc::clone(&seen);
        rt.spawn(TaskSpec::new("reader").on_worker(k % 2), move || {
            assert_eq!(rx.read(), Some(k));
            assert_eq!(rx.read(), None);
            seen.fetch_add(1, Ordering::Relaxed);
        });
        rt.spawn(TaskSpec::new("writer").on_worker((k / 2) % 2), move || {
            tx.write(k).unwrap();
        });
    }
    assert_eq!(rt.wait(), Quiescence::Finished);
    assert_eq!(seen.load(Ordering::Relaxed), 200);
}

/// A ring of `n` repeat tasks (one hop per activation) plus a driver; the token
/// counts its hops. Random placement migrates the repeat tasks between the two
/// workers while the token circulates; the driver keeps the token going until
/// tasks were seen on a new worker at least `min_moves` times (or 20 s passed).
#[test]
fn ring_of_repeat_tasks_survives_migration_mid_run() {
    const N: usize = 12;
    let mut cfg = Config::with_workers(2);
    cfg.placement = Some(PlacementConfig {
        strategy: Strategy::Random { p: 0.2 },
        interval: Duration::from_millis(1),
    });
    let rt = Runtime::start(cfg).unwrap();
    let moves = Arc::new(AtomicU64::new(0));
    let mut rxs = Vec::new();
    let mut txs = Vec::new();
    for _ in 0..N {
        let (tx, rx) = stream::<u64>(1);
        txs.push(Some(tx));
        rxs.push(Some(rx));
    }
    let (mut res_tx, mut res_rx) = stream::<(u64, u64)>(1);
    for i in 1..N {
        let mut rx = rxs[i].take().unwrap();
        let mut tx = txs[(i + 1) % N].take().unwrap();
        let moves = Arc::clone(&moves);
        let mut last = usize::MAX;
        rt.spawn_repeat(TaskSpec::new("hop"), move || {
            let w = snet_lpel::current_worker().unwrap();
            if last != usize::MAX && w != last {
                moves.fetch_add(1, Ordering::Relaxed);
            }
            last = w;
            match rx.read() {
                Some(v) => {
                    if tx.write(v + 1).is_err() {
                        return Activation::Done;
                    }
                    Activation::Again
                }
                None => Activation::Done,
            }
        });
    }
    let mut rx = rxs[0].take().unwrap();
    let mut tx = txs[1].take().unwrap();
    let m = Arc::clone(&moves);
    rt.spawn(TaskSpec::new("driver").on_worker(0), move || {
        let t0 = Instant::now();
        let mut laps = 0u64;
        let mut token = 0u64;
        while m.load(Ordering::Relaxed) < 20 && t0.elapsed() < Duration::from_secs(20) {
            tx.write(token + 1).unwrap();
            token = rx.read().unwrap();
            laps += 1;
            assert_eq!(token, laps * N as u64, "a hop was lost or repeated");
        }
        res_tx.write((laps, token)).unwrap();
    });
    let (laps, token) = res_rx.read().unwrap();
    assert_eq!(token, laps * N as u64);
    assert_eq!(rt.wait(), Quiescence::Finished);
    let stats = rt.shutdown();
    assert!(
        moves.load(Ordering::Relaxed) >= 20,
        "only {} moves seen ({} migrations)",
        moves.load(Ordering::Relaxed),
        stats.migrations()
    );
}

/// A ring on one worker with stream monitoring on (the accounting path of every
/// read and write), and on two workers with consecutive processes on different
/// workers (every hop crosses workers: hand-over through the mailbox).
#[test]
fn rings_with_monitoring_and_with_every_hop_across_workers() {
    let dir = std::env::temp_dir().join(format!("snet-lpel-handoff-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (workers, monitored) in [(1usize, true), (2, false), (2, true)] {
        const N: usize = 9;
        const LAPS: u32 = 300;
        let mut cfg = Config::with_workers(workers);
        if monitored {
            cfg.monitoring = Some(MonitorConfig {
                level: MonitorLevel::C,
                dir: dir.join(format!("w{workers}")),
                trace: false,
            });
        }
        let mut net = Network::new(cfg);
        let mut rxs = Vec::new();
        let mut txs = Vec::new();
        for _ in 0..N {
            let (tx, rx) = channel::<u32>("ring", 1);
            txs.push(Some(tx));
            rxs.push(Some(rx));
        }
        let laps = Arc::new(AtomicUsize::new(0));
        for i in 0..N {
            let mut rx = rxs[i].take().unwrap();
            let mut tx = txs[(i + 1) % N].take().unwrap();
            let spec = TaskSpec::new("ring").on_worker(i % workers);
            if i == 0 {
                let laps = Arc::clone(&laps);
                net.spawn_spec(spec, move || {
                    for r in 0..LAPS {
                        tx.send(r * 10).unwrap();
                        assert_eq!(rx.recv().unwrap(), r * 10 + (N as u32 - 1));
                        laps.fetch_add(1, Ordering::Relaxed);
                    }
                });
            } else {
                net.spawn_spec(spec, move || {
                    while let Ok(v) = rx.recv() {
                        if tx.send(v + 1).is_err() {
                            break;
                        }
                    }
                });
            }
        }
        net.run().unwrap();
        assert_eq!(laps.load(Ordering::Relaxed), LAPS as usize);
        if monitored {
            let log = std::fs::read_to_string(dir.join(format!("w{workers}")).join("mon_w0.log"))
                .expect("monitoring log of worker 0");
            assert!(log.contains(",r,"), "no stream reads logged on worker 0");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
