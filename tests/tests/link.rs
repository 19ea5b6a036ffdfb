//! `toolreg link CLIENT`, `unlink` and `link --list` for every agent, with
//! the real binary: each written file is read back with a real parser
//! (serde_json for JSON, jsonc-parser where the agent allows comments, the
//! `toml` crate, serde-saphyr for YAML) and compared with the shape and
//! place the agent's documentation gives; the entry another tool wrote and
//! the comments stay; a second run changes nothing; unlink removes only
//! toolreg's entry; a corrupt file is refused, naming its line and column,
//! with nothing written.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolreg_e2e::mcp::{write, Workspace};
use toolreg_e2e::{bin, copy_dir, corpus_tool, write_tool_manifest};

/// A project pinning a prompt tool and a schema tool, installed.
fn project() -> Workspace {
    let mut ws = Workspace::start();
    let prompt = ws.root().join("summarize-text");
    copy_dir(&corpus_tool("prompt/summarize-text"), &prompt);
    let schema = ws.root().join("create-issue");
    copy_dir(&corpus_tool("mcp/github-create_issue"), &schema);
    write_tool_manifest(&schema, "github-create-issue", "1.0.0");
    ws.publish_and_add("summarize-text", &prompt);
    ws.publish_and_add("github-create-issue", &schema);
    ws.install_and_stop_registry();
    ws.agent = ws.agent.canonicalize().unwrap();
    ws
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Json,
    Jsonc,
    Toml,
    Yaml,
}

/// What each agent's documentation says: the file (relative to the
/// project, or to $HOME with `~/`), its format, the other entry a user
/// already has there (with comments where the format allows), where the
/// servers are, and the entry that launches `toolreg mcp serve`.
struct Documented {
    client: &'static str,
    file: &'static str,
    format: Format,
    seed: &'static str,
    servers: &'static [&'static str],
    entry: fn(&str, &[&str], &[&str]) -> Value,
}

const TOOLS: &[&str] = &["create_issue", "summarize-text"];

fn table() -> Vec<Documented> {
    let mcp_servers =
        r#"{"mcpServers": {"other": {"command": "npx", "args": ["-y", "other-server"]}}}"#;
    vec![
        Documented {
            client: "claude-code",
            file: ".mcp.json",
            format: Format::Json,
            seed: mcp_servers,
            servers: &["mcpServers"],
            entry: |c, a, _| json!({"type": "stdio", "command": c, "args": a}),
        },
        Documented {
            client: "claude-desktop",
            file: "~/.config/Claude/claude_desktop_config.json",
            format: Format::Json,
            seed: mcp_servers,
            servers: &["mcpServers"],
            entry: |c, a, _| json!({"command": c, "args": a}),
        },
        Documented {
            client: "cursor",
            file: ".cursor/mcp.json",
            format: Format::Json,
            seed: mcp_servers,
            servers: &["mcpServers"],
            entry: |c, a, _| json!({"command": c, "args": a}),
        },
        Documented {
            client: "vscode",
            file: ".vscode/mcp.json",
            format: Format::Jsonc,
            seed: "{\n  // servers of this workspace\n  \"servers\": {\n    \"other\": {\"type\": \"http\", \"url\": \"https://example.com/mcp\"}, // keep\n  },\n  \"inputs\": [],\n}\n",
            servers: &["servers"],
            entry: |c, a, _| json!({"type": "stdio", "command": c, "args": a}),
        },
        Documented {
            client: "windsurf",
            file: "~/.codeium/windsurf/mcp_config.json",
            format: Format::Json,
            seed: mcp_servers,
            servers: &["mcpServers"],
            entry: |c, a, _| json!({"command": c, "args": a}),
        },
        Documented {
            client: "zed",
            file: ".zed/settings.json",
            format: Format::Jsonc,
            seed: "// Zed settings\n{\n  \"theme\": \"One Dark\",\n  \"context_servers\": {\n    \"other\": {\"command\": \"other\", \"args\": []}\n  }\n}\n",
            servers: &["context_servers"],
            entry: |c, a, _| json!({"command": c, "args": a}),
        },
        Documented {
            client: "codex",
            file: ".codex/config.toml",
            format: Format::Toml,
            seed: "# Codex, this project\nmodel = \"o4-mini\"\n\n[mcp_servers.other]\ncommand = \"npx\" # another server\nargs = [\"-y\", \"other-server\"]\n",
            servers: &["mcp_servers"],
            entry: |c, a, t| json!({"command": c, "args": a, "enabled_tools": t}),
        },
        Documented {
            client: "gemini",
            file: ".gemini/settings.json",
            format: Format::Json,
            seed: r#"{"theme": "Dracula", "mcpServers": {"other": {"httpUrl": "https://example.com/mcp"}}}"#,
            servers: &["mcpServers"],
            entry: |c, a, t| json!({"command": c, "args": a, "includeTools": t}),
        },
        Documented {
            client: "cline",
            file: "~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            format: Format::Json,
            seed: mcp_servers,
            servers: &["mcpServers"],
            entry: |c, a, _| json!({"command": c, "args": a, "disabled": false}),
        },
        Documented {
            client: "goose",
            file: "~/.config/goose/config.yaml",
            format: Format::Yaml,
            seed: "# goose\nGOOSE_PROVIDER: anthropic\nextensions:\n  developer:\n    bundled: true\n    enabled: true # on\n    name: developer\n    timeout: 300\n    type: builtin\nGOOSE_MODE: smart_approve\n",
            servers: &["extensions"],
            entry: |c, a, _| {
                json!({"name": "toolreg", "type": "stdio", "cmd": c, "args": a, "enabled": true, "bundled": false,
                       "description": "The project's pinned tools, served by toolreg", "timeout": 300})
            },
        },
        Documented {
            client: "kiro",
            file: ".kiro/settings/mcp.json",
            format: Format::Json,
            seed: mcp_servers,
            servers: &["mcpServers"],
            entry: |c, a, _| json!({"command": c, "args": a, "disabled": false}),
        },
        Documented {
            client: "copilot-cli",
            file: ".github/mcp.json",
            format: Format::Json,
            seed: mcp_servers,
            servers: &["mcpServers"],
            entry: |c, a, t| json!({"type": "stdio", "command": c, "args": a, "tools": t}),
        },
    ]
}

