//! `toolreg link CLIENT --proxy NAME`, `unlink CLIENT --proxy NAME` and
//! what `link --list` says about every server entry, with the real binary
//! over Claude Code's `.mcp.json`, VS Code's `.vscode/mcp.json` (JSONC)
//! and Codex's `.codex/config.toml`: the entry is put behind `toolreg mcp
//! proxy` keeping its other settings, the lock records the server, unlink
//! gives back the file as it was, and the written entry launches a proxy
//! that answers MCP.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use toolreg_e2e::mcp::write;
use toolreg_e2e::{bin, workspace_root, User};

struct Project {
    user: User,
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        Project {
            user: User::new(),
            _dir: dir,
            root,
        }
    }

    fn toolreg(&self, args: &[&str]) -> toolreg_e2e::Run {
        self.user.run(&self.root, args)
    }

    fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.root.join(file)).unwrap()
    }

    fn lock(&self) -> String {
        std::fs::read_to_string(self.root.join("toolreg.lock")).unwrap_or_default()
    }
}

fn jsonc(text: &str) -> Value {
    jsonc_parser::parse_to_serde_value::<Value>(text, &Default::default())
        .unwrap_or_else(|e| panic!("{e}:\n{text}"))
}

fn toml(text: &str) -> Value {
    let v: toml::Value = toml::from_str(text).unwrap();
    serde_json::to_value(v).unwrap()
}

fn exe() -> String {
    bin("toolreg").canonicalize().unwrap().display().to_string()
}

const CLAUDE: &str = r#"{
  "mcpServers": {
    "everything": {"type": "stdio", "command": "npx", "args": ["-y", "server-x@1.0.0"], "env": {"API_KEY": "k"}},
    "remote": {"type": "http", "url": "https://mcp.example.com/mcp"}
  }
}
"#;

const VSCODE: &str = "{\n  // the workspace's servers\n  \"servers\": {\n    \"remote\": {\"type\": \"http\", \"url\": \"https://mcp.example.com/mcp\"}, // keep me\n    \"local\": {\"type\": \"stdio\", \"command\": \"node\", \"args\": [\"srv.js\"], \"envFile\": \"${workspaceFolder}/.env\"}\n  },\n  \"inputs\": []\n}\n";

const CODEX: &str = "# Codex, this project\nmodel = \"o4-mini\"\n\n[mcp_servers.docs]\ncommand = \"uvx\" # the docs server\nargs = [\"docs-mcp\"]\nstartup_timeout_sec = 20\n\n[mcp_servers.private]\nurl = \"https://private.example.com/mcp\"\nbearer_token_env_var = \"PRIVATE_TOKEN\"\n";

