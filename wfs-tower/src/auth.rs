//! Who is calling: API key pair or bearer token, plus scope and address checks.

use crate::config::Config;
use crate::error::ApiError;
use crate::rate_limit::{KeyLimiter, LimitReport};
use crate::redis_conn::RedisConn;
use crate::unknown_keys::{self, Budget, Described, UnknownKeyReads};
use chrono::{DateTime, Utc};
use http::request::Parts;
use http::{HeaderMap, StatusCode};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use wfs_core::domain::scope::Scope;
use wfs_core::{AdminPrincipal, KeyPrincipal};
use wfs_core::{ApiKeyId, Wfs};

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
            // The admin's keys in one company are not theirs in another.
            Caller::Admin(a) => Some(format!("admin:{}:{}", a.company_id, a.user_id)),
        }
    }
}

fn header<'a>(parts: &'a Parts, name: &str) -> Option<&'a [u8]> {
    parts
        .headers
        .get(name)
        .map(http::HeaderValue::as_bytes)
        .filter(|v| !v.is_empty())
}

/// Owns everything about who is calling: credentials (key pair or bearer token),
/// the caller's address, scope, the per-key rate limit and the `lastUsedAt`
/// write-behind. The service asks it once per request.
pub(crate) struct Authenticator {
    wfs: Wfs,
    trusted_proxies: Vec<IpAddr>,
    limiter: Option<KeyLimiter>,
    /// Keys whose use this process recorded recently (see `record_key_use`).
    touched: Mutex<HashMap<ApiKeyId, DateTime<Utc>>>,
    /// Each address's budget for reading ids no cache knows.
    unknown_reads: UnknownKeyReads,
}

impl Authenticator {
    /// The authenticator `config` asks for; the rate limit counts in `redis` when
    /// there is one.
    pub(crate) fn new(wfs: Wfs, config: &Config, redis: Option<&Arc<RedisConn>>) -> Self {
        Self {
            wfs,
            trusted_proxies: config.trusted_proxies.clone(),
            limiter: config
                .rate_limit
                .map(|limit| KeyLimiter::new(limit, redis.cloned())),
            touched: Mutex::new(HashMap::new()),
            unknown_reads: UnknownKeyReads::default(),
        }
    }

