//! THE ACCEPTANCE TEST: every operation of `openapi.yaml` is in the low-level client
//! and has a method of the same name on the client its security names, both generated
//! from the document (`build.rs`, `build/operations.rs`). The operations come from the
//! document itself, so a route the generator would skip fails this test.

use std::fs;
use std::path::Path;

/// Every `operationId` of the document, in document order. It reads the package's copy,
/// which `build.rs` generates from (`openapi_copy.rs` keeps it equal to the workspace's).
fn operation_ids() -> Vec<String> {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.yaml");
    let text = fs::read_to_string(&spec).expect("read openapi.yaml");
    let doc: serde_json::Value = yaml_serde::from_str(&text).expect("openapi.yaml is YAML");
    let paths = doc["paths"].as_object().expect("paths");
    let mut ids = Vec::new();
    for item in paths.values() {
        for (method, op) in item.as_object().expect("path item") {
            if !matches!(
                method.as_str(),
                "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace"
            ) {
                continue;
            }
            let id = op["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("an operation without operationId: {op}"));
            ids.push(id.to_owned());
        }
    }
    ids
}

/// The client each operation's `security` names: the admin's bearer token, or the API
/// key pair (also for the operations that need no credentials).
fn client_of(id: &str) -> &'static str {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.yaml");
    let text = fs::read_to_string(&spec).expect("read openapi.yaml");
    let doc: serde_json::Value = yaml_serde::from_str(&text).expect("openapi.yaml is YAML");
    let op = doc["paths"]
        .as_object()
        .expect("paths")
        .values()
        .flat_map(|item| item.as_object().expect("path item").values())
        .find(|op| op["operationId"] == id)
        .expect("the operation");
    let bearer = op["security"]
        .as_array()
        .is_some_and(|reqs| reqs.iter().any(|r| r.get("bearerAuth").is_some()));
    if bearer { "AdminClient" } else { "WfsClient" }
}

#[test]
fn every_operation_is_generated_and_has_its_method_on_the_client_its_security_names() {
    let ids = operation_ids();
    assert!(!ids.is_empty(), "openapi.yaml lists no operations");

    let generated = fs::read_to_string(concat!(env!("OUT_DIR"), "/codegen.rs"))
        .expect("read the generated code");
    let methods = fs::read_to_string(concat!(env!("OUT_DIR"), "/operations.rs"))
        .expect("read the generated methods");
    // Each `impl crate::X {` block of the generated methods, by client.
    let blocks: Vec<(&str, &str)> = methods
        .split("impl crate::")
        .skip(1)
        .filter_map(|block| block.split_once(" {"))
        .collect();

    let mut missing = Vec::new();
    for id in &ids {
        let declared = format!("pub async fn {id}<");
        if !generated.contains(&declared) {
            missing.push(format!("{id}: not in the low-level client"));
        }
        let client = client_of(id);
        let on: Vec<&str> = blocks
            .iter()
            .filter(|(_, body)| body.contains(&declared))
            .map(|(name, _)| *name)
            .collect();
        if on != [client] {
            missing.push(format!("{id}: a method on {on:?}, not on [{client}] alone"));
        }
    }
    assert!(
        missing.is_empty(),
        "{} operations, problems:\n{}",
        ids.len(),
        missing.join("\n")
    );
}
