//! Every cell of tiers × execution kinds × formats through the real HTTP API
//! under the tier policy: a publisher of each tier — and an agent token of a trusted
//! user, which always publishes as `untrusted` — publishes one bundle of
//! every format and kind. The default policy decides 201 or 403; a refusal
//! is problem+json naming the kind, the tier it needs and the publisher's
//! tier, and leaves no tool or version row, no blob, no change-log row and
//! no audit entry behind.
//!
//! Every Shinkai file of `../shared/corpus/shinkai` is a `function` tool and
//! is published by every tier (read at test time with a stand-in
//! `tool.ts`/`tool.py`; the Shinkai files are never copied into the repo).

mod common;

use common::{json, problem, Backend, BundleBuilder, TestApp};
use serde_json::{json, Value};
use toolreg_core::{Policy, Tier};
use toolreg_test_support::both_backends;

/// Who publishes: a user of a tier, or an agent token of a trusted user.
#[derive(Debug, Clone, Copy)]
enum Publisher {
    User(Tier),
    AgentOfTrusted,
}

impl Publisher {
    /// The tier the registry must publish with (written out, not computed by the policy code).
    fn effective(self) -> &'static str {
        match self {
            Publisher::User(Tier::Untrusted) | Publisher::AgentOfTrusted => "untrusted",
            Publisher::User(Tier::Verified) => "verified",
            Publisher::User(Tier::Trusted) => "trusted",
        }
    }
}

/// The default tier policy, written out: the lowest tier allowed per kind.
fn required(kind: &str) -> &'static str {
    match kind {
        "function" | "script" => "trusted",
        "command" => "verified",
        "http" | "prompt" | "schema" => "untrusted",
        other => panic!("unknown kind {other}"),
    }
}

fn rank(tier: &str) -> u8 {
    match tier {
        "untrusted" => 0,
        "verified" => 1,
        "trusted" => 2,
        other => panic!("unknown tier {other}"),
    }
}

/// One bundle of the matrix: its format, the kind it must be classified as,
/// and how to build it under a given registry name.
struct Case {
    label: String,
    format: &'static str,
    kind: &'static str,
    build: Box<dyn Fn(&str) -> BundleBuilder>,
}

/// A Matimo `script` tool (inline code in the definition).
const SCRIPT_YAML: &str = "name: word-count\nversion: '1.0.0'\ndescription: Count the words of a text.\n\
parameters:\n  text:\n    type: string\n    required: true\n    description: The text\n\
execution:\n  type: script\n  language: javascript\n  code: |\n    return { words: params.text.split(/\\s+/).filter(Boolean).length };\n";

/// Stand-in code for a Shinkai tool (the corpus carries metadata only).
const TOOL_TS: &str = "export async function run(config: any, params: any) { return {}; }\n";
const TOOL_PY: &str = "async def run(config, inputs):\n    return {}\n";

fn cases() -> Vec<Case> {
    let mut cases = vec![
        Case {
            label: "matimo function (calculator + calculator.ts)".into(),
            format: "matimo",
            kind: "function",
            build: Box::new(|name| {
                BundleBuilder::corpus("matimo/calculator", name, "1.0.0").file(
                    "calculator.ts",
                    "export default async function (p: any) { return { result: 0 }; }\n",
                )
            }),
        },
        Case {
            label: "matimo script (inline code)".into(),
            format: "matimo",
            kind: "script",
            build: Box::new(|name| {
                BundleBuilder::http(name, "1.0.0").file("definition.yaml", SCRIPT_YAML)
            }),
        },
        Case {
            label: "matimo command (valid-tool)".into(),
            format: "matimo",
            kind: "command",
            build: Box::new(|name| BundleBuilder::corpus("matimo/valid-tool", name, "1.0.0")),
        },
        Case {
            label: "matimo http (github-create-issue)".into(),
            format: "matimo",
            kind: "http",
            build: Box::new(|name| {
                BundleBuilder::corpus("matimo/github-create-issue", name, "1.0.0")
            }),
        },
        Case {
            label: "mcp tool (github-create_issue)".into(),
            format: "mcp",
            kind: "schema",
            build: Box::new(|name| BundleBuilder::corpus("mcp/github-create_issue", name, "1.0.0")),
        },
        Case {
            label: "prompt (summarize-text)".into(),
            format: "prompt",
            kind: "prompt",
            build: Box::new(|name| BundleBuilder::corpus("prompt/summarize-text", name, "1.0.0")),
        },
    ];
    for dir in shinkai_dirs() {
        // The Python tools of the corpus (SOURCES.md); the others are Deno (tool.ts).
        let python = ["arxiv-search", "audio-to-text"]
            .iter()
            .any(|n| dir.ends_with(n));
        let rel = format!(
            "shinkai/{}",
            dir.file_name().and_then(|n| n.to_str()).expect("dir name")
        );
        cases.push(Case {
            label: format!(
                "{rel} (+ stand-in {})",
                if python { "tool.py" } else { "tool.ts" }
            ),
            format: "shinkai",
            kind: "function",
            build: Box::new(move |name| {
                let b = BundleBuilder::corpus(&rel, name, "1.0.0");
                if python {
                    b.file("tool.py", TOOL_PY)
                } else {
                    b.file("tool.ts", TOOL_TS)
                }
            }),
        });
    }
    cases
}