fn parse(format: Format, text: &str) -> Value {
    match format {
        Format::Json => serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}:\n{text}")),
        Format::Jsonc => jsonc_parser::parse_to_serde_value(text, &Default::default())
            .unwrap_or_else(|e| panic!("{e}:\n{text}")),
        Format::Toml => serde_json::to_value(
            toml::from_str::<toml::Value>(text).unwrap_or_else(|e| panic!("{e}:\n{text}")),
        )
        .unwrap(),
        Format::Yaml => serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("{e}:\n{text}")),
    }
}

fn at<'a>(doc: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(doc, |v, k| &v[*k])
}

fn path_of(p: &Workspace, file: &str) -> PathBuf {
    match file.strip_prefix("~/") {
        Some(rel) => p.user.home.path().join(rel),
        None => p.agent.join(file),
    }
}

#[test]
fn every_agent_gets_its_documented_entry_idempotently_beside_what_was_there() {
    let p = project();
    let command = bin("toolreg").canonicalize().unwrap().display().to_string();
    let agent = p.agent.display().to_string();
    let args = ["mcp", "serve", "--project", agent.as_str()];
    for d in table() {
        let path = path_of(&p, d.file);
        write(&path, d.seed);
        let before = parse(d.format, d.seed);

        // --dry-run shows the change and writes nothing
        let dry = p.user.run(&p.agent, &["link", d.client, "--dry-run"]).ok();
        assert!(
            dry.stdout.contains("+") && dry.stdout.contains("toolreg"),
            "{}: {}",
            d.client,
            dry.stdout
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            d.seed,
            "{}",
            d.client
        );

        p.user.run(&p.agent, &["link", d.client]).ok();
        let text = std::fs::read_to_string(&path).unwrap();
        let doc = parse(d.format, &text);
        assert_eq!(
            at(&doc, d.servers)["toolreg"],
            (d.entry)(&command, &args, TOOLS),
            "{}: {text}",
            d.client
        );
        // everything else as it was, comments included
        let mut rest = doc.clone();
        at_mut(&mut rest, d.servers)
            .as_object_mut()
            .unwrap()
            .remove("toolreg");
        assert_eq!(rest, before, "{}: {text}", d.client);
        let comments = d
            .seed
            .lines()
            .filter_map(|l| l.split_once("// ").or_else(|| l.split_once("# ")))
            .map(|(_, c)| c.trim());
        for comment in comments.filter(|_| d.format != Format::Json) {
            assert!(
                text.contains(comment),
                "{}: lost `{comment}` in\n{text}",
                d.client
            );
        }
        // the previous file is kept
        let backup = PathBuf::from(format!("{}.toolreg.bak", path.display()));
        assert_eq!(
            std::fs::read_to_string(&backup).unwrap(),
            d.seed,
            "{}",
            d.client
        );

        // a second run changes nothing
        let again = p.user.run(&p.agent, &["link", d.client]).ok();
        assert!(
            again.stdout.contains("already linked"),
            "{}: {}",
            d.client,
            again.stdout
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "{}",
            d.client
        );

        // unlink takes out only toolreg's entry
        p.user.run(&p.agent, &["unlink", d.client]).ok();
        let after = std::fs::read_to_string(&path).unwrap();
        assert_eq!(parse(d.format, &after), before, "{}: {after}", d.client);
        let gone = p.user.run(&p.agent, &["unlink", d.client]).ok();
        assert!(
            gone.stdout.contains("not linked"),
            "{}: {}",
            d.client,
            gone.stdout
        );
        p.user.run(&p.agent, &["link", d.client]).ok();
    }
    // --list: every agent found, and its entry current
    let list = p
        .user
        .run(&p.agent, &["link", "--list", "--json"])
        .ok()
        .json();
    for d in table() {
        let row = list
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["client"] == d.client && r["file"] == path_of(&p, d.file).display().to_string()
            })
            .unwrap_or_else(|| panic!("{} not listed: {list:#}", d.client));
        assert_eq!(row["status"], "current", "{row}");
    }
    // an entry that points elsewhere is stale
    let mcp = p.agent.join(".mcp.json");
    let text = std::fs::read_to_string(&mcp)
        .unwrap()
        .replace("--project", "--elsewhere");
    std::fs::write(&mcp, text).unwrap();
    let list = p.user.run(&p.agent, &["link", "--list"]).ok();
    assert!(
        list.stdout.contains("claude-code     project  stale"),
        "{}",
        list.stdout
    );
}

