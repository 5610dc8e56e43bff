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
    /// Dispatch in the order tasks became ready. `next` is the head of the queue
    /// when it holds a task: a task put into an empty set goes there, and is taken
    /// from there, without touching the deque (the common case of one ready task
    /// at a time, as in a ring or pipeline on one worker).
    Fifo {
        next: Option<Arc<Task>>,
        rest: VecDeque<Arc<Task>>,
    },
    /// Non-box tasks before box tasks (seed 000 §6.2.2).
    Priority {
        high: VecDeque<Arc<Task>>,
        low: VecDeque<Arc<Task>>,
    },
}

impl ReadyQueue {
    pub(crate) fn new(policy: Scheduling) -> Self {
        match policy {
            Scheduling::Fifo => ReadyQueue::Fifo {
                next: None,
                rest: VecDeque::with_capacity(64),
            },
            Scheduling::Priority => ReadyQueue::Priority {
                high: VecDeque::new(),
                low: VecDeque::new(),
            },
        }
    }

    /// PUT-READY.
    #[inline(always)]
    pub(crate) fn put(&mut self, t: Arc<Task>) {
        match self {
            ReadyQueue::Fifo { next, rest } => {
                if next.is_none() {
                    // Empty set (`next` is refilled from `rest` on every fetch).
                    debug_assert!(rest.is_empty());
                    *next = Some(t);
                } else {
                    rest.push_back(t);
                }
            }
            ReadyQueue::Priority { high, low } => {
                if t.kind == TaskKind::Box {
                    low.push_back(t)
                } else {
                    high.push_back(t)
                }
            }
        }
    }

    /// PUT-READY ahead of every ready task (an urgent wake-up, see
    /// `worker::deliver_first`).
    pub(crate) fn put_first(&mut self, t: Arc<Task>) {
        match self {
            ReadyQueue::Fifo { next, rest } => {
                if let Some(n) = next.replace(t) {
                    rest.push_front(n);
                }
            }
            ReadyQueue::Priority { high, low } => {
                if t.kind == TaskKind::Box {
                    low.push_front(t)
                } else {
                    high.push_front(t)
                }
            }
        }
    }

    /// FETCH-READY.
    #[inline(always)]
    pub(crate) fn fetch(&mut self) -> Option<Arc<Task>> {
        match self {
            ReadyQueue::Fifo { next, rest } => {
                let t = next.take();
                if t.is_some() && !rest.is_empty() {
                    *next = rest.pop_front();
                }
                t
            }
            ReadyQueue::Priority { high, low } => high.pop_front().or_else(|| low.pop_front()),
        }
    }

    /// FETCH-READY, but only if the task it would return has already run (its
    /// execution context exists, so a blocking task can switch straight to it).
    #[inline(always)]
    pub(crate) fn fetch_started(&mut self) -> Option<Arc<Task>> {
        let head = match self {
            ReadyQueue::Fifo { next, .. } => next.as_ref(),
            ReadyQueue::Priority { high, low } => high.front().or_else(|| low.front()),
        };
        if head.is_some_and(|t| !t.sp.get().is_null()) {
            self.fetch()
        } else {
            None
        }
    }

    /// Number of ready tasks.
    pub(crate) fn len(&self) -> usize {
        match self {
            ReadyQueue::Fifo { next, rest } => usize::from(next.is_some()) + rest.len(),
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
