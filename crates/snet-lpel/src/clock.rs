//! Nanosecond clocks: monotonic timestamps (`CLOCK_MONOTONIC`, as seed 000's
//! monitoring uses) and the calling thread's CPU time (benchmarks on a shared machine).

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clocks used here always exist on
    // Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds of the monotonic clock.
pub fn now_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// CPU time of the calling OS thread in nanoseconds: unlike wall time it is not
/// inflated when the machine is shared (a worker measured from inside a task).
pub fn thread_cpu_ns() -> u64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}
