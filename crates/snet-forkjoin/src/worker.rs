//! Worker threads, their fibers and the scheduler loop.
//!
//! Every job runs on a *fiber*: a stackful coroutine (corosensei) on a pooled stack
//! (module `stack`). A worker thread's own stack is the *scheduler space* of seed 002
//! §4.5: it only resumes fibers and handles what they yield. A fiber runs
//! [`WorkerThread::fiber_main`], which takes jobs (own deque, other deques, the
//! injector) and runs them one after another on the same stack, so a fiber is reused
//! for as long as no join has to wait.
//!
//! When a join must wait for a half that a thief is still running, the fiber *parks*:
//! it yields [`FiberYield::Parked`] to the scheduler, which discards the dead pages of
//! its stack (policy `MadvisePolicy`), records the fiber in the frame's `ParkSlot`, and
//! continues with another fiber (the spare one, or a fresh one from the pool). The
//! last finisher of the join resumes the parked fiber — itself if it is the owner,
//! otherwise through the owner's mailbox.
//!
//! # Fibers never change threads
//!
//! A parked fiber is only ever resumed by the worker that parked it. Resuming it on
//! another thread would move every value live in its frames (the caller's locals, up
//! to the job's root) to that thread, and Rust cannot require those to be `Send`:
//! an `Rc` clone, a `RefCell` borrow of a thread-local, a `MutexGuard`, or a
//! thread-local address the compiler cached across the join would all be shared
//! between threads unsoundly. See the crate docs for what this means for continuation
//! stealing.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::ptr;

use corosensei::{Coroutine, CoroutineResult, Yielder};

use crate::deque;
use crate::job::{self, AbortOnUnwind, JobHeader, JobRef};
use crate::mailbox::ParkSlot;
use crate::registry::Registry;
use crate::stack::{PooledStack, StackBounds};
use crate::sync::{Arc, Ordering};

/// What a fiber tells the scheduler when it suspends.
pub(crate) enum FiberYield {
    /// Parked at a join; `slot` will be pushed to a mailbox (or resumed by the owner
    /// right away if ready). `sp` approximates the fiber's stack pointer.
    Parked { slot: *const ParkSlot, sp: usize },
    /// Nothing to run (or a parked fiber became ready): the scheduler decides.
    Idle,
    /// Still runnable, but lets this worker's ready fibers run first (`coop::yield_now`):
    /// the scheduler resumes it once no fiber is ready.
    Yielded,
}

/// What the scheduler tells a fiber when it resumes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FiberResume {
    /// Continue.
    Run,
    /// Return from `fiber_main` (only sent to an idle fiber).
    Exit,
}

type Co = Coroutine<FiberResume, FiberYield, (), PooledStack>;
type FiberYielder = Yielder<FiberResume, FiberYield>;

/// A fiber: a coroutine running `fiber_main` on a pooled stack.
pub(crate) struct Fiber {
    co: Co,
    bounds: StackBounds,
}

thread_local! {
    static CURRENT: Cell<*const WorkerThread> = const { Cell::new(ptr::null()) };
}

/// Per-thread state of a worker. Lives on the worker's OS stack for the thread's life.
pub(crate) struct WorkerThread {
    index: usize,
    registry: Arc<Registry>,
    deque: deque::Worker<JobHeader>,
    /// Yielder of the fiber currently running on this thread.
    yielder: Cell<*const FiberYielder>,
    /// Slots taken from the mailbox and not yet resumed.
    ready: Cell<*const ParkSlot>,
    /// Fibers parked on this worker.
    parked: Cell<usize>,
    /// Runnable fibers that yielded to ready ones (module `coop`). Boxed like every
    /// fiber handle here: the scheduler moves them around as `Box<Fiber>`.
    #[expect(clippy::vec_box, reason = "fibers travel as Box<Fiber> (see `resume`)")]
    yielded: RefCell<Vec<Box<Fiber>>>,
    /// Victim of the last successful deque steal (a stolen join frame's owner).
    stolen_from: Cell<usize>,
    /// Joins publish their continuation only while the deque is shorter than this.
    publish_limit: isize,
    stacks: RefCell<Vec<PooledStack>>,
    rng: Cell<u64>,
}

