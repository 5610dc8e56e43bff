//! Assignment of new tasks to workers (seed 000 §5.4.2 and §6.2.1).

use crate::config::Assignment;
use crate::task::{TaskKind, TaskSpec};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// Chooses a worker for each new task.
#[derive(Debug)]
pub(crate) struct Assigner {
    policy: Assignment,
    workers: usize,
    next: AtomicUsize,
    balance: Mutex<Balance>,
}

#[derive(Debug, Default)]
struct Balance {
    /// Instances of each box per worker.
    per_box: HashMap<Arc<str>, Vec<u32>>,
    /// Box tasks per worker.
    boxes: Vec<u32>,
}

impl Assigner {
    pub(crate) fn new(policy: Assignment, workers: usize) -> Self {
        Assigner {
            policy,
            workers,
            next: AtomicUsize::new(0),
            balance: Mutex::new(Balance {
                per_box: HashMap::new(),
                boxes: vec![0; workers],
            }),
        }
    }

    /// The worker for a task created from `spec`.
    pub(crate) fn assign(&self, spec: &TaskSpec) -> usize {
        if let Some(w) = spec.worker {
            return w % self.workers;
        }
        match self.policy {
            Assignment::RoundRobin => self.next.fetch_add(1, Relaxed) % self.workers,
            Assignment::Balanced => {
                let mut b = self.balance.lock().unwrap_or_else(|e| e.into_inner());
                // Where the next box task would go: fewest box tasks, lowest index.
                let least_loaded = argmin(&b.boxes, |w| b.boxes[w]);
                if spec.kind != TaskKind::Box {
                    return least_loaded;
                }
                let n = self.workers;
                let counts = b
                    .per_box
                    .entry(Arc::clone(&spec.name))
                    .or_insert_with(|| vec![0; n])
                    .clone();
                let w = argmin(&counts, |w| {
                    counts[w] as u64 * 1_000_000 + b.boxes[w] as u64
                });
                if let Some(c) = b.per_box.get_mut(&spec.name) {
                    c[w] += 1;
                }
                b.boxes[w] += 1;
                w
            }
        }
    }
}

fn argmin<T, K: Ord>(v: &[T], key: impl Fn(usize) -> K) -> usize {
    (0..v.len()).min_by_key(|&w| key(w)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_cycles() {
        let a = Assigner::new(Assignment::RoundRobin, 3);
        let got: Vec<_> = (0..6).map(|_| a.assign(&TaskSpec::new("t"))).collect();
        assert_eq!(got, vec![0, 1, 2, 0, 1, 2]);
        assert_eq!(a.assign(&TaskSpec::new("t").on_worker(7)), 1);
    }

    #[test]
    fn balanced_spreads_each_box_name() {
        // The seed 000 §6.2.1 situation: round robin over the sequence A B C A B C puts
        // every A on worker 0 with 3 workers... with 2 workers and names A,B repeating,
        // round robin puts all A on 0 and all B on 1; balanced spreads each name.
        let a = Assigner::new(Assignment::Balanced, 2);
        let mut per = HashMap::new();
        for _ in 0..4 {
            for name in ["A", "B"] {
                let w = a.assign(&TaskSpec::boxed(name));
                *per.entry((name, w)).or_insert(0) += 1;
            }
        }
        assert_eq!(per[&("A", 0)], 2);
        assert_eq!(per[&("A", 1)], 2);
        assert_eq!(per[&("B", 0)], 2);
        assert_eq!(per[&("B", 1)], 2);
        // A non-box task goes where the next box would.
        let _ = a.assign(&TaskSpec::boxed("C"));
        assert_eq!(a.assign(&TaskSpec::new("router")), 1);
    }
}
