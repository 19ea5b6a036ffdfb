//! The transparency log through the real binaries: `add` trusts
//! the log key on first use and keeps the checkpoint; a bundle swapped
//! behind the server's back (blob and digest row) is refused by `install`
//! and `add`; a registry restored from an older database copy is reported
//! as rolled back, and one that then re-grows differently as forked; a
//! wrong pinned key is refused; `toolreg-server verify` catches a missing
//! record.

use std::path::{Path, PathBuf};
use std::time::Duration;

use diesel::prelude::*;
use toolreg_core::tlog::{Checkpoint, Signer, Verifier};
use toolreg_e2e::{bin, copy_dir, corpus_tool, write_tool_manifest, ServerProcess, User};

/// `toolreg-server serve` on an explicit data directory, so a test can stop
/// it, change its database and start it again on the same data.
struct Registry {
    server: ServerProcess,
    url: String,
    data: PathBuf,
}

/// The binary on `data` (SQLite and files).
fn on(data: &Path) -> toolreg_e2e::Registry {
    toolreg_e2e::Registry::new(bin("toolreg-server"), data)
}

impl Registry {
    fn start(data: &Path) -> Registry {
        Registry::running(data, on(data).serve(&[]))
    }

    fn running(data: &Path, server: ServerProcess) -> Registry {
        Registry {
            url: server.url.clone(),
            server,
            data: data.to_path_buf(),
        }
    }

    fn server_cmd(&self, args: &[&str]) -> std::process::Output {
        on(&self.data).run(args)
    }

    fn create_user(&self, login: &str) -> String {
        on(&self.data).create_user(login, "trusted", false)
    }

    fn db(&self) -> diesel::SqliteConnection {
        let mut conn =
            diesel::SqliteConnection::establish(self.data.join("toolreg.db").to_str().unwrap())
                .unwrap();
        diesel::sql_query("PRAGMA busy_timeout = 10000")
            .execute(&mut conn)
            .unwrap();
        conn
    }

    fn get(&self, path: &str) -> String {
        reqwest::blocking::Client::builder()
            .no_proxy()
            .build()
            .unwrap()
            .get(format!("{}{path}", self.url))
            .send()
            .unwrap()
            .text()
            .unwrap()
    }

    fn stop(mut self) {
        self.server.kill();
    }
}

