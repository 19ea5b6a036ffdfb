//! `toolreg mcp proxy` in front of the MCP project's own reference server,
//! `@modelcontextprotocol/server-everything` from npm (pinned in
//! scripts/sdk-check/package.json, installed by its provisioning), with the
//! MCP Python SDK's `ClientSession` as the agent
//! (tests/mcp/proxy/client.py): record, then a clean session with a call,
//! the progress of its long-running tool and a cancellation passing
//! through.

use serde_json::{json, Value};
use toolreg_e2e::mcp::{listed_names, ProxyProject, Sdk};

/// The agent running `plan` against `toolreg mcp proxy --pin everything
/// FLAGS -- node server-everything stdio` in `project`.
fn session(sdk: &Sdk, project: &ProxyProject, flags: &[&str], plan: Value) -> (Vec<Value>, String) {
    let server = sdk
        .node
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        server.is_file(),
        "server-everything is not installed at {}",
        server.display()
    );
    let mut args: Vec<String> = vec!["--pin".into(), "everything".into()];
    args.extend(flags.iter().map(|s| s.to_string()));
    args.extend([
        "--".into(),
        "node".into(),
        server.display().to_string(),
        "stdio".into(),
    ]);
    project.agent(&args, &[], plan)
}

#[test]
fn server_everything_is_recorded_then_proxied_with_progress_and_cancellation() {
    let Some(sdk) = Sdk::find() else { return };
    let project = ProxyProject::new(&sdk);

    let (r, err) = session(
        &sdk,
        &project,
        &["--record"],
        json!({"steps": [{"op": "list"}]}),
    );
    let recorded = listed_names(&r[0]);
    for tool in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(recorded.contains(&tool.to_string()), "{recorded:?}\n{err}");
    }
    let lock = project.lock();
    assert!(
        lock.contains("name = \"everything\"\ncommand = [\"node\", "),
        "{lock}"
    );
    assert!(lock.contains("get-sum = \"sha256:"), "{lock}");

    let (r, err) = session(
        &sdk,
        &project,
        &[],
        json!({"steps": [
            {"op": "list"},
            {"op": "call", "name": "get-sum", "args": {"a": 2, "b": 3}},
            {"op": "progress", "name": "trigger-long-running-operation",
             "args": {"duration": 0.6, "steps": 3}},
            {"op": "cancel", "name": "trigger-long-running-operation",
             "args": {"duration": 20, "steps": 4}, "after": 0.5},
            {"op": "call", "name": "echo", "args": {"message": "still here"}},
        ]}),
    );
    assert_eq!(
        listed_names(&r[0]),
        recorded,
        "a clean session lists what was recorded\n{err}"
    );
    assert!(
        r[1]["text"].as_str().unwrap_or_default().contains('5'),
        "{r:?}\n{err}"
    );
    let progress = r[2]["progress"].as_array().cloned().unwrap_or_default();
    assert_eq!(progress.len(), 3, "{r:?}\n{err}");
    assert_eq!(progress[2][0].as_f64(), Some(3.0), "{progress:?}");
    assert_eq!(r[3]["cancelled"], true, "{r:?}");
    assert!(
        r[4]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("still here"),
        "the session goes on after a cancel: {r:?}\n{err}"
    );
    assert!(!err.contains("withheld"), "{err}");
}
