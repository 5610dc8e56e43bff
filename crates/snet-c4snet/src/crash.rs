//! Naming the box that crashed (unsafe leaf module).
//!
//! [`install_crash_handler`] installs a handler for SIGSEGV, SIGBUS, SIGFPE, SIGILL and
//! SIGABRT. When one arrives while a C box runs on the signalled thread, the handler
//! writes `snet: box `NAME` crashed: SIGSEGV (invalid memory access)` to standard error
//! and lets the signal kill the process (default action, so the exit status says which
//! signal). Outside box code it restores the handler that was installed before (for
//! example Rust's stack-overflow reporter) and re-raises, changing nothing.
//!
//! Invariants: the handler only calls async-signal-safe functions (`write`,
//! `sigaction`, `raise`, and the flush function of [`set_crash_flush`], whose contract
//! requires the same) and reads the thread-local current invocation, which is a
//! `const`-initialised raw pointer (see `abi`, invariant 4). The previous actions are
//! written once, before the handler is installed, and only read afterwards.

use std::ffi::c_int;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

const SIGNALS: [c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGABRT,
];

/// The actions installed before ours, by index in [`SIGNALS`].
struct Previous([libc::sigaction; SIGNALS.len()]);

// SAFETY: plain data (function pointers and masks) written once before it is shared.
unsafe impl Sync for Previous {}
// SAFETY: as above.
unsafe impl Send for Previous {}

static PREVIOUS: OnceLock<Previous> = OnceLock::new();

/// The function [`set_crash_flush`] registered (0: none), as an address.
static FLUSH: AtomicUsize = AtomicUsize::new(0);

/// Registers `f` to run when a C box crashes, after the crash message and before the
/// signal kills the process: the CLI writes the output records buffered so far with
/// it. `f` runs inside a signal handler and must only do async-signal-safe work (no
/// allocation, no blocking lock).
pub fn set_crash_flush(f: fn()) {
    FLUSH.store(f as usize, Ordering::Release);
}

fn describe(sig: c_int) -> &'static [u8] {
    match sig {
        libc::SIGSEGV => b"SIGSEGV (invalid memory access)",
        libc::SIGBUS => b"SIGBUS (bus error)",
        libc::SIGFPE => b"SIGFPE (arithmetic error, e.g. integer division by zero)",
        libc::SIGILL => b"SIGILL (illegal instruction)",
        libc::SIGABRT => b"SIGABRT (abort)",
        _ => b"a fatal signal",
    }
}

fn write_stderr(parts: &[&[u8]]) {
    for p in parts {
        let mut rest = *p;
        while !rest.is_empty() {
            // SAFETY: write(2) is async-signal-safe; `rest` is a valid buffer.
            let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
            if n <= 0 {
                return;
            }
            rest = &rest[n as usize..];
        }
    }
}

extern "C" fn on_fatal_signal(sig: c_int, _info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    let index = SIGNALS.iter().position(|&s| s == sig);
    if let Some(name) = crate::abi::current_box_name() {
        write_stderr(&[b"snet: box `", name, b"` crashed: ", describe(sig), b"\n"]);
        let f = FLUSH.load(Ordering::Acquire);
        if f != 0 {
            // SAFETY: a non-zero FLUSH is the address of a `fn()` stored by
            // `set_crash_flush`, whose contract makes it callable here.
            let f: fn() = unsafe { std::mem::transmute::<usize, fn()>(f) };
            f();
        }
        // SAFETY: an all-zero sigaction with SIG_DFL is the default action.
        let mut dfl: libc::sigaction = unsafe { std::mem::zeroed() };
        dfl.sa_sigaction = libc::SIG_DFL;
        // SAFETY: sigaction and raise are async-signal-safe.
        unsafe {
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
            libc::raise(sig);
        }
        return;
    }
    // Not in box code: hand the signal to whoever handled it before us.
    if let (Some(prev), Some(i)) = (PREVIOUS.get(), index) {
        // SAFETY: restoring a previously valid action and re-raising (the signal is not
        // blocked: we install with SA_NODEFER) is async-signal-safe.
        unsafe {
            libc::sigaction(sig, &prev.0[i], std::ptr::null_mut());
            libc::raise(sig);
        }
    }
}

