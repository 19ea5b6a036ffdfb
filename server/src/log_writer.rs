//! [`BatchedStderr`]: where the server's log lines go — stderr, written in
//! batches by a thread of its own.
//!
//! Every request logs a line, so the cost of one line is paid on every
//! request. A request thread only appends its formatted line to a shared
//! buffer under a mutex (a copy of ~200 bytes, no system call, no thread
//! woken); the writer thread wakes every [`FLUSH_INTERVAL`], or as soon as
//! [`FLUSH_BYTES`] are waiting, and writes everything in one `write`.
//!
//! (A channel to a writer thread per line, as `tracing-appender`'s
//! non-blocking writer does, costs one wake-up, a spin of `sched_yield`
//! calls and one `write` per line — per request.)
//!
//! Nothing is dropped: when [`MAX_PENDING_BYTES`] are waiting (stderr is
//! slower than the server), a request thread waits for the writer instead
//! of losing its line. Lines reach stderr at most [`FLUSH_INTERVAL`] after
//! they are logged, and [`FlushGuard`] writes the rest when it is dropped
//! (at the end of `main`). A process killed with `kill -9` loses at most
//! that interval's lines.

use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Longest a line waits in the buffer.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(50);
/// Waiting bytes that wake the writer before the interval is over.
pub const FLUSH_BYTES: usize = 64 * 1024;
/// Waiting bytes at which loggers wait for the writer, by default
/// (`--log-buffer-kib`).
pub const MAX_PENDING_BYTES: usize = 4 * 1024 * 1024;
/// [`MAX_PENDING_BYTES`] in KiB, the default of `--log-buffer-kib`.
pub const DEFAULT_PENDING_KIB: u64 = (MAX_PENDING_BYTES / 1024) as u64;

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    closed: bool,
}

struct Shared {
    pending: Mutex<Pending>,
    /// Waiting bytes at which loggers wait for the writer.
    max_pending: usize,
    /// Signalled when there is enough to write, or on close.
    wake_writer: Condvar,
    /// Signalled after each write, for loggers waiting on a full buffer.
    drained: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A `MakeWriter` for `tracing_subscriber::fmt` that batches lines to stderr.
#[derive(Clone)]
pub struct BatchedStderr {
    shared: Arc<Shared>,
}

/// Writes what is left and stops the writer thread when dropped.
pub struct FlushGuard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl BatchedStderr {
    /// Start the writer thread; loggers wait once `max_pending` bytes are
    /// waiting (the buffer and the batch being written are each at most
    /// that plus one line).
    pub fn start(max_pending: usize) -> io::Result<(BatchedStderr, FlushGuard)> {
        BatchedStderr::start_bounded(io::stderr(), max_pending)
    }

    /// Start the writer thread on any output (tests use a buffer).
    pub fn start_with<W: Write + Send + 'static>(
        out: W,
    ) -> io::Result<(BatchedStderr, FlushGuard)> {
        BatchedStderr::start_bounded(out, MAX_PENDING_BYTES)
    }

    fn start_bounded<W: Write + Send + 'static>(
        mut out: W,
        max_pending: usize,
    ) -> io::Result<(BatchedStderr, FlushGuard)> {
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending::default()),
            max_pending,
            wake_writer: Condvar::new(),
            drained: Condvar::new(),
        });
        let writer_side = shared.clone();
        let thread = std::thread::Builder::new()
            .name("toolreg-log".into())
            .spawn(move || {
                let mut batch = Vec::new();
                loop {
                    let closed = {
                        let mut pending = writer_side.lock();
                        if pending.bytes.len() < FLUSH_BYTES && !pending.closed {
                            pending = writer_side
                                .wake_writer
                                .wait_timeout(pending, FLUSH_INTERVAL)
                                .map(|(guard, _)| guard)
                                .unwrap_or_else(|e| e.into_inner().0);
                        }
                        std::mem::swap(&mut pending.bytes, &mut batch);
                        pending.closed
                    };
                    writer_side.drained.notify_all();
                    if !batch.is_empty() {
                        // Nowhere to report a failed log write; go on.
                        let _ = out.write_all(&batch).and_then(|()| out.flush());
                        batch.clear();
                    }
                    if closed && writer_side.lock().bytes.is_empty() {
                        return;
                    }
                }
            })?;
        Ok((
            BatchedStderr {
                shared: shared.clone(),
            },
            FlushGuard {
                shared,
                thread: Some(thread),
            },
        ))
    }
}

impl BatchedStderr {
    /// Append `buf` (whole lines) to what the writer thread writes next.
    pub fn append(&self, buf: &[u8]) {
        let mut pending = self.shared.lock();
        while pending.bytes.len() >= self.shared.max_pending && !pending.closed {
            self.shared.wake_writer.notify_one();
            pending = self
                .shared
                .drained
                .wait(pending)
                .unwrap_or_else(|e| e.into_inner());
        }
        pending.bytes.extend_from_slice(buf);
        if pending.bytes.len() >= FLUSH_BYTES {
            self.shared.wake_writer.notify_one();
        }
    }
}

impl Write for BatchedStderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.append(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for BatchedStderr {
    type Writer = BatchedStderr;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Drop for FlushGuard {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.wake_writer.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Write` into a shared buffer.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_line_arrives_whole_and_in_order_per_thread() {
        let sink = Sink::default();
        let (writer, guard) = BatchedStderr::start_with(sink.clone()).unwrap();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let mut w = writer.clone();
                std::thread::spawn(move || {
                    for i in 0..20_000 {
                        w.write_all(
                            format!("thread {t} line {i:05} {}\n", "x".repeat(150)).as_bytes(),
                        )
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        drop(guard);
        let out = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        // 80,000 lines of ~170 bytes: more than MAX_PENDING_BYTES went
        // through, none lost or torn.
        assert_eq!(lines.len(), 80_000);
        for t in 0..4 {
            let mine: Vec<&str> = lines
                .iter()
                .copied()
                .filter(|l| l.starts_with(&format!("thread {t} ")))
                .collect();
            assert_eq!(mine.len(), 20_000);
            for (i, line) in mine.iter().enumerate() {
                assert!(
                    line.starts_with(&format!("thread {t} line {i:05} ")),
                    "{line}"
                );
                assert_eq!(line.len(), format!("thread {t} line {i:05} ").len() + 150);
            }
        }
    }

    #[test]
    fn a_line_is_written_within_the_interval_without_more_logging() {
        let sink = Sink::default();
        let (mut writer, _guard) = BatchedStderr::start_with(sink.clone()).unwrap();
        writer.write_all(b"one line\n").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while sink.0.lock().unwrap().is_empty() {
            assert!(std::time::Instant::now() < deadline, "never written");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(&*sink.0.lock().unwrap(), b"one line\n");
    }
}
