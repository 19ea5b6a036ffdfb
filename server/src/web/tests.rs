//! Handler-level tests of the web index over an in-memory [`Catalog`]:
//! status codes, headers, escaping and the results fragment. The same
//! behaviour is tested end to end against the real server in
//! `server/tests/web_*.rs` and in a real browser in `tests/browser/`.

use actix_web::http::StatusCode;
use actix_web::{test, web, App};
use serde_json::json;
use toolreg_api::{
    EncodablePublisher, EncodableTool, EncodableVersion, EncodableVersionSummary, FacetCounts,
    SearchAnswer, SearchFacets, SearchHighlights, SearchHit,
};
use toolreg_core::policy::{ExecutionKind, Policy, Tier};
use toolreg_core::{Format, Tool};
use toolreg_search::SearchParams;

use super::catalog::*;
use super::configure_with;
use crate::error::{bad_request, AppResult};

struct Fixture {
    tools: Vec<(EncodableTool, Vec<VersionDetail>)>,
}

impl Catalog for Fixture {
    fn search(&self, query: &SearchParams) -> AppResult<SearchAnswer> {
        if query.q == "boom" {
            return Err(bad_request("q: boom is not allowed"));
        }
        let hits: Vec<SearchHit> = self
            .tools
            .iter()
            .filter(|(s, _)| query.q.is_empty() || s.name.contains(&query.q))
            .map(|(s, d)| {
                let m = &d[0].tool;
                SearchHit {
                    name: s.name.clone(),
                    version: s.latest_version.clone().unwrap_or_default(),
                    definition_sha256: None,
                    title: m.title.clone(),
                    description: m.description.clone(),
                    keywords: m.keywords.clone(),
                    license: m.license.clone(),
                    format: m.format,
                    execution: m.execution.kind,
                    tier: d[0].version.publisher.tier,
                    downloads: s.downloads as u64,
                    updated_at: "2026-11-23T08:00:00Z".into(),
                    blocked: false,
                    blocked_reason: None,
                    deprecated: None,
                    findings: 0,
                    provenance: false,
                    highlights: SearchHighlights {
                        name: String::new(),
                        description: if query.q.is_empty() {
                            String::new()
                        } else {
                            format!(
                                "<mark>{}</mark> &lt;b&gt;<img src=x onerror=alert(1)>",
                                query.q
                            )
                        },
                    },
                }
            })
            .collect();
        Ok(SearchAnswer {
            total: hits.len() as u64,
            words: query
                .q
                .split_whitespace()
                .filter(|w| *w != "the")
                .map(str::to_lowercase)
                .collect(),
            page: query.page,
            per_page: query.per_page,
            hits,
            facets: SearchFacets {
                license: FacetCounts(vec![("MIT".into(), 2)]),
                ..SearchFacets::default()
            },
        })
    }

    fn tool(&self, name: &str) -> AppResult<Option<EncodableTool>> {
        Ok(self
            .tools
            .iter()
            .find(|(s, _)| s.name == name)
            .map(|(s, _)| s.clone()))
    }

    fn version(&self, name: &str, version: &semver::Version) -> AppResult<Option<VersionDetail>> {
        Ok(self
            .tools
            .iter()
            .find(|(s, _)| s.name == name)
            .and_then(|(_, d)| {
                d.iter()
                    .find(|v| v.version.version == version.to_string())
                    .cloned()
            }))
    }

    fn required_tier(&self, kind: ExecutionKind) -> Tier {
        Policy::default().required_tier(kind)
    }
}

