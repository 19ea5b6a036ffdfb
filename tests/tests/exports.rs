//! `toolreg export` for agent APIs against a real `toolreg-server`: every
//! `--format`, `--protocol` (and `[registry] mcp_protocol` in toolreg.toml
//! as its default), `--strict`, the loss report on stderr, and the refusals.

use serde_json::Value;

use toolreg_e2e::{copy_dir, corpus_tool, write_tool_manifest, Server, User};

#[test]
fn export_formats_protocols_and_strict_mode() {
    let server = Server::start();
    let token = server.create_user("alice", "trusted");
    let user = User::new();
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    user.run(
        work,
        &["login", "--registry", &server.url, "--token", &token],
    )
    .ok();
    let list = work.join("list-users");
    copy_dir(
        &corpus_tool("mcp/spec-tool-with-array-output-schema"),
        &list,
    );
    write_tool_manifest(&list, "list-users", "1.0.0");
    user.run(work, &["publish", list.to_str().unwrap()]).ok();

    let agent = work.join("agent");
    std::fs::create_dir(&agent).unwrap();
    let manifest = format!("[registry]\nurl = \"{}\"\n\n[tools]\n", server.url);
    std::fs::write(agent.join("toolreg.toml"), &manifest).unwrap();
    user.run(&agent, &["add", "list-users"]).ok();
    user.run(&agent, &["install"]).ok();

    // Newest protocol by default: the array output as it is, nothing lost.
    let run = user.run(&agent, &["export", "--format", "mcp"]).ok();
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    let latest = run.json();
    assert_eq!(latest[0]["outputSchema"]["type"], "array", "{latest:#}");

    // --protocol 2025-11-25 wraps it and reports that on stderr.
    let run = user
        .run(
            &agent,
            &["export", "--format", "mcp", "--protocol", "2025-11-25"],
        )
        .ok();
    let old = run.json();
    assert_eq!(old[0]["outputSchema"]["type"], "object", "{old:#}");
    assert!(
        run.stderr
            .contains("warning: list-users 1.0.0: /outputSchema `type`"),
        "{}",
        run.stderr
    );

    // [registry] mcp_protocol is the default; --protocol still wins.
    std::fs::write(
        agent.join("toolreg.toml"),
        manifest
            .replace("[tools]", "[tools]\nlist-users = \"^1.0.0\"")
            .replace(
                &format!("url = \"{}\"", server.url),
                &format!("url = \"{}\"\nmcp_protocol = \"2025-06-18\"", server.url),
            ),
    )
    .unwrap();
    let toml = std::fs::read_to_string(agent.join("toolreg.toml")).unwrap();
    assert!(toml.contains("mcp_protocol"), "{toml}");
    let run = user.run(&agent, &["export"]).ok();
    assert_eq!(run.json(), old, "2025-06-18 output matches 2025-11-25 here");
    assert!(run.stderr.contains("protocol 2025-06-18"), "{}", run.stderr);
    let run = user
        .run(&agent, &["export", "--protocol", "2026-07-28"])
        .ok();
    assert_eq!(run.json(), latest);

    // The other formats.
    let a = user
        .run(&agent, &["export", "--format", "anthropic"])
        .ok()
        .json();
    assert_eq!(a[0]["name"], "list_users");
    assert_eq!(a[0]["input_schema"]["type"], "object");
    let g = user
        .run(&agent, &["export", "--format", "gemini"])
        .ok()
        .json();
    assert_eq!(g[0]["name"], "list_users");
    let gj = user
        .run(&agent, &["export", "--format", "gemini-json-schema"])
        .ok()
        .json();
    assert_eq!(gj[0]["parameters_json_schema"]["type"], "object");
    let s = user
        .run(&agent, &["export", "--format", "openai", "--strict"])
        .ok()
        .json();
    assert_eq!(s[0]["function"]["strict"], Value::Bool(true));

    // Bad values and combinations are usage errors (exit 2) naming the option.
    let run = user
        .run(&agent, &["export", "--protocol", "2024-11-05"])
        .code(2);
    assert!(
        run.stderr.contains("--protocol")
            && run.stderr.contains("2025-06-18, 2025-11-25, 2026-07-28"),
        "{}",
        run.stderr
    );
    let run = user.run(&agent, &["export", "--format", "claude"]).code(2);
    assert!(run.stderr.contains("anthropic"), "{}", run.stderr);
    let run = user
        .run(&agent, &["export", "--format", "gemini", "--strict"])
        .code(2);
    assert!(
        run.stderr.contains("--strict applies to --format openai"),
        "{}",
        run.stderr
    );
    let run = user
        .run(
            &agent,
            &["export", "--format", "openai", "--protocol", "2025-11-25"],
        )
        .code(2);
    assert!(
        run.stderr.contains("--protocol applies to --format mcp"),
        "{}",
        run.stderr
    );

    // A bad mcp_protocol in toolreg.toml is named with the file.
    std::fs::write(
        agent.join("toolreg.toml"),
        toml.replace("2025-06-18", "2030-01-01"),
    )
    .unwrap();
    user.run(&agent, &["export"]).fails_with(&[
        "toolreg.toml",
        "registry.mcp_protocol",
        "2030-01-01",
    ]);
    std::fs::write(agent.join("toolreg.toml"), &toml).unwrap();

    // A tool strict mode can't express is refused with the reason.
    let issue = work.join("issue-write");
    copy_dir(&corpus_tool("mcp/github-issue_write"), &issue);
    write_tool_manifest(&issue, "issue-write", "1.0.0");
    user.run(work, &["publish", issue.to_str().unwrap()]).ok();
    user.run(&agent, &["add", "issue-write"]).ok();
    user.run(&agent, &["install"]).ok();
    user.run(&agent, &["export", "--format", "openai", "--strict"])
        .fails_with(&["cannot export as openai (strict)", "/inputSchema"]);
    user.run(&agent, &["export", "--format", "openai"]).ok();
}
