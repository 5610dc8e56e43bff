use super::*;
use loom::thread;

fn ptr(i: usize) -> NonNull<u64> {
    NonNull::new(std::ptr::without_provenance_mut(i * 8 + 8)).unwrap()
}

fn id(p: NonNull<u64>) -> usize {
    p.as_ptr().addr() / 8 - 1
}

/// Owner pushes 3 items into a ring of 4 and pops them back while one thief steals:
/// every item is taken exactly once in every interleaving.
#[test]
fn loom_pop_steal_exactly_once() {
    loom::model(|| {
        let w = Worker::<u64>::new(4, BarrierMode::Symmetric);
        let s = w.stealer();
        let thief = thread::spawn(move || {
            let mut got = vec![];
            for _ in 0..2 {
                if let Steal::Success(p) = s.steal() {
                    got.push(id(p));
                }
            }
            got
        });
        let mut mine = vec![];
        for i in 0..3 {
            w.push(ptr(i)).unwrap();
        }
        while let Some(p) = w.pop() {
            mine.push(id(p));
        }
        let got = thief.join().unwrap();
        let mut all: Vec<usize> = mine.into_iter().chain(got).collect();
        all.sort_unstable();
        assert_eq!(all, vec![0, 1, 2]);
    });
}

/// Two thieves race for the last element with the owner.
#[test]
fn loom_last_element_three_way() {
    loom::model(|| {
        let w = Worker::<u64>::new(4, BarrierMode::Symmetric);
        w.push(ptr(0)).unwrap();
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let s = w.stealer();
                thread::spawn(move || matches!(s.steal(), Steal::Success(_)) as usize)
            })
            .collect();
        let mine = w.pop().is_some() as usize;
        let total: usize = mine
            + thieves
                .into_iter()
                .map(|t| t.join().unwrap())
                .sum::<usize>();
        assert_eq!(total, 1);
    });
}

/// Wrap-around: the owner reuses a slot only after the thief's CAS moved past it.
#[test]
fn loom_wraparound_reuse() {
    loom::model(|| {
        let w = Worker::<u64>::new(2, BarrierMode::Symmetric);
        let s = w.stealer();
        w.push(ptr(0)).unwrap();
        w.push(ptr(1)).unwrap();
        let thief = thread::spawn(move || match s.steal() {
            Steal::Success(p) => Some(id(p)),
            _ => None,
        });
        let pushed_third = w.push(ptr(2)).is_ok();
        let mut all = vec![];
        while let Some(p) = w.pop() {
            all.push(id(p));
        }
        all.extend(thief.join().unwrap());
        all.sort_unstable();
        let expected: Vec<usize> = if pushed_third {
            vec![0, 1, 2]
        } else {
            vec![0, 1]
        };
        assert_eq!(all, expected);
    });
}
