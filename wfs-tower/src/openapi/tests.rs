use super::*;
use crate::auth::Access;

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
        .filter(|r| r.documented())
        .map(|r| {
            (
                r.method.to_string(),
                r.path.clone(),
                r.operation_id.to_owned(),
            )
        })
        .collect();
    served.sort();
    assert_eq!(documented(), served);
}

#[test]
fn only_the_api_reference_and_the_console_are_left_out_of_the_document() {
    let left_out: Vec<_> = handlers::routes()
        .filter(|r| !r.documented())
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(
        left_out,
        [
            "/external/v1/docs",
            "/external/v1/docs/{file}",
            "/external/v1/console",
            "/external/v1/console/{file}"
        ],
        "only the reference's and the console's pages and assets are not API operations"
    );
}

#[test]
fn security_follows_each_routes_access() {
    let doc = serde_json::to_value(openapi()).unwrap();
    for route in handlers::routes().filter(|r| r.documented()) {
        let op = &doc["paths"][route.path.as_str()][route.method.as_str().to_lowercase()];
        let security = &op["security"];
        match route.facts.access {
            Access::Public => assert_eq!(security, &serde_json::json!([]), "{route:?}"),
            Access::Admin => {
                assert_eq!(security, &serde_json::json!([{ "bearerAuth": [] }]));
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
        match (route.writes(), route.facts.access) {
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
    for route in handlers::routes().filter(|r| r.documented()) {
        let op = &doc["paths"][route.path.as_str()][route.method.as_str().to_lowercase()];
        for (status, response) in op["responses"].as_object().unwrap() {
            let at = format!("{} {} {status}", route.method, route.path);
            assert_eq!(
                header(response, "X-Request-Id").as_deref(),
                Some("#/components/headers/XRequestId"),
                "{at}"
            );
            let (limit, policy) = match route.facts.access {
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
        if matches!(route.facts.access, Access::Key(_)) {
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
                if status.starts_with('4') || status.starts_with('5') {
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

#[test]
fn reads_declare_etag_and_304_and_the_guarded_writes_if_match_and_412() {
    let doc = serde_json::to_value(openapi()).unwrap();
    let header_params = |op: &serde_json::Value| -> Vec<String> {
        op["parameters"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .filter(|p| p["in"] == "header")
                    .map(|p| p["name"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut guarded = Vec::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for (method, op) in item.as_object().unwrap() {
            let public = op["security"] == serde_json::json!([]);
            let headers = header_params(op);
            if method == "get" && !public {
                assert!(
                    headers.contains(&"If-None-Match".to_owned()),
                    "{}",
                    op["operationId"]
                );
                assert!(op["responses"]["304"].is_object(), "{}", op["operationId"]);
                assert!(
                    op["responses"]["304"]["content"].is_null(),
                    "a 304 has no body"
                );
                assert_eq!(
                    op["responses"]["200"]["headers"]["ETag"]["$ref"],
                    "#/components/headers/ETag"
                );
            }
            if headers.contains(&"If-Match".to_owned()) {
                assert!(op["responses"]["412"].is_object(), "{}", op["operationId"]);
                guarded.push(op["operationId"].as_str().unwrap().to_owned());
            }
        }
    }
    guarded.sort();
    assert_eq!(
        guarded,
        [
            "cancel_shift",
            "deactivate_staff",
            "delete_job_role",
            "update_job_role",
            "update_location"
        ]
    );
}
