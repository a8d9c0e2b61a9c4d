//! Connections per client address: no address takes every slot.
//!
//! An IPv4 address counts on its own. An IPv6 client is counted by the blocks an ISP
//! hands out, not by its address (a host is given a /64, a home a /56, a site a
//! /48): its /64 holds at most the per-address cap, its /56 twice that and its /48
//! four times, so an attacker with a home's /56 (256 /64s) gets two addresses'
//! worth, not 256. An IPv4-mapped IPv6 address counts as its IPv4 address. Trusted
//! proxies are exempt: every client behind one shares its address.
//!
//! Near the server's cap ([`Admission::Reserve`]) only an address that holds no
//! connection yet is admitted: the last slots are kept for clients that have none,
//! so addresses that already hold connections cannot take them all.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Arc;

/// The IPv6 blocks an address is counted in, with each one's cap as a multiple of
/// the per-address cap.
const V6_BLOCKS: [(u8, usize); 3] = [(64, 1), (56, 2), (48, 4)];

/// A block of addresses: its first address and its prefix length (an IPv4
/// address is a /32).
type Block = (IpAddr, u8);

/// Which slots a new connection would take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Slots anyone may take.
    Shared,
    /// The reserve: only an address holding no connection may take one.
    Reserve,
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Its address (or IPv6 block) holds as many connections as it may.
    AddressFull,
    /// Only the reserve is left, and its address already holds a connection.
    ReserveKept,
}

/// Connections open at once per client address (see the module's docs).
#[derive(Debug)]
pub struct AddressCap {
    limit: usize,
    exempt: Vec<IpAddr>,
    /// Open connections by block: an IPv4 address as a /32, an IPv6 block by prefix.
    open: Mutex<HashMap<Block, usize>>,
}

impl AddressCap {
    /// At most `limit` connections per address (IPv6: per /64); none counted for
    /// `exempt`.
    pub fn new(limit: usize, exempt: &[IpAddr]) -> Arc<Self> {
        Arc::new(Self {
            limit,
            exempt: exempt.iter().map(std::net::IpAddr::to_canonical).collect(),
            open: Mutex::new(HashMap::new()),
        })
    }

    /// The most connections one address may hold.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Counts a new connection from `ip` until the returned guard drops, or says why
    /// it may not open.
    pub fn admit(
        self: &Arc<Self>,
        ip: IpAddr,
        admission: Admission,
    ) -> Result<AddressSlot, Refused> {
        let ip = ip.to_canonical();
        if self.exempt.contains(&ip) {
            return Ok(AddressSlot(None));
        }
        let blocks = blocks_of(ip);
        let mut open = self.open.lock();
        let counts: Vec<usize> = blocks
            .iter()
            .map(|(block, _)| open.get(block).copied().unwrap_or(0))
            .collect();
        if admission == Admission::Reserve && counts[0] > 0 {
            return Err(Refused::ReserveKept);
        }
        let full = blocks
            .iter()
            .zip(&counts)
            .any(|((_, times), count)| *count >= self.limit.saturating_mul(*times));
        if full {
            return Err(Refused::AddressFull);
        }
        let keys: Vec<Block> = blocks.iter().map(|(block, _)| *block).collect();
        for key in &keys {
            *open.entry(*key).or_insert(0) += 1;
        }
        Ok(AddressSlot(Some((self.clone(), keys))))
    }

    /// Blocks holding connections now.
    #[cfg(test)]
    fn blocks(&self) -> usize {
        self.open.lock().len()
    }
}

/// The blocks `ip` counts in, with each one's cap as a multiple of the limit; the
/// first is the one "holding a connection" is judged by.
fn blocks_of(ip: IpAddr) -> Vec<(Block, usize)> {
    match ip {
        IpAddr::V4(_) => vec![((ip, 32), 1)],
        IpAddr::V6(v6) => V6_BLOCKS
            .iter()
            .map(|&(prefix, times)| {
                let mask = !0u128 << (128 - u32::from(prefix));
                let block = IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask));
                ((block, prefix), times)
            })
            .collect(),
    }
}

