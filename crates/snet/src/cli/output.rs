//! Where `snet run` writes its output records: a buffer in front of the output file
//! that a crashing C box cannot take with it.
//!
//! Spec §11.3 says output is flushed after each record. Writing each record with its
//! own system call costs ≈ 1.5 µs a record, so outputs that nobody reads while the
//! program runs (regular files, `/dev/null`) are written in 64 KiB blocks, and
//! streams (pipes, sockets, terminals) after each record. What a block buffer must
//! not do is lose records when the process dies: if a C box crashes (SIGSEGV and the
//! like) or calls `exit()`, or the process is told to end (SIGTERM, SIGINT, SIGHUP),
//! the handlers of `snet_c4snet` call [`emergency_flush`] before the process ends, and
//! the records written so far reach the file. (SIGKILL cannot be caught.)
//!
//! The buffer is a [`Mutex`]; the crash handler only `try_lock`s it (an atomic
//! compare-and-swap, no allocation) and writes with one `write(2)` per chunk, so it
//! stays within what a signal handler may do. If the lock is held at that moment (the
//! crash happened while another thread was appending a record), the block is not
//! written: the handler must not wait.

use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Bytes buffered before a block is written.
const BLOCK: usize = 64 * 1024;

/// The state shared by the writer and the crash handler (leaked: it lives as long as
/// the process, so the handler's pointer never dangles).
struct Shared {
    file: Target,
    /// Write after every record (the output is a stream someone reads as it comes).
    stream: bool,
    buf: Mutex<Vec<u8>>,
}

impl Shared {
    /// Writes `buf` (the locked buffer) to the file and empties it.
    fn write_out(&self, buf: &mut Vec<u8>) -> io::Result<()> {
        let r = self.file.write_all(buf);
        buf.clear();
        r
    }
}

/// The file or socket behind an [`Output`].
pub(crate) enum Target {
    /// A file, pipe, terminal or device.
    File(File),
    /// A TCP connection (`-O HOST:PORT`). Written with `send(MSG_NOSIGNAL)` (what the
    /// standard library's `TcpStream` does on Linux): a peer that closes the connection
    /// gives an error with a message, not a silent death by SIGPIPE, which `snet`
    /// leaves at its default action so that `snet run ... | head` ends quietly.
    Tcp(std::net::TcpStream),
}

impl Target {
    fn write_all(&self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Target::File(f) => (&*f).write_all(bytes),
            Target::Tcp(s) => (&*s).write_all(bytes),
        }
    }
}

/// The output of the current run, for [`emergency_flush`] (null: none).
static CURRENT: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());

/// The output of a run: implements [`Write`] for the record writer. A copy is a second
/// handle on the same output (to drain it after the record writer is done).
#[derive(Clone, Copy)]
pub(crate) struct Output {
    shared: &'static Shared,
}

impl Output {
    /// Output to `file`; `stream`: write each record at once (see the module docs).
    /// The crash handler flushes this output from now on.
    pub(crate) fn new(file: impl Into<Target>, stream: bool) -> Output {
        let file = file.into();
        let shared: &'static Shared = Box::leak(Box::new(Shared {
            file,
            stream,
            buf: Mutex::new(Vec::with_capacity(BLOCK)),
        }));
        CURRENT.store(std::ptr::from_ref(shared).cast_mut(), Ordering::Release);
        snet_c4snet::set_crash_flush(emergency_flush);
        Output { shared }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<u8>> {
        self.shared.buf.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes everything buffered to the file.
    pub(crate) fn drain(&self) -> io::Result<()> {
        self.shared.write_out(&mut self.lock())
    }
}

impl Write for Output {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut g = self.lock();
        g.extend_from_slice(bytes);
        if g.len() >= BLOCK {
            self.shared.write_out(&mut g)?;
        }
        Ok(bytes.len())
    }

    /// The record writer flushes after each record: a stream gets it now, a block
    /// output when its block is full (or at [`Output::drain`]).
    fn flush(&mut self) -> io::Result<()> {
        if self.shared.stream {
            self.drain()?;
        }
        Ok(())
    }
}

impl From<File> for Target {
    fn from(f: File) -> Target {
        Target::File(f)
    }
}

impl From<std::net::TcpStream> for Target {
    fn from(s: std::net::TcpStream) -> Target {
        Target::Tcp(s)
    }
}

/// Writes the buffered output of the current run, if its lock is free; called by the
/// crash handler of `snet_c4snet` on the crashing thread, inside a signal handler.
fn emergency_flush() {
    let p = CURRENT.load(Ordering::Acquire);
    // SAFETY: CURRENT is null or points to a leaked `Shared`, valid for the rest of the
    // process.
    if let Some(shared) = unsafe { p.as_ref() } {
        flush_without_waiting(shared);
    }
}

/// The body of [`emergency_flush`]: what is buffered goes to the file unless the
/// buffer is locked. The buffer is left as it is (the process is about to die).
fn flush_without_waiting(shared: &Shared) {
    if let Ok(g) = shared.buf.try_lock() {
        // `write(2)` on the raw descriptor: no allocation, no lock.
        let _ = shared.file.write_all(&g);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("snet-output-{}-{name}", std::process::id()))
    }

    #[test]
    fn block_output_reaches_the_file_only_when_drained_or_full_and_the_emergency_flush_writes_it() {
        let path = temp("block");
        let mut out = Output::new(File::create(&path).unwrap(), false);
        out.write_all(b"<record/>\n").unwrap();
        out.flush().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"", "a block output waits");
        flush_without_waiting(out.shared);
        assert_eq!(std::fs::read(&path).unwrap(), b"<record/>\n");
        out.lock().clear(); // (the emergency flush leaves the buffer as it was)
        let big = vec![b'x'; BLOCK];
        out.write_all(&big).unwrap();
        let mut s = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut s).unwrap();
        assert_eq!(s.len(), 10 + BLOCK, "a full block is written at once");
        out.write_all(b"tail").unwrap();
        out.drain().unwrap();
        assert!(std::fs::read(&path).unwrap().ends_with(b"xtail"));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn stream_output_is_written_at_every_flush() {
        let path = temp("stream");
        let mut out = Output::new(File::create(&path).unwrap(), true);
        out.write_all(b"a").unwrap();
        out.flush().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a");
        let _ = std::fs::remove_file(&path);
    }
}
