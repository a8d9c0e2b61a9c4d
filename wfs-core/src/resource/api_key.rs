//! An API key: its wire forms, as `GET`, `POST /auth/keys` and rotate and revoke
//! answer them. Never the secret, but in the one answer that issues it.

use crate::domain::credentials::{ClientSecret, IpAllowlist};
use crate::domain::scope::ScopeSet;
use crate::ids::ApiKeyId;
use chrono::{DateTime, Utc};
use serde::{Serialize, Serializer};

// The document has no description for this schema, nor for `status` and `scopes`,
// so their docs are written as `#[doc = concat!(..)]`, which the schema derive does
// not read.
#[doc = concat!("An API key as listed: never the secret.")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApiKey {
    /// Key record ID; used in the rotate and revoke paths.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: ApiKeyId,
    /// Descriptive name.
    pub name: String,
    /// Prefixed `api_`; sent as `x-api-key`.
    #[cfg_attr(
        feature = "openapi",
        schema(example = "api_3kTq9vXb2LmN8pQr5sTu7wYz1aBcDeFg")
    )]
    pub client_id: String,
    #[doc = concat!("Its state now.")]
    pub status: ApiKeyStatus,
    #[doc = concat!("What it may do.")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::domain::scope::Scope>))]
    pub scopes: ScopeSet,
    /// Literal IPv4/IPv6 addresses the key may be used from; empty means any.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>))]
    pub allowed_ips: IpAllowlist,
    /// Null means no expiry.
    pub expires_at: Option<DateTime<Utc>>,
    /// Null until the key's first use; refreshed at most once a minute.
    pub last_used_at: Option<DateTime<Utc>>,
    /// Creation time.
    pub created_on: DateTime<Utc>,
}

/// `expired` is computed from `expiresAt`; revoked keys stay listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ApiKeyStatus {
    /// Usable.
    Active,
    /// Permanently disabled by revoke.
    Revoked,
    /// `expiresAt` has passed (computed, never stored).
    Expired,
}

/// Create and rotate answer: the only responses that carry the secret.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct IssuedApiKey {
    /// Key record ID.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: ApiKeyId,
    /// Prefixed `api_`; unchanged by rotation.
    pub client_id: String,
    /// Prefixed `sec_`; sent as `x-api-secret`. Shown in this answer only: an
    /// idempotent replay of the request answers null.
    #[serde(serialize_with = "exposed")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = Option<String>, example = "sec_q8Jx0vB3nR5tW7yZ9aC2eG4iK6mO8qS0uW2yA4cE6gI")
    )]
    pub client_secret: Option<ClientSecret>,
    #[doc = concat!("What it may do.")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::domain::scope::Scope>))]
    pub scopes: ScopeSet,
}

impl IssuedApiKey {
    /// The secret as it is sent (`x-api-secret`); empty in a redacted answer.
    pub fn secret(&self) -> &str {
        self.client_secret.as_ref().map_or("", ClientSecret::expose)
    }

    /// The same answer without the secret: what an idempotent replay returns, since
    /// the secret is never stored anywhere.
    #[must_use]
    pub fn redacted(&self) -> Self {
        Self {
            client_secret: None,
            ..self.clone()
        }
    }
}

/// The answer's secret, as it is shown this once.
fn exposed<S: Serializer>(secret: &Option<ClientSecret>, s: S) -> Result<S::Ok, S::Error> {
    secret.as_ref().map(ClientSecret::expose).serialize(s)
}

#[doc = concat!("The revoke answer: the key's id and its new status.")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RevokedApiKey {
    #[doc = concat!("Key record ID.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: ApiKeyId,
    /// Always `revoked`.
    pub status: ApiKeyStatus,
}

impl From<&ApiKey> for RevokedApiKey {
    fn from(key: &ApiKey) -> Self {
        Self {
            id: key.id,
            status: key.status,
        }
    }
}