/// One connection counted by [`AddressCap::admit`], until it drops.
#[derive(Debug)]
pub struct AddressSlot(Option<(Arc<AddressCap>, Vec<Block>)>);

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let Some((cap, keys)) = self.0.take() else {
            return;
        };
        let mut open = cap.open.lock();
        for key in keys {
            if let Some(count) = open.get_mut(&key) {
                *count -= 1;
                if *count == 0 {
                    open.remove(&key);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn shared(cap: &Arc<AddressCap>, text: &str) -> Result<AddressSlot, Refused> {
        cap.admit(ip(text), Admission::Shared)
    }

    #[test]
    fn an_address_holds_at_most_the_limit_and_gets_its_slots_back() {
        let cap = AddressCap::new(2, &[]);
        let a = shared(&cap, "192.0.2.1").unwrap();
        let _b = shared(&cap, "192.0.2.1").unwrap();
        assert_eq!(shared(&cap, "192.0.2.1").unwrap_err(), Refused::AddressFull);
        let _other = shared(&cap, "192.0.2.2").unwrap();
        drop(a);
        let _c = shared(&cap, "192.0.2.1").unwrap();
        assert!(shared(&cap, "192.0.2.1").is_err());
    }

    #[test]
    fn ipv6_counts_by_64_block_and_mapped_ipv4_as_ipv4() {
        let cap = AddressCap::new(1, &[]);
        let _a = shared(&cap, "2001:db8:1:2::1").unwrap();
        assert!(shared(&cap, "2001:db8:1:2:ffff::9").is_err());
        let _b = shared(&cap, "2001:db8:1:3::1").unwrap();
        let _c = shared(&cap, "198.51.100.4").unwrap();
        assert!(shared(&cap, "::ffff:198.51.100.4").is_err());
    }

    #[test]
    fn a_56_holds_twice_the_limit_and_a_48_four_times_whatever_its_64s() {
        // A home's /56: 256 /64s, but two /64s' worth of connections.
        let cap = AddressCap::new(3, &[]);
        let home: Vec<_> = (0..6)
            .map(|n| shared(&cap, &format!("2001:db8:0:{n:x}::1")).unwrap())
            .collect();
        assert_eq!(
            shared(&cap, "2001:db8:0:ff::1").unwrap_err(),
            Refused::AddressFull,
            "a seventh connection from other /64s of the same /56"
        );
        // A site's /48: four /64s' worth, across its /56s.
        let _more: Vec<_> = (1..4)
            .flat_map(|n| [n * 0x100, n * 0x100 + 1])
            .map(|n| shared(&cap, &format!("2001:db8:0:{n:x}::1")).unwrap())
            .collect();
        assert_eq!(
            shared(&cap, "2001:db8:0:500::1").unwrap_err(),
            Refused::AddressFull,
            "a thirteenth connection from the same /48"
        );
        assert!(shared(&cap, "2001:db8:1::1").is_ok(), "another /48");
        drop(home);
        assert!(shared(&cap, "2001:db8:0:500::1").is_ok());
    }

    #[test]
    fn the_reserve_admits_only_addresses_that_hold_no_connection() {
        let cap = AddressCap::new(8, &[]);
        let _a = shared(&cap, "192.0.2.1").unwrap();
        assert_eq!(
            cap.admit(ip("192.0.2.1"), Admission::Reserve).unwrap_err(),
            Refused::ReserveKept
        );
        assert!(cap.admit(ip("192.0.2.2"), Admission::Reserve).is_ok());
        let _v6 = shared(&cap, "2001:db8:0:1::1").unwrap();
        assert!(
            cap.admit(ip("2001:db8:0:1::2"), Admission::Reserve)
                .is_err(),
            "the same /64"
        );
        assert!(
            cap.admit(ip("2001:db8:0:2::1"), Admission::Reserve).is_ok(),
            "another /64 of the /56"
        );
    }

    #[test]
    fn trusted_proxies_are_not_counted() {
        let cap = AddressCap::new(1, &[ip("10.0.0.1")]);
        let held: Vec<_> = (0..10)
            .map(|_| cap.admit(ip("10.0.0.1"), Admission::Reserve).unwrap())
            .collect();
        assert_eq!(held.len(), 10);
        assert_eq!(cap.blocks(), 0);
        let _a = shared(&cap, "10.0.0.2").unwrap();
        assert!(shared(&cap, "10.0.0.2").is_err());
    }

    #[test]
    fn closed_addresses_leave_no_entry_behind() {
        let cap = AddressCap::new(4, &[]);
        let slots: Vec<_> = (1..=50)
            .map(|n| shared(&cap, &format!("192.0.2.{n}")).unwrap())
            .collect();
        let v6 = shared(&cap, "2001:db8::1").unwrap();
        assert_eq!(cap.blocks(), 53);
        drop(slots);
        drop(v6);
        assert_eq!(cap.blocks(), 0);
    }
}
