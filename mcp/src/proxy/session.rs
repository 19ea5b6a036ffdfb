//! One proxy session: the upstream (a child process or a Streamable HTTP
//! endpoint, [`super::upstream`]), a task reading the agent, one writer
//! each way, and the state they share (the pins, the verdict on every
//! listed tool, the requests in flight). Everything here works on
//! JSON-RPC messages as bytes, whichever way they reach the upstream.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};

use super::check::{self, Pins, Status, Verdict};
use super::frame::{self, Frame};
use super::upstream::Upstream;
use super::{Config, Ended, Hooks};
use crate::error::Result;

/// The id prefix of the proxy's own requests to the upstream.
const OWN: &str = "toolreg-proxy-";
/// How long a call waits for the tool list to be checked.
const CHECK_WAIT: Duration = Duration::from_secs(30);

pub(super) type Tx = mpsc::UnboundedSender<Vec<u8>>;

struct State {
    pins: Arc<Pins>,
    /// The last verdict on every tool the upstream listed.
    tools: HashMap<String, Verdict>,
    /// What was last reported per tool: fingerprint and status.
    reported: HashMap<String, (String, Status)>,
    /// The proxy's own check in flight (its request id), and the verdicts
    /// of its pages so far.
    own: Option<String>,
    own_pages: HashMap<String, Verdict>,
    next_own: u64,
    /// Ids (as JSON text) of the agent's `tools/list` requests in flight.
    agent_lists: HashSet<String>,
    /// The agent's requests in flight: id as JSON text → id.
    outstanding: HashMap<String, Value>,
}

pub(super) struct Shared {
    pub(super) config: Config,
    hooks: Arc<dyn Hooks>,
    state: Mutex<State>,
    checked: watch::Sender<bool>,
    to_agent: Tx,
    to_upstream: Tx,
    end: mpsc::UnboundedSender<Ended>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn send_agent(&self, v: &Value) {
        let _ = self.to_agent.send(v.to_string().into_bytes());
    }

    fn error_to_agent(&self, id: Value, code: i64, message: String) {
        self.send_agent(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        );
    }

    pub(super) fn log(&self, line: &str) {
        eprintln!("toolreg mcp proxy: {line}");
    }

    /// End the session.
    pub(super) fn end(&self, why: Ended) {
        let _ = self.end.send(why);
    }

    /// One message the upstream sent, as bytes: checked, then forwarded,
    /// changed or kept (what is not a JSON-RPC object is logged and
    /// dropped).
    pub(super) fn from_upstream(self: &Arc<Self>, line: Vec<u8>) {
        match serde_json::from_slice::<Value>(&line) {
            Ok(msg @ Value::Object(_)) => from_upstream(self, msg, line),
            Ok(_) => self.log(&format!(
                "the server {} sent a message that is not a JSON-RPC object; it was not forwarded",
                self.config.server
            )),
            Err(e) => self.log(&format!(
                "the server {} sent a line that is not valid JSON ({e}); it was not forwarded",
                self.config.server
            )),
        }
    }

    /// Answer the request `id` with an error as if the upstream had sent
    /// it (the transport could not deliver it, or got no answer), so the
    /// proxy's own checks and the agent's requests end the same way.
    pub(super) fn fail_request(self: &Arc<Self>, id: &Value, message: &str) {
        let answer = json!({"jsonrpc": "2.0", "id": id,
                            "error": {"code": -32603, "message": message}});
        from_upstream(self, answer.clone(), answer.to_string().into_bytes());
    }
}

pub(super) async fn run<I, O>(
    config: Config,
    hooks: Arc<dyn Hooks>,
    stdin: I,
    stdout: O,
) -> Result<Ended>
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let mut upstream = Upstream::start(&config)?;
    let (agent_tx, agent_rx) = mpsc::unbounded_channel();
    let (up_tx, up_rx) = mpsc::unbounded_channel();
    let (end_tx, mut end_rx) = mpsc::unbounded_channel();
    let (checked, _) = watch::channel(false);
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            pins: Arc::new(config.pins.clone()),
            tools: HashMap::new(),
            reported: HashMap::new(),
            own: None,
            own_pages: HashMap::new(),
            next_own: 1,
            agent_lists: HashSet::new(),
            outstanding: HashMap::new(),
        }),
        config,
        hooks,
        checked,
        to_agent: agent_tx,
        to_upstream: up_tx,
        end: end_tx,
    });
    let agent_writer = tokio::spawn(write_lines(agent_rx, stdout));
    upstream.spawn(shared.clone(), up_rx);
    let agent_reader = tokio::spawn(read_agent(shared.clone(), stdin));
    let ended = end_rx.recv().await.unwrap_or(Ended::AgentClosed);
    agent_reader.abort();
    upstream.stop_reading();
    let ended = upstream.ended(ended).await;
    // Say why on stderr before the agent's stdout closes: an agent that
    // sees its stdout end may stop the proxy at once.
    if let Some(why) = ended.message(&shared.config.server) {
        shared.log(&why);
    }
    if ended != Ended::AgentClosed {
        // Every request still waiting gets an answer before stdout closes.
        let waiting: Vec<Value> = shared
            .state()
            .outstanding
            .drain()
            .map(|(_, id)| id)
            .collect();
        let why = ended.message(&shared.config.server).unwrap_or_default();
        for id in waiting {
            shared.error_to_agent(id, -32603, why.clone());
        }
    }
    drop(shared);
    upstream.stop_writing();
    let _ = tokio::time::timeout(Duration::from_secs(2), agent_writer).await;
    upstream.close(ended == Ended::AgentClosed).await;
    Ok(ended)
}

