//! The index in a directory: reopening, the directory lock, releasing the
//! writer, and recovery from damaged or outdated files.

use super::*;
use crate::*;

#[test]
fn open_creates_reopens_and_keeps_position() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    {
        let index = SearchIndex::open(&dir).unwrap();
        assert_eq!(index.state(), &OpenState::Created);
        assert!(index.needs_rebuild());
        index.upsert(&doc("calculator", "Adds numbers.")).unwrap();
        index.commit_at(Some(42)).unwrap();
    }
    let index = SearchIndex::open(&dir).unwrap();
    assert_eq!(index.state(), &OpenState::Opened);
    assert_eq!(index.applied_seq(), Some(42));
    assert!(!index.needs_rebuild());
    assert_eq!(names(&search(&index, "calculator")), ["calculator"]);
}

#[test]
fn a_second_writer_is_refused_without_harm() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    let first = SearchIndex::open(&dir).unwrap();
    first.upsert(&doc("calculator", "Adds numbers.")).unwrap();
    first.commit_at(Some(1)).unwrap();
    assert!(SearchIndex::open(&dir).is_err());
    assert_eq!(
        search(&first, "calculator").total,
        1,
        "the index was not wiped"
    );
}

#[test]
fn the_writer_is_released_when_idle_and_made_again_for_the_next_change() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    let index = SearchIndex::open(&dir).unwrap();
    assert!(!index.has_writer(), "no writer before the first change");
    index.upsert(&doc("calculator", "Adds numbers.")).unwrap();
    // Staged changes keep the writer: releasing would lose them.
    assert!(!index.release_writer().unwrap());
    assert!(index.has_writer());
    index.commit_at(Some(1)).unwrap();
    assert!(index.release_writer().unwrap());
    assert!(!index.has_writer());
    assert!(!index.release_writer().unwrap(), "nothing left to release");
    // Still searchable, and the directory is still this process's.
    assert_eq!(names(&search(&index, "calculator")), ["calculator"]);
    assert!(
        SearchIndex::open(&dir).is_err(),
        "a second open is refused while the writer is released"
    );
    index
        .upsert(&doc("weather-forecast", "Forecasts."))
        .unwrap();
    index.remove("calculator").unwrap();
    index.commit_at(Some(3)).unwrap();
    assert!(index.has_writer());
    assert_eq!(names(&search(&index, "forecasts")), ["weather-forecast"]);
    assert_eq!(search(&index, "calculator").total, 0);
    // A rollback after a release and a new stage drops only what was staged.
    assert!(index.release_writer().unwrap());
    index.upsert(&doc("abacus", "Counts.")).unwrap();
    index.rollback().unwrap();
    index.commit().unwrap();
    assert_eq!(search(&index, "abacus").total, 0);
    drop(index);
    let reopened = SearchIndex::open(&dir).unwrap();
    assert_eq!(reopened.applied_seq(), Some(3));
    assert_eq!(names(&search(&reopened, "forecasts")), ["weather-forecast"]);
}

fn corrupt_and_reopen(damage: impl Fn(&std::path::Path)) -> SearchIndex {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    {
        let index = SearchIndex::open(&dir).unwrap();
        index.upsert(&doc("calculator", "Adds numbers.")).unwrap();
        index.commit_at(Some(7)).unwrap();
    }
    damage(&dir);
    let index = SearchIndex::open(&dir).unwrap();
    assert!(
        matches!(index.state(), OpenState::Rebuilt { .. }),
        "{:?}",
        index.state()
    );
    assert!(index.needs_rebuild());
    assert_eq!(index.num_tools(), 0);
    // Usable after the rebuild.
    index.upsert(&doc("calculator", "Adds numbers.")).unwrap();
    index.commit_at(Some(8)).unwrap();
    assert_eq!(search(&index, "calculator").total, 1);
    std::mem::forget(tmp);
    index
}

#[test]
fn garbage_meta_is_rebuilt() {
    corrupt_and_reopen(|dir| std::fs::write(dir.join("meta.json"), b"{not json").unwrap());
}

#[test]
fn missing_segment_files_are_rebuilt() {
    corrupt_and_reopen(|dir| {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name != "meta.json" && !name.starts_with('.') {
                std::fs::remove_file(&path).unwrap();
            }
        }
    });
}

#[test]
fn truncated_segment_files_are_rebuilt() {
    corrupt_and_reopen(|dir| {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name != "meta.json" && !name.starts_with('.') {
                std::fs::write(&path, b"xx").unwrap();
            }
        }
    });
}

#[test]
fn an_index_of_another_schema_version_is_rebuilt() {
    corrupt_and_reopen(|dir| {
        let meta = std::fs::read_to_string(dir.join("meta.json")).unwrap();
        let current = format!("\\\"schema\\\":{}", crate::schema::SCHEMA_VERSION);
        assert!(meta.contains(&current), "{meta}");
        let meta = meta.replace(&current, "\\\"schema\\\":999");
        assert!(meta.contains("999"), "{meta}");
        std::fs::write(dir.join("meta.json"), meta).unwrap();
    });
}

/// The postings are read with positioned reads (`index::directory`): after
/// searches, no postings file of the index is mapped into the process, while
/// its term dictionaries still are (so the check reads real mappings).
#[cfg(target_os = "linux")]
#[test]
fn searches_read_the_postings_without_mapping_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("index");
    let index = SearchIndex::open(&dir).unwrap();
    for (i, word) in ["calculator", "weather", "invoice"].iter().enumerate() {
        index
            .upsert(&doc(&format!("tool-{i}"), &format!("A {word} tool.")))
            .unwrap();
        index.commit_at(Some(i as i64)).unwrap();
    }
    for word in ["calculator", "weather", "invoice"] {
        assert_eq!(search(&index, word).total, 1, "{word}");
    }
    drop(index);
    let index = SearchIndex::open(&dir).unwrap();
    assert_eq!(names(&search(&index, "weather")), ["tool-1"]);
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let root = dir.to_string_lossy().into_owned();
    let mapped: Vec<&str> = maps.lines().filter(|l| l.contains(root.as_str())).collect();
    assert!(
        mapped.iter().any(|l| l.ends_with(".term")),
        "the term dictionaries are mapped: {mapped:#?}"
    );
    assert!(
        !mapped.iter().any(|l| l.ends_with(".idx")),
        "no postings file is mapped: {mapped:#?}"
    );
}
