//! Deprecation through the real binaries: `toolreg deprecate NAME[@REQ]
//! --message … --successor …` and `--undo` against a `toolreg-server`
//! process; `info` and `outdated` show it; `add` and `update` pin a
//! deprecated version with a warning naming the successor and `install`
//! still installs it; a project with `[policy] deny_deprecated = true`
//! refuses it in `add`, `update` and `install`, naming the successor, and
//! writes nothing.

use std::path::Path;

use toolreg_e2e::Server;
use toolreg_e2e::{agent_project, copy_dir, corpus_tool, signed_in, write_tool_manifest, User};

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn publish(user: &User, work: &Path, name: &str, version: &str) {
    let dir = work.join(format!("{name}-{version}"));
    copy_dir(&corpus_tool("matimo/github-create-issue"), &dir);
    write_tool_manifest(&dir, name, version);
    user.run(work, &["publish", dir.to_str().unwrap()]).ok();
}

#[test]
fn deprecated_versions_warn_show_their_successor_and_are_refused_by_policy() {
    let server = Server::start();
    let (user, work) = signed_in(&server, "alice", "verified");
    let work = work.path();
    publish(&user, work, "calc", "1.0.0");
    publish(&user, work, "calc-v2", "1.0.0");
    let agent = agent_project(&server.url, work, "agent", "[tools]\n");
    user.run(&agent, &["add", "calc"]).ok();

    // Bad input: the CLI's usage, then the registry's errors naming the field.
    user.run(work, &["deprecate", "calc"]).code(2);
    user.run(work, &["deprecate", "calc", "--undo", "--message", "x"])
        .code(2);
    user.run(work, &["deprecate", "calc@<<1", "--message", "x"])
        .code(2);
    user.run(
        work,
        &["deprecate", "calc", "--message", "x", "--successor", "nope"],
    )
    .fails_with(&["successor: there is no tool named `nope`"]);
    user.run(work, &["deprecate", "calc", "--message", &"x".repeat(501)])
        .fails_with(&["message: is 501 characters long; at most 500"]);
    user.run(work, &["deprecate", "calc@>=5", "--message", "x"])
        .fails_with(&["req: `>=5` matches none"]);

    let run = user
        .run(
            work,
            &[
                "deprecate",
                "calc@<2.0.0",
                "--message",
                "Rounds wrongly.",
                "--successor",
                "calc-v2",
            ],
        )
        .ok();
    assert!(
        run.stdout
            .contains("deprecated the versions of calc matching <2.0.0 (1.0.0; 1 changed)"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("successor: calc-v2"), "{}", run.stdout);

    // info: the tool's version list and the version's own lines.
    let run = user.run(work, &["info", "calc"]).ok();
    assert!(run.stdout.contains("deprecated"), "{}", run.stdout);
    let run = user.run(work, &["info", "calc@1.0.0"]).ok();
    assert!(
        run.stdout
            .contains("deprecated Rounds wrongly. (versions <2.0.0)"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("successor  calc-v2"), "{}", run.stdout);
    let v = user
        .run(work, &["info", "calc@1.0.0", "--json"])
        .ok()
        .json();
    assert_eq!(v["deprecated"]["successor"], "calc-v2");

    // outdated lists the pin although it is the newest, with its successor.
    let run = user.run(&agent, &["outdated"]).ok();
    assert!(run.stdout.contains("DEPRECATED"), "{}", run.stdout);
    assert!(run.stdout.contains("yes: use calc-v2"), "{}", run.stdout);
    let out = user.run(&agent, &["outdated", "--json"]).ok().json();
    assert_eq!(out["outdated"][0]["deprecated"]["successor"], "calc-v2");

    // update keeps the pin with a warning naming the successor; install
    // still installs it (advice, not a block).
    let run = user.run(&agent, &["update"]).ok();
    assert!(
        run.stderr
            .contains("warning: calc 1.0.0 is deprecated by its owners: Rounds wrongly. (its successor is calc-v2"),
        "{}",
        run.stderr
    );
    user.run(&agent, &["install"]).ok();
    // add in another project: pinned, with the warning.
    let other = agent_project(&server.url, work, "other", "[tools]\n");
    let run = user.run(&other, &["add", "calc"]).ok();
    assert!(
        run.stderr.contains("its successor is calc-v2"),
        "{}",
        run.stderr
    );
    assert!(read(&other.join("toolreg.lock")).contains("calc"));

    // deny_deprecated: add, update and install refuse, naming the successor.
    let strict = agent_project(
        &server.url,
        work,
        "strict",
        "[policy]\ndeny_deprecated = true\n\n[tools]\n",
    );
    let manifest = read(&strict.join("toolreg.toml"));
    user.run(&strict, &["add", "calc"]).fails_with(&[
        "calc 1.0.0 is deprecated by its owners: Rounds wrongly.",
        "its successor is calc-v2",
        "deny_deprecated = true",
    ]);
    assert_eq!(
        read(&strict.join("toolreg.toml")),
        manifest,
        "nothing written"
    );
    assert!(!strict.join("toolreg.lock").exists(), "nothing written");
    let policy = read(&agent.join("toolreg.toml"))
        .replace("[tools]", "[policy]\ndeny_deprecated = true\n\n[tools]");
    std::fs::write(agent.join("toolreg.toml"), policy).unwrap();
    let lock = read(&agent.join("toolreg.lock"));
    user.run(&agent, &["update"])
        .fails_with(&["deprecated", "calc-v2", "deny_deprecated"]);
    user.run(&agent, &["install"])
        .fails_with(&["deprecated", "calc-v2", "deny_deprecated"]);
    assert_eq!(read(&agent.join("toolreg.lock")), lock);
    // A bad value is named.
    let bad = agent_project(
        &server.url,
        work,
        "bad",
        "[policy]\ndeny_deprecated = \"yes\"\n\n[tools]\n",
    );
    user.run(&bad, &["add", "calc"])
        .fails_with(&["policy.deny_deprecated` must be true or false"]);

    // --undo lifts it; the strict project may pin it now.
    let run = user.run(work, &["deprecate", "calc", "--undo"]).ok();
    assert!(
        run.stdout
            .contains("lifted the deprecation of every version of calc"),
        "{}",
        run.stdout
    );
    let run = user.run(&strict, &["add", "calc"]).ok();
    assert!(!run.stderr.contains("deprecated"), "{}", run.stderr);
}
