//! Reports and quarantine through the real binaries: `toolreg report`,
//! `toolreg quarantine [--lift]` against a `toolreg-server` process, and an
//! agent project whose pin gets quarantined: `install`, `install --locked`,
//! `add` and `update` refuse it with the registry's reason (exit 1, nothing
//! written), `info` shows it, and after the lift `install --locked` works.

use std::path::Path;

use toolreg_e2e::{copy_dir, corpus_tool, write_tool_manifest, Server, User};

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn a_quarantined_pin_is_refused_with_the_reason_until_lifted() {
    let server = Server::start();
    let out = server.admin(&["admin", "create-user", "root", "--admin"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let root = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let alice = server.create_user("alice", "verified");
    let bob = server.create_user("bob", "untrusted");
    let user = User::new();
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    let tool = work.join("calc");
    copy_dir(&corpus_tool("matimo/github-create-issue"), &tool);
    write_tool_manifest(&tool, "calc", "1.0.0");
    user.run(
        work,
        &[
            "publish",
            tool.to_str().unwrap(),
            "--registry",
            &server.url,
            "--token",
            &alice,
        ],
    )
    .ok();

    let agent = work.join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(
        agent.join("toolreg.toml"),
        format!("[registry]\nurl = \"{}\"\n\n[tools]\n", server.url),
    )
    .unwrap();
    user.run(&agent, &["add", "calc"]).ok();
    let (manifest, lock) = (
        read(&agent.join("toolreg.toml")),
        read(&agent.join("toolreg.lock")),
    );

    // Any signed-in user reports; a bad reason is the registry's 400.
    let as_bob = ["--registry", &server.url, "--token", &bob];
    let run = user
        .run(
            work,
            &[
                &["report", "calc@1.0.0", "--reason", "asks for ~/.ssh/id_rsa"][..],
                &as_bob,
            ]
            .concat(),
        )
        .ok();
    assert!(run.stdout.contains("reported calc 1.0.0"), "{}", run.stdout);
    user.run(
        work,
        &[&["report", "calc@1.0.0", "--reason", " "][..], &as_bob].concat(),
    )
    .fails_with(&["reason: must not be empty"]);
    let long = "x".repeat(2001);
    user.run(
        work,
        &[&["report", "calc@1.0.0", "--reason", &long][..], &as_bob].concat(),
    )
    .fails_with(&["at most 2000"]);
    user.run(
        work,
        &[
            "report",
            "calc@1.0.0",
            "--reason",
            "x",
            "--registry",
            &server.url,
        ],
    )
    .fails_with(&["no token"]);

    // Only administrators quarantine.
    user.run(
        work,
        &[&["quarantine", "calc@1.0.0", "--reason", "no"][..], &as_bob].concat(),
    )
    .fails_with(&["administrators"]);
    user.run(work, &["quarantine", "calc@1.0.0"]).code(2);
    user.run(
        work,
        &["quarantine", "calc@1.0.0", "--lift", "--reason", "x"],
    )
    .code(2);
    let as_root = ["--registry", &server.url, "--token", &root];
    let why = "sends the SSH key in a sidenote";
    let run = user
        .run(
            work,
            &[&["quarantine", "calc@1.0.0", "--reason", why][..], &as_root].concat(),
        )
        .ok();
    assert!(
        run.stdout.contains("quarantined calc 1.0.0"),
        "{}",
        run.stdout
    );

    // The pin is refused everywhere, with the reason, and nothing is written.
    for args in [
        &["install"][..],
        &["install", "--locked"][..],
        &["update"][..],
    ] {
        let run = user
            .run(&agent, args)
            .fails_with(&["calc", "quarantined", why]);
        let first = run.stderr.lines().next().unwrap_or_default();
        assert!(
            first.contains(why),
            "{args:?}: the first line names the reason: {}",
            run.stderr
        );
        assert!(
            !agent.join(".toolreg/tools/calc").exists(),
            "{args:?} installed it"
        );
        assert_eq!(
            read(&agent.join("toolreg.lock")),
            lock,
            "{args:?} changed the lock"
        );
    }
    let fresh = work.join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    std::fs::write(fresh.join("toolreg.toml"), &manifest).unwrap();
    user.run(&fresh, &["add", "calc@=1.0.0"])
        .fails_with(&["quarantined", why]);
    assert!(!fresh.join("toolreg.lock").exists());
    let info = user
        .run(work, &["info", "calc", "--registry", &server.url])
        .ok();
    assert!(
        info.stdout.contains(&format!("quarantined: {why}")),
        "{}",
        info.stdout
    );

    // Lifted: the pin installs again.
    let run = user
        .run(
            work,
            &[&["quarantine", "--lift", "calc@1.0.0"][..], &as_root].concat(),
        )
        .ok();
    assert!(run.stdout.contains("not quarantined"), "{}", run.stdout);
    user.run(&agent, &["install", "--locked"]).ok();
    assert!(agent.join(".toolreg/tools/calc").exists());
}
