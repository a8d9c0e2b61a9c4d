//! Thin handlers: input from [`Ctx`], one core operation, a DTO out.
//!
//! Each module declares its routes next to its handlers (with [`route!`]), so a route
//! and the code behind it cannot drift apart; [`routes`] merges the tables.

/// A route table entry: `route!(GET "/path", access, handler_fn)`, optionally with a
/// body limit, or marked `undocumented` (left out of the OpenAPI document: the API
/// reference's page and assets, which are not operations of the API). The handler's
/// name becomes the `operationId`.
macro_rules! route {
    (@entry $method:ident $path:literal, $access:expr, $handler:ident, $limit:expr, $documented:literal) => {
        crate::handlers::Route {
            operation_id: stringify!($handler),
            method: http::Method::$method,
            path: $path,
            access: $access,
            body_limit: $limit,
            handler: {
                #[allow(deprecated)] // deprecated operations are still served
                fn boxed<'a>(ctx: &'a crate::handlers::Ctx<'a>) -> crate::handlers::BoxFuture<'a> {
                    Box::pin($handler(ctx))
                }
                boxed
            },
            documented: $documented,
        }
    };
    ($method:ident $path:literal, $access:expr, $handler:ident, undocumented) => {
        route!(@entry $method $path, $access, $handler, crate::handlers::BODY_LIMIT, false)
    };
    ($method:ident $path:literal, $access:expr, $handler:ident) => {
        route!(@entry $method $path, $access, $handler, crate::handlers::BODY_LIMIT, true)
    };
    ($method:ident $path:literal, $access:expr, $handler:ident, $limit:expr) => {
        route!(@entry $method $path, $access, $handler, $limit, true)
    };
}

pub(crate) mod auth;
mod docs;
pub(crate) mod job_roles;
pub(crate) mod locations;
pub(crate) mod meta;
mod route;
pub(crate) mod schedules;
pub(crate) mod shifts;
pub(crate) mod staff;
pub(crate) mod webhooks;
pub(crate) mod workforce;

pub(crate) use route::{BODY_LIMIT, BULK_BODY_LIMIT, BoxFuture, Route};

use crate::auth::Caller;
use crate::error::ApiError;
use wfs_core::sea_orm::DatabaseTransaction;
use wfs_core::{AdminPrincipal, KeyPrincipal, Wfs};

/// Everything a handler may look at.
pub(crate) struct Ctx<'a> {
    pub(crate) wfs: &'a Wfs,
    pub(crate) caller: &'a Caller,
    /// The `{id}` path parameter, raw.
    pub(crate) id: Option<&'a str>,
    /// The second path parameter (`{deliveryId}`), raw.
    pub(crate) sub_id: Option<&'a str>,
    /// The raw query string.
    pub(crate) query: Option<&'a str>,
    /// The request's headers (conditional requests on the API reference's assets).
    pub(crate) headers: &'a http::HeaderMap,
    pub(crate) body: &'a [u8],
    /// The OpenAPI document as this service serves it (its `servers` names the
    /// mount prefix).
    pub(crate) document: &'a bytes::Bytes,
    /// The caller's address (see `Authenticator::client_ip`), for the sign-in throttle; set
    /// on public routes only.
    pub(crate) client_ip: Option<std::net::IpAddr>,
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

    pub(crate) fn sub_id(&self) -> &str {
        self.sub_id.unwrap_or_default()
    }
}

/// The whole route table.
pub(crate) fn routes() -> impl Iterator<Item = &'static Route> {
    auth::ROUTES
        .iter()
        .chain(job_roles::ROUTES.iter())
        .chain(locations::ROUTES.iter())
        .chain(staff::ROUTES.iter())
        .chain(shifts::ROUTES.iter())
        .chain(schedules::ROUTES.iter())
        .chain(workforce::ROUTES.iter())
        .chain(webhooks::ROUTES.iter())
        .chain(meta::ROUTES.iter())
}
