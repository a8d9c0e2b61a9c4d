//! Where a request comes from, as every per-address limit counts it.
//!
//! One IPv4 address is one origin. An IPv6 host picks any address of its /64 at will
//! (privacy addresses, RFC 8981), so a limit per full address is no limit at all: an
//! IPv6 origin is its /64, the subscriber's network. An IPv4-mapped IPv6 address
//! (`::ffff:192.0.2.1`, what a dual-stack socket reports) is its IPv4 address.
//!
//! The sign-in throttle, the unknown-key budget and the reference server's
//! per-address connection cap all count by this rule (the cap also groups /64s into
//! their /56 and /48, see wfs-server's `conn::address`); the audit log records the full
//! address.

use std::net::{IpAddr, Ipv6Addr};

/// The origin of `ip`: itself for IPv4, its /64 network for IPv6.
pub fn origin(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        v4 @ IpAddr::V4(_) => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn an_ipv6_origin_is_its_64_and_an_ipv4_one_its_address() {
        assert_eq!(origin(ip("2001:db8:1:2::1")), ip("2001:db8:1:2::"));
        assert_eq!(origin(ip("2001:db8:1:2:ffff::9")), ip("2001:db8:1:2::"));
        assert_ne!(origin(ip("2001:db8:1:3::1")), origin(ip("2001:db8:1:2::1")));
        assert_eq!(origin(ip("192.0.2.1")), ip("192.0.2.1"));
        assert_ne!(origin(ip("192.0.2.2")), origin(ip("192.0.2.1")));
        assert_eq!(origin(ip("::ffff:192.0.2.1")), ip("192.0.2.1"));
    }
}
