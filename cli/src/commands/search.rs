//! `toolreg search QUERY [--license L] [--keyword K] [--execution E] ...`:
//! a readable table of hits (name, version, execution, tier, license,
//! description; a deprecated tool's version is marked), or the registry's
//! answer as is with `--json`. QUERY may be
//! a name, a few words or a need in a sentence; when the registry searched
//! only some of its words, a last line says which.

use toolreg_api::SearchAnswer;

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
    if let Some(line) = words_line(query, &answer.words) {
        crate::out!("{line}");
    }
    Ok(0)
}

/// `searched for: weather forecast city` when the registry left some of
/// the query's words out (stopwords and numbers of a long query).
pub fn words_line(query: &str, words: &[String]) -> Option<String> {
    let typed = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .count();
    (!words.is_empty() && words.len() < typed).then(|| format!("searched for: {}", words.join(" ")))
}

/// The search answer as a table plus a count line.
pub fn render(answer: &SearchAnswer) -> String {
    if answer.hits.is_empty() {
        return "no tools found\n".to_string();
    }
    let rows: Vec<Vec<String>> = answer
        .hits
        .iter()
        .map(|h| {
            let mut tier = h.tier.to_string();
            if h.blocked {
                tier.push_str(" (blocked)");
            }
            let version = match &h.deprecated {
                Some(_) => format!("{} (deprecated)", h.version),
                None => h.version.clone(),
            };
            vec![
                h.name.clone(),
                version,
                h.execution.to_string(),
                tier,
                h.license.clone().unwrap_or_else(|| "-".to_string()),
                output::truncate(&h.description, 60),
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
    out.push_str(&format!(
        "{} of {} tool(s) shown (page {})\n",
        answer.hits.len(),
        answer.total,
        answer.page
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(hits: serde_json::Value, total: u64) -> SearchAnswer {
        serde_json::from_value(serde_json::json!({
            "total": total, "page": 1, "per_page": 20, "hits": hits,
            "facets": {"license": {"MIT": 1}, "keyword": {}, "execution": {}, "tier": {}}
        }))
        .unwrap()
    }

    #[test]
    fn renders_a_table_with_blocked_marker_and_truncation() {
        let hit = |name: &str,
                   execution: &str,
                   tier: &str,
                   license: serde_json::Value,
                   description: String,
                   blocked: bool| {
            serde_json::json!({
                "name": name, "version": "1.2.0", "title": null, "description": description,
                "keywords": [], "license": license, "format": "matimo", "execution": execution,
                "tier": tier, "downloads": 0, "updated_at": "2026-01-01T00:00:00Z",
                "blocked": blocked, "blocked_reason": null,
                "highlights": {"name": name, "description": ""}
            })
        };
        let answer = answer(
            serde_json::json!([
                hit(
                    "calculator",
                    "function",
                    "trusted",
                    "MIT".into(),
                    "x".repeat(100),
                    true
                ),
                hit(
                    "web-search",
                    "http",
                    "untrusted",
                    serde_json::Value::Null,
                    "Search\nthe web".into(),
                    false
                ),
            ]),
            2,
        );
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
        assert_eq!(render(&answer_of_none()), "no tools found\n");
    }

    #[test]
    fn marks_a_deprecated_tool() {
        let answer = answer(
            serde_json::json!([{
                "name": "old-calc", "version": "1.0.0", "title": null, "description": "d",
                "keywords": [], "license": null, "format": "matimo", "execution": "http",
                "tier": "verified", "downloads": 0, "updated_at": "2026-01-01T00:00:00Z",
                "blocked": false, "blocked_reason": null,
                "deprecated": {"message": "old", "successor": "calc", "req": null},
                "highlights": {"name": "old-calc", "description": ""}
            }]),
            1,
        );
        let text = render(&answer);
        assert!(text.contains("1.0.0 (deprecated)"), "{text}");
    }

    #[test]
    fn names_the_words_searched_when_some_were_left_out() {
        let words = |w: &[&str]| w.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert_eq!(
            words_line(
                "find the weather for 5 days",
                &words(&["find", "weather", "days"])
            )
            .as_deref(),
            Some("searched for: find weather days")
        );
        assert_eq!(words_line("slack send", &words(&["slack", "send"])), None);
        assert_eq!(words_line("", &[]), None);
    }

    fn answer_of_none() -> SearchAnswer {
        answer(serde_json::json!([]), 0)
    }
}
