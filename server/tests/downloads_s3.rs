//! Downloads with S3 storage, through the real binary and a real
//! S3 server: with `--redirect-downloads` both download endpoints answer a
//! `307` to a short-lived presigned URL that keeps the digest headers, and
//! following it gives the exact bundle bytes from S3; without it the bundle
//! streams through the server with its length and digest. The flag is
//! refused at start when the storage is local files.

mod common;

use common::{registry_with, BundleBuilder};
use reqwest::blocking::Client;
use serde_json::Value;
use toolreg_test_support::Services;

fn no_redirects() -> Client {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// A bundle with a document large enough to need several reads from storage
/// (under `docs/`: README.md itself is capped at 512 KiB).
fn big_bundle(name: &str) -> Vec<u8> {
    let notes: String = (0..20_000)
        .map(|i| format!("line {i} of a long usage note for {name}\n"))
        .collect();
    BundleBuilder::http(name, "1.0.0")
        .file("docs/usage.md", notes)
        .pack()
}

#[test]
fn redirect_downloads_answer_a_presigned_url_that_serves_the_bundle() {
    let Some(services) = Services::s3_only() else {
        return;
    };
    let env = services.env();
    let tmp = tempfile::tempdir().expect("tempdir");
    let token = registry_with(tmp.path(), &env).create_user("alice", "verified", false);
    let server = registry_with(tmp.path(), &env).serve(&["--redirect-downloads"]);
    let client = no_redirects();

    let bundle = big_bundle("presigned-probe");
    let res = server.publish(&client, &token, bundle.clone());
    assert_eq!(res.status(), 201, "{}", res.text().unwrap_or_default());
    let published: Value = res.json().expect("JSON");
    let sha = published["sha256"].as_str().expect("sha256").to_string();
    assert_eq!(sha, toolreg_core::digest::sha256_hex(&bundle));

    for path in [
        "/api/v1/tools/presigned-probe/1.0.0/download".to_string(),
        format!("/api/v1/blobs/sha256/{sha}"),
    ] {
        let res = client.get(server.api(&path)).send().expect("download");
        assert_eq!(res.status(), 307, "{path} with --redirect-downloads");
        let header = |name: &str| {
            res.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        assert_eq!(
            header("x-checksum-sha256"),
            sha,
            "{path}: X-Checksum-Sha256 kept on the redirect"
        );
        assert_eq!(header("etag"), format!("\"{sha}\""));
        assert!(
            !header("cache-control").contains("immutable"),
            "a presigned URL expires: {}",
            header("cache-control")
        );
        let location = header("location");
        let endpoint = toolreg_test_support::s3_endpoint();
        assert!(
            location.starts_with(&endpoint),
            "{path}: Location {location} is not on the S3 server {endpoint}"
        );
        assert!(
            location.contains(&format!("/registry/bundles/sha256/{sha}")),
            "{location}"
        );
        assert!(
            location.contains("X-Amz-Signature="),
            "presigned: {location}"
        );
        assert!(
            location.contains("X-Amz-Expires=300"),
            "valid for 5 minutes: {location}"
        );

        // Following it gives the bundle bytes straight from S3.
        let from_s3 = Client::new()
            .get(&location)
            .send()
            .expect("GET the presigned URL");
        assert_eq!(from_s3.status(), 200);
        let bytes = from_s3.bytes().expect("bytes");
        assert_eq!(
            toolreg_core::digest::sha256_hex(&bytes),
            sha,
            "{path}: the presigned URL serves other bytes"
        );
    }

    // A client that follows redirects gets the bytes in one call.
    let bytes = Client::new()
        .get(server.api("/api/v1/tools/presigned-probe/1.0.0/download"))
        .send()
        .expect("download")
        .bytes()
        .expect("bytes");
    assert_eq!(bytes.as_ref(), bundle.as_slice());

    // Conditional requests and errors are still answered by the registry.
    let res = client
        .get(server.api("/api/v1/tools/presigned-probe/1.0.0/download"))
        .header("if-none-match", format!("\"{sha}\""))
        .send()
        .expect("conditional download");
    assert_eq!(res.status(), 304);
    let res = client
        .get(server.api("/api/v1/tools/presigned-probe/9.9.9/download"))
        .send()
        .expect("download");
    assert_eq!(res.status(), 404);
}

#[test]
fn without_the_flag_s3_bundles_stream_through_the_server() {
    let Some(services) = Services::s3_only() else {
        return;
    };
    let env = services.env();
    let tmp = tempfile::tempdir().expect("tempdir");
    let token = registry_with(tmp.path(), &env).create_user("alice", "verified", false);
    let server = registry_with(tmp.path(), &env).serve(&[]);
    let client = no_redirects();

    let bundle = big_bundle("streamed-probe");
    assert_eq!(
        server.publish(&client, &token, bundle.clone()).status(),
        201
    );
    let res = client
        .get(server.api("/api/v1/tools/streamed-probe/1.0.0/download"))
        .send()
        .expect("download");
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.content_length(),
        Some(bundle.len() as u64),
        "streamed with its length"
    );
    let sha = res
        .headers()
        .get("x-checksum-sha256")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let bytes = res.bytes().expect("bytes");
    assert_eq!(toolreg_core::digest::sha256_hex(&bytes), sha);
    assert_eq!(bytes.as_ref(), bundle.as_slice());
}

#[test]
fn redirect_downloads_need_s3_storage() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = registry_with(tmp.path(), &[]).run(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--redirect-downloads",
    ]);
    assert!(
        !out.status.success(),
        "--redirect-downloads on local files must not start"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--redirect-downloads needs S3 storage"),
        "{stderr}"
    );
}
