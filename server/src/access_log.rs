//! The access log: the one line every request logs, e.g.
//!
//! ```text
//! 2026-11-29T07:50:43.788265Z  INFO toolreg_server::metrics: request method=GET path=/api/v1/tools/x route=/api/v1/tools/{name} status=200 ms=0.014
//! ```
//!
//! The line looks like every other log line (`tracing_subscriber`'s plain
//! format, target `toolreg_server::metrics`) and obeys `RUST_LOG` like
//! them. When the logs are plain text going to [`BatchedStderr`] (not a
//! terminal, which gets colours), the line is written here, by hand, into
//! the same writer: a timestamp whose date and time of day are formatted
//! once a second per thread, the fields copied, the numbers written digit
//! by digit. Built by `tracing`'s formatter instead — a visitor formatting
//! each field through `Debug`, the date and time formatted anew, the
//! duration as a shortest float — the line cost ~2–4 µs of a ~20 µs
//! cached read (`bench/README.md`). Otherwise (colours, or no batching
//! writer) the line goes through `tracing`.

use std::cell::RefCell;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::log_writer::BatchedStderr;

/// The target the line is logged under (and filtered by).
const TARGET: &str = "toolreg_server::metrics";

/// The writer of plain log lines, once [`write_directly_to`] was called.
static PLAIN: OnceLock<BatchedStderr> = OnceLock::new();

/// Write access lines straight into `writer` from now on; the caller has
/// set `tracing`'s plain (uncoloured) format on the same writer.
pub fn write_directly_to(writer: BatchedStderr) {
    let _ = PLAIN.set(writer);
}

/// A thread's line being built, and the second its lines start with.
struct Line {
    bytes: Vec<u8>,
    /// Seconds since the epoch of [`Line::prefix`].
    second: i64,
    /// That second as `YYYY-MM-DDTHH:MM:SS.`.
    prefix: String,
}

thread_local! {
    static LINE: RefCell<Line> = const {
        RefCell::new(Line { bytes: Vec::new(), second: i64::MIN, prefix: String::new() })
    };
}

/// Log one request: its method, path, matched route pattern, status and
/// how long it took.
pub fn request(method: &str, path: &str, route: &str, status: u16, took: Duration) {
    if !tracing::enabled!(target: TARGET, tracing::Level::INFO) {
        return;
    }
    let Some(writer) = PLAIN.get() else {
        let ms = took.as_secs_f64() * 1000.0;
        tracing::info!(target: TARGET, %method, %path, %route, status, ms, "request");
        return;
    };
    LINE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let Line {
            bytes: line,
            second,
            prefix,
        } = &mut *cell;
        line.clear();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let secs = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
        if secs != *second {
            *second = secs;
            *prefix = chrono::DateTime::from_timestamp(secs, 0)
                .unwrap_or_default()
                .format("%Y-%m-%dT%H:%M:%S.")
                .to_string();
        }
        line.extend_from_slice(prefix.as_bytes());
        push_padded(line, u64::from(now.subsec_micros()), 6);
        line.extend_from_slice(b"Z  INFO ");
        line.extend_from_slice(TARGET.as_bytes());
        line.extend_from_slice(b": request method=");
        line.extend_from_slice(method.as_bytes());
        line.extend_from_slice(b" path=");
        line.extend_from_slice(path.as_bytes());
        line.extend_from_slice(b" route=");
        line.extend_from_slice(route.as_bytes());
        line.extend_from_slice(b" status=");
        push_padded(line, u64::from(status), 1);
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        line.extend_from_slice(b" ms=");
        push_padded(line, micros / 1000, 1);
        line.push(b'.');
        push_padded(line, micros % 1000, 3);
        line.push(b'\n');
        writer.append(line);
    });
}

/// `n` in decimal, with leading zeros to at least `width` digits.
fn push_padded(out: &mut Vec<u8>, mut n: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    while n > 0 || digits.len() - start < width.max(1) {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&digits[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_zero_padded_to_their_width() {
        let mut out = Vec::new();
        push_padded(&mut out, 42, 6);
        push_padded(&mut out, 7, 3);
        push_padded(&mut out, 123_456, 6);
        push_padded(&mut out, 0, 3);
        push_padded(&mut out, 0, 1);
        push_padded(&mut out, 404, 1);
        push_padded(&mut out, u64::MAX, 1);
        assert_eq!(
            out,
            b"0000420071234560000404"
                .iter()
                .chain(b"18446744073709551615")
                .copied()
                .collect::<Vec<u8>>()
        );
    }
}
