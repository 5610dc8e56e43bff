//! Parallel loops over index ranges, built on [`join`].

use std::ops::Range;

use crate::join::join;
use crate::worker::WorkerThread;

/// Calls `f(i)` for every `i` in `range`, splitting the range in halves with [`join`]
/// down to chunks of at most `grain` indices (at least 1), which run sequentially.
pub fn for_each_with_grain<F>(range: Range<usize>, grain: usize, f: &F)
where
    F: Fn(usize) + Sync,
{
    let grain = grain.max(1);
    split(range, grain, f);
}

fn split<F: Fn(usize) + Sync>(range: Range<usize>, grain: usize, f: &F) {
    let len = range.end.saturating_sub(range.start);
    if len <= grain {
        for i in range {
            f(i);
        }
        return;
    }
    let mid = range.start + len / 2;
    join(
        || split(range.start..mid, grain, f),
        || split(mid..range.end, grain, f),
    );
}

/// Calls `f(i)` for every `i` in `range` in parallel. The grain is chosen so that each
/// worker of the current pool gets about 16 chunks.
pub fn for_each<F>(range: Range<usize>, f: &F)
where
    F: Fn(usize) + Sync,
{
    let threads = WorkerThread::current().map_or(1, |w| w.registry().num_threads());
    let len = range.end.saturating_sub(range.start);
    let grain = (len / (16 * threads)).max(1);
    for_each_with_grain(range, grain, f);
}

/// Number of worker threads of the pool the caller runs on (1 off a pool).
pub fn current_num_threads() -> usize {
    WorkerThread::current().map_or(1, |w| w.registry().num_threads())
}

/// Index of the pool worker running the caller, if it runs on one.
pub fn current_worker_index() -> Option<usize> {
    WorkerThread::current().map(|w| w.index())
}
