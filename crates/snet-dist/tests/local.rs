//! LocalTransport: FIFO per pair, many-to-one, shutdown and abort semantics.

use snet_dist::{LocalTransport, Transport, TransportError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

fn msg(from: usize, seq: u32) -> Vec<u8> {
    let mut m = (from as u32).to_le_bytes().to_vec();
    m.extend_from_slice(&seq.to_le_bytes());
    m
}

fn parse(m: &[u8]) -> (usize, u32) {
    let f = u32::from_le_bytes(m[..4].try_into().unwrap()) as usize;
    (f, u32::from_le_bytes(m[4..8].try_into().unwrap()))
}

/// Many senders to one receiver: every message arrives once, from the rank that sent it,
/// in send order per sender.
#[test]
fn many_to_one_fifo_per_pair() {
    const N: usize = 5;
    const PER: u32 = 20_000;
    let ranks = LocalTransport::group(N);
    let senders: Vec<_> = ranks[1..]
        .iter()
        .cloned()
        .map(|t| {
            thread::spawn(move || {
                for s in 0..PER {
                    t.send(0, msg(t.rank(), s)).unwrap();
                }
            })
        })
        .collect();
    let mut next = [0u32; N];
    for _ in 0..(N as u32 - 1) * PER {
        let (from, m) = ranks[0].recv().unwrap().unwrap();
        let (claimed, seq) = parse(&m);
        assert_eq!(from, claimed);
        assert_eq!(seq, next[from], "FIFO from rank {from}");
        next[from] += 1;
    }
    for s in senders {
        s.join().unwrap();
    }
    assert!(next[1..].iter().all(|&n| n == PER));
}

/// A rank can send to itself; bad ranks are refused.
#[test]
fn self_send_and_bad_rank() {
    let ranks = LocalTransport::group(2);
    ranks[1].send(1, vec![7]).unwrap();
    assert_eq!(ranks[1].recv().unwrap(), Some((1, vec![7])));
    assert_eq!(
        ranks[0].send(2, vec![]),
        Err(TransportError::BadRank { to: 2, size: 2 })
    );
    assert_eq!((ranks[1].rank(), ranks[1].size()), (1, 2));
}

/// Shutdown wakes a blocked receiver, which returns what was queued first, then None
/// (repeatedly); sends from the shut-down rank fail, other ranks are unaffected.
#[test]
fn shutdown_wakes_recv_after_draining() {
    let ranks = LocalTransport::group(2);
    let r0 = ranks[0].clone();
    let blocked = thread::spawn(move || {
        let t = Instant::now();
        let got = r0.recv().unwrap();
        (got, t.elapsed())
    });
    thread::sleep(Duration::from_millis(100));
    ranks[0].shutdown();
    let (got, waited) = blocked.join().unwrap();
    assert_eq!(got, None);
    assert!(
        waited >= Duration::from_millis(90),
        "recv blocked until shutdown"
    );

    let ranks = LocalTransport::group(2);
    ranks[1].send(0, vec![1]).unwrap();
    ranks[1].send(0, vec![2]).unwrap();
    ranks[0].shutdown();
    ranks[0].shutdown();
    assert_eq!(ranks[0].recv().unwrap(), Some((1, vec![1])));
    assert_eq!(ranks[0].recv().unwrap(), Some((1, vec![2])));
    assert_eq!(ranks[0].recv().unwrap(), None);
    assert_eq!(ranks[0].recv().unwrap(), None);
    assert_eq!(ranks[0].send(1, vec![]), Err(TransportError::Shutdown));
    ranks[1].send(1, vec![3]).unwrap();
    assert_eq!(ranks[1].recv().unwrap(), Some((1, vec![3])));
}

/// Abort by one rank makes every rank's blocked recv and later sends fail with the
/// aborting rank and code.
#[test]
fn abort_reaches_every_rank() {
    let ranks = LocalTransport::group(3);
    let waiters: Vec<_> = ranks
        .iter()
        .cloned()
        .map(|t| thread::spawn(move || t.recv()))
        .collect();
    thread::sleep(Duration::from_millis(50));
    ranks[2].abort(4);
    let want = TransportError::Aborted { rank: 2, code: 4 };
    for w in waiters {
        assert_eq!(w.join().unwrap(), Err(want.clone()));
    }
    assert_eq!(ranks[0].send(1, vec![]), Err(want.clone()));
    assert_eq!(ranks[1].recv(), Err(want));
}

/// Records through the transport with per-peer encoders: a ring of 3 ranks passes a
/// record around 100 times and it comes back bit-identical.
#[test]
fn records_around_a_ring() {
    use snet_core::{CType, Record, Value};
    use snet_dist::{PeerDecoder, PeerEncoder};
    const N: usize = 3;
    let ranks = LocalTransport::group(N);
    let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + 3) as u8).collect();
    let rec = Record::new()
        .with_field(
            "blob",
            Value::from_bytes(CType::UChar, data.len(), false, &data),
        )
        .with_tag("hops", 0);
    let workers: Vec<_> = ranks
        .iter()
        .cloned()
        .map(|t: Arc<LocalTransport>| {
            let start = rec.clone();
            thread::spawn(move || {
                let next = (t.rank() + 1) % N;
                let mut enc = PeerEncoder::new();
                let mut dec = PeerDecoder::new();
                let mut send = |r: &Record| {
                    let mut buf = Vec::new();
                    enc.encode_record(r, &mut buf).unwrap();
                    t.send(next, buf).unwrap();
                };
                if t.rank() == 0 {
                    send(&start);
                }
                for _ in 0..100 {
                    let (from, m) = t.recv().unwrap().unwrap();
                    assert_eq!(from, (t.rank() + N - 1) % N);
                    let r = dec.decode_record(&mut &m[..]).unwrap();
                    if t.rank() == 0 {
                        assert_eq!(r, start);
                    }
                    send(&r);
                }
                // Rank 0's last record stays queued at rank 1: the test only counts laps.
                dec.known_labels()
            })
        })
        .collect();
    for w in workers {
        assert_eq!(
            w.join().unwrap(),
            2,
            "each rank learnt blob and <hops> once"
        );
    }
}
