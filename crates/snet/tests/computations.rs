//! Pure S-Net programs with independently computed answers: Fibonacci by unfolding and
//! folding its recursion tree (star, split, synchrocells, feedback), powers of two by a
//! feedback loop, primes by trial division joined in synchrocells — for many N, on
//! every engine, checked against a Rust computation.

use snet::{EngineKind, Program, Record};
use snet_core::Label;

const FIBTREE: &str = include_str!("../../../examples/compute/fibtree/fibtree.snet");
const POWERS: &str = include_str!("../../../examples/compute/powers/powers.snet");
const PRIMES: &str = include_str!("../../../examples/compute/primes/primes.snet");

fn fib(n: i32) -> i32 {
    let (mut a, mut b) = (0, 1);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

fn tags(out: &[Record], name: &str) -> Vec<i32> {
    let mut v: Vec<i32> = out.iter().filter_map(|r| r.tag(Label::tag(name))).collect();
    v.sort();
    v
}

#[test]
fn fibonacci_by_recursion_tree() {
    let p = Program::from_source("fibtree.snet", FIBTREE).unwrap();
    for e in EngineKind::ALL {
        for n in 0..=16 {
            let out = p
                .run_records(*e, vec![Record::new().with_tag("N", n)])
                .unwrap();
            assert_eq!(tags(&out, "F"), vec![fib(n)], "fib({n}) on {e:?}");
            assert_eq!(out.len(), 1);
        }
    }
}

#[test]
fn powers_of_two_by_feedback() {
    let p = Program::from_source("powers.snet", POWERS).unwrap();
    for e in EngineKind::ALL {
        let out = p
            .run_records(
                *e,
                (0..31).map(|n| Record::new().with_tag("N", n)).collect(),
            )
            .unwrap();
        assert_eq!(
            tags(&out, "P"),
            (0..31).map(|n| 1i32 << n).collect::<Vec<_>>()
        );
    }
}

#[test]
fn primes_by_trial_division_and_synchrocells() {
    let p = Program::from_source("primes.snet", PRIMES).unwrap();
    for e in EngineKind::ALL {
        for n in [2, 3, 10, 50, 200] {
            let out = p
                .run_records(*e, vec![Record::new().with_tag("N", n)])
                .unwrap();
            let want: Vec<i32> = (2..=n).filter(|x| (2..*x).all(|d| x % d != 0)).collect();
            assert_eq!(tags(&out, "P"), want, "primes up to {n} on {e:?}");
        }
    }
}
