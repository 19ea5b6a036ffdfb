//! The consumer's side of trust tiers (blocked versions, `[policy]` in a
//! project) through the real
//! binaries: a `toolreg-server` process, tier changes through its HTTP API
//! and its `admin set-tier` subcommand, and `toolreg` run as a process in an
//! agent project.
//!
//! - `toolreg install` refuses a version the registry blocked after it was
//!   pinned, with the registry's reason, and installs it again once the
//!   publisher is promoted; `add` can't pin it meanwhile, and `info` and
//!   `search` show it as blocked.
//! - `[policy] allow = [...]` limits the execution kinds `add` and `install`
//!   accept, for every kind; a refusal names the tool, its kind and the
//!   policy line, and changes nothing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolreg_e2e::{copy_dir, corpus_tool, write_tool_manifest, Server, User};

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// An agent project `name` under `work` whose toolreg.toml is `[registry]` + `rest`.
fn project(server: &Server, work: &Path, name: &str, rest: &str) -> (PathBuf, String) {
    let dir = work.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = format!("[registry]\nurl = \"{}\"\n\n{rest}", server.url);
    std::fs::write(dir.join("toolreg.toml"), &manifest).unwrap();
    (dir, manifest)
}

/// One tool directory of every execution kind, named `<kind>-tool`, under `work`.
fn tools_of_every_kind(work: &Path) -> Vec<(&'static str, PathBuf)> {
    let mut out = Vec::new();
    let mut add = |kind: &'static str, corpus: &str, extra: &[(&str, &str)]| {
        let dir = work.join(format!("{kind}-src"));
        copy_dir(&corpus_tool(corpus), &dir);
        for (file, text) in extra {
            std::fs::write(dir.join(file), text).unwrap();
        }
        write_tool_manifest(&dir, &format!("{kind}-tool"), "1.0.0");
        out.push((kind, dir));
    };
    add(
        "function",
        "matimo/calculator",
        &[(
            "calculator.ts",
            "export default async function () { return { result: 0 }; }\n",
        )],
    );
    add(
        "script",
        "matimo/calculator",
        &[(
            "definition.yaml",
            "name: script-tool\nversion: '1.0.0'\ndescription: Count words.\nparameters:\n  text:\n    type: string\n    required: true\n    description: The text\nexecution:\n  type: script\n  code: 'return params.text.split(\" \").length'\n",
        )],
    );
    add("command", "matimo/valid-tool", &[]);
    add("http", "matimo/github-create-issue", &[]);
    add("schema", "mcp/github-create_issue", &[]);
    add("prompt", "prompt/summarize-text", &[]);
    out
}

/// `PUT /api/v1/publishers/{login}/tier` as `admin`; returns the answer.
fn set_tier_over_http(server: &Server, admin: &str, login: &str, tier: &str) -> Value {
    let res = reqwest::blocking::Client::new()
        .put(format!("{}/api/v1/publishers/{login}/tier", server.url))
        .bearer_auth(admin)
        .json(&json!({ "tier": tier }))
        .send()
        .expect("PUT tier");
    assert_eq!(res.status(), 200, "set {login} to {tier}");
    res.json().expect("JSON")
}

