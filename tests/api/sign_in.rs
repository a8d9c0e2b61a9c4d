//! `POST /external/v1/auth/signin`.

use crate::helpers::*;
use http::Method;
use serde_json::json;
use wfs_core::persistence::entity::{membership, user};
use wfs_core::sea_orm::{ActiveModelTrait, Set};
use wfs_core::service::accounts::hash_password;

fn signin(body: serde_json::Value) -> Req {
    Req::new(Method::POST, "/external/v1/auth/signin").json(&body)
}

#[tokio::test]
async fn sign_in_returns_a_token_the_user_and_the_companies() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme Care").await;

    let res = app
        .send(signin(json!({"email": acme.email, "password": PASSWORD})))
        .await;

    res.assert_status(200);
    assert!(
        res.body["accessToken"].as_str().unwrap().split('.').count() == 3,
        "a JWT"
    );
    assert_eq!(res.body["user"]["email"], acme.email.as_str());
    assert_eq!(res.body["user"]["firstName"], "Ada");
    assert_eq!(res.body["user"]["lastName"], "Admin");
    assert_eq!(res.body["user"]["mustChangePassword"], false);
    assert!(res.body["user"]["id"].is_string());
    assert_eq!(
        res.body["activeCompany"],
        json!({"id": acme.id, "name": "Acme Care"})
    );
    assert_eq!(
        res.body["companies"],
        json!([{"id": acme.id, "name": "Acme Care", "privilege": 1}])
    );
}

#[tokio::test]
async fn sign_in_ignores_the_case_of_the_email() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let res = app
        .send(signin(
            json!({"email": acme.email.to_uppercase(), "password": PASSWORD}),
        ))
        .await;
    res.assert_status(200);
}

#[tokio::test]
async fn wrong_password_and_unknown_user_get_the_same_401() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;

    let wrong = app
        .send(signin(
            json!({"email": acme.email, "password": "not-the-password"}),
        ))
        .await;
    let unknown = app
        .send(signin(
            json!({"email": "nobody@nowhere.test", "password": PASSWORD}),
        ))
        .await;

    wrong.assert_error(401, "Invalid email or password");
    unknown.assert_error(401, "Invalid email or password");
}

#[tokio::test]
async fn a_user_who_is_no_companys_super_admin_gets_403() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    // A plain member (privilege 3) with a password, as a host application may create.
    let now = app.wfs.now();
    let user_id = uuid::Uuid::now_v7();
    user::ActiveModel {
        id: Set(user_id),
        email: Set("member@acme.test".into()),
        user_name: Set(Some("member1".into())),
        first_name: Set("Mem".into()),
        last_name: Set("Ber".into()),
        phone: Set(None),
        gender: Set(None),
        country_id: Set(None),
        password_hash: Set(Some(hash_password(PASSWORD).unwrap())),
        must_change_password: Set(false),
        sign_in_failures: Set(0),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(app.wfs.store().conn())
    .await
    .unwrap();
    membership::ActiveModel {
        id: Set(uuid::Uuid::now_v7()),
        company_id: Set(acme.id.parse().unwrap()),
        user_id: Set(user_id),
        branch_id: Set(None),
        job_role_id: Set(None),
        privilege: Set(3),
        status: Set(1),
        resource_version: Set(100),
        updated_at: Set(now),
        created_at: Set(now),
    }
    .insert(app.wfs.store().conn())
    .await
    .unwrap();

    let by_email = app
        .send(signin(
            json!({"email": "member@acme.test", "password": PASSWORD}),
        ))
        .await;
    let by_username = app
        .send(signin(json!({"email": "MEMBER1", "password": PASSWORD})))
        .await;

    by_email.assert_status(403);
    assert!(!by_email.error_message().is_empty());
    by_username.assert_status(403);
}

#[tokio::test]
async fn sign_in_with_missing_fields_or_bad_json_is_400() {
    let app = TestApp::spawn().await;
    let missing = app.send(signin(json!({"email": "a@b.test"}))).await;
    missing.assert_status(400);
    assert!(
        missing.error_message().contains("password"),
        "{}",
        missing.error_message()
    );

    let wrong_type = app.send(signin(json!({"email": 5, "password": "x"}))).await;
    wrong_type.assert_status(400);
    assert!(wrong_type.error_message().contains("email"));

    let garbage = app
        .send(Req::new(Method::POST, "/external/v1/auth/signin").raw("{not json"))
        .await;
    garbage.assert_status(400);
}