/// Signals that end the process from outside (`timeout`, `kill`, Ctrl-C, a closed
/// terminal): the output buffered so far is written before they take effect.
const TERMINATION_SIGNALS: [c_int; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

extern "C" fn on_termination_signal(
    sig: c_int,
    _info: *mut libc::siginfo_t,
    _ctx: *mut libc::c_void,
) {
    let f = FLUSH.load(Ordering::Acquire);
    if f != 0 {
        // SAFETY: as in `on_fatal_signal`.
        let f: fn() = unsafe { std::mem::transmute::<usize, fn()>(f) };
        f();
    }
    // SAFETY: restoring the default action (we only replaced a default one) and
    // re-raising are async-signal-safe; the signal then ends the process as it would
    // have without us.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
        libc::raise(sig);
    }
}

/// `atexit` hook: a C box that calls `exit()` ends the process from inside a box
/// call. Say so, and write the buffered output (the flush function finds nothing to
/// write after a normal end, when the CLI has written everything already).
extern "C" fn on_exit() {
    if let Some(name) = crate::abi::current_box_name() {
        write_stderr(&[
            b"snet: box `",
            name,
            b"` called exit(): the run ends here (records not yet output are lost)\n",
        ]);
    }
    let f = FLUSH.load(Ordering::Acquire);
    if f != 0 {
        // SAFETY: as in `on_fatal_signal`.
        let f: fn() = unsafe { std::mem::transmute::<usize, fn()>(f) };
        f();
    }
}

/// Installs the crash handler (idempotent). The CLI calls this once at start-up, before
/// running any box; a crashing C box then names itself on standard error, and so does
/// a box that calls `exit()` (an `atexit` hook); both then run the function of
/// [`set_crash_flush`], as do SIGTERM, SIGINT and SIGHUP (where their action was the
/// default) before they end the process.
pub fn install_crash_handler() -> io::Result<()> {
    static RESULT: OnceLock<Result<(), i32>> = OnceLock::new();
    let r = RESULT.get_or_init(|| {
        // SAFETY: all-zero sigactions are valid out-values.
        let mut prev: [libc::sigaction; SIGNALS.len()] = unsafe { std::mem::zeroed() };
        for (i, &sig) in SIGNALS.iter().enumerate() {
            // SAFETY: querying the current action into a valid out-pointer.
            if unsafe { libc::sigaction(sig, std::ptr::null(), &mut prev[i]) } != 0 {
                return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
            }
        }
        let _ = PREVIOUS.set(Previous(prev));
        for &sig in &SIGNALS {
            // SAFETY: a zeroed sigaction plus handler, flags and an empty mask is valid.
            let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
            act.sa_sigaction = on_fatal_signal
                as extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as usize;
            // SA_ONSTACK: run on the thread's alternate stack (Rust sets one up for its
            // threads) so that a box overflowing its stack is still reported.
            act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
            // SAFETY: `act.sa_mask` is a valid sigset to clear; installing a handler
            // that only performs async-signal-safe work.
            unsafe {
                libc::sigemptyset(&mut act.sa_mask);
                if libc::sigaction(sig, &act, std::ptr::null_mut()) != 0 {
                    return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
                }
            }
        }
        for &sig in &TERMINATION_SIGNALS {
            // SAFETY: all-zero sigactions are valid; querying, then replacing only a
            // default action (an ignored SIGHUP under `nohup` stays ignored) with a
            // handler that does async-signal-safe work.
            unsafe {
                let mut cur: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut cur) != 0
                    || cur.sa_sigaction != libc::SIG_DFL
                {
                    continue;
                }
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_termination_signal
                    as extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void)
                    as usize;
                act.sa_flags = libc::SA_SIGINFO;
                libc::sigemptyset(&mut act.sa_mask);
                libc::sigaction(sig, &act, std::ptr::null_mut());
            }
        }
        // SAFETY: registering a plain `extern "C" fn()` that only writes to file
        // descriptors (see `on_exit`).
        if unsafe { libc::atexit(on_exit) } != 0 {
            return Err(0);
        }
        Ok(())
    });
    r.map_err(io::Error::from_raw_os_error)
}
