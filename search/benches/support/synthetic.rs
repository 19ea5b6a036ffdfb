//! What the search benchmarks search: N synthetic tools with realistic
//! names, descriptions, keywords and facet values (skewed like a real
//! registry's), and the query strings of the HTTP phase. Shared by
//! `cargo bench -p toolreg-search --bench search` and
//! `cargo bench -p toolreg-server --bench search_http` (included there with
//! `#[path]`), so both measure the same tools and queries.
#![allow(dead_code)]

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use toolreg_search::SearchParams;

pub const SERVICES: &[&str] = &[
    "slack",
    "github",
    "gitlab",
    "jira",
    "notion",
    "gmail",
    "outlook",
    "discord",
    "telegram",
    "twilio",
    "stripe",
    "shopify",
    "hubspot",
    "salesforce",
    "zendesk",
    "postgres",
    "mysql",
    "redis",
    "mongo",
    "s3",
    "dropbox",
    "drive",
    "calendar",
    "weather",
    "maps",
    "youtube",
    "spotify",
    "twitter",
    "reddit",
    "linear",
    "asana",
    "trello",
    "airtable",
    "sheets",
    "docs",
    "figma",
    "sentry",
    "datadog",
    "pagerduty",
    "openai",
];
pub const VERBS: &[&str] = &[
    "send",
    "get",
    "list",
    "create",
    "update",
    "delete",
    "search",
    "fetch",
    "post",
    "upload",
    "download",
    "sync",
    "export",
    "import",
    "convert",
    "summarize",
    "translate",
    "analyze",
    "monitor",
    "notify",
];
pub const OBJECTS: &[&str] = &[
    "message",
    "issue",
    "page",
    "email",
    "event",
    "file",
    "record",
    "contact",
    "ticket",
    "order",
    "invoice",
    "report",
    "channel",
    "user",
    "repository",
    "comment",
    "task",
    "forecast",
    "playlist",
    "query",
];
pub const COMMON: &[&str] = &[
    "the",
    "a",
    "to",
    "from",
    "with",
    "for",
    "and",
    "of",
    "in",
    "by",
    "using",
    "your",
    "an",
    "on",
    "or",
    "data",
    "api",
    "account",
    "team",
    "workspace",
    "project",
    "results",
    "text",
    "json",
    "list",
    "returns",
    "optional",
    "filter",
    "date",
    "status",
    "name",
    "id",
    "token",
    "access",
    "quickly",
];
pub const KEYWORDS: &[&str] = &[
    "chat",
    "email",
    "crm",
    "devops",
    "database",
    "storage",
    "calendar",
    "weather",
    "finance",
    "ai",
    "search",
    "productivity",
    "social",
    "monitoring",
    "analytics",
    "documents",
    "media",
    "git",
    "sales",
    "support",
];
pub const LICENSES: &[&str] = &[
    "MIT",
    "Apache-2.0",
    "BSD-3-Clause",
    "MPL-2.0",
    "GPL-3.0-only",
    "ISC",
];
pub const EXECUTIONS: &[&str] = &[
    "http", "http", "http", "schema", "schema", "prompt", "command", "function", "script",
];
pub const FORMATS: &[(&str, &str)] = &[
    ("http", "matimo"),
    ("schema", "mcp"),
    ("prompt", "prompt"),
    ("command", "matimo"),
    ("function", "shinkai"),
    ("script", "matimo"),
];
pub const TIERS: &[&str] = &["untrusted", "verified", "trusted"];

/// A long tail of pseudo-words, so the vocabulary is realistic in size.
pub fn tail_word(rng: &mut StdRng) -> String {
    const SYL: &[&str] = &[
        "ka", "lo", "mi", "ra", "te", "vo", "zu", "pen", "dor", "al", "ex", "ion", "ur", "sa", "ti",
    ];
    let n = rng.random_range(2..4);
    (0..n)
        .map(|_| SYL[rng.random_range(0..SYL.len())])
        .collect()
}

pub struct Tool {
    pub name: String,
    pub description: String,
    pub keywords: Vec<String>,
    pub license: String,
    pub execution: String,
    pub format: String,
    pub tier: String,
    pub downloads: i64,
}

pub fn pick<'a>(rng: &mut StdRng, xs: &[&'a str]) -> &'a str {
    // Skewed: earlier entries are more frequent, like real registries.
    let r: f64 = rng.random();
    xs[((r * r) * xs.len() as f64) as usize % xs.len()]
}

