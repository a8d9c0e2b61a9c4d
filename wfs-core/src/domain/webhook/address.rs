//! Which addresses a delivery may reach: IANA's special-purpose blocks, and the IPv6
//! forms that carry an IPv4 address.

use ipnet::{Ipv4Net, Ipv6Net};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether a delivery may reach `ip`: only a globally routable unicast address
/// (see [`non_public_reason`] for the rules).
pub fn is_public(ip: IpAddr) -> bool {
    non_public_reason(ip).is_none()
}

/// Whether `host` is a name that never resolves: `invalid.` and every name under it
/// (RFC 6761, 6.4). Resolvers should answer such a name at once without asking the
/// network; asking anyway can cost an attempt its whole timeout when a DNS packet is
/// lost.
pub(crate) fn never_resolves(host: &str) -> bool {
    let name = host.strip_suffix('.').unwrap_or(host).as_bytes();
    let label = b"invalid";
    name.len() >= label.len()
        && name[name.len() - label.len()..].eq_ignore_ascii_case(label)
        && (name.len() == label.len() || name[name.len() - label.len() - 1] == b'.')
}

/// Why a delivery may not reach `ip` (the block it falls in), or `None` when it is a
/// globally routable unicast address.
///
/// The rules follow IANA's IPv4 and IPv6 special-purpose address registries, and for
/// IPv6 its address space registry: only `2000::/3` is global unicast, less the
/// special-purpose blocks inside it. The IETF protocol-assignment blocks
/// (`192.0.0.0/24`, `2001::/23`) are refused whole, their few anycast services
/// included: none of them is a webhook receiver.
///
/// An IPv6 address that carries an IPv4 address a translator or tunnel would reach is
/// judged as that IPv4 address: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated
/// (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`, and the local-use
/// `64:ff9b:1::a.b.c.d` in its `/96` form) and 6to4 (`2002:aabb:ccdd::/48`). One whose
/// IPv4 address cannot be judged is refused: Teredo (`2001::/32`), the local-use NAT64
/// prefix in other forms, and the deprecated IPv4-compatible `::a.b.c.d`.
pub fn non_public_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

const fn v4(bits: u32, len: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::from_bits(bits), len)
}

const fn v6(bits: u128, len: u8) -> Ipv6Net {
    Ipv6Net::new_assert(Ipv6Addr::from_bits(bits), len)
}

/// The IPv4 blocks that are not globally routable unicast; the first match names it.
const V4_REFUSED: &[(Ipv4Net, &str)] = &[
    (v4(0x0000_0000, 8), "\"this network\" (0.0.0.0/8)"),
    (v4(0x0a00_0000, 8), "private (10.0.0.0/8)"),
    (v4(0x6440_0000, 10), "shared address space (100.64.0.0/10)"),
    (v4(0x7f00_0000, 8), "loopback (127.0.0.0/8)"),
    (v4(0xa9fe_0000, 16), "link-local (169.254.0.0/16)"),
    (v4(0xac10_0000, 12), "private (172.16.0.0/12)"),
    (
        v4(0xc000_0000, 24),
        "IETF protocol assignments (192.0.0.0/24)",
    ),
    (v4(0xc000_0200, 24), "documentation (192.0.2.0/24)"),
    (
        v4(0xc058_6300, 24),
        "deprecated 6to4 relay anycast (192.88.99.0/24)",
    ),
    (v4(0xc0a8_0000, 16), "private (192.168.0.0/16)"),
    (v4(0xc612_0000, 15), "benchmarking (198.18.0.0/15)"),
    (v4(0xc633_6400, 24), "documentation (198.51.100.0/24)"),
    (v4(0xcb00_7100, 24), "documentation (203.0.113.0/24)"),
    (v4(0xe000_0000, 4), "multicast (224.0.0.0/4)"),
    (v4(0xffff_ffff, 32), "limited broadcast (255.255.255.255)"),
    (v4(0xf000_0000, 4), "reserved (240.0.0.0/4)"),
];

/// IPv6 global unicast, per IANA's address space registry.
const V6_GLOBAL_UNICAST: Ipv6Net = v6(0x2000 << 112, 3);

/// IPv6 prefixes whose last 32 bits are an IPv4 address a translator reaches.
const V6_CARRYING_V4: &[Ipv6Net] = &[
    // IPv4-mapped, ::ffff:0:0/96.
    v6(0xffff << 32, 96),
    // IPv4-translated (SIIT), ::ffff:0:0:0/96.
    v6(0xffff << 48, 96),
    // NAT64 well-known prefix, 64:ff9b::/96.
    v6(0x0064_ff9b << 96, 96),
    // Local-use translation prefix 64:ff9b:1::/48 with a /96 embedding.
    v6((0x0064_ff9b << 96) | (1 << 80), 96),
];

