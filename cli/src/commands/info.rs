//! `toolreg info NAME[@VERSION] [--json]`: a tool's summary and every
//! version (digest, execution kind, yanked/blocked), or one version's
//! details including its publisher and tier.

use semver::Version;
use serde_json::Value;

use super::Context;
use crate::error::Result;
use crate::output;

pub fn run(ctx: &Context, name: &str, version: Option<&Version>) -> Result<i32> {
    let client = ctx.client_here()?;
    let answer = match version {
        Some(v) => client.version(name, &v.to_string())?,
        None => client.tool(name)?,
    };
    if ctx.json {
        output::json(&answer);
    } else if version.is_some() {
        crate::out!("{}", render_version(&answer));
    } else {
        crate::out!("{}", render_tool(&answer));
    }
    Ok(0)
}

fn s(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".to_string(),
        Some(other) => other.to_string(),
    }
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn status(v: &Value) -> String {
    let mut parts = Vec::new();
    if flag(v, "yanked") {
        parts.push("yanked".to_string());
    }
    if flag(v, "blocked") {
        match v.get("blocked_reason").and_then(Value::as_str) {
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
pub fn render_tool(t: &Value) -> String {
    let mut out = format!("{} {}\n", s(t, "name"), s(t, "latest_version"));
    if let Some(d) = t.get("description").and_then(Value::as_str) {
        out.push_str(&format!("  {}\n", output::truncate(d, 200)));
    }
    let owners: Vec<String> = t
        .get("owners")
        .and_then(Value::as_array)
        .map(|o| {
            o.iter()
                .map(|o| format!("{} ({})", s(o, "login"), s(o, "tier")))
                .collect()
        })
        .unwrap_or_default();
    let keywords: Vec<String> = t
        .get("keywords")
        .and_then(Value::as_array)
        .map(|k| {
            k.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    for (label, value) in [
        ("call name", s(t, "call_name")),
        ("format", s(t, "format")),
        ("execution", s(t, "execution")),
        ("license", s(t, "license")),
        (
            "keywords",
            if keywords.is_empty() {
                "-".into()
            } else {
                keywords.join(", ")
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
        ("downloads", s(t, "downloads")),
    ] {
        out.push_str(&format!("  {label:<10} {value}\n"));
    }
    let rows: Vec<Vec<String>> = t
        .get("versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .map(|v| {
                    vec![
                        s(v, "version"),
                        s(v, "execution"),
                        s(v, "publisher"),
                        status(v),
                        s(v, "sha256"),
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    out.push('\n');
    out.push_str(&output::table(
        &["VERSION", "EXECUTION", "PUBLISHER", "STATUS", "SHA256"],
        &rows,
    ));
    out
}

/// `GET /api/v1/tools/{name}/{version}` as text.
pub fn render_version(v: &Value) -> String {
    let publisher = v.get("publisher").cloned().unwrap_or(Value::Null);
    let mut out = format!("{} {}\n", s(v, "name"), s(v, "version"));
    for (label, value) in [
        ("sha256", s(v, "sha256")),
        ("size", s(v, "size")),
        ("format", s(v, "format")),
        ("execution", s(v, "execution")),
        ("publisher", s(&publisher, "login")),
        ("tier", s(&publisher, "tier")),
        ("status", status(v)),
        ("published", s(v, "published_at")),
        ("downloads", s(v, "downloads")),
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
        let t = serde_json::json!({
            "name": "calculator", "latest_version": "1.1.0", "description": "Adds",
            "owners": [{"login": "alice", "tier": "trusted"}],
            "versions": [
                {"version": "1.1.0", "execution": "function", "publisher": "alice", "sha256": "ab",
                 "yanked": false, "blocked": true, "blocked_reason": "publisher demoted"},
                {"version": "1.0.0", "execution": "function", "publisher": "alice", "sha256": "cd",
                 "yanked": true, "blocked": false}
            ]
        });
        let text = render_tool(&t);
        assert!(text.contains("alice (trusted)"));
        assert!(text.contains("blocked: publisher demoted"));
        assert!(text
            .lines()
            .any(|l| l.starts_with("1.0.0") && l.contains("yanked")));
        let v = serde_json::json!({"name": "calculator", "version": "1.0.0", "sha256": "cd",
            "execution": "function", "yanked": true, "publisher": {"login": "alice", "tier": "trusted"}});
        let text = render_version(&v);
        assert!(
            text.contains("tier       trusted") && text.contains("status     yanked"),
            "{text}"
        );
    }
}
