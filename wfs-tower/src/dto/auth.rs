use super::limits::{Bounded, Line};
use crate::error::ApiError;
use crate::extract::date_time;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use wfs_core::service::api_keys::{ApiKeyInfo, IssuedKey, KeyStatus, NewApiKey};
use wfs_core::service::auth::SignedIn;

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct SignInRequest {
    /// Email or username.
    #[schema(value_type = String, min_length = 1, max_length = 256, example = "admin@example.com")]
    pub(crate) email: Line,
    #[schema(value_type = String, min_length = 1, max_length = 256)]
    pub(crate) password: Line,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SignInResult {
    /// Bearer token (JWT, valid for one hour) for the `/auth/keys` routes.
    access_token: String,
    user: SignedInUser,
    active_company: CompanyRef,
    companies: Vec<CompanyAccess>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SignedInUser {
    id: String,
    first_name: String,
    last_name: String,
    email: String,
    /// When true the admin should change the password before proceeding.
    must_change_password: bool,
}

#[derive(Debug, Serialize, ToSchema)]
struct CompanyRef {
    id: String,
    name: String,
}

#[derive(Debug, Serialize, ToSchema)]
struct CompanyAccess {
    id: String,
    name: String,
    /// 1 = Super Admin, 2 = Admin, 3 = Member.
    #[schema(minimum = 1, maximum = 3)]
    privilege: i16,
}

impl From<wfs_core::service::auth::CompanyAccess> for CompanyAccess {
    fn from(c: wfs_core::service::auth::CompanyAccess) -> Self {
        Self {
            id: c.id.to_string(),
            name: c.name,
            privilege: c.privilege.code(),
        }
    }
}

impl From<SignedIn> for SignInResult {
    fn from(s: SignedIn) -> Self {
        Self {
            access_token: s.access_token,
            user: SignedInUser {
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
            companies: s.companies.into_iter().map(CompanyAccess::from).collect(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApiKey {
    /// Key record ID; used in the rotate and revoke paths.
    id: String,
    /// Descriptive name.
    name: String,
    /// Prefixed `api_`; sent as `x-api-key`.
    #[schema(example = "api_3kTq9vXb2LmN8pQr5sTu7wYz1aBcDeFg")]
    client_id: String,
    status: ApiKeyStatus,
    #[schema(value_type = Vec<Scope>)]
    scopes: Vec<String>,
    /// Literal IPv4/IPv6 addresses the key may be used from; empty means any.
    allowed_ips: Vec<String>,
    /// Null means no expiry.
    expires_at: Option<DateTime<Utc>>,
    /// Null until the key's first use; refreshed at most once a minute.
    last_used_at: Option<DateTime<Utc>>,
    /// Creation time.
    created_on: DateTime<Utc>,
}

/// `expired` is computed from `expiresAt`; revoked keys stay listed.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ApiKeyStatus {
    Active,
    Revoked,
    Expired,
}

impl From<KeyStatus> for ApiKeyStatus {
    fn from(s: KeyStatus) -> Self {
        match s {
            KeyStatus::Active => Self::Active,
            KeyStatus::Revoked => Self::Revoked,
            KeyStatus::Expired => Self::Expired,
        }
    }
}

/// What a key may do. GET resource routes need `workforce:read`; POST, PATCH and
/// DELETE resource routes `workforce:write`; `/workforce/*` `availability:read`.
/// Schema only: the names on the wire come from the core's `ScopeSet`.
#[derive(Debug, Serialize, ToSchema)]
#[allow(dead_code)]
pub(crate) enum Scope {
    #[serde(rename = "workforce:read")]
    WorkforceRead,
    #[serde(rename = "availability:read")]
    AvailabilityRead,
    #[serde(rename = "workforce:write")]
    WorkforceWrite,
    #[serde(rename = "webhooks:manage")]
    WebhooksManage,
}

impl From<ApiKeyInfo> for ApiKey {
    fn from(k: ApiKeyInfo) -> Self {
        Self {
            id: k.id.to_string(),
            name: k.name,
            client_id: k.client_id,
            status: k.status.into(),
            scopes: k.scopes.names(),
            allowed_ips: k.allowed_ips.to_strings(),
            expires_at: k.expires_at,
            last_used_at: k.last_used_at,
            created_on: k.created_at,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateApiKeyRequest {
    /// Descriptive name.
    #[schema(value_type = String, min_length = 1, max_length = 200)]
    pub(crate) name: Line,
    /// Default (absent, null or empty): `workforce:read` and `availability:read`.
    /// Unknown names are 400.
    #[serde(default)]
    #[schema(value_type = Option<Vec<Scope>>, max_items = 16)]
    pub(crate) scopes: Option<Bounded<Line, 16>>,
    /// Literal IPv4/IPv6 addresses; CIDR ranges are not accepted.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, max_items = 100)]
    pub(crate) allowed_ips: Option<Bounded<Line, 100>>,
    /// A future time (years 0001-9999); null or absent means no expiry.
    #[serde(default)]
    #[schema(value_type = Option<DateTime<Utc>>, max_length = 256)]
    pub(crate) expires_at: Option<Line>,
}

impl TryFrom<CreateApiKeyRequest> for NewApiKey {
    type Error = ApiError;

    fn try_from(r: CreateApiKeyRequest) -> Result<Self, ApiError> {
        Ok(Self {
            name: r.name.into(),
            scopes: r.scopes.map(Bounded::into_strings),
            allowed_ips: r.allowed_ips.map(Bounded::into_strings).unwrap_or_default(),
            expires_at: r
                .expires_at
                .as_deref()
                .map(|v| date_time("expiresAt", v))
                .transpose()?,
        })
    }
}

/// Create and rotate answer: the only responses that carry the secret.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct IssuedApiKey {
    /// Key record ID.
    id: String,
    /// Prefixed `api_`; unchanged by rotation.
    client_id: String,
    /// Prefixed `sec_`; sent as `x-api-secret`. Shown in this answer only: an
    /// idempotent replay of the request answers null.
    #[schema(example = "sec_q8Jx0vB3nR5tW7yZ9aC2eG4iK6mO8qS0uW2yA4cE6gI")]
    client_secret: Option<String>,
    #[schema(value_type = Vec<Scope>)]
    scopes: Vec<String>,
}

impl IssuedApiKey {
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

impl From<IssuedKey> for IssuedApiKey {
    fn from(k: IssuedKey) -> Self {
        Self {
            id: k.id.to_string(),
            client_id: k.client_id,
            client_secret: Some(k.client_secret.expose().to_owned()),
            scopes: k.scopes.names(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RevokedApiKey {
    pub(crate) id: String,
    /// Always `revoked`.
    pub(crate) status: ApiKeyStatus,
}
