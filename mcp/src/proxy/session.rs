//! One proxy session: the upstream child process, a task reading the
//! agent, a task reading the upstream, one writer each way, and the state
//! they share (the pins, the verdict on every listed tool, the requests in
//! flight).

use std::collections::{HashMap, HashSet};
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, watch};

use super::check::{self, Pins, Status, Verdict};
use super::frame::{self, Frame};
use super::{Config, Ended, Hooks};
use crate::error::{Error, Result};

/// The id prefix of the proxy's own requests to the upstream.
const OWN: &str = "toolreg-proxy-";
/// How long a call waits for the tool list to be checked.
const CHECK_WAIT: Duration = Duration::from_secs(30);

type Tx = mpsc::UnboundedSender<Vec<u8>>;

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

struct Shared {
    config: Config,
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

    fn log(&self, line: &str) {
        eprintln!("toolreg mcp proxy: {line}");
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
    let mut child = Command::new(&config.command[0])
        .args(&config.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| Error::io(format!("could not start `{}`", config.command[0]), e))?;
    let (Some(child_in), Some(child_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(Error::Transport("the server's stdio was not piped".into()));
    };
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
    let upstream_writer = tokio::spawn(write_lines(up_rx, child_in));
    let agent_reader = tokio::spawn(read_agent(shared.clone(), stdin));
    let upstream_reader = tokio::spawn(read_upstream(shared.clone(), child_out));
    let ended = end_rx.recv().await.unwrap_or(Ended::AgentClosed);
    agent_reader.abort();
    upstream_reader.abort();
    let ended = match ended {
        Ended::UpstreamExited(_) => Ended::UpstreamExited(exit_status(&mut child).await),
        other => other,
    };
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
    upstream_writer.abort();
    let _ = tokio::time::timeout(Duration::from_secs(2), agent_writer).await;
    if ended == Ended::AgentClosed {
        // stdin of the upstream is closed now: give it a moment to leave.
        if tokio::time::timeout(Duration::from_secs(2), child.wait())
            .await
            .is_err()
        {
            let _ = child.kill().await;
        }
    } else {
        let _ = child.kill().await;
    }
    Ok(ended)
}

async fn exit_status(child: &mut Child) -> String {
    match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
        Ok(Ok(status)) => status.to_string(),
        Ok(Err(e)) => format!("its status is unknown: {e}"),
        Err(_) => {
            let _ = child.kill().await;
            "it closed its stdout and was stopped".into()
        }
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut rx: mpsc::UnboundedReceiver<Vec<u8>>, mut w: W) {
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

async fn read_upstream<R: AsyncRead + Unpin>(shared: Arc<Shared>, out: R) {
    let mut r = BufReader::new(out);
    loop {
        let line = match frame::read(&mut r, shared.config.max_message).await {
            Ok(Frame::Line(line)) => line,
            Ok(Frame::TooLong(n)) => {
                let _ = shared.end.send(Ended::TooLong(n));
                return;
            }
            Ok(Frame::End) | Err(_) => {
                let _ = shared.end.send(Ended::UpstreamExited(String::new()));
                return;
            }
        };
        match serde_json::from_slice::<Value>(&line) {
            Ok(msg @ Value::Object(_)) => from_upstream(&shared, msg, line),
            Ok(_) => shared.log(&format!(
                "the server {} sent a line that is not a JSON-RPC message; it was not forwarded",
                shared.config.server
            )),
            Err(e) => shared.log(&format!(
                "the server {} sent a line that is not valid JSON ({e}); it was not forwarded",
                shared.config.server
            )),
        }
    }
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
