//! Every failure the CLI must report clearly (one `error:` line, then
//! detail, exit 1): network errors, problem+json answers, tampered
//! downloads, a corrupt lock, `install --locked` with a lock out of date,
//! and a version the registry blocks.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolreg_e2e::{
    copy_dir, corpus_tool, signed_in, write_tool_manifest, ClosedPort, FakeRegistry, Reply, Server,
    User,
};

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// An MCP tool directory `name` at `version` under `work`.
fn mcp_tool(work: &Path, name: &str, version: &str) -> PathBuf {
    let dir = work.join(format!("{name}-{version}"));
    copy_dir(&corpus_tool("mcp/github-create_issue"), &dir);
    write_tool_manifest(&dir, name, version);
    dir
}

/// A project directory with `toolreg.toml` text.
fn project(work: &Path, name: &str, manifest: &str) -> PathBuf {
    let dir = work.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("toolreg.toml"), manifest).unwrap();
    dir
}

/// A server with alice (trusted) logged in and `create-issue` 1.0.0 published.
fn published() -> (Server, User, tempfile::TempDir) {
    let server = Server::start();
    let (user, work) = signed_in(&server, "alice", "trusted");
    let dir = mcp_tool(work.path(), "create-issue", "1.0.0");
    user.run(work.path(), &["publish", dir.to_str().unwrap()])
        .ok();
    (server, user, work)
}

#[test]
fn network_errors_name_the_url_and_the_cause() {
    let user = User::new();
    let work = tempfile::tempdir().unwrap();
    let port = ClosedPort::new();
    let closed = port.url();
    let run = user.run(work.path(), &["search", "x", "--registry", &closed]);
    let run = run.fails_with(&["could not reach the registry", &closed]);
    assert!(
        run.stderr.to_lowercase().contains("refused"),
        "the cause is shown: {}",
        run.stderr
    );

    // via the environment and via the project's [registry] url
    let mut cmd = user.command(work.path(), &["info", "calculator"]);
    cmd.env("TOOLREG_REGISTRY", &closed);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&closed));

    let manifest = format!("[registry]\nurl = \"{closed}\"\n\n[tools]\n");
    let agent = project(work.path(), "agent", &manifest);
    user.run(&agent, &["add", "calculator"])
        .fails_with(&["could not reach the registry", &closed]);
    assert_eq!(
        read(&agent.join("toolreg.toml")),
        manifest,
        "a failed add changed toolreg.toml"
    );
    assert!(!agent.join("toolreg.lock").exists());

    // --json puts a machine-readable error on stdout
    let run = user
        .run(
            work.path(),
            &["search", "x", "--registry", &closed, "--json"],
        )
        .code(1);
    assert!(run.json()["error"].as_str().unwrap().contains(&closed));

    // publish validates locally before it talks to the registry: every problem, no upload
    let bad = work.path().join("bad");
    copy_dir(&corpus_tool("mcp/github-create_issue"), &bad);
    let run = user.run(
        work.path(),
        &[
            "publish",
            bad.to_str().unwrap(),
            "--registry",
            &closed,
            "--token",
            "trg_x",
        ],
    );
    let run = run.fails_with(&["not a valid tool definition", "version"]);
    assert!(!run.stderr.contains("could not reach"), "{}", run.stderr);

    // a registry URL that is not a URL is a usage error
    user.run(work.path(), &["search", "x", "--registry", "not a url"])
        .code(2);
}

#[test]
fn problem_json_answers_show_the_detail() {
    let (server, user, work) = published();
    let work = work.path();
    // the same version twice: 409 with the server's explanation
    let dir = work.join("create-issue-1.0.0");
    let run = user
        .run(work, &["publish", dir.to_str().unwrap()])
        .fails_with(&["409", "already published"]);
    assert!(
        run.stderr.lines().count() >= 2,
        "detail after the first line: {}",
        run.stderr
    );
    // a bad token: 401
    let run = user.run(
        work,
        &["publish", dir.to_str().unwrap(), "--token", "trg_nope"],
    );
    run.fails_with(&["401"]);
    // not an owner: 403
    let bob = server.create_user("bob", "trusted");
    user.run(work, &["yank", "create-issue@1.0.0", "--token", &bob])
        .fails_with(&["403"]);
    // unknown tool / version: 404
    user.run(work, &["info", "no-such-tool"])
        .fails_with(&["404", "no-such-tool"]);
    user.run(work, &["info", "create-issue@9.9.9"])
        .fails_with(&["404"]);
    let agent = project(work, "agent", "");
    user.run(&agent, &["add", "create-issue@^2"])
        .fails_with(&["404", "1.0.0"]);
    // no token at all for a command that needs one
    let stranger = User::new();
    stranger
        .run(
            work,
            &["yank", "create-issue@1.0.0", "--registry", &server.url],
        )
        .fails_with(&["no token for", "toolreg login"]);
    // a malformed spec is a usage error before any request
    user.run(work, &["yank", "create-issue"]).code(2);
    user.run(&agent, &["add", "create-issue@not-a-req"]).code(2);
}

