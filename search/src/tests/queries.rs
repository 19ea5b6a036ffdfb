//! Queries over an in-memory index: ranking, typos, prefixes, filters and
//! facets, sorting and paging, snippets, bad parameters, updates.

use super::*;
use crate::*;

#[test]
fn exact_name_words_rank_first() {
    let index = index_of(&sample());
    let r = search(&index, "slack");
    assert_eq!(names(&r), ["slack-send-message", "notify-team"]);
    assert_eq!(r.total, 2);
    assert_eq!(r.hits[0].highlights.name, "<mark>slack</mark>-send-message");
}

#[test]
fn exact_registry_name_wins() {
    let mut docs = sample();
    docs.push(doc("slack", "The plain one."));
    let index = index_of(&docs);
    assert_eq!(names(&search(&index, "slack"))[0], "slack");
    assert_eq!(
        names(&search(&index, "slack send message"))[0],
        "slack-send-message"
    );
    assert_eq!(
        names(&search(&index, "slack_send_message"))[0],
        "slack-send-message"
    );
}

#[test]
fn typos_in_long_words_are_forgiven() {
    let index = index_of(&sample());
    assert_eq!(names(&search(&index, "forcast")), ["weather-forecast"]);
    assert_eq!(names(&search(&index, "wether")), ["weather-forecast"]);
    // Short words must match exactly: "mth" is not "math".
    assert_eq!(search(&index, "mth").total, 0);
}

#[test]
fn prefixes_match_as_you_type() {
    let index = index_of(&sample());
    let r = search(&index, "calc");
    assert_eq!(names(&r), ["calculator"]);
    assert_eq!(r.hits[0].highlights.name, "<mark>calc</mark>ulator");
    let r = search(&index, "cal");
    assert_eq!(names(&r), ["calculator", "calendar-events"]);
    assert_eq!(
        search(&index, "c").total,
        0,
        "one letter is not a prefix query"
    );
}

#[test]
fn every_word_must_match_somewhere_if_any_tool_has_them_all() {
    let index = index_of(&sample());
    assert_eq!(
        names(&search(&index, "slack channel")),
        ["slack-send-message"]
    );
    // No tool has every word: tools with some of them, most words first.
    assert_eq!(
        names(&search(&index, "slack channel zebra")),
        ["slack-send-message", "notify-team"]
    );
    assert_eq!(search(&index, "zebra okapi").total, 0);
}

#[test]
fn filters_combine_and_facets_count_the_matching_set() {
    let index = index_of(&sample());
    let all = index
        .query(&SearchParams {
            per_page: 1,
            ..SearchParams::default()
        })
        .unwrap();
    assert_eq!(all.total, 5);
    assert_eq!(all.hits.len(), 1);
    // Facets cover every match, not the page.
    assert_eq!(all.facets.license.get("MIT"), 4);
    assert_eq!(all.facets.license.get("Apache-2.0"), 1);
    assert_eq!(all.facets.execution.get("http"), 3);
    assert_eq!(all.facets.tier.get("verified"), 4);
    assert_eq!(all.facets.keyword.get("slack"), 1);
    assert_eq!(
        all.facets.license.0[0],
        ("MIT".to_string(), 4),
        "most frequent first"
    );

    let p = SearchParams {
        license: Some("mit".into()),
        execution: Some(ExecutionKind::Http),
        ..SearchParams::default()
    };
    let r = index.query(&p).unwrap();
    assert_eq!(names(&r), ["notify-team", "slack-send-message"]);
    assert_eq!(r.facets.license.0, vec![("MIT".to_string(), 2)]);

    let p = SearchParams {
        keyword: Some("math".into()),
        tier: Some(Tier::Trusted),
        ..SearchParams::q("calc")
    };
    assert_eq!(names(&index.query(&p).unwrap()), ["calculator"]);
    let p = SearchParams {
        keyword: Some("math".into()),
        tier: Some(Tier::Untrusted),
        ..SearchParams::q("calc")
    };
    assert_eq!(index.query(&p).unwrap().total, 0);
    let p = SearchParams {
        format: Some(Format::Mcp),
        ..SearchParams::default()
    };
    assert_eq!(names(&index.query(&p).unwrap()), ["calendar-events"]);
}

