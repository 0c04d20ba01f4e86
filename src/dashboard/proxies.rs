//! The reverse proxies the dashboard believes (`[http] trusted_proxies`, read and checked by
//! `config`): their `X-Forwarded-Host`, `X-Forwarded-Proto` and `X-Forwarded-For` count, from
//! any other peer those headers are ignored. A range that reaches past a local network
//! ([`ProxyReach`]) is accepted, and the dashboard says so in its log at start.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::i18n::Message;
use crate::msg;

/// One address, or a range of addresses in CIDR form (`10.0.0.0/8`, `fd00::/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpRange {
    network: IpAddr,
    prefix: u8,
}

impl IpRange {
    /// Reads `127.0.0.1`, `::1`, `10.0.0.0/8` or `fd00::/8`. A range whose address has bits
    /// set beyond its prefix (`192.168.1.10/24`) is refused: it is likely a mistake.
    pub fn parse(text: &str) -> Result<IpRange, Message> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr = address
            .parse()
            .map_err(|_| msg!("config-proxy-not-address", value = text))?;
        let network = network.to_canonical();
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(p) => match p.parse::<u8>() {
                Ok(p) if p <= bits => p,
                _ => return Err(msg!("config-proxy-prefix", value = text, bits = bits)),
            },
        };
        let masked = mask(network, prefix);
        if masked != network {
            return Err(msg!(
                "config-proxy-host-bits",
                value = text,
                prefix = prefix,
                range = format!("{masked}/{prefix}"),
                address = network.to_string()
            ));
        }
        Ok(IpRange { network, prefix })
    }

    /// Whether `ip` is in the range (an IPv4 address seen as `::ffff:a.b.c.d` counts as
    /// itself).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        ip.is_ipv4() == self.network.is_ipv4() && mask(ip, self.prefix) == self.network
    }

    /// How far past a local network the range reaches, if it does: `None` for a range inside
    /// loopback, the private networks (RFC 1918, 100.64.0.0/10, IPv6 unique local) or
    /// link-local addresses, where a reverse proxy usually is.
    pub fn reach(&self) -> Option<ProxyReach> {
        if self.prefix == 0 {
            return Some(ProxyReach::Everyone);
        }
        let local = LOCAL_NETWORKS.iter().any(|&(network, prefix)| {
            self.prefix >= prefix && IpRange { network, prefix }.contains(self.network)
        });
        (!local).then_some(ProxyReach::Public)
    }
}

/// Loopback, private and link-local networks (address, prefix).
const LOCAL_NETWORKS: [(IpAddr, u8); 9] = [
    (IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)), 8),
    (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 0)), 8),
    (IpAddr::V4(Ipv4Addr::new(172, 16, 0, 0)), 12),
    (IpAddr::V4(Ipv4Addr::new(192, 168, 0, 0)), 16),
    (IpAddr::V4(Ipv4Addr::new(100, 64, 0, 0)), 10),
    (IpAddr::V4(Ipv4Addr::new(169, 254, 0, 0)), 16),
    (IpAddr::V6(Ipv6Addr::LOCALHOST), 128),
    (IpAddr::V6(Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0)), 7),
    (IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0)), 10),
];

/// `10.0.0.0/8`, or the address alone for a single one.
impl fmt::Display for IpRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = if self.network.is_ipv4() { 32 } else { 128 };
        if self.prefix == bits {
            write!(f, "{}", self.network)
        } else {
            write!(f, "{}/{}", self.network, self.prefix)
        }
    }
}

/// How far a trusted range reaches past a local network: its hosts can claim any client
/// address, host and TLS to the dashboard. Accepted (a CDN's published ranges are public),
/// and said in the log at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyReach {
    /// `0.0.0.0/0` or `::/0`: every client is believed, as if no proxy were configured to
    /// protect anything.
    Everyone,
    /// Addresses of the internet.
    Public,
}

/// `ip` with every bit after the first `prefix` cleared.
fn mask(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let kept = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4((bits & kept).into())
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let kept = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6((bits & kept).into())
        }
    }
}

/// The reverse proxies whose forwarding headers are believed (`[http] trusted_proxies`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpRange>);

