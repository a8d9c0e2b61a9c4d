//! Generates the typed client from the workspace's `openapi.yaml`.
//!
//! The document is what the server's utoipa annotations emit (OpenAPI 3.1). progenitor
//! only reads 3.0, so it is first downgraded (see `build/downgrade.rs`), then handed to
//! progenitor; the pretty-printed code lands in `$OUT_DIR/codegen.rs` and `src/lib.rs`
//! includes it as `wfs_client::generated`.

#[path = "build/downgrade.rs"]
mod downgrade;

use std::{env, fs, path::PathBuf};

use progenitor::{GenerationSettings, Generator, HooksMode, InterfaceStyle, TagStyle};

const SPEC: &str = "../openapi.yaml";

fn main() {
    println!("cargo:rerun-if-changed={SPEC}");
    println!("cargo:rerun-if-changed=build/downgrade.rs");

    let yaml = fs::read_to_string(SPEC).unwrap_or_else(|e| panic!("cannot read {SPEC}: {e}"));
    let mut doc: serde_json::Value =
        yaml_serde::from_str(&yaml).unwrap_or_else(|e| panic!("{SPEC} is not YAML: {e}"));
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
    let mut generator = Generator::new(&settings);
    let tokens = generator
        .generate_tokens(&spec)
        .unwrap_or_else(|e| panic!("progenitor failed on {SPEC}: {e}"));
    let file: syn::File = syn::parse2(tokens).expect("progenitor emitted invalid Rust");
    let code = prettyplease::unparse(&file);

    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    fs::write(out.join("codegen.rs"), code).expect("cannot write codegen.rs");
}
