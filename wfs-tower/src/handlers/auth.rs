//! Portal sign-in and API key management (bearer-authenticated).

use super::Ctx;
use crate::auth::Access;
use crate::dto::auth::*;
use crate::error::ApiError;
use crate::extract::{date_time, json, path_id};
use crate::reply::Reply;
use crate::router::Route;
use http::StatusCode;
use wfs_core::ApiKeyId;
use wfs_core::service::api_keys::NewApiKey;

pub(crate) static ROUTES: [Route; 5] = [
    route!(POST "/external/v1/auth/signin", Access::Public, sign_in),
    route!(GET "/external/v1/auth/keys", Access::Admin, list_api_keys),
    route!(POST "/external/v1/auth/keys", Access::Admin, create_api_key),
    route!(POST "/external/v1/auth/keys/{id}/rotate", Access::Admin, rotate_api_key),
    route!(POST "/external/v1/auth/keys/{id}/revoke", Access::Admin, revoke_api_key),
];

pub(crate) async fn sign_in(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let req: SignInRequest = json(ctx.body)?;
    if req.email.trim().is_empty() {
        return Err(ApiError::bad_request("email must not be empty"));
    }
    if req.password.is_empty() {
        return Err(ApiError::bad_request("password must not be empty"));
    }
    let signed_in = ctx.wfs.sign_in(&req.email, &req.password).await?;
    Reply::json(StatusCode::OK, &SignInResponse::from(signed_in))
}

pub(crate) async fn list_api_keys(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let keys = ctx.wfs.list_api_keys(ctx.admin()?).await?;
    Reply::json(
        StatusCode::OK,
        &keys.into_iter().map(ApiKeyItem::from).collect::<Vec<_>>(),
    )
}

pub(crate) async fn create_api_key(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let req: CreateApiKeyRequest = json(ctx.body)?;
    let expires_at = req
        .expires_at
        .as_deref()
        .map(|v| date_time("expiresAt", v))
        .transpose()?;
    let input = NewApiKey {
        name: req.name,
        scopes: req.scopes,
        allowed_ips: req.allowed_ips.unwrap_or_default(),
        expires_at,
    };
    let issued = IssuedKeyResponse::from(
        ctx.wfs
            .create_api_key(ctx.tx()?, ctx.admin()?, input)
            .await?,
    );
    Reply::json(StatusCode::CREATED, &issued)?.storing(&issued.redacted())
}

pub(crate) async fn rotate_api_key(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id: ApiKeyId = path_id(ctx.id(), "API key")?;
    let issued =
        IssuedKeyResponse::from(ctx.wfs.rotate_api_key(ctx.tx()?, ctx.admin()?, id).await?);
    Reply::json(StatusCode::OK, &issued)?.storing(&issued.redacted())
}

pub(crate) async fn revoke_api_key(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id: ApiKeyId = path_id(ctx.id(), "API key")?;
    let revoked = ctx.wfs.revoke_api_key(ctx.tx()?, ctx.admin()?, id).await?;
    Reply::json(
        StatusCode::OK,
        &RevokedKeyResponse {
            id: revoked.id.to_string(),
            status: revoked.status.as_str(),
        },
    )
}
