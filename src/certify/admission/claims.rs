//! In-memory claims held while an invoice is being certified: the rn in flight (so that a
//! concurrent retry of the same rn answers 409 instead of certifying twice), the reserved
//! quota unit (so that concurrent requests cannot overrun the annual quota) and a credit
//! note's share of its original (so that two credit notes of one original arriving together
//! cannot both take what is left of it). All are released when the guard is dropped, whatever
//! the outcome; a success has by then been journaled, and the journal's entry is what counts
//! from there on.
//!
//! Each release is counted, per shard of the claims' keys ([`Claims::mark`]): admission reads
//! the store once, before it claims, and reads again only what a claim released in between
//! may have changed. A claim is released after its certification is committed, so a release
//! of the same key before the mark was taken happened before the read, which sees its
//! entry; one after the mark changes the mark's shard ([`Claims::released_since`]).

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use rust_decimal::Decimal;

use crate::model::Environment;

type RnKey = (String, Environment, String);

/// An original invoice, by (organization, register, its codeDEFDGI).
pub type OriginalKey = (String, Environment, String);

/// The rns being certified and the quota units reserved, per organization and year; the
/// shares of originals taken by credit notes in flight.
#[derive(Debug, Default)]
pub struct Claims {
    state: Mutex<ClaimState>,
    /// Apart from `state`: it is held while the register is read (the original and its
    /// certified credit notes), which must not hold up the rn and quota claims of others.
    credits: Mutex<HashMap<OriginalKey, Vec<(String, Decimal)>>>,
}

#[derive(Debug)]
struct ClaimState {
    in_flight: HashSet<RnKey>,
    idempotency_keys: HashSet<RnKey>,
    reserved: HashMap<(String, i32), u64>,
    /// Releases counted per shard of the claims' keys ([`shard`]).
    releases: Box<[u64; SHARDS]>,
}

impl Default for ClaimState {
    fn default() -> ClaimState {
        ClaimState {
            in_flight: HashSet::new(),
            idempotency_keys: HashSet::new(),
            reserved: HashMap::new(),
            releases: Box::new([0; SHARDS]),
        }
    }
}

/// Shards of the release counts: enough that a release of another key rarely shares one.
const SHARDS: usize = 1024;

/// What a claim holds, as its release is counted.
#[derive(Debug, Clone, Copy)]
pub enum Claimed<'a> {
    /// An rn of an organization in an environment.
    Rn(&'a str, Environment, &'a str),
    /// An `Idempotency-Key` of an organization in an environment.
    IdempotencyKey(&'a str, Environment, &'a str),
    /// The quota of an organization in a year.
    Quota(&'a str, i32),
}

/// The shard of the release counts that `claimed` falls in.
fn shard(claimed: Claimed<'_>) -> usize {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    match claimed {
        Claimed::Rn(org, env, rn) => (0u8, org, env, rn).hash(&mut hasher),
        Claimed::IdempotencyKey(org, env, key) => (1u8, org, env, key).hash(&mut hasher),
        Claimed::Quota(org, year) => (2u8, org, year).hash(&mut hasher),
    }
    (hasher.finish() % SHARDS as u64) as usize
}

/// The count of releases of a shard when it was taken ([`Claims::mark`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    shard: usize,
    releases: u64,
}

/// Holds an rn (or an `Idempotency-Key`) in flight until dropped.
#[derive(Debug)]
pub struct RnClaim {
    claims: Arc<Claims>,
    key: RnKey,
    idempotency: bool,
}

/// Holds one reserved quota unit until dropped.
#[derive(Debug)]
pub struct QuotaClaim {
    claims: Arc<Claims>,
    key: (String, i32),
}

/// Holds a credit note's share of its original until dropped.
#[derive(Debug)]
pub struct CreditClaim {
    claims: Arc<Claims>,
    key: OriginalKey,
    rn: String,
}

/// The credit notes' shares, locked: what others in flight have taken of an original is read
/// and this one's share taken under one lock, the register read in between.
pub struct CreditBook<'a> {
    claims: &'a Arc<Claims>,
    shares: MutexGuard<'a, HashMap<OriginalKey, Vec<(String, Decimal)>>>,
}

