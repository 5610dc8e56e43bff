//! A network that truly deadlocks: a cycle where each process first waits for the
//! other. `run` returns an error listing the blocked processes and the channels they
//! wait on, instead of hanging.
//!
//! ```text
//! cargo run --release -p snet-lpel --example kpn_deadlock
//! ```

use snet_lpel::kpn::{channel, KpnError, Network};
use snet_lpel::Config;

fn main() {
    let mut net = Network::new(Config::with_workers(2));
    let (mut req_tx, mut req_rx) = channel::<u32>("requests", 1);
    let (mut resp_tx, mut resp_rx) = channel::<u32>("responses", 1);
    net.spawn("client", move || {
        // Bug: waits for a response before sending its request.
        let r = resp_rx.recv().unwrap();
        req_tx.send(r).unwrap();
    });
    net.spawn("server", move || {
        while let Ok(q) = req_rx.recv() {
            resp_tx.send(q * 2).unwrap();
        }
    });
    match net.run() {
        Err(e @ KpnError::Deadlock(_)) => {
            print!("{e}");
        }
        other => {
            eprintln!("expected a deadlock, got {other:?}");
            std::process::exit(1);
        }
    }
}
