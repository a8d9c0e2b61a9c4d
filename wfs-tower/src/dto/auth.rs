use super::limits::{Bounded, Line};
use crate::error::ApiError;
use crate::extract::date_time;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use wfs_core::service::api_keys::NewApiKey;
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
