//! The text forms of two keys: `timezone_offset` (a UTC offset) and `listen` (an address and
//! a port), as read from the file and the environment and written back.

use std::net::SocketAddr;

use chrono::FixedOffset;

use super::MAX_OFFSET_SECS;
use crate::i18n::Message;
use crate::msg;

/// Parses a UTC offset: `+HH:MM`, `-HH:MM`, `+HHMM`, `+HH`, `Z` or `UTC` (any case), at most
/// 14 hours either way.
pub fn parse_offset(text: &str) -> Option<FixedOffset> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("z") || text.eq_ignore_ascii_case("utc") {
        return FixedOffset::east_opt(0);
    }
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let rest = text.get(1..)?;
    let (hours, minutes) = match (rest.len(), rest.split_once(':')) {
        (_, Some((h, m))) if h.len() == 2 && m.len() == 2 => (h, m),
        (4, None) => (rest.get(..2)?, rest.get(2..)?),
        (2, None) => (rest, "00"),
        _ => return None,
    };
    if !hours
        .bytes()
        .chain(minutes.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let hours: i32 = hours.parse().ok()?;
    let minutes: i32 = minutes.parse().ok()?;
    if minutes >= 60 {
        return None;
    }
    let seconds = hours * 3600 + minutes * 60;
    if seconds > MAX_OFFSET_SECS {
        return None;
    }
    FixedOffset::east_opt(sign * seconds)
}

/// Parses `listen`: an IP address and a port (`0.0.0.0:8080`, `[::]:8080`), or a host name
/// and a port (`localhost:8080`, `gateway.shop.lan:8080`) resolved now, its IPv4 address
/// first (the address a LAN's ERPs most likely reach).
pub fn parse_listen(text: &str) -> Result<SocketAddr, Message> {
    let text = text.trim();
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let Some((host, port)) = text.rsplit_once(':') else {
        return Err(msg!("config-listen-expected"));
    };
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(msg!("config-listen-expected"));
    }
    let addrs: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(text)
        .map_err(|e| {
            msg!(
                "config-listen-unresolved",
                host = host,
                detail = e.to_string()
            )
        })?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| msg!("config-listen-no-address", host = host))
}

pub(super) mod offset_text {
    use chrono::FixedOffset;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        offset: &FixedOffset,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_str(offset)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<FixedOffset, D::Error> {
        let text = String::deserialize(deserializer)?;
        super::parse_offset(&text)
            .ok_or_else(|| D::Error::custom(crate::msg!("config-offset-bad", value = text)))
    }
}

pub(super) mod listen_text {
    use std::net::SocketAddr;

    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(addr: &SocketAddr, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(addr)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SocketAddr, D::Error> {
        let text = String::deserialize(deserializer)?;
        super::parse_listen(&text).map_err(|problem| {
            D::Error::custom(crate::msg!(
                "config-listen-bad",
                value = text,
                problem = problem
            ))
        })
    }
}
