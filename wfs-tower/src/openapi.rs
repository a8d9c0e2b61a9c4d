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

use crate::auth::Access;
use crate::dto::limits::LINE_MAX;
use crate::handlers;
use crate::handlers::Route;
use http::Method;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::header::{Header, HeaderBuilder};
use utoipa::openapi::info::ContactBuilder;
use utoipa::openapi::path::{Operation, ParameterBuilder, ParameterIn, PathItem};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ArrayItems, Object, ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::server::{Server, ServerBuilder};
use utoipa::openapi::tag::TagBuilder;
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
        doc.info.contact = Some(ContactBuilder::new().name(Some(CONTACT)).build());
        doc.servers = Some(servers(None));
        doc.tags = Some(
            TAGS.iter()
                .map(|(name, description)| {
                    TagBuilder::new()
                        .name(*name)
                        .description(Some(*description))
                        .build()
                })
                .collect(),
        );
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
            error(op, 500, "An unexpected error; nothing was written");
            describe_answer_headers(op, route.access);
        }
    }
}

/// Who answers for the API, as `info.contact`.
const CONTACT: &str = "The wfs maintainers";

/// The global tags, in the order of the reference, each operation's tag among them.
const TAGS: [(&str, &str); 9] = [
    (
        "Sign-in and API keys",
        "Portal sign-in (a one-hour bearer token) and the company's API keys, \
         managed with that token",
    ),
    ("Shifts", "Shift slots, bookings and cancellations"),
    ("Job roles", "The company's job roles"),
    ("Locations", "The company's locations (branches)"),
    (
        "Staff",
        "Staff members: listing, bulk creation, deactivation",
    ),
    (
        "Schedules, overtime, hours",
        "Worked shifts, overtime and hours per day, read-only",
    ),
    (
        "Workforce availability",
        "The workforce feed: resources, their shifts and unavailable intervals, \
         with tombstones, for mirroring",
    ),
    (
        "Webhooks",
        "Webhook endpoints, their deliveries and the events they carry",
    ),
    ("Meta", "The API describing itself"),
];

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

/// The one schema every `Idempotency-Key` parameter refers to (one type in clients).
const IDEMPOTENCY_KEY: &str = "IdempotencyKey";

/// Answer headers, declared once under `components.headers` (see
/// [`header_components`]).
const HEADER_REQUEST_ID: &str = "XRequestId";
const HEADER_RETRY_AFTER: &str = "RetryAfter";
const HEADER_RATE_LIMIT: &str = "RateLimit";
const HEADER_RATE_LIMIT_POLICY: &str = "RateLimitPolicy";
const HEADER_UNKNOWN_KEY_RATE_LIMIT: &str = "UnknownKeyRateLimit";
const HEADER_UNKNOWN_KEY_RATE_LIMIT_POLICY: &str = "UnknownKeyRateLimitPolicy";
const HEADER_IDEMPOTENT_REPLAYED: &str = "IdempotentReplayed";

