//! The whole CLI workflow against a real `toolreg-server` process:
//! login → publish → search → add → install → update → yank →
//! install --locked → export, plus the consumer policy and blocked versions.

use std::path::Path;

use serde_json::Value;

use toolreg_e2e::{
    both_backends, copy_dir, corpus_tool, shared_corpus, write_tool_manifest, Server, User,
};

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Three corpus tools of three formats, ready to publish.
fn tool_dirs(user: &User, work: &Path) -> [std::path::PathBuf; 3] {
    let http = work.join("hubspot");
    copy_dir(&corpus_tool("matimo/hubspot-get-contact"), &http);
    let mcp = work.join("create-issue");
    copy_dir(&corpus_tool("mcp/github-create_issue"), &mcp);
    write_tool_manifest(&mcp, "github-create-issue", "1.0.0");
    let prompt = work.join("summarize");
    match shared_corpus() {
        Some(c) => copy_dir(&c.join("prompt/summarize-text"), &prompt),
        None => {
            user.run(work, &["init", "summarize", "--format", "prompt"])
                .ok();
        }
    }
    // the prompt format has no registry name or license: toolreg.toml supplies them
    write_tool_manifest(&prompt, "summarize-text", "1.0.0");
    [http, mcp, prompt]
}

fn set_matimo_version(dir: &Path, version: &str) {
    let def = dir.join("definition.yaml");
    let text = read(&def).replace("version: '1.0.0'", &format!("version: '{version}'"));
    assert!(text.contains(version));
    std::fs::write(def, text).unwrap();
}

