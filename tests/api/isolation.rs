//! Another company's ids answer exactly as unknown ids.

use crate::helpers::*;
use http::Method;
use serde_json::json;

#[tokio::test]
async fn a_companys_key_never_reaches_another_companys_job_roles() {
    let app = TestApp::spawn().await;
    let acme = app.key(&app.company("Acme").await).await;
    let globex = app.key(&app.company("Globex").await).await;
    let acme_role = app.create_role(&acme, "Acme Nurse").await;
    app.create_role(&globex, "Globex Porter").await;

    let listed = app.get(&globex, "/external/v1/job-roles").await;
    assert_eq!(listed.body.as_array().unwrap().len(), 1);
    assert_eq!(listed.body[0]["title"], "Globex Porter");

    let path = format!("/external/v1/job-roles/{acme_role}");
    app.patch(&globex, &path, &json!({"title": "Stolen"}))
        .await
        .assert_error(404, "Job role not found");
    app.delete(&globex, &path)
        .await
        .assert_error(404, "Job role not found");
    assert_eq!(
        app.get(&acme, "/external/v1/job-roles").await.body[0]["title"],
        "Acme Nurse"
    );
}

#[tokio::test]
async fn an_admin_never_sees_or_touches_another_companys_keys() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let globex = app.company("Globex").await;
    let acme_key = app.key(&acme).await;
    app.key(&globex).await;

    let listed = app.list_keys(&globex).await;
    assert_eq!(listed.len(), 1);
    assert_ne!(listed[0]["id"], acme_key.id.as_str());

    for action in ["rotate", "revoke"] {
        app.send(
            Req::new(
                Method::POST,
                &format!("/external/v1/auth/keys/{}/{action}", acme_key.id),
            )
            .bearer(&globex.token),
        )
        .await
        .assert_error(404, "API key not found");
    }
    app.get(&acme_key, "/external/v1/job-roles")
        .await
        .assert_status(200);
}