impl fmt::Debug for WorkerThread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerThread")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

/// Idle rounds spent spinning before a worker goes to sleep.
const SPIN_ROUNDS: u32 = 200;

impl WorkerThread {
    /// The worker running on this thread, if any.
    #[inline]
    pub(crate) fn current() -> Option<&'static WorkerThread> {
        let p = CURRENT.with(|c| c.get());
        // SAFETY: CURRENT is set only while `run` keeps the WorkerThread alive on this
        // thread's stack, and cleared before it is dropped. Code that observes it runs
        // on this thread inside that window.
        unsafe { p.as_ref() }
    }

    #[inline]
    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// Pushes a job on this worker's deque; hands it back if the deque is full.
    ///
    /// Wakes a sleeping worker if nobody is searching ([`crate::sleep::Sleep::on_push`]:
    /// one relaxed load of a shared word when nobody sleeps; pushes are rare, as lazy
    /// publication keeps most joins off the deque). Further sleepers are woken in a
    /// chain when a searching worker finds work (`find_work`).
    #[inline]
    pub(crate) fn push(&self, job: JobRef) -> Result<(), JobRef> {
        self.deque.push(job)?;
        self.registry.sleep.on_push();
        Ok(())
    }

    /// Whether the deque already holds enough published work that a join should run
    /// its halves as plain calls (lazy publication, see `PoolBuilder::publish_limit`).
    #[inline]
    pub(crate) fn enough_published(&self) -> bool {
        self.deque.len_hint() >= self.publish_limit
    }

    /// Index of the worker whose deque the job being started was stolen from.
    #[inline]
    pub(crate) fn stolen_from(&self) -> usize {
        self.stolen_from.get()
    }

    /// Pops the most recent job of the running fiber.
    #[inline]
    pub(crate) fn pop(&self) -> Option<JobRef> {
        self.deque.pop()
    }

    /// Current bottom of the deque (scopes remember it as their base).
    #[inline]
    pub(crate) fn deque_bottom(&self) -> isize {
        self.deque.bottom()
    }

    /// Thread entry point.
    pub(crate) fn run(
        index: usize,
        registry: Arc<Registry>,
        deque: deque::Worker<JobHeader>,
        publish_limit: usize,
    ) {
        let guard = AbortOnUnwind("the scheduler loop");
        let w = WorkerThread {
            index,
            registry,
            deque,
            yielder: Cell::new(ptr::null()),
            ready: Cell::new(ptr::null()),
            parked: Cell::new(0),
            yielded: RefCell::new(Vec::new()),
            stolen_from: Cell::new(usize::MAX),
            publish_limit: publish_limit.min(isize::MAX as usize) as isize,
            stacks: RefCell::new(Vec::new()),
            rng: Cell::new(
                0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
            ),
        };
        CURRENT.with(|c| c.set(&w));
        w.scheduler_loop();
        CURRENT.with(|c| c.set(ptr::null()));
        let stacks = std::mem::take(&mut *w.stacks.borrow_mut());
        drop(stacks);
        std::mem::forget(guard);
    }

    /// The scheduler space: resume ready fibers first, else the spare fiber.
    fn scheduler_loop(&self) {
        let mut spare: Option<Box<Fiber>> = None;
        loop {
            if let Some(slot) = self.next_ready() {
                // SAFETY: the slot came from our mailbox; its frame is alive because
                // the fiber that owns it is parked (it returns only after resuming).
                let fiber = unsafe { (*slot).take_fiber() } as *mut Fiber;
                debug_assert!(!fiber.is_null());
                self.parked.set(self.parked.get() - 1);
                // SAFETY: the pointer was produced by Box::into_raw in `resume` when
                // the fiber parked, and each slot is made ready once.
                let fiber = unsafe { Box::from_raw(fiber) };
                self.resume(fiber, &mut spare);
                continue;
            }
            let yielded = self.yielded.borrow_mut().pop();
            if let Some(fiber) = yielded {
                self.resume(fiber, &mut spare);
                continue;
            }
            if self.registry.terminating()
                && self.parked.get() == 0
                && self.deque.len() == 0
                && self.registry.injector_looks_empty()
            {
                break;
            }
            let fiber = spare.take().unwrap_or_else(|| self.new_fiber());
            self.resume(fiber, &mut spare);
        }
        if let Some(f) = spare {
            self.retire(*f);
        }
    }

    fn next_ready(&self) -> Option<*const ParkSlot> {
        let mut head = self.ready.get();
        if head.is_null() {
            head = self.registry.mailboxes[self.index].take_all();
            if head.is_null() {
                return None;
            }
        }
        // SAFETY: head is a live slot from our mailbox chain.
        self.ready.set(unsafe { ParkSlot::next(head) });
        Some(head)
    }

    /// Whether a parked fiber of this worker is ready to be resumed.
    pub(crate) fn has_ready_parked(&self) -> bool {
        !self.ready.get().is_null() || !self.registry.mailboxes[self.index].looks_empty()
    }

    /// Whether the scheduler has a fiber to resume (a ready or a yielded one).
    fn has_ready(&self) -> bool {
        self.has_ready_parked() || !self.yielded.borrow().is_empty()
    }

    fn new_fiber(&self) -> Box<Fiber> {
        let stack = self.registry.stacks.acquire(&mut self.stacks.borrow_mut());
        self.registry
            .counters
            .fibers
            .fetch_add(1, Ordering::Relaxed);
        let bounds = stack.bounds();
        let me = self as *const WorkerThread as usize;
        let co = Co::with_stack(stack, move |y: &FiberYielder, _first: FiberResume| {
            // SAFETY: fibers run only on this worker's thread while it is alive (they
            // are resumed from `scheduler_loop` only).
            let w = unsafe { &*(me as *const WorkerThread) };
            w.fiber_main(y);
        });
        Box::new(Fiber { co, bounds })
    }

    fn retire(&self, mut fiber: Fiber) {
        if fiber.co.started() && !fiber.co.done() {
            match fiber.co.resume(FiberResume::Exit) {
                CoroutineResult::Return(()) => {}
                CoroutineResult::Yield(_) => unreachable!("an exiting fiber yielded"),
            }
        }
        let stack = fiber.co.into_stack();
        self.registry
            .stacks
            .release(&mut self.stacks.borrow_mut(), stack);
    }

    fn resume(&self, mut fiber: Box<Fiber>, spare: &mut Option<Box<Fiber>>) {
        match fiber.co.resume(FiberResume::Run) {
            CoroutineResult::Yield(FiberYield::Parked { slot, sp }) => {
                self.registry.counters.parks.fetch_add(1, Ordering::Relaxed);
                self.parked.set(self.parked.get() + 1);
                // The frame at `sp` stays suspended: its stack's lower pages are dead.
                self.registry.stacks.discard_below(fiber.bounds, sp);
                // SAFETY: the slot lives in the parked fiber's frame, which stays put
                // until the fiber is resumed; only this thread reads `fiber`.
                unsafe { (*slot).set_fiber(Box::into_raw(fiber) as *mut u8) };
            }
            CoroutineResult::Yield(FiberYield::Yielded) => self.yielded.borrow_mut().push(fiber),
            CoroutineResult::Yield(FiberYield::Idle) => {
                if spare.is_none() {
                    *spare = Some(fiber);
                } else {
                    self.retire(*fiber);
                }
            }
            CoroutineResult::Return(()) => self.retire(*fiber),
        }
    }

    /// Body of every fiber: run jobs until told to exit.
    fn fiber_main(&self, y: &FiberYielder) {
        self.yielder.set(y);
        loop {
            match self.find_work() {
                // SAFETY: the job was taken exactly once from a deque or the injector.
                Some(job) => unsafe { job::execute(job) },
                None => match y.suspend(FiberYield::Idle) {
                    FiberResume::Exit => return,
                    FiberResume::Run => self.yielder.set(y),
                },
            }
        }
    }

    /// Next job for an idle fiber; `None` means "yield to the scheduler" (a parked
    /// fiber is ready, or the pool terminates).
    fn find_work(&self) -> Option<JobRef> {
        if let Some(j) = self.deque.pop() {
            return Some(j);
        }
        let reg = &*self.registry;
        let mut rounds = 0u32;
        reg.sleep.start_searching();
        let found = loop {
            if self.has_ready() {
                break None;
            }
            if let Some(j) = self.steal() {
                break Some(j);
            }
            if reg.terminating() && self.parked.get() == 0 {
                break None;
            }
            rounds += 1;
            if rounds < SPIN_ROUNDS {
                for _ in 0..(1 << (rounds.min(6))) {
                    std::hint::spin_loop();
                }
            } else if rounds < SPIN_ROUNDS + 20 {
                std::thread::yield_now();
            } else {
                reg.sleep.sleep(self.index, || reg.has_work_for(self.index));
                rounds = SPIN_ROUNDS;
            }
        };
        reg.sleep.stop_searching();
        if found.is_some() && reg.sleep.should_chain_wake() {
            // Chain wake-up: we found work and nobody else is searching, so more work
            // may be waiting for a sleeper (step 4 of the sleep protocol).
            reg.sleep.wake_any();
        }
        found
    }

    fn steal(&self) -> Option<JobRef> {
        let reg = &*self.registry;
        if let Some(j) = reg.targeted[self.index].take() {
            return Some(j);
        }
        self.steal_deques().or_else(|| reg.take_injected())
    }

    /// Steals the oldest entry of another worker's deque (a fork-join job), starting
    /// at a random victim.
    pub(crate) fn steal_deques(&self) -> Option<JobRef> {
        let reg = &*self.registry;
        let n = reg.num_threads();
        if n > 1 {
            let mut x = self.rng.get();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.rng.set(x);
            if let Some((j, victim)) = reg.steal_from_others(self.index, (x % n as u64) as usize) {
                self.stolen_from.set(victim);
                return Some(j);
            }
        }
        None
    }

    /// Parks the running fiber until the join behind `slot` is resolved and the slot
    /// has been made ready (pushed to this worker's mailbox by the last finisher).
    ///
    /// The deque must only ever hold entries of the fiber that is running (a join pops
    /// back exactly what it pushed, or finds it stolen). A join parks only after an
    /// empty pop, but a scope may park with entries of enclosing joins still in the
    /// deque (when a child was spawned into it from another pool). Those entries are
    /// taken out while the fiber is parked and pushed back, in order, on resumption;
    /// thieves may take any of them before that, as usual.
    pub(crate) fn park(&self, slot: &ParkSlot) {
        let marker = 0u8;
        let sp = std::hint::black_box(&marker) as *const u8 as usize;
        self.suspend_running(FiberYield::Parked { slot, sp });
    }

    /// Suspends the running fiber until the scheduler resumes it (see `park` for what
    /// happens to the deque meanwhile).
    pub(crate) fn suspend_running(&self, why: FiberYield) {
        let mut saved = Vec::new();
        while let Some(j) = self.deque.pop() {
            saved.push(j);
        }
        let y = self.yielder.get();
        // SAFETY: `y` is the yielder of the fiber running this code (set whenever a
        // fiber gains control), and we are on that fiber.
        let r = unsafe { (*y).suspend(why) };
        if r != FiberResume::Run {
            // A parked fiber is never told to exit.
            std::process::abort();
        }
        self.yielder.set(y);
        debug_assert_eq!(self.deque.len(), 0, "resumed onto a non-empty deque");
        for j in saved.into_iter().rev() {
            if self.deque.push(j).is_err() {
                // They fitted before and the deque is empty now.
                std::process::abort();
            }
        }
    }

    /// Makes the fiber parked behind `slot` on worker `owner` ready (last finisher).
    ///
    /// # Safety
    /// `slot` must belong to a join whose owner fiber has arrived (or will arrive)
    /// early and parks on it; the caller must not touch the frame afterwards.
    pub(crate) unsafe fn make_ready(registry: &Registry, owner: usize, slot: *const ParkSlot) {
        registry
            .counters
            .remote_wakeups
            .fetch_add(1, Ordering::Relaxed);
        // SAFETY: caller contract.
        unsafe { registry.mailboxes[owner].push(slot) };
        registry.sleep.notify(owner);
    }
}