/// 6to4: the IPv4 address of the tunnel end in bits 16-47.
const V6_6TO4: Ipv6Net = v6(0x2002 << 112, 16);

/// The IPv6 blocks that are not globally routable unicast, or whose IPv4 address
/// cannot be judged; the first match names it. Anything else outside `2000::/3` is
/// refused as reserved.
const V6_REFUSED: &[(Ipv6Net, &str)] = &[
    (v6(0, 128), "unspecified (::)"),
    (v6(1, 128), "loopback (::1)"),
    (v6(0, 96), "deprecated IPv4-compatible (::/96)"),
    (
        v6((0x0064_ff9b << 96) | (1 << 80), 48),
        "local-use IPv4/IPv6 translation not in its /96 form (64:ff9b:1::/48)",
    ),
    (v6(0x0100 << 112, 64), "discard-only (100::/64)"),
    (
        v6((0x0100 << 112) | (1 << 64), 64),
        "dummy prefix (100:0:0:1::/64)",
    ),
    (v6(0x2001 << 112, 32), "Teredo (2001::/32)"),
    (
        v6((0x2001 << 112) | (2 << 96), 48),
        "benchmarking (2001:2::/48)",
    ),
    (
        v6((0x2001 << 112) | (0x10 << 96), 28),
        "deprecated ORCHID (2001:10::/28)",
    ),
    (
        v6((0x2001 << 112) | (0x20 << 96), 28),
        "ORCHIDv2 (2001:20::/28)",
    ),
    (
        v6((0x2001 << 112) | (0x30 << 96), 28),
        "drone remote ID tags (2001:30::/28)",
    ),
    (
        v6(0x2001 << 112, 23),
        "IETF protocol assignments (2001::/23)",
    ),
    (
        v6((0x2001 << 112) | (0x0db8 << 96), 32),
        "documentation (2001:db8::/32)",
    ),
    (v6(0x3fff << 112, 20), "documentation (3fff::/20)"),
    (v6(0x5f00 << 112, 16), "segment routing SIDs (5f00::/16)"),
    (v6(0xfc00 << 112, 7), "unique local (fc00::/7)"),
    (v6(0xfe80 << 112, 10), "link-local (fe80::/10)"),
    (v6(0xfec0 << 112, 10), "deprecated site-local (fec0::/10)"),
    (v6(0xff00 << 112, 8), "multicast (ff00::/8)"),
];

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    V4_REFUSED
        .iter()
        .find(|(net, _)| net.contains(&ip))
        .map(|(_, why)| *why)
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = carried_v4(ip) {
        return v4_reason(v4);
    }
    if let Some((_, why)) = V6_REFUSED.iter().find(|(net, _)| net.contains(&ip)) {
        return Some(why);
    }
    (!V6_GLOBAL_UNICAST.contains(&ip)).then_some("reserved (outside global unicast 2000::/3)")
}

