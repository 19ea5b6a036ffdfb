//! The answer cache: its byte budget, and that repeated queries are
//! served from it until the index changes.

use super::*;
use crate::*;

#[test]
fn kept_answers_stay_within_their_byte_budget() {
    // 150 tools whose descriptions are 8 KB each: a page of 100 hits holds
    // ~0.9 MB, and 16 such answers are well over the budget.
    let long = "weather forecast for the city and the region ".repeat(180);
    let docs: Vec<SearchDoc> = (0..150)
        .map(|i| doc(&format!("weather-tool-{i:03}"), &long))
        .collect();
    let index = index_of(&docs);
    let mut largest = 0;
    for q in ["weather", "forecast"] {
        for page in 1..=2 {
            for sort in [
                SearchSort::Relevance,
                SearchSort::Name,
                SearchSort::Downloads,
                SearchSort::Recent,
            ] {
                let mut params = SearchParams::q(q);
                params.per_page = 100;
                params.page = page;
                params.sort = sort;
                let answer = index.query(&params).unwrap();
                largest = largest.max(crate::results::heap_bytes(&answer));
                let (_, bytes) = index.result_cache_usage();
                assert!(
                    bytes <= crate::index::ANSWER_CACHE_BYTES,
                    "the cache holds {bytes} bytes, over its budget"
                );
            }
        }
    }
    assert!(
        largest > crate::index::ANSWER_CACHE_BYTES / 16,
        "the test's answers are too small ({largest} bytes) to fill the budget"
    );
    // Small answers are still kept and served from the cache.
    let small = SearchParams::q("weather");
    let first = index.query(&small).unwrap();
    assert!(index.result_cache_usage().0 >= 1, "a small answer is kept");
    let hits = index.result_cache_hits();
    assert_eq!(names(&index.query(&small).unwrap()), names(&first));
    assert_eq!(
        index.result_cache_hits(),
        hits + 1,
        "a repeat is served from the cache"
    );
}

#[test]
fn repeats_are_served_from_the_cache_until_the_index_changes() {
    let index = index_of(&sample());
    let json = |r: SearchAnswer| serde_json::to_value(r).unwrap();
    let first = json(search(&index, "slack"));
    assert_eq!(index.result_cache_hits(), 0, "a first query is computed");
    assert_eq!(json(search(&index, "slack")), first);
    assert_eq!(index.result_cache_hits(), 1, "its repeat is a hit");
    // Other parameters are another answer.
    let page2 = SearchParams {
        page: 2,
        ..SearchParams::q("slack")
    };
    index.query(&page2).unwrap();
    assert_eq!(index.result_cache_hits(), 1);
    // A commit starts a new generation: the repeat is computed again and
    // sees the change.
    index
        .upsert(&doc("slack-archive", "Archive a Slack channel."))
        .unwrap();
    index.commit().unwrap();
    let after = search(&index, "slack");
    assert_eq!(index.result_cache_hits(), 1, "no answer of the old index");
    assert_eq!(after.total, 3);
    search(&index, "slack");
    assert_eq!(index.result_cache_hits(), 2);
    // Turned off, nothing is served from it.
    index.set_result_cache(0);
    search(&index, "slack");
    search(&index, "slack");
    assert_eq!(index.result_cache_hits(), 2);
    assert_eq!(index.result_cache_usage(), (0, 0));
}

#[test]
fn a_smaller_byte_budget_is_kept_and_zero_turns_the_cache_off() {
    let long = "weather forecast for the city and the region ".repeat(40);
    let docs: Vec<SearchDoc> = (0..60)
        .map(|i| doc(&format!("weather-tool-{i:03}"), &long))
        .collect();
    let index = index_of(&docs);
    let budget = 64 * 1024;
    index.set_result_cache_bytes(budget);
    for page in 1..=3 {
        let mut params = SearchParams::q("weather");
        params.page = page;
        index.query(&params).unwrap();
        let (_, bytes) = index.result_cache_usage();
        assert!(bytes <= budget, "{bytes} bytes kept, over {budget}");
    }
    assert!(
        index.result_cache_usage().0 >= 1,
        "answers under it are kept"
    );

    index.set_result_cache_bytes(0);
    let hits = index.result_cache_hits();
    search(&index, "weather");
    search(&index, "weather");
    assert_eq!(index.result_cache_usage(), (0, 0), "nothing is kept");
    assert_eq!(index.result_cache_hits(), hits, "nothing is served");
}
