//! `openapi.yaml` is what the annotations emit, and it is a valid document.

use std::path::PathBuf;

fn committed() -> (PathBuf, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../openapi.yaml");
    let text = std::fs::read_to_string(&path).expect("openapi.yaml at the repository root");
    (path, text)
}

#[test]
fn the_committed_openapi_yaml_is_up_to_date() {
    let (path, text) = committed();
    assert!(
        text == wfs_tower::openapi_yaml(),
        "{} is stale: regenerate it with\n\n    cargo run -p wfs-server -- openapi > openapi.yaml\n",
        path.display()
    );
}

#[test]
fn json_and_yaml_are_the_same_document() {
    let from_json: serde_json::Value = serde_json::from_str(&wfs_tower::openapi_json()).unwrap();
    let from_yaml: serde_json::Value = yaml_serde::from_str(&wfs_tower::openapi_yaml()).unwrap();
    assert_eq!(from_json, from_yaml);
    assert_eq!(from_json["openapi"], "3.1.0");
}