/// The answer headers, each with the exact shape the service writes:
/// `request_id::MAX_LEN` visible ASCII characters at most (a kept id or a UUID);
/// whole seconds, at least 1 (`error::whole_seconds`); and the IETF RateLimit fields
/// as `rate_limit::KeyLimiter::write_headers` writes them (a `u32` and a `u64`).
fn header_components() -> [(&'static str, Header); 7] {
    let text = |max: usize, pattern: &str| {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .max_length(Some(max))
            .pattern(Some(pattern))
    };
    let header = |schema: ObjectBuilder, description: &str| {
        HeaderBuilder::new()
            .schema(Some(schema))
            .description(Some(description))
            .build()
    };
    let mut request_id = header(
        text(
            crate::request_id::MAX_LEN,
            &format!("^[!-~]{{1,{}}}$", crate::request_id::MAX_LEN),
        )
        .min_length(Some(1)),
        "On every answer: the request's own `X-Request-Id` when it is 1 to 128 visible \
         ASCII characters, else a new UUID. The server's log lines of the request carry it.",
    );
    // utoipa's Header has no `required`; the answer always carries it.
    request_id
        .extensions
        .get_or_insert_with(Extensions::default)
        .insert("required".to_owned(), serde_json::Value::Bool(true));
    // `"default";r=` or `;q=`, up to 10 digits (u32), `;t=` or `;w=`, up to 20 (u64).
    const FIELD_MAX: usize = 15 + 10 + 20;
    [
        (HEADER_REQUEST_ID, request_id),
        (
            HEADER_RETRY_AFTER,
            header(
                text(20, "^[1-9][0-9]{0,19}$"),
                "Seconds to wait before retrying, a whole number, at least 1",
            ),
        ),
        (
            HEADER_RATE_LIMIT,
            header(
                text(FIELD_MAX, "^\"default\";r=[0-9]{1,10};t=[0-9]{1,20}$"),
                "Where the API key stands (IETF draft-ietf-httpapi-ratelimit-headers): `r` \
                 requests it may still make at once, and `t` seconds until its whole burst \
                 is back. Present when the operator set a rate limit, on every answer to a \
                 key that passed its credential, address and scope checks, errors and 429 \
                 included.",
            ),
        ),
        (
            HEADER_RATE_LIMIT_POLICY,
            header(
                text(FIELD_MAX, "^\"default\";q=[0-9]{1,10};w=[0-9]{1,20}$"),
                "The per-key limit (IETF draft-ietf-httpapi-ratelimit-headers): a quota of \
                 `q` requests (the burst) refilled over `w` seconds. Present whenever \
                 `RateLimit` is.",
            ),
        ),
        (
            HEADER_UNKNOWN_KEY_RATE_LIMIT,
            header(
                text(FIELD_MAX, "^\"unknown-key\";r=[0-9]{1,2};t=[0-9]{1,20}$"),
                "Where the caller's address stands against its budget for API key ids the \
                 server does not know (IETF draft-ietf-httpapi-ratelimit-headers): `r` more \
                 such ids it may present at once, and `t` seconds until its whole budget is \
                 back. At `r=0`, a key no server cache holds yet (a new one, for instance) \
                 may be refused from this address until `t` has passed. Present on every \
                 answer that refuses a key when the server knows the caller's address.",
            ),
        ),
        (
            HEADER_UNKNOWN_KEY_RATE_LIMIT_POLICY,
            header(
                text(FIELD_MAX, "^\"unknown-key\";q=[0-9]{1,10};w=[0-9]{1,20}$"),
                "The per-address budget for unknown API key ids: `q` of them (the burst), \
                 refilled over `w` seconds. IPv6 addresses count per /64. Present whenever \
                 `RateLimit` is.",
            ),
        ),
        (
            HEADER_IDEMPOTENT_REPLAYED,
            header(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["true"])),
                "`true` when this is the stored answer of an earlier request with the same \
                 Idempotency-Key; absent otherwise",
            ),
        ),
    ]
}

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
    for (name, header) in header_components() {
        components.headers.insert(name.to_owned(), RefOr::T(header));
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
                    "Access token from `POST /external/v1/auth/signin`, valid for one hour. \
                     A signed JWT (JWS compact serialization) handled as RFC8725 (JSON Web \
                     Token Best Current Practices) asks: the algorithm is fixed to HS256 \
                     and never taken from the token (`none` and every other `alg` are \
                     refused); the signature is always verified, with a server secret of at \
                     least 32 bytes; `exp` and `sub` are required, and `exp` is checked on \
                     the server's clock with no leeway; and on every request the token's \
                     user must still be an active super admin of its company. Treat the \
                     token as opaque: its claims are not part of the contract.",
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

/// A path id as the API hands ids out: a hyphenated UUID.
const UUID_LEN: usize = 36;
const UUID_PATTERN: &str =
    "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$";

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
            if parameter.parameter_in == ParameterIn::Path && schema.max_length.is_none() {
                // Every path id is a UUID (`wfs_core::ids`): anything else answers 404.
                schema.max_length = Some(UUID_LEN);
                schema.pattern = Some(UUID_PATTERN.to_owned());
            }
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
        // Said outright, so a reader (and a linter) knows it is not an omission.
        Access::Public => op.security = Some(Vec::new()),
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
            HEADER_IDEMPOTENT_REPLAYED,
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

/// Declares the header `name` on the answer `status`, as the component `component`.
fn with_header(op: &mut Operation, status: &str, name: &str, component: &str) {
    if let Some(RefOr::T(response)) = op.responses.responses.get_mut(status) {
        response.headers.insert(
            name.to_owned(),
            RefOr::Ref(Ref::new(format!("#/components/headers/{component}"))),
        );
    }
}

/// The headers the service itself puts on answers: `X-Request-Id` on every one,
/// `Retry-After` on every 429 and 503, and, on key-authenticated operations, the
/// RateLimit fields: the key's on every answer the limiter was consulted for, the
/// address's budget for unknown keys on the 401 and 403 that refuse a key (see
/// `Authenticator::authenticate`).
fn describe_answer_headers(op: &mut Operation, access: Access) {
    let statuses: Vec<String> = op.responses.responses.keys().cloned().collect();
    for status in statuses {
        with_header(op, &status, "X-Request-Id", HEADER_REQUEST_ID);
        if status == "429" || status == "503" {
            with_header(op, &status, "Retry-After", HEADER_RETRY_AFTER);
        }
        if !matches!(access, Access::Key(_)) {
            continue;
        }
        let (limit, policy) = if status == "401" || status == "403" {
            (
                HEADER_UNKNOWN_KEY_RATE_LIMIT,
                HEADER_UNKNOWN_KEY_RATE_LIMIT_POLICY,
            )
        } else {
            (HEADER_RATE_LIMIT, HEADER_RATE_LIMIT_POLICY)
        };
        with_header(op, &status, "RateLimit", limit);
        with_header(op, &status, "RateLimit-Policy", policy);
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
                Access::Public => assert_eq!(security, &serde_json::json!([]), "{route:?}"),
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
    fn the_server_is_relative_and_takes_a_mount_prefix() {
        let url = |base: Option<&str>| servers(base).remove(0).url;
        assert_eq!(url(None), "/");
        assert_eq!(url(Some("")), "/");
        assert_eq!(url(Some("/")), "/");
        assert_eq!(url(Some("/partners")), "/partners");
        assert_eq!(url(Some("/partners/")), "/partners");
        let doc = serde_json::to_value(openapi()).unwrap();
        assert_eq!(doc["servers"][0]["url"], "/");
        assert_eq!(doc["servers"][0]["x-internal"], false);
    }

    #[test]
    fn every_operation_tag_is_declared_with_a_description() {
        let doc = serde_json::to_value(openapi()).unwrap();
        let declared: Vec<&str> = doc["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                assert!(t["description"].as_str().is_some_and(|d| !d.is_empty()));
                t["name"].as_str().unwrap()
            })
            .collect();
        let mut used = std::collections::BTreeSet::new();
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                for tag in op["tags"].as_array().unwrap() {
                    used.insert(tag.as_str().unwrap());
                }
            }
        }
        let mut declared_set: Vec<&str> = declared.clone();
        declared_set.sort_unstable();
        assert_eq!(declared_set, used.into_iter().collect::<Vec<_>>());
    }

    /// The headers each answer declares follow what the service writes: see
    /// `WfsService::call` (request id, RateLimit fields) and `ApiError::retry_after`.
    #[test]
    fn answer_headers_follow_each_routes_access() {
        let doc = serde_json::to_value(openapi()).unwrap();
        let header = |response: &serde_json::Value, name: &str| {
            response["headers"][name]["$ref"]
                .as_str()
                .map(str::to_owned)
        };
        for route in handlers::routes().filter(|r| r.documented) {
            let op = &doc["paths"][route.path][route.method.as_str().to_lowercase()];
            for (status, response) in op["responses"].as_object().unwrap() {
                let at = format!("{} {} {status}", route.method, route.path);
                assert_eq!(
                    header(response, "X-Request-Id").as_deref(),
                    Some("#/components/headers/XRequestId"),
                    "{at}"
                );
                let (limit, policy) = match route.access {
                    Access::Key(_) if status == "401" || status == "403" => (
                        Some("#/components/headers/UnknownKeyRateLimit"),
                        Some("#/components/headers/UnknownKeyRateLimitPolicy"),
                    ),
                    Access::Key(_) => (
                        Some("#/components/headers/RateLimit"),
                        Some("#/components/headers/RateLimitPolicy"),
                    ),
                    _ => (None, None),
                };
                assert_eq!(header(response, "RateLimit").as_deref(), limit, "{at}");
                assert_eq!(
                    header(response, "RateLimit-Policy").as_deref(),
                    policy,
                    "{at}"
                );
                let retry = status == "429" || status == "503";
                assert_eq!(header(response, "Retry-After").is_some(), retry, "{at}");
            }
            if matches!(route.access, Access::Key(_)) {
                assert!(op["responses"]["429"].is_object(), "{route:?}");
            }
        }
        let headers = &doc["components"]["headers"];
        assert_eq!(headers["XRequestId"]["required"], true);
        assert_eq!(
            headers["XRequestId"]["schema"]["maxLength"],
            crate::request_id::MAX_LEN
        );
    }

    #[test]
    fn the_bearer_scheme_states_its_jwt_practices() {
        let doc = serde_json::to_value(openapi()).unwrap();
        let scheme = &doc["components"]["securitySchemes"]["bearerAuth"];
        let description = scheme["description"].as_str().unwrap();
        assert_eq!(scheme["bearerFormat"], "JWT");
        for said in ["RFC8725", "HS256", "`exp`"] {
            assert!(description.contains(said), "{said}: {description}");
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