/// Polls `toolreg search QUERY --json` until the hit for `name` has `blocked == want`.
fn search_shows(user: &User, dir: &Path, name: &str, want: bool) -> Value {
    let start = Instant::now();
    loop {
        let out = user.run(dir, &["search", name, "--json"]).ok().json();
        let hit = out["hits"]
            .as_array()
            .and_then(|h| h.iter().find(|h| h["name"] == name).cloned());
        if let Some(hit) = hit {
            if hit["blocked"] == want {
                return hit;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "search never showed {name} blocked={want}: {out}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn install_refuses_a_version_blocked_after_it_was_pinned() {
    let server = Server::start();
    let out = server.admin(&["admin", "create-user", "root", "--admin"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let admin = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let bob = server.create_user("bob", "verified");
    let user = User::new();
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    user.run(work, &["login", "--registry", &server.url, "--token", &bob])
        .ok();
    let cmd = work.join("valid-tool");
    copy_dir(&corpus_tool("matimo/valid-tool"), &cmd);
    user.run(work, &["publish", cmd.to_str().unwrap()]).ok();
    let mcp = work.join("create-issue");
    copy_dir(&corpus_tool("mcp/github-create_issue"), &mcp);
    write_tool_manifest(&mcp, "create-issue", "1.0.0");
    user.run(work, &["publish", mcp.to_str().unwrap()]).ok();

    // Both pinned while bob is verified.
    let (agent, _) = project(&server, work, "agent", "[tools]\n");
    user.run(&agent, &["add", "valid-tool"]).ok();
    user.run(&agent, &["add", "create-issue"]).ok();
    let lock_before = read(&agent.join("toolreg.lock"));

    // Demoted over HTTP: the command version is blocked, the schema one isn't.
    let answer = set_tier_over_http(&server, &admin, "bob", "untrusted");
    assert_eq!(
        answer["blocked"],
        json!([{"name": "valid-tool", "version": "1.0.0"}]),
        "{answer}"
    );

    for args in [&["install"][..], &["install", "--locked"][..]] {
        let run = user.run(&agent, args).code(1);
        let error = run
            .stderr
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_default();
        for needle in [
            "valid-tool 1.0.0 is blocked by the registry",
            "`command`",
            "`verified`",
            "`bob` is now `untrusted`",
        ] {
            assert!(
                error.contains(needle),
                "{args:?}: the error line lacks {needle}: {}",
                run.stderr
            );
        }
        assert!(
            !agent.join(".toolreg/tools/valid-tool").exists(),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert_eq!(
        read(&agent.join("toolreg.lock")),
        lock_before,
        "a refused install changed the lock"
    );

    // Nobody can pin it meanwhile, and info and search say why.
    let (fresh, manifest) = project(&server, work, "fresh", "[tools]\n");
    let run = user.run(&fresh, &["add", "valid-tool"]).code(1);
    assert!(
        run.stderr.contains("blocked") && run.stderr.contains("`command`"),
        "{}",
        run.stderr
    );
    assert_eq!(read(&fresh.join("toolreg.toml")), manifest);
    assert!(!fresh.join("toolreg.lock").exists());
    let info = user
        .run(work, &["info", "valid-tool", "--json"])
        .ok()
        .json();
    assert_eq!(info["versions"][0]["blocked"], true, "{info}");
    assert!(
        info["versions"][0]["blocked_reason"]
            .as_str()
            .unwrap_or_default()
            .contains("`command`"),
        "{info}"
    );
    let hit = search_shows(&user, work, "valid-tool", true);
    assert!(
        hit["blocked_reason"]
            .as_str()
            .unwrap_or_default()
            .contains("`command`"),
        "{hit}"
    );
    // The schema tool is unaffected.
    user.run(&fresh, &["add", "create-issue"]).ok();
    user.run(&fresh, &["install"]).ok();
    assert!(fresh.join(".toolreg/tools/create-issue/1.0.0").is_dir());

    // Promoted again by the operator's subcommand: installs.
    let out = server.admin(&["admin", "set-tier", "bob", "verified"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "bob: untrusted -> verified\nunblocked valid-tool 1.0.0\n"
    );
    user.run(&agent, &["install", "--locked"]).ok();
    assert!(agent.join(".toolreg/tools/valid-tool/1.0.0").is_dir());
    assert!(agent.join(".toolreg/tools/create-issue/1.0.0").is_dir());
    search_shows(&user, work, "valid-tool", false);
}

#[test]
fn the_allow_list_limits_every_kind() {
    let server = Server::start();
    let carol = server.create_user("carol", "trusted");
    let user = User::new();
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    user.run(
        work,
        &["login", "--registry", &server.url, "--token", &carol],
    )
    .ok();
    let tools = tools_of_every_kind(work);
    for (kind, dir) in &tools {
        let out = user
            .run(work, &["publish", dir.to_str().unwrap(), "--json"])
            .ok()
            .json();
        assert_eq!(out["execution"], *kind, "{out}");
    }

    // Without a [policy], every kind may be added.
    let (open, _) = project(&server, work, "open", "[tools]\n");
    for (kind, _) in &tools {
        user.run(&open, &["add", &format!("{kind}-tool")]).ok();
    }
    user.run(&open, &["install"]).ok();

    // A project allowing only kinds that run no code.
    let policy = "[tools]\n\n[policy]\n# no code from bundles here\nallow = [\"http\", \"prompt\", \"schema\"]\n";
    let (agent, manifest) = project(&server, work, "agent", policy);
    let line = manifest
        .lines()
        .position(|l| l.starts_with("allow"))
        .unwrap()
        + 1;
    for (kind, _) in &tools {
        let name = format!("{kind}-tool");
        if ["http", "prompt", "schema"].contains(kind) {
            continue;
        }
        user.run(&agent, &["add", &name]).fails_with(&[
            &name,
            &format!("`{kind}`"),
            &format!("toolreg.toml:{line}"),
            "allow = [\"http\", \"prompt\", \"schema\"]",
        ]);
        assert_eq!(
            read(&agent.join("toolreg.toml")),
            manifest,
            "a refused add of {name} changed toolreg.toml"
        );
        assert!(!agent.join("toolreg.lock").exists());
    }
    for kind in ["http", "prompt", "schema"] {
        user.run(&agent, &["add", &format!("{kind}-tool")]).ok();
    }
    user.run(&agent, &["install"]).ok();
    for kind in ["http", "prompt", "schema"] {
        assert!(agent
            .join(format!(".toolreg/tools/{kind}-tool/1.0.0"))
            .is_dir());
    }

    // A lock made under a looser policy: install --locked refuses the forbidden
    // pins once the policy is tightened, and installs none of them.
    let (strict, _) = project(&server, work, "strict", "[tools]\n");
    user.run(&strict, &["add", "function-tool"]).ok();
    user.run(&strict, &["add", "http-tool"]).ok();
    let tightened = read(&strict.join("toolreg.toml")) + "\n[policy]\nallow = [\"http\"]\n";
    std::fs::write(strict.join("toolreg.toml"), &tightened).unwrap();
    let line = tightened
        .lines()
        .position(|l| l.starts_with("allow"))
        .unwrap()
        + 1;
    for args in [&["install", "--locked"][..], &["install"][..]] {
        user.run(&strict, args).fails_with(&[
            "function-tool 1.0.0",
            "`function`",
            &format!("toolreg.toml:{line}"),
            "allow = [\"http\"]",
        ]);
        assert!(!strict.join(".toolreg/tools/function-tool").exists());
    }

    // An empty list allows nothing; an unknown kind is a clear error.
    let (none, _) = project(&server, work, "none", "[tools]\n\n[policy]\nallow = []\n");
    user.run(&none, &["add", "schema-tool"])
        .fails_with(&["schema-tool", "`schema`", "allow = []"]);
    let (typo, manifest) = project(
        &server,
        work,
        "typo",
        "[tools]\n\n[policy]\nallow = [\"http\", \"functions\"]\n",
    );
    user.run(&typo, &["add", "http-tool"])
        .fails_with(&["policy.allow", "functions"]);
    assert_eq!(read(&typo.join("toolreg.toml")), manifest);
}