impl CreditBook<'_> {
    /// The sum of the shares of `key` taken by credit notes in flight whose rn `counts`.
    pub fn pending(&self, key: &OriginalKey, counts: impl Fn(&str) -> bool) -> Decimal {
        self.shares.get(key).map_or(Decimal::ZERO, |shares| {
            shares
                .iter()
                .filter(|(rn, _)| counts(rn))
                .fold(Decimal::ZERO, |sum, (_, amount)| {
                    sum.saturating_add(*amount)
                })
        })
    }

    /// Whether the credit note `rn` holds a share of `key` (a run of it is in flight).
    pub fn holds(&self, key: &OriginalKey, rn: &str) -> bool {
        self.shares
            .get(key)
            .is_some_and(|shares| shares.iter().any(|(held, _)| held == rn))
    }

    /// Takes `amount` of `key` for the credit note `rn` until the claim is dropped.
    pub fn reserve(mut self, key: OriginalKey, rn: &str, amount: Decimal) -> CreditClaim {
        self.shares
            .entry(key.clone())
            .or_default()
            .push((rn.to_owned(), amount));
        CreditClaim {
            claims: Arc::clone(self.claims),
            key,
            rn: rn.to_owned(),
        }
    }
}

impl Claims {
    /// The credit notes' shares, locked until the book is dropped (or a share reserved).
    pub fn credit_book(self: &Arc<Self>) -> CreditBook<'_> {
        CreditBook {
            claims: self,
            // Each operation is one push or one removal: a panic cannot leave it half done.
            shares: crate::sync::lock(&self.credits),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ClaimState> {
        // A panic while holding this lock cannot leave the sets inconsistent (each operation
        // is a single insert or remove), so a poisoned lock is still usable.
        crate::sync::lock(&self.state)
    }

    /// Claims `rn` for `org` in `env`; `None` when it is already in flight.
    pub fn claim_rn(self: &Arc<Self>, org: &str, env: Environment, rn: &str) -> Option<RnClaim> {
        let key = (org.to_string(), env, rn.to_string());
        let fresh = self.lock().in_flight.insert(key.clone());
        fresh.then(|| RnClaim {
            claims: Arc::clone(self),
            key,
            idempotency: false,
        })
    }

    /// Claims an `Idempotency-Key` of `org` in `env`; `None` when a request with it is in
    /// flight.
    pub fn claim_idempotency_key(
        self: &Arc<Self>,
        org: &str,
        env: Environment,
        idempotency_key: &str,
    ) -> Option<RnClaim> {
        let key = (org.to_string(), env, idempotency_key.to_string());
        let fresh = self.lock().idempotency_keys.insert(key.clone());
        fresh.then(|| RnClaim {
            claims: Arc::clone(self),
            key,
            idempotency: true,
        })
    }

    /// The releases counted so far in the shard of `claimed`: taken before a read of the
    /// store that a claim of it depends on.
    pub fn mark(&self, claimed: Claimed<'_>) -> Mark {
        let shard = shard(claimed);
        Mark {
            shard,
            releases: self.lock().releases[shard],
        }
    }

    /// Whether a claim of `mark`'s shard was released since the mark was taken: what the
    /// read made after it says may be out of date (a release of another key of the shard
    /// says so too, needlessly).
    pub fn released_since(&self, mark: Mark) -> bool {
        self.lock().releases[mark.shard] != mark.releases
    }

    /// Whether `rn` is in flight.
    pub fn rn_in_flight(&self, org: &str, env: Environment, rn: &str) -> bool {
        self.lock()
            .in_flight
            .contains(&(org.to_string(), env, rn.to_string()))
    }

    /// One unit of `org`'s quota of `year`, `used` read after `mark`: every release of the
    /// mark's shard since counts as used too (a unit certified after the read is in neither
    /// `used` nor the reservations; an abandoned one, or another key's of the shard, is
    /// counted needlessly), in the same lock as the reservation. `Err` with the releases
    /// counted when no unit is left on that count.
    pub fn reserve_quota_since(
        self: &Arc<Self>,
        org: &str,
        year: i32,
        used: u64,
        quota: u64,
        mark: Mark,
    ) -> Result<QuotaClaim, u64> {
        let key = (org.to_string(), year);
        let mut state = self.lock();
        let released = state.releases[mark.shard].wrapping_sub(mark.releases);
        let reserved = state.reserved.entry(key.clone()).or_insert(0);
        if used.saturating_add(released).saturating_add(*reserved) >= quota {
            return Err(released);
        }
        *reserved += 1;
        Ok(QuotaClaim {
            claims: Arc::clone(self),
            key,
        })
    }

    /// Units reserved now for `org` in `year`.
    #[cfg(test)]
    pub fn reserved(&self, org: &str, year: i32) -> u64 {
        self.lock()
            .reserved
            .get(&(org.to_string(), year))
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for RnClaim {
    fn drop(&mut self) {
        let (org, env, key) = (self.key.0.as_str(), self.key.1, self.key.2.as_str());
        let claimed = if self.idempotency {
            Claimed::IdempotencyKey(org, env, key)
        } else {
            Claimed::Rn(org, env, key)
        };
        let mut state = self.claims.lock();
        if self.idempotency {
            state.idempotency_keys.remove(&self.key);
        } else {
            state.in_flight.remove(&self.key);
        }
        let at = shard(claimed);
        state.releases[at] = state.releases[at].wrapping_add(1);
    }
}

impl Drop for CreditClaim {
    fn drop(&mut self) {
        let mut shares = crate::sync::lock(&self.claims.credits);
        if let Some(list) = shares.get_mut(&self.key) {
            if let Some(at) = list.iter().position(|(rn, _)| *rn == self.rn) {
                list.swap_remove(at);
            }
            if list.is_empty() {
                shares.remove(&self.key);
            }
        }
    }
}

impl Drop for QuotaClaim {
    fn drop(&mut self) {
        let at = shard(Claimed::Quota(&self.key.0, self.key.1));
        let mut state = self.claims.lock();
        if let Some(count) = state.reserved.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                state.reserved.remove(&self.key);
            }
        }
        state.releases[at] = state.releases[at].wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_rn_is_claimed_once_until_released() {
        let claims = Arc::new(Claims::default());
        let first = claims.claim_rn("demo", Environment::Production, "F1");
        assert!(first.is_some());
        assert!(claims
            .claim_rn("demo", Environment::Production, "F1")
            .is_none());
        // Another environment or organization is another rn.
        assert!(claims
            .claim_rn("demo", Environment::Sandbox, "F1")
            .is_some());
        assert!(claims
            .claim_rn("other", Environment::Production, "F1")
            .is_some());
        drop(first);
        assert!(!claims.rn_in_flight("demo", Environment::Production, "F1"));
        assert!(claims
            .claim_rn("demo", Environment::Production, "F1")
            .is_some());
    }

    #[test]
    fn idempotency_keys_are_claimed_apart_from_rns() {
        let claims = Arc::new(Claims::default());
        let rn = claims.claim_rn("demo", Environment::Production, "K1");
        let key = claims.claim_idempotency_key("demo", Environment::Production, "K1");
        assert!(rn.is_some() && key.is_some());
        assert!(claims
            .claim_idempotency_key("demo", Environment::Production, "K1")
            .is_none());
        drop(key);
        assert!(claims
            .claim_idempotency_key("demo", Environment::Production, "K1")
            .is_some());
        assert!(claims.rn_in_flight("demo", Environment::Production, "K1"));
    }

    #[test]
    fn a_release_after_the_mark_is_seen_and_one_before_is_not() {
        let claims = Arc::new(Claims::default());
        let (env, rn) = (
            Environment::Production,
            Claimed::Rn("demo", Environment::Production, "F1"),
        );
        // Released before the mark: its certification was committed before the read that
        // follows the mark, which sees it; nothing to read again.
        drop(claims.claim_rn("demo", env, "F1"));
        let mark = claims.mark(rn);
        assert!(!claims.released_since(mark));
        // Another request holds F1 while this one reads the store; it finishes (releases)
        // before this one claims F1: the mark says to read again.
        let other = claims.claim_rn("demo", env, "F1");
        let mark = claims.mark(rn);
        assert!(!claims.released_since(mark));
        drop(other);
        let mine = claims.claim_rn("demo", env, "F1");
        assert!(mine.is_some());
        assert!(claims.released_since(mark));
        // Any release after a mark is seen by it, whoever released.
        let mark = claims.mark(rn);
        drop(mine);
        assert!(claims.released_since(mark));
        // An Idempotency-Key and a quota unit are counted apart from the rn of the same text.
        let key = Claimed::IdempotencyKey("demo", env, "F1");
        let quota = Claimed::Quota("demo", 2026);
        let (key_mark, quota_mark) = (claims.mark(key), claims.mark(quota));
        let held = claims.claim_idempotency_key("demo", env, "F1");
        let unit = claims.reserve_quota_since("demo", 2026, 0, 10, quota_mark);
        assert!(!claims.released_since(key_mark) && !claims.released_since(quota_mark));
        drop(held);
        assert!(claims.released_since(key_mark));
        assert!(!claims.released_since(quota_mark));
        drop(unit);
        assert!(claims.released_since(quota_mark));
    }

    #[test]
    fn release_marks_see_a_concurrent_release() {
        // A thread finishes F1 (its claim released) while this one reads: whatever the
        // interleaving, either this one's claim fails, or the release came after the mark,
        // or it came before (then the read was after it).
        for _ in 0..200 {
            let claims = Arc::new(Claims::default());
            let env = Environment::Production;
            let held = claims.claim_rn("demo", env, "F1");
            let committed = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let other = {
                let committed = Arc::clone(&committed);
                std::thread::spawn(move || {
                    committed.store(true, std::sync::atomic::Ordering::SeqCst);
                    drop(held);
                })
            };
            let mark = claims.mark(Claimed::Rn("demo", env, "F1"));
            let read_saw_it = committed.load(std::sync::atomic::Ordering::SeqCst);
            let mine = claims.claim_rn("demo", env, "F1");
            other.join().unwrap();
            if mine.is_some() {
                assert!(
                    read_saw_it || claims.released_since(mark),
                    "claimed an rn released after the read without reading again"
                );
            }
        }
    }

    #[test]
    fn credit_shares_are_counted_while_held_and_released() {
        let claims = Arc::new(Claims::default());
        let key: OriginalKey = ("demo".into(), Environment::Production, "CODE".into());
        let book = claims.credit_book();
        assert_eq!(book.pending(&key, |_| true), Decimal::ZERO);
        let first = book.reserve(key.clone(), "FA-1", Decimal::from(800));
        let second = claims
            .credit_book()
            .reserve(key.clone(), "FA-2", Decimal::from(300));
        assert_eq!(
            claims.credit_book().pending(&key, |_| true),
            Decimal::from(1100)
        );
        // A share whose credit note the register already holds is not counted twice.
        assert_eq!(
            claims.credit_book().pending(&key, |rn| rn != "FA-1"),
            Decimal::from(300)
        );
        // Another register or organization is another original.
        let sandbox: OriginalKey = ("demo".into(), Environment::Sandbox, "CODE".into());
        assert_eq!(
            claims.credit_book().pending(&sandbox, |_| true),
            Decimal::ZERO
        );
        drop(first);
        assert_eq!(
            claims.credit_book().pending(&key, |_| true),
            Decimal::from(300)
        );
        drop(second);
        assert!(claims.credits.lock().unwrap().is_empty());
    }

    #[test]
    fn reservations_count_against_the_quota_and_are_released() {
        let claims = Arc::new(Claims::default());
        let unit = |used, quota| {
            let mark = claims.mark(Claimed::Quota("demo", 2026));
            claims.reserve_quota_since("demo", 2026, used, quota, mark)
        };
        let a = unit(8, 10);
        let b = unit(8, 10);
        assert!(a.is_ok() && b.is_ok());
        assert_eq!(unit(8, 10).err(), Some(0), "none left, nothing moving");
        assert_eq!(claims.reserved("demo", 2026), 2);
        drop(a);
        assert_eq!(claims.reserved("demo", 2026), 1);
        assert!(unit(8, 10).is_ok());
        // Another year has its own quota.
        let mark = claims.mark(Claimed::Quota("demo", 2027));
        assert!(claims.reserve_quota_since("demo", 2027, 0, 1, mark).is_ok());
    }

    #[test]
    fn a_unit_released_after_the_mark_counts_as_used() {
        // Read 8 used after the mark; meanwhile a unit in flight was certified (not in the
        // 8) and released: 9 may be used, so with a quota of 10 and one reserved, none left.
        let claims = Arc::new(Claims::default());
        let in_flight = claims
            .reserve_quota_since(
                "demo",
                2026,
                8,
                10,
                claims.mark(Claimed::Quota("demo", 2026)),
            )
            .expect("one left");
        let mark = claims.mark(Claimed::Quota("demo", 2026));
        let other = claims
            .reserve_quota_since(
                "demo",
                2026,
                7,
                10,
                claims.mark(Claimed::Quota("demo", 2026)),
            )
            .expect("another");
        drop(in_flight);
        assert_eq!(
            claims.reserve_quota_since("demo", 2026, 8, 10, mark).err(),
            Some(1),
            "8 read + 1 released since + 1 reserved = 10"
        );
        drop(other);
    }
}
