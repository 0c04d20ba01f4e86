//! Connections per peer address: one machine on the LAN cannot take every connection of the
//! server (issue 14), whatever it sends. A connection over the cap is answered a short 503
//! (code 127) and closed before any HTTP is read.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use crate::i18n::{self, Lang};
use crate::msg;
use crate::sync;

/// Open connections by peer address, capped.
#[derive(Debug)]
pub(crate) struct Peers {
    open: Mutex<HashMap<IpAddr, usize>>,
    cap: usize,
}

/// One counted connection; its place is given back when dropped.
#[derive(Debug)]
pub(crate) struct PeerSlot {
    peers: Arc<Peers>,
    ip: IpAddr,
}

impl Peers {
    /// At most `cap` connections per address (at least 1).
    pub(crate) fn new(cap: usize) -> Arc<Peers> {
        Arc::new(Peers {
            open: Mutex::new(HashMap::new()),
            cap: cap.max(1),
        })
    }

    /// A place for one more connection from `ip`, or `None` when it has `cap` open.
    pub(crate) fn enter(self: &Arc<Self>, ip: IpAddr) -> Option<PeerSlot> {
        let ip = canonical(ip);
        let mut open = sync::lock(&self.open);
        let count = open.entry(ip).or_insert(0);
        if *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(PeerSlot {
            peers: Arc::clone(self),
            ip,
        })
    }
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut open = sync::lock(&self.peers.open);
        if let Some(count) = open.get_mut(&self.ip) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// An IPv4 peer seen through an IPv6 socket (`::ffff:a.b.c.d`) counts as itself.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The bytes of the answer to a connection over the cap (HTTP/1.1, JSON, closes). It is
/// written before any HTTP is read, so its text is in the installation's default language.
pub(crate) fn refusal(cap: usize) -> Vec<u8> {
    refusal_in(cap, i18n::default_lang())
}

fn refusal_in(cap: usize, lang: Lang) -> Vec<u8> {
    let desc = msg!("err-too-many-connections", max = cap).render(lang);
    let body = serde_json::json!({"errorCode": 127, "errorDesc": desc}).to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json; charset=utf-8\r\n\
         content-language: {}\r\nretry-after: 1\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        lang.code(),
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn each_address_has_its_own_cap_and_places_come_back() {
        let peers = Peers::new(2);
        let a = IpAddr::V4(Ipv4Addr::new(192, 168, 1, 10));
        let b = IpAddr::V4(Ipv4Addr::new(192, 168, 1, 11));
        let first = peers.enter(a).expect("1st");
        let _second = peers.enter(a).expect("2nd");
        assert!(peers.enter(a).is_none(), "3rd from the same address");
        assert!(peers.enter(b).is_some(), "another address is not affected");
        let mapped = IpAddr::V6(Ipv4Addr::new(192, 168, 1, 10).to_ipv6_mapped());
        assert!(
            peers.enter(mapped).is_none(),
            "IPv4-mapped is the same peer"
        );
        drop(first);
        assert!(
            peers.enter(a).is_some(),
            "a closed connection gives its place back"
        );
    }

    #[test]
    fn the_refusal_is_a_complete_json_503() {
        let text = String::from_utf8(refusal(32)).expect("utf-8");
        let (head, body) = text.split_once("\r\n\r\n").expect("head and body");
        assert!(head.starts_with("HTTP/1.1 503 "));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let json: serde_json::Value = serde_json::from_str(body).expect("json");
        assert_eq!(json["errorCode"], 127);
    }

    #[test]
    fn the_refusal_speaks_the_language_it_is_given() {
        let french = String::from_utf8(refusal_in(32, Lang::Fr)).expect("utf-8");
        let (head, body) = french.split_once("\r\n\r\n").expect("head and body");
        assert!(head.contains("content-language: fr"), "{head}");
        let json: serde_json::Value = serde_json::from_str(body).expect("json");
        assert_eq!(
            json["errorDesc"],
            crate::i18n::nbsp(
                "trop de connexions depuis votre adresse (32 au plus à la fois) ; \
             fermez les connexions inactives ou réessayez dans un instant"
            )
        );
        let english = String::from_utf8(refusal_in(32, Lang::En)).expect("utf-8");
        assert!(english.contains("content-language: en"));
        assert!(english.contains("too many connections from your address (at most 32 at once)"));
    }
}