pub(super) async fn write_lines<W: AsyncWrite + Unpin>(
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    mut w: W,
) {
    while let Some(mut line) = rx.recv().await {
        line.push(b'\n');
        if w.write_all(&line).await.is_err() || w.flush().await.is_err() {
            return;
        }
    }
    let _ = w.shutdown().await;
}

/// The key of a JSON-RPC id in maps.
fn key(id: &Value) -> String {
    id.to_string()
}

async fn read_agent<I: AsyncRead + Unpin>(shared: Arc<Shared>, stdin: I) {
    let mut r = BufReader::new(stdin);
    let cap = shared.config.max_message;
    loop {
        let line = match frame::read(&mut r, cap).await {
            Ok(Frame::Line(line)) => line,
            Ok(Frame::TooLong(n)) => {
                shared.error_to_agent(
                    Value::Null,
                    -32600,
                    format!("message of more than {n} bytes refused: the limit is {cap} bytes"),
                );
                continue;
            }
            Ok(Frame::End) | Err(_) => {
                let _ = shared.end.send(Ended::AgentClosed);
                return;
            }
        };
        let msg: Value = match serde_json::from_slice(&line) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => {
                shared.error_to_agent(Value::Null, -32600, "not a JSON-RPC message: expected one JSON object per line (batches are not part of MCP)".into());
                continue;
            }
            Err(e) => {
                shared.error_to_agent(Value::Null, -32700, format!("not valid JSON: {e}"));
                continue;
            }
        };
        from_agent(&shared, msg, line).await;
    }
}

async fn from_agent(shared: &Arc<Shared>, msg: Value, line: Vec<u8>) {
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let id = msg.get("id").filter(|_| !method.is_empty()).cloned();
    if let Some(id) = &id {
        if id.as_str().is_some_and(|s| s.starts_with(OWN)) {
            shared.error_to_agent(
                id.clone(),
                -32600,
                format!("request ids starting with `{OWN}` are the proxy's own; use another id"),
            );
            return;
        }
        if method == "tools/call" {
            if let Some(refusal) = refuse_call(shared, &msg).await {
                shared.error_to_agent(id.clone(), -32602, refusal);
                return;
            }
        }
        let mut st = shared.state();
        if method == "tools/list" {
            st.agent_lists.insert(key(id));
        }
        st.outstanding.insert(key(id), id.clone());
    }
    let _ = shared.to_upstream.send(line);
    if method == "notifications/initialized" {
        start_check(shared);
    }
}

/// Why a `tools/call` may not go through (`None`: it may).
async fn refuse_call(shared: &Arc<Shared>, msg: &Value) -> Option<String> {
    let Some(name) = msg.pointer("/params/name").and_then(Value::as_str) else {
        return Some("tools/call without a tool name (params.name)".into());
    };
    let mut rx = shared.checked.subscribe();
    if tokio::time::timeout(CHECK_WAIT, rx.wait_for(|c| *c))
        .await
        .is_err()
    {
        return Some(format!(
            "toolreg has not been able to check the tool list of {} yet; the call to `{name}` is refused",
            shared.config.server
        ));
    }
    let st = shared.state();
    match st.tools.get(name) {
        Some(v) if v.status.passes() => None,
        Some(v) => Some(v.refusal(&shared.config.server)),
        None => Some(format!(
            "toolreg withheld the tool `{name}` of {}: the server did not list it, so it was never checked",
            shared.config.server
        )),
    }
}

/// List the upstream's tools for the proxy itself; calls wait until done.
fn start_check(shared: &Arc<Shared>) {
    let mut st = shared.state();
    let id = format!("{OWN}{}", st.next_own);
    st.next_own += 1;
    st.own = Some(id.clone());
    st.own_pages.clear();
    drop(st);
    shared.checked.send_replace(false);
    send_own_list(shared, &id, None);
}

fn send_own_list(shared: &Shared, id: &str, cursor: Option<&Value>) {
    let mut req = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
    if let Some(c) = cursor {
        req["params"] = json!({"cursor": c});
    }
    let _ = shared.to_upstream.send(req.to_string().into_bytes());
}

