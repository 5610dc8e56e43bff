//! Runtime behaviour: streams, poll, unbounded streams, dynamic tasks, deadlock
//! reports, panics, external threads, policies, migration.

use snet_lpel::kpn::{channel, KpnError, Network};
use snet_lpel::{
    spawn, stream, stream_with, Activation, Assignment, Config, PlacementConfig, Pollable,
    Quiescence, Runtime, Scheduling, Strategy, StreamOptions, TaskSpec, TaskState,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn cfg(w: usize) -> Config {
    Config::with_workers(w)
}

#[test]
fn pipeline_keeps_order_across_workers() {
    const N: u64 = 50_000;
    let rt = Runtime::start(cfg(2)).unwrap();
    let (mut src, mut a) = stream::<u64>(4);
    let (mut a_out, mut b) = stream::<u64>(2);
    let (mut b_out, mut sink) = stream::<u64>(1);
    rt.spawn(TaskSpec::new("src"), move || {
        for i in 0..N {
            src.write(i).unwrap();
        }
    });
    rt.spawn(TaskSpec::boxed("inc"), move || {
        while let Some(v) = a.read() {
            a_out.write(v + 1).unwrap();
        }
    });
    rt.spawn(TaskSpec::boxed("double"), move || {
        while let Some(v) = b.read() {
            b_out.write(v * 2).unwrap();
        }
    });
    for i in 0..N {
        assert_eq!(sink.read(), Some((i + 1) * 2));
    }
    assert_eq!(sink.read(), None);
    assert_eq!(rt.wait(), Quiescence::Finished);
    let stats = rt.shutdown();
    assert_eq!(stats.tasks_spawned, 3);
    assert!(stats.dispatches() >= 3);
}

#[test]
fn poll_merges_every_producer_in_order() {
    const P: usize = 5;
    const N: usize = 2_000;
    let rt = Runtime::start(cfg(2)).unwrap();
    let mut consumers = Vec::new();
    for p in 0..P {
        let (mut tx, rx) = stream::<(usize, usize)>(1 + p);
        consumers.push(rx);
        rt.spawn(TaskSpec::new("producer").on_worker(p), move || {
            for i in 0..N {
                tx.write((p, i)).unwrap();
                if i % 97 == 0 {
                    snet_lpel::yield_now();
                }
            }
        });
    }
    let (mut out, mut res) = stream::<Vec<usize>>(1);
    rt.spawn(TaskSpec::new("collector"), move || {
        let mut next = vec![0usize; P];
        let mut open: Vec<usize> = (0..P).collect();
        let mut rr = 0;
        while !open.is_empty() {
            let set: Vec<&dyn Pollable> = open
                .iter()
                .map(|&p| &consumers[p] as &dyn Pollable)
                .collect();
            let k = snet_lpel::poll_from(&set, rr % open.len());
            drop(set);
            rr += 1;
            let i = open[k];
            match consumers[i].try_read() {
                Ok((p, n)) => {
                    assert_eq!(p, i);
                    assert_eq!(next[p], n, "per-stream FIFO");
                    next[p] += 1;
                }
                Err(snet_lpel::TryReadError::Closed) => {
                    open.remove(k);
                }
                Err(snet_lpel::TryReadError::Empty) => panic!("poll returned an empty stream"),
            }
        }
        out.write(next).unwrap();
    });
    assert_eq!(res.read(), Some(vec![N; P]));
    assert_eq!(rt.wait(), Quiescence::Finished);
}

#[test]
fn unbounded_back_edge_avoids_artificial_deadlock() {
    // A cycle: a → b (capacity 1) and b → a. `a` injects K items before reading
    // anything back; with a bounded back edge this deadlocks, unbounded it completes.
    const K: usize = 100;
    for unbounded in [true, false] {
        let mut net = Network::new(cfg(1));
        let (mut ab, mut b_in) = stream::<usize>(1);
        let (mut ba, mut a_in) = stream_with::<usize>(StreamOptions {
            capacity: 1,
            unbounded,
            name: Some("back".into()),
        });
        let done = Arc::new(AtomicUsize::new(0));
        let d = done.clone();
        net.spawn("a", move || {
            for i in 0..K {
                ab.write(i).unwrap();
            }
            drop(ab);
            while a_in.read().is_some() {
                d.fetch_add(1, Ordering::Relaxed);
            }
        });
        net.spawn("b", move || {
            while let Some(v) = b_in.read() {
                ba.write(v).unwrap();
            }
        });
        let r = net.run();
        if unbounded {
            r.unwrap();
            assert_eq!(done.load(Ordering::Relaxed), K);
        } else {
            match r {
                Err(KpnError::Deadlock(b)) => {
                    assert_eq!(b.len(), 2);
                    assert!(b
                        .iter()
                        .any(|t| t.name == "b" && t.state == TaskState::BlockedOut));
                    assert!(b
                        .iter()
                        .any(|t| t.name == "a" && t.state == TaskState::BlockedOut));
                }
                other => panic!("expected deadlock, got {other:?}"),
            }
        }
    }
}

#[test]
fn write_unbounded_never_blocks() {
    let rt = Runtime::start(cfg(1)).unwrap();
    let (mut tx, mut rx) = stream::<u32>(2);
    rt.spawn(TaskSpec::new("flood"), move || {
        for i in 0..1000 {
            tx.write_unbounded(i).unwrap();
        }
        assert!(tx.len() >= 1000);
    });
    assert_eq!(rt.wait(), Quiescence::Finished);
    for i in 0..1000 {
        assert_eq!(rx.read(), Some(i));
    }
    assert_eq!(rx.read(), None);
}

#[test]
fn deadlock_report_names_processes_and_channels() {
    let mut net = Network::new(cfg(2));
    let (mut ab_tx, mut ab_rx) = channel::<u32>("a->b", 1);
    let (mut ba_tx, mut ba_rx) = channel::<u32>("b->a", 1);
    net.spawn("a", move || {
        let v = ba_rx.recv().unwrap(); // waits for b, which waits for a
        ab_tx.send(v).unwrap();
    });
    net.spawn("b", move || {
        let v = ab_rx.recv().unwrap();
        ba_tx.send(v).unwrap();
    });
    net.spawn("finishes", || {});
    match net.run() {
        Err(KpnError::Deadlock(blocked)) => {
            assert_eq!(blocked.len(), 2);
            let a = blocked.iter().find(|t| t.name == "a").unwrap();
            let b = blocked.iter().find(|t| t.name == "b").unwrap();
            assert_eq!(a.state, TaskState::BlockedIn);
            assert_eq!(a.streams[0].name.as_deref(), Some("b->a"));
            assert_eq!(b.streams[0].name.as_deref(), Some("a->b"));
            let text = KpnError::Deadlock(blocked.clone()).to_string();
            assert!(text.contains("`a` blocked reading from stream"), "{text}");
        }
        other => panic!("expected deadlock, got {other:?}"),
    }
}

#[test]
fn deadlock_in_select_lists_all_channels() {
    let mut net = Network::new(cfg(1));
    let (x_tx, mut x) = channel::<u32>("x", 1);
    let (y_tx, mut y) = channel::<u32>("y", 1);
    net.spawn("selector", move || {
        let _keep = (&x_tx, &y_tx);
        let i = snet_lpel::kpn::select(&[&x, &y]);
        let _ = (x.try_recv(), y.try_recv(), i);
    });
    match net.run() {
        Err(KpnError::Deadlock(b)) => {
            assert_eq!(b.len(), 1);
            assert_eq!(b[0].state, TaskState::BlockedAny);
            let names: Vec<_> = b[0].streams.iter().filter_map(|s| s.name.clone()).collect();
            assert_eq!(names, vec!["x".to_string(), "y".to_string()]);
        }
        other => panic!("expected deadlock, got {other:?}"),
    }
}

#[test]
fn leftover_items_are_dropped_once_after_deadlock() {
    let token = Arc::new(());
    let t2 = token.clone();
    let mut net = Network::new(cfg(2));
    let (mut tx, rx) = channel::<Arc<()>>("full", 3);
    net.spawn("stuffer", move || {
        let _rx = rx; // keeps the channel open but never reads
        loop {
            if tx.send(t2.clone()).is_err() {
                break;
            }
        }
    });
    assert!(matches!(net.run(), Err(KpnError::Deadlock(_))));
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "items and the blocked task were dropped"
    );
}

