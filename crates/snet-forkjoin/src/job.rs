//! Type-erased jobs: what deques, mailboxes and the injector carry.
//!
//! A job is any `#[repr(C)]` struct whose first field is a [`JobHeader`]; a [`JobRef`]
//! points at that header. Stack jobs (join frames, install jobs) live on the stack of
//! the code that waits for them; heap jobs (scope spawns, detached jobs) are boxed and
//! free themselves when run.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;

/// First field of every job: how to run it.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct JobHeader {
    execute: unsafe fn(NonNull<JobHeader>),
}

impl JobHeader {
    /// A header that runs `execute` on the job.
    #[inline]
    pub(crate) const fn new(execute: unsafe fn(NonNull<JobHeader>)) -> Self {
        Self { execute }
    }
}

/// Pointer to a job's header.
pub(crate) type JobRef = NonNull<JobHeader>;

/// Runs a job.
///
/// # Safety
/// `job` must be a live job that has been taken exactly once (popped, stolen or taken
/// from the injector) and not run before.
#[inline]
pub(crate) unsafe fn execute(job: JobRef) {
    // SAFETY: caller contract; the header is the first field and was initialised
    // before the job was published.
    unsafe { (job.as_ref().execute)(job) }
}

/// A `JobRef` that may cross threads (every job type is `Send` by construction).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SendJob(pub(crate) JobRef);

// SAFETY: jobs are only created from Send closures (see HeapJob/StackJob bounds).
unsafe impl Send for SendJob {}

/// A panic payload, as `std::thread::Result` carries it.
pub type Panic = Box<dyn Any + Send + 'static>;

/// A boxed closure job that frees itself when run.
#[repr(C)]
pub(crate) struct HeapJob<F> {
    header: JobHeader,
    f: F,
}

impl<F: FnOnce() + Send> HeapJob<F> {
    /// Boxes `f` and leaks it as a job; running the job frees it.
    pub(crate) fn into_job_ref(f: F) -> JobRef {
        let b = Box::new(Self {
            header: JobHeader::new(Self::run),
            f,
        });
        // Box::into_raw is non-null; the header is the first field (repr(C)).
        NonNull::from(Box::leak(b)).cast()
    }

    unsafe fn run(job: JobRef) {
        // SAFETY: `job` came from `into_job_ref` for this F and is run once.
        let b = unsafe { Box::from_raw(job.cast::<Self>().as_ptr()) };
        (b.f)();
    }
}

/// Runs `f`, catching a panic.
#[inline]
pub(crate) fn catch<R>(f: impl FnOnce() -> R) -> Result<R, Panic> {
    panic::catch_unwind(AssertUnwindSafe(f))
}

/// Aborts the process if dropped while armed: guards runtime code that must not unwind.
#[derive(Debug)]
pub(crate) struct AbortOnUnwind(pub(crate) &'static str);

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        eprintln!("snet-forkjoin: fatal: unwinding through {}", self.0);
        std::process::abort();
    }
}
