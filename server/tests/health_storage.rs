//! `/healthz` asks the blob store about one small marker object instead of
//! listing bundles (an S3 listing returns up to 1,000 keys, and moto scans
//! the bucket to make it). A store that cannot answer, or a bucket that does
//! not exist, is still reported; the marker is no bundle, so `list_all`
//! (what tests use to prove nothing was stored) leaves it out.

mod common;

use common::Services;
use toolreg_server::blobs::BlobStore;

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    actix_web::rt::System::new().block_on(f)
}

#[test]
fn a_missing_bucket_is_reported_and_a_present_one_answers() {
    let Some(services) = Services::postgres_and_s3() else {
        return;
    };
    block_on(missing_bucket(&services));
}

async fn missing_bucket(services: &Services) {
    let present = BlobStore::open_with(
        &services.storage_url().expect("a bucket"),
        services.s3_options(),
    )
    .expect("open the bucket");
    present.ping().await.expect("the bucket answers");
    present.ping().await.expect("and again, from the marker");
    assert!(
        present.list_all().await.expect("list").is_empty(),
        "the marker is not listed as a stored object"
    );

    let missing = BlobStore::open_with("s3://no-such-bucket-healthz", services.s3_options())
        .expect("configure");
    let err = missing.ping().await.expect_err("a missing bucket");
    assert!(
        err.to_string().to_lowercase().contains("bucket"),
        "the error says what is wrong: {err}"
    );
}

#[test]
fn an_unreachable_store_is_reported() {
    let Some(services) = Services::postgres_and_s3() else {
        return;
    };
    let closed = toolreg_test_support::ClosedPort::new();
    let options = services
        .s3_options()
        .into_iter()
        .map(|(k, v)| {
            if k == "aws_endpoint" {
                (k, closed.url())
            } else {
                (k, v)
            }
        })
        .collect::<Vec<_>>();
    let store = BlobStore::open_with("s3://anything", options).expect("configure");
    assert!(block_on(store.ping()).is_err(), "nothing listens there");
}