#[test]
fn panics_are_reported_with_the_process_name() {
    let mut net = Network::new(cfg(2));
    let (mut tx, mut rx) = channel::<u32>("c", 1);
    net.spawn("bad", move || {
        tx.send(1).unwrap();
        panic!("box failed on purpose");
    });
    net.spawn("reader", move || while rx.recv().is_ok() {});
    match net.run() {
        Err(KpnError::Panicked(p)) => {
            assert_eq!(p[0].name, "bad");
            assert!(p[0].message.contains("on purpose"));
        }
        other => panic!("expected a panic report, got {other:?}"),
    }
}

fn fib_task(n: u64, mut out: snet_lpel::Producer<u64>) {
    if n < 2 {
        out.write(n).unwrap();
        return;
    }
    let (a_tx, mut a_rx) = stream::<u64>(1);
    let (b_tx, mut b_rx) = stream::<u64>(1);
    spawn(TaskSpec::new("fib"), move || fib_task(n - 1, a_tx));
    spawn(TaskSpec::new("fib"), move || fib_task(n - 2, b_tx));
    let v = a_rx.read().unwrap() + b_rx.read().unwrap();
    out.write(v).unwrap();
}

#[test]
fn tasks_spawn_tasks_dynamically() {
    for (workers, sched, assign) in [
        (1, Scheduling::Fifo, Assignment::RoundRobin),
        (2, Scheduling::Priority, Assignment::Balanced),
        (2, Scheduling::Fifo, Assignment::RoundRobin),
    ] {
        let rt = Runtime::start(Config {
            scheduling: sched,
            assignment: assign,
            ..cfg(workers)
        })
        .unwrap();
        let (tx, mut rx) = stream::<u64>(1);
        rt.spawn(TaskSpec::new("fib"), move || fib_task(15, tx));
        assert_eq!(rx.read(), Some(610));
        assert_eq!(rt.wait(), Quiescence::Finished);
        let stats = rt.shutdown();
        assert_eq!(stats.tasks_spawned, 1973); // 2*fib(16)-1 calls
    }
}