impl TrustedProxies {
    /// The proxies in `ranges`.
    pub fn new(ranges: Vec<IpRange>) -> Self {
        TrustedProxies(ranges)
    }

    /// Whether a connection from `peer` comes from one of them.
    pub fn contains(&self, peer: IpAddr) -> bool {
        self.0.iter().any(|range| range.contains(peer))
    }

    /// The ranges that reach past a local network, with how far ([`IpRange::reach`]).
    pub fn wide(&self) -> Vec<(IpRange, ProxyReach)> {
        self.0
            .iter()
            .filter_map(|range| range.reach().map(|reach| (*range, reach)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn addresses_and_ranges_are_read_and_matched() {
        let proxies = TrustedProxies(
            ["127.0.0.1", "10.0.0.0/8", "fd00::/8", " ::1 "]
                .iter()
                .map(|t| IpRange::parse(t).unwrap())
                .collect(),
        );
        assert!(proxies.contains(ip("127.0.0.1")));
        assert!(
            proxies.contains(ip("::ffff:127.0.0.1")),
            "IPv4 seen through IPv6"
        );
        assert!(!proxies.contains(ip("127.0.0.2")));
        assert!(proxies.contains(ip("10.255.0.1")));
        assert!(!proxies.contains(ip("11.0.0.1")));
        assert!(proxies.contains(ip("fd12::5")));
        assert!(!proxies.contains(ip("fe80::1")));
        assert!(proxies.contains(ip("::1")));
        assert!(!TrustedProxies::default().contains(ip("127.0.0.1")));
        assert!(IpRange::parse("0.0.0.0/0").unwrap().contains(ip("8.8.8.8")));
        assert!(IpRange::parse("::/0").unwrap().contains(ip("2001:db8::1")));
    }

    #[test]
    fn ranges_past_a_local_network_are_named() {
        let reach = |text: &str| IpRange::parse(text).unwrap().reach();
        for everyone in ["0.0.0.0/0", "::/0"] {
            assert_eq!(reach(everyone), Some(ProxyReach::Everyone), "{everyone}");
        }
        for public in [
            "8.8.8.8",
            "203.0.113.0/24",
            "10.0.0.0/7",
            "172.0.0.0/8",
            "2001:db8::/32",
            "::ffff:8.8.8.8",
            "fc00::/6",
        ] {
            assert_eq!(reach(public), Some(ProxyReach::Public), "{public}");
        }
        for local in [
            "127.0.0.1",
            "10.0.0.0/8",
            "10.1.2.0/24",
            "172.20.0.0/16",
            "192.168.1.0/24",
            "100.64.0.0/10",
            "169.254.1.1",
            "::1",
            "fd00::/8",
            "fe80::/64",
            "::ffff:127.0.0.1",
        ] {
            assert_eq!(reach(local), None, "{local}");
        }
        let proxies = TrustedProxies(
            ["127.0.0.1", "0.0.0.0/0", "198.51.100.0/24"]
                .iter()
                .map(|t| IpRange::parse(t).unwrap())
                .collect(),
        );
        let named: Vec<(String, ProxyReach)> = proxies
            .wide()
            .into_iter()
            .map(|(range, reach)| (range.to_string(), reach))
            .collect();
        assert_eq!(
            named,
            [
                ("0.0.0.0/0".to_string(), ProxyReach::Everyone),
                ("198.51.100.0/24".to_string(), ProxyReach::Public)
            ]
        );
        assert_eq!(IpRange::parse("::1").unwrap().to_string(), "::1");
    }

    #[test]
    fn a_wrong_entry_says_what_to_write() {
        for (text, said) in [
            ("proxy.lan", "not an IP address"),
            ("10.0.0.0/33", "from 0 to 32"),
            ("fd00::/129", "from 0 to 128"),
            ("10.0.0.0/x", "from 0 to 32"),
            ("192.168.1.10/24", "write 192.168.1.0/24"),
            ("", "not an IP address"),
        ] {
            let message = IpRange::parse(text)
                .unwrap_err()
                .render(crate::i18n::Lang::En);
            assert!(message.contains(said), "{text}: {message}");
        }
    }
}
