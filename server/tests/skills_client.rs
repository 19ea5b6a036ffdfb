//! A real Agent Skills client installs from the registry: the npm `skills`
//! CLI (pinned in scripts/skills-client, run with the Node.js 22 installed
//! beside it) runs `skills add <registry> -a claude-code -y` as a process
//! in a scratch project with a scratch HOME. It reads
//! `/.well-known/agent-skills/index.json`, downloads each archive, checks
//! it against the index's digest and extracts it: every file must land in
//! `.claude/skills/<name>/` byte for byte as published. Through a proxy
//! that alters one skill's digest in the index, the client refuses that
//! skill and still installs the other.
//!
//! Needs `eval "$(scripts/skills-client/provision)"`; skips without it
//! (fails under CI or TOOLREG_REQUIRE_SERVICES).

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Output;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use common::skills::{pack, real_skill_files, real_skills};
use common::TestApp;
use toolreg_core::{Tier, ToolFiles};
use toolreg_test_support::both_backends;

/// The provisioned node binary and the CLI's entry point.
struct Client {
    node: PathBuf,
    cli: PathBuf,
}

impl Client {
    fn find() -> Option<Client> {
        match (
            std::env::var_os("TOOLREG_SKILLS_NODE"),
            std::env::var_os("TOOLREG_SKILLS_CLI"),
        ) {
            (Some(node), Some(cli)) => Some(Client {
                node: node.into(),
                cli: cli.into(),
            }),
            _ => toolreg_test_support::unavailable(
                "the skills CLI: run `eval \"$(scripts/skills-client/provision)\"` to set \
                 TOOLREG_SKILLS_NODE and TOOLREG_SKILLS_CLI",
            ),
        }
    }

    /// `skills add <url> -a claude-code -y` in a new project with a new HOME;
    /// the output and the project folder.
    async fn add(&self, url: &str) -> (Output, tempfile::TempDir) {
        let project = tempfile::tempdir().expect("project dir");
        let (node, cli, url, dir) = (
            self.node.clone(),
            self.cli.clone(),
            url.to_string(),
            project.path().to_path_buf(),
        );
        let output = web::block(move || {
            let home = dir.join(".home");
            std::fs::create_dir_all(&home).expect("home");
            std::process::Command::new(node)
                .arg(cli)
                .args(["add", &url, "-a", "claude-code", "-y"])
                .current_dir(&dir)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", &home)
                .env("XDG_STATE_HOME", home.join(".state"))
                .env("XDG_CONFIG_HOME", home.join(".config"))
                .env("DISABLE_TELEMETRY", "1")
                .env("DO_NOT_TRACK", "1")
                .env("NO_COLOR", "1")
                .stdin(std::process::Stdio::null())
                .output()
                .expect("run the skills CLI")
        })
        .await
        .expect("the client's thread");
        (output, project)
    }
}

fn describe(output: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Every file under `dir`, by relative path.
fn installed(dir: &Path) -> ToolFiles {
    ToolFiles::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
}

/// A proxy to `upstream` that answers the discovery index with the digest
/// of the skill `altered` replaced, and everything else unchanged.
fn tampering_proxy(
    upstream: String,
    altered: &'static str,
) -> (String, actix_web::dev::ServerHandle) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let server = HttpServer::new(move || {
        let upstream = upstream.clone();
        App::new().default_service(web::to(move |req: HttpRequest| {
            let target = format!("{upstream}{}", req.uri());
            async move {
                let res = reqwest::get(&target).await.expect("upstream");
                let status = res.status().as_u16();
                let content_type = res
                    .headers()
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("application/octet-stream")
                    .to_string();
                let mut body = res.bytes().await.expect("upstream body").to_vec();
                if req.path() == "/.well-known/agent-skills/index.json" {
                    let mut index: serde_json::Value =
                        serde_json::from_slice(&body).expect("index JSON");
                    for entry in index["skills"].as_array_mut().expect("skills[]") {
                        if entry["name"] == altered {
                            let wrong = toolreg_core::digest::sha256_hex(b"something else");
                            entry["digest"] = format!("sha256:{wrong}").into();
                        }
                    }
                    body = serde_json::to_vec(&index).expect("encode");
                }
                HttpResponse::build(actix_web::http::StatusCode::from_u16(status).expect("status"))
                    .content_type(content_type)
                    .body(body)
            }
        }))
    })
    .workers(1)
    .listen(listener)
    .expect("listen")
    .run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    (url, handle)
}

async fn the_skills_cli_installs_and_checks_digests(app: TestApp) {
    let Some(client) = Client::find() else {
        return;
    };
    let Some((root, skills)) = real_skills() else {
        return;
    };
    let token = app.user("skiller", Tier::Trusted).await;
    // A script skill with code in folders, and a one-file prompt skill.
    let mut published = Vec::new();
    for name in ["webapp-testing", "git-commit"] {
        let skill = skills
            .iter()
            .find(|s| s.name == name)
            .expect("in the table");
        let files = real_skill_files(&root, name, "1.0.0", &skill.license);
        app.publish_ok(&token, pack(&files)).await;
        published.push((name, files));
    }

    let (output, project) = client.add(&app.url).await;
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("Found 2 skills"),
        "both from the discovery index: {}",
        describe(&output)
    );
    for (name, files) in &published {
        let dir = project.path().join(".claude/skills").join(name);
        assert!(dir.is_dir(), "{name} installed: {}", describe(&output));
        assert_eq!(
            &installed(&dir),
            files,
            "{name}: byte for byte as published"
        );
    }

    // One digest altered: that skill is refused, the other still installed.
    let (proxy, handle) = tampering_proxy(app.url.clone(), "webapp-testing");
    let (output, project) = client.add(&proxy).await;
    let skills_dir = project.path().join(".claude/skills");
    assert!(
        !skills_dir.join("webapp-testing").exists(),
        "a skill whose archive does not match its digest is not installed: {}",
        describe(&output)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Found 1 skill"), "{}", describe(&output));
    let dir = skills_dir.join("git-commit");
    assert!(dir.is_dir(), "{}", describe(&output));
    assert_eq!(&installed(&dir), &published[1].1);
    handle.stop(false).await;
}

both_backends!(async TestApp::start => the_skills_cli_installs_and_checks_digests);