fn from_upstream(shared: &Arc<Shared>, msg: Value, line: Vec<u8>) {
    let method = msg.get("method").and_then(Value::as_str);
    let id = msg.get("id").cloned();
    match (method, id) {
        (None, Some(id)) => {
            let k = key(&id);
            let own = id.as_str().is_some_and(|s| s.starts_with(OWN));
            if own {
                own_answer(shared, &id, &msg);
                return;
            }
            let mut st = shared.state();
            st.outstanding.remove(&k);
            let list = st.agent_lists.remove(&k);
            drop(st);
            if list {
                if let Some(filtered) = agent_answer(shared, msg) {
                    shared.send_agent(&filtered);
                }
                return;
            }
            let _ = shared.to_agent.send(line);
        }
        (Some("notifications/tools/list_changed"), None) => {
            start_check(shared);
            let _ = shared.to_agent.send(line);
        }
        _ => {
            let _ = shared.to_agent.send(line);
        }
    }
}

/// The answer to the proxy's own `tools/list`: a page of the check.
fn own_answer(shared: &Arc<Shared>, id: &Value, msg: &Value) {
    if shared.state().own.as_deref() != id.as_str() {
        return; // a check that a newer one replaced
    }
    let Some(tools) = msg.pointer("/result/tools").and_then(Value::as_array) else {
        if let Some(err) = msg.get("error") {
            shared.log(&format!(
                "the server {} answered tools/list with an error ({err}); none of its tools can be called",
                shared.config.server
            ));
        } else {
            shared.log(&format!(
                "the server {} answered tools/list without a tools array; none of its tools can be called",
                shared.config.server
            ));
        }
        finish_own(shared);
        return;
    };
    let verdicts = judge(shared, tools);
    shared
        .state()
        .own_pages
        .extend(verdicts.into_iter().map(|v| (v.name.clone(), v)));
    match msg.pointer("/result/nextCursor").filter(|c| !c.is_null()) {
        Some(cursor) => {
            let mut st = shared.state();
            let next = format!("{OWN}{}", st.next_own);
            st.next_own += 1;
            st.own = Some(next.clone());
            drop(st);
            send_own_list(shared, &next, Some(cursor));
        }
        None => finish_own(shared),
    }
}

fn finish_own(shared: &Arc<Shared>) {
    let mut st = shared.state();
    st.own = None;
    st.tools = std::mem::take(&mut st.own_pages);
    drop(st);
    shared.checked.send_replace(true);
}

/// The upstream's answer to the agent's `tools/list`, with every tool that
/// did not pass left out (`None`: nothing to send).
fn agent_answer(shared: &Arc<Shared>, mut msg: Value) -> Option<Value> {
    let Some(tools) = msg
        .pointer_mut("/result/tools")
        .and_then(Value::as_array_mut)
    else {
        return Some(msg); // an error, passed on as it is
    };
    let listed = std::mem::take(tools);
    let verdicts = judge(shared, &listed);
    let mut st = shared.state();
    let mut passing = Vec::new();
    for (tool, verdict) in listed.into_iter().zip(verdicts) {
        if verdict.status.passes() {
            passing.push(tool);
        }
        st.tools.insert(verdict.name.clone(), verdict);
    }
    drop(st);
    if let Some(tools) = msg.pointer_mut("/result/tools") {
        *tools = Value::Array(passing);
    }
    Some(msg)
}

/// Check one page of tools, record what `--record` pins, report what is
/// new, and end the session under `--strict` when a tool is withheld.
fn judge(shared: &Arc<Shared>, tools: &[Value]) -> Vec<Verdict> {
    let pins = shared.state().pins.clone();
    let verdicts = check::check(&pins, tools, shared.config.record);
    let mut st = shared.state();
    if verdicts.iter().any(|v| v.recorded) {
        let mut next = (*st.pins).clone();
        for v in verdicts.iter().filter(|v| v.recorded) {
            next.tools.insert(v.name.clone(), v.fingerprint.clone());
            next.definitions
                .insert(v.name.clone(), v.definition.clone());
        }
        st.pins = Arc::new(next);
    }
    let fresh: Vec<Verdict> = verdicts
        .iter()
        .filter(|v| {
            let now = (v.fingerprint.clone(), v.status);
            st.reported.insert(v.name.clone(), now.clone()) != Some(now)
        })
        .cloned()
        .collect();
    drop(st);
    if !fresh.is_empty() {
        if let Err(e) = shared.hooks.checked(&pins, &fresh) {
            shared.log(&e);
        }
    }
    if shared.config.strict {
        if let Some(v) = verdicts.iter().find(|v| !v.status.passes()) {
            let _ = shared
                .end
                .send(Ended::Strict(v.refusal(&shared.config.server)));
        }
    }
    verdicts
}
