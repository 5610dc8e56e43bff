//! Task control blocks (seed 000 §4.3.2) and task specifications.
//!
//! A [`Task`] is shared (`Arc`) between its owner worker, the streams it waits on, the
//! runtime's registry and the placement scheduler. Its execution context (stack and
//! saved stack pointer, see `fiber`) lives in `local` and `sp`,
//! which only the owner worker touches, and only while the task is not running
//! elsewhere: a task is owned by exactly one worker at a time, ownership moves only
//! through a mailbox message (release/acquire) when a repeat task migrates between
//! activations (seed 004's continuation respawn, where the old context has finished
//! and the new one is created by the new owner).
//!
//! # Blocked reference
//!
//! While a task is blocked no queue holds it: the worker `forget`s its `Arc` when the
//! task suspends with [`Suspend::Block`], and the party that claims the wake-up in the
//! stream protocol (see `chan`) re-materialises it with `Arc::from_raw` and hands it
//! to the owner's ready queue. The claim is exclusive, so the count stays balanced.

use crate::chan::PollTarget;
use crate::stream::StreamMeta;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, UnsafeCell};
use std::sync::atomic::AtomicU8;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Condvar, Mutex};

/// Unique task identifier (ascending in creation order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub u64);

impl std::fmt::Display for TaskId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Box tasks are computationally heavy; other tasks (routing, merging) are cheap.
/// Assignment and priority scheduling use this distinction (seed 000 §5.4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TaskKind {
    /// An instance of a box (or any heavy process).
    Box,
    /// Anything else.
    #[default]
    Other,
}

/// What a repeat task's activation asks for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// Run another activation (possibly on another worker, if placement moved it).
    Again,
    /// The task is finished.
    Done,
}

/// Task states as in seed 000 (log codes in brackets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum TaskState {
    /// Created, not yet run.
    Created = 0,
    /// Ready to run (`R`).
    Ready = 1,
    /// Running on its worker.
    Running = 2,
    /// Blocked reading an empty stream (`Bi`).
    BlockedIn = 3,
    /// Blocked writing a full stream (`Bo`).
    BlockedOut = 4,
    /// Blocked polling a stream set (`Ba`).
    BlockedAny = 5,
    /// Finished (`Z`).
    Zombie = 6,
}

impl TaskState {
    fn from_u8(v: u8) -> TaskState {
        match v {
            0 => TaskState::Created,
            1 => TaskState::Ready,
            2 => TaskState::Running,
            3 => TaskState::BlockedIn,
            4 => TaskState::BlockedOut,
            5 => TaskState::BlockedAny,
            _ => TaskState::Zombie,
        }
    }

    /// The code used in monitoring logs.
    pub fn code(self) -> &'static str {
        match self {
            TaskState::Created | TaskState::Ready | TaskState::Running => "R",
            TaskState::BlockedIn => "Bi",
            TaskState::BlockedOut => "Bo",
            TaskState::BlockedAny => "Ba",
            TaskState::Zombie => "Z",
        }
    }

    /// Whether the task waits on a stream.
    pub fn is_blocked(self) -> bool {
        matches!(
            self,
            TaskState::BlockedIn | TaskState::BlockedOut | TaskState::BlockedAny
        )
    }
}

/// How to create a task: name, kind, optional fixed worker, optional stack size.
#[derive(Debug, Clone)]
pub struct TaskSpec {
    pub(crate) name: Arc<str>,
    pub(crate) kind: TaskKind,
    pub(crate) worker: Option<usize>,
    pub(crate) stack_size: Option<usize>,
}

impl TaskSpec {
    /// A non-box task called `name`.
    pub fn new(name: impl Into<Arc<str>>) -> Self {
        TaskSpec {
            name: name.into(),
            kind: TaskKind::Other,
            worker: None,
            stack_size: None,
        }
    }

    /// A box task called `name` (the box name groups instances for balancing).
    pub fn boxed(name: impl Into<Arc<str>>) -> Self {
        TaskSpec {
            kind: TaskKind::Box,
            ..TaskSpec::new(name)
        }
    }

    /// Sets the kind.
    pub fn kind(mut self, kind: TaskKind) -> Self {
        self.kind = kind;
        self
    }

    /// Places the task on worker `w mod workers` instead of asking the assignment policy.
    pub fn on_worker(mut self, w: usize) -> Self {
        self.worker = Some(w);
        self
    }

    /// Stack size for this task (default: the runtime's).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }
}

/// The code a task runs.
pub(crate) enum Body {
    Once(Box<dyn FnOnce() + Send>),
    Repeat(Box<dyn FnMut() -> Activation + Send>),
}

/// Why a running task gave control back to its worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Suspend {
    /// Still ready (`yield_now`).
    Yield,
    /// Registered as a waiter on a stream: do not requeue.
    Block,
}

/// How a task's body ended.
pub(crate) enum TaskExit {
    Done,
    /// A repeat task continues on `next_worker` (continuation respawn).
    Migrate(Box<dyn FnMut() -> Activation + Send>),
}

pub(crate) const NO_WORKER: usize = usize::MAX;