#[test]
fn ten_thousand_task_ring() {
    const N: usize = 10_000;
    let mut net = Network::new(cfg(2));
    let mut ins = Vec::new();
    let mut outs = Vec::new();
    for _ in 0..N {
        let (tx, rx) = channel::<u32>("ring", 1);
        outs.push(Some(tx));
        ins.push(Some(rx));
    }
    let laps = Arc::new(AtomicUsize::new(0));
    for i in 0..N {
        let mut rx = ins[i].take().unwrap();
        let mut tx = outs[(i + 1) % N].take().unwrap();
        let laps = laps.clone();
        let spec = TaskSpec::new("ring")
            .stack_size(16 * 1024)
            .on_worker(i * 2 / N);
        if i == 0 {
            net.spawn_spec(spec, move || {
                for r in 0..3u32 {
                    tx.send(r).unwrap();
                    assert_eq!(rx.recv().unwrap(), r);
                    laps.fetch_add(1, Ordering::Relaxed);
                }
            });
        } else {
            net.spawn_spec(spec, move || {
                while let Ok(v) = rx.recv() {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
            });
        }
    }
    net.run().unwrap();
    assert_eq!(laps.load(Ordering::Relaxed), 3);
}

/// Blocked tasks switch straight to the next ready task of their worker without
/// passing through the worker loop; the mailbox (wake-ups from other workers) must
/// still be drained. Two tasks on worker 0 ping-pong until a third task there, woken
/// through the mailbox by a task on worker 1, tells them to stop: if direct switches
/// starved the mailbox, the ping-pong would never end.
#[test]
fn direct_switches_do_not_starve_remote_wake_ups() {
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let rounds = Arc::new(AtomicUsize::new(0));
        let mut net = Network::new(cfg(2));
        let (mut a_tx, mut a_rx) = channel::<u32>("ping", 1);
        let (mut b_tx, mut b_rx) = channel::<u32>("pong", 1);
        let (mut s_tx, mut s_rx) = channel::<u32>("stop", 1);
        let (st, rd) = (stop.clone(), rounds.clone());
        net.spawn_spec(TaskSpec::new("ping").on_worker(0), move || {
            let mut v = 0;
            while !st.load(Ordering::Acquire) {
                a_tx.send(v).unwrap();
                v = b_rx.recv().unwrap() + 1;
                rd.fetch_add(1, Ordering::Relaxed);
            }
        });
        net.spawn_spec(TaskSpec::new("pong").on_worker(0), move || {
            while let Ok(v) = a_rx.recv() {
                if b_tx.send(v).is_err() {
                    break;
                }
            }
        });
        let st = stop.clone();
        net.spawn_spec(TaskSpec::new("listener").on_worker(0), move || {
            assert_eq!(s_rx.recv(), Ok(7));
            st.store(true, Ordering::Release);
        });
        let rd = rounds.clone();
        net.spawn_spec(TaskSpec::new("remote").on_worker(1), move || {
            // Let the ping-pong get going before the wake-up crosses workers.
            while rd.load(Ordering::Relaxed) < 10_000 {
                std::thread::yield_now();
            }
            s_tx.send(7).unwrap();
        });
        let r = net.run();
        let _ = done_tx.send((r.is_ok(), rounds.load(Ordering::Relaxed)));
    });
    let (ok, rounds) = done_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the ping-pong never saw the remote wake-up");
    assert!(ok, "the network failed");
    assert!(rounds >= 10_000, "only {rounds} rounds");
}

