//! The asynchronous placement scheduler (seed 004 §3.3–3.5).
//!
//! A thread wakes every `interval`, inspects the live tasks and sets the
//! `next_worker` field of those that should move. A repeat task checks that field at
//! the end of each activation and, if it names another worker, ends its context and
//! is respawned there with its continuation (the worker sends a `Start` message) —
//! migration costs one stack from the new worker's pool and one mailbox message, and
//! nothing when no move is asked for.
//!
//! Strategies:
//! * `Random { p }`: the activation hook marks a task with probability `p`; the
//!   scheduler sends marked tasks to a uniformly random worker (the paper's baseline).
//! * `WaitingTime`: workers record each dispatch's ready time (time between becoming
//!   ready and being dispatched) into a per-task sliding window; per worker, the
//!   scheduler averages its tasks' window averages (μ). Tasks whose average exceeds
//!   their worker's μ move to the worker with the lowest μ — damped: only if the
//!   worker's μ exceeds the lowest by `threshold`, and at most `max_moves` tasks per
//!   worker per round.

use crate::config::{PlacementConfig, Strategy};
use crate::runtime::RtShared;
use crate::task::{Task, TaskState, NO_WORKER};
use std::sync::atomic::Ordering::{Acquire, Relaxed};
use std::sync::Arc;
use std::time::Duration;

pub(crate) fn run(rt: Arc<RtShared>, cfg: PlacementConfig) {
    let n = rt.workers.len();
    let mut rng = rt.cfg.seed | 1;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    loop {
        let mut slept = Duration::ZERO;
        while slept < cfg.interval {
            if rt.shutdown.load(Acquire) {
                return;
            }
            let step = (cfg.interval - slept).min(Duration::from_millis(5));
            std::thread::sleep(step);
            slept += step;
        }
        if n < 2 {
            continue;
        }
        let tasks: Vec<Arc<Task>> = rt.registry.all();
        match cfg.strategy {
            Strategy::Random { .. } => {
                for t in &tasks {
                    if t.candidate.swap(false, Relaxed) {
                        let w = (next() % n as u64) as usize;
                        if w != t.owner.load(Relaxed) {
                            t.next_worker.store(w, Relaxed);
                        }
                    }
                }
            }
            Strategy::WaitingTime {
                threshold,
                max_moves,
                ..
            } => {
                let moves = plan_waiting_time(&tasks, n, threshold, max_moves);
                for (t, w) in moves {
                    t.next_worker.store(w, Relaxed);
                    t.ready_avg.store(0, Relaxed);
                }
            }
        }
    }
}

/// The waiting-time rule: which tasks go where.
pub(crate) fn plan_waiting_time(
    tasks: &[Arc<Task>],
    n: usize,
    threshold: f64,
    max_moves: usize,
) -> Vec<(Arc<Task>, usize)> {
    let mut sum = vec![0u64; n];
    let mut cnt = vec![0u64; n];
    let mut per: Vec<Vec<(u64, &Arc<Task>)>> = vec![Vec::new(); n];
    for t in tasks {
        let avg = t.ready_avg.load(Relaxed);
        let w = t.owner.load(Relaxed);
        if avg == 0
            || w >= n
            || t.state() == TaskState::Zombie
            || t.next_worker.load(Relaxed) != NO_WORKER
        {
            continue;
        }
        sum[w] += avg;
        cnt[w] += 1;
        per[w].push((avg, t));
    }
    let mu: Vec<f64> = (0..n)
        .map(|w| {
            if cnt[w] == 0 {
                0.0
            } else {
                sum[w] as f64 / cnt[w] as f64
            }
        })
        .collect();
    let wmin = (0..n).min_by(|&a, &b| mu[a].total_cmp(&mu[b])).unwrap_or(0);
    let mut moves = Vec::new();
    for w in 0..n {
        if w == wmin || mu[w] <= mu[wmin] * threshold.max(1.0) {
            continue;
        }
        let mut cands: Vec<_> = per[w].iter().filter(|(a, _)| *a as f64 > mu[w]).collect();
        cands.sort_by_key(|c| std::cmp::Reverse(c.0));
        for (_, t) in cands.into_iter().take(max_moves) {
            moves.push((Arc::clone(t), wmin));
        }
    }
    moves
}