/// Owner-only part of a task.
pub(crate) struct Local {
    /// The stack of the task's execution context, while it exists (from the first
    /// dispatch until the body ends; see `fiber`).
    pub(crate) stack: Option<crate::stack_pool::TaskStack>,
    /// Where the context switches to when its body has ended: the owner worker's
    /// scheduler context, or whoever unwinds the task at shutdown.
    pub(crate) ret: *mut *mut u8,
    /// How the body ended (set by the context before its last switch).
    pub(crate) exit: Option<TaskExit>,
    /// The payload of a panic that ended the body.
    pub(crate) panic: Option<Box<dyn std::any::Any + Send>>,
    /// The body of a task that has not run yet: its context, and with it its stack,
    /// is made at its first dispatch. Tasks queued for their first turn hold no stack
    /// (a producer that spawns consumers faster than they run cannot exhaust the
    /// mappings), and a task that ran to completion hands its stack, still in cache, to
    /// the next one.
    pub(crate) pending: Option<Body>,
    pub(crate) dispatches: u64,
    pub(crate) ready_since: u64,
    pub(crate) window: Vec<u64>,
    pub(crate) window_pos: usize,
}

/// Blocking support for threads outside the runtime that use streams.
pub(crate) struct External {
    pub(crate) woken: Mutex<bool>,
    pub(crate) cv: Condvar,
}

/// A task control block.
pub(crate) struct Task {
    pub(crate) id: TaskId,
    pub(crate) name: Arc<str>,
    pub(crate) kind: TaskKind,
    pub(crate) stack_size: usize,
    pub(crate) created_ns: u64,
    /// Index of the runtime (for wake-ups from foreign threads); `None` for externals.
    pub(crate) rt: Option<Arc<crate::runtime::RtShared>>,
    pub(crate) external: Option<External>,
    pub(crate) owner: AtomicUsize,
    /// Slot in the runtime's registry (see `registry`).
    pub(crate) reg_slot: AtomicUsize,
    pub(crate) next_worker: AtomicUsize,
    pub(crate) state: AtomicU8,
    /// Stream a task blocked in read/write waits on (for deadlock reports).
    pub(crate) blocked_on: AtomicPtr<StreamMeta>,
    /// Streams of the poll a task is blocked in (for deadlock reports).
    pub(crate) poll_set: Mutex<Vec<Arc<StreamMeta>>>,
    pub(crate) token: AtomicBool,
    pub(crate) acks: AtomicU32,
    /// Sliding-window average ready time, ns (placement).
    pub(crate) ready_avg: AtomicU64,
    /// Marked for migration by the random strategy's activation hook.
    pub(crate) candidate: AtomicBool,
    pub(crate) local: UnsafeCell<Local>,
    /// Saved stack pointer of the task's execution context while it is not running;
    /// null while it has none (before its first dispatch, after its end). Owner-only,
    /// like `local`, but kept outside it: a switch writes it while the task's own
    /// frames may hold a borrow of `local`.
    pub(crate) sp: std::cell::Cell<*mut u8>,
}

// SAFETY: `local` and `sp` (execution context) are only accessed by the task's current
// owner worker thread (module documentation); every other field is atomic or
// immutable or behind a mutex.
unsafe impl Send for Task {}
// SAFETY: as above.
unsafe impl Sync for Task {}

impl std::fmt::Debug for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task")
            .field("id", &self.id)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl PollTarget for Task {
    fn poll_token(&self) -> &AtomicBool {
        &self.token
    }
    fn poll_acks(&self) -> &AtomicU32 {
        &self.acks
    }
}

static NEXT_ID: AtomicU64Std = AtomicU64Std::new(1);
use std::sync::atomic::AtomicU64 as AtomicU64Std;

impl Task {
    pub(crate) fn new(
        spec: &TaskSpec,
        stack_size: usize,
        rt: Option<Arc<crate::runtime::RtShared>>,
        external: bool,
    ) -> Task {
        Task {
            id: TaskId(NEXT_ID.fetch_add(1, Relaxed)),
            name: Arc::clone(&spec.name),
            kind: spec.kind,
            stack_size,
            created_ns: crate::clock::now_ns(),
            rt,
            external: external.then(|| External {
                woken: Mutex::new(false),
                cv: Condvar::new(),
            }),
            owner: AtomicUsize::new(NO_WORKER),
            reg_slot: AtomicUsize::new(usize::MAX),
            next_worker: AtomicUsize::new(NO_WORKER),
            state: AtomicU8::new(TaskState::Created as u8),
            blocked_on: AtomicPtr::new(std::ptr::null_mut()),
            poll_set: Mutex::new(Vec::new()),
            token: AtomicBool::new(false),
            acks: AtomicU32::new(0),
            ready_avg: AtomicU64::new(0),
            candidate: AtomicBool::new(false),
            local: UnsafeCell::new(Local {
                stack: None,
                ret: std::ptr::null_mut(),
                exit: None,
                panic: None,
                pending: None,
                dispatches: 0,
                ready_since: 0,
                window: Vec::new(),
                window_pos: 0,
            }),
            sp: std::cell::Cell::new(std::ptr::null_mut()),
        }
    }

    #[inline]
    pub(crate) fn state(&self) -> TaskState {
        TaskState::from_u8(self.state.load(Relaxed))
    }

    #[inline]
    pub(crate) fn set_state(&self, s: TaskState) {
        self.state.store(s as u8, Relaxed);
    }

    /// Owner-only access to the local part.
    ///
    /// # Safety
    ///
    /// The caller is the owner worker (or the task itself running on it) and does
    /// not hold another reference obtained from this function across the call.
    #[expect(
        clippy::mut_from_ref,
        reason = "owner-only access, see the module docs"
    )]
    #[inline]
    pub(crate) unsafe fn local(&self) -> &mut Local {
        // SAFETY: caller contract.
        self.local.with_mut(|p| unsafe { &mut *p })
    }
}