#[test]
fn repeat_tasks_migrate_under_random_placement() {
    let mut c = cfg(2);
    c.placement = Some(PlacementConfig {
        strategy: Strategy::Random { p: 0.5 },
        interval: Duration::from_millis(1),
    });
    let rt = Runtime::start(c).unwrap();
    let (mut tx, mut rx) = stream::<u64>(2);
    let (mut res_tx, mut res_rx) = stream::<(u64, u64)>(1);
    let mut i = 0u64;
    let mut seen = [false; 2];
    let t0 = std::time::Instant::now();
    // The source runs until it has itself run on both workers (and sent 20 000
    // items), or for 10 s at most.
    rt.spawn_repeat(TaskSpec::new("src"), move || {
        if let Some(w) = snet_lpel::current_worker() {
            seen[w] = true;
        }
        if (i >= 20_000 && seen[0] && seen[1]) || t0.elapsed() > Duration::from_secs(10) {
            return Activation::Done;
        }
        tx.write(i).unwrap();
        i += 1;
        Activation::Again
    });
    let mut sum = 0u64;
    let mut expect = 0u64;
    rt.spawn_repeat(TaskSpec::boxed("sum"), move || match rx.read() {
        Some(v) => {
            assert_eq!(v, expect, "order survives migration");
            expect += 1;
            sum += v;
            Activation::Again
        }
        None => {
            res_tx.write((expect, sum)).unwrap();
            Activation::Done
        }
    });
    let (n, sum) = res_rx.read().unwrap();
    assert_eq!(sum, n * (n - 1) / 2);
    assert_eq!(rt.wait(), Quiescence::Finished);
    let stats = rt.shutdown();
    assert!(
        stats.migrations() > 0,
        "random placement with p=0.5 migrated nothing"
    );
    let started: u64 = stats.workers.iter().map(|w| w.started).sum();
    assert_eq!(started, 2 + stats.migrations());
}

#[test]
fn external_threads_block_and_wake() {
    let rt = Runtime::start(cfg(2)).unwrap();
    let (mut to_task, mut task_in) = stream::<u32>(1);
    let (mut task_out, mut from_task) = stream::<u32>(1);
    rt.spawn(TaskSpec::new("echo"), move || {
        while let Some(v) = task_in.read() {
            task_out.write(v + 1).unwrap();
        }
    });
    let feeder = std::thread::spawn(move || {
        for i in 0..1000 {
            to_task.write(i).unwrap();
        }
    });
    for i in 0..1000 {
        assert_eq!(from_task.read(), Some(i + 1));
    }
    feeder.join().unwrap();
    assert_eq!(from_task.read(), None);
    assert_eq!(rt.wait(), Quiescence::Finished);
}