#[test]
fn an_entry_goes_behind_the_proxy_keeping_its_settings_and_comes_back_as_it_was() {
    let p = Project::new();
    let root = p.root.display().to_string();
    write(&p.root.join(".mcp.json"), CLAUDE);
    write(&p.root.join(".vscode/mcp.json"), VSCODE);
    write(&p.root.join(".codex/config.toml"), CODEX);

    // Before: every server runs directly, unpinned.
    let list = p.toolreg(&["link", "--list", "--json"]).ok().json();
    let runs = |list: &Value, client: &str, server: &str| -> String {
        let row = list
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["client"] == client)
            .unwrap_or_else(|| panic!("{client} not listed: {list:#}"));
        let s = row["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == server)
            .unwrap_or_else(|| panic!("{server} not in {row}"));
        format!(
            "{} {}",
            s["runs"].as_str().unwrap(),
            s["detail"].as_str().unwrap()
        )
    };
    let before = runs(&list, "claude-code", "everything");
    assert!(
        before.starts_with("UNPINNED runs `npx -y server-x@1.0.0` directly")
            && before.contains("toolreg link claude-code --proxy everything"),
        "{before}"
    );
    assert!(
        runs(&list, "vscode", "remote").starts_with("UNPINNED runs `https://mcp.example.com/mcp`")
    );
    assert!(runs(&list, "codex", "docs").starts_with("UNPINNED runs `uvx docs-mcp`"));

    // Claude Code: the entry's own command goes behind the proxy.
    let linked = p
        .toolreg(&["link", "claude-code", "--proxy", "everything"])
        .ok();
    assert!(
        linked.stdout.contains("linked behind toolreg mcp proxy"),
        "{}",
        linked.stdout
    );
    let doc = jsonc(&p.read(".mcp.json"));
    assert_eq!(
        doc["mcpServers"]["everything"],
        json!({"type": "stdio", "command": exe(), "env": {"API_KEY": "k"},
               "args": ["mcp", "proxy", "--pin", "everything", "--project", root,
                        "--", "npx", "-y", "server-x@1.0.0"]})
    );
    assert_eq!(
        doc["mcpServers"]["remote"],
        jsonc(CLAUDE)["mcpServers"]["remote"]
    );
    assert!(
        p.lock().contains("[[server]]\nname = \"everything\"\ncommand = [\"npx\", \"-y\", \"server-x@1.0.0\"]\ntools = {}\n"),
        "{}",
        p.lock()
    );
    let again = p
        .toolreg(&["link", "claude-code", "--proxy", "everything"])
        .ok();
    assert!(again.stdout.contains("already linked"), "{}", again.stdout);
    let list = p.toolreg(&["link", "--list", "--json"]).ok().json();
    let now = runs(&list, "claude-code", "everything");
    assert!(
        now.starts_with("proxy toolreg mcp proxy --pin everything in front of `npx -y server-x@1.0.0`: nothing pinned yet"),
        "{now}"
    );
    let text = p.toolreg(&["link", "--list"]).ok().stdout;
    assert!(text.contains("  everything             proxy"), "{text}");
    assert!(text.contains("  remote                 UNPINNED"), "{text}");
    p.toolreg(&["unlink", "claude-code", "--proxy", "everything"])
        .ok();
    assert_eq!(jsonc(&p.read(".mcp.json")), jsonc(CLAUDE));
    let gone = p
        .toolreg(&["unlink", "claude-code", "--proxy", "everything"])
        .ok();
    assert!(
        gone.stdout.contains("nothing to restore"),
        "{}",
        gone.stdout
    );

    // VS Code: a URL entry becomes a stdio entry running the proxy with
    // --url; the comments stay; unlink gives the URL entry back.
    p.toolreg(&["link", "vscode", "--proxy", "remote"]).ok();
    let text = p.read(".vscode/mcp.json");
    assert!(text.contains("// the workspace's servers"), "{text}");
    let doc = jsonc(&text);
    assert_eq!(
        doc["servers"]["remote"],
        json!({"type": "stdio", "command": exe(),
               "args": ["mcp", "proxy", "--pin", "remote", "--project", root,
                        "--url", "https://mcp.example.com/mcp"]})
    );
    assert_eq!(doc["servers"]["local"], jsonc(VSCODE)["servers"]["local"]);
    assert!(
        p.lock()
            .contains("name = \"remote\"\nurl = \"https://mcp.example.com/mcp\"\n"),
        "{}",
        p.lock()
    );
    p.toolreg(&["unlink", "vscode", "--proxy", "remote"]).ok();
    assert_eq!(jsonc(&p.read(".vscode/mcp.json")), jsonc(VSCODE));

    // Codex: a new entry from a command after `--`, no allow list (the
    // proxy withholds); an existing one keeps its timeout; unlink of the
    // new one removes it.
    let raw = workspace_root().join("tests/mcp/proxy/raw_server.py");
    let raw = raw.display().to_string();
    p.toolreg(&["link", "codex", "--proxy", "raw", "--", "python3", &raw])
        .ok();
    p.toolreg(&["link", "codex", "--proxy", "docs"]).ok();
    let text = p.read(".codex/config.toml");
    assert!(text.contains("# Codex, this project"), "{text}");
    let doc = toml(&text);
    assert_eq!(
        doc["mcp_servers"]["docs"]["startup_timeout_sec"], 20,
        "{text}"
    );
    assert_eq!(doc["mcp_servers"]["docs"]["command"], exe());
    let entry = doc["mcp_servers"]["raw"].clone();
    assert_eq!(
        entry,
        json!({"command": exe(),
               "args": ["mcp", "proxy", "--pin", "raw", "--project", root, "--", "python3", raw]}),
        "{text}"
    );
    // The entry as the agent would launch it: a proxy that answers MCP.
    assert_eq!(launch_and_initialize(&entry, &p), "raw");
    p.toolreg(&["unlink", "codex", "--proxy", "raw"]).ok();
    p.toolreg(&["unlink", "codex", "--proxy", "docs"]).ok();
    assert_eq!(toml(&p.read(".codex/config.toml")), toml(CODEX));
    assert!(p
        .read(".codex/config.toml")
        .contains("# Codex, this project"));
}

/// Run an entry's command and args as an agent would, with the project's
/// user, and return the `serverInfo.name` its `initialize` answer gives.
fn launch_and_initialize(entry: &Value, p: &Project) -> String {
    let args: Vec<String> = serde_json::from_value(entry["args"].clone()).unwrap();
    let mut child = Command::new(entry["command"].as_str().unwrap())
        .args(&args)
        .current_dir("/")
        .env("HOME", p.user.home.path())
        .env("TOOLREG_CONFIG_DIR", &p.user.config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).unwrap();
    stdin.write_all(b"\n").unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    drop(stdin);
    let _ = child.wait();
    let answer: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    answer["result"]["serverInfo"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn entries_that_cant_be_proxied_are_refused_and_nothing_is_written() {
    let p = Project::new();
    write(&p.root.join(".mcp.json"), CLAUDE);
    write(&p.root.join(".codex/config.toml"), CODEX);
    let cases: [(&[&str], &str); 6] = [
        (
            &["link", "claude-code", "--proxy", "missing"],
            "Claude Code has no entry missing to put behind the proxy; give the server's command after `--`, or --url",
        ),
        (
            &["link", "codex", "--proxy", "private"],
            "the entry private sends `bearer_token_env_var` to its server",
        ),
        (
            &["link", "claude-code", "--proxy", "Bad/Name"],
            "a server name is 1 to 64 of a-z",
        ),
        (
            &["link", "claude-code", "--proxy", "remote", "--url", "ftp://x.example/mcp"],
            "the scheme is `ftp`",
        ),
        (
            &["unlink", "claude-code", "--proxy", "everything", "--", "npx"],
            "unlink --proxy takes no server",
        ),
        (
            &["link", "continue", "--proxy", "everything", "--", "npx"],
            "Continue keeps one server per file in its project config; use --scope user",
        ),
    ];
    for (args, why) in cases {
        let run = p.toolreg(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(why), "{args:?}: {}", run.stderr);
    }
    assert_eq!(p.read(".mcp.json"), CLAUDE);
    assert_eq!(p.read(".codex/config.toml"), CODEX);
    assert!(!Path::new(&p.root.join("toolreg.lock")).exists());
    assert!(!p.root.join(".continue").exists());
}
