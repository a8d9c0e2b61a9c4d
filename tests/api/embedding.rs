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

#[tokio::test]
async fn under_a_host_prefix_the_client_reaches_it_with_that_prefix_in_its_base_url() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let host = axum::Router::new()
        .route("/hello", axum::routing::get(|| async { "host" }))
        .nest_service("/partners", app.svc.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, host).await });

    let base = format!("http://{addr}/partners");
    let client =
        wfs_client::WfsClient::new(base, key.client_id.as_str(), key.secret.as_str()).unwrap();
    let role = client
        .create_job_role(&wfs_client::types::CreateJobRoleRequest {
            title: "Nurse".into(),
            weekly_hours: None,
            desc: None,
            hexcode: None,
            symbol: None,
            daily_required: None,
        })
        .await
        .unwrap();
    let listed = client.list_job_roles().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, role.id);
    // Outside the prefix the host answers for itself: the API is not at the root.
    let root = reqwest::get(format!("http://{addr}/external/v1/job-roles"))
        .await
        .unwrap();
    assert_eq!(root.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn told_its_mount_prefix_it_names_it_in_servers_and_serves_paths_with_or_without_it() {
    let app = TestApp::spawn_with(wfs_tower::Config::default().base_path("/partners/")).await;
    let key = app.key(&app.company("Acme").await).await;

    let doc = app
        .send(Req::new(
            http::Method::GET,
            "/partners/external/v1/openapi.json",
        ))
        .await;
    let stripped = app.get(&key, "/external/v1/job-roles").await;
    let whole = app.get(&key, "/partners/external/v1/job-roles").await;
    let elsewhere = app.get(&key, "/partnersx/external/v1/job-roles").await;
    let root_app = TestApp::spawn().await;
    let root_doc = root_app
        .send(Req::new(http::Method::GET, "/external/v1/openapi.json"))
        .await;

    doc.assert_status(200);
    assert_eq!(doc.body["servers"][0]["url"], "/partners");
    assert_eq!(root_doc.body["servers"][0]["url"], "/");
    stripped.assert_status(200);
    whole.assert_status(200);
    assert_eq!(elsewhere.status, StatusCode::NOT_FOUND);
}
