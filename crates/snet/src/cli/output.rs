//! Where `snet run` writes its output records: a buffer in front of the output file
//! that a crashing C box cannot take with it.
//!
//! Spec §11.3 says output is flushed after each record. Writing each record with its
//! own system call costs ≈ 1.5 µs a record, so outputs that are read as they come
//! (pipes, sockets, terminals) are written after each record, and regular files and
//! `/dev/null` in 64 KiB blocks, with every complete record written at most
//! [`FLUSH_EVERY`] after it was produced ([`Output::flush_every`]: someone may follow
//! the file, and a network waiting for input must not sit on its output). What a block buffer must
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

/// How long a complete record may wait in a block buffer (see the module docs).
pub(crate) const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// The state shared by the writer and the crash handler (leaked: it lives as long as
/// the process, so the handler's pointer never dangles).
struct Shared {
    file: Target,
    /// Write after every record (the output is a stream someone reads as it comes).
    stream: bool,
    buf: Mutex<Buf>,
    /// Ends the periodic flusher, if one runs.
    stop: std::sync::atomic::AtomicBool,
}

/// Buffered output bytes; the first `complete` of them are whole records.
struct Buf {
    bytes: Vec<u8>,
    complete: usize,
}

impl Shared {
    /// Writes `buf` (the locked buffer) to the file and empties it.
    fn write_out(&self, buf: &mut Buf) -> io::Result<()> {
        let r = self.file.write_all(&buf.bytes);
        buf.bytes.clear();
        buf.complete = 0;
        r
    }

    /// Writes the complete records of `buf` (the locked buffer), keeping the rest.
    fn write_complete(&self, buf: &mut Buf) -> io::Result<()> {
        if buf.complete == 0 {
            return Ok(());
        }
        let r = self.file.write_all(&buf.bytes[..buf.complete]);
        buf.bytes.drain(..buf.complete);
        buf.complete = 0;
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
            buf: Mutex::new(Buf {
                bytes: Vec::with_capacity(BLOCK),
                complete: 0,
            }),
            stop: std::sync::atomic::AtomicBool::new(false),
        }));
        CURRENT.store(std::ptr::from_ref(shared).cast_mut(), Ordering::Release);
        snet_c4snet::set_crash_flush(emergency_flush);
        Output { shared }
    }

    fn lock(&self) -> MutexGuard<'_, Buf> {
        self.shared.buf.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes everything buffered to the file (and ends the periodic flusher).
    pub(crate) fn drain(&self) -> io::Result<()> {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.write_out(&mut self.lock())
    }

    /// For a block output: writes the complete records buffered every `every` on a
    /// thread of its own, until [`Output::drain`] (a write error is left for the
    /// record writer or the drain to meet again and report). Nothing for a stream.
    pub(crate) fn flush_every(&self, every: std::time::Duration) {
        if self.shared.stream {
            return;
        }
        let shared = self.shared;
        // If the thread cannot start, the output is only written in blocks.
        let _ = std::thread::Builder::new()
            .name("snet-output".into())
            .spawn(move || {
                while !shared.stop.load(Ordering::Relaxed) {
                    std::thread::sleep(every);
                    let mut g = shared.buf.lock().unwrap_or_else(|e| e.into_inner());
                    if shared.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let _ = shared.write_complete(&mut g);
                }
            });
    }
}

impl Write for Output {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut g = self.lock();
        g.bytes.extend_from_slice(bytes);
        if g.bytes.len() >= BLOCK {
            self.shared.write_out(&mut g)?;
        }
        Ok(bytes.len())
    }

    /// The record writer flushes after each record: a stream gets it now; a block
    /// output when its block is full, at [`Output::drain`], or when the periodic
    /// flusher comes by (the record is complete from now on).
    fn flush(&mut self) -> io::Result<()> {
        let mut g = self.lock();
        if self.shared.stream {
            self.shared.write_out(&mut g)?;
        } else {
            g.complete = g.bytes.len();
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
        let _ = shared.file.write_all(&g.bytes);
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
        out.lock().bytes.clear(); // (the emergency flush leaves the buffer as it was)
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

    #[test]
    fn block_output_writes_complete_records_periodically_and_keeps_a_partial_one() {
        let path = temp("periodic");
        let mut out = Output::new(File::create(&path).unwrap(), false);
        out.write_all(b"<record/>\n").unwrap();
        out.flush().unwrap();
        out.write_all(b"<rec").unwrap(); // a record being written
        out.flush_every(std::time::Duration::from_millis(5));
        let start = std::time::Instant::now();
        while std::fs::read(&path).unwrap().is_empty() {
            assert!(
                start.elapsed().as_secs() < 10,
                "the complete record was not written"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"<record/>\n",
            "only whole records"
        );
        out.write_all(b"ord/>\n").unwrap();
        out.drain().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"<record/>\n<record/>\n");
        let _ = std::fs::remove_file(&path);
    }
}
