//! The OpenAPI document, emitted by utoipa from the handlers' own annotations.
//!
//! Each handler's `#[utoipa::path]` carries what is particular to it: parameters,
//! body, success answer and its own 400/404/409 cases. What follows from the route
//! table (the same table that routes requests) is added here once, so it cannot drift
//! from what the service enforces: security (`security: []` on public routes), the
//! `Idempotency-Key` header, the errors every route of a kind shares, and the answer
//! headers the service writes (`X-Request-Id`, `Retry-After`, the RateLimit fields,
//! `Idempotent-Replayed`), each declared once under `components.headers`. The
//! document-level parts are here too: `servers` ([`servers`]), the tags with their
//! descriptions, the contact, and the security schemes.
//! The input rules of `dto::limits` (no control characters, non-blank required text)
//! become `pattern`s here, next to the `maxLength` each field declares.

mod access;
mod answers;
mod components;
mod conditional;
mod headers;
mod input_rules;
mod yaml;

use crate::handlers::{self, Route, Schemas};
use access::{describe_access, describe_idempotency};
use answers::{describe_answer_headers, error};
use components::add_components;
use http::Method;
use input_rules::describe_input_rules;
use utoipa::OpenApi;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::info::ContactBuilder;
use utoipa::openapi::path::{HttpMethod, Operation, PathItem, Paths};
use utoipa::openapi::server::{Server, ServerBuilder};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{Components, OpenApi as OpenApiDoc};
use yaml::quote_yaml_1_1_lookalikes;

/// The document's `info`; its paths come from the route table ([`paths`]), with
/// the schemas their bodies name. A query parameter's schema is not collected that
/// way, so the one a parameter refers to is listed here.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "External Workforce Scheduling API",
        version = "1.0.0",
        description = include_str!("intro.md"),
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    components(schemas(wfs_core::domain::webhook::DeliveryStatus)),
)]
struct ApiDoc;

/// The document, as served at `/external/v1/openapi.json` and committed as
/// `openapi.yaml`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    let mut schemas = Schemas::new();
    doc.paths = paths(&mut schemas);
    doc.components
        .get_or_insert_with(Components::new)
        .schemas
        .extend(schemas);
    describe_routes(&mut doc);
    doc
}

/// Every documented route's operation, at its path in the order of the route table,
/// as its `#[utoipa::path]` describes it; `schemas` gathers the schemas they name.
fn paths(schemas: &mut Schemas) -> Paths {
    let mut paths = Paths::new();
    for route in handlers::routes() {
        if let Some(doc) = route.doc {
            (doc.schemas)(schemas);
            paths.add_path_operation(
                &route.path,
                vec![http_method(&route.method)],
                (doc.operation)(),
            );
        }
    }
    paths
}

/// The document as a service mounted under `prefix` serves it: compact JSON, whose
/// `servers` names the prefix. Built once per service.
pub(crate) fn served_document(prefix: Option<&str>) -> bytes::Bytes {
    let mut doc = openapi();
    doc.servers = Some(servers(prefix));
    bytes::Bytes::from(doc.to_json().expect("the OpenAPI document serializes"))
}

/// The document as pretty JSON, ending in a newline.
pub fn openapi_json() -> String {
    let mut text = openapi()
        .to_pretty_json()
        .expect("the OpenAPI document serializes");
    text.push('\n');
    text
}

/// The document as YAML: the text of the committed `openapi.yaml`.
pub fn openapi_yaml() -> String {
    let yaml = openapi()
        .to_yaml()
        .expect("the OpenAPI document serializes");
    quote_yaml_1_1_lookalikes(&yaml)
}

/// Adds the document-level parts, and what the route table decides per operation.
fn describe_routes(doc: &mut OpenApiDoc) {
    doc.info.contact = Some(ContactBuilder::new().name(Some(CONTACT)).build());
    doc.servers = Some(servers(None));
    doc.tags = Some(
        // Each handler module's tag, in the order of the reference.
        handlers::tags()
            .map(|tag| {
                TagBuilder::new()
                    .name(tag.name)
                    .description(Some(tag.description))
                    .build()
            })
            .collect(),
    );
    add_components(doc);
    for route in handlers::routes().filter(|r| r.documented()) {
        let op = doc
            .paths
            .paths
            .get_mut(&route.path)
            .and_then(|item| operation_mut(item, &route.method))
            .unwrap_or_else(|| panic!("{route:?} is not in the document"));
        describe_operation(op, route);
    }
}

/// What follows from `route`'s entry: access, idempotency, input rules, the errors
/// every operation shares, and the answer headers.
fn describe_operation(op: &mut Operation, route: &Route) {
    assert_eq!(
        op.operation_id.as_deref(),
        Some(route.operation_id),
        "operationId of {route:?}"
    );
    describe_access(op, route);
    if route.writes() {
        describe_idempotency(op, route.facts.access);
    }
    describe_input_rules(op, route);
    if op.request_body.is_some() {
        error(
            op,
            413,
            &format!(
                "The request body is over {} MiB",
                route.facts.body_limit >> 20
            ),
        );
    }
    error(
        op,
        503,
        "The database is unavailable; nothing was written. Retry after `Retry-After` seconds",
    );
    error(op, 500, "An unexpected error; nothing was written");
    conditional::describe_conditional(op, route);
    describe_answer_headers(op, route.facts.access);
}

/// Who answers for the API, as `info.contact`.
const CONTACT: &str = "The wfs maintainers";

/// The `servers` of the document: one entry, relative, so that it names wherever the
/// document was fetched from. Operation paths are absolute (`/external/v1/...`), so
/// the server's URL is only the prefix the host mounts the service under: `/` at the
/// root, or `base_path` (e.g. `/partners`).
pub(crate) fn servers(base_path: Option<&str>) -> Vec<Server> {
    let url = match base_path.map(|p| p.trim_end_matches('/')) {
        Some(prefix) if !prefix.is_empty() => prefix.to_owned(),
        _ => "/".to_owned(),
    };
    let mut audience = Extensions::default();
    // Meant for integrators outside the operator's organisation.
    audience.insert("x-internal".to_owned(), serde_json::Value::Bool(false));
    vec![
        ServerBuilder::new()
            .url(url)
            .description(Some(
                "The server that serves this document, relative to its address: \
                 the same paths in every environment (local, staging, production)",
            ))
            .extensions(Some(audience))
            .build(),
    ]
}

fn operation_mut<'a>(item: &'a mut PathItem, method: &Method) -> Option<&'a mut Operation> {
    match *method {
        Method::GET => item.get.as_mut(),
        Method::POST => item.post.as_mut(),
        Method::PATCH => item.patch.as_mut(),
        Method::PUT => item.put.as_mut(),
        Method::DELETE => item.delete.as_mut(),
        _ => None,
    }
}

/// `method` as the document names it (the route table read it from there, see
/// `handlers::route::resolve`).
fn http_method(method: &Method) -> HttpMethod {
    match *method {
        Method::POST => HttpMethod::Post,
        Method::PATCH => HttpMethod::Patch,
        Method::PUT => HttpMethod::Put,
        Method::DELETE => HttpMethod::Delete,
        Method::HEAD => HttpMethod::Head,
        Method::OPTIONS => HttpMethod::Options,
        Method::TRACE => HttpMethod::Trace,
        Method::GET => HttpMethod::Get,
        _ => unreachable!("{method} is not a method of the document"),
    }
}

#[cfg(test)]
mod tests;
