//! Generates the typed client from `openapi.yaml`.
//!
//! It reads the package's own copy, `wfs-client/openapi.yaml`, so that the published
//! crate builds on its own. The copy must equal the workspace's `openapi.yaml` (what the
//! server emits): `tests/openapi_copy.rs` fails while they differ, and a build in the
//! workspace warns. Refresh it with `cp openapi.yaml wfs-client/openapi.yaml`.
//!
//! The document is what the server's utoipa annotations emit (OpenAPI 3.1). progenitor
//! only reads 3.0, so it is first downgraded (see `build/downgrade.rs`), then handed to
//! progenitor; the pretty-printed code lands in `$OUT_DIR/codegen.rs` and `src/lib.rs`
//! includes it as `wfs_client::generated`.
//!
//! Three schemas are not generated but replaced by hand-written types: the PATCH bodies
//! `UpdateJobRoleRequest`, `UpdateLocationRequest` and `UpdateEndpointRequest`, whose
//! nullable fields have three states (absent keeps, `null` clears, a value sets) that
//! progenitor's `Option<T>` + `skip_serializing_if` cannot express. See `src/patch.rs`.

#[path = "build/downgrade.rs"]
mod downgrade;

use std::{env, fs, path::PathBuf};

use progenitor::{GenerationSettings, Generator, HooksMode, InterfaceStyle, TagStyle, TypeImpl};

/// The package's copy of the document, read by this build.
const SPEC: &str = "openapi.yaml";
/// The workspace's document, absent from the published package.
const WORKSPACE_SPEC: &str = "../openapi.yaml";

/// Schemas mapped to hand-written types instead of generated ones: (schema name, Rust
/// path). The generated code names the path, and `wfs_client::types` re-exports it.
const REPLACED: [(&str, &str); 3] = [
    ("UpdateJobRoleRequest", "crate::patch::UpdateJobRoleRequest"),
    (
        "UpdateLocationRequest",
        "crate::patch::UpdateLocationRequest",
    ),
    (
        "UpdateEndpointRequest",
        "crate::patch::UpdateEndpointRequest",
    ),
];

fn main() {
    println!("cargo:rerun-if-changed={SPEC}");
    println!("cargo:rerun-if-changed=build/downgrade.rs");

    let yaml = fs::read_to_string(SPEC).unwrap_or_else(|e| panic!("cannot read {SPEC}: {e}"));
    warn_if_stale(&yaml);
    let mut doc: serde_json::Value =
        yaml_serde::from_str(&yaml).unwrap_or_else(|e| panic!("{SPEC} is not YAML: {e}"));
    for (schema, _) in REPLACED {
        // typify ignores a replacement whose schema is gone: fail instead of silently
        // generating nothing for it (or a renamed schema with the old limitation).
        assert!(
            doc["components"]["schemas"].get(schema).is_some(),
            "{SPEC} has no schema {schema}: update REPLACED in build.rs and src/patch.rs"
        );
    }
    downgrade::downgrade(&mut doc);
    let spec: openapiv3::OpenAPI = serde_json::from_value(doc)
        .unwrap_or_else(|e| panic!("{SPEC}, downgraded to 3.0.3, is not OpenAPI: {e}"));

    let mut settings = GenerationSettings::new();
    settings
        .with_interface(InterfaceStyle::Positional)
        .with_tag(TagStyle::Merged)
        // The ergonomic layer implements `ClientHooks` itself: authentication headers,
        // retries with the same request (so the same Idempotency-Key) and error-body
        // normalisation all happen in `exec`, for the escape hatch too.
        .with_hooks(HooksMode::Expected)
        .with_inner_type(
            "crate::transport::Transport"
                .parse()
                .expect("a valid type path"),
        );
    for (schema, path) in REPLACED {
        // The replacements implement `Default` (typify asks, for types that embed them).
        settings.with_replacement(schema, path, [TypeImpl::Default].into_iter());
    }
    let mut generator = Generator::new(&settings);
    let tokens = generator
        .generate_tokens(&spec)
        .unwrap_or_else(|e| panic!("progenitor failed on {SPEC}: {e}"));
    let file: syn::File = syn::parse2(tokens).expect("progenitor emitted invalid Rust");
    let code = prettyplease::unparse(&file);

    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    fs::write(out.join("codegen.rs"), code).expect("cannot write codegen.rs");
}

/// In the workspace, warns when the copy differs from the workspace's document (the
/// test `openapi_copy` fails then too). The published package has no such file.
fn warn_if_stale(copy: &str) {
    let Ok(workspace) = fs::read_to_string(WORKSPACE_SPEC) else {
        return;
    };
    // Only a file that exists: a missing one would rerun this script on every build.
    println!("cargo:rerun-if-changed={WORKSPACE_SPEC}");
    if workspace != copy {
        println!(
            "cargo:warning=wfs-client/{SPEC} differs from the workspace's openapi.yaml: \
             the client is generated from the copy. Refresh it with \
             `cp openapi.yaml wfs-client/openapi.yaml`"
        );
    }
}