pub fn synthetic(n: usize) -> Vec<Tool> {
    let mut rng = StdRng::seed_from_u64(42);
    (0..n)
        .map(|i| {
            let (s, v, o) = (
                pick(&mut rng, SERVICES),
                pick(&mut rng, VERBS),
                pick(&mut rng, OBJECTS),
            );
            let name = format!("{s}-{v}-{o}-{i}");
            let mut words = vec![
                format!(
                    "{}{} a {o} {}",
                    v[..1].to_uppercase(),
                    &v[1..],
                    if rng.random_bool(0.5) { "in" } else { "with" }
                ),
                s.to_string(),
            ];
            for _ in 0..rng.random_range(12..28) {
                let w = if rng.random_bool(0.6) {
                    pick(&mut rng, COMMON).to_string()
                } else if rng.random_bool(0.5) {
                    let list = if rng.random_bool(0.5) { OBJECTS } else { VERBS };
                    pick(&mut rng, list).to_string()
                } else {
                    tail_word(&mut rng)
                };
                words.push(w);
            }
            let execution = pick(&mut rng, EXECUTIONS).to_string();
            let format = FORMATS
                .iter()
                .find(|(e, _)| *e == execution)
                .map(|(_, f)| f.to_string())
                .unwrap_or_default();
            Tool {
                name,
                description: format!("{}.", words.join(" ")),
                keywords: (0..rng.random_range(1..4))
                    .map(|_| pick(&mut rng, KEYWORDS).to_string())
                    .collect(),
                license: pick(&mut rng, LICENSES).to_string(),
                execution,
                format,
                tier: pick(&mut rng, TIERS).to_string(),
                downloads: (rng.random::<f64>().powi(4) * 100_000.0) as i64,
            }
        })
        .collect()
}

/// The `p`-th percentile (0.0–1.0) of sorted durations.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// The HTTP phase's queries, in four kinds (as query string and as
/// parameters): a rare word; a service and an object (pages 1–3); a
/// three-letter prefix with a license filter; a verb and a rare word.
pub fn http_queries() -> Vec<(usize, String, SearchParams)> {
    let mut rng = StdRng::seed_from_u64(7);
    (0..20_000)
        .map(|i| {
            let kind = i % 4;
            let (query, params) = match kind {
                0 => {
                    let w = tail_word(&mut rng);
                    (format!("q={w}"), SearchParams::q(w))
                }
                1 => {
                    let (s, o, page) = (
                        pick(&mut rng, SERVICES),
                        pick(&mut rng, OBJECTS),
                        rng.random_range(1..4),
                    );
                    (
                        format!("q={s}%20{o}&page={page}"),
                        SearchParams {
                            page,
                            ..SearchParams::q(format!("{s} {o}"))
                        },
                    )
                }
                2 => {
                    let (w, l) = (tail_word(&mut rng), pick(&mut rng, LICENSES));
                    (
                        format!("q={}&license={l}", &w[..3]),
                        SearchParams {
                            license: Some(l.to_string()),
                            ..SearchParams::q(&w[..3])
                        },
                    )
                }
                _ => {
                    let (v, w) = (pick(&mut rng, VERBS), tail_word(&mut rng));
                    (format!("q={v}%20{w}"), SearchParams::q(format!("{v} {w}")))
                }
            };
            (kind, query, params)
        })
        .collect()
}

/// Natural-language queries of about `chars` characters each: a request
/// wrapped in the kind of sentence an agent writes — common words,
/// stopwords, numbers, service and object names and rare words, as the
/// descriptions use them.
pub fn need_queries(count: usize, chars: usize) -> Vec<String> {
    const GLUE: &[&str] = &[
        "please", "could", "you", "the", "for", "me", "and", "then", "with", "my", "of", "it",
        "so", "that", "i", "can", "is", "on", "all", "next", "10", "2024", "3",
    ];
    let mut rng = StdRng::seed_from_u64(11);
    (0..count)
        .map(|_| {
            let mut q = String::new();
            while q.len() < chars {
                let w = match rng.random_range(0..10) {
                    0..=3 => GLUE[rng.random_range(0..GLUE.len())].to_string(),
                    4 | 5 => pick(&mut rng, COMMON).to_string(),
                    6 => pick(&mut rng, VERBS).to_string(),
                    7 => pick(&mut rng, OBJECTS).to_string(),
                    8 => pick(&mut rng, SERVICES).to_string(),
                    _ => tail_word(&mut rng),
                };
                if !q.is_empty() {
                    q.push(' ');
                }
                q.push_str(&w);
            }
            q.truncate(chars);
            q
        })
        .collect()
}

/// Prints an index directory's size on disk and its number of segments.
pub fn print_index_size(index_dir: &std::path::Path) {
    println!(
        "  index size on disk: {:.1} MiB",
        dir_size(index_dir) as f64 / (1024.0 * 1024.0)
    );
    println!(
        "  segments: {}",
        std::fs::read_dir(index_dir)
            .map(|d| d
                .flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "store"))
                .count())
            .unwrap_or(0)
    );
}

pub fn dir_size(path: &std::path::Path) -> u64 {
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        dir_size(&p)
                    } else {
                        e.metadata().map(|m| m.len()).unwrap_or(0)
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}
