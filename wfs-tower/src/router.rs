//! Path and method to operation. The table itself lives with the handlers
//! (`handlers::*::ROUTES`); this module only merges it and answers 404/405.

use crate::auth::Access;
use crate::error::ApiError;
use crate::handlers::{self, Ctx};
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

struct PathEntry {
    routes: Vec<&'static Route>,
    allow: String,
}

/// The merged route table.
pub(crate) struct Router {
    inner: matchit::Router<PathEntry>,
}

/// A matched route and its path parameter (each route has at most one).
pub(crate) struct Matched<'r, 'p> {
    pub(crate) route: &'static Route,
    pub(crate) id: Option<&'p str>,
    _router: std::marker::PhantomData<&'r ()>,
}

impl Router {
    pub(crate) fn new() -> Self {
        let mut by_path: Vec<(&'static str, Vec<&'static Route>)> = Vec::new();
        for route in handlers::routes() {
            match by_path.iter_mut().find(|(p, _)| *p == route.path) {
                Some((_, routes)) => routes.push(route),
                None => by_path.push((route.path, vec![route])),
            }
        }
        let mut inner = matchit::Router::new();
        for (path, routes) in by_path {
            let allow = routes
                .iter()
                .map(|r| r.method.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            inner
                .insert(path, PathEntry { routes, allow })
                .unwrap_or_else(|e| panic!("invalid route {path}: {e}"));
        }
        Self { inner }
    }

    /// Finds the route, or answers 404 (no such path) or 405 (path without method).
    pub(crate) fn at<'r, 'p>(
        &'r self,
        method: &Method,
        path: &'p str,
    ) -> Result<Matched<'r, 'p>, ApiError> {
        let found = self
            .inner
            .at(path)
            .map_err(|_| ApiError::route_not_found())?;
        let route = found
            .value
            .routes
            .iter()
            .find(|r| r.method == *method)
            .ok_or_else(|| ApiError::method_not_allowed(&found.value.allow))?;
        Ok(Matched {
            route,
            id: found.params.iter().next().map(|(_, value)| value),
            _router: std::marker::PhantomData,
        })
    }
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Router")
    }
}
