//! Reading the global input on a thread of its own.
//!
//! Parsing XML costs about as much as several box firings per record; on a thread of
//! its own it overlaps with the run instead of sitting on the path of the worker that
//! admits input. Records travel in batches over a bounded channel, so the reader runs
//! at most `CHANNEL_BATCHES * batch` records ahead (memory stays bounded, and an input
//! limit still decides when records *enter* the network). Interactive input (a pipe or
//! terminal) goes one record per batch, so nothing waits for a batch to fill.
//!
//! Errors keep their meaning: a malformed record is reported (by the reader, in input
//! order) and skipped; a fatal input error reaches the engine after every record read
//! before it, as the engine's next `next_record` result.

use snet_core::{Record, RecordSource, RunError};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

/// Batches the channel holds before the reader waits.
const CHANNEL_BATCHES: usize = 16;

enum Msg {
    Batch(Vec<Record>),
    Fatal(RunError),
}

/// Something that can count the records it discarded (the `--stats` line).
pub(crate) trait CountsDiscarded {
    /// Records reported and skipped so far.
    fn discarded(&self) -> u64;
}

/// A [`RecordSource`] fed by a reader thread.
pub(crate) struct Prefetch {
    rx: Receiver<Msg>,
    cur: std::vec::IntoIter<Record>,
    discarded: Arc<AtomicU64>,
    fatal: bool,
}

impl Prefetch {
    /// Starts reading `src` on a new thread, `batch` records at a time.
    pub(crate) fn start<S>(mut src: S, batch: usize) -> std::io::Result<Prefetch>
    where
        S: RecordSource + CountsDiscarded + 'static,
    {
        let batch = batch.max(1);
        let (tx, rx) = sync_channel(CHANNEL_BATCHES);
        let discarded = Arc::new(AtomicU64::new(0));
        let seen = discarded.clone();
        std::thread::Builder::new()
            .name("snet-input".into())
            .spawn(move || {
                let mut buf = Vec::with_capacity(batch);
                loop {
                    let r = src.next_record();
                    seen.store(src.discarded(), Ordering::Relaxed);
                    match r {
                        Ok(Some(rec)) => {
                            buf.push(rec);
                            if buf.len() < batch {
                                continue;
                            }
                            let full = std::mem::replace(&mut buf, Vec::with_capacity(batch));
                            if tx.send(Msg::Batch(full)).is_err() {
                                return; // the run is over
                            }
                        }
                        Ok(None) => {
                            if !buf.is_empty() {
                                let _ = tx.send(Msg::Batch(buf));
                            }
                            return; // dropping `tx` ends the input
                        }
                        Err(e) => {
                            if !buf.is_empty() && tx.send(Msg::Batch(buf)).is_err() {
                                return;
                            }
                            let _ = tx.send(Msg::Fatal(e));
                            return;
                        }
                    }
                }
            })?;
        Ok(Prefetch {
            rx,
            cur: Vec::new().into_iter(),
            discarded,
            fatal: false,
        })
    }
}

impl CountsDiscarded for Prefetch {
    fn discarded(&self) -> u64 {
        self.discarded.load(Ordering::Relaxed)
    }
}

impl RecordSource for Prefetch {
    fn next_record(&mut self) -> Result<Option<Record>, RunError> {
        loop {
            if let Some(rec) = self.cur.next() {
                return Ok(Some(rec));
            }
            if self.fatal {
                return Ok(None);
            }
            match self.rx.recv() {
                Ok(Msg::Batch(b)) => self.cur = b.into_iter(),
                Ok(Msg::Fatal(e)) => {
                    self.fatal = true;
                    return Err(e);
                }
                // The reader ended the input (or died: it reports its own panic).
                Err(_) => return Ok(None),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Scripted(Vec<Result<Option<Record>, RunError>>, u64);

    impl RecordSource for Scripted {
        fn next_record(&mut self) -> Result<Option<Record>, RunError> {
            if self.0.is_empty() {
                return Ok(None);
            }
            self.1 += 1;
            self.0.remove(0)
        }
    }

    impl CountsDiscarded for Scripted {
        fn discarded(&self) -> u64 {
            self.1
        }
    }

    fn rec(i: i32) -> Record {
        Record::new().with_tag("i", i)
    }

    #[test]
    fn records_in_order_then_end_for_every_batch_size() {
        for batch in [1, 3, 256] {
            let script = (0..1000).map(|i| Ok(Some(rec(i)))).collect();
            let mut p = Prefetch::start(Scripted(script, 0), batch).unwrap();
            for i in 0..1000 {
                let r = p.next_record().unwrap().unwrap();
                assert_eq!(r.tag(snet_core::Label::tag("i")), Some(i), "batch {batch}");
            }
            assert!(p.next_record().unwrap().is_none());
            assert!(p.next_record().unwrap().is_none(), "the end stays the end");
        }
    }

    #[test]
    fn a_fatal_error_comes_after_the_records_read_before_it() {
        let script = vec![
            Ok(Some(rec(1))),
            Ok(Some(rec(2))),
            Err(RunError::new("global input", None, "broken")),
            Ok(Some(rec(3))),
        ];
        let mut p = Prefetch::start(Scripted(script, 0), 256).unwrap();
        assert!(p.next_record().unwrap().is_some());
        assert!(p.next_record().unwrap().is_some());
        let e = p.next_record().unwrap_err();
        assert!(e.to_string().contains("broken"));
        assert!(
            p.next_record().unwrap().is_none(),
            "nothing after a fatal error"
        );
    }
}