#[test]
fn validation_problems_from_the_registry_are_listed_with_their_paths() {
    let fake = FakeRegistry::start(|_, _| {
        Reply::problem(
            422,
            json!({"type": "https://toolreg.dev/problems/invalid-definition", "title": "Invalid tool definition",
                   "status": 422, "detail": "2 problems in tool.json",
                   "errors": [{"path": "inputSchema.type", "message": "must be object"},
                              {"path": "version", "message": "is not SemVer", "fix": "use 1.0.0"}]}),
        )
    });
    let user = User::new();
    let work = tempfile::tempdir().unwrap();
    let dir = mcp_tool(work.path(), "create-issue", "1.0.0");
    let run = user
        .run(
            work.path(),
            &[
                "publish",
                dir.to_str().unwrap(),
                "--registry",
                &fake.url,
                "--token",
                "trg_x",
            ],
        )
        .fails_with(&["2 problems in tool.json", "422"]);
    assert!(
        run.stderr.contains("\n  inputSchema.type: must be object"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("\n  version: is not SemVer (fix: use 1.0.0)"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_download_that_does_not_match_the_locked_sha256_is_never_unpacked() {
    // 1. the lock was tampered with (or the registry changed the bytes): real server
    let (server, user, work) = published();
    let work = work.path();
    let agent = project(
        work,
        "agent",
        &format!("[registry]\nurl = \"{}\"\n", server.url),
    );
    user.run(&agent, &["add", "create-issue"]).ok();
    let lock = read(&agent.join("toolreg.lock"));
    let real = lock
        .lines()
        .find_map(|l| l.strip_prefix("sha256 = \""))
        .unwrap()
        .trim_end_matches('"')
        .to_string();
    let forged = "0".repeat(64);
    std::fs::write(agent.join("toolreg.lock"), lock.replace(&real, &forged)).unwrap();
    for args in [&["install"][..], &["install", "--locked"][..]] {
        user.run(&agent, args).fails_with(&[
            "sha256 mismatch",
            "create-issue 1.0.0",
            &forged,
            &real,
            "nothing was installed",
        ]);
        assert!(!agent.join(".toolreg/tools/create-issue/1.0.0").exists());
    }

    // 2. a registry that serves other bytes than the digest it announced
    let good = mcp_tool(work, "get-weather", "1.0.0");
    let evil = mcp_tool(work, "get-weather-evil", "1.0.0");
    write_tool_manifest(&evil, "get-weather", "1.0.0");
    std::fs::write(evil.join("README.md"), "surprise").unwrap();
    user.run(work, &["pack", good.to_str().unwrap(), "-o", "good.tgz"])
        .ok();
    user.run(work, &["pack", evil.to_str().unwrap(), "-o", "evil.tgz"])
        .ok();
    let good_bytes = std::fs::read(work.join("good.tgz")).unwrap();
    let evil_bytes = std::fs::read(work.join("evil.tgz")).unwrap();
    use sha2::Digest;
    let good_sha = hex::encode(sha2::Sha256::digest(&good_bytes));
    let announced = good_sha.clone();
    // The impostor keeps an honest transparency log of the digest it announces
    // (so `add` accepts the pin); only the bytes it serves are wrong.
    let signer = toolreg_core::tlog::Signer::from_seed("fake.registry/log", [7u8; 32]).unwrap();
    let record = toolreg_core::tlog::record("get-weather", "1.0.0", &good_sha);
    let checkpoint = toolreg_core::tlog::Checkpoint {
        origin: "fake.registry/log".into(),
        size: 1,
        root: toolreg_core::tlog::leaf_hash(record.as_bytes()),
    }
    .sign(&signer)
    .unwrap();
    let log_key = signer.verifier_key();
    let fake = FakeRegistry::start(move |_, path| {
        if path == "/api/v1/log/key" {
            Reply::bytes(log_key.clone().into_bytes())
        } else if path == "/api/v1/log/checkpoint" {
            Reply::bytes(checkpoint.clone().into_bytes())
        } else if path.starts_with("/api/v1/log/proof/get-weather/1.0.0") {
            Reply::json(
                200,
                json!({"index": 0, "size": 1, "record": record, "proof": []}),
            )
        } else if path.starts_with("/api/v1/resolve/get-weather") {
            Reply::json(
                200,
                json!({"name": "get-weather", "version": "1.0.0", "sha256": announced,
                "size": 1, "format": "mcp", "execution": "schema",
                "download_url": "/api/v1/tools/get-weather/1.0.0/download"}),
            )
        } else if path == "/api/v1/tools/get-weather/1.0.0" {
            // Consulted for the version's lint findings: none.
            Reply::json(
                200,
                json!({"name": "get-weather", "version": "1.0.0", "sha256": announced,
                "size": 1, "format": "mcp", "execution": "schema", "yanked": false,
                "blocked": false, "blocked_reason": null,
                "published_at": "2026-01-01T00:00:00.000000Z", "downloads": 0,
                "publisher": {"login": "mallory", "tier": "verified"}, "manifest": {},
                "definition_file": "tool.json", "definition": "", "readme": null,
                "log_index": 0, "findings": []}),
            )
        } else if path == "/api/v1/tools/get-weather/1.0.0/download" {
            Reply::bytes(evil_bytes.clone())
        } else {
            Reply::problem(
                404,
                json!({"title": "Not found", "status": 404, "detail": "nothing here"}),
            )
        }
    });
    let victim = project(
        work,
        "victim",
        &format!("[registry]\nurl = \"{}\"\n", fake.url),
    );
    user.run(&victim, &["add", "get-weather"]).ok();
    user.run(&victim, &["install"])
        .fails_with(&["sha256 mismatch", &good_sha, &fake.url]);
    assert!(!victim
        .join(".toolreg/tools/get-weather")
        .join("1.0.0")
        .exists());
}

#[test]
fn a_corrupt_lock_file_is_an_error_naming_file_and_line() {
    let (server, user, work) = published();
    let work = work.path();
    let agent = project(
        work,
        "agent",
        &format!("[registry]\nurl = \"{}\"\n", server.url),
    );
    user.run(&agent, &["add", "create-issue"]).ok();
    let lock = read(&agent.join("toolreg.lock"));
    let broken = lock.replace("version = \"1.0.0\"", "version = \"1.0.0");
    std::fs::write(agent.join("toolreg.lock"), &broken).unwrap();
    let line = broken
        .lines()
        .position(|l| l.starts_with("version = \"1.0.0"))
        .unwrap()
        + 1;
    let at = format!("toolreg.lock:{line} is corrupt");
    for args in [
        &["install"][..],
        &["install", "--locked"][..],
        &["export"][..],
        &["update"][..],
    ] {
        user.run(&agent, args).fails_with(&[&at]);
        assert_eq!(
            read(&agent.join("toolreg.lock")),
            broken,
            "{args:?} rewrote a corrupt lock"
        );
    }
    std::fs::write(
        agent.join("toolreg.lock"),
        lock.replace("execution = \"schema\"", "execution = \"teleport\""),
    )
    .unwrap();
    user.run(&agent, &["install"])
        .fails_with(&["is corrupt", "teleport"]);
}

#[test]
fn install_locked_fails_when_the_lock_is_missing_or_out_of_date() {
    let (server, user, work) = published();
    let work = work.path();
    let base = format!("[registry]\nurl = \"{}\"\n\n[tools]\n", server.url);
    let agent = project(work, "agent", &base);
    user.run(&agent, &["add", "create-issue"]).ok();
    let manifest = read(&agent.join("toolreg.toml"));
    let lock = read(&agent.join("toolreg.lock"));
    user.run(&agent, &["install", "--locked"]).ok();

    // missing lock: never created
    std::fs::remove_file(agent.join("toolreg.lock")).unwrap();
    user.run(&agent, &["install", "--locked"])
        .fails_with(&["toolreg.lock", "missing"]);
    assert!(!agent.join("toolreg.lock").exists());
    std::fs::write(agent.join("toolreg.lock"), &lock).unwrap();

    let cases = [
        (
            manifest.replace(
                "create-issue = \"^1.0.0\"",
                "create-issue = \"^1.0.0\"\nweb-search = \"^1\"",
            ),
            "web-search is in toolreg.toml but not in toolreg.lock",
        ),
        (
            manifest.replace("\"^1.0.0\"", "\"^2\""),
            "pins 1.0.0, which does not satisfy \"^2\"",
        ),
        (
            base.clone(),
            "create-issue 1.0.0 is in toolreg.lock but no longer in toolreg.toml",
        ),
    ];
    for (toml, reason) in cases {
        std::fs::write(agent.join("toolreg.toml"), &toml).unwrap();
        user.run(&agent, &["install", "--locked"])
            .fails_with(&["out of date", reason]);
        assert_eq!(
            read(&agent.join("toolreg.lock")),
            lock,
            "--locked changed the lock"
        );
    }
    // without --locked the lock is brought up to date (the removed tool is dropped)
    user.run(&agent, &["install"]).ok();
    assert!(!read(&agent.join("toolreg.lock")).contains("create-issue"));
}

#[test]
fn a_blocked_version_is_refused_with_the_registrys_reason() {
    // The registry answers a blocked version's download with 403 type `blocked`
    // (docs/api.md). The pin exists from before the block.
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    let user = User::new();
    let dir = mcp_tool(work, "get-weather", "1.0.0");
    let sha = user
        .run(work, &["pack", dir.to_str().unwrap(), "-o", "b.tgz"])
        .ok()
        .stdout
        .trim()
        .to_string();
    let fake = FakeRegistry::start(|_, path| {
        if path.ends_with("/download") {
            Reply::problem(
                403,
                json!({"type": "https://toolreg.dev/problems/blocked", "title": "Blocked",
                "status": 403, "detail": "version 1.0.0 is blocked: a `schema` tool needs tier `verified`, the publisher is `untrusted`"}),
            )
        } else {
            Reply::problem(404, json!({"status": 404, "detail": "nothing here"}))
        }
    });
    let agent = project(work, "agent", "[tools]\nget-weather = \"^1\"\n");
    std::fs::write(
        agent.join("toolreg.lock"),
        format!("version = 1\n\n[[tool]]\nname = \"get-weather\"\nversion = \"1.0.0\"\nsha256 = \"{sha}\"\nregistry = \"{}\"\nexecution = \"schema\"\n", fake.url),
    )
    .unwrap();
    user.run(&agent, &["install", "--locked"]).fails_with(&[
        "get-weather 1.0.0 is blocked by the registry",
        "needs tier `verified`",
    ]);
    assert!(!agent.join(".toolreg/tools/get-weather").exists());
}

#[test]
fn a_second_install_needs_no_registry_at_all() {
    let (server, user, work) = published();
    let work = work.path();
    let agent = project(
        work,
        "agent",
        &format!("[registry]\nurl = \"{}\"\n", server.url),
    );
    user.run(&agent, &["add", "create-issue"]).ok();
    user.run(&agent, &["install"]).ok();
    // The registry is gone, and its port stays closed: no other test's
    // server may answer there.
    let port = server.port();
    drop(server);
    let _gone = ClosedPort::hold(port);
    let run = user.run(&agent, &["install", "--locked"]).ok();
    assert!(run.stdout.contains("already installed"), "{}", run.stdout);
    user.run(&agent, &["install"]).ok();
    let list = user.run(&agent, &["export"]).ok().json();
    assert_eq!(list[0]["name"], "create_issue");
    // but a half-finished install (no marker) is redone, which needs the registry
    std::fs::remove_file(agent.join(".toolreg/tools/create-issue/1.0.0.sha256")).unwrap();
    user.run(&agent, &["install"])
        .fails_with(&["could not reach the registry"]);
    user.run(&agent, &["export"]).fails_with(&["not installed"]);
}

#[test]
fn login_stores_the_token_when_the_registry_cannot_be_reached() {
    let user = User::new();
    let work = tempfile::tempdir().unwrap();
    let port = ClosedPort::new();
    let closed = port.url();
    let run = user
        .run(
            work.path(),
            &["login", "--registry", &closed, "--token", "trg_offline"],
        )
        .ok();
    assert!(
        run.stderr.contains("could not check the token"),
        "{}",
        run.stderr
    );
    assert!(read(&user.config.join("credentials.toml")).contains("trg_offline"));
    // no token on stdin is a usage error
    user.run(work.path(), &["login", "--registry", &closed])
        .code(2);
}
