//! The OpenAPI document, emitted by utoipa from the handlers' own annotations.
//!
//! Each handler's `#[utoipa::path]` carries what is particular to it: parameters,
//! body, success answer and its own 400/404/409 cases. What follows from the route
//! table (the same table that routes requests) is added here once, so it cannot drift
//! from what the service enforces: security, the `Idempotency-Key` header, the
//! `Idempotent-Replayed` answer header, and the errors every route of a kind shares.
//! The input rules of `dto::limits` (no control characters, non-blank required text)
//! become `pattern`s here, next to the `maxLength` each field declares.

use crate::auth::Access;
use crate::dto::limits::LINE_MAX;
use crate::handlers;
use crate::handlers::Route;
use http::Method;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{Operation, ParameterBuilder, ParameterIn, PathItem};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ArrayItems, Object, ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{OpenApi as OpenApiDoc, Ref, RefOr, Required};
use utoipa::{Modify, OpenApi};
use wfs_core::service::staff::BULK_MAX_ITEMS;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "External Workforce Scheduling API",
        version = "1.0.0",
        description = include_str!("openapi_intro.md"),
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    paths(
        handlers::auth::sign_in,
        handlers::auth::list_api_keys,
        handlers::auth::create_api_key,
        handlers::auth::rotate_api_key,
        handlers::auth::revoke_api_key,
        handlers::shifts::list_shifts,
        handlers::shifts::create_shift_slot,
        handlers::shifts::book_shift,
        handlers::shifts::cancel_shift,
        handlers::job_roles::list_job_roles,
        handlers::job_roles::create_job_role,
        handlers::job_roles::update_job_role,
        handlers::job_roles::delete_job_role,
        handlers::locations::list_locations,
        handlers::locations::create_location,
        handlers::locations::update_location,
        handlers::staff::list_staff,
        handlers::staff::deactivate_staff,
        handlers::staff::bulk_create_staff,
        handlers::schedules::list_schedules,
        handlers::schedules::list_overtime,
        handlers::schedules::get_hours,
        handlers::workforce::list_workforce_resources,
        handlers::workforce::get_workforce_resource,
        handlers::workforce::list_workforce_availability,
        handlers::webhooks::create_webhook_endpoint,
        handlers::webhooks::list_webhook_endpoints,
        handlers::webhooks::get_webhook_endpoint,
        handlers::webhooks::update_webhook_endpoint,
        handlers::webhooks::delete_webhook_endpoint,
        handlers::webhooks::rotate_webhook_secret,
        handlers::webhooks::test_webhook_endpoint,
        handlers::webhooks::replay_webhook_endpoint,
        handlers::webhooks::list_webhook_deliveries,
        handlers::webhooks::retry_webhook_delivery,
        handlers::webhooks::list_webhook_events,
        handlers::meta::get_openapi,
    ),
    components(schemas(
        crate::dto::webhooks::WebhookDeliveryStatus,
        crate::dto::webhooks::WebhookEventType,
    )),
    modifiers(&RouteTable),
)]
struct ApiDoc;

/// The document, as served at `/external/v1/openapi.json` and committed as
/// `openapi.yaml`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
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

