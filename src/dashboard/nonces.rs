//! The sign-in form's anti-CSRF values, kept on the server (issue 14): a value is valid only
//! if this gateway issued it, to the address that posts it back, within [`LIFETIME`], once.
//! Before, the form's value was compared with a cookie only, so a client able to set a cookie
//! in a victim's browser could pair its own value with it and sign the victim into the
//! attacker's organization. The cookie is still required (double submit): both must agree.
//!
//! The address is the client's (`web::Peer::client`): behind a trusted proxy, the one the
//! proxy appended to `X-Forwarded-For`, so that one client loading the form [`MAX_PER_PEER`]
//! times cannot void the forms every other client behind that proxy has open.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::session::random_hex;
use crate::sync;

/// How long a sign-in form may wait before it is posted.
pub const LIFETIME: Duration = Duration::from_secs(3600);
/// Values kept at once; beyond it the oldest is forgotten.
const MAX_VALUES: usize = 10_000;
/// Values kept for one client address: loading the form in a loop cannot push out everyone
/// else's.
pub const MAX_PER_PEER: usize = 32;

#[derive(Debug, Clone, Copy)]
struct Issued {
    peer: IpAddr,
    at: Instant,
}

/// The sign-in values issued and not yet used.
#[derive(Debug, Default)]
pub struct SignInNonces {
    issued: Mutex<HashMap<[u8; 32], Issued>>,
}

impl SignInNonces {
    /// None issued yet.
    pub fn new() -> SignInNonces {
        SignInNonces::default()
    }

    /// A new value for a sign-in form shown to `peer`.
    pub fn issue(&self, peer: IpAddr) -> String {
        self.issue_at(peer, Instant::now())
    }

    fn issue_at(&self, peer: IpAddr, now: Instant) -> String {
        let value = random_hex();
        let mut issued = sync::lock(&self.issued);
        issued.retain(|_, i| now.saturating_duration_since(i.at) < LIFETIME);
        let mine: Vec<([u8; 32], Instant)> = issued
            .iter()
            .filter(|(_, i)| i.peer == peer)
            .map(|(k, i)| (*k, i.at))
            .collect();
        if mine.len() >= MAX_PER_PEER {
            if let Some((oldest, _)) = mine.iter().min_by_key(|(_, at)| *at) {
                issued.remove(oldest);
            }
        }
        if issued.len() >= MAX_VALUES {
            if let Some(oldest) = issued.iter().min_by_key(|(_, i)| i.at).map(|(k, _)| *k) {
                issued.remove(&oldest);
            }
        }
        issued.insert(digest(&value), Issued { peer, at: now });
        value
    }

    /// Whether `value` was issued to `peer` less than [`LIFETIME`] ago and not used; it is
    /// used up either way.
    pub fn take(&self, value: &str, peer: IpAddr) -> bool {
        self.take_at(value, peer, Instant::now())
    }

    fn take_at(&self, value: &str, peer: IpAddr, now: Instant) -> bool {
        sync::lock(&self.issued)
            .remove(&digest(value))
            .is_some_and(|issued| {
                issued.peer == peer && now.saturating_duration_since(issued.at) < LIFETIME
            })
    }
}

/// The SHA-256 of a value: what is kept of it.
pub fn digest(value: &str) -> [u8; 32] {
    Sha256::digest(value.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));

    #[test]
    fn a_value_is_good_once_from_its_address_within_its_lifetime() {
        let nonces = SignInNonces::new();
        let t0 = Instant::now();
        let value = nonces.issue_at(A, t0);
        assert!(!nonces.take_at("made-up", A, t0), "never issued");
        assert!(nonces.take_at(&value, A, t0), "issued to A");
        assert!(!nonces.take_at(&value, A, t0), "used once already");

        let stolen = nonces.issue_at(A, t0);
        assert!(
            !nonces.take_at(&stolen, B, t0),
            "posted from another address"
        );
        assert!(
            !nonces.take_at(&stolen, A, t0),
            "and used up by that attempt"
        );

        let old = nonces.issue_at(A, t0);
        assert!(!nonces.take_at(&old, A, t0 + LIFETIME), "too old");
    }

    #[test]
    fn one_address_cannot_push_out_another_s_values() {
        let nonces = SignInNonces::new();
        let t0 = Instant::now();
        let victim = nonces.issue_at(B, t0);
        let first = nonces.issue_at(A, t0);
        for i in 1..=MAX_PER_PEER as u64 {
            nonces.issue_at(A, t0 + Duration::from_millis(i));
        }
        assert!(!nonces.take_at(&first, A, t0), "A's oldest was forgotten");
        assert!(nonces.take_at(&victim, B, t0), "B's value is still there");
    }
}
