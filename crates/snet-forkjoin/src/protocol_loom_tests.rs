//! Loom model of the whole `join` hand-shake (module `join`, steps 1-5) built from the
//! real deque, join counter and mailbox: the owner pushes the frame and pops after
//! `a`; a thief may steal it, run `b`, and arrive; the early one waits for the last.
//! In every interleaving `b` runs exactly once, exactly one strand continues after the
//! join, and the continuing strand sees `b`'s result.

use std::ptr::NonNull;

use loom::thread;

use crate::barrier::BarrierMode;
use crate::deque::{Steal, Worker};
use crate::latch::{Arrival, JoinCounter};
use crate::mailbox::{Mailbox, ParkSlot};
use crate::sync::{Arc, AtomicUsize, Ordering, UnsafeCell};

struct Frame {
    counter: JoinCounter,
    result_b: UnsafeCell<u32>,
    b_runs: AtomicUsize,
    park: ParkSlot,
}

#[test]
fn loom_join_handshake() {
    loom::model(|| {
        let deque = Worker::<Frame>::new(4, BarrierMode::Symmetric);
        let stealer = deque.stealer();
        let frame = Arc::new(Frame {
            counter: JoinCounter::new(),
            result_b: UnsafeCell::new(0),
            b_runs: AtomicUsize::new(0),
            park: ParkSlot::new(),
        });
        let mailbox = Arc::new(Mailbox::new());
        let fp = NonNull::from(&*frame);
        // Step 1.
        deque.push(fp).unwrap();

        let thief = {
            let (frame, mailbox) = (frame.clone(), mailbox.clone());
            thread::spawn(move || {
                let mut took = false;
                loop {
                    match stealer.steal() {
                        Steal::Success(p) => {
                            assert_eq!(p, NonNull::from(&*frame));
                            took = true;
                            break;
                        }
                        Steal::Retry => thread::yield_now(),
                        Steal::Empty => break,
                    }
                }
                if !took {
                    return false;
                }
                // Step 4 (thief side): run b, publish, arrive.
                // SAFETY: only the thief runs the continuation.
                unsafe { frame.counter.record_steal() };
                frame.b_runs.fetch_add(1, Ordering::Relaxed);
                // SAFETY: the owner reads result_b only after the join resolved.
                frame.result_b.with_mut(|p| unsafe { *p = 7 });
                // SAFETY: as above.
                let last = unsafe { frame.counter.arrive_at_join() } == Arrival::Last;
                if last {
                    // Step 5: hand the continuation back to the owner.
                    // SAFETY: the frame outlives the model body; pushed once.
                    unsafe { mailbox.push(&frame.park) };
                }
                last
            })
        };

        // Step 2: `a` runs here (nothing to model). Step 3.
        let owner_continues_inline;
        match deque.pop() {
            Some(p) => {
                assert_eq!(p, fp);
                frame.b_runs.fetch_add(1, Ordering::Relaxed);
                // SAFETY: we own the frame again; nobody else touches result_b.
                frame.result_b.with_mut(|p| unsafe { *p = 7 });
                owner_continues_inline = true;
            }
            None => {
                // Steps 4-5, owner side.
                if frame.counter.arrive_child() == Arrival::Early {
                    // Park: wait until the last finisher made the slot ready.
                    loop {
                        let head = mailbox.take_all();
                        if !head.is_null() {
                            assert!(std::ptr::eq(head, &frame.park));
                            break;
                        }
                        thread::yield_now();
                    }
                    owner_continues_inline = false;
                } else {
                    owner_continues_inline = true;
                }
            }
        }
        // After the join: b's result is visible.
        // SAFETY: the join is resolved (see above).
        assert_eq!(frame.result_b.with(|p| unsafe { *p }), 7);
        let thief_was_last = thief.join().unwrap();
        assert_eq!(
            frame.b_runs.load(Ordering::Relaxed),
            1,
            "b ran exactly once"
        );
        // Exactly one strand continued: the owner inline, or through the mailbox.
        assert_ne!(owner_continues_inline, thief_was_last);
    });
}
