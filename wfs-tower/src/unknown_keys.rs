//! The per-address budget for reading API keys that no cache knows.
//!
//! An id the database does not know is remembered as unknown by `wfs-core`, so
//! asking for it again never reads. A flood of *different* made-up ids would still
//! read once each; this budget lets one address find nothing at most
//! [`UNKNOWN_PER_SECOND`] times a second (bursts of [`UNKNOWN_BURST`]). Past it, that
//! address's ids that no cache knows are answered as unknown without a read until the
//! budget refills. Keys in use are cached, so a client that authenticates with its own
//! key is not slowed by the budget; an address spending it on made-up ids may see
//! its own uncached key refused for about a second.
//!
//! Every answer that refuses a key (401, 403) says where its address stands, in the
//! IETF RateLimit fields under the policy `"unknown-key"`
//! (`RateLimit-Policy: "unknown-key";q=20;w=2`, `RateLimit: "unknown-key";r=..;t=..`):
//! a client told `r=0` knows that a key of its own that no cache holds may be
//! refused until `t` seconds have passed.
//!
//! IPv6 addresses count per /64 (one host's usual allocation), so a host cannot
//! spread a flood over the addresses of its own network.

use crate::rate_limit::Standing;
use http::{HeaderMap, HeaderValue};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};
use wfs_core::service::api_keys::KeyReadBudget;
use wfs_core::service::audit::RequestFacts;

/// Reads that found nothing, per address and second.
pub(crate) const UNKNOWN_PER_SECOND: u32 = 10;
/// Reads that found nothing, per address, at once.
pub(crate) const UNKNOWN_BURST: u32 = 20;
/// Tracked addresses above which refilled ones are swept.
const SWEEP_AT: usize = 10_000;
/// The time one read's worth of budget takes to come back.
const INTERVAL: Duration = Duration::from_millis(1000 / UNKNOWN_PER_SECOND as u64);

/// The policy's name in the RateLimit fields.
const POLICY_NAME: &str = "unknown-key";
/// `RateLimit-Policy` of this budget: the burst, refilled over its window.
const POLICY: &str = "\"unknown-key\";q=20;w=2";
const _: () = assert!(UNKNOWN_BURST == 20 && UNKNOWN_BURST / UNKNOWN_PER_SECOND == 2);

/// Where a request comes from, as the budget counts it (and every other per-address
/// limit: `wfs_core::domain::origin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Origin(IpAddr);

impl Origin {
    pub(crate) fn of(ip: IpAddr) -> Self {
        Self(wfs_core::domain::origin::origin(ip))
    }
}

/// Every address's budget: a GCRA per address, kept as the instant its whole burst
/// is back (an address not in the map has it all). Unlike a limiter crate's, it can
/// be read without spending, so every refused answer can say where its address
/// stands. Touched only when a key is refused or no cache knows an id.
#[derive(Debug, Default)]
pub(crate) struct UnknownKeyReads {
    full_at: Mutex<HashMap<Origin, Instant>>,
}

impl UnknownKeyReads {
    /// The budget of a request from `origin` (`None`: the host did not say where it
    /// came from, and nothing is limited).
    pub(crate) fn of<'a>(&'a self, origin: Option<IpAddr>, request: Described<'a>) -> Budget<'a> {
        Budget {
            reads: self,
            origin: origin.map(Origin::of),
            client_ip: origin,
            request,
        }
    }

    fn full_at(&self) -> parking_lot::MutexGuard<'_, HashMap<Origin, Instant>> {
        self.full_at.lock()
    }
}

/// One request's view of its address's budget.
pub(crate) struct Budget<'a> {
    reads: &'a UnknownKeyReads,
    origin: Option<Origin>,
    client_ip: Option<IpAddr>,
    /// The request, described only if a refused key's audit entry asks.
    request: Described<'a>,
}

/// What the audit log says of a request that presented a dead key.
#[derive(Clone, Copy)]
pub(crate) struct Described<'a> {
    pub(crate) method: &'a http::Method,
    /// The route template.
    pub(crate) route: &'a str,
    /// The server's own id of the request.
    pub(crate) request_id: &'a str,
    /// The caller's `X-Request-Id`, when it sent one.
    pub(crate) client_request_id: Option<&'a str>,
}

impl Budget<'_> {
    /// Where the address stands now, without spending: `None` when it is unknown.
    pub(crate) fn standing(&self) -> Option<Standing> {
        let origin = self.origin?;
        let now = Instant::now();
        let until = self.reads.full_at().get(&origin).copied();
        let owed = until.map_or(Duration::ZERO, |at| at.saturating_duration_since(now));
        Some(standing(owed))
    }
}

