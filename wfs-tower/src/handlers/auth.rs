//! Portal sign-in and API key management (bearer-authenticated).

use super::Ctx;
use super::{Audit, Entry, Facts, Tag};
use crate::auth::Access;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{json, path_id};
use crate::reply::Reply;
use body::*;
use http::StatusCode;
use wfs_core::ApiKeyId;
use wfs_core::service::api_keys::{ApiKey, IssuedApiKey, NewApiKey, RevokedApiKey};
use wfs_core::service::auth::SignInResult;

/// What the audit log calls an API key.
const KEY: &str = "api_key";

/// This module's operations in the document.
pub(crate) const TAG: Tag = Tag {
    name: "Sign-in and API keys",
    description: "Portal sign-in (a one-hour bearer token) and the company's API keys, \
         managed with that token",
};

pub(crate) static ROUTES: [Entry; 5] = [
    route!(
        sign_in,
        __path_sign_in,
        Facts::write(Access::Public, Audit::Nothing)
    ),
    route!(
        list_api_keys,
        __path_list_api_keys,
        Facts::read(Access::Admin)
    ),
    route!(
        create_api_key,
        __path_create_api_key,
        Facts::write(Access::Admin, Audit::Created(KEY))
    ),
    route!(
        rotate_api_key,
        __path_rotate_api_key,
        Facts::write(Access::Admin, Audit::Id(KEY))
    ),
    route!(
        revoke_api_key,
        __path_revoke_api_key,
        Facts::write(Access::Admin, Audit::Id(KEY))
    ),
];

/// Sign in to the developer portal
///
/// Takes an email or username and the password, and answers a bearer token (JWT,
/// valid for one hour) for the `/auth/keys` routes. Only a company super admin
/// (privilege 1) may sign in.
#[utoipa::path(post, path = "/external/v1/auth/signin", tag = TAG.name,
    request_body = SignInRequest,
    responses(
        (status = 200, description = "Signed in", body = SignInResult),
        (status = 400, description = "Malformed JSON, or `email` or `password` missing or empty", body = ErrorBody),
        (status = 401, description = "`Invalid email or password` (the same text for an unknown user and a wrong password)", body = ErrorBody),
        (status = 403, description = "The user is not a super admin of any company", body = ErrorBody),
        (status = 429, description = "`Too many sign-in attempts`: more than 10 failures for this login from this address in 15 minutes, or more than 30 attempts from this address in a minute", body = ErrorBody,
            headers(("Retry-After" = String, description = "Seconds to wait before the next attempt"))),
        (status = 503, description = "`Too many sign-ins are being checked at once; retry shortly`: the server checks only a few passwords at once and lets only a few more wait; nothing was checked", body = ErrorBody,
            headers(("Retry-After" = String, description = "Seconds to wait before the next attempt"))),
    ))]
pub(crate) async fn sign_in(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let req: SignInRequest = json(ctx.body)?;
    if req.email.trim().is_empty() {
        return Err(ApiError::bad_request("email must not be empty"));
    }
    if req.password.is_empty() {
        return Err(ApiError::bad_request("password must not be empty"));
    }
    let audit = ctx
        .audit
        .ok_or_else(|| ApiError::internal("a sign-in runs with its request's audit trail"))?;
    let signed_in = ctx
        .wfs
        .sign_in_within(audit, &req.email, &req.password, ctx.client_ip)
        .await?;
    Ok(Reply::json(StatusCode::OK, &signed_in)?.no_store())
}

/// List API keys
///
/// Every key of the signed-in admin's company, revoked ones included (with
/// `status: "revoked"`). Secrets are never listed.
#[utoipa::path(get, path = "/external/v1/auth/keys", tag = TAG.name,
    responses((status = 200, description = "The company's API keys", body = [ApiKey])))]
pub(crate) async fn list_api_keys(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let keys = ctx.wfs.list_api_keys(ctx.admin()?).await?;
    Reply::json(StatusCode::OK, &keys)
}

/// Create an API key
///
/// The client secret is in this answer only: it is stored as a hash and can never be
/// shown again (an idempotent replay answers `clientSecret: null`). A lost secret is
/// replaced by rotating the key.
#[utoipa::path(post, path = "/external/v1/auth/keys", tag = TAG.name,
    request_body = CreateApiKeyRequest,
    responses(
        (status = 201, description = "The new key with its secret", body = IssuedApiKey),
        (status = 400, description = "Malformed JSON, a missing `name`, an unknown scope, a CIDR range or other non-address in `allowedIps`, or an `expiresAt` not in the future", body = ErrorBody),
    ))]
pub(crate) async fn create_api_key(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let input = NewApiKey::try_from(json::<CreateApiKeyRequest>(ctx.body)?)?;
    let issued = ctx
        .wfs
        .create_api_key(ctx.tx()?, ctx.admin()?, input)
        .await?;
    Ok(Reply::json(StatusCode::CREATED, &issued)?
        .created(issued.id)
        .storing(&issued.redacted())?
        .no_store())
}

/// Rotate an API key's secret
///
/// The key keeps its client ID; the old secret stops working at once.
#[utoipa::path(post, path = "/external/v1/auth/keys/{id}/rotate", tag = TAG.name,
    params(("id" = String, Path, description = "API key record ID (`id` in the key list)")),
    responses(
        (status = 200, description = "The key with its new secret", body = IssuedApiKey),
        (status = 404, description = "`API key not found` (unknown or another company's)", body = ErrorBody),
        (status = 409, description = "`API key is revoked`", body = ErrorBody),
    ))]
pub(crate) async fn rotate_api_key(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id: ApiKeyId = path_id(ctx.id(), "API key")?;
    let issued = ctx.wfs.rotate_api_key(ctx.tx()?, ctx.admin()?, id).await?;
    Ok(Reply::json(StatusCode::OK, &issued)?
        .storing(&issued.redacted())?
        .no_store())
}

/// Revoke an API key
///
/// Permanent: every later request with the key gets 401. The key stays listed with
/// `status: "revoked"`.
#[utoipa::path(post, path = "/external/v1/auth/keys/{id}/revoke", tag = TAG.name,
    params(("id" = String, Path, description = "API key record ID (`id` in the key list)")),
    responses(
        (status = 200, description = "The key is revoked", body = RevokedApiKey),
        (status = 404, description = "`API key not found` (unknown or another company's)", body = ErrorBody),
        (status = 409, description = "`API key is revoked`", body = ErrorBody),
    ))]
pub(crate) async fn revoke_api_key(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id: ApiKeyId = path_id(ctx.id(), "API key")?;
    let revoked = ctx.wfs.revoke_api_key(ctx.tx()?, ctx.admin()?, id).await?;
    Reply::json(StatusCode::OK, &RevokedApiKey::from(&revoked))
}

pub(crate) mod body {
    use crate::dto::limits::{Bounded, Line};
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
}
