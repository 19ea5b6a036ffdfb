//! Reading MCP's stdio framing: one JSON-RPC message per line. A line is
//! read up to a size cap; a longer one is skipped to its end, never held
//! in memory whole, and reported as too long.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The largest message the proxy reads, either way: 16 MiB (a `tools/list`
/// of 10,000 ordinary tools is a few MiB).
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// One read from a stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A line, without its line ending.
    Line(Vec<u8>),
    /// A line longer than the cap (skipped; its length so far).
    TooLong(usize),
    /// The stream ended.
    End,
}

/// Read the next non-empty line of at most `cap` bytes.
pub async fn read<R: AsyncBufRead + Unpin>(r: &mut R, cap: usize) -> std::io::Result<Frame> {
    loop {
        let mut line = Vec::new();
        let mut skipped = 0usize;
        loop {
            let buf = r.fill_buf().await?;
            if buf.is_empty() {
                return Ok(match (skipped, line.is_empty()) {
                    (0, true) => Frame::End,
                    (0, false) => Frame::Line(trim(line)),
                    (n, _) => Frame::TooLong(n),
                });
            }
            let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            if skipped > 0 || line.len() + chunk.len() > cap {
                skipped += line.len() + chunk.len();
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
            let used = done.unwrap_or(buf.len());
            r.consume(used);
            if done.is_some() {
                break;
            }
        }
        if skipped > 0 {
            return Ok(Frame::TooLong(skipped));
        }
        let line = trim(line);
        if !line.iter().all(u8::is_ascii_whitespace) {
            return Ok(Frame::Line(line));
        }
    }
}

fn trim(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_capped_and_long_ones_skipped() {
        let long = "x".repeat(100);
        let input = format!("{{\"a\":1}}\r\n\n{long}\n{{\"b\":2}}\n{long}");
        let mut r = tokio::io::BufReader::with_capacity(7, input.as_bytes());
        assert_eq!(
            read(&mut r, 50).await.unwrap(),
            Frame::Line(b"{\"a\":1}".to_vec())
        );
        assert_eq!(read(&mut r, 50).await.unwrap(), Frame::TooLong(100));
        assert_eq!(
            read(&mut r, 50).await.unwrap(),
            Frame::Line(b"{\"b\":2}".to_vec())
        );
        assert_eq!(read(&mut r, 50).await.unwrap(), Frame::TooLong(100));
        assert_eq!(read(&mut r, 50).await.unwrap(), Frame::End);
    }
}
