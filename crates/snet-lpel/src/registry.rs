//! The registry of a runtime's live tasks: deadlock reports, the placement scheduler
//! and shutdown walk it; every spawn adds a task and every finished task leaves it.
//!
//! It is a set of slabs (the `slab` crate), each behind its own mutex: a task goes to shard `id mod S`
//! and remembers its slot, so leaving is an index into a vector — no hashing and no
//! probe through a table of thousands of cold entries (the `HashMap` it replaces cost
//! 3 % of the aes benchmark at 16384 processes, on SipHash and the probe's cache
//! misses). Sharding keeps two workers retiring tasks at the same time off each
//! other's lock.

use crate::task::Task;
use slab::Slab;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex, MutexGuard};

/// Shards: a power of two comfortably above the worker counts of this machine kind.
const SHARDS: usize = 8;

/// Live tasks of one runtime (see the module documentation).
pub(crate) struct Registry {
    shards: [Mutex<Slab<Arc<Task>>>; SHARDS],
}

impl Registry {
    pub(crate) fn new() -> Registry {
        Registry {
            shards: std::array::from_fn(|_| Mutex::new(Slab::new())),
        }
    }

    fn shard(&self, t: &Task) -> MutexGuard<'_, Slab<Arc<Task>>> {
        self.shards[(t.id.0 as usize) % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `t` (once: a task is registered when it is spawned).
    pub(crate) fn insert(&self, t: Arc<Task>) {
        let mut s = self.shard(&t);
        let entry = s.vacant_entry();
        // Written under the shard lock, read under it in `remove`.
        t.reg_slot.store(entry.key(), Relaxed);
        entry.insert(t);
    }

    /// Removes `t` and returns the registry's reference (`None` if it was not there).
    pub(crate) fn remove(&self, t: &Task) -> Option<Arc<Task>> {
        let mut s = self.shard(t);
        let slot = t.reg_slot.load(Relaxed);
        match s.get(slot) {
            Some(x) if std::ptr::eq(&**x, t) => Some(s.remove(slot)),
            _ => None,
        }
    }

    /// A reference to every registered task (in no particular order).
    pub(crate) fn all(&self) -> Vec<Arc<Task>> {
        let mut v = Vec::new();
        for sh in &self.shards {
            let s = sh.lock().unwrap_or_else(|e| e.into_inner());
            v.extend(s.iter().map(|(_, t)| Arc::clone(t)));
        }
        v
    }

    /// Removes and returns every registered task.
    pub(crate) fn drain(&self) -> Vec<Arc<Task>> {
        let mut v = Vec::new();
        for sh in &self.shards {
            v.extend(sh.lock().unwrap_or_else(|e| e.into_inner()).drain());
        }
        v
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::task::TaskSpec;

    fn task() -> Arc<Task> {
        Arc::new(Task::new(&TaskSpec::new("t"), 1 << 16, None, false))
    }

    #[test]
    fn insert_remove_reuse_and_drain_keep_every_task_once() {
        let r = Registry::new();
        let ts: Vec<Arc<Task>> = (0..100).map(|_| task()).collect();
        for t in &ts {
            r.insert(Arc::clone(t));
        }
        assert_eq!(r.all().len(), 100);
        // Remove every third: each comes back once, a second removal finds nothing.
        for t in ts.iter().step_by(3) {
            let got = r.remove(t).expect("registered");
            assert!(Arc::ptr_eq(&got, t));
            assert!(r.remove(t).is_none());
        }
        let left = r.all();
        assert_eq!(left.len(), 100 - 34);
        assert!(ts
            .iter()
            .step_by(3)
            .all(|t| !left.iter().any(|x| Arc::ptr_eq(x, t))));
        // Freed slots are reused, and a task's slot never points at another task.
        let more: Vec<Arc<Task>> = (0..50).map(|_| task()).collect();
        for t in &more {
            r.insert(Arc::clone(t));
        }
        for t in ts.iter().step_by(3) {
            assert!(
                r.remove(t).is_none(),
                "a removed task's old slot was reused"
            );
        }
        let slots: usize = r
            .shards
            .iter()
            .map(|s| {
                s.lock()
                    .unwrap()
                    .iter()
                    .map(|(k, _)| k + 1)
                    .max()
                    .unwrap_or(0)
            })
            .sum();
        assert!(
            slots < 150,
            "freed slots are reused: {slots} slots for 116 tasks"
        );
        let mut ids: Vec<u64> = r.drain().iter().map(|t| t.id.0).collect();
        ids.sort_unstable();
        let mut want: Vec<u64> = ts
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0)
            .map(|(_, t)| t.id.0)
            .chain(more.iter().map(|t| t.id.0))
            .collect();
        want.sort_unstable();
        assert_eq!(ids, want);
        assert!(r.all().is_empty());
    }
}
