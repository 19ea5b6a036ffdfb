//! Trusted publishing through the real binaries, on both backends: a
//! `toolreg-server` process trusting a local OpenID Connect issuer
//! (`toolreg_test_support::issuer`, `--trusted-issuer`), and `toolreg` run
//! as a process.
//!
//! - The owner adds, lists and removes trusted publishers with
//!   `toolreg trusted-publisher`; a refused one prints the registry's detail.
//! - `toolreg publish` with no token and GitHub Actions' variables pointed
//!   at the issuer exchanges the job's ID token and publishes; with
//!   `TOOLREG_OIDC_TOKEN` (GitLab's way) it exchanges that; a wrong
//!   audience and a removed trusted publisher are refused, naming why.
//! - `toolreg info` shows the version's provenance.
//! - `add` and `install` verify the attestation of a version with
//!   provenance against the pinned log key, and refuse one that does not
//!   verify or does not say what the version claims (through a proxy that
//!   alters the registry's answers), writing nothing.
//! - `[policy] require_provenance` refuses a version published with a
//!   user's token, naming it, in `add` and `install`.
//! - The builder is part of the pin: toolreg.lock records the repository
//!   and workflow (and issuer) of a version built in CI; `update` asks
//!   before moving to a version published by hand or built by another
//!   repository; `require_provenance = { repositories = [...] }` refuses
//!   builds from any other repository, in `add`, `install` and offline in
//!   `verify`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use toolreg_e2e::{
    both_backends, copy_dir, corpus_tool, write_tool_manifest, Backend, FakeRegistry, Reply,
    Server, User,
};
use toolreg_test_support::issuer::{stable_id, Issuer};

const REPO: &str = "acme/tools";
const WORKFLOW: &str = "release.yml";

/// A registry trusting a local issuer, with `alice` (logged in) owning
/// `ci-tool` 1.0.0, published with her own token.
struct Ci {
    server: Server,
    issuer: Issuer,
    alice: User,
    work: tempfile::TempDir,
}

fn start(backend: Backend) -> Option<Ci> {
    let issuer = Issuer::start();
    let server = Server::start_with(backend, &["--trusted-issuer", &issuer.url])?;
    let token = server.create_user("alice", "trusted");
    let alice = User::new();
    let work = tempfile::tempdir().unwrap();
    alice
        .run(
            work.path(),
            &["login", "--registry", &server.url, "--token", &token],
        )
        .ok();
    let ci = Ci {
        server,
        issuer,
        alice,
        work,
    };
    let dir = ci.tool("ci-tool", "1.0.0");
    ci.alice
        .run(ci.work(), &["publish", dir.to_str().unwrap()])
        .ok();
    Some(ci)
}

impl Ci {
    fn work(&self) -> &Path {
        self.work.path()
    }

    /// An HTTP tool directory `name` at `version`.
    fn tool(&self, name: &str, version: &str) -> PathBuf {
        let dir = self.work().join(format!("{name}-{version}"));
        copy_dir(&corpus_tool("matimo/github-create-issue"), &dir);
        write_tool_manifest(&dir, name, version);
        dir
    }

    /// `toolreg publish` of `name` `version` in a CI job: a user with no
    /// stored token, the registry from `TOOLREG_REGISTRY`, and `env`.
    fn publish_in_ci(
        &self,
        name: &str,
        version: &str,
        env: &[(String, String)],
    ) -> toolreg_e2e::Run {
        let dir = self.tool(name, version);
        let job = User::new();
        let mut env = env.to_vec();
        env.push(("TOOLREG_REGISTRY".into(), self.server.url.clone()));
        job.run_with_env(self.work(), &["publish", dir.to_str().unwrap()], &env)
    }

    fn alice(&self, args: &[&str]) -> toolreg_e2e::Run {
        self.alice.run(self.work(), args)
    }

    /// Alice trusts `repository`'s `workflow` (on the local issuer) to publish ci-tool.
    fn trust(&self, repository: &str, workflow: &str) -> toolreg_e2e::Run {
        self.alice(&[
            "trusted-publisher",
            "add",
            "ci-tool",
            "--issuer",
            &self.issuer.url,
            "--repository",
            repository,
            "--workflow",
            workflow,
        ])
    }
}

/// Neither the exchanged registry token nor an ID token (a JWT starts
/// `eyJ`) is printed.
#[track_caller]
fn no_tokens_shown(run: &toolreg_e2e::Run) {
    for text in [&run.stdout, &run.stderr] {
        assert!(
            !text.contains("trg_") && !text.contains("eyJ"),
            "a token was printed:\n{text}"
        );
    }
}

