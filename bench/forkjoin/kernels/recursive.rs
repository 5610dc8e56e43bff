//! Recursive kernels: fib, integrate, nqueens, quicksort, knapsack.

use super::{Par, Rng};
use std::sync::atomic::{AtomicI64, Ordering};

/// Recursive Fibonacci, every call forks.
pub(crate) fn fib<P: Par>(p: P, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = p.join(|| fib(p, n - 1), || fib(p, n - 2));
    a + b
}

fn f(x: f64) -> f64 {
    (x * x + 1.0) * x
}

const EPSILON: f64 = 1.0e-9;

fn integrate_rec<P: Par>(p: P, x1: f64, y1: f64, x2: f64, y2: f64, area: f64) -> f64 {
    let half = (x2 - x1) / 2.0;
    let x0 = x1 + half;
    let y0 = f(x0);
    let area_x1x0 = (y1 + y0) / 2.0 * half;
    let area_x0x2 = (y0 + y2) / 2.0 * half;
    let area_x1x2 = area_x1x0 + area_x0x2;
    if area_x1x2 - area < EPSILON && area - area_x1x2 < EPSILON {
        return area_x1x2;
    }
    let (a, b) = p.join(
        || integrate_rec(p, x1, y1, x0, y0, area_x1x0),
        || integrate_rec(p, x0, y0, x2, y2, area_x0x2),
    );
    a + b
}

/// Adaptive quadrature of (x²+1)x over [0, n] (Fibril's `integrate`).
pub(crate) fn integrate<P: Par>(p: P, n: f64) -> f64 {
    integrate_rec(p, 0.0, f(0.0), n, f(n), 0.0)
}

/// Exact value of the integral, for checking.
pub(crate) fn integrate_exact(n: f64) -> f64 {
    n * n * n * n / 4.0 + n * n / 2.0
}

#[inline(never)]
fn queens_ok(a: &[u8]) -> bool {
    let j = a.len() - 1;
    let q = a[j] as i32;
    for (i, &p) in a[..j].iter().enumerate() {
        let p = p as i32;
        let d = (j - i) as i32;
        if p == q || p - q == d || q - p == d {
            return false;
        }
    }
    true
}

fn queens_rec<P: Par>(p: P, n: usize, a: &[u8], lo: usize, hi: usize) -> u64 {
    // Fork over the candidate columns lo..hi by halving (Fibril forks each in a loop).
    if hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let (x, y) = p.join(
            || queens_rec(p, n, a, lo, mid),
            || queens_rec(p, n, a, mid, hi),
        );
        return x + y;
    }
    let mut b = [0u8; 32];
    let j = a.len();
    b[..j].copy_from_slice(a);
    b[j] = lo as u8;
    let b = &b[..=j];
    if !queens_ok(b) {
        return 0;
    }
    if j + 1 == n {
        return 1;
    }
    queens_rec(p, n, b, 0, n)
}

/// Number of ways to place `n` queens (Fibril's `nqueens`).
pub(crate) fn nqueens<P: Par>(p: P, n: usize) -> u64 {
    queens_rec(p, n, &[], 0, n)
}

#[inline(never)]
fn insertion_sort(v: &mut [u64]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

#[inline(never)]
fn partition(v: &mut [u64]) -> usize {
    // Median of three as pivot, Hoare-style partition.
    let n = v.len();
    let m = n / 2;
    if v[0] > v[m] {
        v.swap(0, m);
    }
    if v[m] > v[n - 1] {
        v.swap(m, n - 1);
    }
    if v[0] > v[m] {
        v.swap(0, m);
    }
    let pivot = v[m];
    let (mut i, mut j) = (0usize, n - 1);
    loop {
        while v[i] < pivot {
            i += 1;
        }
        while v[j] > pivot {
            j -= 1;
        }
        if i >= j {
            return j + 1;
        }
        v.swap(i, j);
        i += 1;
        j -= 1;
    }
}

/// Parallel quicksort (Fibril's `quicksort`: fork the two halves, cutoff 32).
pub(crate) fn quicksort<P: Par>(p: P, v: &mut [u64]) {
    if v.len() <= 32 {
        insertion_sort(v);
        return;
    }
    let k = partition(v);
    let (l, r) = v.split_at_mut(k);
    p.join(|| quicksort(p, l), || quicksort(p, r));
}

/// Random input for quicksort.
pub(crate) fn quicksort_input(n: usize) -> Vec<u64> {
    let mut r = Rng(0x1234_5678_9ABC_DEF1);
    (0..n).map(|_| r.next() % 1_000_000_007).collect()
}

/// A knapsack item.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Item {
    value: i64,
    weight: i64,
}

/// `n` deterministic items sorted by value density, and a capacity.
pub(crate) fn knapsack_input(n: usize) -> (Vec<Item>, i64) {
    let mut r = Rng(0x0DDB_A11C_AFE0_0042);
    let mut items: Vec<Item> = (0..n)
        .map(|_| {
            let weight = 100 + (r.next() % 900) as i64;
            // Strongly correlated instance (value = weight + 100): weak bounds, a big tree.
            let value = weight + 100;
            Item { value, weight }
        })
        .collect();
    items.sort_by(|a, b| (b.value * a.weight).cmp(&(a.value * b.weight)));
    let cap = items.iter().map(|i| i.weight).sum::<i64>() / 2;
    (items, cap)
}

fn knap_rec<P: Par>(p: P, e: &[Item], c: i64, v: i64, best: &AtomicI64) -> i64 {
    if c < 0 {
        return i64::MIN;
    }
    if e.is_empty() || c == 0 {
        return v;
    }
    let ub = v as f64 + c as f64 * e[0].value as f64 / e[0].weight as f64;
    if ub < best.load(Ordering::Relaxed) as f64 {
        return i64::MIN;
    }
    let (with, without) = p.join(
        || knap_rec(p, &e[1..], c - e[0].weight, v + e[0].value, best),
        || knap_rec(p, &e[1..], c, v, best),
    );
    let b = with.max(without);
    // As Fibril's `if (best > best_so_far) best_so_far = best;`: read first, write only
    // on improvement. An unconditional RMW at every node would bounce the shared line
    // between the workers on every node (T2 slower than T1).
    if b > best.load(Ordering::Relaxed) {
        best.fetch_max(b, Ordering::Relaxed);
    }
    b
}

/// Branch-and-bound 0/1 knapsack (Fibril's `knapsack`); returns the best value.
pub(crate) fn knapsack<P: Par>(p: P, items: &[Item], cap: i64) -> i64 {
    let best = AtomicI64::new(i64::MIN);
    knap_rec(p, items, cap, 0, &best)
}
