//! What several modules' mock-server tests share.

use serde_json::json;
use wfs_client::WfsClient;
use wiremock::{MockServer, ResponseTemplate};

/// A client of `server` with a test key pair and the default retry policy.
pub(crate) fn client(server: &MockServer) -> WfsClient {
    WfsClient::new(server.uri(), "api_test", "sec_test").unwrap()
}

/// An error answer in the API's shape: `{"error": {"code", "message"}}`.
pub(crate) fn error(status: u16, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"error": {"code": status, "message": message}}))
}
