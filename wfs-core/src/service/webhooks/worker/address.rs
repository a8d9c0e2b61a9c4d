//! Which addresses an attempt may reach: see "Addresses" in the worker's docs.

use crate::domain::webhook::{AttemptError, never_resolves, non_public_reason};
use std::net::{IpAddr, SocketAddr};

/// Why a host cannot be connected to: found before an attempt, or by the HTTP
/// client's resolver while connecting (then it is a cause of the client's error).
#[derive(Debug)]
pub(super) enum HostError {
    /// The name did not resolve.
    NotResolved(std::io::Error),
    /// The host is, or resolves to, an address that is not globally routable unicast.
    NotAllowed { ip: IpAddr, block: &'static str },
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotResolved(err) => write!(f, "the host name did not resolve: {err}"),
            Self::NotAllowed { ip, block } => write!(f, "address {ip} is not allowed: {block}"),
        }
    }
}

// The resolver's error is in the text, not a `source`: the log would print it twice.
impl std::error::Error for HostError {}

impl HostError {
    pub(super) fn attempt_error(&self) -> AttemptError {
        match self {
            Self::NotResolved(_) => AttemptError::NotResolved,
            Self::NotAllowed { .. } => AttemptError::AddressNotAllowed,
        }
    }
}

/// Resolves `host`; unless private addresses are allowed, refuses it when any of its
/// addresses is not globally routable unicast.
pub(super) async fn resolve(
    host: &str,
    port: u16,
    allow_private: bool,
) -> std::result::Result<Vec<SocketAddr>, HostError> {
    if never_resolves(host) {
        return Err(HostError::NotResolved(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "a name under .invalid never resolves (RFC 6761)",
        )));
    }
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(HostError::NotResolved)?
        .collect();
    if !allow_private {
        judge(addrs.iter().map(SocketAddr::ip))?;
    }
    Ok(addrs)
}

/// Refuses the first address that is not globally routable unicast.
pub(super) fn judge(ips: impl IntoIterator<Item = IpAddr>) -> std::result::Result<(), HostError> {
    for ip in ips {
        if let Some(block) = non_public_reason(ip) {
            return Err(HostError::NotAllowed { ip, block });
        }
    }
    Ok(())
}

/// The HTTP client's resolver: the addresses it connects to are judged when private
/// addresses are not allowed, and its failures are [`HostError`]s either way, so that
/// `lastError` can tell them apart.
#[derive(Debug)]
pub(super) struct Resolver {
    pub(super) allow_private: bool,
}

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        let allow_private = self.allow_private;
        Box::pin(async move {
            let addrs = resolve(&host, 0, allow_private).await?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_clients_resolver_refuses_names_that_resolve_to_non_public_addresses() {
        use reqwest::dns::Resolve as _;
        let strict = Resolver {
            allow_private: false,
        };
        let err = match strict.resolve("localhost".parse().unwrap()).await {
            Ok(addrs) => panic!("resolved to {:?}", addrs.collect::<Vec<_>>()),
            Err(err) => err,
        };
        let refused = err.downcast_ref::<HostError>().expect("a HostError");
        assert!(
            matches!(refused, HostError::NotAllowed { ip, block: "loopback (127.0.0.0/8)" | "loopback (::1)" } if ip.is_loopback()),
            "{refused}"
        );
        assert_eq!(refused.attempt_error(), AttemptError::AddressNotAllowed);
        let lenient = Resolver {
            allow_private: true,
        };
        let addrs: Vec<_> = match lenient.resolve("localhost".parse().unwrap()).await {
            Ok(addrs) => addrs.collect(),
            Err(err) => panic!("{err}"),
        };
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
        // A name that cannot resolve (RFC 6761's .invalid) is told apart.
        let unknown = resolve("no-such-host.invalid", 443, true)
            .await
            .unwrap_err();
        assert_eq!(unknown.attempt_error(), AttemptError::NotResolved);
    }

    #[test]
    fn literal_addresses_are_judged_with_the_domain_rules() {
        for ip in [
            "127.0.0.1",
            "::1",
            "64:ff9b::7f00:1",
            "2002:a00:1::1",
            "198.18.0.1",
        ] {
            let err = judge([ip.parse().unwrap()]).unwrap_err();
            assert_eq!(err.attempt_error(), AttemptError::AddressNotAllowed, "{ip}");
        }
        assert!(judge(["93.184.216.34".parse().unwrap()]).is_ok());
    }
}
