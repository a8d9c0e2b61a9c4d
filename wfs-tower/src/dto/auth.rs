use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use wfs_core::service::api_keys::{ApiKeyInfo, IssuedKey};
use wfs_core::service::auth::{CompanyAccess, SignedIn};

#[derive(Debug, Deserialize)]
pub(crate) struct SignInRequest {
    /// Email or username.
    pub(crate) email: String,
    pub(crate) password: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SignInResponse {
    access_token: String,
    user: SignInUser,
    active_company: CompanyRef,
    companies: Vec<CompanyItem>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SignInUser {
    id: String,
    first_name: String,
    last_name: String,
    email: String,
    must_change_password: bool,
}

#[derive(Debug, Serialize)]
struct CompanyRef {
    id: String,
    name: String,
}

#[derive(Debug, Serialize)]
struct CompanyItem {
    id: String,
    name: String,
    privilege: i16,
}

impl From<CompanyAccess> for CompanyItem {
    fn from(c: CompanyAccess) -> Self {
        Self {
            id: c.id.to_string(),
            name: c.name,
            privilege: c.privilege,
        }
    }
}

impl From<SignedIn> for SignInResponse {
    fn from(s: SignedIn) -> Self {
        Self {
            access_token: s.access_token,
            user: SignInUser {
                id: s.user_id.to_string(),
                first_name: s.first_name,
                last_name: s.last_name,
                email: s.email,
                must_change_password: s.must_change_password,
            },
            active_company: CompanyRef {
                id: s.active_company.id.to_string(),
                name: s.active_company.name,
            },
            companies: s.companies.into_iter().map(CompanyItem::from).collect(),
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApiKeyItem {
    id: String,
    name: String,
    client_id: String,
    status: &'static str,
    scopes: Vec<String>,
    allowed_ips: Vec<String>,
    expires_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
    created_on: DateTime<Utc>,
}

impl From<ApiKeyInfo> for ApiKeyItem {
    fn from(k: ApiKeyInfo) -> Self {
        Self {
            id: k.id.to_string(),
            name: k.name,
            client_id: k.client_id,
            status: k.status.as_str(),
            scopes: k.scopes.names(),
            allowed_ips: k.allowed_ips.to_strings(),
            expires_at: k.expires_at,
            last_used_at: k.last_used_at,
            created_on: k.created_at,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateApiKeyRequest {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) scopes: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) allowed_ips: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) expires_at: Option<String>,
}

/// Create and rotate answer: the only responses that carry the secret.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct IssuedKeyResponse {
    id: String,
    client_id: String,
    client_secret: Option<String>,
    scopes: Vec<String>,
}

impl IssuedKeyResponse {
    /// The same answer without the secret: what an idempotent replay returns, since
    /// the secret is never stored anywhere.
    pub(crate) fn redacted(&self) -> Self {
        Self {
            id: self.id.clone(),
            client_id: self.client_id.clone(),
            client_secret: None,
            scopes: self.scopes.clone(),
        }
    }
}

impl From<IssuedKey> for IssuedKeyResponse {
    fn from(k: IssuedKey) -> Self {
        Self {
            id: k.id.to_string(),
            client_id: k.client_id,
            client_secret: Some(k.client_secret.expose().to_owned()),
            scopes: k.scopes.names(),
        }
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct RevokedKeyResponse {
    pub(crate) id: String,
    pub(crate) status: &'static str,
}
