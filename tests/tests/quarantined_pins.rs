//! A quarantine reaches projects that already pinned and installed the
//! version, through the real binaries on both backends:
//!
//! - `verify` and `install` (the registry reachable) report the
//!   quarantined pin with the reason and exit 1; `export` refuses it;
//! - `update` moves away from it — it asks first, since the registry
//!   withholds the old definition, and moves with `--yes`;
//! - what the registry said is recorded (`.toolreg/state.json`), so with
//!   the registry gone `export` and `verify --offline` still refuse the pin,
//!   naming the reason and when the registry said it, while a project that
//!   moved away exports.

use std::path::Path;

use serde_json::Value;
use toolreg_e2e::{
    agent_project, both_backends, copy_dir, corpus_tool, signed_in, write_tool_manifest, Server,
    User,
};

const WHY: &str = "sends the SSH key in a sidenote";

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn publish(user: &User, work: &Path, version: &str) {
    let dir = work.join(format!("calc-{version}"));
    copy_dir(&corpus_tool("matimo/github-create-issue"), &dir);
    write_tool_manifest(&dir, "calc", version);
    user.run(work, &["publish", dir.to_str().unwrap()]).ok();
}

/// The first `error:` line of a failed run.
fn error_line(stderr: &str) -> &str {
    stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_default()
}

fn a_quarantine_reaches_installed_pins(server: Server) {
    let out = server.admin(&["admin", "create-user", "root", "--admin"]);
    assert!(out.status.success());
    let root = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let (user, work) = signed_in(&server, "alice", "verified");
    let work = work.path();
    publish(&user, work, "1.0.0");

    // Two projects pin and install 1.0.0: one may move (^1), one may not.
    let moving = agent_project(&server.url, work, "moving", "[tools]\ncalc = \"^1\"\n");
    let stuck = agent_project(&server.url, work, "stuck", "[tools]\ncalc = \"=1.0.0\"\n");
    for agent in [&moving, &stuck] {
        user.run(agent, &["install"]).ok();
        user.run(agent, &["verify"]).ok();
        user.run(agent, &["export"]).ok();
    }

    user.run(
        work,
        &[
            "quarantine",
            "calc@1.0.0",
            "--reason",
            WHY,
            "--registry",
            &server.url,
            "--token",
            &root,
        ],
    )
    .ok();

    // Online, every command that hands the pin on refuses it with the reason.
    for agent in [&moving, &stuck] {
        let lock = read(&agent.join("toolreg.lock"));
        for args in [
            &["verify"][..],
            &["install"][..],
            &["install", "--locked"][..],
            &["export"][..],
        ] {
            let run = user
                .run(agent, args)
                .fails_with(&["calc", "quarantined", WHY]);
            assert!(
                error_line(&run.stderr).contains(WHY),
                "{args:?}: the error line names the reason: {}",
                run.stderr
            );
            if args == ["export"] {
                assert!(run.stdout.is_empty(), "{}", run.stdout);
            }
        }
        assert_eq!(read(&agent.join("toolreg.lock")), lock, "the lock is kept");
        // The installed files stay: they are intact, and the lock pins them.
        assert!(agent.join(".toolreg/tools/calc/1.0.0").is_dir());
    }
    let run = user.run(&stuck, &["verify"]).code(1);
    assert!(
        run.stdout.contains("refused  calc 1.0.0") && run.stdout.contains(WHY),
        "{}",
        run.stdout
    );
    let report = user.run(&stuck, &["verify", "--json"]).code(1).json();
    let pin = &report["tools"][0];
    assert_eq!(pin["status"], "refused", "{report}");
    assert_eq!(pin["registry"]["state"], "quarantined", "{report}");
    assert_eq!(pin["registry"]["reason"], WHY, "{report}");
    let record: Value = serde_json::from_str(&read(&stuck.join(".toolreg/state.json"))).unwrap();
    assert_eq!(
        record["pins"][0]["withheld"]["state"], "quarantined",
        "{record}"
    );

    // update moves away: the registry withholds the old definition, so it
    // asks, and moves with --yes.
    publish(&user, work, "1.0.1");
    let lock = read(&moving.join("toolreg.lock"));
    user.run(&moving, &["update"]).fails_with(&[
        "calc 1.0.0 -> 1.0.1",
        "the registry withholds calc 1.0.0",
        "--yes",
    ]);
    assert_eq!(read(&moving.join("toolreg.lock")), lock);
    let run = user.run(&moving, &["update", "--yes"]).ok();
    assert!(
        run.stdout.contains("updating calc 1.0.0 -> 1.0.1")
            && run.stdout.contains("the changes can't be shown"),
        "{}",
        run.stdout
    );
    user.run(&moving, &["install"]).ok();
    user.run(&moving, &["verify"]).ok();
    // The pinned-exactly project can't move: update names the quarantine.
    user.run(&stuck, &["update"])
        .fails_with(&["quarantined", WHY]);

    // The registry is gone: what it said still holds.
    drop(server);
    for args in [
        &["export"][..],
        &["verify", "--offline"][..],
        &["verify"][..],
    ] {
        let run = user.run(&stuck, args).fails_with(&[
            "calc",
            "quarantined",
            WHY,
            "as the registry said at",
        ]);
        assert!(error_line(&run.stderr).contains(WHY), "{}", run.stderr);
    }
    let run = user.run(&moving, &["export"]).ok();
    assert_eq!(
        run.json()[0]["name"],
        "github-create-issue",
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("could not ask the registry"),
        "{}",
        run.stderr
    );
    user.run(&moving, &["verify", "--offline"]).ok();
}

both_backends!(Server::start_on => a_quarantine_reaches_installed_pins);
