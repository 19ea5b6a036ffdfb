//! Every cache and buffer of the server has a flag bounding its memory
//! (`docs/operations.md`, "What the server keeps in memory"). A value out of
//! range is refused at start, naming the flag, before anything is created;
//! the smallest and largest values a server accepts start it and it
//! answers.

mod common;

use common::{registry_with, Backend, Services};

/// Runs `serve` with `args` and expects a usage error naming `flag`.
#[track_caller]
fn refused(args: &[&str], flag: &str) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let out = registry_with(&data, &[]).run(&[&["serve"], args].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(flag),
        "{args:?} should name {flag}: {stderr}"
    );
    assert!(!data.exists(), "{args:?}: nothing is created on a bad flag");
}

#[test]
fn out_of_range_bounds_are_refused_naming_the_flag() {
    for (args, flag) in [
        (&["--db-connections", "0"][..], "--db-connections"),
        (&["--db-connections", "100000"], "--db-connections"),
        (&["--db-connections=-3"], "--db-connections"),
        (&["--sqlite-cache-kib", "2000000"], "--sqlite-cache-kib"),
        (&["--sqlite-cache-kib", "lots"], "--sqlite-cache-kib"),
        (&["--cache-mib", "100000"], "--cache-mib"),
        (&["--search-cache-mib", "5000"], "--search-cache-mib"),
        (&["--search-records-mib", "70000"], "--search-records-mib"),
        (&["--index-writer-mib", "14"], "--index-writer-mib"),
        (&["--stem-cache-kib", "2000000"], "--stem-cache-kib"),
        (&["--index-writer-mib", "4001"], "--index-writer-mib"),
        (&["--log-buffer-kib", "8"], "--log-buffer-kib"),
    ] {
        refused(args, flag);
    }
}

#[test]
fn an_environment_value_out_of_range_is_refused_naming_the_flag() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let out =
        registry_with(&data, &[("TOOLREG_INDEX_WRITER_MIB".into(), "1".into())]).run(&["serve"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--index-writer-mib"), "{stderr}");
    assert!(stderr.contains("15..=4000"), "the range is given: {stderr}");
    assert!(!data.exists());
}

/// The tightest bounds still make a working registry: one connection, no
/// page cache beyond SQLite's minimum, no caches, the smallest writer and
/// log buffer. A publish is indexed and found, on both backends.
#[test]
fn the_tightest_bounds_still_serve() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(services) = Services::for_backend(backend) else {
            continue;
        };
        let tmp = tempfile::tempdir().expect("tempdir");
        let registry = registry_with(tmp.path(), &services.env());
        let token = registry.create_user("alice", "verified", false);
        let server = registry.serve(&[
            "--db-connections",
            "1",
            "--sqlite-cache-kib",
            "0",
            "--cache-mib",
            "0",
            "--search-cache-mib",
            "0",
            "--search-records-mib",
            "0",
            "--index-writer-mib",
            "15",
            "--stem-cache-kib",
            "0",
            "--log-buffer-kib",
            "64",
        ]);
        let client = reqwest::blocking::Client::new();
        let bundle = common::BundleBuilder::http("tight-tool", "1.0.0").pack();
        let published = server.publish(&client, &token, bundle);
        assert_eq!(
            published.status(),
            201,
            "{}",
            published.text().unwrap_or_default()
        );
        let found = (0..200).any(|_| {
            let body = client
                .get(server.api("/api/v1/search?q=tight"))
                .send()
                .and_then(|r| r.text())
                .unwrap_or_default();
            if body.contains("\"tight-tool\"") {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            false
        });
        assert!(found, "the tool is indexed with a 15 MiB writer");
        let tool = client
            .get(server.api("/api/v1/tools/tight-tool"))
            .send()
            .expect("GET the tool");
        assert_eq!(tool.status(), 200);
    }
}
