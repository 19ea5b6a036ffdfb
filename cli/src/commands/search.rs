//! `toolreg search QUERY [--license L] [--keyword K] [--execution E] ...`:
//! a readable table of hits (name, version, execution, tier, license,
//! description), or the registry's answer as is with `--json`.

use serde_json::Value;

use super::Context;
use crate::args::{FormatArg, SortArg};
use crate::error::Result;
use crate::output;

/// Search filters from the command line.
#[derive(Debug, Clone)]
pub struct Filters {
    pub license: Option<String>,
    pub keyword: Option<String>,
    pub execution: Option<toolreg_core::ExecutionKind>,
    pub format: Option<FormatArg>,
    pub tier: Option<toolreg_core::Tier>,
    pub sort: Option<SortArg>,
    pub page: u32,
    pub per_page: u32,
}

pub fn run(ctx: &Context, query: &str, f: &Filters) -> Result<i32> {
    let client = ctx.client_here()?;
    let mut q: Vec<(&str, String)> = vec![("q", query.to_string())];
    if let Some(l) = &f.license {
        q.push(("license", l.clone()));
    }
    if let Some(k) = &f.keyword {
        q.push(("keyword", k.clone()));
    }
    if let Some(e) = f.execution {
        q.push(("execution", e.to_string()));
    }
    if let Some(fm) = f.format {
        q.push(("format", fm.as_str().to_string()));
    }
    if let Some(t) = f.tier {
        q.push(("tier", t.to_string()));
    }
    if let Some(s) = f.sort {
        q.push(("sort", s.as_str().to_string()));
    }
    q.push(("page", f.page.to_string()));
    q.push(("per_page", f.per_page.to_string()));
    let answer = client.search(&q)?;
    if ctx.json {
        output::json(&answer);
        return Ok(0);
    }
    crate::out!("{}", render(&answer));
    Ok(0)
}

fn s(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".to_string(),
        Some(other) => other.to_string(),
    }
}

/// The search answer as a table plus a count line.
pub fn render(answer: &Value) -> String {
    let hits = answer
        .get("hits")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let total = answer
        .get("total")
        .and_then(Value::as_u64)
        .unwrap_or(hits.len() as u64);
    if hits.is_empty() {
        return "no tools found\n".to_string();
    }
    let rows: Vec<Vec<String>> = hits
        .iter()
        .map(|h| {
            let blocked = h.get("blocked").and_then(Value::as_bool).unwrap_or(false);
            let mut tier = s(h, "tier");
            if blocked {
                tier.push_str(" (blocked)");
            }
            vec![
                s(h, "name"),
                s(h, "version"),
                s(h, "execution"),
                tier,
                s(h, "license"),
                output::truncate(
                    h.get("description").and_then(Value::as_str).unwrap_or(""),
                    60,
                ),
            ]
        })
        .collect();
    let mut out = output::table(
        &[
            "NAME",
            "VERSION",
            "EXECUTION",
            "TIER",
            "LICENSE",
            "DESCRIPTION",
        ],
        &rows,
    );
    let page = answer.get("page").and_then(Value::as_u64).unwrap_or(1);
    out.push_str(&format!(
        "{} of {total} tool(s) shown (page {page})\n",
        hits.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_table_with_blocked_marker_and_truncation() {
        let answer = serde_json::json!({
            "total": 2, "page": 1, "per_page": 20,
            "hits": [
                {"name": "calculator", "version": "1.2.0", "execution": "function", "tier": "trusted",
                 "license": "MIT", "description": "x".repeat(100), "blocked": true},
                {"name": "web-search", "version": "0.1.0", "execution": "http", "tier": "untrusted",
                 "license": null, "description": "Search\nthe web"}
            ]
        });
        let text = render(&answer);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("NAME"), "{text}");
        assert!(
            lines[1].contains("calculator")
                && lines[1].contains("trusted (blocked)")
                && lines[1].contains('…')
        );
        assert!(
            lines[2].contains("web-search")
                && lines[2].contains("Search the web")
                && lines[2].contains(" - ")
        );
        assert!(text.contains("2 of 2 tool(s)"));
        assert_eq!(
            render(&serde_json::json!({"hits": [], "total": 0})),
            "no tools found\n"
        );
    }
}
