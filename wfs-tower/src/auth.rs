//! Who is calling: API key pair or bearer token, plus scope and address checks.

use crate::error::ApiError;
use crate::service::Shared;
use http::StatusCode;
use http::request::Parts;
use std::net::{IpAddr, SocketAddr};
use wfs_core::domain::scope::Scope;
use wfs_core::{AdminPrincipal, KeyPrincipal};

/// The TCP peer of a request. The host inserts it as a request extension
/// (`wfs-server` does; see the crate docs for axum and hyper). Without it, keys that
/// carry an `allowedIps` list are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// What a route requires of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// No credentials (sign-in).
    Public,
    /// A sign-in bearer token (key management).
    Admin,
    /// An API key pair carrying this scope.
    Key(Scope),
}

/// The authenticated caller handed to handlers.
#[derive(Debug, Clone)]
pub(crate) enum Caller {
    Anonymous,
    Key(KeyPrincipal),
    Admin(AdminPrincipal),
}

impl Caller {
    /// Scope of this caller's idempotency keys, if any.
    pub(crate) fn idempotency_scope(&self) -> Option<String> {
        match self {
            Caller::Anonymous => None,
            Caller::Key(k) => Some(format!("key:{}", k.key_id)),
            Caller::Admin(a) => Some(format!("admin:{}", a.user_id)),
        }
    }
}

fn header<'a>(parts: &'a Parts, name: &str) -> Option<&'a [u8]> {
    parts
        .headers
        .get(name)
        .map(|v| v.as_bytes())
        .filter(|v| !v.is_empty())
}

impl Shared {
    pub(crate) async fn authenticate(
        &self,
        access: Access,
        parts: &Parts,
    ) -> Result<Caller, ApiError> {
        match access {
            Access::Public => Ok(Caller::Anonymous),
            Access::Admin => {
                let token = header(parts, "authorization")
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .and_then(|v| v.split_once(' '))
                    .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                    .map(|(_, token)| token.trim())
                    .ok_or_else(|| {
                        ApiError::new(StatusCode::UNAUTHORIZED, "Missing bearer access token")
                    })?;
                Ok(Caller::Admin(self.wfs.authenticate_admin(token).await?))
            }
            Access::Key(scope) => {
                let (Some(id), Some(secret)) =
                    (header(parts, "x-api-key"), header(parts, "x-api-secret"))
                else {
                    return Err(wfs_core::Error::Unauthenticated(
                        wfs_core::AuthFailure::MissingCredentials,
                    )
                    .into());
                };
                // Non-UTF-8 credentials cannot match any key.
                let id = std::str::from_utf8(id).unwrap_or_default();
                let secret = std::str::from_utf8(secret).unwrap_or_default();
                let key = self.wfs.authenticate_key(id, secret).await?;
                if !key.scopes.contains(scope) {
                    return Err(ApiError::new(
                        StatusCode::FORBIDDEN,
                        format!("Missing required scope: {scope}"),
                    ));
                }
                if !key.allowed_ips.allows(self.client_ip(parts)) {
                    return Err(ApiError::new(
                        StatusCode::FORBIDDEN,
                        "Address not allowed for this API key",
                    ));
                }
                if let Some(limiter) = &self.limiter
                    && let Err(not_until) = limiter.check_key(&key.key_id)
                {
                    let wait =
                        not_until.wait_time_from(governor::clock::Clock::now(limiter.clock()));
                    return Err(ApiError::too_many_requests(wait));
                }
                self.record_key_use(&key);
                Ok(Caller::Key(key))
            }
        }
    }

    /// The caller's address: the TCP peer, or, when the peer is a configured trusted
    /// proxy, the nearest untrusted address in `X-Forwarded-For`.
    pub(crate) fn client_ip(&self, parts: &Parts) -> Option<IpAddr> {
        let peer = parts.extensions.get::<PeerAddr>()?.0.ip().to_canonical();
        let trusted = |ip: &IpAddr| self.config.trusted_proxies.contains(&ip.to_canonical());
        if !trusted(&peer) {
            return Some(peer);
        }
        let forwarded: Vec<IpAddr> = parts
            .headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|s| s.trim().parse::<IpAddr>().ok())
            .map(|ip| ip.to_canonical())
            .collect();
        Some(
            forwarded
                .into_iter()
                .rev()
                .find(|ip| !trusted(ip))
                .unwrap_or(peer),
        )
    }

    /// Refreshes `lastUsedAt` off the request path, at most once a minute per key and
    /// process: the request never waits for the write.
    fn record_key_use(&self, key: &KeyPrincipal) {
        if !self.wfs.api_key_use_is_stale(key) {
            return;
        }
        let now = self.wfs.now();
        {
            let mut touched = self.touched.lock().unwrap_or_else(|p| p.into_inner());
            match touched.get(&key.key_id) {
                Some(at) if now - *at < wfs_core::service::api_keys::LAST_USED_GRANULARITY => {
                    return;
                }
                _ => {
                    touched.insert(key.key_id, now);
                }
            }
        }
        let wfs = self.wfs.clone();
        let id = key.key_id;
        tokio::spawn(async move {
            if let Err(err) = wfs.touch_api_key(id).await {
                tracing::warn!(key_id = %id, error = %err, "could not record API key use");
            }
        });
    }
}
