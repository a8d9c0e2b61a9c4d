//! Thin handlers: input from [`Ctx`], one core operation, a DTO out.
//!
//! Each module declares its routes next to its handlers, so a route and the code
//! behind it cannot drift apart; [`routes`] merges them and [`dispatch`] calls them.

pub(crate) mod auth;
pub(crate) mod job_roles;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::reply::Reply;
use crate::router::Route;
use wfs_core::sea_orm::DatabaseTransaction;
use wfs_core::{AdminPrincipal, KeyPrincipal, Wfs};

/// Every operation; the name is also the OpenAPI `operationId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)]
pub(crate) enum Op {
    SignIn,
    ListApiKeys,
    CreateApiKey,
    RotateApiKey,
    RevokeApiKey,
    ListJobRoles,
    CreateJobRole,
    UpdateJobRole,
    DeleteJobRole,
}

/// Everything a handler may look at.
pub(crate) struct Ctx<'a> {
    pub(crate) wfs: &'a Wfs,
    pub(crate) caller: &'a Caller,
    /// The `{id}` path parameter, raw.
    pub(crate) id: Option<&'a str>,
    pub(crate) body: &'a [u8],
    /// The write transaction; `Some` exactly for writing routes.
    pub(crate) tx: Option<&'a DatabaseTransaction>,
}

impl Ctx<'_> {
    pub(crate) fn key(&self) -> Result<&KeyPrincipal, ApiError> {
        match self.caller {
            Caller::Key(k) => Ok(k),
            _ => Err(ApiError::internal("route expected an API key caller")),
        }
    }

    pub(crate) fn admin(&self) -> Result<AdminPrincipal, ApiError> {
        match self.caller {
            Caller::Admin(a) => Ok(*a),
            _ => Err(ApiError::internal("route expected an admin caller")),
        }
    }

    pub(crate) fn tx(&self) -> Result<&DatabaseTransaction, ApiError> {
        self.tx
            .ok_or_else(|| ApiError::internal("write route ran without a transaction"))
    }

    pub(crate) fn id(&self) -> &str {
        self.id.unwrap_or_default()
    }
}

/// The whole route table.
pub(crate) fn routes() -> impl Iterator<Item = &'static Route> {
    auth::ROUTES.iter().chain(job_roles::ROUTES.iter())
}

pub(crate) async fn dispatch(op: Op, ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    match op {
        Op::SignIn => auth::sign_in(ctx).await,
        Op::ListApiKeys => auth::list_api_keys(ctx).await,
        Op::CreateApiKey => auth::create_api_key(ctx).await,
        Op::RotateApiKey => auth::rotate_api_key(ctx).await,
        Op::RevokeApiKey => auth::revoke_api_key(ctx).await,
        Op::ListJobRoles => job_roles::list_job_roles(ctx).await,
        Op::CreateJobRole => job_roles::create_job_role(ctx).await,
        Op::UpdateJobRole => job_roles::update_job_role(ctx).await,
        Op::DeleteJobRole => job_roles::delete_job_role(ctx).await,
    }
}