    /// The caller of a request to a route with `access`, or the answer that refuses
    /// it, in the order of checks: credentials (401), address (403), scope (403),
    /// rate limit (429). `limited` receives whose limit the answer reports: the key's
    /// when the rate limit was consulted (a key passed every other check), the
    /// address's budget for unknown keys when a key was refused with 401 or 403.
    pub(crate) async fn authenticate(
        &self,
        access: Access,
        parts: &Parts,
        client_ip: Option<IpAddr>,
        limited: &mut Option<LimitReport>,
        request: Described<'_>,
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
                let budget = self.unknown_reads.of(client_ip, request);
                let key = match self.usable_key(scope, parts, client_ip, &budget).await {
                    Ok(key) => key,
                    Err(refused) => {
                        let status = refused.status();
                        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                            *limited = budget.standing().map(LimitReport::Address);
                        }
                        return Err(refused);
                    }
                };
                if let Some(limiter) = &self.limiter {
                    match limiter.check(&key.key_id).await {
                        Ok(now) => *limited = Some(LimitReport::Key(now)),
                        Err((now, wait)) => {
                            *limited = Some(LimitReport::Key(now));
                            return Err(ApiError::too_many_requests(wait));
                        }
                    }
                }
                self.record_key_use(&key);
                Ok(Caller::Key(key))
            }
        }
    }

    /// The key of a request, if its credentials are valid and it may be used from
    /// `client_ip` for `scope`.
    async fn usable_key(
        &self,
        scope: Scope,
        parts: &Parts,
        client_ip: Option<IpAddr>,
        budget: &Budget<'_>,
    ) -> Result<KeyPrincipal, ApiError> {
        let (Some(id), Some(secret)) = (header(parts, "x-api-key"), header(parts, "x-api-secret"))
        else {
            return Err(wfs_core::Error::Unauthenticated(
                wfs_core::AuthFailure::MissingCredentials,
            )
            .into());
        };
        // Non-UTF-8 credentials cannot match any key.
        let id = std::str::from_utf8(id).unwrap_or_default();
        let secret = std::str::from_utf8(secret).unwrap_or_default();
        let key = self.wfs.authenticate_key_with(id, secret, budget).await?;
        // Address before scope: a caller at a refused address learns nothing about
        // what the key may do.
        if !key.allowed_ips.allows(client_ip) {
            // The right secret from elsewhere: what the allowlist exists to catch.
            self.wfs
                .record_key_address_refused(&key, || {
                    wfs_core::service::api_keys::KeyReadBudget::request(budget)
                })
                .await;
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "Address not allowed for this API key",
            ));
        }
        if !key.scopes.contains(scope) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!("Missing required scope: {scope}"),
            ));
        }
        Ok(key)
    }

    /// Sets the RateLimit fields of an answer whose caller stands so.
    pub(crate) fn write_rate_limit_headers(&self, limited: LimitReport, headers: &mut HeaderMap) {
        match limited {
            LimitReport::Key(standing) => {
                if let Some(limiter) = &self.limiter {
                    limiter.write_headers(standing, headers);
                }
            }
            LimitReport::Address(standing) => unknown_keys::write_headers(standing, headers),
        }
    }

    /// The caller's address: the TCP peer, or, when the peer is a configured trusted
    /// proxy, the nearest `X-Forwarded-For` entry that is not a trusted proxy (read
    /// from the right). `None` when it cannot be known: no peer, or that entry is not
    /// a bare IP address (`ip:port`, `[v6]`, `unknown`, garbage), which then matches
    /// no `allowedIps` entry: the check fails closed rather than skipping to an entry
    /// further left that the client may have written itself.
    pub(crate) fn client_ip(&self, parts: &Parts) -> Option<IpAddr> {
        let peer = parts.extensions.get::<PeerAddr>()?.0.ip().to_canonical();
        client_ip(peer, &self.trusted_proxies, &parts.headers)
    }

    /// Refreshes `lastUsedAt` off the request path, at most once a minute per key and
    /// process: the request never waits for the write.
    fn record_key_use(&self, key: &KeyPrincipal) {
        if !self.wfs.api_key_use_is_stale(key) {
            return;
        }
        let now = self.wfs.now();
        {
            let mut touched = self.touched.lock();
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

/// See [`Authenticator::client_ip`].
pub(crate) fn client_ip(
    peer: IpAddr,
    trusted_proxies: &[IpAddr],
    headers: &http::HeaderMap,
) -> Option<IpAddr> {
    let trusted = |ip: &IpAddr| trusted_proxies.contains(&ip.to_canonical());
    if !trusted(&peer) {
        return Some(peer);
    }
    let values: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .map(|v| v.to_str().ok())
        .collect::<Option<_>>()?;
    for entry in values.iter().rev().flat_map(|v| v.rsplit(',')) {
        match entry.trim().parse::<IpAddr>() {
            Ok(ip) if trusted(&ip) => continue,
            Ok(ip) => return Some(ip.to_canonical()),
            Err(_) => return None,
        }
    }
    Some(peer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PROXY: &str = "10.0.0.1";

    fn resolve(xff: &[&str]) -> Option<IpAddr> {
        let mut headers = http::HeaderMap::new();
        for v in xff {
            headers.append("x-forwarded-for", v.parse().unwrap());
        }
        client_ip(PROXY.parse().unwrap(), &[PROXY.parse().unwrap()], &headers)
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn the_nearest_untrusted_entry_is_the_client() {
        assert_eq!(resolve(&["203.0.113.9"]), ip("203.0.113.9"));
        assert_eq!(resolve(&["1.1.1.1, 203.0.113.9"]), ip("203.0.113.9"));
        assert_eq!(
            resolve(&["1.1.1.1", "203.0.113.9, 10.0.0.1"]),
            ip("203.0.113.9")
        );
        assert_eq!(resolve(&["::ffff:203.0.113.9"]), ip("203.0.113.9"));
        assert_eq!(resolve(&[]), ip(PROXY), "no header: the proxy itself");
    }

    #[test]
    fn an_entry_that_is_not_a_bare_ip_fails_closed() {
        for bad in [
            "203.0.113.9:443",
            "[2001:db8::1]:443",
            "[2001:db8::1]",
            "unknown",
            "",
            "not an address",
        ] {
            // The spoofable entry on the left must not be reached.
            assert_eq!(resolve(&[&format!("198.51.100.7, {bad}")]), None, "{bad:?}");
        }
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        let mut headers = http::HeaderMap::new();
        headers.append("x-forwarded-for", "198.51.100.7".parse().unwrap());
        let peer: IpAddr = "203.0.113.9".parse().unwrap();
        assert_eq!(
            client_ip(peer, &[PROXY.parse().unwrap()], &headers),
            Some(peer)
        );
    }

    proptest! {
        #[test]
        fn any_header_resolves_without_panicking(values in proptest::collection::vec("[ -~]{0,80}", 0..4)) {
            let mut headers = http::HeaderMap::new();
            for v in &values {
                if let Ok(v) = v.parse() {
                    headers.append("x-forwarded-for", v);
                }
            }
            let got = client_ip(PROXY.parse().unwrap(), &[PROXY.parse().unwrap()], &headers);
            // Whatever it resolves to appears in the header or is the proxy itself.
            if let Some(got) = got {
                let listed = values.iter().flat_map(|v| v.split(','))
                    .filter_map(|e| e.trim().parse::<IpAddr>().ok())
                    .any(|e| e.to_canonical() == got);
                prop_assert!(listed || got == PROXY.parse::<IpAddr>().unwrap());
            }
        }
    }
}
