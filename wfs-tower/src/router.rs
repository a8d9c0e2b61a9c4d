//! Path and method to operation. The table itself lives with the handlers
//! (`handlers::*::ROUTES`, resolved once into [`Route`]s by `handlers::routes`, each
//! method and path read from its handler's `#[utoipa::path]`); this module only
//! merges it and answers 404/405.

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
                None => by_path.push((&route.path, vec![route])),
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
        found.value.routes.first().map(|r| r.path.as_str())
    }
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Router")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `template` with each `{parameter}` filled in with a UUID.
    fn concrete(template: &str) -> String {
        template
            .split('/')
            .map(|segment| {
                if segment.starts_with('{') {
                    "0190b0a2-8c4e-7d1f-9a3b-2c5d6e7f8091"
                } else {
                    segment
                }
            })
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Every operation of the document is routed, at its method and path, to the
    /// handler named by its `operationId`; and every routed, documented operation is
    /// in the document at its method and path.
    #[test]
    fn the_router_serves_exactly_the_documented_operations() {
        let router = Router::new();
        let doc = serde_json::to_value(crate::openapi::openapi()).unwrap();
        let mut in_document = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
                let concrete = concrete(path);
                let Ok(matched) = router.at(&method, &concrete) else {
                    panic!("{method} {path} is not routed");
                };
                assert_eq!(
                    matched.route.operation_id, op["operationId"],
                    "{method} {path}"
                );
                assert_eq!(matched.route.path, *path);
                assert_eq!(matched.route.method, method);
                in_document.push(matched.route.operation_id);
            }
        }
        let documented: Vec<_> = handlers::routes()
            .filter(|route| route.documented())
            .map(|route| route.operation_id)
            .collect();
        in_document.sort_unstable();
        let mut routed = documented.clone();
        routed.sort_unstable();
        routed.dedup();
        assert_eq!(routed.len(), documented.len(), "an operationId twice");
        assert_eq!(in_document, routed);
    }

    #[test]
    fn a_known_path_with_another_method_is_405_and_names_the_allowed_ones() {
        let router = Router::new();
        let Err(refused) = router.at(&Method::PUT, "/external/v1/job-roles") else {
            panic!("PUT /external/v1/job-roles is routed");
        };
        assert_eq!(refused.status(), http::StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(
            router.template("/external/v1/webhooks/endpoints/x/deliveries/y/retry"),
            Some("/external/v1/webhooks/endpoints/{id}/deliveries/{deliveryId}/retry")
        );
        assert!(router.at(&Method::GET, "/external/v1/nothing").is_err());
    }
}