/// Assert exit 1 with every needle on stderr (status lines may come first).
#[track_caller]
fn refused(run: toolreg_e2e::Run, needles: &[&str]) -> String {
    assert_eq!(
        run.code, 1,
        "expected failure\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(run.stderr.contains("error: "), "{}", run.stderr);
    for n in needles {
        assert!(
            run.stderr.contains(n),
            "stderr lacks `{n}`:\n{}",
            run.stderr
        );
    }
    run.stderr
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// An MCP tool directory named `name` at `version`, with `marker` in its README
/// (so two versions make different bundles).
fn tool(work: &Path, name: &str, version: &str, marker: &str) -> PathBuf {
    let dir = work.join(format!("{name}-{version}-{marker}"));
    copy_dir(&corpus_tool("mcp/github-create_issue"), &dir);
    write_tool_manifest(&dir, name, version);
    std::fs::write(dir.join("README.md"), format!("# {name}\n\n{marker}\n")).unwrap();
    dir
}

fn project(work: &Path, name: &str, manifest: &str) -> PathBuf {
    let dir = work.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("toolreg.toml"), manifest).unwrap();
    dir
}

/// A registry with a logged-in publisher.
fn setup() -> (tempfile::TempDir, Registry, User) {
    let tmp = tempfile::tempdir().unwrap();
    let registry = Registry::start(&tmp.path().join("registry"));
    let token = registry.create_user("alice");
    let user = User::new();
    user.run(
        tmp.path(),
        &["login", "--registry", &registry.url, "--token", &token],
    )
    .ok();
    (tmp, registry, user)
}

fn publish(user: &User, work: &Path, name: &str, version: &str, marker: &str) {
    let dir = tool(work, name, version, marker);
    user.run(work, &["publish", dir.to_str().unwrap()]).ok();
}

fn kept_checkpoint(project: &Path, key: &str) -> Checkpoint {
    let lock: toml::Value = toml::from_str(&read(&project.join("toolreg.lock"))).unwrap();
    let note = lock["checkpoint"][0]["note"]
        .as_str()
        .expect("a [[checkpoint]] in toolreg.lock");
    Checkpoint::open(note, &Verifier::parse(key).unwrap()).expect("the kept checkpoint verifies")
}

#[test]
fn add_install_update_verify_pins_and_keep_the_newest_checkpoint() {
    let (tmp, registry, user) = setup();
    let work = tmp.path();
    publish(&user, work, "logged-tool", "1.0.0", "first");
    let agent = project(
        work,
        "agent",
        &format!("[registry]\nurl = \"{}\"\n", registry.url),
    );

    let run = user.run(&agent, &["add", "logged-tool@^1"]).ok();
    let served_key = registry.get("/api/v1/log/key").trim().to_string();
    assert!(
        run.stderr
            .contains("trusting the registry's transparency log key on first use"),
        "{}",
        run.stderr
    );
    assert!(read(&agent.join("toolreg.toml")).contains(&format!("log_key = \"{served_key}\"")));
    assert_eq!(kept_checkpoint(&agent, &served_key).size, 1);
    user.run(&agent, &["install"]).ok();

    // A newer version: update verifies it and keeps the bigger checkpoint.
    publish(&user, work, "logged-tool", "1.1.0", "second");
    publish(&user, work, "other-tool", "0.1.0", "third");
    let run = user.run(&agent, &["update"]).ok();
    assert!(
        !run.stderr.contains("trusting"),
        "the key is pinned now: {}",
        run.stderr
    );
    assert_eq!(kept_checkpoint(&agent, &served_key).size, 3);
    user.run(&agent, &["install", "--locked"]).ok();
    assert!(agent.join(".toolreg/tools/logged-tool/1.1.0").is_dir());
}

#[test]
fn a_bundle_swapped_behind_the_servers_back_is_refused() {
    let (tmp, registry, user) = setup();
    let work = tmp.path();
    publish(&user, work, "swapped-tool", "1.0.0", "honest");
    let served_key = registry.get("/api/v1/log/key").trim().to_string();
    let honest: serde_json::Value =
        serde_json::from_str(&registry.get("/api/v1/tools/swapped-tool/1.0.0")).unwrap();
    let honest_sha = honest["sha256"].as_str().unwrap().to_string();

    // The operator (or an intruder) replaces the bundle and its digest row.
    let evil_dir = tool(work, "swapped-tool", "1.0.0", "evil payload");
    user.run(
        work,
        &["pack", evil_dir.to_str().unwrap(), "-o", "evil.tgz"],
    )
    .ok();
    let evil = std::fs::read(work.join("evil.tgz")).unwrap();
    let evil_sha = toolreg_core::digest::sha256_hex(&evil);
    let blob = registry.data.join("objects/bundles/sha256").join(&evil_sha);
    std::fs::create_dir_all(blob.parent().unwrap()).unwrap();
    std::fs::write(&blob, &evil).unwrap();
    let changed = diesel::sql_query(format!(
        "UPDATE versions SET sha256 = '{evil_sha}', size = {} WHERE sha256 = '{honest_sha}'",
        evil.len()
    ))
    .execute(&mut registry.db())
    .unwrap();
    assert_eq!(changed, 1);
    let served: serde_json::Value =
        serde_json::from_str(&registry.get("/api/v1/resolve/swapped-tool")).unwrap();
    assert_eq!(
        served["sha256"],
        evil_sha.as_str(),
        "the registry now serves the swapped bundle"
    );

    // A project with the pinned key and no lock: install pins and refuses.
    let victim = project(
        work,
        "victim",
        &format!("[registry]\nurl = \"{}\"\nlog_key = \"{served_key}\"\n\n[tools]\nswapped-tool = \"^1\"\n", registry.url),
    );
    refused(
        user.run(&victim, &["install"]),
        &[
            "transparency log check failed",
            &format!("serves sha256:{evil_sha}"),
            &format!("the log records sha256:{honest_sha}"),
        ],
    );
    assert!(
        !victim.join(".toolreg/tools/swapped-tool").exists(),
        "nothing was installed"
    );

    // `add` refuses it too, and writes nothing.
    let other = project(
        work,
        "other",
        &format!("[registry]\nurl = \"{}\"\n", registry.url),
    );
    user.run(&other, &["add", "swapped-tool"])
        .fails_with(&["the log records sha256"]);
    assert!(!other.join("toolreg.lock").exists());
    assert!(!read(&other.join("toolreg.toml")).contains("swapped-tool"));
}

#[test]
fn a_registry_restored_from_an_old_copy_is_a_rollback_and_regrowing_it_a_fork() {
    let (tmp, registry, user) = setup();
    let work = tmp.path();
    publish(&user, work, "rolled-tool", "1.0.0", "one");
    // The backup the operator will restore: a consistent copy of the database.
    let backup = work.join("backup.db");
    diesel::sql_query(format!("VACUUM INTO '{}'", backup.display()))
        .execute(&mut registry.db())
        .unwrap();
    publish(&user, work, "rolled-tool", "1.1.0", "two");
    publish(&user, work, "rolled-tool", "1.2.0", "three");

    let agent = project(
        work,
        "agent",
        &format!(
            "[registry]\nurl = \"{}\"\n\n[tools]\nrolled-tool = \"=1.0.0\"\n",
            registry.url
        ),
    );
    user.run(&agent, &["update"]).ok();
    let key = registry.get("/api/v1/log/key").trim().to_string();
    assert_eq!(kept_checkpoint(&agent, &key).size, 3);
    let lock_before = read(&agent.join("toolreg.lock"));

    // Restore the old database (same key, same data directory, same port).
    let data = registry.data.clone();
    let url = registry.url.clone();
    registry.stop();
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(data.join(format!("toolreg.db{ext}")));
    }
    std::fs::copy(&backup, data.join("toolreg.db")).unwrap();
    let registry = restart_on(&data, &url);

    let run = user.run(&agent, &["update"]).fails_with(&[
        "transparency log check failed",
        "rolled back",
        "3 records",
    ]);
    assert!(run.stderr.contains("of 1"), "{}", run.stderr);
    user.run(&agent, &["install"]).fails_with(&["rolled back"]);
    assert!(!agent.join(".toolreg/tools/rolled-tool").exists());
    assert_eq!(
        read(&agent.join("toolreg.lock")),
        lock_before,
        "the lock keeps the newer checkpoint"
    );

    // The restored registry grows again with other records: same size, another tree.
    publish(&user, work, "rolled-tool", "1.1.0", "two-again");
    publish(&user, work, "rolled-tool", "1.3.0", "four");
    std::thread::sleep(Duration::from_millis(1100)); // the next checkpoint is signed
    user.run(&agent, &["update"]).fails_with(&["forked"]);
    drop(registry);
}