fn tool(
    name: &str,
    version: &str,
    description: &str,
    readme: Option<&str>,
) -> (EncodableTool, Vec<VersionDetail>) {
    let mut model: Tool = serde_json::from_value(json!({
        "format": "mcp", "definition_file": "tool.json", "registry_name": name, "call_name": name.replace('-', "_"),
        "version": version, "description": description, "keywords": ["demo"], "license": "MIT",
        "homepage": "javascript:alert(1)",
        "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "<b>what</b>"}}, "required": ["query"]},
        "execution": {"kind": "schema", "detail": null}
    }))
    .unwrap();
    model.original = br#"{"name": "<script>alert(1)</script>"}"#.to_vec();
    let alice = EncodablePublisher {
        login: "alice".into(),
        tier: Tier::Verified,
    };
    let row = EncodableVersionSummary {
        version: version.into(),
        sha256: "ab".repeat(32),
        size: 1234,
        yanked: false,
        blocked: false,
        blocked_reason: None,
        quarantined: false,
        quarantine_reason: None,
        deprecated: None,
        execution: ExecutionKind::Schema,
        format: Format::Mcp,
        published_at: "2026-11-23T08:00:00Z".into(),
        publisher: "alice".into(),
        downloads: 3,
    };
    let detail = VersionDetail {
        version: EncodableVersion {
            name: name.into(),
            version: version.into(),
            sha256: "ab".repeat(32),
            definition_sha256: Some(format!("sha256:{}", "cd".repeat(32))),
            size: 1234,
            format: Format::Mcp,
            execution: ExecutionKind::Schema,
            yanked: false,
            blocked: false,
            blocked_reason: None,
            quarantined: false,
            quarantine_reason: None,
            deprecated: None,
            published_at: "2026-11-23T08:00:00Z".into(),
            downloads: 3,
            publisher: alice.clone(),
            manifest: serde_json::to_value(&model).unwrap(),
            definition_file: "tool.json".into(),
            definition: Some(model.original_text()),
            readme: readme.map(str::to_string),
            log_index: Some(0),
            findings: Vec::new(),
            provenance: None,
            skill: None,
        },
        tool: model,
        readme: readme.map(crate::web::html::markdown).unwrap_or_default(),
        skill: None,
    };
    let summary = EncodableTool {
        name: name.into(),
        call_name: None,
        title: None,
        description: Some(description.into()),
        keywords: vec!["demo".into()],
        license: Some("MIT".into()),
        homepage: None,
        repository: None,
        format: Some(Format::Mcp),
        execution: Some(ExecutionKind::Schema),
        latest_version: Some(version.into()),
        deprecated: None,
        downloads: 1234,
        created_at: "2026-11-23T08:00:00Z".into(),
        updated_at: "2026-11-23T08:00:00Z".into(),
        owners: vec![alice],
        versions: vec![row],
        versions_total: 1,
    };
    (summary, vec![detail])
}

fn fixture() -> Fixture {
    Fixture {
        tools: vec![
            tool(
                "web-search",
                "1.2.3",
                "Search the web",
                Some("# Web search\n\n<script>alert(2)</script><img src=x onerror=alert(3)>"),
            ),
            tool("evil-tool", "0.1.0", "<script>alert(1)</script>", None),
        ],
    }
}

async fn get(
    path: &str,
    partial: bool,
) -> (StatusCode, actix_web::http::header::HeaderMap, String) {
    let app = test::init_service(
        App::new()
            .app_data(web::Data::new(fixture()))
            .configure(configure_with::<Fixture>),
    )
    .await;
    let mut req = test::TestRequest::get().uri(path);
    if partial {
        req = req.insert_header(("X-Partial", "results"));
    }
    let res = test::call_service(&app, req.to_request()).await;
    let status = res.status();
    let headers = res.headers().clone();
    let body = String::from_utf8(test::read_body(res).await.to_vec()).unwrap();
    (status, headers, body)
}

/// True if `body` holds `raw` HTML-escaped (askama writes `&#60;`, the sanitizers `&lt;`).
fn has_escaped(body: &str, raw: &str) -> bool {
    let a = raw
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let b = raw
        .replace('&', "&#38;")
        .replace('<', "&#60;")
        .replace('>', "&#62;");
    body.contains(&a) || body.contains(&b)
}

fn assert_page_headers(headers: &actix_web::http::header::HeaderMap) {
    assert_eq!(
        headers.get("content-type").unwrap(),
        "text/html; charset=utf-8"
    );
    let csp = headers
        .get("content-security-policy")
        .unwrap()
        .to_str()
        .unwrap();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("style-src 'self'"),
        "{csp}"
    );
    assert_eq!(headers.get("x-content-type-options").unwrap(), "nosniff");
    assert_eq!(headers.get("cache-control").unwrap(), "no-cache");
}