/// Quotes the plain scalars that a YAML 1.1 parser (PyYAML, SnakeYAML, which many
/// client generators use) would not read as strings: `17:00` is the sexagesimal
/// integer 1020 there, and `2026-12-07` a date. YAML 1.2 reads them the same either
/// way, so the document does not change for our own tools.
fn quote_yaml_1_1_lookalikes(yaml: &str) -> String {
    let lookalike = |v: &str| {
        let b = v.as_bytes();
        let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
        (b.len() == 5 && b[2] == b':' && digits(0..2) && digits(3..5))
            || (b.len() == 10
                && b[4] == b'-'
                && b[7] == b'-'
                && digits(0..4)
                && digits(5..7)
                && digits(8..10))
    };
    let mut out = String::with_capacity(yaml.len() + 64);
    for line in yaml.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        match body.rsplit_once(": ") {
            Some((key, value)) if lookalike(value) => {
                out.push_str(&format!("{key}: '{value}'"));
                out.push_str(&line[body.len()..]);
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// Security scheme names, as operations refer to them.
const API_KEY: &str = "apiKey";
const API_SECRET: &str = "apiSecret";
const BEARER: &str = "bearerAuth";

/// Adds what the route table decides, per operation.
struct RouteTable;

impl Modify for RouteTable {
    fn modify(&self, doc: &mut OpenApiDoc) {
        add_components(doc);
        for route in handlers::routes().filter(|r| r.documented) {
            let op = doc
                .paths
                .paths
                .get_mut(route.path)
                .and_then(|item| operation_mut(item, &route.method))
                .unwrap_or_else(|| panic!("{route:?} has no #[utoipa::path] in openapi.rs"));
            assert_eq!(
                op.operation_id.as_deref(),
                Some(route.operation_id),
                "operationId of {route:?}"
            );
            describe_access(op, route);
            if route.writes() {
                describe_idempotency(op, route.access);
            }
            describe_input_rules(op, route);
            if op.request_body.is_some() {
                error(
                    op,
                    413,
                    &format!("The request body is over {} MiB", route.body_limit >> 20),
                );
            }
            error(
                op,
                503,
                "The database is unavailable; nothing was written. Retry after `Retry-After` seconds",
            );
            with_header(op, "503", "Retry-After", "Seconds to wait before retrying");
            error(op, 500, "An unexpected error; nothing was written");
        }
    }
}

/// The one schema every `Idempotency-Key` parameter refers to (one type in clients).
const IDEMPOTENCY_KEY: &str = "IdempotencyKey";

fn add_components(doc: &mut OpenApiDoc) {
    let components = doc.components.get_or_insert_with(Default::default);
    for schema in components.schemas.values_mut() {
        if let RefOr::T(Schema::Object(object)) = schema {
            for property in object.properties.values_mut() {
                match property {
                    RefOr::T(Schema::Object(field)) => declare_text_rule(field, Place::Body),
                    // A bounded array of strings (`Bounded<Line, N>`): each item is a line.
                    RefOr::T(Schema::Array(array)) if array.max_items.is_some() => {
                        if let ArrayItems::RefOrSchema(item) = &mut array.items
                            && let RefOr::T(Schema::Object(item)) = item.as_mut()
                            && item.max_length.is_none()
                            && item.enum_values.is_none()
                        {
                            item.max_length = Some(LINE_MAX);
                            declare_text_rule(item, Place::Body);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    components.schemas.insert(
        IDEMPOTENCY_KEY.to_owned(),
        RefOr::T(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(8))
                .max_length(Some(128))
                .pattern(Some("^[A-Za-z0-9._~-]{8,128}$"))
                .description(Some(
                    "8 to 128 URL-safe characters (A-Z a-z 0-9 - _ . ~), new for each logical operation",
                ))
                .into(),
        ),
    );
    components.add_security_scheme(
        API_KEY,
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            "x-api-key",
            "Client ID of the key pair, prefixed `api_`. Always sent with `x-api-secret`.",
        ))),
    );
    components.add_security_scheme(
        API_SECRET,
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            "x-api-secret",
            "Client secret of the key pair, prefixed `sec_`. Always sent with `x-api-key`.",
        ))),
    );
    components.add_security_scheme(
        BEARER,
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .bearer_format("JWT")
                .description(Some(
                    "Access token from `POST /external/v1/auth/signin`, valid for one hour.",
                ))
                .build(),
        ),
    );
}

/// Characters refused in every single-line string (`dto::limits::refused`): controls
/// (`Cc`), invisible format characters (`Cf`) and the line and paragraph separators.
/// The pattern lists the `Cf` characters of the Basic Multilingual Plane; the few
/// outside it (tags, musical and hieroglyph format controls) are refused as well, but a
/// pattern cannot name them portably (ECMA-262 without the `u` flag sees surrogates).
const LINE_PATTERN: &str = r"^[^\u0000-\u001F\u007F-\u009F\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B-\u200F\u2028-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]*$";
/// Free text: controls other than tab, LF and CR, and format characters other than the
/// zero-width (non-)joiner, are refused.
const TEXT_PATTERN: &str = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]*$";
/// A required single-line text: as [`LINE_PATTERN`], with at least one character
/// that is not white space (the server trims, and refuses what is left empty).
const NON_BLANK_PATTERN: &str = r"^[^\u0000-\u001F\u007F-\u009F\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B-\u200F\u2028-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]*[^\s\u0000-\u001F\u007F-\u009F\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B-\u200F\u2028-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB][^\u0000-\u001F\u007F-\u009F\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B-\u200F\u2028-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB]*$";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Body,
    Query,
}