#[test]
fn sorts_and_pages_are_stable() {
    let mut docs: Vec<SearchDoc> = (0..25)
        .map(|i| {
            let mut d = doc(
                &format!("tool-{:02}", (i * 7) % 25),
                "Same words in every tool.",
            );
            d.downloads = (i % 3) as u64;
            d.updated_at = Utc
                .with_ymd_and_hms(2026, 1, 1 + (i % 5) as u32, 0, 0, 0)
                .unwrap();
            d
        })
        .collect();
    docs.reverse();
    let index = SearchIndex::in_memory().unwrap();
    // Several commits make several segments: ties must still break by name.
    for chunk in docs.chunks(6) {
        for d in chunk {
            index.upsert(d).unwrap();
        }
        index.commit().unwrap();
    }
    let expected: Vec<String> = (0..25).map(|i| format!("tool-{i:02}")).collect();
    for sort in [SearchSort::Relevance, SearchSort::Name] {
        let mut seen = vec![];
        for page in 1..=3 {
            let p = SearchParams {
                sort,
                page,
                per_page: 10,
                ..SearchParams::q("same words")
            };
            let r = index.query(&p).unwrap();
            assert_eq!(r.total, 25);
            seen.extend(r.hits.into_iter().map(|h| h.name));
        }
        assert_eq!(seen, expected, "{sort:?}");
    }
    let p = SearchParams {
        sort: SearchSort::Downloads,
        per_page: 100,
        ..SearchParams::default()
    };
    let r = index.query(&p).unwrap();
    let keys: Vec<(u64, String)> = r
        .hits
        .iter()
        .map(|h| (h.downloads, h.name.clone()))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    assert_eq!(keys, sorted);
    let p = SearchParams {
        sort: SearchSort::Recent,
        per_page: 100,
        ..SearchParams::default()
    };
    let r = index.query(&p).unwrap();
    let keys: Vec<_> = r
        .hits
        .iter()
        .map(|h| {
            let at = chrono::DateTime::parse_from_rfc3339(&h.updated_at).unwrap();
            (at, h.name.clone())
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    assert_eq!(keys, sorted);
    // A page past the end is empty, not an error.
    let p = SearchParams {
        page: 4,
        per_page: 10,
        ..SearchParams::default()
    };
    let r = index.query(&p).unwrap();
    assert_eq!((r.total, r.hits.len()), (25, 0));
}

#[test]
fn snippets_mark_matches_and_escape_the_rest() {
    let d = doc(
        "html-cleaner",
        "Removes <script> tags & \"quotes\" from HTML before display.",
    );
    let index = index_of(&[d]);
    let r = search(&index, "script");
    let h = &r.hits[0].highlights;
    assert_eq!(
        h.description,
        "Removes &lt;<mark>script</mark>&gt; tags &amp; &quot;quotes&quot; from HTML before display."
    );
    let long = doc(
        "long-text",
        &format!(
            "{} the needle is here. {}",
            "Padding words. ".repeat(30),
            "More padding. ".repeat(30)
        ),
    );
    let index2 = index_of(&[long]);
    let d = &search(&index2, "needle").hits[0].highlights.description;
    assert!(
        d.starts_with('…') && d.ends_with('…') && d.contains("<mark>needle</mark>"),
        "{d}"
    );
    assert_eq!(h.name, "html-cleaner");
    // No match in the description: the escaped description itself.
    let r = search(&index, "html-cleaner");
    assert!(r.hits[0]
        .highlights
        .description
        .starts_with("Removes &lt;script&gt;"));
    assert_eq!(
        r.hits[0].highlights.name,
        "<mark>html</mark>-<mark>cleaner</mark>"
    );
}

#[test]
fn query_syntax_is_never_an_error() {
    let index = index_of(&sample());
    for q in [
        "\"unclosed",
        "a:b:c",
        "((",
        "*",
        "-",
        "AND OR NOT",
        "slack^2",
        "name:slack",
        "[1 TO 2]",
        "  ",
        "ünïcödé 天气",
        "\\",
        "<mark>",
    ] {
        let r = index.query(&SearchParams::q(q));
        assert!(r.is_ok(), "{q:?}: {r:?}");
    }
    // Syntax characters are separators: `slack^` is the word `slack`.
    assert_eq!(
        names(&search(&index, "(slack^")),
        ["slack-send-message", "notify-team"]
    );
}

#[test]
fn absurd_parameters_are_bad_requests() {
    let index = index_of(&sample());
    let bad = |p: SearchParams, param: &str| match index.query(&p) {
        Err(SearchError::BadRequest(m)) => assert!(m.starts_with(&format!("{param}:")), "{m}"),
        other => panic!("{param}: {other:?}"),
    };
    bad(
        SearchParams {
            page: 0,
            ..SearchParams::default()
        },
        "page",
    );
    bad(
        SearchParams {
            per_page: 1000,
            ..SearchParams::default()
        },
        "per_page",
    );
    bad(
        SearchParams {
            per_page: 0,
            ..SearchParams::default()
        },
        "per_page",
    );
    bad(
        SearchParams {
            page: 1_000_000_000_000,
            ..SearchParams::default()
        },
        "page",
    );
    bad(
        SearchParams {
            page: usize::MAX,
            per_page: 100,
            ..SearchParams::default()
        },
        "page",
    );
}

#[test]
fn upsert_replaces_and_remove_removes() {
    let index = index_of(&sample());
    // Cached from this query: the replacement must still be what is served.
    assert_eq!(search(&index, "calculator").hits[0].version, "1.0.0");
    let mut d = doc("calculator", "Now a unit converter.");
    d.version = "2.0.0".into();
    index.upsert(&d).unwrap();
    index.commit().unwrap();
    assert_eq!(index.num_tools(), 5);
    assert_eq!(search(&index, "arithmetic").total, 0);
    let r = search(&index, "converter");
    assert_eq!(
        (names(&r), r.hits[0].version.as_str()),
        (vec!["calculator"], "2.0.0")
    );
    index.remove("calculator").unwrap();
    index.commit().unwrap();
    assert_eq!(search(&index, "converter").total, 0);
    assert_eq!(index.get("calculator").unwrap(), None);
    assert_eq!(index.num_tools(), 4);
}

#[test]
fn blocked_tools_are_shown_as_blocked() {
    let mut d = doc("shell-runner", "Runs a shell command.");
    d.blocked = true;
    d.blocked_reason = Some("function needs trusted".into());
    let index = index_of(&[d]);
    let r = search(&index, "shell");
    assert!(r.hits[0].blocked);
    assert_eq!(
        r.hits[0].blocked_reason.as_deref(),
        Some("function needs trusted")
    );
}

#[test]
fn results_serialize_as_the_api_shape() {
    let index = index_of(&sample());
    let v = serde_json::to_value(search(&index, "calc")).unwrap();
    assert_eq!(v["total"], 1);
    assert_eq!(v["page"], 1);
    assert_eq!(v["per_page"], 20);
    let hit = &v["hits"][0];
    for key in [
        "name",
        "version",
        "title",
        "description",
        "keywords",
        "license",
        "format",
        "execution",
        "tier",
        "downloads",
        "updated_at",
        "blocked",
        "highlights",
    ] {
        assert!(hit.get(key).is_some(), "hit lacks {key}: {hit}");
    }
    assert_eq!(hit["execution"], "function");
    assert_eq!(hit["tier"], "trusted");
    assert_eq!(hit["format"], "matimo");
    assert_eq!(v["facets"]["license"]["MIT"], 1);
    assert_eq!(v["facets"]["keyword"]["math"], 1);
}
