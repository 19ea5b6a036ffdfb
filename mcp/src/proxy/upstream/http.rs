//! A Streamable HTTP upstream (the MCP transport of protocol versions
//! 2025-03-26 and 2025-06-18): every message for the server is POSTed to
//! its URL with `Accept: application/json, text/event-stream`; the answer
//! to a request is one JSON object or an event stream of messages ending
//! with it; notifications and responses get `202 Accepted`. The
//! `Mcp-Session-Id` the server gives with its `initialize` answer, and the
//! negotiated `MCP-Protocol-Version`, go with every later request. Once the
//! agent has sent `notifications/initialized`, a GET opens the stream of
//! the server's own messages (`notifications/tools/list_changed`, server
//! requests), reopened with `Last-Event-ID` when it ends; a server that
//! answers 405 has none. The session is DELETEd when the agent ends it.
//!
//! Requests are POSTed concurrently (a long tool call doesn't hold up a
//! cancellation or a ping); `initialize`, notifications and responses are
//! sent in order, each once the one before was accepted. A request the
//! server answers with an HTTP error, a body that is not MCP, or a stream
//! that ends without its answer gets a JSON-RPC error naming the URL and
//! what came back; a failing `initialize`, a server that can't be reached,
//! a broken connection or a session the server dropped (404) end the
//! session. Redirects are not followed (a POST must not turn into a GET).
//!
//! This is a small client on reqwest rather than rmcp's
//! `StreamableHttpClientTransport`: that transport sends and receives
//! rmcp's typed messages (`ClientJsonRpcMessage`/`ServerJsonRpcMessage`),
//! so every message would be parsed into rmcp's model and written back
//! out. Fields its types don't know are dropped on the way (its `Tool`
//! keeps no unknown members, so a listed tool would be checked and shown to
//! the agent as something other than what the server sent, and stdio and
//! HTTP upstreams of the same server would fingerprint differently), and
//! ids are narrowed to `i64` or string. The proxy forwards bytes, so
//! it needs the transport without the model.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{RequestBuilder, Response, StatusCode, Url};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

use super::super::session::Shared;
use super::super::Ended;
use super::sse::{Events, SseError};
use crate::error::{Error, Result};

const SESSION: &str = "mcp-session-id";
const PROTOCOL: &str = "mcp-protocol-version";
const LAST_EVENT: &str = "last-event-id";
/// How long to wait before reopening the server's stream (unless it says
/// otherwise with `retry:`, up to [`MAX_RETRY`]).
const RETRY: Duration = Duration::from_millis(500);
const MAX_RETRY: Duration = Duration::from_secs(10);
/// How much of an error answer is read (and a little of it shown).
const ERROR_BODY: usize = 64 * 1024;

