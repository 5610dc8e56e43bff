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

/// The function registered by [`set_crash_flush`] (reading it is one atomic load, as a
/// signal handler may do).
static FLUSH: OnceLock<fn()> = OnceLock::new();

/// `"node N: "` in a distributed run, written before the crash message (set once).
static NODE: OnceLock<Vec<u8>> = OnceLock::new();

/// Names this process's node in crash messages (a distributed run: spec §16.6, a
/// fault names the node).
pub fn set_crash_node(node: u32) {
    let _ = NODE.set(format!("node {node}: ").into_bytes());
}

/// Registers `f` to run when a C box crashes, after the crash message and before the
/// signal kills the process: the CLI writes the output records buffered so far with
/// it. `f` runs inside a signal handler and must only do async-signal-safe work (no
/// allocation, no blocking lock). The first registration stays.
pub fn set_crash_flush(f: fn()) {
    let _ = FLUSH.set(f);
}

/// Runs the function of [`set_crash_flush`], if any.
fn flush() {
    if let Some(f) = FLUSH.get() {
        f();
    }
}

/// Ends the process by `sig` with its default action, as if we had never handled it.
fn die_by_default(sig: c_int) {
    // SAFETY: an all-zero sigaction with SIG_DFL is the default action; sigaction and
    // raise are async-signal-safe.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
        libc::raise(sig);
    }
}

/// A signal handler taking `siginfo`.
type Handler = extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void);

/// Installs `handler` for `sig` with `flags` (plus `SA_SIGINFO`) and an empty mask.
fn install(sig: c_int, handler: Handler, flags: c_int) -> Result<(), i32> {
    // SAFETY: a zeroed sigaction plus handler, flags and an empty mask is valid; the
    // handlers installed here only perform async-signal-safe work.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = handler as usize;
        act.sa_flags = libc::SA_SIGINFO | flags;
        libc::sigemptyset(&mut act.sa_mask);
        if libc::sigaction(sig, &act, std::ptr::null_mut()) != 0 {
            return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
    }
    Ok(())
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
    if let Some((name, failure)) = crate::abi::current_box() {
        let node: &[u8] = NODE.get().map_or(&[], |n| n.as_slice());
        write_stderr(&[
            b"snet: ",
            node,
            b"box `",
            name,
            b"` crashed: ",
            describe(sig),
            b"\n",
        ]);
        if let Some(why) = failure {
            write_stderr(&[
                b"snet: before it crashed, the box made this error: ",
                why,
                b"\n",
            ]);
        }
        flush();
        die_by_default(sig);
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
    flush();
    // We only replaced a default action: the signal now does what it would have done.
    die_by_default(sig);
}

/// `atexit` hook: a C box that calls `exit()` ends the process from inside a box
/// call. Say so, and write the buffered output (the flush function finds nothing to
/// write after a normal end, when the CLI has written everything already).
extern "C" fn on_exit() {
    if let Some((name, _)) = crate::abi::current_box() {
        write_stderr(&[
            b"snet: box `",
            name,
            b"` called exit(): the run ends here (records not yet output are lost)\n",
        ]);
    }
    flush();
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
            // SA_ONSTACK: run on the thread's alternate stack (Rust sets one up for its
            // threads) so that a box overflowing its stack is still reported.
            install(sig, on_fatal_signal, libc::SA_ONSTACK | libc::SA_NODEFER)?;
        }
        for &sig in &TERMINATION_SIGNALS {
            // Only a default action is replaced (an ignored SIGHUP under `nohup` stays
            // ignored).
            // SAFETY: an all-zero sigaction is a valid out-value for the query.
            let mut cur: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: querying the current action into a valid out-pointer.
            let queried = unsafe { libc::sigaction(sig, std::ptr::null(), &mut cur) } == 0;
            if queried && cur.sa_sigaction == libc::SIG_DFL {
                install(sig, on_termination_signal, 0)?;
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
