//! `toolreg info NAME[@VERSION] [--json]`: a tool's summary and every
//! version (digest, execution kind, yanked/blocked), or one version's
//! details including its publisher and tier.

use semver::Version;
use toolreg_api::{EncodableTool, EncodableVersion};

use super::Context;
use crate::error::Result;
use crate::output;

pub fn run(ctx: &Context, name: &str, version: Option<&Version>) -> Result<i32> {
    let client = ctx.client_here()?;
    match version {
        Some(v) => {
            let answer = client.version(name, &v.to_string())?;
            if ctx.json {
                output::json(&answer);
            } else {
                crate::out!("{}", render_version(&answer));
            }
        }
        None => {
            let answer = client.tool(name)?;
            if ctx.json {
                output::json(&answer);
            } else {
                crate::out!("{}", render_tool(&answer));
            }
        }
    }
    Ok(0)
}

fn or_dash(value: Option<&str>) -> String {
    value.unwrap_or("-").to_string()
}

fn status(yanked: bool, blocked: bool, reason: Option<&str>) -> String {
    let mut parts = Vec::new();
    if yanked {
        parts.push("yanked".to_string());
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
    let rows: Vec<Vec<String>> = t
        .versions
        .iter()
        .map(|v| {
            vec![
                v.version.clone(),
                v.execution.to_string(),
                v.publisher.clone(),
                status(v.yanked, v.blocked, v.blocked_reason.as_deref()),
                v.sha256.clone(),
            ]
        })
        .collect();
    out.push('\n');
    out.push_str(&output::table(
        &["VERSION", "EXECUTION", "PUBLISHER", "STATUS", "SHA256"],
        &rows,
    ));
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
            status(v.yanked, v.blocked, v.blocked_reason.as_deref()),
        ),
        ("published", v.published_at.clone()),
        ("downloads", v.downloads.to_string()),
    ] {
        out.push_str(&format!("  {label:<10} {value}\n"));
    }
    out
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
    }
}
