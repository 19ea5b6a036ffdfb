//! `/metrics` stays small whatever clients send: requests with made-up
//! methods and paths that match no route are counted under `OTHER`, on a
//! real server over HTTP.

mod common;

use common::{Backend, TestApp};
use futures::future::join_all;
use reqwest::Method;

#[actix_web::test]
async fn made_up_methods_and_paths_fold_into_other() {
    let Some(app) = TestApp::start(Backend::Sqlite).await else {
        return;
    };
    assert_eq!(app.get("/healthz").await.status(), 200);

    // 3,000 requests, each with its own method; half of them on paths that
    // match no route, the other half on a real route.
    for batch in 0..60 {
        let requests = (0..50).map(|i| {
            let n = batch * 50 + i;
            let method = Method::from_bytes(format!("BREW{n}").as_bytes()).unwrap();
            let path = if n % 2 == 0 {
                format!("/no/such/route/{n}")
            } else {
                "/api/v1/tools/some-tool".to_string()
            };
            app.client.request(method, app.api(&path)).send()
        });
        for res in join_all(requests).await {
            let res = res.expect("the server answers a made-up method");
            assert!(res.status().is_client_error(), "{}", res.status());
        }
    }

    let res = app.get("/metrics").await;
    assert_eq!(res.status(), 200);
    let text = res.text().await.unwrap();
    assert!(
        text.len() < 32 * 1024,
        "/metrics is {} bytes after 3,000 made-up methods:\n{}",
        text.len(),
        &text[..text.len().min(4000)]
    );
    assert!(!text.contains("BREW"), "a made-up method became a label");
    assert!(
        !text.contains("/no/such/route"),
        "a raw path became a label"
    );
    let other: u64 = text
        .lines()
        .filter(|l| l.starts_with(r#"toolreg_http_requests_total{method="OTHER","#))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    assert_eq!(
        other, 3000,
        "every made-up request counted under OTHER:\n{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with(r#"toolreg_http_requests_total{method="OTHER",route="OTHER","#)),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l
                == r#"toolreg_http_requests_total{method="GET",route="/healthz",status="200"} 1"#),
        "a real request keeps its own labels:\n{text}"
    );
}
