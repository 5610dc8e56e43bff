//! A Kahn process network: source → square (a box, 4 instances behind a
//! round-robin splitter) → merge (select over 4 channels) → sink.
//! Messages are `Vec<u64>` batches that move through the channels without copying.
//!
//! ```text
//! cargo run --release -p snet-lpel --example kpn_pipeline
//! cargo run --release -p snet-lpel --example kpn_pipeline -- --monitor /tmp/mon   # logs + trace.json
//! python3 tools/lpel_log_totals.py /tmp/mon
//! ```

use snet_lpel::kpn::{channel, select, Network};
use snet_lpel::{Config, MonitorConfig, MonitorLevel, Pollable, TaskSpec};

fn main() {
    let mut cfg = Config::with_workers(2);
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--monitor") {
        cfg.monitoring = Some(MonitorConfig {
            level: MonitorLevel::C,
            dir: args.get(i + 1).expect("--monitor DIR").into(),
            trace: true,
        });
    }
    const BATCHES: u64 = 1000;
    const WIDTH: usize = 4;
    let mut net = Network::new(cfg);
    let (mut src_tx, mut split_rx) = channel::<Vec<u64>>("source", 4);
    let mut to_workers = Vec::new();
    let mut from_workers = Vec::new();
    for w in 0..WIDTH {
        let (tx, mut rx) = channel::<Vec<u64>>(&format!("to-square-{w}"), 2);
        let (mut otx, orx) = channel::<Vec<u64>>(&format!("from-square-{w}"), 2);
        to_workers.push(tx);
        from_workers.push(orx);
        net.spawn_spec(TaskSpec::boxed("square"), move || {
            while let Ok(mut batch) = rx.recv() {
                for v in batch.iter_mut() {
                    *v *= *v;
                }
                otx.send(batch).unwrap(); // moves the Vec: no copy of its buffer
            }
        });
    }
    net.spawn("source", move || {
        for b in 0..BATCHES {
            src_tx.send((b * 16..b * 16 + 16).collect()).unwrap();
        }
    });
    net.spawn("splitter", move || {
        let mut k = 0;
        while let Ok(batch) = split_rx.recv() {
            to_workers[k % WIDTH].send(batch).unwrap();
            k += 1;
        }
    });
    let (mut merged_tx, mut sink_rx) = channel::<Vec<u64>>("merged", 4);
    net.spawn("merge", move || {
        let mut open: Vec<_> = from_workers.into_iter().collect();
        while !open.is_empty() {
            let set: Vec<&dyn Pollable> = open.iter().map(|r| r as &dyn Pollable).collect();
            let i = select(&set);
            drop(set);
            match open[i].try_recv() {
                Ok(Some(batch)) => merged_tx.send(batch).unwrap(),
                Ok(None) => {}
                Err(_) => {
                    open.remove(i);
                }
            }
        }
    });
    net.spawn("sink", move || {
        let mut sum: u128 = 0;
        let mut n = 0;
        while let Ok(batch) = sink_rx.recv() {
            n += batch.len();
            sum += batch.iter().map(|&v| v as u128).sum::<u128>();
        }
        let m = (BATCHES * 16) as u128;
        assert_eq!(n as u128, m);
        assert_eq!(sum, (m - 1) * m * (2 * m - 1) / 6);
        println!("sink: {n} values, sum of squares {sum}");
    });
    let report = net.run().expect("network runs to completion");
    println!(
        "done in {:.3} ms: {} dispatches, {} tasks",
        report.elapsed.as_secs_f64() * 1e3,
        report.stats.dispatches(),
        report.stats.tasks_spawned
    );
}
