//! Unknown routes, wrong methods, bodies: always the spec's JSON error body.

use crate::helpers::*;
use http::Method;
use serde_json::json;

#[tokio::test]
async fn unknown_routes_are_404_in_the_error_shape() {
    let app = TestApp::spawn().await;
    for path in [
        "/external/v1/nothing-here",
        "/",
        "/external/v2/job-roles",
        "/external/v1/job-roles/a/b",
    ] {
        let res = app.send(Req::new(Method::GET, path)).await;
        res.assert_status(404);
        assert!(!res.error_message().is_empty());
    }
}

#[tokio::test]
async fn a_wrong_method_is_405_with_allow() {
    let app = TestApp::spawn().await;
    let res = app
        .send(Req::new(Method::PUT, "/external/v1/job-roles"))
        .await;
    res.assert_status(405);
    assert_eq!(res.header("allow"), Some("GET, POST"));
    assert!(!res.error_message().is_empty());
    app.send(Req::new(Method::GET, "/external/v1/auth/signin"))
        .await
        .assert_status(405);
}

#[tokio::test]
async fn a_body_over_one_mebibyte_is_413() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let huge = json!({"title": "x".repeat(1 << 20)});
    let res = app
        .send(
            Req::new(Method::POST, "/external/v1/job-roles")
                .key(&key)
                .idem(&unique_idem())
                .json(&huge),
        )
        .await;
    res.assert_status(413);
    assert!(!res.error_message().is_empty());
}

#[tokio::test]
async fn error_and_success_bodies_are_json() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let ok = app.get(&key, "/external/v1/job-roles").await;
    assert_eq!(ok.header("content-type"), Some("application/json"));
    let err = app
        .send(Req::new(Method::GET, "/external/v1/job-roles"))
        .await;
    assert_eq!(err.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn a_lost_database_answers_503_in_the_error_shape() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;

    app.wfs.store().clone().close().await.unwrap();

    let read = app.get(&key, "/external/v1/job-roles").await;
    read.assert_status(503);
    assert!(!read.error_message().is_empty());
    assert_eq!(read.header("retry-after"), Some("1"));
}

#[tokio::test]
async fn the_openapi_document_is_served_without_credentials() {
    let app = TestApp::spawn().await;
    let res = app
        .send(Req::new(Method::GET, "/external/v1/openapi.json"))
        .await;
    res.assert_status(200);
    assert_eq!(res.header("content-type"), Some("application/json"));
    let served = serde_json::to_string(&res.body).unwrap();
    let built: serde_json::Value = serde_json::from_str(&wfs_tower::openapi_json()).unwrap();
    assert_eq!(
        res.body,
        built,
        "served: {}",
        &served[..200.min(served.len())]
    );
    assert!(res.body["paths"]["/external/v1/workforce/resources"]["get"].is_object());
}
