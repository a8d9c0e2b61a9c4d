//! THE ACCEPTANCE TEST: every operation of `openapi.yaml` is in the generated client and
//! has a method of the same name in the ergonomic layer. The operations come from the
//! document itself, so a new server route fails this test until the client covers it.

use std::fs;
use std::path::{Path, PathBuf};

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

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn declares(source: &str, prefix: &str, name: &str) -> bool {
    [format!("{prefix} {name}("), format!("{prefix} {name}<")]
        .iter()
        .any(|decl| source.contains(decl.as_str()))
}

#[test]
fn every_operation_is_generated_and_wrapped() {
    let ids = operation_ids();
    assert!(!ids.is_empty(), "openapi.yaml lists no operations");

    let generated = fs::read_to_string(concat!(env!("OUT_DIR"), "/codegen.rs"))
        .expect("read the generated code");

    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let layer: String = files
        .iter()
        .map(|f| fs::read_to_string(f).expect("read a source file"))
        .collect::<Vec<_>>()
        .join("\n");

    let mut missing = Vec::new();
    for id in &ids {
        if !declares(&generated, "pub async fn", id) {
            missing.push(format!("{id}: not in the generated client"));
        }
        let wrapped = if id == "sign_in" {
            declares(&layer, "fn", id)
        } else {
            declares(&layer, "pub async fn", id) || declares(&layer, "pub fn", id)
        };
        if !wrapped {
            missing.push(format!("{id}: no method in the ergonomic layer (src/)"));
        }
    }
    assert!(
        missing.is_empty(),
        "{} operations, problems:\n{}",
        ids.len(),
        missing.join("\n")
    );
}