/// Every Shinkai tool directory of the shared corpus (at least the nine known ones).
fn shinkai_dirs() -> Vec<std::path::PathBuf> {
    let root = common::repo_root().join("../shared/corpus/shinkai");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("the Shinkai corpus {} is needed: {e}", root.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("metadata.json").is_file())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 9,
        "expected the 9 Shinkai corpus tools, found {dirs:?}"
    );
    dirs
}

/// A token for `publisher`: a fresh user of that tier, or an agent token
/// created over HTTP by a fresh trusted user.
async fn token_for(app: &TestApp, publisher: Publisher, login: &str) -> String {
    match publisher {
        Publisher::User(tier) => app.user(login, tier).await,
        Publisher::AgentOfTrusted => {
            let owner = app.user(login, Tier::Trusted).await;
            let res = app
                .client
                .post(app.api("/api/v1/tokens"))
                .bearer_auth(&owner)
                .json(&json!({"name": "agent", "agent": true}))
                .send()
                .await
                .expect("POST /api/v1/tokens");
            let (status, body) = json(res).await;
            assert_eq!(status, 201, "{body:#}");
            assert_eq!(body["agent"], true, "{body:#}");
            body["token"].as_str().expect("token").to_string()
        }
    }
}

/// Registry names are unique per app; `n` keeps them apart.
fn tool_name(n: usize) -> String {
    format!("matrix-tool-{n}")
}

