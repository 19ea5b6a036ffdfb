//! The read cache's unit tests: names, budgets, staleness and fill races.

use super::*;

fn target(version: &str) -> Arc<DownloadTarget> {
    Arc::new(DownloadTarget {
        tool_id: 1,
        version_id: 2,
        version: version.into(),
        sha256: "ab".repeat(32),
        size: 10,
        state: crate::models::VersionState::Live,
    })
}

#[test]
fn names_match_in_normalized_form_and_versions_ignore_build_metadata() {
    let cache = ReadCache::default();
    let e = cache.epoch();
    cache.put_tool("Send_Mail", Bytes::from_static(b"{}"), e);
    assert!(cache.tool("send-mail").is_some());
    cache.put_version("send-mail", "1.0.0+build.1", Bytes::from_static(b"{}"), e);
    assert!(cache.version("SEND_MAIL", "1.0.0").is_some());
    assert!(cache.version("send-mail", "1.0.1").is_none());
    assert!(cache.version("send-mail", "not-semver").is_none());
}

#[test]
fn a_change_invalidates_the_tool_and_that_version_only() {
    let cache = ReadCache::default();
    let e = cache.epoch();
    cache.put_tool("send-mail", Bytes::from_static(b"{}"), e);
    cache.put_version("send-mail", "1.0.0", Bytes::from_static(b"{}"), e);
    cache.put_version("send-mail", "1.1.0", Bytes::from_static(b"{}"), e);
    cache.put_download("send-mail", target("1.0.0"), e);
    cache.apply_changes([("Send_Mail", "1.0.0")]);
    assert!(cache.tool("send-mail").is_none());
    assert!(cache.version("send-mail", "1.0.0").is_none());
    assert!(cache.download("send-mail", "1.0.0").is_none());
    assert!(cache.version("send-mail", "1.1.0").is_some());
}

#[test]
fn a_fill_that_raced_an_invalidation_is_dropped() {
    let cache = ReadCache::default();
    let before = cache.epoch();
    // A writer commits and invalidates while the reader is at the database.
    cache.invalidate_tool("send-mail");
    cache.put_tool("send-mail", Bytes::from_static(b"stale"), before);
    assert!(cache.tool("send-mail").is_none());
    // A fill that started after the invalidation stays.
    let after = cache.epoch();
    cache.put_tool("send-mail", Bytes::from_static(b"fresh"), after);
    assert_eq!(cache.tool("send-mail").as_deref(), Some(&b"fresh"[..]));
}

#[test]
fn a_budget_past_the_default_goes_to_the_answers() {
    let mib = |bytes: u64| bytes / (1024 * 1024);
    let small = CacheSizes::from_mib(DEFAULT_MIB);
    assert_eq!((mib(small.answers), mib(small.bundles)), (16, 16));
    let large = CacheSizes::from_mib(DEFAULT_MIB_POSTGRES);
    assert_eq!((mib(large.answers), mib(large.bundles)), (80, 16));
    let off = CacheSizes::from_mib(0);
    assert_eq!((off.answers, off.bundles), (0, 0));
    assert!(!ReadCache::new(off).enabled);
    assert_eq!(default_mib(crate::db::Backend::Sqlite), DEFAULT_MIB);
    assert_eq!(
        default_mib(crate::db::Backend::Postgres),
        DEFAULT_MIB_POSTGRES
    );
}

#[test]
fn bundles_are_kept_by_digest_up_to_the_size_limit() {
    for mib in [1, 2, DEFAULT_MIB] {
        let cache = ReadCache::new(CacheSizes::from_mib(mib));
        cache.put_bundle("aa", Bytes::from(vec![0u8; 10]));
        cache.put_bundle("big", Bytes::from(vec![0u8; MAX_CACHED_BUNDLE]));
        cache.put_bundle("bb", Bytes::from(vec![0u8; MAX_CACHED_BUNDLE + 1]));
        assert!(cache.bundle("aa").is_some());
        assert!(
            cache.bundle("big").is_some(),
            "{mib} MiB: the largest bundle is kept"
        );
        assert!(cache.bundle("bb").is_none());
    }
    let cache = ReadCache::default();
    cache.put_bundle("aa", Bytes::from(vec![0u8; 10]));
    cache.invalidate_answers();
    assert!(cache.bundle("aa").is_some(), "bundle bytes never go stale");
}

#[test]
fn a_part_stays_within_its_bytes_and_serves_an_entry_only_for_its_time_to_live() {
    let part: Part<String, Bytes> =
        Part::new(64 * 1024, 1024, Duration::from_millis(200), |k, v| {
            k.len() + v.len() + 64
        });
    for i in 0..1000 {
        part.insert(format!("tool-{i}"), Bytes::from(vec![b'x'; 1000]));
        assert!(
            part.weight() <= 64 * 1024,
            "{} bytes after {i}",
            part.weight()
        );
    }
    assert!(part.len() > 20, "{} entries kept", part.len());
    part.insert("fresh".into(), Bytes::from_static(b"{}"));
    assert!(part.get("fresh").is_some());
    std::thread::sleep(Duration::from_millis(300));
    assert!(part.get("fresh").is_none(), "served after its time to live");
    part.insert("fresh".into(), Bytes::from_static(b"{}"));
    assert!(part.get("fresh").is_some(), "a refill is served again");
}

#[test]
fn the_answers_share_one_budget() {
    let budget = 1 << 20;
    let cache = ReadCache::new(CacheSizes {
        answers: budget,
        bundles: 0,
    });
    // Download targets alone, each read once after it is put in, as a
    // registry's downloads do: they may take more than a third.
    for i in 0..20_000 {
        let name = format!("tool-{i}");
        cache.put_download(&name, target("1.0.0"), cache.epoch());
        assert!(cache.download(&name, "1.0.0").is_some());
    }
    let weight = cache.answers.weight();
    assert!(weight <= budget, "{weight} bytes");
    assert!(weight > budget / 2, "targets hold only {weight} bytes");
    // A target is weighed as what it takes (~380 bytes), not only its
    // strings, so the budget bounds the memory.
    let kept = (0..20_000)
        .filter(|i| cache.download(&format!("tool-{i}"), "1.0.0").is_some())
        .count();
    assert!(
        kept <= budget as usize / 300,
        "{kept} targets in {budget} bytes"
    );
    // A tool answer still goes in beside them, and a version answer of
    // the same key is another entry than its download target.
    cache.put_tool("tool-1", Bytes::from_static(b"{}"), cache.epoch());
    cache.put_version(
        "tool-19999",
        "1.0.0",
        Bytes::from_static(b"{}"),
        cache.epoch(),
    );
    assert!(cache.tool("tool-1").is_some());
    assert!(cache.version("tool-19999", "1.0.0").is_some());
    assert!(cache.download("tool-19999", "1.0.0").is_some());
}

#[test]
fn a_zero_budget_turns_the_cache_off() {
    let cache = ReadCache::new(CacheSizes::from_mib(0));
    cache.put_tool("send-mail", Bytes::from_static(b"{}"), cache.epoch());
    cache.put_bundle("aa", Bytes::from_static(b"x"));
    assert!(cache.tool("send-mail").is_none());
    assert!(cache.bundle("aa").is_none());
}
