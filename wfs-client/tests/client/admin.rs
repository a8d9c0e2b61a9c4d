//! The admin client: sign-in, then key management with a bearer token.

use serde_json::json;
use wfs_client::{AdminClient, types};
use wiremock::matchers::{body_json, header, header_exists, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TOKEN: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJl";

fn issued(secret: &str) -> ResponseTemplate {
    ResponseTemplate::new(201).set_body_json(json!({
        "id": "key-1", "clientId": "api_abc", "clientSecret": secret,
        "scopes": ["workforce:read", "availability:read"]
    }))
}

#[tokio::test]
async fn sign_in_then_manage_keys_with_the_bearer_token() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/external/v1/auth/signin"))
        .and(body_json(
            json!({"email": "admin@example.com", "password": "hunter2!"}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "accessToken": TOKEN,
            "user": {"id": "u1", "firstName": "A", "lastName": "B", "email": "admin@example.com", "mustChangePassword": false},
            "activeCompany": {"id": "c1", "name": "Acme"},
            "companies": [{"id": "c1", "name": "Acme", "privilege": 1}]
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/external/v1/auth/keys"))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{
            "id": "key-1", "name": "ci", "clientId": "api_abc", "status": "active",
            "scopes": ["workforce:read"], "allowedIps": [], "expiresAt": null,
            "lastUsedAt": null, "createdOn": "2026-01-01T00:00:00Z"
        }])))
        .expect(1)
        .mount(&server)
        .await;
    // The first create attempt fails with 503; the retry must reuse its key.
    Mock::given(method("POST"))
        .and(path("/external/v1/auth/keys"))
        .respond_with(
            ResponseTemplate::new(503)
                .set_body_json(json!({"error": {"code": 503, "message": "Database unavailable"}})),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/external/v1/auth/keys"))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .and(header_exists("idempotency-key"))
        .respond_with(issued("sec_new"))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/external/v1/auth/keys/key-1/revoke"))
        .and(header_exists("idempotency-key"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"id": "key-1", "status": "revoked"})),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/external/v1/auth/keys/key-1/rotate"))
        .respond_with(
            ResponseTemplate::new(409)
                .set_body_json(json!({"error": {"code": 409, "message": "API key is revoked"}})),
        )
        .mount(&server)
        .await;

    let (admin, signed_in) = AdminClient::sign_in(server.uri(), "admin@example.com", "hunter2!")
        .await
        .unwrap();
    assert_eq!(signed_in.active_company.name, "Acme");
    assert!(!format!("{admin:?}").contains(TOKEN));
    assert!(!format!("{:?}", admin.generated()).contains(TOKEN));

    let keys = admin.list_api_keys().await.unwrap();
    assert_eq!(keys[0].status, types::ApiKeyStatus::Active);

    let request = types::CreateApiKeyRequest {
        name: "ci".into(),
        scopes: None,
        allowed_ips: None,
        expires_at: None,
    };
    let key = admin.create_api_key(&request).await.unwrap();
    assert_eq!(key.client_secret.as_deref(), Some("sec_new"));

    let revoked = admin.revoke_api_key("key-1").await.unwrap();
    assert_eq!(revoked.status, types::ApiKeyStatus::Revoked);
    let err = admin.rotate_api_key("key-1").await.unwrap_err();
    assert_eq!(err.status(), Some(409));
    assert_eq!(err.message(), Some("API key is revoked"));

    let requests = server.received_requests().await.unwrap();
    let creates: Vec<_> = requests
        .iter()
        .filter(|r| r.method.as_str() == "POST" && r.url.path() == "/external/v1/auth/keys")
        .map(|r| r.headers.get("idempotency-key").unwrap().clone())
        .collect();
    assert_eq!(creates.len(), 2);
    assert_eq!(creates[0], creates[1]);
    // Sign-in carries no credentials of any kind.
    assert!(requests[0].headers.get("authorization").is_none());
    assert!(requests[0].headers.get("x-api-key").is_none());
    server.verify().await;
}

#[tokio::test]
async fn a_wrong_password_is_the_servers_401() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/external/v1/auth/signin"))
        .respond_with(
            ResponseTemplate::new(401).set_body_json(
                json!({"error": {"code": 401, "message": "Invalid email or password"}}),
            ),
        )
        .expect(1)
        .mount(&server)
        .await;
    let err = AdminClient::sign_in(server.uri(), "admin@example.com", "nope")
        .await
        .unwrap_err();
    assert!(err.is_unauthorized());
    assert_eq!(err.message(), Some("Invalid email or password"));
}

#[tokio::test]
async fn from_token_sends_it() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/external/v1/auth/keys"))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .expect(1)
        .mount(&server)
        .await;
    let admin = AdminClient::from_token(server.uri(), TOKEN).unwrap();
    assert!(admin.list_api_keys().await.unwrap().is_empty());
    server.verify().await;
}
