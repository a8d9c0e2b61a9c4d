//! The TLS stack webhook delivery speaks, as the crate's features chose it.
//!
//! With `rustls-ring` or `rustls-aws-lc-rs` the client gets a rustls configuration
//! built here on that feature's provider (with the platform's roots, as reqwest's own
//! default would), whatever the process default is: with `rustls-ring` reqwest has no
//! provider of its own (`rustls-no-provider`).

use crate::error::Result;

/// A client builder over the features' TLS stack.
#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))]
pub(super) fn client_builder() -> Result<reqwest::ClientBuilder> {
    use crate::error::Error;
    use std::sync::Arc;
    let provider = Arc::new(crate::crypto::rustls_provider());
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
        .map_err(|e| Error::internal(format!("webhook TLS: no certificate verifier: {e}")))?;
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::internal(format!("webhook TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(reqwest::Client::builder().tls_backend_preconfigured(config))
}

/// The platform's TLS (`native-tls`).
#[cfg(not(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs")))]
pub(super) fn client_builder() -> Result<reqwest::ClientBuilder> {
    Ok(reqwest::Client::builder().tls_backend_native())
}

/// Whether `cause` is the TLS stack's own error (a failed handshake, a refused
/// certificate), as opposed to the connection's.
pub(super) fn is_tls_error(cause: &(dyn std::error::Error + 'static)) -> bool {
    #[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))]
    if cause.is::<rustls::Error>() {
        return true;
    }
    #[cfg(feature = "native-tls")]
    if cause.is::<native_tls::Error>() {
        return true;
    }
    let _ = cause;
    false
}
