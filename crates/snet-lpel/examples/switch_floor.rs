//! The floor under LPEL's ring benchmark: what the coroutine switches alone cost on
//! this machine, without streams, wake-ups or task bookkeeping.
//!
//! `n` corosensei coroutines (16 KiB stacks, like the ring's tasks) are resumed
//! round robin by a loop on the thread's own stack; each one only suspends again.
//! One dispatch = resume + suspend, i.e. the worker-mediated switch that one ring
//! transaction needs (task → worker → next task), with a minimal scheduler.
//!
//! ```text
//! cargo run --release -p snet-lpel --example switch_floor [N [DISPATCHES]]
//! ```

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use snet_lpel::thread_cpu_ns;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map_or(10, |a| a.parse().expect("N"));
    let total: usize = args
        .get(1)
        .map_or(10_000_000, |a| a.parse().expect("DISPATCHES"));
    let mut cos: Vec<Coroutine<(), (), (), DefaultStack>> = (0..n)
        .map(|_| {
            let stack = DefaultStack::new(16 * 1024).expect("stack");
            Coroutine::with_stack(stack, |y: &Yielder<(), ()>, ()| loop {
                y.suspend(());
            })
        })
        .collect();
    let t0 = Instant::now();
    let c0 = thread_cpu_ns();
    let mut i = 0;
    for _ in 0..total {
        match cos[i].resume(()) {
            CoroutineResult::Yield(()) => {}
            CoroutineResult::Return(()) => unreachable!(),
        }
        i += 1;
        if i == n {
            i = 0;
        }
    }
    let wall = t0.elapsed().as_nanos() as f64 / total as f64;
    let cpu = (thread_cpu_ns() - c0) as f64 / total as f64;
    println!("{n} coroutines: {wall:.1} ns per dispatch wall, {cpu:.1} ns thread CPU");
    // Forced unwinding of the suspended coroutines happens on drop.
    drop(cos);
}
