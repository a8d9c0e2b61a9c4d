//! One entry of the route table: what the router matches and the service runs.

use super::Ctx;
use crate::auth::Access;
use crate::error::ApiError;
use crate::reply::Reply;
use http::Method;
use std::future::Future;
use std::pin::Pin;

/// Default body limit (1 MiB).
pub(crate) const BODY_LIMIT: usize = 1 << 20;
/// Body limit of bulk routes (4 MiB).
pub(crate) const BULK_BODY_LIMIT: usize = 4 << 20;

/// What a handler returns: its answer, boxed so routes can live in tables.
pub(crate) type BoxFuture<'a> = Pin<Box<dyn Future<Output = Result<Reply, ApiError>> + Send + 'a>>;

/// A handler, as stored in a route table (see the `route!` macro).
pub(crate) type Handler = for<'a> fn(&'a Ctx<'a>) -> BoxFuture<'a>;

/// One operation of the API.
pub(crate) struct Route {
    /// The handler's name, also the OpenAPI `operationId`.
    pub(crate) operation_id: &'static str,
    pub(crate) method: Method,
    pub(crate) path: &'static str,
    pub(crate) access: Access,
    pub(crate) body_limit: usize,
    pub(crate) handler: Handler,
    /// Whether the OpenAPI document describes it: `false` only for the routes that
    /// are not part of the API itself (the interactive reference's page and assets).
    pub(crate) documented: bool,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} ({})", self.method, self.path, self.operation_id)
    }
}

impl Route {
    /// Whether the route writes: it then runs in a transaction with idempotency.
    pub(crate) fn writes(&self) -> bool {
        self.method != Method::GET && self.access != Access::Public
    }
}
