//! A host provisions one company per tenant of its own, from Rust, without any wfs
//! user (issue 19, point 4): the company carries the host's reference, is found again
//! by it, has no portal login and no member in `/staff`, and works through its keys.

use crate::helpers::*;
use http::Method;
use serde_json::json;
use wfs_core::service::api_keys::NewApiKey;
use wfs_core::{Error, NewCompany};

async fn provision(app: &TestApp, name: &str, external_ref: Option<&str>) -> wfs_core::Company {
    let tx = app.wfs.begin().await.unwrap();
    let company = app
        .wfs
        .create_company(
            &tx,
            NewCompany {
                name: name.into(),
                external_ref: external_ref.map(str::to_owned),
            },
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    company
}

async fn key_for(app: &TestApp, company: &wfs_core::Company) -> Key {
    let tx = app.wfs.begin().await.unwrap();
    let issued = app
        .wfs
        .create_company_api_key(
            &tx,
            company.id,
            NewApiKey {
                name: "host".into(),
                scopes: Some(vec![
                    "workforce:read".into(),
                    "workforce:write".into(),
                    "availability:read".into(),
                ]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    Key {
        id: issued.id.to_string(),
        client_id: issued.client_id.clone(),
        secret: issued.secret().to_owned(),
    }
}

#[tokio::test]
async fn a_company_made_for_a_host_tenant_is_found_again_by_the_hosts_reference() {
    let app = TestApp::spawn().await;

    let made = provision(&app, "Acme Care", Some("tenant-42")).await;
    let found = app.wfs.company_by_external_ref("tenant-42").await.unwrap();
    let by_id = app.wfs.company(made.id).await.unwrap();
    let unknown = app.wfs.company_by_external_ref("tenant-43").await.unwrap();
    let other_case = app.wfs.company_by_external_ref("TENANT-42").await.unwrap();

    assert_eq!(made.name, "Acme Care");
    assert_eq!(made.external_ref.as_deref(), Some("tenant-42"));
    assert_eq!(found.as_ref(), Some(&made));
    assert_eq!(by_id.as_ref(), Some(&made));
    assert_eq!(unknown, None);
    assert_eq!(other_case, None, "a reference is compared exactly");
}

#[tokio::test]
async fn a_reference_names_one_company_and_a_taken_one_is_a_conflict_that_writes_nothing() {
    let app = TestApp::spawn().await;
    let first = provision(&app, "Acme", Some("tenant-1")).await;
    // Companies without a reference never clash.
    provision(&app, "No ref A", None).await;
    provision(&app, "No ref B", None).await;

    let tx = app.wfs.begin().await.unwrap();
    let again = app
        .wfs
        .create_company(
            &tx,
            NewCompany {
                name: "Impostor".into(),
                external_ref: Some("tenant-1".into()),
            },
        )
        .await;
    drop(tx);

    match again {
        Err(Error::Conflict(message)) => assert_eq!(
            message,
            "A company with externalRef tenant-1 already exists"
        ),
        other => panic!("expected a conflict, got {other:?}"),
    }
    let found = app.wfs.company_by_external_ref("tenant-1").await.unwrap();
    assert_eq!(found.map(|c| c.id), Some(first.id));
}

#[tokio::test]
async fn bad_names_and_references_are_refused_naming_the_field() {
    let app = TestApp::spawn().await;
    let tx = app.wfs.begin().await.unwrap();
    for (name, external_ref, field) in [
        ("   ", None, "name"),
        ("Acme", Some(""), "externalRef"),
        ("Acme", Some(" padded"), "externalRef"),
        ("Acme", Some("line\nbreak"), "externalRef"),
    ] {
        let refused = app
            .wfs
            .create_company(
                &tx,
                NewCompany {
                    name: name.into(),
                    external_ref: external_ref.map(str::to_owned),
                },
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&refused, Error::Invalid { .. }) && refused.to_string().contains(field),
            "{name:?} {external_ref:?}: {refused}"
        );
    }
}

#[tokio::test]
async fn a_company_without_an_admin_has_no_login_no_member_and_works_through_its_keys() {
    let app = TestApp::spawn().await;
    let company = provision(&app, "Acme", Some("tenant-7")).await;
    let key = key_for(&app, &company).await;

    let staff = app.get(&key, "/external/v1/staff").await;
    let role = app
        .post(&key, "/external/v1/job-roles", &json!({"title": "Nurse"}))
        .await;
    let roles = app.get(&key, "/external/v1/job-roles").await;
    let feed = app.get(&key, "/external/v1/workforce/resources").await;

    staff.assert_status(200);
    assert_eq!(staff.body, json!([]), "no member");
    role.assert_status(201);
    roles.assert_status(200);
    assert_eq!(
        roles.body.as_array().map(Vec::len),
        Some(1),
        "{}",
        roles.body
    );
    feed.assert_status(200);
    assert_eq!(
        feed.body["data"],
        json!([]),
        "no workforce resource: {}",
        feed.body
    );
    // Nobody can sign in to it: no wfs user was made.
    let sign_in = app
        .send(
            Req::new(Method::POST, "/external/v1/auth/signin")
                .json(&json!({"email": "admin@acme.test", "password": "whatever-pass"})),
        )
        .await;
    sign_in.assert_status(401);
}