/// Login, publish, search, add, install, update, yank, install --locked and
/// export on each backend.
fn workflow(server: Server) {
    let token = server.create_user("alice", "trusted");
    let user = User::new();
    let work = tempfile::tempdir().unwrap();
    let work = work.path();

    // login: token on stdin, checked against /api/v1/me, stored 0600
    let run = user
        .run_with_stdin(
            work,
            &["login", "--registry", &server.url],
            &format!("{token}\n"),
        )
        .ok();
    assert!(run.stdout.contains("as alice"), "{}", run.stdout);
    let creds = user.config.join("credentials.toml");
    assert!(read(&creds).contains(&token));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&creds).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    // a wrong token is refused and not stored
    user.run(
        work,
        &["login", "--registry", &server.url, "--token", "trg_wrong"],
    )
    .fails_with(&["401"]);
    assert!(!read(&creds).contains("trg_wrong"));

    // publish three formats; the printed sha256 is the deterministic pack's
    let [http, mcp, prompt] = tool_dirs(&user, work);
    let mut digests = Vec::new();
    for (dir, name) in [
        (&http, "hubspot-get-contact"),
        (&mcp, "github-create-issue"),
        (&prompt, "summarize-text"),
    ] {
        let packed = user
            .run(work, &["pack", dir.to_str().unwrap(), "-o", "/dev/null"])
            .ok()
            .stdout;
        let run = user.run(work, &["publish", dir.to_str().unwrap()]).ok();
        assert!(
            !run.stderr.contains("uploading"),
            "no progress bar without a terminal: {}",
            run.stderr
        );
        assert!(
            run.stdout.contains(&format!("published {name} 1.0.0")),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.contains(&format!("sha256 {}", packed.trim())),
            "{}\n{packed}",
            run.stdout
        );
        digests.push(packed.trim().to_string());
    }
    // --dry-run validates and packs but uploads nothing
    set_matimo_version(&http, "1.1.0");
    let run = user
        .run(work, &["publish", http.to_str().unwrap(), "--dry-run"])
        .ok();
    assert!(run.stdout.contains("dry run"), "{}", run.stdout);
    let info = user
        .run(work, &["info", "hubspot-get-contact", "--json"])
        .ok()
        .json();
    assert_eq!(
        info["versions"].as_array().unwrap().len(),
        1,
        "dry run published something: {info}"
    );

    // search (a readable table and JSON)
    let mut run = user.run(work, &["search", "hubspot", "contact"]).ok();
    for _ in 0..50 {
        if run
            .stdout
            .lines()
            .any(|l| l.starts_with("hubspot-get-contact"))
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        run = user.run(work, &["search", "hubspot", "contact"]).ok();
    }
    assert!(run.stdout.starts_with("NAME"), "{}", run.stdout);
    let row = run
        .stdout
        .lines()
        .find(|l| l.starts_with("hubspot-get-contact"))
        .unwrap_or_else(|| {
            panic!("no hubspot row in:\n{}", run.stdout);
        });
    assert!(
        row.contains("1.0.0") && row.contains("http") && row.contains("trusted"),
        "{row}"
    );
    // a need in a sentence finds it too, and the CLI says which words counted
    let run = user
        .run(
            work,
            &[
                "search",
                "I would like to retrieve the details of one contact from our HubSpot CRM by its ID",
            ],
        )
        .ok();
    assert!(
        run.stdout.starts_with("NAME\n") || run.stdout.starts_with("NAME "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("hubspot-get-contact")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("searched for: retrieve details one contact hubspot crm id"),
        "{}",
        run.stdout
    );
    // the index follows the database's change log, so allow it a moment
    let mut hits = Value::Null;
    for _ in 0..50 {
        hits = user
            .run(
                work,
                &["search", "issue", "--execution", "schema", "--json"],
            )
            .ok()
            .json();
        if hits["hits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["name"] == "github-create-issue")
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let found = hits["hits"].as_array().unwrap();
    assert!(
        found.iter().any(|h| h["name"] == "github-create-issue"),
        "{hits}"
    );
    assert!(
        found.iter().all(|h| h["execution"] == "schema"),
        "the filter was ignored: {hits}"
    );

    // an agent project with comments and a policy
    let agent = work.join("agent");
    std::fs::create_dir(&agent).unwrap();
    let manifest = format!(
        "# the agent's tools\n[registry]\nurl = \"{}\"  # local registry\n\n[tools]\n\n[policy]\nallow = [\"http\", \"prompt\", \"schema\"]  # no code\n",
        server.url
    );
    std::fs::write(agent.join("toolreg.toml"), &manifest).unwrap();
    let run = user.run(&agent, &["add", "hubspot-get-contact"]).ok();
    assert!(run.stdout.contains("^1.0.0"), "{}", run.stdout);
    user.run(&agent, &["add", "github-create-issue@=1.0.0"])
        .ok();
    user.run(&agent, &["add", "summarize-text", "--json"]).ok();
    let toml = read(&agent.join("toolreg.toml"));
    for keep in [
        "# the agent's tools",
        "# local registry",
        "# no code",
        "hubspot-get-contact = \"^1.0.0\"",
        "github-create-issue = \"=1.0.0\"",
        "summarize-text = \"^1.0.0\"",
    ] {
        assert!(toml.contains(keep), "toolreg.toml lost `{keep}`:\n{toml}");
    }
    let lock = read(&agent.join("toolreg.lock"));
    assert!(
        lock.starts_with("# This file is generated by toolreg"),
        "{lock}"
    );
    for d in &digests {
        assert!(lock.contains(d.as_str()), "lock lacks {d}:\n{lock}");
    }

    // install: verified, unpacked, then a no-op
    let run = user.run(&agent, &["install"]).ok();
    assert!(
        run.stdout.contains("installed 3 tool(s)"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    assert!(agent
        .join(".toolreg/tools/hubspot-get-contact/1.0.0/definition.yaml")
        .is_file());
    assert!(agent
        .join(".toolreg/tools/github-create-issue/1.0.0/tool.json")
        .is_file());
    assert!(agent
        .join(".toolreg/tools/summarize-text/1.0.0/prompt.json")
        .is_file());
    let run = user.run(&agent, &["install"]).ok();
    assert!(run.stdout.contains("already installed"), "{}", run.stdout);

    // update moves the pin within ^1.0.0 once 1.1.0 exists
    user.run(work, &["publish", http.to_str().unwrap()]).ok();
    let run = user.run(&agent, &["update"]).ok();
    assert!(
        run.stdout
            .contains("updating hubspot-get-contact 1.0.0 -> 1.1.0"),
        "{}",
        run.stdout
    );
    assert!(read(&agent.join("toolreg.toml")).contains("hubspot-get-contact = \"^1.0.0\""));
    assert!(read(&agent.join("toolreg.lock")).contains("version = \"1.1.0\""));
    user.run(&agent, &["install"]).ok();
    assert!(agent
        .join(".toolreg/tools/hubspot-get-contact/1.1.0/definition.yaml")
        .is_file());

    // yank 1.1.0: the existing pin still installs with --locked, which never touches the lock
    let run = user.run(work, &["yank", "hubspot-get-contact@1.1.0"]).ok();
    assert!(run.stdout.contains("yanked"), "{}", run.stdout);
    let info = user
        .run(work, &["info", "hubspot-get-contact@1.1.0", "--json"])
        .ok()
        .json();
    assert_eq!(info["yanked"], true);
    let lock_before = read(&agent.join("toolreg.lock"));
    std::fs::remove_dir_all(agent.join(".toolreg")).unwrap();
    user.run(&agent, &["install", "--locked"]).ok();
    assert!(agent
        .join(".toolreg/tools/hubspot-get-contact/1.1.0/definition.yaml")
        .is_file());
    assert_eq!(read(&agent.join("toolreg.lock")), lock_before);

    // new resolution skips the yanked version
    let fresh = work.join("fresh");
    std::fs::create_dir(&fresh).unwrap();
    let added = user
        .run(&fresh, &["add", "hubspot-get-contact", "--json"])
        .ok()
        .json();
    assert_eq!(added["version"], "1.0.0", "{added}");
    // and un-yanking makes it resolvable again
    user.run(work, &["yank", "hubspot-get-contact@1.1.0", "--undo"])
        .ok();
    let run = user.run(&fresh, &["update", "hubspot-get-contact"]).ok();
    assert!(run.stdout.contains("1.0.0 -> 1.1.0"), "{}", run.stdout);

    // export: one JSON array an agent loads directly
    let mcp_list = user.run(&agent, &["export", "--format", "mcp"]).ok().json();
    let list = mcp_list.as_array().expect("an array");
    assert_eq!(list.len(), 3);
    let by_name = |n: &str| {
        list.iter()
            .find(|t| t["name"] == n)
            .unwrap_or_else(|| panic!("no {n} in {mcp_list}"))
    };
    let issue = by_name("create_issue");
    assert_eq!(issue["inputSchema"]["type"], "object");
    assert!(issue["inputSchema"]["properties"]["owner"].is_object());
    let hub = by_name("hubspot-get-contact");
    assert!(hub["inputSchema"]["properties"]["id"].is_object(), "{hub}");
    assert!(
        list.iter()
            .any(|t| t["name"].as_str().unwrap_or("").starts_with("summarize")),
        "{mcp_list}"
    );
    let openai = user
        .run(&agent, &["export", "--format", "openai"])
        .ok()
        .json();
    for f in openai.as_array().unwrap() {
        assert_eq!(f["type"], "function");
        assert!(
            f["function"]["name"].is_string() && f["function"]["parameters"].is_object(),
            "{f}"
        );
    }
    let names: Vec<&str> = openai
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["function"]["name"].as_str())
        .collect();
    assert!(names.contains(&"create_issue"), "{names:?}");

    // owners: adding bob invites him; he accepts
    let bob_token = server.create_user("bob", "untrusted");
    let bob = User::new();
    bob.run(
        work,
        &["login", "--registry", &server.url, "--token", &bob_token],
    )
    .ok();
    let run = user
        .run(work, &["owner", "add", "github-create-issue", "bob"])
        .ok();
    assert!(
        run.stdout.contains("invited bob")
            && run
                .stdout
                .contains("toolreg owner accept github-create-issue"),
        "{}",
        run.stdout
    );
    let run = user
        .run(work, &["owner", "list", "github-create-issue"])
        .ok();
    assert!(!run.stdout.contains("bob"), "{}", run.stdout);
    let run = bob.run(work, &["owner", "invitations"]).ok();
    assert!(
        run.stdout.contains("github-create-issue") && run.stdout.contains("alice"),
        "{}",
        run.stdout
    );
    let run = bob
        .run(work, &["owner", "accept", "github-create-issue"])
        .ok();
    assert!(run.stdout.contains("now an owner"), "{}", run.stdout);
    // accepting again: there is no invitation any more
    let run = bob.run(work, &["owner", "accept", "github-create-issue"]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("no invitation"), "{}", run.stderr);
    let owners = user
        .run(work, &["owner", "list", "github-create-issue", "--json"])
        .ok()
        .json();
    let logins: Vec<&str> = owners["owners"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["login"].as_str())
        .collect();
    assert!(
        logins.contains(&"alice") && logins.contains(&"bob"),
        "{owners}"
    );
    user.run(work, &["owner", "remove", "github-create-issue", "bob"])
        .ok();
    let run = user
        .run(work, &["owner", "list", "github-create-issue"])
        .ok();
    assert!(
        run.stdout.contains("alice") && !run.stdout.contains("bob"),
        "{}",
        run.stdout
    );
}

both_backends!(Server::start_on => workflow);

#[test]
fn the_project_policy_refuses_forbidden_execution_kinds() {
    let server = Server::start();
    let bob = server.create_user("bob", "verified");
    let user = User::new();
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    user.run(work, &["login", "--registry", &server.url, "--token", &bob])
        .ok();
    let exec = work.join("valid-tool");
    copy_dir(&corpus_tool("matimo/valid-tool"), &exec);
    let mcp = work.join("create-issue");
    copy_dir(&corpus_tool("mcp/github-create_issue"), &mcp);
    write_tool_manifest(&mcp, "github-create-issue", "1.0.0");
    user.run(work, &["publish", exec.to_str().unwrap()]).ok();
    user.run(work, &["publish", mcp.to_str().unwrap()]).ok();

    // the project forbids `command` tools: add refuses and names tool, kind and policy line
    let agent = work.join("agent");
    std::fs::create_dir(&agent).unwrap();
    let manifest =
        "[tools]\n\n[policy]\n# what this agent may run\nallow = [\"http\", \"schema\"]\n";
    std::fs::write(agent.join("toolreg.toml"), manifest).unwrap();
    user.run(&agent, &["add", "valid-tool"]).fails_with(&[
        "valid-tool",
        "`command`",
        "toolreg.toml:5",
        "allow = [\"http\", \"schema\"]",
    ]);
    assert_eq!(
        read(&agent.join("toolreg.toml")),
        manifest,
        "a refused add changed toolreg.toml"
    );
    assert!(!agent.join("toolreg.lock").exists());
    // install refuses a hand-written pin the policy forbids
    std::fs::write(
        agent.join("toolreg.toml"),
        manifest.replace("[tools]\n", "[tools]\nvalid-tool = \"^1\"\n"),
    )
    .unwrap();
    user.run(&agent, &["install"])
        .fails_with(&["`command`", "toolreg.toml:6"]);
    assert!(!agent.join(".toolreg/tools/valid-tool").exists());
}

/// Demoting a publisher blocks their versions of kinds the new
/// tier doesn't allow; an existing pin then refuses to install, with the reason.
#[test]
fn demoting_the_publisher_blocks_a_pinned_version() {
    let server = Server::start();
    let bob = server.create_user("bob", "verified");
    let user = User::new();
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    user.run(work, &["login", "--registry", &server.url, "--token", &bob])
        .ok();
    let exec = work.join("valid-tool");
    copy_dir(&corpus_tool("matimo/valid-tool"), &exec);
    user.run(work, &["publish", exec.to_str().unwrap()]).ok();
    // a project that allows commands pins it; then the publisher is demoted and the version is blocked
    let open = work.join("open");
    std::fs::create_dir(&open).unwrap();
    user.run(&open, &["add", "valid-tool"]).ok();
    let out = server.admin(&["admin", "set-tier", "bob", "untrusted"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = user
        .run(&open, &["install"])
        .fails_with(&["valid-tool 1.0.0 is blocked"]);
    assert!(
        run.stderr.contains("command") && run.stderr.contains("verified"),
        "the reason is shown: {}",
        run.stderr
    );
    assert!(!open.join(".toolreg/tools/valid-tool").exists());
    let info = user
        .run(work, &["info", "valid-tool", "--json"])
        .ok()
        .json();
    assert_eq!(info["versions"][0]["blocked"], true, "{info}");
    // new resolution skips it
    let other = work.join("other");
    std::fs::create_dir(&other).unwrap();
    user.run(&other, &["add", "valid-tool"]).code(1);
}
