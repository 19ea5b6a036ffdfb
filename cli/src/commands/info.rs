//! `toolreg info NAME[@VERSION] [--json]`: a tool's summary and every
//! version (digest, execution kind, yanked/blocked) with the definition
//! lint's findings on the latest one, or one version's details including
//! its publisher, tier, findings and the CI run it was published from (its
//! provenance, linked for GitHub and GitLab). Each finding shows its rule,
//! what the rule means, the pointer and the excerpt; `--json` adds the
//! meaning to each finding (and, for a tool, the latest version's findings
//! as `latest_findings`).

use semver::Version;
use serde_json::Value;
use toolreg_api::{EncodableDeprecation, EncodableTool, EncodableVersion, Provenance};
use toolreg_core::lint::Finding;

use super::Context;
use crate::admission::findings;
use crate::error::Result;
use crate::output;

pub fn run(ctx: &Context, name: &str, version: Option<&Version>) -> Result<i32> {
    let client = ctx.client_here()?;
    match version {
        Some(v) => {
            let answer = client.version(name, &v.to_string())?;
            if ctx.json {
                let mut doc = to_value(&answer);
                doc["findings"] = findings_json(&answer.findings);
                output::json(&doc);
            } else {
                crate::out!("{}", render_version(&answer));
            }
        }
        None => {
            let answer = client.tool(name)?;
            let latest = match &answer.latest_version {
                Some(v) => Some(client.version(name, v)?),
                None => None,
            };
            if ctx.json {
                let mut doc = to_value(&answer);
                doc["latest_findings"] = match &latest {
                    Some(v) => findings_json(&v.findings),
                    None => Value::Array(Vec::new()),
                };
                output::json(&doc);
            } else {
                crate::out!("{}", render_tool(&answer));
                if let Some(v) = &latest {
                    crate::out!("{}", render_latest_findings(v));
                }
            }
        }
    }
    Ok(0)
}

fn to_value<T: serde::Serialize>(answer: &T) -> Value {
    serde_json::to_value(answer).unwrap_or(Value::Null)
}

/// The findings as JSON, each with the plain-words `meaning` of its rule.
fn findings_json(findings: &[Finding]) -> Value {
    findings
        .iter()
        .map(|f| {
            let mut v = to_value(f);
            v["meaning"] = f.rule.meaning().into();
            v
        })
        .collect()
}

/// `3 (P3, P4)`, or `none`; then how many notes (`; 1 note (P6)`): notes
/// are not flags.
fn findings_summary(findings: &[Finding]) -> String {
    let (notes, flags): (Vec<Finding>, Vec<Finding>) =
        findings.iter().cloned().partition(Finding::is_note);
    let rules = |fs: &[Finding]| {
        findings::rules_of(fs)
            .into_iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = if flags.is_empty() {
        "none".to_string()
    } else {
        format!("{} ({})", flags.len(), rules(&flags))
    };
    if !notes.is_empty() {
        let noun = if notes.len() == 1 { "note" } else { "notes" };
        out.push_str(&format!("; {} {noun} ({})", notes.len(), rules(&notes)));
    }
    out
}

/// One indented line per finding: rule, meaning, pointer, excerpt (cleaned).
fn findings_lines(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| format!("    {}\n", output::clean(&findings::describe(f))))
        .collect()
}

/// The latest version's findings, under a tool's summary (nothing when clean).
fn render_latest_findings(v: &EncodableVersion) -> String {
    if v.findings.is_empty() {
        return String::new();
    }
    format!(
        "\nfindings of {}: {}\n{}",
        v.version,
        findings_summary(&v.findings),
        findings_lines(&v.findings)
    )
}

fn or_dash(value: Option<&str>) -> String {
    value.unwrap_or("-").to_string()
}

fn status(
    yanked: bool,
    blocked: bool,
    reason: Option<&str>,
    quarantine: Option<&str>,
    deprecated: Option<&EncodableDeprecation>,
) -> String {
    let mut parts = Vec::new();
    if yanked {
        parts.push("yanked".to_string());
    }
    if deprecated.is_some() {
        parts.push("deprecated".to_string());
    }
    if let Some(r) = quarantine {
        parts.push(format!("quarantined: {r}"));
    }
    if blocked {
        match reason {
            Some(r) => parts.push(format!("blocked: {r}")),
            None => parts.push("blocked".to_string()),
        }
    }
    if parts.is_empty() {
        "ok".to_string()
    } else {
        parts.join(", ")
    }
}

