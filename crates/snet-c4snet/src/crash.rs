//! Naming the box that crashed (unsafe leaf module).
//!
//! [`install_crash_handler`] installs a handler for SIGSEGV, SIGBUS, SIGFPE, SIGILL and
//! SIGABRT. When one arrives while a C box runs on the signalled thread, the handler
//! writes `snet: box `NAME` crashed: SIGSEGV (invalid memory access)` to standard error,
//! followed by the record the box was given (long values cut) and the C prototype snet
//! calls it through, once however many threads crash, and lets the signal kill the process (default action, so the exit status says which
//! signal). Outside box code it restores the handler that was installed before (for
//! example Rust's stack-overflow reporter) and re-raises, changing nothing.
//!
//! Invariants: the handler only calls async-signal-safe functions (`write`,
//! `sigaction`, `raise`, and the flush function of [`set_crash_flush`], whose contract
//! requires the same), formats with `core::fmt` into a stack buffer (no allocation,
//! no lock) and reads the thread-local current invocation, which is a
//! `const`-initialised raw pointer (see `abi`, invariant 4). The previous actions are
//! written once, before the handler is installed, and only read afterwards.

use crate::abi::Slot;
use crate::wrapgen::SlotKind;
use snet_core::{CType, Value};
use std::ffi::c_int;
use std::fmt::{self, Write as _};
use std::io;
use std::sync::atomic::{AtomicI64, Ordering};
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

/// A fixed buffer that `core::fmt` writes into without allocating (the crash handler
/// must not allocate); text beyond its size is cut.
struct StackText {
    buf: [u8; 1024],
    len: usize,
}

impl StackText {
    fn new() -> StackText {
        StackText {
            buf: [0; 1024],
            len: 0,
        }
    }
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
    fn push(&mut self, b: &[u8]) {
        let n = b.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
    }
}

impl fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

/// Element bytes of a value shown in a crash message; the rest is counted.
const SHOWN_BYTES: usize = 64;

/// Writes `v` for a crash message: `(int)7`, `(int[3])1,2,3`, a character array as a
/// quoted string, cut after [`SHOWN_BYTES`] bytes of elements with the full length.
/// Formatting numbers with `core::fmt` allocates nothing.
fn write_value(w: &mut StackText, v: &Value) {
    let t = v.ctype();
    let _ = write!(w, "({}", t.name());
    if !v.is_scalar() {
        let _ = write!(w, "[{}]", v.len());
    }
    w.push(b")");
    let bytes = v.bytes();
    let size = t.size().max(1);
    let shown = (SHOWN_BYTES / size).max(1).min(v.len());
    if matches!(t, CType::Char | CType::UChar) && !v.is_scalar() {
        w.push(b"\"");
        for &b in &bytes[..shown.min(bytes.len())] {
            match b {
                b'"' => w.push(b"\\\""),
                b'\\' => w.push(b"\\\\"),
                b'\n' => w.push(b"\\n"),
                0x20..=0x7e => w.push(&[b]),
                _ => {
                    let _ = write!(w, "\\x{b:02x}");
                }
            }
        }
        w.push(b"\"");
    } else {
        for (i, e) in bytes.chunks_exact(size).take(shown).enumerate() {
            if i > 0 {
                w.push(b",");
            }
            write_element(w, t, e);
        }
    }
    if shown < v.len() {
        let _ = write!(w, "... ({} elements, {} bytes)", v.len(), v.byte_len());
    }
}

fn write_element(w: &mut StackText, t: CType, e: &[u8]) {
    fn arr<const N: usize>(e: &[u8]) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&e[..N]);
        a
    }
    let _ = match t {
        CType::UChar => write!(w, "{}", e[0]),
        CType::Char => write!(w, "{}", e[0] as i8),
        CType::UShort => write!(w, "{}", u16::from_ne_bytes(arr(e))),
        CType::Short => write!(w, "{}", i16::from_ne_bytes(arr(e))),
        CType::UInt => write!(w, "{}", u32::from_ne_bytes(arr(e))),
        CType::Int => write!(w, "{}", i32::from_ne_bytes(arr(e))),
        CType::ULong if e.len() >= 8 => write!(w, "{}", u64::from_ne_bytes(arr(e))),
        CType::Long if e.len() >= 8 => write!(w, "{}", i64::from_ne_bytes(arr(e))),
        CType::Float => write!(w, "{}", f32::from_ne_bytes(arr(e))),
        CType::Double => write!(w, "{}", f64::from_ne_bytes(arr(e))),
        CType::Pointer if e.len() >= 8 => write!(w, "{:#x}", u64::from_ne_bytes(arr(e))),
        // `long double` (and 4-byte longs): the raw bytes.
        _ => {
            w.push(b"0x");
            for b in e.iter().rev() {
                let _ = write!(w, "{b:02x}");
            }
            Ok(())
        }
    };
}

