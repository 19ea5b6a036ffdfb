//! The hit records' byte budget: within it a segment's hits come from its
//! records; past it (or with a budget of 0) they come from the doc store,
//! and every answer is the same either way, whether the records were read
//! from the doc store files on disk or from an index in memory.

use super::*;

/// Three segments (one commit each) of the sample's tools.
fn three_segments() -> SearchIndex {
    fill(SearchIndex::in_memory().unwrap())
}

fn fill(index: SearchIndex) -> SearchIndex {
    for part in sample().chunks(2) {
        for d in part {
            index.upsert(d).unwrap();
        }
        index.commit().unwrap();
    }
    index
}

fn answers(index: &SearchIndex) -> Vec<String> {
    ["slack", "weather", "calendar events", "evaluate", "team"]
        .iter()
        .map(|q| {
            let params = SearchParams::q(*q);
            serde_json::to_string(&index.query(&params).unwrap()).unwrap()
        })
        .collect()
}

#[test]
fn every_answer_is_the_same_with_and_without_the_records() {
    let kept = three_segments();
    kept.warm().unwrap();
    assert!(kept.records_bytes() > 0);

    let none = three_segments();
    none.set_records_memory(0);
    none.set_result_cache(0);
    none.warm().unwrap();
    assert_eq!(none.records_bytes(), 0, "a budget of 0 keeps no records");
    assert_eq!(answers(&none), answers(&kept));
}

#[test]
fn records_stay_within_the_budget_and_the_rest_read_the_doc_store() {
    let full = three_segments();
    full.warm().unwrap();
    let all = full.records_bytes();

    // Room for some segments' records, not all of them.
    let index = three_segments();
    index.set_records_memory(all - 1);
    index.set_result_cache(0);
    index.warm().unwrap();
    let kept = index.records_bytes();
    assert!(kept > 0 && kept < all, "kept {kept} of {all} bytes");
    assert_eq!(answers(&index), answers(&full));

    // A larger budget lets the refused segments build theirs.
    index.set_records_memory(all);
    index.warm().unwrap();
    assert_eq!(index.records_bytes(), all);
}

/// On disk the records are built from the doc store files read with
/// positioned reads (not through the index's memory map): the answers are
/// the ones of the doc store read through the map.
#[test]
fn records_built_from_the_store_files_answer_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let on_disk = fill(SearchIndex::open(&dir.path().join("index")).unwrap());
    on_disk.warm().unwrap();
    assert!(on_disk.records_bytes() > 0);
    let none = three_segments();
    none.set_records_memory(0);
    none.set_result_cache(0);
    assert_eq!(answers(&on_disk), answers(&none));
}