/// The quarantine's reason if the version is quarantined.
fn quarantine(quarantined: bool, reason: Option<&str>) -> Option<&str> {
    quarantined.then_some(reason.unwrap_or("no reason given"))
}

/// `GET /api/v1/tools/{name}` as text.
pub fn render_tool(t: &EncodableTool) -> String {
    let mut out = format!("{} {}\n", t.name, or_dash(t.latest_version.as_deref()));
    if let Some(d) = &t.description {
        out.push_str(&format!("  {}\n", output::truncate(d, 200)));
    }
    let owners: Vec<String> = t
        .owners
        .iter()
        .map(|o| format!("{} ({})", o.login, o.tier))
        .collect();
    for (label, value) in [
        ("call name", or_dash(t.call_name.as_deref())),
        ("format", or_dash(t.format.map(|f| f.as_str()))),
        ("execution", or_dash(t.execution.map(|e| e.as_str()))),
        ("license", or_dash(t.license.as_deref())),
        (
            "keywords",
            if t.keywords.is_empty() {
                "-".into()
            } else {
                t.keywords.join(", ")
            },
        ),
        (
            "owners",
            if owners.is_empty() {
                "-".into()
            } else {
                owners.join(", ")
            },
        ),
        ("downloads", t.downloads.to_string()),
    ] {
        out.push_str(&format!("  {label:<10} {value}\n"));
    }
    out.push_str(&render_deprecation(t.deprecated.as_ref()));
    let rows: Vec<Vec<String>> = t
        .versions
        .iter()
        .map(|v| {
            vec![
                v.version.clone(),
                v.execution.to_string(),
                v.publisher.clone(),
                status(
                    v.yanked,
                    v.blocked,
                    v.blocked_reason.as_deref(),
                    quarantine(v.quarantined, v.quarantine_reason.as_deref()),
                    v.deprecated.as_ref(),
                ),
                v.sha256.clone(),
            ]
        })
        .collect();
    out.push('\n');
    out.push_str(&output::table(
        &["VERSION", "EXECUTION", "PUBLISHER", "STATUS", "SHA256"],
        &rows,
    ));
    if t.versions_total > t.versions.len() as i64 {
        out.push_str(&format!(
            "(the newest {} of {} versions; `toolreg info {}@VERSION` shows any one)\n",
            t.versions.len(),
            t.versions_total,
            t.name
        ));
    }
    out
}

/// `GET /api/v1/tools/{name}/{version}` as text.
pub fn render_version(v: &EncodableVersion) -> String {
    let mut out = format!("{} {}\n", v.name, v.version);
    for (label, value) in [
        ("sha256", v.sha256.clone()),
        ("definition", or_dash(v.definition_sha256.as_deref())),
        ("size", v.size.to_string()),
        ("format", v.format.to_string()),
        ("execution", v.execution.to_string()),
        ("publisher", v.publisher.login.clone()),
        ("tier", v.publisher.tier.to_string()),
        (
            "status",
            status(
                v.yanked,
                v.blocked,
                v.blocked_reason.as_deref(),
                quarantine(v.quarantined, v.quarantine_reason.as_deref()),
                v.deprecated.as_ref(),
            ),
        ),
        ("published", v.published_at.clone()),
        ("downloads", v.downloads.to_string()),
        ("findings", findings_summary(&v.findings)),
    ] {
        out.push_str(&format!("  {label:<10} {value}\n"));
    }
    out.push_str(&render_deprecation(v.deprecated.as_ref()));
    out.push_str(&findings_lines(&v.findings));
    out.push_str(&render_provenance(v.provenance.as_ref()));
    out
}

/// The `deprecated` line (and the successor's) of a deprecated version, or
/// nothing.
pub fn render_deprecation(d: Option<&EncodableDeprecation>) -> String {
    let Some(d) = d else {
        return String::new();
    };
    let scope = match &d.req {
        Some(req) => format!(" (versions {})", output::clean(req)),
        None => String::new(),
    };
    let mut out = format!(
        "  {:<10} {}{scope}\n",
        "deprecated",
        output::clean(&d.message)
    );
    if let Some(s) = &d.successor {
        out.push_str(&format!(
            "  {:<10} {} (`toolreg add {}`)\n",
            "successor",
            output::clean(s),
            output::clean(s)
        ));
    }
    out
}

