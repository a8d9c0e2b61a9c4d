//! Rewrites an OpenAPI 3.1 document (as the server's utoipa annotations emit it) into
//! the 3.0.3 dialect that progenitor 0.15 accepts.
//!
//! Why: progenitor's `openapiv3` model cannot parse 3.1's `type: [T, "null"]`, and the
//! generator refuses any version that is not `3.0.x`; utoipa has no 3.0 output. The
//! rewrite is lossless for the constructs the server emits (see docs/dependencies.md, section 3).
//! It lives in its own file so that `build.rs` and a unit test can both include it.

use serde_json::{Map, Value, json};

/// Downgrades `root` in place from OpenAPI 3.1 to 3.0.3.
///
/// - `openapi` becomes `3.0.3`; `jsonSchemaDialect`, `webhooks` and
///   `info.license.identifier` (3.1 only) are dropped.
/// - `type: [T, "null"]` becomes `type: T, nullable: true` (several non-null types
///   become an `anyOf`).
/// - `oneOf`/`anyOf: [X, {type: null}]` becomes `allOf: [X], nullable: true` (or X
///   inlined when it is not a `$ref`).
/// - `examples: [..]` becomes `example`, `const` becomes a one-value `enum`, numeric
///   `exclusiveMinimum`/`exclusiveMaximum` become the boolean 3.0 form.
/// - `propertyNames`, `contentMediaType`, `contentEncoding` and `$schema` are dropped.
/// - `maxLength`, `minLength`, and the `pattern` of a string that has a `maxLength`
///   (the server's "no control characters" and format rules) are dropped: typify
///   would turn every such string into a newtype with a fallible constructor, so
///   `title: "Nurse".into()` would no longer compile. The server enforces them and
///   answers a 400 naming the field; the client keeps plain `String`s. A pattern on
///   its own (the `IdempotencyKey` schema) stays, and so do array bounds, which
///   typify leaves as `Vec`.
/// - `nullable` is stripped from parameter schemas: an absent parameter already means
///   "no value", and progenitor would otherwise generate `Option<Option<&str>>`
///   arguments that do not compile.
pub(crate) fn downgrade(root: &mut Value) {
    if let Some(o) = root.as_object_mut() {
        o.insert("openapi".into(), json!("3.0.3"));
        o.remove("jsonSchemaDialect");
        o.remove("webhooks");
        if let Some(license) = o
            .get_mut("info")
            .and_then(|i| i.get_mut("license"))
            .and_then(Value::as_object_mut)
        {
            license.remove("identifier");
        }
    }
    walk(root);
}

fn walk(v: &mut Value) {
    match v {
        Value::Array(a) => a.iter_mut().for_each(walk),
        Value::Object(o) => {
            o.values_mut().for_each(walk);
            fix_object(o);
        }
        _ => {}
    }
}

fn is_null_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("null")
}

fn fix_object(o: &mut Map<String, Value>) {
    // A parameter object: its (already rewritten) schema must not be nullable.
    if o.get("in").is_some_and(Value::is_string) && o.contains_key("schema") {
        if let Some(s) = o.get_mut("schema").and_then(Value::as_object_mut) {
            s.remove("nullable");
        }
        return;
    }

    fix_type_array(o);
    fix_null_alternative(o);
    fix_keywords(o);
}

/// `type: [T, "null"]` -> `type: T, nullable: true`.
fn fix_type_array(o: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = o.get("type").cloned() {
        let non_null: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        let nullable = non_null.len() != types.len();
        match non_null.len() {
            0 => {
                o.remove("type");
            }
            1 => {
                o.insert("type".into(), non_null[0].clone());
            }
            _ => {
                o.remove("type");
                let alts = non_null.into_iter().map(|t| json!({ "type": t })).collect();
                o.insert("anyOf".into(), Value::Array(alts));
            }
        }
        if nullable {
            o.insert("nullable".into(), json!(true));
        }
    }
}

/// `oneOf`/`anyOf: [X, {type: null}]` -> `X` with `nullable: true`.
fn fix_null_alternative(o: &mut Map<String, Value>) {
    for key in ["oneOf", "anyOf"] {
        let Some(Value::Array(alts)) = o.get(key).cloned() else {
            continue;
        };
        if !alts.iter().any(is_null_schema) {
            continue;
        }
        let mut rest: Vec<Value> = alts.into_iter().filter(|a| !is_null_schema(a)).collect();
        o.remove(key);
        o.insert("nullable".into(), json!(true));
        if rest.len() == 1 {
            let only = rest.remove(0);
            if only.get("$ref").is_some() {
                o.insert("allOf".into(), json!([only]));
            } else if let Value::Object(inner) = only {
                for (k, val) in inner {
                    o.entry(k).or_insert(val);
                }
            }
        } else {
            o.insert(key.into(), Value::Array(rest));
        }
    }
}

/// The 3.1-only keywords: `examples`, `const`, numeric exclusive bounds, and the string
/// bounds left to the server.
fn fix_keywords(o: &mut Map<String, Value>) {
    // examples: [..] -> example (only in schemas, where 3.1 made it an array).
    if let Some(Value::Array(examples)) = o.get("examples").cloned() {
        o.remove("examples");
        if let Some(first) = examples.into_iter().next() {
            o.insert("example".into(), first);
        }
    }
    if let Some(c) = o.remove("const") {
        o.insert("enum".into(), json!([c]));
    }
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(n) = o.get(exclusive).filter(|n| n.is_number()).cloned() {
            o.insert(bound.into(), n);
            o.insert(exclusive.into(), json!(true));
        }
    }
    if o.remove("maxLength").is_some() {
        o.remove("pattern");
    }
    for k in [
        "minLength",
        "propertyNames",
        "contentMediaType",
        "contentEncoding",
        "$schema",
    ] {
        o.remove(k);
    }
}
