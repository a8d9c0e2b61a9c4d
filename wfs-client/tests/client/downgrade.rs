//! The 3.1 -> 3.0.3 rewrite that `build.rs` applies before progenitor reads the
//! document, checked on small inputs (the same file `build.rs` includes).

#[path = "../../build/downgrade.rs"]
mod build_script;

use serde_json::{Value, json};

fn downgraded(mut v: Value) -> Value {
    build_script::downgrade(&mut v);
    v
}

/// Downgrades a document whose only content is `schema` (as `components.schemas.X`),
/// and answers the rewritten schema.
fn schema(schema: Value) -> Value {
    let doc = downgraded(json!({
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {},
        "components": {"schemas": {"X": schema}}
    }));
    assert_eq!(doc["openapi"], "3.0.3");
    doc["components"]["schemas"]["X"].clone()
}

#[test]
fn version_becomes_3_0_3_and_3_1_only_fields_go() {
    let v = downgraded(json!({
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {"title": "t", "version": "1", "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"}},
        "webhooks": {},
        "paths": {}
    }));
    assert_eq!(v["openapi"], "3.0.3");
    assert!(v.get("jsonSchemaDialect").is_none());
    assert!(v.get("webhooks").is_none());
    assert_eq!(v["info"]["license"], json!({"name": "Apache-2.0"}));
}

#[test]
fn type_array_with_null_becomes_nullable() {
    let v = schema(json!({"type": ["string", "null"], "format": "date-time"}));
    assert_eq!(
        v,
        json!({"type": "string", "format": "date-time", "nullable": true})
    );

    let v = schema(json!({"type": ["array", "null"], "items": {"type": ["integer", "null"]}}));
    assert_eq!(
        v,
        json!({"type": "array", "nullable": true, "items": {"type": "integer", "nullable": true}})
    );

    // A plain type and a non-null union are kept / turned into anyOf.
    assert_eq!(schema(json!({"type": "string"})), json!({"type": "string"}));
    assert_eq!(
        schema(json!({"type": ["string", "integer"]})),
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
    );
}

#[test]
fn one_of_with_null_becomes_nullable() {
    // A $ref alternative becomes allOf: [ref] (a $ref cannot carry nullable in 3.0).
    let v = schema(json!({
        "oneOf": [{"$ref": "#/components/schemas/NamedRef"}, {"type": "null"}]
    }));
    assert_eq!(
        v,
        json!({"allOf": [{"$ref": "#/components/schemas/NamedRef"}], "nullable": true})
    );

    // An inline alternative is merged in.
    let v = schema(json!({"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]}));
    assert_eq!(
        v,
        json!({"type": "string", "format": "date", "nullable": true})
    );

    // Several non-null alternatives stay a oneOf.
    let v = schema(json!({"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}));
    assert_eq!(
        v,
        json!({"oneOf": [{"type": "string"}, {"type": "integer"}], "nullable": true})
    );

    // A oneOf without null is left alone.
    let plain = json!({"oneOf": [{"$ref": "#/a"}, {"$ref": "#/b"}]});
    assert_eq!(schema(plain.clone()), plain);
}

#[test]
fn parameter_schemas_lose_nullable() {
    let v = downgraded(json!({
        "paths": {"/x": {"get": {"parameters": [
            {"name": "branchId", "in": "query", "required": false, "schema": {"type": ["string", "null"]}},
            {"name": "Idempotency-Key", "in": "header", "required": true, "schema": {"type": "string", "nullable": true}}
        ]}}}
    }));
    let params = &v["paths"]["/x"]["get"]["parameters"];
    assert_eq!(params[0]["schema"], json!({"type": "string"}));
    assert_eq!(params[1]["schema"], json!({"type": "string"}));
    assert_eq!(params[0]["in"], "query");
}

#[test]
fn other_3_1_keywords_are_rewritten() {
    let v = schema(json!({
        "type": "integer",
        "examples": [5, 6],
        "exclusiveMinimum": 0,
        "$schema": "x",
        "propertyNames": {"pattern": "^a"}
    }));
    assert_eq!(
        v,
        json!({"type": "integer", "example": 5, "minimum": 0, "exclusiveMinimum": true})
    );
    assert_eq!(
        schema(json!({"const": "revoked"})),
        json!({"enum": ["revoked"]})
    );
}

#[test]
fn string_bounds_are_left_to_the_server_but_a_lone_pattern_stays() {
    // Bounded strings stay plain `String`s in the client: the server checks them.
    let bounded = schema(json!({
        "type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[^\\u0000-\\u001F]*$"
    }));
    assert_eq!(bounded, json!({"type": "string"}));
    // A pattern alone (the IdempotencyKey schema) still makes a checked type.
    let key = schema(json!({"type": "string", "pattern": "^[A-Za-z0-9_-]{8,128}$"}));
    assert_eq!(
        key,
        json!({"type": "string", "pattern": "^[A-Za-z0-9_-]{8,128}$"})
    );
    // Array bounds stay.
    let list = schema(json!({"type": "array", "items": {"type": "string"}, "maxItems": 100}));
    assert_eq!(list["maxItems"], 100);
}
