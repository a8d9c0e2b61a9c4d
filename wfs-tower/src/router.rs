//! Path and method to operation. The table itself lives with the handlers
//! (`handlers::*::ROUTES`, entries of [`Route`]); this module only merges it and
//! answers 404/405.

use crate::error::ApiError;
use crate::handlers::{self, Route};
use http::Method;

struct PathEntry {
    routes: Vec<&'static Route>,
    allow: String,
}

/// The merged route table.
pub(crate) struct Router {
    inner: matchit::Router<PathEntry>,
}

/// A matched route and its path parameters (at most two: a record, and one of its
/// sub-records).
pub(crate) struct Matched<'r, 'p> {
    pub(crate) route: &'static Route,
    pub(crate) id: Option<&'p str>,
    pub(crate) sub_id: Option<&'p str>,
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
        let mut params = found.params.iter().map(|(_, value)| value);
        Ok(Matched {
            route,
            id: params.next(),
            sub_id: params.next(),
            _router: std::marker::PhantomData,
        })
    }
}

impl Router {
    /// The template of the routes at `path`, whatever their methods (for the metrics
    /// of a 405); `None` when no route has the path.
    pub(crate) fn template(&self, path: &str) -> Option<&'static str> {
        let found = self.inner.at(path).ok()?;
        found.value.routes.first().map(|r| r.path)
    }
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Router")
    }
}