/// Writes the record a box was given: `{A=(int)7, <t>=1}`.
fn write_record(w: &mut StackText, labels: &[Box<str>], kinds: &[SlotKind], given: &[Slot]) {
    w.push(b"{");
    for (i, ((l, k), a)) in labels.iter().zip(kinds).zip(given).enumerate() {
        if i > 0 {
            w.push(b", ");
        }
        w.push(l.as_bytes());
        w.push(b"=");
        match k {
            SlotKind::Tag => {
                // SAFETY: a tag slot holds a tag.
                let _ = write!(w, "{}", unsafe { a.tag });
            }
            SlotKind::Field => {
                // SAFETY: a field slot holds a reference the call keeps (see
                // `abi::invoke`) or null.
                let p = unsafe { a.field };
                if p.is_null() {
                    w.push(b"NULL");
                } else {
                    // SAFETY: the reference is alive for the whole call.
                    unsafe { Value::with_raw(p, |v| write_value(w, v)) };
                }
            }
        }
    }
    w.push(b"}");
}

/// The thread (`gettid`) that is reporting a crash, 0 before any crash: a crash
/// message is written once, whichever threads crash.
static REPORTING: AtomicI64 = AtomicI64::new(0);

fn gettid() -> i64 {
    // SAFETY: the gettid system call has no arguments and is async-signal-safe.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

extern "C" fn on_fatal_signal(sig: c_int, _info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    let index = SIGNALS.iter().position(|&s| s == sig);
    if let Some(cur) = crate::abi::current_box() {
        let me = gettid();
        match REPORTING.compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => {}
            // The report itself faulted (the record held garbage): end now.
            Err(t) if t == me => die_by_default(sig),
            // Another thread reports a crash and will end the process: wait for it.
            Err(_) => loop {
                // SAFETY: pause(2) is async-signal-safe; it returns only when a handler
                // ran, and we wait again.
                unsafe { libc::pause() };
            },
        }
        // The process's node (MPI), else the node of the box's library (`local:N`).
        let node: &[u8] = NODE
            .get()
            .map(|n| n.as_slice())
            .or_else(|| cur.info.node.get().map(|n| &n[..]))
            .unwrap_or(&[]);
        write_stderr(&[
            b"snet: ",
            node,
            b"box `",
            cur.name,
            b"` crashed: ",
            describe(sig),
            b"\n",
        ]);
        if cur.checking_values {
            write_stderr(&[
                b"snet: it crashed in C4SNetOut, reading the values it emitted: \
                fewer values than the output variant has labels, or one that is not a \
                c4snet_data_t (spec \xc2\xa712.4)\n",
            ]);
        }
        if let Some(why) = cur.failure {
            write_stderr(&[
                b"snet: before it crashed, the box made this error: ",
                why,
                b"\n",
            ]);
        }
        let mut rec = StackText::new();
        write_record(&mut rec, &cur.info.labels, cur.kinds, cur.given);
        write_stderr(&[
            b"  record given: ",
            rec.bytes(),
            b"\n  C prototype expected: ",
            cur.info.prototype.as_bytes(),
            b"\n",
        ]);
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

/// Exit hook: a C box that calls `exit()` ends the process from inside a box call.
/// Say so, write the buffered output, and end the process with the box's status, or 1
/// if that was 0 (the run did not finish; where the C library does not tell the status,
/// always 1). After a normal end no box is running and nothing happens (the CLI has
/// written everything already).
fn box_called_exit(status: c_int) {
    let Some(cur) = crate::abi::current_box() else {
        return;
    };
    let node: &[u8] = NODE
        .get()
        .map(|n| n.as_slice())
        .or_else(|| cur.info.node.get().map(|n| &n[..]))
        .unwrap_or(&[]);
    let mut rec = StackText::new();
    write_record(&mut rec, &cur.info.labels, cur.kinds, cur.given);
    write_stderr(&[
        b"snet: ",
        node,
        b"box `",
        cur.name,
        b"` called exit(): the run ends here, unfinished (records not yet output are \
          lost)\n  record given: ",
        rec.bytes(),
        b"\n",
    ]);
    flush();
    // SAFETY: _exit(2) ends the process at once, without running the remaining exit
    // handlers (calling exit() again from one is undefined).
    unsafe { libc::_exit(if status == 0 { 1 } else { status }) };
}

#[cfg(target_env = "gnu")]
extern "C" {
    /// glibc's `on_exit(3)`: like `atexit`, with the status given to `exit`.
    fn on_exit(f: extern "C" fn(c_int, *mut libc::c_void), arg: *mut libc::c_void) -> c_int;
}

#[cfg(target_env = "gnu")]
extern "C" fn exit_hook(status: c_int, _arg: *mut libc::c_void) {
    box_called_exit(status);
}

#[cfg(target_env = "gnu")]
fn register_exit_hook() -> bool {
    // SAFETY: registering a plain `extern "C"` function that only writes to file
    // descriptors (see `box_called_exit`); the argument is unused.
    unsafe { on_exit(exit_hook, std::ptr::null_mut()) == 0 }
}

#[cfg(not(target_env = "gnu"))]
extern "C" fn exit_hook() {
    box_called_exit(0);
}

#[cfg(not(target_env = "gnu"))]
fn register_exit_hook() -> bool {
    // SAFETY: registering a plain `extern "C" fn()` that only writes to file
    // descriptors (see `box_called_exit`).
    unsafe { libc::atexit(exit_hook) == 0 }
}

/// Installs the crash handler (idempotent). The CLI calls this once at start-up, before
/// running any box; a crashing C box then names itself on standard error, and so does
/// a box that calls `exit()` (an exit hook, which ends the process with the box's status, 1 for 0); both then run the function of
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
        if !register_exit_hook() {
            return Err(0);
        }
        Ok(())
    });
    r.map_err(io::Error::from_raw_os_error)
}
