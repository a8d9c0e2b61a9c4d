//! The service mounts in a host framework and keeps answering for itself.

use crate::helpers::*;
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use tower::ServiceExt;

#[tokio::test]
async fn it_mounts_in_an_axum_app_beside_the_hosts_own_routes() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let host = axum::Router::new()
        .route(
            "/hello",
            axum::routing::get(|| async { "hello from the host" }),
        )
        .fallback_service(app.svc.clone());

    let hello = host
        .clone()
        .oneshot(
            Request::get("/hello")
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(hello.status(), StatusCode::OK);
    assert_eq!(
        hello.into_body().collect().await.unwrap().to_bytes(),
        "hello from the host"
    );

    let req = Request::get("/external/v1/job-roles")
        .header("x-api-key", &key.client_id)
        .header("x-api-secret", &key.secret)
        .body(axum::body::Body::empty())
        .unwrap();
    let roles = host.clone().oneshot(req).await.unwrap();
    assert_eq!(roles.status(), StatusCode::OK);
    assert_eq!(roles.into_body().collect().await.unwrap().to_bytes(), "[]");

    let missing = host
        .oneshot(
            Request::get("/external/v1/job-roles")
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn it_is_a_plain_tower_service_driven_by_oneshot() {
    let app = TestApp::spawn().await;
    let req = Request::post("/external/v1/auth/signin")
        .body(Full::new(Bytes::from_static(b"{}")))
        .unwrap();
    let res = app.svc.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let body: serde_json::Value =
        serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(body["error"]["code"], 400);
}
