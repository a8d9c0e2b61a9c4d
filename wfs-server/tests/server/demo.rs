//! `wfs-server demo` seeding: a realistic company, once.

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use tower::ServiceExt;
use wfs_core::{Store, StoreOptions, Wfs};
use wfs_server::demo::{Outcome, seed};
use wfs_tower::WfsService;

async fn get(svc: &WfsService, id: &str, secret: &str, path: &str) -> serde_json::Value {
    let req = Request::get(path)
        .header("x-api-key", id)
        .header("x-api-secret", secret)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let res = svc.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), 200, "{path}");
    serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap()
}

#[tokio::test]
async fn the_demo_fills_every_read_route_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("demo.db").display());
    let store = Store::connect(&StoreOptions::new(url)).await.unwrap();
    store.migrate().await.unwrap();
    let wfs = Wfs::new(store, b"demo-test-secret-demo-test-secret!!").unwrap();

    let Outcome::Created {
        company_id: company,
        client_id,
        client_secret,
    } = seed(&wfs).await.unwrap()
    else {
        panic!("a new database gets the demo");
    };
    let svc = WfsService::new(wfs.clone());
    let get = |path: &'static str| get(&svc, &client_id, &client_secret, path);

    assert!(
        get("/external/v1/locations")
            .await
            .as_array()
            .unwrap()
            .len()
            >= 3
    );
    assert!(
        get("/external/v1/job-roles")
            .await
            .as_array()
            .unwrap()
            .len()
            >= 6
    );
    let staff = get("/external/v1/staff").await;
    assert!(
        staff.as_array().unwrap().len() >= 60,
        "{}",
        staff.as_array().unwrap().len()
    );
    assert!(
        !get("/external/v1/shifts")
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
    let today = wfs.now().date_naive();
    let hours_path = format!(
        "/external/v1/hours?from={}&to={}",
        today - chrono::Duration::days(14),
        today
    );
    let hours = get(Box::leak(hours_path.into_boxed_str())).await;
    let total: f64 = hours
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["hours"].as_f64().unwrap())
        .sum();
    assert!(total > 100.0, "worked hours in the past two weeks: {total}");
    assert!(
        !get("/external/v1/overtime")
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        get("/external/v1/schedules")
            .await
            .as_array()
            .unwrap()
            .len(),
        100,
        "a full first page ahead"
    );

    let Outcome::AlreadyPresent { company_id } = seed(&wfs).await.unwrap() else {
        panic!("a second run finds the demo");
    };
    assert_eq!(
        company_id,
        Some(company),
        "the demo company is named for create-key"
    );
    assert_eq!(
        get("/external/v1/staff").await,
        staff,
        "a second run adds nothing"
    );
}