/// Start `serve` on `data` listening on the port of `url` (retrying while
/// the old process releases it).
fn restart_on(data: &Path, url: &str) -> Registry {
    let port = url.rsplit(':').next().unwrap().parse().unwrap();
    Registry::running(data, on(data).serve_on(port, &[]))
}

#[test]
fn a_checkpoint_not_signed_by_the_pinned_key_is_refused() {
    let (tmp, registry, user) = setup();
    let work = tmp.path();
    publish(&user, work, "keyed-tool", "1.0.0", "one");
    let served = Verifier::parse(registry.get("/api/v1/log/key").trim()).unwrap();
    // Another key under the same origin: what a registry that swapped keys would serve.
    let impostor = Signer::from_seed(served.name(), [42u8; 32]).unwrap();
    let agent = project(
        work,
        "agent",
        &format!(
            "[registry]\nurl = \"{}\"\nlog_key = \"{}\"\n",
            registry.url,
            impostor.verifier_key()
        ),
    );
    user.run(&agent, &["add", "keyed-tool"])
        .fails_with(&["not signed by the pinned log key"]);
    assert!(!agent.join("toolreg.lock").exists());
    // A malformed pinned key names the field.
    let broken = project(
        work,
        "broken",
        &format!(
            "[registry]\nurl = \"{}\"\nlog_key = \"nope\"\n",
            registry.url
        ),
    );
    user.run(&broken, &["add", "keyed-tool"])
        .fails_with(&["registry.log_key"]);
}

#[test]
fn server_verify_catches_a_missing_record() {
    let (tmp, registry, user) = setup();
    let work = tmp.path();
    publish(&user, work, "verified-tool", "1.0.0", "one");
    publish(&user, work, "verified-tool", "1.0.1", "two");
    let ok = registry.server_cmd(&["verify"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    diesel::sql_query("DELETE FROM log_entries WHERE idx = 1")
        .execute(&mut registry.db())
        .unwrap();
    let out = registry.server_cmd(&["verify"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "verify passed with a missing record");
    assert!(
        stdout.contains("verified-tool@1.0.1") && stdout.contains("no log record"),
        "{stdout}"
    );
}