/// Declares the rule `dto::limits` enforces on a bounded string (one with a
/// `maxLength`) as its `pattern`, unless a format or pattern already says more. In a
/// body, a limit above [`LINE_MAX`] marks free text; `minLength: 1` marks text that
/// must not be blank.
fn declare_text_rule(field: &mut Object, place: Place) {
    let Some(max) = field.max_length else { return };
    if field.pattern.is_some() || field.format.is_some() || field.enum_values.is_some() {
        return;
    }
    let pattern = if place == Place::Body && max > LINE_MAX {
        TEXT_PATTERN
    } else if field.min_length.is_some_and(|min| min >= 1) {
        NON_BLANK_PATTERN
    } else {
        LINE_PATTERN
    };
    field.pattern = Some(pattern.to_owned());
}

/// Patterns on bounded query parameters; a 400 on every operation that reads input;
/// the bulk array's bounds.
fn describe_input_rules(op: &mut Operation, route: &Route) {
    let mut reads_input = op.request_body.is_some();
    for parameter in op.parameters.iter_mut().flatten() {
        let RefOr::T(parameter) = parameter else {
            continue;
        };
        if parameter.parameter_in == ParameterIn::Query {
            reads_input = true;
        }
        if let Some(RefOr::T(Schema::Object(schema))) = &mut parameter.schema {
            declare_text_rule(schema, Place::Query);
        }
    }
    if reads_input && !op.responses.responses.contains_key("400") {
        error(
            op,
            400,
            "A query parameter over its length limit or with a control character; the message names it",
        );
    }
    if route.operation_id == "bulk_create_staff"
        && let Some(RefOr::T(body)) = &mut op.request_body
    {
        for content in body.content.values_mut() {
            if let RefOr::T(content) = content
                && let Some(RefOr::T(Schema::Array(items))) = &mut content.schema
            {
                items.min_items = Some(1);
                items.max_items = Some(BULK_MAX_ITEMS);
            }
        }
    }
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

/// Security requirement, the scope in the description, and the 401/403/429 answers.
fn describe_access(op: &mut Operation, route: &Route) {
    match route.access {
        Access::Public => {}
        Access::Admin => {
            op.security = Some(vec![SecurityRequirement::new::<_, [&str; 0], &str>(
                BEARER,
                [],
            )]);
            error(
                op,
                401,
                "The bearer token is missing, malformed, invalid or expired",
            );
        }
        Access::Key(scope) => {
            op.security = Some(vec![
                SecurityRequirement::new::<_, [&str; 0], &str>(API_KEY, [])
                    .add::<_, [&str; 0], &str>(API_SECRET, []),
            ]);
            let note = format!("Requires an API key with scope `{}`.", scope.as_str());
            op.description = Some(match op.description.take() {
                Some(d) if !d.is_empty() => format!("{d}\n\n{note}"),
                _ => note,
            });
            error(
                op,
                401,
                "`Missing API credentials` (`x-api-key` or `x-api-secret` absent), \
                 `Invalid API credentials` (unknown key, wrong secret or revoked key), \
                 or `API key expired`",
            );
            error(
                op,
                403,
                &format!(
                    "`Missing required scope: {}`, or `Address not allowed for this API key`",
                    scope.as_str()
                ),
            );
            error(
                op,
                429,
                "The key's rate limit is exceeded (when the operator sets one)",
            );
            with_header(op, "429", "Retry-After", "Seconds to wait before retrying");
        }
    }
}

/// The `Idempotency-Key` header, its replay header and its 400/409 answers.
fn describe_idempotency(op: &mut Operation, access: Access) {
    let required = matches!(access, Access::Key(_));
    let description = if required {
        "A new value for each logical operation, 8 to 128 URL-safe characters \
         (`A-Z a-z 0-9 - _`); reuse it only to retry the identical method, path and body. \
         A completed retry answers the original response with `Idempotent-Replayed: true`. \
         Kept 24 hours per API key."
    } else {
        "Optional here; when sent it is honoured with the same rules as on resource \
         routes, scoped to the signed-in admin."
    };
    op.parameters.get_or_insert_with(Vec::new).push(
        ParameterBuilder::new()
            .name("Idempotency-Key")
            .parameter_in(ParameterIn::Header)
            .required(if required {
                Required::True
            } else {
                Required::False
            })
            .description(Some(description))
            .schema(Some(Ref::from_schema_name(IDEMPOTENCY_KEY)))
            .build()
            .into(),
    );
    let successes: Vec<String> = op
        .responses
        .responses
        .keys()
        .filter(|status| status.starts_with('2'))
        .cloned()
        .collect();
    for status in successes {
        with_header(
            op,
            &status,
            "Idempotent-Replayed",
            "`true` when this is the stored answer of an earlier request with the same \
             Idempotency-Key",
        );
    }
    let missing = if required {
        "A missing or malformed `Idempotency-Key`"
    } else {
        "A malformed `Idempotency-Key`"
    };
    error(op, 400, missing);
    error(
        op,
        409,
        "The `Idempotency-Key` was used for a different request, or its original is still in progress",
    );
}

/// Adds an error answer, or appends to the description of the one already there.
fn error(op: &mut Operation, status: u16, description: &str) {
    let responses = &mut op.responses.responses;
    match responses.get_mut(&status.to_string()) {
        Some(RefOr::T(existing)) => {
            existing.description = format!("{}; or: {description}", existing.description);
        }
        Some(RefOr::Ref(_)) => {}
        None => {
            responses.insert(
                status.to_string(),
                RefOr::T(
                    ResponseBuilder::new()
                        .description(description)
                        .content(
                            "application/json",
                            ContentBuilder::new()
                                .schema(Some(Ref::from_schema_name("ErrorBody")))
                                .build(),
                        )
                        .build(),
                ),
            );
        }
    }
}

fn with_header(op: &mut Operation, status: &str, name: &str, description: &str) {
    if let Some(RefOr::T(response)) = op.responses.responses.get_mut(status) {
        response.headers.insert(
            name.to_owned(),
            RefOr::T(
                HeaderBuilder::new()
                    .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
                    .description(Some(description))
                    .build(),
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every documented operation, as (METHOD, path, operationId).
    fn documented() -> Vec<(String, String, String)> {
        let doc = serde_json::to_value(openapi()).unwrap();
        let mut out = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                out.push((
                    method.to_uppercase(),
                    path.clone(),
                    op["operationId"].as_str().unwrap().to_owned(),
                ));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn yaml_1_1_lookalikes_are_quoted() {
        let yaml = "a:\n  example: 17:00\n  b: 2026-12-07\n  c: 12:345\n  d: x 09:00\n";
        assert_eq!(
            quote_yaml_1_1_lookalikes(yaml),
            "a:\n  example: '17:00'\n  b: '2026-12-07'\n  c: 12:345\n  d: x 09:00\n"
        );
        let doc: serde_json::Value = yaml_serde::from_str(&openapi_yaml()).unwrap();
        let json: serde_json::Value = serde_json::from_str(&openapi_json()).unwrap();
        assert_eq!(doc, json, "the YAML and the JSON are one document");
    }

    #[test]
    fn the_document_describes_exactly_the_routes_served() {
        let mut served: Vec<_> = handlers::routes()
            .filter(|r| r.documented)
            .map(|r| {
                (
                    r.method.to_string(),
                    r.path.to_owned(),
                    r.operation_id.to_owned(),
                )
            })
            .collect();
        served.sort();
        assert_eq!(documented(), served);
    }

    #[test]
    fn only_the_api_reference_is_left_out_of_the_document() {
        let left_out: Vec<_> = handlers::routes()
            .filter(|r| !r.documented)
            .map(|r| r.path)
            .collect();
        assert_eq!(
            left_out,
            ["/external/v1/docs", "/external/v1/docs/{file}"],
            "only the reference's page and assets are not API operations"
        );
    }

    #[test]
    fn security_follows_each_routes_access() {
        let doc = serde_json::to_value(openapi()).unwrap();
        for route in handlers::routes().filter(|r| r.documented) {
            let op = &doc["paths"][route.path][route.method.as_str().to_lowercase()];
            let security = &op["security"];
            match route.access {
                Access::Public => assert!(security.is_null(), "{route:?}"),
                Access::Admin => {
                    assert_eq!(security, &serde_json::json!([{ "bearerAuth": [] }]))
                }
                Access::Key(scope) => {
                    assert_eq!(
                        security,
                        &serde_json::json!([{ "apiKey": [], "apiSecret": [] }])
                    );
                    assert!(op["description"].as_str().unwrap().contains(scope.as_str()));
                }
            }
            let idempotency = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["name"] == "Idempotency-Key");
            match (route.writes(), route.access) {
                (true, Access::Key(_)) => assert_eq!(idempotency.unwrap()["required"], true),
                (true, _) => assert_eq!(idempotency.unwrap()["required"], false),
                (false, _) => assert!(idempotency.is_none(), "{route:?}"),
            }
        }
    }

    #[test]
    fn every_error_answer_has_the_error_body() {
        let doc = serde_json::to_value(openapi()).unwrap();
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                for (status, response) in op["responses"].as_object().unwrap() {
                    if !status.starts_with('2') {
                        assert_eq!(
                            response["content"]["application/json"]["schema"]["$ref"],
                            "#/components/schemas/ErrorBody",
                            "{} {status}",
                            op["operationId"]
                        );
                    }
                }
            }
        }
    }
}
