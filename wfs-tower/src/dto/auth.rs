use super::limits::{Bounded, Line};
use crate::error::ApiError;
use crate::extract::date_time;
use serde::Deserialize;
use utoipa::ToSchema;
use wfs_core::service::api_keys::NewApiKey;

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct SignInRequest {
    /// Email or username.
    #[schema(value_type = String, min_length = 1, max_length = 256, example = "admin@example.com")]
    pub(crate) email: Line,
    #[schema(value_type = String, min_length = 1, max_length = 256)]
    pub(crate) password: Line,
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
    #[schema(value_type = Option<Vec<wfs_core::domain::scope::Scope>>, max_items = 16)]
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