/// Parse and check an endpoint URL.
pub(in crate::proxy) fn endpoint(url: &str) -> Result<Url> {
    let bad = |reason: &str| Error::Url {
        url: url.to_string(),
        reason: reason.to_string(),
    };
    let parsed = Url::parse(url).map_err(|e| bad(&format!("not a URL ({e})")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(bad(&format!(
            "the scheme is `{}`; a Streamable HTTP endpoint is http:// or https://",
            parsed.scheme()
        )));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(bad("the URL has no host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(bad(
            "the URL carries credentials; they would be written into toolreg.lock",
        ));
    }
    Ok(parsed)
}

pub(in crate::proxy) struct Http {
    url: Url,
    client: reqwest::Client,
    conn: Option<Arc<Conn>>,
    writer: Option<JoinHandle<()>>,
}

/// What the tasks of one session share.
struct Conn {
    client: reqwest::Client,
    url: Url,
    shared: Arc<Shared>,
    session: Mutex<Option<String>>,
    protocol: Mutex<Option<String>>,
    tasks: Mutex<JoinSet<()>>,
    listening: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Http {
    pub(super) fn start(url: &str) -> Result<Http> {
        let url = endpoint(url)?;
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("toolreg-mcp-proxy/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::Transport(format!("could not build the HTTP client: {e}")))?;
        Ok(Http {
            url,
            client,
            conn: None,
            writer: None,
        })
    }

    pub(super) fn spawn(&mut self, shared: Arc<Shared>, rx: mpsc::UnboundedReceiver<Vec<u8>>) {
        let conn = Arc::new(Conn {
            client: self.client.clone(),
            url: self.url.clone(),
            shared,
            session: Mutex::new(None),
            protocol: Mutex::new(None),
            tasks: Mutex::new(JoinSet::new()),
            listening: AtomicBool::new(false),
        });
        self.writer = Some(tokio::spawn(write(conn.clone(), rx)));
        self.conn = Some(conn);
    }

    pub(super) fn stop_reading(&mut self) {
        if let Some(conn) = &self.conn {
            lock(&conn.tasks).abort_all();
        }
    }

    pub(super) fn stop_writing(&mut self) {
        if let Some(w) = self.writer.take() {
            w.abort();
        }
    }

    /// DELETE the session (if the server gave one), briefly: the agent is
    /// gone, and a server that doesn't allow it answers 405.
    pub(super) async fn close(self) {
        let Some(conn) = self.conn else { return };
        let Some(id) = lock(&conn.session).clone() else {
            return;
        };
        let delete = conn.client.delete(conn.url.clone()).header(SESSION, id);
        let _ = tokio::time::timeout(Duration::from_secs(2), delete.send()).await;
    }
}

/// Send what the session hands over, in order (requests each in a task of
/// their own once sent off).
async fn write(conn: Arc<Conn>, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(body) = rx.recv().await {
        let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id").filter(|_| method.is_some()).cloned();
        match (method, id) {
            (Some("initialize"), Some(id)) => conn.post(body, Some(id), true).await,
            (Some(_), Some(id)) => {
                let c = conn.clone();
                conn.spawn(async move { c.post(body, Some(id), false).await });
            }
            (method, _) => {
                conn.post(body, None, false).await;
                if method == Some("notifications/initialized")
                    && !conn.listening.swap(true, Ordering::SeqCst)
                {
                    let c = conn.clone();
                    conn.spawn(async move { c.listen().await });
                }
            }
        }
    }
}

impl Conn {
    fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        let mut tasks = lock(&self.tasks);
        while tasks.try_join_next().is_some() {}
        tasks.spawn(task);
    }

    /// The session and protocol headers.
    fn headers(&self, mut req: RequestBuilder) -> RequestBuilder {
        if let Some(id) = lock(&self.session).as_deref() {
            req = req.header(SESSION, id);
        }
        if let Some(v) = lock(&self.protocol).as_deref() {
            req = req.header(PROTOCOL, v);
        }
        req
    }

    fn has_session(&self) -> bool {
        lock(&self.session).is_some()
    }

    /// POST one message; deliver what comes back.
    async fn post(self: &Arc<Self>, body: Vec<u8>, id: Option<Value>, initialize: bool) {
        let req = self
            .client
            .post(self.url.clone())
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        let resp = match self.headers(req).send().await {
            Ok(r) => r,
            Err(e) => return self.lost("POST", &e),
        };
        if initialize {
            let given = resp.headers().get(SESSION).and_then(|v| v.to_str().ok());
            *lock(&self.session) = given.map(str::to_string);
        }
        let status = resp.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            if let Some(id) = id {
                let why = format!(
                    "POST {} answered {status} to a request, with no answer",
                    self.url
                );
                self.fail(&id, &why, initialize);
            }
            return;
        }
        if status == StatusCode::NOT_FOUND && self.has_session() && !initialize {
            return self.dropped("POST");
        }
        if !status.is_success() {
            let why = refusal("POST", &self.url, resp).await;
            match id {
                Some(id) => self.fail(&id, &why, initialize),
                None => self
                    .shared
                    .log(&format!("{why} (to a notification or response)")),
            }
            return;
        }
        match content_type(&resp).as_str() {
            "application/json" => {
                let cap = self.shared.config.max_message;
                match body_capped(resp, cap).await {
                    Ok(b) if b.trim_ascii().is_empty() => {
                        if let Some(id) = id {
                            let why = format!("POST {} answered with an empty body", self.url);
                            self.fail(&id, &why, initialize);
                        }
                    }
                    Ok(b) => self.deliver(b, initialize),
                    Err(Failure::TooLong(n)) => self.shared.end(Ended::TooLong(n)),
                    Err(Failure::Broken(e)) => self.lost("POST", &e),
                }
            }
            "text/event-stream" => {
                let answered = self.events(resp, id.as_ref(), initialize).await;
                if let (Some(id), Some(false)) = (id, answered) {
                    let why = format!(
                        "the event stream of POST {} ended before the server answered",
                        self.url
                    );
                    self.fail(&id, &why, initialize);
                }
            }
            _ if id.is_none() => {}
            other => {
                let why = format!(
                    "POST {} answered with Content-Type `{other}`, not an MCP message (application/json or text/event-stream): is it the server's MCP endpoint?",
                    self.url
                );
                if let Some(id) = id {
                    self.fail(&id, &why, initialize);
                }
            }
        }
    }

    /// Read an event stream, delivering every message; whether the answer
    /// to `id` came (`None`: the session ended while reading).
    async fn events(
        self: &Arc<Self>,
        resp: Response,
        id: Option<&Value>,
        initialize: bool,
    ) -> Option<bool> {
        let mut events = Events::new(resp.bytes_stream(), self.shared.config.max_message);
        let mut answered = false;
        loop {
            match events.next().await {
                Ok(Some(ev)) if ev.data.is_empty() => {}
                Ok(Some(ev)) => {
                    answered |= id.is_some_and(|id| answers(&ev.data, id));
                    self.deliver(ev.data, initialize);
                }
                Ok(None) => return Some(answered),
                Err(SseError::TooLong(n)) => {
                    self.shared.end(Ended::TooLong(n));
                    return None;
                }
                Err(SseError::Body(e)) => {
                    self.shared.end(Ended::UpstreamFailed(format!(
                        "the event stream of POST {} broke ({e})",
                        self.url
                    )));
                    return None;
                }
            }
        }
    }

    /// One message (or a batch, from a 2025-03-26 server) to the session;
    /// the answer to `initialize` sets the protocol version header.
    fn deliver(&self, body: Vec<u8>, initialize: bool) {
        let shared = &self.shared;
        if !initialize && !body.trim_ascii_start().starts_with(b"[") {
            return shared.from_upstream(body);
        }
        match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Array(batch)) => {
                for msg in batch {
                    shared.from_upstream(msg.to_string().into_bytes());
                }
            }
            Ok(msg) => {
                if let Some(v) = msg
                    .pointer("/result/protocolVersion")
                    .and_then(Value::as_str)
                {
                    *lock(&self.protocol) = Some(v.to_string());
                }
                shared.from_upstream(body);
            }
            Err(_) => shared.from_upstream(body),
        }
    }

    /// The server's own stream, reopened until the session ends.
    async fn listen(self: Arc<Self>) {
        let mut last: Option<String> = None;
        let mut retry = RETRY;
        loop {
            let mut req = self
                .client
                .get(self.url.clone())
                .header(ACCEPT, "text/event-stream");
            if let Some(id) = &last {
                if let Ok(v) = HeaderValue::from_str(id) {
                    req = req.header(LAST_EVENT, v);
                }
            }
            let resp = match self.headers(req).send().await {
                Ok(r) => r,
                Err(e) => return self.lost("GET", &e),
            };
            let status = resp.status();
            if status == StatusCode::METHOD_NOT_ALLOWED {
                return; // the server sends nothing of its own
            }
            if status == StatusCode::NOT_FOUND && self.has_session() {
                return self.dropped("GET");
            }
            if !status.is_success() || content_type(&resp) != "text/event-stream" {
                let why = match status.is_success() {
                    true => format!(
                        "GET {} answered with Content-Type `{}`, not an event stream",
                        self.url,
                        content_type(&resp)
                    ),
                    false => refusal("GET", &self.url, resp).await,
                };
                return self.shared.log(&format!(
                    "{why}: notifications the server sends on its own (such as tools/list_changed) won't reach the proxy"
                ));
            }
            let mut events = Events::new(resp.bytes_stream(), self.shared.config.max_message);
            loop {
                match events.next().await {
                    Ok(Some(ev)) => {
                        if ev.id.is_some() {
                            last = ev.id;
                        }
                        if let Some(ms) = ev.retry {
                            retry = Duration::from_millis(ms).min(MAX_RETRY);
                        }
                        if !ev.data.is_empty() {
                            self.deliver(ev.data, false);
                        }
                    }
                    Ok(None) | Err(SseError::Body(_)) => break,
                    Err(SseError::TooLong(n)) => return self.shared.end(Ended::TooLong(n)),
                }
            }
            tokio::time::sleep(retry).await;
        }
    }

    /// A request failed: an error answer for it, or for `initialize` the
    /// end of the session (nothing else can work).
    fn fail(self: &Arc<Self>, id: &Value, why: &str, initialize: bool) {
        if initialize {
            self.shared.end(Ended::UpstreamFailed(why.to_string()));
        } else {
            self.shared.fail_request(id, why);
        }
    }

    /// The server can't be reached or the connection broke.
    fn lost(&self, method: &str, e: &reqwest::Error) {
        self.shared.end(Ended::UpstreamFailed(format!(
            "{method} {}: {}",
            self.url,
            cause(e)
        )));
    }

    /// The server no longer knows the session.
    fn dropped(&self, method: &str) {
        self.shared.end(Ended::UpstreamFailed(format!(
            "{method} {} answered 404 Not Found for the session it gave (Mcp-Session-Id): the server ended the MCP session",
            self.url
        )));
    }
}