#[test]
fn endpoints_move_between_tasks_on_different_workers() {
    // A reader blocks on stream S (worker 0); S's producer endpoint travels through
    // another stream to a task on worker 1, which writes: the reader must be woken
    // across workers. Then the consumer endpoint itself moves to a third task.
    let rt = Runtime::start(cfg(2)).unwrap();
    let (s_tx, mut s_rx) = stream::<u64>(1);
    let (mut handoff_tx, mut handoff_rx) = stream::<snet_lpel::Producer<u64>>(1);
    let (mut cons_tx, mut cons_rx) = stream::<snet_lpel::Consumer<u64>>(1);
    let (mut res_tx, mut res_rx) = stream::<u64>(1);
    rt.spawn(TaskSpec::new("reader").on_worker(0), move || {
        let first = s_rx.read().unwrap();
        assert_eq!(first, 7);
        cons_tx.write(s_rx).unwrap(); // hand the consumer on
    });
    rt.spawn(TaskSpec::new("writer").on_worker(1), move || {
        let mut p = handoff_rx.read().unwrap();
        for v in [7u64, 8, 9] {
            p.write(v).unwrap();
        }
    });
    rt.spawn(TaskSpec::new("second-reader").on_worker(1), move || {
        let mut c = cons_rx.read().unwrap();
        let mut sum = 0;
        while let Some(v) = c.read() {
            sum += v;
        }
        res_tx.write(sum).unwrap();
    });
    rt.spawn(TaskSpec::new("sender").on_worker(0), move || {
        handoff_tx.write(s_tx).unwrap();
    });
    assert_eq!(res_rx.read(), Some(17));
    assert_eq!(rt.wait(), Quiescence::Finished);
}

/// Tasks waiting for their first turn hold no stack: a thread that spawns tens of
/// thousands of short tasks faster than one worker runs them must not make the runtime
/// map a stack for each (the mappings run out near 32 000), and the stacks of finished
/// tasks serve the next ones.
#[test]
fn queued_tasks_hold_no_stack_until_they_first_run() {
    const N: usize = 20_000;
    let rt = Runtime::start(cfg(1)).unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    for _ in 0..N {
        let done = done.clone();
        rt.spawn(TaskSpec::new("short"), move || {
            done.fetch_add(1, Ordering::Relaxed);
        });
    }
    assert_eq!(rt.wait(), Quiescence::Finished);
    let stats = rt.shutdown();
    assert_eq!(done.load(Ordering::Relaxed), N);
    let started: u64 = stats.workers.iter().map(|w| w.started).sum();
    assert_eq!(started, N as u64);
    let mapped: u64 = stats.workers.iter().map(|w| w.stacks_created).sum();
    assert!(mapped <= 64, "{mapped} stacks mapped for {N} short tasks");
}

/// A thread outside the runtime that waits on something else learns through the
/// quiescence hook that the runtime has gone idle (the S-Net engine's reader in a
/// distributed run), and `is_quiescent` says so at once; work sent in makes it busy.
#[test]
fn the_quiescence_hook_tells_an_outside_thread_the_runtime_went_idle() {
    let rt = Runtime::start(cfg(2)).unwrap();
    let (wake_tx, wake_rx) = std::sync::mpsc::channel::<()>();
    let wake_tx = std::sync::Mutex::new(wake_tx);
    rt.on_quiescent(Box::new(move || {
        let _ = wake_tx.lock().unwrap().send(());
    }));
    let (mut tx, mut rx) = stream::<u32>(4);
    let sum = Arc::new(AtomicUsize::new(0));
    let s = sum.clone();
    rt.spawn(TaskSpec::new("consumer"), move || {
        while let Some(v) = rx.read() {
            s.fetch_add(v as usize, Ordering::Relaxed);
        }
    });
    for round in 1..=3u32 {
        for v in 0..100 {
            tx.write(v * round).unwrap();
        }
        // The runtime may also have gone idle between two writes; after the consumer
        // has read the last item it goes idle once more, and the hook must say so.
        let want: usize = (1..=round as usize).map(|r| 4950 * r).sum();
        loop {
            wake_rx
                .recv_timeout(Duration::from_secs(10))
                .expect("the hook runs when the runtime goes idle");
            if sum.load(Ordering::Relaxed) == want && rt.is_quiescent() {
                break;
            }
        }
    }
    drop(tx);
    assert_eq!(rt.wait(), Quiescence::Finished);
}
