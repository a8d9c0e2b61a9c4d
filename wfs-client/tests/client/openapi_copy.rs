//! The package carries its own copy of the OpenAPI document, `wfs-client/openapi.yaml`,
//! because `build.rs` may only read files inside the package (a published crate has no
//! `../openapi.yaml`). The copy must be exactly the workspace's `openapi.yaml`, the
//! document the server emits, or the client would speak an older API than the server.

use std::fs;
use std::path::Path;

const REFRESH: &str = "cp openapi.yaml wfs-client/openapi.yaml";

#[test]
fn the_packaged_openapi_yaml_is_the_workspace_document() {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = fs::read_to_string(package.join("openapi.yaml")).unwrap_or_else(|e| {
        panic!("wfs-client/openapi.yaml: {e}; create it with\n\n    {REFRESH}\n")
    });

    // Outside the workspace (the published package, unpacked) there is nothing to
    // compare with; inside it, the workspace's document must be there.
    let in_workspace = fs::read_to_string(package.join("../Cargo.toml"))
        .is_ok_and(|manifest| manifest.contains("[workspace]") && manifest.contains("wfs-client"));
    if !in_workspace {
        return;
    }
    let workspace = fs::read_to_string(package.join("../openapi.yaml"))
        .expect("the workspace's openapi.yaml, next to the workspace Cargo.toml");

    if copy != workspace {
        let line = copy
            .lines()
            .zip(workspace.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| copy.lines().count().min(workspace.lines().count()))
            + 1;
        panic!(
            "wfs-client/openapi.yaml differs from the workspace's openapi.yaml (first at line \
             {line}); the client is generated from the copy. From the workspace root, refresh \
             it with\n\n    {REFRESH}\n\n(after regenerating openapi.yaml itself with \
             `cargo run -p wfs-server -- openapi > openapi.yaml` if the routes changed)\n"
        );
    }
}
