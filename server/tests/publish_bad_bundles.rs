//! Bad input never gets in: every bundle limit of the publish path is answered
//! 400/413/422 with a body naming the rule or limit, and afterwards nothing
//! is stored — no tool row, no version, no change, no blob in the store.

mod common;

use std::io::{Read, Write};

use common::{problem, BundleBuilder, TestApp};
use flate2::write::GzEncoder;
use flate2::Compression;
use tar::{EntryType, Header};
use toolreg_core::Tier;
use toolreg_test_support::both_backends;

/// One raw tar entry, written without the `tar` crate's path checks.
struct Raw<'a> {
    name: &'a [u8],
    kind: EntryType,
    data: Vec<u8>,
    link: &'a [u8],
}

fn file<'a>(name: &'a str, data: impl Into<Vec<u8>>) -> Raw<'a> {
    Raw {
        name: name.as_bytes(),
        kind: EntryType::Regular,
        data: data.into(),
        link: b"",
    }
}

fn valid_entries() -> Vec<(String, Vec<u8>)> {
    BundleBuilder::http("bad-bundle", "1.0.0")
        .files()
        .iter()
        .map(|(p, b)| (p.to_string(), b.to_vec()))
        .collect()
}

/// A gzip'd tar holding a valid tool plus `extra` entries.
fn tar_with(extra: Vec<Raw<'_>>) -> Vec<u8> {
    let valid = valid_entries();
    let mut entries: Vec<Raw<'_>> = valid.iter().map(|(p, b)| file(p, b.clone())).collect();
    entries.extend(extra);
    let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
    for e in entries {
        let mut header = Header::new_gnu();
        header.as_old_mut().name[..e.name.len()].copy_from_slice(e.name);
        header.as_old_mut().linkname[..e.link.len()].copy_from_slice(e.link);
        header.set_entry_type(e.kind);
        header.set_mode(0o644);
        header.set_size(e.data.len() as u64);
        header.set_cksum();
        builder.append(&header, e.data.as_slice()).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

/// The refusal left no trace.
async fn assert_nothing_stored(app: &TestApp) {
    assert_eq!(app.count("tools").await, 0, "no tool row");
    assert_eq!(app.count("versions").await, 0, "no version row");
    assert_eq!(app.count("changes").await, 0, "no change-log row");
    assert!(
        app.stored_objects().await.is_empty(),
        "no blob: {:?}",
        app.stored_objects().await
    );
}

async fn refused(app: &TestApp, bundle: Vec<u8>, status: u16, slug: &str, detail_has: &[&str]) {
    let token = app.user(&format!("u{}", rand_login()), Tier::Trusted).await;
    let body = problem(app.publish(&token, bundle).await, status, slug).await;
    let detail = body["detail"].as_str().unwrap_or_default();
    for needle in detail_has {
        assert!(
            detail.contains(needle),
            "detail should name `{needle}`: {detail}"
        );
    }
    assert_nothing_stored(app).await;
}

fn rand_login() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

async fn control_the_raw_builder_makes_valid_bundles(app: TestApp) {
    // The same builder without a bad entry publishes: the refusals below are about the bad entry.
    let token = app.user("alice", Tier::Untrusted).await;
    app.publish_ok(&token, tar_with(vec![])).await;
}

async fn path_traversal(app: TestApp) {
    refused(
        &app,
        tar_with(vec![file("../evil.txt", "x")]),
        400,
        "bad-bundle",
        &["..", "evil.txt"],
    )
    .await;
}

async fn absolute_path(app: TestApp) {
    refused(
        &app,
        tar_with(vec![file("/etc/evil", "x")]),
        400,
        "bad-bundle",
        &["/etc/evil", "absolute"],
    )
    .await;
}

async fn symbolic_link(app: TestApp) {
    let link = Raw {
        name: b"link",
        kind: EntryType::Symlink,
        data: vec![],
        link: b"/etc/passwd",
    };
    refused(&app, tar_with(vec![link]), 400, "bad-bundle", &["link"]).await;
}

async fn hard_link(app: TestApp) {
    let link = Raw {
        name: b"hard",
        kind: EntryType::Link,
        data: vec![],
        link: b"definition.yaml",
    };
    refused(&app, tar_with(vec![link]), 400, "bad-bundle", &["link"]).await;
}

async fn device(app: TestApp) {
    let dev = Raw {
        name: b"null",
        kind: EntryType::Char,
        data: vec![],
        link: b"",
    };
    refused(&app, tar_with(vec![dev]), 400, "bad-bundle", &["device"]).await;
}

async fn non_utf8_name(app: TestApp) {
    let bad = Raw {
        name: b"caf\xe9.txt",
        kind: EntryType::Regular,
        data: b"x".to_vec(),
        link: b"",
    };
    refused(&app, tar_with(vec![bad]), 400, "bad-bundle", &["UTF-8"]).await;
}

async fn duplicate_entries(app: TestApp) {
    refused(
        &app,
        tar_with(vec![file("definition.yaml", "name: other\n")]),
        400,
        "bad-bundle",
        &["duplicate", "definition.yaml"],
    )
    .await;
}

async fn too_many_entries(app: TestApp) {
    let names: Vec<String> = (0..2_001).map(|i| format!("data/{i}.txt")).collect();
    let extra = names.iter().map(|n| file(n, "x")).collect();
    refused(&app, tar_with(extra), 413, "too-large", &["2000"]).await;
}

async fn over_ten_mib_compressed_with_content_length(app: TestApp) {
    // Incompressible bytes just over 10 MiB: refused from Content-Length, before reading it all.
    let mut noise = vec![0u8; 10 * 1024 * 1024 + 1];
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for b in noise.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    refused(&app, noise, 413, "too-large", &["10 MiB"]).await;
}

async fn over_ten_mib_compressed_streamed(app: TestApp) {
    // No Content-Length (chunked): the limit is enforced while streaming.
    let token = app.user("streamer", Tier::Trusted).await;
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..11).map(|_| Ok(vec![7u8; 1024 * 1024])).collect();
    let res = app
        .client
        .post(app.api("/api/v1/tools"))
        .bearer_auth(&token)
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await;
    match res {
        Ok(res) => {
            let body = problem(res, 413, "too-large").await;
            assert!(
                body["detail"].as_str().unwrap().contains("10 MiB"),
                "{body:#}"
            );
        }
        // The server may close the connection after answering 413 mid-upload.
        Err(e) => eprintln!("connection closed while streaming an oversize body (accepted): {e}"),
    }
    assert_nothing_stored(&app).await;
}

async fn decompression_bomb(app: TestApp) {
    // 65 MiB of zeros compresses to ~65 KB: far under 10 MiB, over the 64 MiB unpacked limit.
    let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
    for (p, b) in valid_entries() {
        let mut h = Header::new_gnu();
        h.set_size(b.len() as u64);
        h.set_mode(0o644);
        builder.append_data(&mut h, p, b.as_slice()).unwrap();
    }
    let size = 65 * 1024 * 1024;
    let mut h = Header::new_gnu();
    h.set_size(size);
    h.set_mode(0o644);
    builder
        .append_data(&mut h, "zeros.bin", std::io::repeat(0).take(size))
        .unwrap();
    let bomb = builder.into_inner().unwrap().finish().unwrap();
    assert!(bomb.len() < 1024 * 1024, "the bomb is small compressed");
    refused(&app, bomb, 413, "too-large", &["unpacked", "max_unpacked"]).await;
}

async fn not_a_gzip_tar(app: TestApp) {
    refused(
        &app,
        b"this is not a bundle".to_vec(),
        400,
        "bad-bundle",
        &["gzip"],
    )
    .await;
}

async fn empty_body(app: TestApp) {
    refused(&app, Vec::new(), 400, "bad-bundle", &["empty"]).await;
}

async fn invalid_definition(app: TestApp) {
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    {
        let mut builder = tar::Builder::new(&mut gz);
        let def = b"name: broken\nversion: 1.0.0\nexecution:\n  type: http\n";
        let mut h = Header::new_gnu();
        h.set_size(def.len() as u64);
        h.set_mode(0o644);
        builder
            .append_data(&mut h, "definition.yaml", &def[..])
            .unwrap();
        builder.finish().unwrap();
    }
    gz.flush().unwrap();
    let bundle = gz.finish().unwrap();
    let token = app.user("alice", Tier::Trusted).await;
    let body = problem(app.publish(&token, bundle).await, 422, "invalid-definition").await;
    let errors = body["errors"].as_array().expect("errors[]");
    assert!(!errors.is_empty());
    assert!(
        errors
            .iter()
            .all(|e| e["path"].is_string() && e["message"].is_string()),
        "{body:#}"
    );
    assert_nothing_stored(&app).await;
}

async fn secret_in_definition(app: TestApp) {
    let Some(corpus) = toolreg_test_support::corpus() else {
        return;
    };
    let dir = corpus.join("shinkai/twitter-post");
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("metadata.json")).unwrap()).unwrap();
    meta["oauth"][0]["clientSecret"] = "s3cr3t-value".into();
    let bundle = BundleBuilder::corpus("shinkai/twitter-post", "twitter-post", "1.0.0")
        .file("metadata.json", serde_json::to_vec_pretty(&meta).unwrap())
        .file("tool.ts", "export async function run() { return {}; }\n")
        .pack();
    let token = app.user("trudy", Tier::Trusted).await;
    let body = problem(app.publish(&token, bundle).await, 422, "invalid-definition").await;
    let errors = body["errors"].as_array().expect("errors[]");
    assert!(
        errors.iter().any(|e| e["path"] == "/oauth/0/clientSecret"
            && e["message"].as_str().is_some_and(|m| m.starts_with("S1 "))),
        "{body:#}"
    );
    assert_nothing_stored(&app).await;
}

both_backends!(async TestApp::start =>
    control_the_raw_builder_makes_valid_bundles,
    path_traversal,
    absolute_path,
    symbolic_link,
    hard_link,
    device,
    non_utf8_name,
    duplicate_entries,
    too_many_entries,
    over_ten_mib_compressed_with_content_length,
    over_ten_mib_compressed_streamed,
    decompression_bomb,
    not_a_gzip_tar,
    empty_body,
    invalid_definition,
    secret_in_definition,
);