/// The standing of an address whose burst is whole again after `owed`.
fn standing(owed: Duration) -> Standing {
    let spent = owed.as_nanos().div_ceil(INTERVAL.as_nanos());
    let remaining = u32::try_from(u128::from(UNKNOWN_BURST).saturating_sub(spent)).unwrap_or(0);
    Standing::new(remaining, owed)
}

/// Sets `RateLimit-Policy` and `RateLimit` on a refused answer to an address that
/// stands so.
pub(crate) fn write_headers(standing: Standing, headers: &mut HeaderMap) {
    crate::rate_limit::write_fields(
        HeaderValue::from_static(POLICY),
        POLICY_NAME,
        standing,
        headers,
    );
}

impl KeyReadBudget for Budget<'_> {
    fn may_read(&self) -> bool {
        self.standing().is_none_or(|s| s.remaining() > 0)
    }

    fn request(&self) -> Option<RequestFacts> {
        Some(RequestFacts {
            method: self.request.method.as_str().to_owned(),
            route: self.request.route.to_owned(),
            status: None,
            request_id: Some(self.request.request_id.to_owned()),
            client_request_id: self.request.client_request_id.map(str::to_owned),
            idempotency_key: None,
            ip: self.client_ip,
        })
    }

    fn found_nothing(&self) {
        let Some(origin) = self.origin else { return };
        let now = Instant::now();
        let mut full_at = self.reads.full_at();
        if full_at.len() >= SWEEP_AT {
            full_at.retain(|_, at| *at > now);
        }
        let at = full_at.entry(origin).or_insert(now);
        // Never owes more than the whole burst: reads allowed at once may all miss.
        *at = ((*at).max(now) + INTERVAL).min(now + INTERVAL * UNKNOWN_BURST);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANY: Described<'static> = Described {
        method: &http::Method::GET,
        route: "/external/v1/job-roles",
        request_id: "test",
        client_request_id: None,
    };

    #[test]
    fn an_address_that_keeps_finding_nothing_runs_out_of_reads_alone() {
        let reads = UnknownKeyReads::default();
        let flooding = reads.of(Some("203.0.113.7".parse().unwrap()), ANY);
        let other = reads.of(Some("198.51.100.1".parse().unwrap()), ANY);
        let mut allowed = 0;
        for _ in 0..100 {
            if flooding.may_read() {
                allowed += 1;
                flooding.found_nothing();
            }
        }
        assert!(
            (UNKNOWN_BURST as usize..=UNKNOWN_BURST as usize + 2).contains(&allowed),
            "{allowed} reads"
        );
        assert!(!flooding.may_read());
        assert!(other.may_read(), "another address keeps its budget");
        assert!(reads.of(None, ANY).may_read(), "no address: not limited");
    }

    #[test]
    fn every_refusal_can_say_where_its_address_stands_without_spending() {
        let reads = UnknownKeyReads::default();
        let at = reads.of(Some("203.0.113.9".parse().unwrap()), ANY);
        let fields = |at: &Budget<'_>| {
            let mut headers = HeaderMap::new();
            write_headers(at.standing().unwrap(), &mut headers);
            let get = |n: &str| headers.get(n).unwrap().to_str().unwrap().to_owned();
            (get("ratelimit-policy"), get("ratelimit"))
        };
        assert_eq!(
            fields(&at),
            (
                "\"unknown-key\";q=20;w=2".into(),
                "\"unknown-key\";r=20;t=0".into()
            )
        );
        assert_eq!(
            fields(&at).1,
            "\"unknown-key\";r=20;t=0",
            "reading spends nothing"
        );
        for _ in 0..5 {
            at.found_nothing();
        }
        assert_eq!(fields(&at).1, "\"unknown-key\";r=15;t=1");
        for _ in 0..100 {
            at.found_nothing();
        }
        assert_eq!(
            fields(&at).1,
            "\"unknown-key\";r=0;t=2",
            "owes one burst at most"
        );
        assert!(!at.may_read());
        assert!(
            reads.of(None, ANY).standing().is_none(),
            "no address: nothing to say"
        );
    }

    #[test]
    fn ipv6_addresses_count_per_64() {
        let a = Origin::of("2001:db8:1:2::1".parse().unwrap());
        let b = Origin::of("2001:db8:1:2:ffff::9".parse().unwrap());
        let c = Origin::of("2001:db8:1:3::1".parse().unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(
            Origin::of("::ffff:192.0.2.1".parse().unwrap()),
            Origin::of("0:0:0:0:0:0:c000:201".parse().unwrap()),
        );
    }
}