/// The IPv4 address an IPv6 address carries for a translator or a 6to4 tunnel.
fn carried_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = ip.to_bits();
    if V6_CARRYING_V4.iter().any(|net| net.contains(&ip)) {
        return Some(Ipv4Addr::from_bits(bits as u32));
    }
    V6_6TO4
        .contains(&ip)
        .then(|| Ipv4Addr::from_bits((bits >> 80) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::webhook::EndpointUrl;
    use proptest::prelude::*;

    #[test]
    fn names_under_invalid_never_resolve() {
        for name in [
            "invalid",
            "INVALID.",
            "no-such-host.invalid",
            "a.b.Invalid.",
        ] {
            assert!(never_resolves(name), "{name}");
        }
        for name in [
            "invalid.example",
            "notinvalid",
            "example.com",
            "localhost",
            "",
        ] {
            assert!(!never_resolves(name), "{name}");
        }
    }

    /// Addresses a delivery must not reach, one or more per block, with the block
    /// named in the reason.
    const REFUSED: &[(&str, &str)] = &[
        ("0.0.0.0", "this network"),
        ("0.1.2.3", "this network"),
        ("10.0.0.1", "private"),
        ("100.64.0.1", "shared address space"),
        ("100.127.255.255", "shared address space"),
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("169.254.169.254", "link-local"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.0.0.1", "IETF protocol assignments"),
        ("192.0.0.9", "IETF protocol assignments"),
        ("192.0.0.170", "IETF protocol assignments"),
        ("192.0.2.1", "documentation"),
        ("192.88.99.1", "6to4 relay"),
        ("192.168.1.1", "private"),
        ("198.18.0.1", "benchmarking"),
        ("198.19.255.255", "benchmarking"),
        ("198.51.100.7", "documentation"),
        ("203.0.113.9", "documentation"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"),
        ("254.1.2.3", "reserved"),
        ("255.255.255.255", "broadcast"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("::10.0.0.1", "IPv4-compatible"),
        ("::8.8.8.8", "IPv4-compatible"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:0:127.0.0.1", "loopback"),
        ("::ffff:0:a9fe:a9fe", "link-local"),
        ("64:ff9b::7f00:1", "loopback"),
        ("64:ff9b::a9fe:a9fe", "link-local"),
        ("64:ff9b::c000:201", "documentation"),
        ("64:ff9b:1::7f00:1", "loopback"),
        ("64:ff9b:1::a00:1", "private"),
        ("64:ff9b:1:7f00:0:100:808:808", "local-use"),
        ("64:ff9b:0:0:1::808:808", "reserved"),
        ("100::1", "discard-only"),
        ("100:0:0:1::1", "dummy"),
        ("100:0:0:2::1", "reserved"),
        ("2001::1", "Teredo"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
        ("2001:1::1", "IETF protocol assignments"),
        ("2001:2::1", "benchmarking"),
        ("2001:3::1", "IETF protocol assignments"),
        ("2001:4:112::1", "IETF protocol assignments"),
        ("2001:10::1", "ORCHID"),
        ("2001:20::1", "ORCHIDv2"),
        ("2001:30::1", "drone"),
        ("2001:1ff:ffff::1", "IETF protocol assignments"),
        ("2001:db8::1", "documentation"),
        ("2002:7f00:1::1", "loopback"),
        ("2002:a9fe:a9fe::1", "link-local"),
        ("2002:c0a8:101:1::1", "private"),
        ("2002::1", "this network"),
        ("3fff::1", "documentation"),
        ("3fff:fff:ffff::1", "documentation"),
        ("4000::1", "reserved"),
        ("5f00::1", "segment routing"),
        ("fc00::1", "unique local"),
        ("fd12:3456::1", "unique local"),
        ("fe80::1", "link-local"),
        ("febf::1", "link-local"),
        ("fec0::1", "site-local"),
        ("feff::1", "site-local"),
        ("ff02::1", "multicast"),
        ("ff0e::1", "multicast"),
        ("1::1", "reserved"),
        ("e000::1", "reserved"),
    ];

    /// Globally routable unicast addresses, many just beside a refused block.
    const ALLOWED: &[&str] = &[
        "1.1.1.1",
        "8.8.8.8",
        "9.255.255.255",
        "11.0.0.0",
        "93.184.216.34",
        "100.63.255.255",
        "100.128.0.1",
        "126.255.255.255",
        "128.0.0.1",
        "169.253.255.255",
        "169.255.0.0",
        "172.15.255.255",
        "172.32.0.1",
        "191.255.255.255",
        "192.0.1.1",
        "192.0.3.1",
        "192.31.196.1",
        "192.52.193.1",
        "192.88.98.255",
        "192.88.100.0",
        "192.167.255.255",
        "192.169.0.0",
        "192.175.48.1",
        "198.17.255.255",
        "198.20.0.0",
        "198.51.99.255",
        "198.51.101.0",
        "203.0.112.255",
        "203.0.114.0",
        "223.255.255.255",
        "::ffff:8.8.8.8",
        "::ffff:0:8.8.8.8",
        "64:ff9b::808:808",
        "64:ff9b:1::808:808",
        "2000::1",
        "2001:200::1",
        "2001:4860:4860::8888",
        "2001:db7:ffff::1",
        "2001:db9::1",
        "2002:808:808::1",
        "2002:808:808:ffff:ffff:ffff:ffff:ffff",
        "2606:4700::1111",
        "2620:4f:8000::1",
        "2a00:1450:4001::1",
        "3ffe:ffff::1",
        "3fff:1000::1",
    ];

    #[test]
    fn only_globally_routable_unicast_addresses_are_public() {
        for (ip, block) in REFUSED {
            let ip: IpAddr = ip.parse().unwrap();
            let why = non_public_reason(ip).unwrap_or_else(|| panic!("{ip} was allowed"));
            assert!(why.contains(block), "{ip}: {why}, expected {block}");
            assert!(!is_public(ip));
        }
        for ip in ALLOWED {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(non_public_reason(ip), None, "{ip}");
            assert!(is_public(ip));
        }
    }

    #[test]
    fn every_listed_block_is_refused_at_creation_too() {
        for (ip, _) in REFUSED {
            let host = if ip.contains(':') {
                format!("[{ip}]")
            } else {
                (*ip).to_owned()
            };
            let err = EndpointUrl::parse(&format!("https://{host}:8443/x"), false)
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("url must not point to a non-public address"),
                "{ip}: {err}"
            );
        }
        for ip in ALLOWED {
            let host = if ip.contains(':') {
                format!("[{ip}]")
            } else {
                (*ip).to_owned()
            };
            assert!(EndpointUrl::parse(&format!("https://{host}/x"), false).is_ok());
        }
    }

    fn v4_strategy() -> impl Strategy<Value = Ipv4Addr> {
        any::<u32>().prop_map(Ipv4Addr::from_bits)
    }

    proptest! {
        /// An IPv4 address carried in IPv6 for a translator or a 6to4 tunnel is judged
        /// as itself, whatever the other bits of a 6to4 address.
        #[test]
        fn carried_ipv4_addresses_are_judged_as_ipv4(v4 in v4_strategy(), rest in any::<u128>()) {
            let public = is_public(IpAddr::V4(v4));
            let bits = u128::from(v4.to_bits());
            let six_to_four = (0x2002 << 112) | (bits << 80) | (rest & ((1 << 80) - 1));
            for carrier in [
                v4.to_ipv6_mapped().to_bits(),
                (0xffff << 48) | bits,
                (0x0064_ff9b << 96) | bits,
                (0x0064_ff9b << 96) | (1 << 80) | bits,
                six_to_four,
            ] {
                let v6 = Ipv6Addr::from_bits(carrier);
                prop_assert_eq!(is_public(IpAddr::V6(v6)), public, "{} as {}", v4, v6);
            }
        }

        /// An allowed IPv4 address is in none of the blocks the standard library knows.
        #[test]
        fn an_allowed_ipv4_address_is_none_of_the_std_kinds(v4 in v4_strategy()) {
            if is_public(IpAddr::V4(v4)) {
                prop_assert!(!(v4.is_private() || v4.is_loopback() || v4.is_link_local()
                    || v4.is_multicast() || v4.is_broadcast() || v4.is_documentation()
                    || v4.is_unspecified() || v4.octets()[0] >= 240 || v4.octets()[0] == 0));
            }
        }

        /// An allowed IPv6 address is global unicast (`2000::/3`), or carries an allowed
        /// IPv4 address; never Teredo, documentation, ULA, link-local or multicast.
        #[test]
        fn an_allowed_ipv6_address_is_global_unicast_or_carries_a_public_ipv4(
            bits in prop_oneof![any::<u128>(), any::<u128>().prop_map(|b| (b >> 3) | (1 << 125))],
        ) {
            let v6 = Ipv6Addr::from_bits(bits);
            if is_public(IpAddr::V6(v6)) {
                let global = bits >> 125 == 1;
                prop_assert!(global || carried_v4(v6).is_some_and(|v4| is_public(IpAddr::V4(v4))), "{}", v6);
                prop_assert!(!(v6.is_loopback() || v6.is_unspecified() || v6.is_multicast()
                    || v6.is_unique_local() || v6.is_unicast_link_local()), "{}", v6);
                prop_assert!(bits >> 96 != 0x2001_0000 && bits >> 96 != 0x2001_0db8, "{}", v6);
            }
        }

        /// Random addresses inside refused prefixes stay refused.
        #[test]
        fn addresses_inside_a_refused_block_are_refused(pick in any::<prop::sample::Index>(), host in any::<u128>()) {
            let (net, why) = V6_REFUSED[pick.index(V6_REFUSED.len())];
            let mask = u128::MAX.checked_shr(u32::from(net.prefix_len())).unwrap_or(0);
            let ip = Ipv6Addr::from_bits(net.network().to_bits() | (host & mask));
            // A /96 local-use embedding inside 64:ff9b:1::/48 is judged by its IPv4.
            if carried_v4(ip).is_none() {
                prop_assert!(!is_public(IpAddr::V6(ip)), "{} in {}", ip, why);
            }
            let (net, why) = V4_REFUSED[pick.index(V4_REFUSED.len())];
            let mask = u32::MAX.checked_shr(u32::from(net.prefix_len())).unwrap_or(0);
            let ip = Ipv4Addr::from_bits(net.network().to_bits() | (host as u32 & mask));
            prop_assert!(!is_public(IpAddr::V4(ip)), "{} in {}", ip, why);
        }
    }
}
