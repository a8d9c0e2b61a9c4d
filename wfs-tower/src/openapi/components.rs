//! `components`: the input rules of the schemas, the answer headers, the
//! `Idempotency-Key` schema and the security schemes.

use super::headers::header_components;
use super::input_rules::{Place, declare_text_rule};
use crate::dto::limits::LINE_MAX;
use utoipa::openapi::schema::{ArrayItems, ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{OpenApi as OpenApiDoc, RefOr};

/// Security scheme names, as operations refer to them.
pub(super) const API_KEY: &str = "apiKey";
pub(super) const API_SECRET: &str = "apiSecret";
pub(super) const BEARER: &str = "bearerAuth";

/// The one schema every `Idempotency-Key` parameter refers to (one type in clients).
pub(super) const IDEMPOTENCY_KEY: &str = "IdempotencyKey";

pub(super) fn add_components(doc: &mut OpenApiDoc) {
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
