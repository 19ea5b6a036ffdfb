//! `toolreg mcp proxy` in front of the MCP project's own reference server,
//! `@modelcontextprotocol/server-everything` from npm (pinned in
//! scripts/sdk-check/package.json, installed by its provisioning), with the
//! MCP Python SDK's `ClientSession` as the agent
//! (tests/mcp/proxy/client.py): record, then a clean session with a call,
//! the progress of its long-running tool and a cancellation passing
//! through.

use std::process::Command;

use serde_json::{json, Value};
use toolreg_e2e::mcp::{run_client, Sdk};
use toolreg_e2e::{bin, workspace_root, User};

fn session(
    sdk: &Sdk,
    user: &User,
    root: &std::path::Path,
    flags: &[&str],
    plan: Value,
) -> (Vec<Value>, String) {
    let server = sdk
        .node
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        server.is_file(),
        "server-everything is not installed at {}",
        server.display()
    );
    let mut cmd = Command::new(&sdk.python);
    cmd.arg(workspace_root().join("tests/mcp/proxy/client.py"))
        .args(["--", &bin("toolreg").display().to_string()])
        .args(["mcp", "proxy", "--pin", "everything"])
        .args(flags)
        .args(["--", "node", &server.display().to_string(), "stdio"])
        .current_dir(root)
        .env("HOME", user.home.path())
        .env("TOOLREG_CONFIG_DIR", &user.config);
    let run = run_client(cmd, &[], &plan);
    (run.out["results"].as_array().unwrap().clone(), run.stderr)
}

fn names(v: &Value) -> Vec<String> {
    serde_json::from_value(v["names"].clone()).unwrap_or_else(|_| panic!("no names in {v}"))
}

#[test]
fn server_everything_is_recorded_then_proxied_with_progress_and_cancellation() {
    let Some(sdk) = Sdk::find() else { return };
    let user = User::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();

    let (r, err) = session(
        &sdk,
        &user,
        root,
        &["--record"],
        json!({"steps": [{"op": "list"}]}),
    );
    let recorded = names(&r[0]);
    for tool in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(recorded.contains(&tool.to_string()), "{recorded:?}\n{err}");
    }
    let lock = std::fs::read_to_string(root.join("toolreg.lock")).unwrap();
    assert!(
        lock.contains("name = \"everything\"\ncommand = [\"node\", "),
        "{lock}"
    );
    assert!(lock.contains("get-sum = \"sha256:"), "{lock}");

    let (r, err) = session(
        &sdk,
        &user,
        root,
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
        names(&r[0]),
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
