//! Ready sets (seed 000 §4.2.3): `put_ready` / `fetch_ready` behind a policy.
//!
//! A ready set is only ever touched by its own worker thread (wake-ups from other
//! workers arrive through the mailbox), so it needs no synchronisation at all.

use crate::config::Scheduling;
use crate::task::{Task, TaskKind};
use std::collections::VecDeque;
use std::sync::Arc;

/// A worker's ready set.
#[derive(Debug)]
pub(crate) enum ReadyQueue {
    /// Dispatch in the order tasks became ready.
    Fifo(VecDeque<Arc<Task>>),
    /// Non-box tasks before box tasks (seed 000 §6.2.2).
    Priority {
        high: VecDeque<Arc<Task>>,
        low: VecDeque<Arc<Task>>,
    },
}

impl ReadyQueue {
    pub(crate) fn new(policy: Scheduling) -> Self {
        match policy {
            Scheduling::Fifo => ReadyQueue::Fifo(VecDeque::with_capacity(64)),
            Scheduling::Priority => ReadyQueue::Priority {
                high: VecDeque::new(),
                low: VecDeque::new(),
            },
        }
    }

    /// PUT-READY.
    #[inline]
    pub(crate) fn put(&mut self, t: Arc<Task>) {
        match self {
            ReadyQueue::Fifo(q) => q.push_back(t),
            ReadyQueue::Priority { high, low } => {
                if t.kind == TaskKind::Box {
                    low.push_back(t)
                } else {
                    high.push_back(t)
                }
            }
        }
    }

    /// FETCH-READY.
    #[inline]
    pub(crate) fn fetch(&mut self) -> Option<Arc<Task>> {
        match self {
            ReadyQueue::Fifo(q) => q.pop_front(),
            ReadyQueue::Priority { high, low } => high.pop_front().or_else(|| low.pop_front()),
        }
    }

    /// Number of ready tasks.
    pub(crate) fn len(&self) -> usize {
        match self {
            ReadyQueue::Fifo(q) => q.len(),
            ReadyQueue::Priority { high, low } => high.len() + low.len(),
        }
    }

    /// Takes every ready task (shutdown).
    pub(crate) fn drain(&mut self) -> Vec<Arc<Task>> {
        let mut v = Vec::with_capacity(self.len());
        while let Some(t) = self.fetch() {
            v.push(t);
        }
        v
    }
}