/// Publish every case as `publisher` and check each cell; panics listing every wrong cell.
async fn every_cell(app: TestApp, publisher: Publisher) {
    let token = token_for(&app, publisher, "publisher").await;
    let me: Value = app
        .get_authed("/api/v1/me", &token)
        .await
        .json()
        .await
        .expect("me");
    assert_eq!(me["login"], "publisher");
    let effective = publisher.effective();
    let mut wrong = Vec::new();
    for (n, case) in cases().iter().enumerate() {
        let name = tool_name(n);
        let bundle = (case.build)(&name).pack();
        let allowed = rank(effective) >= rank(required(case.kind));
        let before = (
            app.stored_objects().await,
            app.count("audit_log").await,
            app.count("changes").await,
        );
        let res = app.publish(&token, bundle).await;
        let status = res.status().as_u16();
        let cell = format!(
            "{publisher:?} × {} × {} [{}]",
            case.kind, case.format, case.label
        );
        if allowed {
            let body: Value = res.json().await.unwrap_or(Value::Null);
            if status != 201 {
                wrong.push(format!("{cell}: expected 201, got {status}: {body}"));
                continue;
            }
            for (field, want) in [
                ("execution", case.kind),
                ("format", case.format),
                ("tier", effective),
            ] {
                if body[field] != want {
                    wrong.push(format!(
                        "{cell}: publish answer {field} = {}, expected {want}",
                        body[field]
                    ));
                }
            }
            let v: Value = app
                .get(&format!("/api/v1/tools/{name}/1.0.0"))
                .await
                .json()
                .await
                .expect("version");
            if v["execution"] != case.kind
                || v["publisher"]["tier"] != effective
                || v["blocked"] != false
            {
                wrong.push(format!("{cell}: version metadata {v}"));
            }
        } else {
            if status != 403 {
                let body = res.text().await.unwrap_or_default();
                wrong.push(format!("{cell}: expected 403, got {status}: {body}"));
                continue;
            }
            let body = problem(res, 403, "tier-forbidden").await;
            let detail = body["detail"].as_str().unwrap_or_default();
            let needed = required(case.kind);
            if body["execution"] != case.kind
                || body["required_tier"] != needed
                || body["publisher_tier"] != effective
            {
                wrong.push(format!("{cell}: problem members {body}"));
            }
            if !(detail.contains(&format!("`{}`", case.kind))
                && detail.contains(&format!("`{needed}`"))
                && detail.contains(&format!("`{effective}`")))
            {
                wrong.push(format!(
                    "{cell}: detail does not name kind, needed and actual tier: {detail}"
                ));
            }
            let after = (
                app.stored_objects().await,
                app.count("audit_log").await,
                app.count("changes").await,
            );
            if after != before {
                wrong.push(format!(
                    "{cell}: a refused publish stored something: {before:?} -> {after:?}"
                ));
            }
            let (status, _) = json(app.get(&format!("/api/v1/tools/{name}")).await).await;
            if status != 404 {
                wrong.push(format!(
                    "{cell}: the refused tool exists (GET answered {status})"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong cell(s):\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    // Only the allowed cells left rows behind.
    let allowed = cases()
        .iter()
        .filter(|c| rank(effective) >= rank(required(c.kind)))
        .count() as i64;
    assert_eq!(app.count("versions").await, allowed);
    assert_eq!(app.count("tools").await, allowed);
    assert_eq!(app.stored_objects().await.len() as i64, allowed);
}

async fn untrusted(app: TestApp) {
    every_cell(app, Publisher::User(Tier::Untrusted)).await
}
async fn verified(app: TestApp) {
    every_cell(app, Publisher::User(Tier::Verified)).await
}
async fn trusted(app: TestApp) {
    every_cell(app, Publisher::User(Tier::Trusted)).await
}
async fn agent_token_of_a_trusted_user(app: TestApp) {
    every_cell(app, Publisher::AgentOfTrusted).await
}

both_backends!(async TestApp::start => untrusted, verified, trusted, agent_token_of_a_trusted_user);

/// The policy is configuration: with `http=verified,function=verified` an
/// untrusted user can't publish http and a verified one can publish functions.
async fn with_configured_policy(backend: Backend) -> Option<TestApp> {
    let policy = Policy::default()
        .with_overrides("http=verified,function=verified")
        .expect("policy");
    TestApp::builder(backend).with_policy(policy).start().await
}

async fn configured_policy(app: TestApp) {
    let nobody = app.user("nobody", Tier::Untrusted).await;
    let body = problem(
        app.publish(&nobody, BundleBuilder::http("an-http-tool", "1.0.0").pack())
            .await,
        403,
        "tier-forbidden",
    )
    .await;
    assert_eq!(body["required_tier"], "verified", "{body:#}");
    assert_eq!(body["publisher_tier"], "untrusted", "{body:#}");
    assert!(app.stored_objects().await.is_empty());
    let carol = app.user("carol", Tier::Verified).await;
    let calc = BundleBuilder::corpus("matimo/calculator", "calc", "1.0.0")
        .file("calculator.ts", "export default 1;\n");
    let body = app.publish_ok(&carol, calc.pack()).await;
    assert_eq!(body["execution"], "function");
    assert_eq!(body["tier"], "verified");
    // Kinds the overrides don't name keep their defaults.
    let body = problem(
        app.publish(
            &carol,
            BundleBuilder::http("a-script", "1.0.0")
                .file("definition.yaml", SCRIPT_YAML)
                .pack(),
        )
        .await,
        403,
        "tier-forbidden",
    )
    .await;
    assert_eq!(body["execution"], "script");
    assert_eq!(body["required_tier"], "trusted");
}

both_backends!(async with_configured_policy => configured_policy);