fn at_mut<'a>(doc: &'a mut Value, path: &[&str]) -> &'a mut Value {
    path.iter().fold(doc, |v, k| &mut v[*k])
}

#[test]
fn continue_gets_a_block_file_per_project_and_an_item_in_the_user_list() {
    let p = project();
    let command = bin("toolreg").canonicalize().unwrap().display().to_string();
    let agent = p.agent.display().to_string();
    let item = json!({"name": "toolreg", "command": command, "args": ["mcp", "serve", "--project", agent]});

    p.user.run(&p.agent, &["link", "continue"]).ok();
    let block = p.agent.join(".continue/mcpServers/toolreg.yaml");
    let doc: Value = serde_saphyr::from_str(&std::fs::read_to_string(&block).unwrap()).unwrap();
    assert_eq!(
        doc,
        json!({"name": "toolreg", "version": "0.0.1", "schema": "v1", "mcpServers": [item]})
    );
    p.user.run(&p.agent, &["unlink", "continue"]).ok();
    assert!(!block.exists());

    let config = p.user.home.path().join(".continue/config.yaml");
    let seed = "name: My assistant\nversion: 1.0.0\nschema: v1\nmodels: []\n# servers\nmcpServers:\n  - name: other\n    command: npx\n";
    write(&config, seed);
    p.user
        .run(&p.agent, &["link", "continue", "--scope", "user"])
        .ok();
    let text = std::fs::read_to_string(&config).unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(
        doc["mcpServers"],
        json!([{"name": "other", "command": "npx"}, item]),
        "{text}"
    );
    assert!(text.contains("# servers"), "{text}");
    p.user
        .run(&p.agent, &["unlink", "continue", "--scope", "user"])
        .ok();
    let back: Value = serde_saphyr::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(back, serde_saphyr::from_str::<Value>(seed).unwrap());
}

#[test]
fn user_scope_names_and_scopes_an_agent_lacks() {
    let p = project();
    // Claude Code's user scope is ~/.claude.json's top-level mcpServers
    let claude = p.user.home.path().join(".claude.json");
    write(
        &claude,
        r#"{"numStartups": 3, "projects": {"/x": {"mcpServers": {}}}}"#,
    );
    p.user
        .run(
            &p.agent,
            &[
                "link",
                "claude-code",
                "--scope",
                "user",
                "--name",
                "pins.main",
            ],
        )
        .ok();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&claude).unwrap()).unwrap();
    assert_eq!(doc["numStartups"], 3);
    assert_eq!(
        doc["mcpServers"]["pins.main"]["args"][3],
        p.agent.display().to_string()
    );
    // Codex honours CODEX_HOME
    let codex_home = p.user.home.path().join("codex-home");
    let run = p
        .user
        .run_with_env(
            &p.agent,
            &["link", "codex", "--scope", "user"],
            &[("CODEX_HOME".into(), codex_home.display().to_string())],
        )
        .ok();
    assert!(
        run.stdout.contains("codex-home/config.toml"),
        "{}",
        run.stdout
    );
    let bad = p
        .user
        .run(&p.agent, &["link", "claude-desktop", "--scope", "project"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(
        bad.stderr.contains("Claude Desktop has no project config"),
        "{}",
        bad.stderr
    );
    let bad = p
        .user
        .run(&p.agent, &["link", "claude-code", "--name", "../x"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

#[test]
fn a_corrupt_config_is_refused_naming_line_and_column_and_nothing_is_written() {
    let p = project();
    for (client, file, text, at) in [
        (
            "cursor",
            ".cursor/mcp.json",
            "{\n  \"mcpServers\": {\n    \"a\": \n  }\n}\n",
            ":4:3",
        ),
        (
            "codex",
            ".codex/config.toml",
            "model = \"x\"\n[mcp_servers.a\ncommand = \"y\"\n",
            ":2:",
        ),
        (
            "goose",
            "~/.config/goose/config.yaml",
            "extensions:\n  a: [1, 2\n  b: 3\n",
            ":",
        ),
    ] {
        let path = path_of(&p, file);
        write(&path, text);
        let run = p.user.run(&p.agent, &["link", client]);
        let run = run.fails_with(&[&format!("{}{at}", path.display()), "nothing was written"]);
        assert!(run.stdout.is_empty());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{client}");
        assert!(!Path::new(&format!("{}.toolreg.bak", path.display())).exists());
    }
}
