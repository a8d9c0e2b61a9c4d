//! The one crypto backend wfs's features chose, and what it means for a host.
//!
//! jsonwebtoken signs with the process's default provider, which it picks from its own
//! features, and panics when its graph turned on both (`aws_lc_rs` from one crate,
//! `rust_crypto` from another) and nobody installed one. wfs turns on the backend
//! of its TLS feature (`rustls-aws-lc-rs`: aws-lc-rs; `rustls-ring` or `native-tls`:
//! RustCrypto), and installs that backend as the process default when a facade is
//! built, unless one is installed already. So wfs's sign-in works whichever backends
//! the graph ends up with, and a host's own `jsonwebtoken` calls work too once a facade
//! exists (a host that signs before it builds one, in a graph with both backends,
//! installs one itself). With one backend in the graph, it is the one installed.
//!
//! rustls is the same story: with `rustls-ring` or `rustls-aws-lc-rs`, wfs builds its
//! own TLS configurations on that feature's provider. With `rustls-ring`, reqwest is
//! built without a provider of its own (`rustls-no-provider`; it has no ring feature),
//! which leaves a host's own reqwest client without a TLS feature (and
//! `rustls::ClientConfig::builder()` in a graph with both providers) no provider to
//! use; with `rustls-aws-lc-rs`, reqwest keeps its aws-lc-rs default. So a facade also
//! installs its feature's rustls provider as the process default, unless one is
//! installed already.

#[cfg(not(any(feature = "sqlite", feature = "postgres")))]
compile_error!("wfs-core needs a database: enable its `sqlite` or `postgres` feature (or both)");

#[cfg(not(any(
    feature = "rustls-ring",
    feature = "rustls-aws-lc-rs",
    feature = "native-tls"
)))]
compile_error!(
    "wfs-core needs one TLS stack: enable its `rustls-ring`, `rustls-aws-lc-rs` or `native-tls` feature"
);

/// Installs the features' jsonwebtoken backend and rustls provider as the process
/// defaults, unless some are installed already (see the module's docs).
pub(crate) fn install_defaults() {
    install_jwt_provider();
    #[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))]
    {
        // Err: a provider is installed already.
        let _ = rustls_provider().install_default();
    }
}

/// The rustls provider of the features: aws-lc-rs when `rustls-aws-lc-rs` is on (also
/// when a host's graph turned on both), else ring.
#[cfg(feature = "rustls-aws-lc-rs")]
pub(crate) fn rustls_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::aws_lc_rs::default_provider()
}

/// See the `rustls-aws-lc-rs` twin.
#[cfg(all(feature = "rustls-ring", not(feature = "rustls-aws-lc-rs")))]
pub(crate) fn rustls_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::ring::default_provider()
}

fn install_jwt_provider() {
    #[cfg(feature = "rustls-aws-lc-rs")]
    let provider = &jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER;
    #[cfg(not(feature = "rustls-aws-lc-rs"))]
    let provider = &jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER;
    // Err: a provider is installed already (by the host, or by another facade).
    let _ = provider.install_default();
}