/// GitHub Actions' and GitLab.com's issuers, whose runs and commits have
/// well-known web pages.
const GITHUB: &str = "https://token.actions.githubusercontent.com";
const GITLAB: &str = "https://gitlab.com";

/// The provenance lines of `info NAME@VERSION`.
pub fn render_provenance(p: Option<&Provenance>) -> String {
    let Some(p) = p else {
        return "  provenance none (not published through trusted publishing)\n".to_string();
    };
    let mut rows = vec![
        (
            "provenance",
            format!("built and published by CI ({})", p.issuer),
        ),
        ("repository", p.repository.clone()),
        ("workflow", p.workflow.clone()),
        ("ref", p.git_ref.clone()),
        ("commit", p.sha.clone()),
        ("run", p.run_id.clone()),
    ];
    // Links only for the names a URL path can carry unchanged.
    let safe = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
            && !s.split('/').any(|seg| seg.is_empty() || seg == "..")
    };
    let issuer = p.issuer.trim_end_matches('/');
    if safe(&p.repository) && safe(&p.run_id) && !p.run_id.contains('/') {
        let (run, commit) = match issuer {
            GITHUB => (
                Some(format!(
                    "https://github.com/{}/actions/runs/{}",
                    p.repository, p.run_id
                )),
                Some(format!(
                    "https://github.com/{}/commit/{}",
                    p.repository, p.sha
                )),
            ),
            GITLAB => (
                Some(format!(
                    "https://gitlab.com/{}/-/pipelines/{}",
                    p.repository, p.run_id
                )),
                Some(format!(
                    "https://gitlab.com/{}/-/commit/{}",
                    p.repository, p.sha
                )),
            ),
            _ => (None, None),
        };
        let sha_ok = !p.sha.is_empty() && p.sha.chars().all(|c| c.is_ascii_hexdigit());
        if let Some(run) = run {
            rows.push(("run url", run));
        }
        if let Some(commit) = commit.filter(|_| sha_ok) {
            rows.push(("commit url", commit));
        }
    }
    rows.into_iter()
        .map(|(label, value)| format!("  {label:<10} {}\n", output::clean(&value)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_yanked_and_blocked_versions() {
        let t: EncodableTool = serde_json::from_value(serde_json::json!({
            "name": "calculator", "call_name": "calculator", "title": null, "description": "Adds",
            "keywords": [], "license": null, "homepage": null, "repository": null,
            "format": "matimo", "execution": "function", "latest_version": "1.1.0", "downloads": 3,
            "created_at": "2026-01-01T00:00:00.000000Z", "updated_at": "2026-01-02T00:00:00.000000Z",
            "owners": [{"login": "alice", "tier": "trusted"}],
            "versions": [
                {"version": "1.1.0", "execution": "function", "format": "matimo", "publisher": "alice",
                 "sha256": "ab", "size": 10, "published_at": "2026-01-02T00:00:00.000000Z", "downloads": 1,
                 "yanked": false, "blocked": true, "blocked_reason": "publisher demoted"},
                {"version": "1.0.0", "execution": "function", "format": "matimo", "publisher": "alice",
                 "sha256": "cd", "size": 10, "published_at": "2026-01-01T00:00:00.000000Z", "downloads": 2,
                 "yanked": true, "blocked": false, "blocked_reason": null}
            ],
            "a_field_from_a_newer_server": true
        }))
        .unwrap();
        let text = render_tool(&t);
        assert!(text.contains("alice (trusted)"));
        assert!(text.contains("blocked: publisher demoted"));
        assert!(text
            .lines()
            .any(|l| l.starts_with("1.0.0") && l.contains("yanked")));
        assert!(text.contains("license    -"), "{text}");
        let v: EncodableVersion = serde_json::from_value(serde_json::json!({
            "name": "calculator", "version": "1.0.0", "sha256": "cd", "size": 10,
            "format": "matimo", "execution": "function", "yanked": true, "blocked": false,
            "blocked_reason": null, "published_at": "2026-01-01T00:00:00.000000Z", "downloads": 2,
            "publisher": {"login": "alice", "tier": "trusted"}, "manifest": {},
            "definition_file": "definition.yaml", "definition": "", "readme": null, "log_index": 0
        }))
        .unwrap();
        let text = render_version(&v);
        assert!(
            text.contains("tier       trusted") && text.contains("status     yanked"),
            "{text}"
        );
        // A server from before fingerprints were stored sends none.
        assert!(text.contains("definition -"), "{text}");
        assert!(text.contains("findings   none"), "{text}");
        assert!(text.contains("provenance none"), "{text}");
    }

    #[test]
    fn lists_findings_with_meaning_and_a_cleaned_excerpt() {
        let mut v: EncodableVersion = serde_json::from_value(serde_json::json!({
            "name": "issues", "version": "1.0.0", "sha256": "cd", "size": 10,
            "format": "mcp", "execution": "schema", "yanked": false, "blocked": false,
            "blocked_reason": null, "published_at": "2026-01-01T00:00:00.000000Z", "downloads": 0,
            "publisher": {"login": "alice", "tier": "trusted"}, "manifest": {},
            "definition_file": "tool.json", "definition": "", "readme": null, "log_index": 0,
            "findings": [
                {"rule": "P4", "severity": "flag", "pointer": "/description", "start": 5, "end": 11,
                 "excerpt": "read ~/.ssh/id_rsa\u{1b}[2K now", "message": "a sensitive file"},
                {"rule": "P3", "severity": "flag", "pointer": "/inputSchema/properties/a/description",
                 "start": 0, "end": 8, "excerpt": "silently", "message": "concealment"}
            ]
        }))
        .unwrap();
        let text = render_version(&v);
        assert!(text.contains("findings   2 (P3, P4)"), "{text}");
        assert!(
            text.contains(&format!(
                "    P4 at /description: {} `read ~/.ssh/id_rsa now`",
                toolreg_core::lint::Rule::P4.meaning()
            )),
            "{text}"
        );
        assert!(
            text.contains("P3 at /inputSchema/properties/a/description"),
            "{text}"
        );
        assert!(!text.contains('\u{1b}'), "{text:?}");
        let json = findings_json(&v.findings);
        assert_eq!(json[1]["rule"], "P3");
        assert_eq!(json[1]["meaning"], toolreg_core::lint::Rule::P3.meaning());
        assert!(render_latest_findings(&v).contains("findings of 1.0.0: 2 (P3, P4)"));
        // A note is shown, marked, and not counted with the flags.
        v.findings.push(toolreg_core::lint::Finding {
            rule: toolreg_core::lint::Rule::P6,
            severity: toolreg_core::lint::Severity::Note,
            pointer: "/description".into(),
            start: 0,
            end: 9,
            excerpt: "read_file".into(),
            message: "names another tool".into(),
        });
        let text = render_version(&v);
        assert!(
            text.contains("findings   2 (P3, P4); 1 note (P6)"),
            "{text}"
        );
        assert!(text.contains("P6 (note) at /description"), "{text}");
        v.findings.retain(|f| f.is_note());
        assert!(render_version(&v).contains("findings   none; 1 note (P6)"));
        v.findings.clear();
        assert_eq!(render_latest_findings(&v), "");
    }

    fn provenance(issuer: &str, repository: &str, run_id: &str) -> Provenance {
        Provenance {
            issuer: issuer.into(),
            repository: repository.into(),
            workflow: "release.yml".into(),
            git_ref: "refs/tags/v1.0.0".into(),
            sha: "0123abcd".into(),
            run_id: run_id.into(),
            ..Default::default()
        }
    }

    #[test]
    fn provenance_links_github_and_gitlab_runs() {
        let text = render_provenance(Some(&provenance(GITHUB, "acme/tools", "4242")));
        for needle in [
            "repository acme/tools",
            "workflow   release.yml",
            "ref        refs/tags/v1.0.0",
            "commit     0123abcd",
            "run        4242",
            "https://github.com/acme/tools/actions/runs/4242",
            "https://github.com/acme/tools/commit/0123abcd",
        ] {
            assert!(text.contains(needle), "{needle}:\n{text}");
        }
        let text = render_provenance(Some(&provenance(GITLAB, "group/sub/proj", "77")));
        assert!(
            text.contains("https://gitlab.com/group/sub/proj/-/pipelines/77"),
            "{text}"
        );
        // Another issuer: no guessed link; odd names: no link, and shown cleaned.
        let text = render_provenance(Some(&provenance("https://ci.example", "a/b", "1")));
        assert!(!text.contains("url"), "{text}");
        let text = render_provenance(Some(&provenance(GITHUB, "a/../b\u{1b}[2K", "1")));
        assert!(!text.contains("url") && !text.contains('\u{1b}'), "{text}");
    }
}
