//! Reading a `text/event-stream` body (the Server-Sent Events format the
//! Streamable HTTP transport answers with) into events, with every event's
//! data capped like a stdio line: a longer one is reported, never held in
//! memory whole.

use bytes::Bytes;
use futures::{Stream, StreamExt};

/// One event: its `id` (for `Last-Event-ID`), its data (the `data:` lines
/// joined by newlines; empty for an event that only sets an id or a
/// retry delay), and the `retry:` delay in milliseconds.
#[derive(Debug, Default, PartialEq, Eq)]
pub(in crate::proxy) struct Event {
    pub id: Option<String>,
    pub data: Vec<u8>,
    pub retry: Option<u64>,
}

/// Why reading stopped early.
#[derive(Debug)]
pub(in crate::proxy) enum SseError {
    /// An event or line longer than the cap (its length so far).
    TooLong(usize),
    /// The connection failed mid-stream.
    Body(String),
}

/// The events of one stream.
pub(in crate::proxy) struct Events<S> {
    body: S,
    buf: Vec<u8>,
    cap: usize,
    done: bool,
}

impl<S, E> Events<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    pub(in crate::proxy) fn new(body: S, cap: usize) -> Self {
        Events {
            body,
            buf: Vec::new(),
            cap,
            done: false,
        }
    }

    /// The next event (`None`: the stream ended).
    pub(in crate::proxy) async fn next(&mut self) -> Result<Option<Event>, SseError> {
        let mut event = Event::default();
        let mut fields = false;
        loop {
            let Some(line) = self.line().await? else {
                // A last event without its blank line is dropped, as the
                // format says.
                return Ok(None);
            };
            if line.is_empty() {
                if fields {
                    return Ok(Some(event));
                }
                continue;
            }
            let (name, value) = match line.iter().position(|b| *b == b':') {
                Some(0) => continue, // a comment
                Some(i) => {
                    let v = &line[i + 1..];
                    (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
                }
                None => (&line[..], &b""[..]),
            };
            fields = true;
            match name {
                b"data" => {
                    if !event.data.is_empty() {
                        event.data.push(b'\n');
                    }
                    event.data.extend_from_slice(value);
                    if event.data.len() > self.cap {
                        return Err(SseError::TooLong(event.data.len()));
                    }
                }
                b"id" if !value.contains(&0) => {
                    event.id = Some(String::from_utf8_lossy(value).into_owned());
                }
                b"retry" => {
                    event.retry = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok())
                }
                _ => {} // `event:` and unknown fields
            }
        }
    }

    /// The next line without its ending (`\n`, `\r\n` or `\r`).
    async fn line(&mut self) -> Result<Option<Vec<u8>>, SseError> {
        loop {
            if let Some(i) = self.buf.iter().position(|b| *b == b'\n' || *b == b'\r') {
                // A `\r` at the very end may be the first half of `\r\n`.
                if self.buf[i] == b'\r' && i + 1 == self.buf.len() && !self.done {
                    self.fill().await?;
                    continue;
                }
                let mut rest = self.buf.split_off(i + 1);
                if self.buf[i] == b'\r' && rest.first() == Some(&b'\n') {
                    rest.remove(0);
                }
                let mut line = std::mem::replace(&mut self.buf, rest);
                line.truncate(i);
                return Ok(Some(line));
            }
            if self.buf.len() > self.cap {
                return Err(SseError::TooLong(self.buf.len()));
            }
            if self.done || !self.fill().await? {
                return Ok(None);
            }
        }
    }

    /// Read more of the body (`false`: it ended).
    async fn fill(&mut self) -> Result<bool, SseError> {
        match self.body.next().await {
            Some(Ok(chunk)) => {
                self.buf.extend_from_slice(&chunk);
                Ok(true)
            }
            Some(Err(e)) => Err(SseError::Body(e.to_string())),
            None => {
                self.done = true;
                Ok(false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&str], cap: usize) -> Vec<Result<Event, String>> {
        let body = futures::stream::iter(
            chunks
                .iter()
                .map(|c| Ok::<_, std::io::Error>(Bytes::from(c.to_string())))
                .collect::<Vec<_>>(),
        );
        let mut ev = Events::new(body, cap);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut out = Vec::new();
            loop {
                match ev.next().await {
                    Ok(Some(e)) => out.push(Ok(e)),
                    Ok(None) => return out,
                    Err(SseError::TooLong(n)) => {
                        out.push(Err(format!("too long {n}")));
                        return out;
                    }
                    Err(SseError::Body(e)) => {
                        out.push(Err(e));
                        return out;
                    }
                }
            }
        })
    }

    #[test]
    fn events_split_anywhere_with_every_line_ending() {
        let got = events(
            &[
                ": hi\r",
                "\nid: 7\r\nevent: message\r\ndata: {\"a\"",
                ":1}\r\n\r",
                "\nretry: 50\n\ndata: x\rdata: y\r\r",
                "data: dropped",
            ],
            100,
        );
        let got: Vec<Event> = got.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            got,
            [
                Event {
                    id: Some("7".into()),
                    data: b"{\"a\":1}".to_vec(),
                    retry: None
                },
                Event {
                    id: None,
                    data: Vec::new(),
                    retry: Some(50)
                },
                Event {
                    id: None,
                    data: b"x\ny".to_vec(),
                    retry: None
                },
            ]
        );
    }

    #[test]
    fn a_long_event_is_refused_without_holding_the_rest() {
        let long = "x".repeat(60);
        let got = events(&["data: ", &long, "\ndata: ", &long, "\n\n"], 100);
        assert_eq!(got.last().unwrap().as_ref().unwrap_err(), "too long 121");
        let got = events(&["data: ", &long, &long, &long], 100);
        assert!(got
            .last()
            .unwrap()
            .as_ref()
            .unwrap_err()
            .starts_with("too long"));
    }
}