#[actix_web::test]
async fn home_lists_tools_with_escaped_descriptions() {
    let (status, headers, body) = get("/", false).await;
    assert_eq!(status, StatusCode::OK);
    assert_page_headers(&headers);
    assert!(body.contains("href=\"/tools/web-search\""), "{body}");
    assert!(has_escaped(&body, "<script>alert(1)</script>"), "{body}");
    assert!(!body.contains("<script>alert"), "{body}");
    assert!(body.contains("MIT (2)"), "facet count missing: {body}");
    assert!(!body.contains("style="), "inline style found");
    assert!(
        !body.contains(" onclick") && !body.contains(" onerror"),
        "inline handler found"
    );
}

#[actix_web::test]
async fn partial_answers_only_the_results_region() {
    let (status, headers, body) = get("/?q=web", true).await;
    assert_eq!(status, StatusCode::OK);
    assert_page_headers(&headers);
    assert!(!body.contains("<html"), "{body}");
    assert!(body.contains("/tools/web-search"), "{body}");
    assert!(!body.contains("/tools/evil-tool"), "{body}");
}

#[actix_web::test]
async fn highlights_keep_only_mark() {
    let (_, _, body) = get("/?q=web", true).await;
    assert!(body.contains("<mark>web</mark> &lt;b&gt;"), "{body}");
    assert!(
        !body.contains("<img"),
        "a tag other than <mark> got through: {body}"
    );
    assert!(!body.contains("onerror"), "{body}");
}

#[actix_web::test]
async fn bad_filter_is_a_400_page_naming_the_field() {
    let (status, headers, body) = get("/?execution=teleport", false).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_page_headers(&headers);
    assert!(body.contains("execution: unknown execution kind"), "{body}");
}

#[actix_web::test]
async fn bad_filter_in_a_partial_request_is_a_400_fragment() {
    let (status, headers, body) = get("/?tier=%3Cb%3Egodlike%3C/b%3E", true).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_page_headers(&headers);
    assert!(!body.contains("<html"), "{body}");
    assert!(body.contains("role=\"alert\""), "{body}");
    assert!(
        has_escaped(&body, "<b>godlike</b>") && !body.contains("<b>"),
        "{body}"
    );
}

#[actix_web::test]
async fn tool_page_renders_and_sanitizes() {
    let (status, headers, body) = get("/tools/web-search", false).await;
    assert_eq!(status, StatusCode::OK);
    assert_page_headers(&headers);
    assert!(body.contains("toolreg add web-search@^1.2"), "{body}");
    assert!(
        body.contains("<h3>Web search</h3>"),
        "README not rendered: {body}"
    );
    assert!(!body.contains("<script>alert"), "{body}");
    assert!(!body.contains("onerror"), "{body}");
    assert!(
        !body.contains("javascript:"),
        "unsafe homepage link: {body}"
    );
    assert!(
        has_escaped(&body, "<b>what</b>"),
        "parameter description not escaped: {body}"
    );
    assert!(
        has_escaped(&body, "<script>alert(1)</script>"),
        "original definition not shown escaped"
    );
    assert!(
        body.contains("/api/v1/tools/web-search/1.2.3/definition?format=mcp"),
        "{body}"
    );
    assert!(body.contains(&"ab".repeat(32)), "sha256 missing");
    assert!(
        body.contains(&format!("sha256:{}", "cd".repeat(32))),
        "definition fingerprint missing"
    );
}

#[actix_web::test]
async fn tool_version_page_and_404s() {
    let (status, _, _) = get("/tools/web-search/1.2.3", false).await;
    assert_eq!(status, StatusCode::OK);
    for path in [
        "/tools/nope",
        "/tools/web-search/9.9.9",
        "/tools/web-search/not-semver",
        "/tools/web-search/1.2.3/extra",
    ] {
        let (status, headers, body) = get(path, false).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_page_headers(&headers);
        assert!(body.contains("Not found"), "{path}: {body}");
    }
}

#[actix_web::test]
async fn assets_are_hashed_and_immutable() {
    let (_, _, body) = get("/", false).await;
    let css = &super::assets::ASSETS.css.url;
    assert!(body.contains(css.as_str()), "{body}");
    let (status, headers, text) = get(css, false).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        headers.get("cache-control").unwrap(),
        "public, max-age=31536000, immutable"
    );
    assert!(headers.get("etag").is_some());
    assert!(text.contains(":root"));
    let (status, _, _) = get("/static/app.css", false).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
