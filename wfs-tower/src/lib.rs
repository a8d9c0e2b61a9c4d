//! The External Workforce Scheduling API as a plain `tower::Service` over `http`
//! types: no web framework inside, so any host can mount it.
//!
//! [`WfsService`] routes full paths under `/external/v1`, authenticates (API key
//! pair or bearer token), checks scopes and allowlists, applies idempotency to
//! writes, limits bodies, and answers every error with the spec's JSON body.
//!
//! Every answer carries `X-Request-Id`, and every request is counted in the metrics
//! of [`telemetry`] (recorded through the `metrics` facade: the host installs the
//! exporter). `GET /external/v1/docs` serves an interactive API reference (Swagger UI,
//! compiled in) over `GET /external/v1/openapi.json`.
//!
//! # Mounting
//!
//! The service expects the full path, so mount it where the host keeps it intact.
//! For the address allowlist, the host inserts the TCP peer as a [`PeerAddr`]
//! request extension.
//!
//! ```no_run
//! # async fn demo(wfs: wfs_core::Wfs) {
//! // axum: `fallback_service` and `route_service` keep the full path.
//! let app: axum::Router = axum::Router::new().fallback_service(wfs_tower::WfsService::new(wfs));
//! # }
//! ```
//!
//! With bare hyper, wrap it in `hyper_util::service::TowerToHyperService`; see
//! `examples/hyper_server.rs` in the repository.
//!
//! # Stability
//!
//! As in `wfs-core` (its docs, "Stability"): everything shown here is covered by
//! semver; [`Config`] and the error enums are `#[non_exhaustive]` and grow in minor
//! releases (build `Config` from `Config::default()` and its setters); the HTTP API
//! itself follows the specification's versioning (`/external/v1`).
#![warn(missing_docs)]

mod audit;
mod auth;
mod body;
mod conditional;
mod config;
mod dto;
pub mod error;
mod extract;
mod handlers;
mod held;
mod openapi;
mod panic;
mod rate_limit;
#[cfg(feature = "redis")]
mod redis_conn;
/// Without the `redis` feature there is no Redis to connect to: the connection type
/// has no value, so every count stays in the process.
#[cfg(not(feature = "redis"))]
mod redis_conn {
    /// No value of it exists.
    pub(crate) enum RedisConn {}

    impl RedisConn {
        /// Always `None`; a `redis_url` (which `Config::validate` refuses in this build)
        /// is logged and ignored.
        pub(crate) fn open(config: &crate::Config) -> Option<std::sync::Arc<Self>> {
            if config.redis_url.is_some() {
                tracing::error!(
                    "redis_url is set, but wfs-tower was built without its `redis` feature: every count stays in this process"
                );
            }
            None
        }
    }
}
mod redis_url;
mod reply;
mod request_id;
mod router;
mod service;
#[cfg(feature = "redis")]
mod sign_in_throttle;
pub mod telemetry;
mod unknown_keys;

pub use auth::PeerAddr;
pub use body::{BodyError, ResponseBody};
pub use config::{Config, ConfigError, DEFAULT_BODY_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, RateLimit};
pub use error::ApiError;
pub use held::{
    DEFAULT_MAX_HELD, DEFAULT_MAX_HELD_PER_ADDRESS, DEFAULT_MAX_HELD_PER_COMPANY,
    DEFAULT_MAX_HELD_PER_KEY,
};
pub use openapi::{openapi, openapi_json, openapi_yaml};
pub use panic::install_panic_hook;
pub use request_id::stamp_response;
pub use service::WfsService;