/// Whether `data` is the answer (not a request) with this id.
fn answers(data: &[u8], id: &Value) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<Value>,
        method: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Head>(data)
        .is_ok_and(|h| h.method.is_none() && h.id.as_ref() == Some(id))
}

/// The media type of an answer, lowercase, without parameters.
fn content_type(resp: &Response) -> String {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

enum Failure {
    TooLong(usize),
    Broken(reqwest::Error),
}

async fn body_capped(resp: Response, cap: usize) -> std::result::Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(Failure::Broken)?;
        if out.len() + chunk.len() > cap {
            return Err(Failure::TooLong(out.len() + chunk.len()));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// An HTTP error answer in words: the status, and the JSON-RPC error's
/// message or the start of the body.
async fn refusal(method: &str, url: &Url, resp: Response) -> String {
    let status = resp.status();
    let ctype = content_type(&resp);
    let head = format!("{method} {url} answered {status}");
    let body = match body_capped(resp, ERROR_BODY).await {
        Ok(b) => b,
        Err(_) => return head,
    };
    if let Some(m) = serde_json::from_slice::<Value>(&body).ok().and_then(|v| {
        v.pointer("/error/message")
            .and_then(Value::as_str)
            .map(str::to_string)
    }) {
        return format!("{head}: {m}");
    }
    let text: String = String::from_utf8_lossy(&body)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match text.is_empty() {
        true => head,
        false => {
            let short: String = text.chars().take(200).collect();
            let more = if short.len() < text.len() { "…" } else { "" };
            format!("{head} ({ctype}): {short}{more}")
        }
    }
}

/// A reqwest error in words, down to its root cause.
fn cause(e: &reqwest::Error) -> String {
    let mut root: &dyn std::error::Error = e;
    while let Some(next) = root.source() {
        root = next;
    }
    let root = root.to_string();
    if e.is_connect() {
        format!("could not connect ({root})")
    } else if e.is_timeout() {
        format!("timed out ({root})")
    } else if e.is_body() || e.is_decode() || e.is_request() {
        format!("the connection broke ({root})")
    } else {
        root
    }
}
