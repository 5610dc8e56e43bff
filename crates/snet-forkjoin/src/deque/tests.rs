use super::*;
use crate::barrier::best_mode;
use std::collections::HashSet;
use std::sync::atomic::AtomicBool;

fn ptr(i: usize) -> NonNull<u64> {
    // Distinct non-null fake pointers; never dereferenced.
    NonNull::new(std::ptr::without_provenance_mut(i * 8 + 8)).unwrap()
}

fn id(p: NonNull<u64>) -> usize {
    p.as_ptr().addr() / 8 - 1
}

#[test]
fn owner_is_lifo_and_thief_is_fifo() {
    for mode in [BarrierMode::Symmetric, best_mode()] {
        let w = Worker::new(8, mode);
        let s = w.stealer();
        for i in 0..5 {
            w.push(ptr(i)).unwrap();
        }
        assert_eq!(w.len(), 5);
        assert_eq!(s.steal(), Steal::Success(ptr(0)));
        assert_eq!(w.pop(), Some(ptr(4)));
        assert_eq!(s.steal(), Steal::Success(ptr(1)));
        assert_eq!(w.pop(), Some(ptr(3)));
        assert_eq!(w.pop(), Some(ptr(2)));
        assert_eq!(w.pop(), None);
        assert_eq!(s.steal(), Steal::Empty);
        assert_eq!(w.len(), 0);
    }
}

#[test]
fn full_ring_hands_the_item_back_and_wraps() {
    let w = Worker::new(4, BarrierMode::Symmetric);
    let s = w.stealer();
    for i in 0..4 {
        w.push(ptr(i)).unwrap();
    }
    assert_eq!(w.push(ptr(9)), Err(ptr(9)));
    assert_eq!(s.steal(), Steal::Success(ptr(0)));
    // One slot free again (after refreshing the cached top).
    w.push(ptr(4)).unwrap();
    assert_eq!(w.push(ptr(10)), Err(ptr(10)));
    let mut rest = vec![];
    while let Some(p) = w.pop() {
        rest.push(id(p));
    }
    assert_eq!(rest, vec![4, 3, 2, 1]);
}

/// Owner pushes and pops while two thieves steal; every item is taken exactly once.
fn stress(mode: BarrierMode, n: usize) {
    let w = Worker::new(64, mode);
    let done = AtomicBool::new(false);
    let stolen: Vec<Vec<usize>> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let s = w.stealer();
                let done = &done;
                sc.spawn(move || {
                    let mut got = vec![];
                    while !done.load(Ordering::Acquire) {
                        if let Steal::Success(p) = s.steal() {
                            got.push(id(p));
                        }
                    }
                    got
                })
            })
            .collect();
        let mut mine = vec![];
        let mut next = 0;
        let mut rng = 0x9E37_79B9_7F4A_7C15_u64;
        while next < n {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            for _ in 0..(rng % 4) {
                if next < n {
                    match w.push(ptr(next)) {
                        Ok(()) => next += 1,
                        Err(_) => break,
                    }
                }
            }
            for _ in 0..(rng >> 8) % 3 {
                if let Some(p) = w.pop() {
                    mine.push(id(p));
                }
            }
        }
        while let Some(p) = w.pop() {
            mine.push(id(p));
        }
        done.store(true, Ordering::Release);
        let mut all = vec![mine];
        all.extend(handles.into_iter().map(|h| h.join().unwrap()));
        all
    });
    let mut seen = HashSet::new();
    let mut total = 0;
    for v in &stolen {
        for &i in v {
            assert!(seen.insert(i), "item {i} taken twice");
            total += 1;
        }
    }
    assert_eq!(total, n, "items lost");
}

#[test]
fn stress_symmetric_exactly_once() {
    stress(
        BarrierMode::Symmetric,
        if cfg!(miri) { 200 } else { 200_000 },
    );
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot run membarrier")]
fn stress_asymmetric_exactly_once() {
    stress(best_mode(), 50_000);
}