/// GitLab CI's ID-token claims for a pipeline of `project` (minted by the
/// local issuer as `TOOLREG_OIDC_TOKEN`).
fn gitlab_claims(issuer: &Issuer, project: &str) -> Value {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    json!({
        "iss": issuer.url, "aud": "toolreg", "sub": format!("project_path:{project}:ref_type:branch:ref:main"),
        "jti": format!("gl-{now}-{}", std::process::id()), "iat": now, "nbf": now, "exp": now + 300,
        "project_path": project, "namespace_path": "acme",
        "ci_config_ref_uri": format!("gitlab.com/{project}//.gitlab-ci.yml@refs/heads/main"),
        "ref": "main", "ref_type": "branch", "sha": "fedcba9876543210fedcba9876543210fedcba98",
        "pipeline_id": "77", "job_id": "7001",
    })
}

fn publish_from_ci(ci: Ci) {
    // The owner trusts acme/tools' release.yml for ci-tool.
    let added = ci
        .alice(&[
            "trusted-publisher",
            "add",
            "ci-tool",
            "--issuer",
            &ci.issuer.url,
            "--repository",
            REPO,
            "--workflow",
            WORKFLOW,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(added["repository"], REPO, "{added}");
    assert_eq!(added["workflow"], WORKFLOW, "{added}");
    assert_eq!(added["created_by"], "alice", "{added}");
    let listed = ci.alice(&["trusted-publisher", "list", "ci-tool"]).ok();
    assert!(
        listed.stdout.contains(REPO) && listed.stdout.contains(WORKFLOW),
        "{}",
        listed.stdout
    );
    // An issuer the registry does not trust is refused with its detail.
    let refused = ci
        .alice(&[
            "trusted-publisher",
            "add",
            "ci-tool",
            "--gitlab",
            "--repository",
            REPO,
            "--workflow",
            ".gitlab-ci.yml",
        ])
        .fails_with(&[
            "adding a trusted publisher to ci-tool failed",
            "https://gitlab.com",
        ]);
    assert!(refused.stderr.contains("issuer"), "{}", refused.stderr);

    // The CI job: no token, GitHub Actions' variables, the issuer mints.
    let actions = ci
        .issuer
        .actions_env(ci.issuer.github_claims(REPO, WORKFLOW));
    let run = ci.publish_in_ci("ci-tool", "1.1.0", &actions).ok();
    no_tokens_shown(&run);
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("trusted publishing:"))
        .unwrap_or_else(|| panic!("no trusted publishing line:\n{}", run.stderr));
    for needle in ["GitHub Actions", REPO, "ci-tool"] {
        assert!(line.contains(needle), "{needle} not in {line}");
    }
    assert!(
        run.stdout.contains("published ci-tool 1.1.0"),
        "{}",
        run.stdout
    );

    // info shows the provenance; the version published with a user's token has none.
    let info = ci.alice(&["info", "ci-tool@1.1.0"]).ok();
    for needle in [
        REPO,
        WORKFLOW,
        "refs/tags/v1.1.0",
        "0123456789abcdef0123456789abcdef01234567",
        "4242",
    ] {
        assert!(info.stdout.contains(needle), "{needle}:\n{}", info.stdout);
    }
    let v = ci.alice(&["info", "ci-tool@1.1.0", "--json"]).ok().json();
    assert_eq!(
        v["provenance"],
        json!({"issuer": ci.issuer.url, "repository": REPO, "workflow": WORKFLOW,
               "repository_id": stable_id(REPO), "owner_id": stable_id("acme"),
               "ref": "refs/tags/v1.1.0", "sha": "0123456789abcdef0123456789abcdef01234567",
               "run_id": "4242"}),
        "{v}"
    );
    let old = ci.alice(&["info", "ci-tool@1.0.0"]).ok();
    assert!(old.stdout.contains("provenance none"), "{}", old.stdout);

    // An ID token for another audience is refused by the registry, which says so.
    let mut other = actions.clone();
    other.push(("TOOLREG_OIDC_AUDIENCE".into(), "not-toolreg".into()));
    let run = ci
        .publish_in_ci("ci-tool", "1.2.0", &other)
        .fails_with(&["exchanging the CI job's ID token failed", "audience"]);
    no_tokens_shown(&run);

    // GitLab's way: the ID token in TOOLREG_OIDC_TOKEN.
    ci.trust("acme/gl-tools", ".gitlab-ci.yml").ok();
    let token = ci.issuer.mint(&gitlab_claims(&ci.issuer, "acme/gl-tools"));
    let run = ci
        .publish_in_ci("ci-tool", "1.2.0", &[("TOOLREG_OIDC_TOKEN".into(), token)])
        .ok();
    no_tokens_shown(&run);
    assert!(
        run.stderr.contains("TOOLREG_OIDC_TOKEN") && run.stderr.contains("acme/gl-tools"),
        "{}",
        run.stderr
    );
    let v = ci.alice(&["info", "ci-tool@1.2.0", "--json"]).ok().json();
    assert_eq!(v["provenance"]["repository"], "acme/gl-tools", "{v}");
    assert_eq!(v["provenance"]["workflow"], ".gitlab-ci.yml", "{v}");
    assert_eq!(v["provenance"]["run_id"], "77", "{v}");

    // Outside CI, no token is the usual error; a GitHub Actions job without
    // `id-token: write` is told what it lacks.
    ci.publish_in_ci("ci-tool", "1.3.0", &[])
        .fails_with(&["no token for", "toolreg login"]);
    ci.publish_in_ci(
        "ci-tool",
        "1.3.0",
        &[("GITHUB_ACTIONS".into(), "true".into())],
    )
    .fails_with(&["trusted publishing:", "permissions: id-token: write"]);

    // Only owners see or change a tool's trusted publishers.
    let bob = User::new();
    let token = ci.server.create_user("bob", "trusted");
    for args in [
        &["trusted-publisher", "list", "ci-tool"][..],
        &["trusted-publisher", "remove", "ci-tool", "1"][..],
    ] {
        let mut args = args.to_vec();
        args.extend(["--registry", &ci.server.url, "--token", &token]);
        bob.run(ci.work(), &args)
            .fails_with(&["only owners of `ci-tool`", "403"]);
    }

    // Removed: the workflow's ID tokens no longer publish.
    let id = added["id"].as_i64().expect("id").to_string();
    ci.alice(&["trusted-publisher", "remove", "ci-tool", &id])
        .ok();
    let listed = ci
        .alice(&["trusted-publisher", "list", "ci-tool", "--json"])
        .ok()
        .json();
    assert_eq!(
        listed["trusted_publishers"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    let run = ci
        .publish_in_ci("ci-tool", "1.3.0", &actions)
        .fails_with(&["no trusted publisher for repository", REPO]);
    no_tokens_shown(&run);
    ci.alice(&["trusted-publisher", "remove", "ci-tool", &id])
        .fails_with(&["has no trusted publisher"]);
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// An agent project `name` on `registry` whose toolreg.toml is `[registry]` + `rest`.
fn project(ci: &Ci, registry: &str, name: &str, rest: &str) -> (PathBuf, String) {
    let dir = ci.work().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = format!("[registry]\nurl = \"{registry}\"\n\n{rest}");
    std::fs::write(dir.join("toolreg.toml"), &manifest).unwrap();
    (dir, manifest)
}

/// What the proxy in front of the registry does to its answers.
const PASS: u8 = 0;
/// The version JSON of 1.1.0 claims another CI run than the one attested.
const CLAIM_OTHER_RUN: u8 = 1;
/// The attestation of 1.1.0 says another run, its signature left as it was.
const ALTER_ATTESTATION: u8 = 2;

/// A proxy forwarding GETs to `upstream`, altering answers as `mode` says.
fn proxy(upstream: &str, mode: Arc<AtomicU8>) -> FakeRegistry {
    let upstream = upstream.to_string();
    FakeRegistry::start(move |method, path| {
        assert_eq!(method, "GET", "the consumer commands only read");
        let res = reqwest::blocking::Client::new()
            .get(format!("{upstream}{path}"))
            .send()
            .expect("forward to the registry");
        let status = res.status().as_u16();
        let content_type = match res
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
        {
            t if t.starts_with("application/problem+json") => "application/problem+json",
            t if t.starts_with("application/json") => "application/json",
            t if t.starts_with("text/") => "text/plain",
            _ => "application/gzip",
        };
        let mut body = res.bytes().expect("the registry's answer").to_vec();
        let path = path.split('?').next().unwrap_or(path);
        match mode.load(Ordering::SeqCst) {
            CLAIM_OTHER_RUN if path == "/api/v1/tools/ci-tool/1.1.0" => {
                let mut v: Value = serde_json::from_slice(&body).unwrap();
                v["provenance"]["run_id"] = json!("9999");
                body = v.to_string().into_bytes();
            }
            ALTER_ATTESTATION if path == "/api/v1/tools/ci-tool/1.1.0/attestation" => {
                let mut a: Value = serde_json::from_slice(&body).unwrap();
                let note = a["note"].as_str().unwrap().replace("4242", "9999");
                a["note"] = json!(note);
                a["statement"]["provenance"]["run_id"] = json!("9999");
                body = a.to_string().into_bytes();
            }
            _ => {}
        }
        Reply {
            status,
            content_type,
            body,
        }
    })
}

fn consumers_verify_provenance(ci: Ci) {
    let actions = ci
        .issuer
        .actions_env(ci.issuer.github_claims(REPO, WORKFLOW));
    ci.trust(REPO, WORKFLOW).ok();
    ci.publish_in_ci("ci-tool", "1.1.0", &actions).ok();
    let verified =
        "provenance of ci-tool 1.1.0: built by acme/tools (release.yml, refs/tags/v1.1.0";
    let url = ci.server.url.clone();

    // add and install check the attestation and say so.
    let (agent, _) = project(&ci, &url, "agent", "[tools]\n");
    let run = ci.alice.run(&agent, &["add", "ci-tool@=1.1.0"]).ok();
    assert!(
        run.stderr.contains(verified) && run.stderr.contains("attestation verified"),
        "{}",
        run.stderr
    );
    let run = ci.alice.run(&agent, &["install"]).ok();
    assert!(run.stderr.contains(verified), "{}", run.stderr);
    assert!(agent.join(".toolreg/tools/ci-tool/1.1.0").is_dir());

    // require_provenance: a version published with a user's token is refused by name.
    let strict = "[tools]\n\n[policy]\nrequire_provenance = true\n";
    let (dir, manifest) = project(&ci, &url, "strict", strict);
    ci.alice.run(&dir, &["add", "ci-tool@=1.0.0"]).fails_with(&[
        "ci-tool 1.0.0 has no verified provenance",
        "toolreg.toml:7: require_provenance = true",
        "not published from CI through trusted publishing",
    ]);
    assert_eq!(read(&dir.join("toolreg.toml")), manifest);
    assert!(!dir.join("toolreg.lock").exists());
    let run = ci.alice.run(&dir, &["add", "ci-tool@^1"]).ok();
    assert!(run.stdout.contains("locked 1.1.0"), "{}", run.stdout);
    ci.alice.run(&dir, &["install"]).ok();

    // ... and by install, for the tools the list names, before the lock is written.
    let some = "[tools]\nci-tool = \"=1.0.0\"\n\n[policy]\nrequire_provenance = [\"ci-tool\"]\n";
    let (dir, manifest) = project(&ci, &url, "strict-install", some);
    ci.alice.run(&dir, &["install"]).fails_with(&[
        "ci-tool 1.0.0 has no verified provenance",
        "require_provenance = [\"ci-tool\"]",
    ]);
    assert_eq!(read(&dir.join("toolreg.toml")), manifest);
    assert!(!dir.join("toolreg.lock").exists() && !dir.join(".toolreg").exists());
    // Once the policy requires it, an installed pin with provenance still
    // installs, and one without is refused even though nothing is downloaded.
    let require = |dir: &Path| {
        let text = read(&dir.join("toolreg.toml"))
            .replace("[tools]", "[policy]\nrequire_provenance = true\n\n[tools]");
        std::fs::write(dir.join("toolreg.toml"), text).unwrap();
    };
    require(&agent);
    ci.alice.run(&agent, &["install", "--locked"]).ok();
    let (old, _) = project(&ci, &url, "old", "[tools]\nci-tool = \"=1.0.0\"\n");
    ci.alice.run(&old, &["install"]).ok();
    require(&old);
    ci.alice
        .run(&old, &["install", "--locked"])
        .fails_with(&["ci-tool 1.0.0 has no verified provenance"]);
    // update too, until the requirement allows a version with provenance.
    let lock = read(&old.join("toolreg.lock"));
    ci.alice
        .run(&old, &["update"])
        .fails_with(&["ci-tool 1.0.0 has no verified provenance"]);
    assert_eq!(read(&old.join("toolreg.lock")), lock);
    let text = read(&old.join("toolreg.toml")).replace("\"=1.0.0\"", "\"^1\"");
    std::fs::write(old.join("toolreg.toml"), text).unwrap();
    let run = ci.alice.run(&old, &["update"]).ok();
    assert!(
        run.stdout.contains("updating ci-tool 1.0.0 -> 1.1.0") && run.stderr.contains(verified),
        "{}\n{}",
        run.stdout,
        run.stderr
    );

    // Through a proxy that alters the registry's answers.
    let mode = Arc::new(AtomicU8::new(PASS));
    let fake = proxy(&url, mode.clone());
    let (via, _) = project(&ci, &fake.url, "via-proxy", "[tools]\n");
    ci.alice.run(&via, &["add", "ci-tool@=1.1.0"]).ok();
    let lock = read(&via.join("toolreg.lock"));

    mode.store(ALTER_ATTESTATION, Ordering::SeqCst);
    let run = ci.alice.run(&via, &["install"]).fails_with(&[
        "attestation check failed for ci-tool 1.1.0",
        "not signed by the pinned log key",
    ]);
    assert!(
        !via.join(".toolreg/tools/ci-tool/1.1.0").exists(),
        "{}",
        run.stderr
    );
    assert_eq!(read(&via.join("toolreg.lock")), lock);

    mode.store(CLAIM_OTHER_RUN, Ordering::SeqCst);
    let (other, manifest) = project(&ci, &fake.url, "via-proxy-2", "[tools]\n");
    ci.alice
        .run(&other, &["add", "ci-tool@=1.1.0"])
        .fails_with(&[
            "attestation check failed for ci-tool 1.1.0",
            "run 9999",
            "run 4242",
        ]);
    assert_eq!(read(&other.join("toolreg.toml")), manifest);
    assert!(!other.join("toolreg.lock").exists());

    mode.store(PASS, Ordering::SeqCst);
    ci.alice.run(&via, &["install"]).ok();
}

/// The `provenance = {...}` line of `name`'s entry in a project's lock.
fn locked_builder(dir: &Path, name: &str) -> Option<toml::Value> {
    let lock: toml::Value = toml::from_str(&read(&dir.join("toolreg.lock"))).unwrap();
    lock["tool"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"].as_str() == Some(name))
        .and_then(|t| t.get("provenance").cloned())
}

fn set_requirement(dir: &Path, req: &str) {
    let text = read(&dir.join("toolreg.toml"));
    let start = text.find("ci-tool = ").expect("ci-tool is in [tools]");
    let end = start + text[start..].find('\n').unwrap();
    let text = format!("{}ci-tool = \"{req}\"{}", &text[..start], &text[end..]);
    std::fs::write(dir.join("toolreg.toml"), text).unwrap();
}

fn the_builder_is_part_of_the_pin(ci: Ci) {
    let url = ci.server.url.clone();
    // 1.1.0 built by acme/tools' release.yml, 1.2.0 published by hand,
    // 1.3.0 built by another repository of acme.
    for (repo, workflow) in [(REPO, WORKFLOW), ("acme/other", "ship.yml")] {
        ci.trust(repo, workflow).ok();
    }
    let job = |repo: &str, workflow: &str| {
        ci.issuer
            .actions_env(ci.issuer.github_claims(repo, workflow))
    };
    ci.publish_in_ci("ci-tool", "1.1.0", &job(REPO, WORKFLOW))
        .ok();
    let by_hand = ci.tool("ci-tool", "1.2.0");
    ci.alice(&["publish", by_hand.to_str().unwrap()]).ok();
    ci.publish_in_ci("ci-tool", "1.3.0", &job("acme/other", "ship.yml"))
        .ok();

    // The lock records who built the pinned version.
    let (agent, _) = project(&ci, &url, "agent", "[tools]\n");
    ci.alice.run(&agent, &["add", "ci-tool@=1.1.0"]).ok();
    let builder = locked_builder(&agent, "ci-tool").expect("the lock records the builder");
    assert_eq!(builder["repository"].as_str(), Some(REPO), "{builder}");
    assert_eq!(builder["workflow"].as_str(), Some(WORKFLOW), "{builder}");
    assert_eq!(
        builder["issuer"].as_str(),
        Some(ci.issuer.url.as_str()),
        "{builder}"
    );
    ci.alice.run(&agent, &["install"]).ok();
    ci.alice.run(&agent, &["verify"]).ok();

    // To the version published by hand: a high change that needs a yes.
    set_requirement(&agent, "<1.3.0");
    let (manifest, lock) = (
        read(&agent.join("toolreg.toml")),
        read(&agent.join("toolreg.lock")),
    );
    let run = ci
        .alice
        .run(&agent, &["update"])
        .fails_with(&["ci-tool 1.1.0 -> 1.2.0 (high change of builder)", "--yes"]);
    assert!(
        run.stdout
            .contains("high    builder  built by acme/tools (release.yml")
            && run.stdout.contains("published by hand"),
        "{}",
        run.stdout
    );
    assert_eq!(read(&agent.join("toolreg.toml")), manifest);
    assert_eq!(read(&agent.join("toolreg.lock")), lock);
    let out = ci.alice.run(&agent, &["update", "--json"]).code(1).json();
    let moved = &out["changes"][0];
    assert_eq!(moved["highest"], "high", "{out}");
    assert_eq!(moved["builder"]["from"]["repository"], REPO, "{out}");
    assert_eq!(moved["builder"]["to"], Value::Null, "{out}");
    ci.alice.run(&agent, &["update", "--yes"]).ok();
    assert_eq!(locked_builder(&agent, "ci-tool"), None);

    // To another repository's build: asked too.
    let (other, _) = project(&ci, &url, "other", "[tools]\n");
    ci.alice.run(&other, &["add", "ci-tool@=1.1.0"]).ok();
    set_requirement(&other, "^1");
    ci.alice
        .run(&other, &["update"])
        .fails_with(&["ci-tool 1.1.0 -> 1.3.0 (high change of builder)"]);
    let run = ci.alice.run(&other, &["update", "--yes"]).ok();
    assert!(
        run.stdout.contains("built by acme/tools (release.yml")
            && run.stdout.contains("-> built by acme/other (ship.yml"),
        "{}",
        run.stdout
    );
    assert_eq!(
        locked_builder(&other, "ci-tool").unwrap()["repository"].as_str(),
        Some("acme/other")
    );
    ci.alice.run(&other, &["install"]).ok();

    // require_provenance names the repositories it accepts.
    let only_tools =
        "[tools]\n\n[policy]\nrequire_provenance = { repositories = [\"acme/tools\"] }\n";
    let (strict, manifest) = project(&ci, &url, "strict", only_tools);
    ci.alice
        .run(&strict, &["add", "ci-tool@=1.3.0"])
        .fails_with(&[
            "ci-tool 1.3.0 was built by acme/other (ship.yml",
            "toolreg.toml:7: require_provenance = { repositories = [\"acme/tools\"] }",
        ]);
    assert_eq!(read(&strict.join("toolreg.toml")), manifest);
    assert!(!strict.join("toolreg.lock").exists());
    ci.alice.run(&strict, &["add", "ci-tool@=1.1.0"]).ok();
    ci.alice.run(&strict, &["install"]).ok();
    ci.alice.run(&strict, &["verify", "--offline"]).ok();
    // A project that tightens its policy after pinning another repository's build.
    let text = read(&other.join("toolreg.toml"))
        + "\n[policy]\nrequire_provenance = { repositories = [\"acme/tools\", \"corp/*\"] }\n";
    std::fs::write(other.join("toolreg.toml"), text).unwrap();
    for args in [
        &["verify", "--offline"][..],
        &["install", "--locked"][..],
        &["export"][..],
    ] {
        ci.alice.run(&other, args).fails_with(&[
            "ci-tool 1.3.0 was built by acme/other (ship.yml",
            "a repository this project's policy does not accept",
        ]);
    }
    // A lock from before builders were recorded gets it on the next install.
    let lock = read(&strict.join("toolreg.lock"));
    let line = lock
        .lines()
        .find(|l| l.starts_with("provenance = "))
        .unwrap();
    std::fs::write(
        strict.join("toolreg.lock"),
        lock.replace(&format!("{line}\n"), ""),
    )
    .unwrap();
    ci.alice
        .run(&strict, &["verify", "--offline"])
        .fails_with(&["toolreg.lock records no provenance for ci-tool 1.1.0"]);
    ci.alice.run(&strict, &["install"]).ok();
    assert_eq!(read(&strict.join("toolreg.lock")), lock);
    ci.alice.run(&strict, &["verify", "--offline"]).ok();
}

both_backends!(start => publish_from_ci, consumers_verify_provenance, the_builder_is_part_of_the_pin);
