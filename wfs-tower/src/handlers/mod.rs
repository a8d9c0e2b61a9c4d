//! Thin handlers: input from [`Ctx`], one core operation, a DTO out.
//!
//! Each module declares its routes next to its handlers (with [`route!`]), so a route
//! and the code behind it cannot drift apart; [`routes`] merges the tables.

/// A route table entry: `route!(handler_fn, __path_handler_fn, facts)`, where `facts`
/// ([`Facts`]) says everything else about the route: `Facts::read(READ)`,
/// `Facts::write(WRITE, Audit::Id("job_role")).if_match().tagged()`. The method, the
/// path and the docs are the handler's `#[utoipa::path]`, read through the type it
/// generates (`__path_<handler>`: a declarative macro cannot form that name itself;
/// the router refuses a type of another handler). The handler's name is the
/// `operationId`. A route left out of the OpenAPI document (the API reference's page
/// and assets, which are not operations of the API) has no annotation and names its
/// method and path: `route!(undocumented GET "/path", handler_fn, facts)`.
macro_rules! route {
    (@entry $at:expr, $handler:ident, $facts:expr) => {
        crate::handlers::Entry {
            operation_id: stringify!($handler),
            at: $at,
            facts: $facts,
            handler: {
                #[allow(deprecated)] // deprecated operations are still served
                fn boxed<'a>(ctx: &'a crate::handlers::Ctx<'a>) -> crate::handlers::BoxFuture<'a> {
                    Box::pin($handler(ctx))
                }
                boxed
            },
        }
    };
    (undocumented $method:ident $path:literal, $handler:ident, $facts:expr) => {
        route!(@entry
            crate::handlers::At::Undocumented { method: http::Method::$method, path: $path },
            $handler, $facts)
    };
    ($handler:ident, $doc:ident, $facts:expr) => {
        route!(@entry
            crate::handlers::At::Documented(crate::handlers::Doc::of::<$doc>()),
            $handler, $facts)
    };
}

pub(crate) mod audit_log;
pub(crate) mod auth;
#[cfg(feature = "console")]
mod console;
#[cfg(feature = "swagger-ui")]
mod docs;
#[cfg(any(feature = "swagger-ui", feature = "console"))]
mod files;
pub(crate) mod job_roles;
mod kept_answers;
pub(crate) mod locations;
pub(crate) mod meta;
mod route;
pub(crate) mod schedules;
pub(crate) mod shifts;
pub(crate) mod staff;
pub(crate) mod webhooks;
pub(crate) mod workforce;

#[cfg(test)]
mod request_tests;

pub(crate) use route::{At, Audit, BoxFuture, Doc, Entry, Facts, Route, Schemas, Table, Tag};

use crate::auth::Caller;
use crate::error::ApiError;
use std::sync::LazyLock;
use wfs_core::WriteTx;
use wfs_core::{AdminPrincipal, KeyPrincipal, Wfs};

/// Everything a handler may look at.
#[derive(Clone, Copy)]
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
    /// The service's held reads (`wait=` on the feed).
    pub(crate) held: &'a crate::held::Held,
    /// The caller's address (see `Authenticator::client_ip`), for the sign-in throttle
    /// and held reads; `None` on admin reads, or when the host gave no `PeerAddr`.
    pub(crate) client_ip: Option<std::net::IpAddr>,
    /// The write transaction; `Some` exactly for writing routes.
    pub(crate) tx: Option<&'a WriteTx>,
    /// The request's audit context, for an operation with no transaction of its own
    /// to record into (a sign-in); a write's travels on its transaction.
    pub(crate) audit: Option<&'a wfs_core::service::audit::AuditScope>,
}

impl Ctx<'_> {
    pub(crate) fn key(&self) -> Result<&KeyPrincipal, ApiError> {
        match self.caller {
            Caller::Key(k) => Ok(k),
            _ => Err(ApiError::internal("route expected an API key caller")),
        }
    }

    /// Authenticates the request's key pair again, as a new request would be: a read
    /// held for a change must not answer with data after its key was revoked (or
    /// expired) meanwhile. A cache hit costs the secret's hash; revocation reaches
    /// the cache at once, here and on every server sharing the database.
    pub(crate) async fn key_still_valid(&self) -> Result<(), ApiError> {
        let header = |name| {
            self.headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
        };
        self.wfs
            .authenticate_key(header("x-api-key"), header("x-api-secret"))
            .await?;
        Ok(())
    }

    /// Whether the caller's key has `scope` (an admin has every one).
    pub(crate) fn may(&self, scope: wfs_core::domain::scope::Scope) -> bool {
        match self.caller {
            Caller::Key(key) => key.scopes.contains(scope),
            _ => true,
        }
    }

    pub(crate) fn admin(&self) -> Result<AdminPrincipal, ApiError> {
        match self.caller {
            Caller::Admin(a) => Ok(*a),
            _ => Err(ApiError::internal("route expected an admin caller")),
        }
    }

    pub(crate) fn tx(&self) -> Result<&WriteTx, ApiError> {
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

/// A cursor-paged list's `limit` as a number (its range is the core's to check).
fn page_limit(raw: Option<&crate::dto::limits::Line>) -> Result<Option<i64>, ApiError> {
    raw.map(|l| {
        l.trim()
            .parse::<i64>()
            .map_err(|_| ApiError::bad_request("limit must be an integer between 1 and 200"))
    })
    .transpose()
}

/// Every handler module's table under its tag, in the order of the OpenAPI
/// document's paths and tags.
const TABLES: [Table; 10] = [
    (&auth::TAG, &auth::ROUTES),
    (&auth::TAG, &audit_log::ROUTES),
    (&shifts::TAG, &shifts::ROUTES),
    (&job_roles::TAG, &job_roles::ROUTES),
    (&locations::TAG, &locations::ROUTES),
    (&staff::TAG, &staff::ROUTES),
    (&schedules::TAG, &schedules::ROUTES),
    (&workforce::TAG, &workforce::ROUTES),
    (&webhooks::TAG, &webhooks::ROUTES),
    (&meta::TAG, meta::ROUTES),
];

/// The whole route table, resolved once per process: in the order of the OpenAPI
/// document's paths (which it builds).
pub(crate) fn routes() -> impl Iterator<Item = &'static Route> {
    static ROUTES: LazyLock<Vec<Route>> = LazyLock::new(|| route::resolve(&TABLES));
    ROUTES.iter()
}

/// The document's tags: each module's, once, in the order of the tables.
pub(crate) fn tags() -> impl Iterator<Item = &'static Tag> {
    let mut seen: Vec<&'static str> = Vec::new();
    TABLES.iter().filter_map(move |(tag, _)| {
        if seen.contains(&tag.name) {
            return None;
        }
        seen.push(tag.name);
        Some(*tag)
    })
}
