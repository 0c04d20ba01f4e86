//! In-memory claims held while an invoice is being certified: the rn in flight (so that a
//! concurrent retry of the same rn answers 409 instead of certifying twice), the reserved
//! quota unit (so that concurrent requests cannot overrun the annual quota) and a credit
//! note's share of its original (so that two credit notes of one original arriving together
//! cannot both take what is left of it). All are released when the guard is dropped, whatever
//! the outcome; a success has by then been journaled, and the journal's entry is what counts
//! from there on.

use std::collections::{HashMap, HashSet};
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

#[derive(Debug, Default)]
struct ClaimState {
    in_flight: HashSet<RnKey>,
    idempotency_keys: HashSet<RnKey>,
    reserved: HashMap<(String, i32), u64>,
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

    /// Whether `rn` is in flight.
    pub fn rn_in_flight(&self, org: &str, env: Environment, rn: &str) -> bool {
        self.lock()
            .in_flight
            .contains(&(org.to_string(), env, rn.to_string()))
    }

    /// Reserves one unit of `org`'s quota of `year` when `used + reserved < quota`;
    /// `None` when the quota would be exceeded.
    pub fn reserve_quota(
        self: &Arc<Self>,
        org: &str,
        year: i32,
        used: u64,
        quota: u64,
    ) -> Option<QuotaClaim> {
        let key = (org.to_string(), year);
        let mut state = self.lock();
        let reserved = state.reserved.entry(key.clone()).or_insert(0);
        if used.saturating_add(*reserved) >= quota {
            return None;
        }
        *reserved += 1;
        Some(QuotaClaim {
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
        let mut state = self.claims.lock();
        if self.idempotency {
            state.idempotency_keys.remove(&self.key);
        } else {
            state.in_flight.remove(&self.key);
        }
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
        let mut state = self.claims.lock();
        if let Some(count) = state.reserved.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                state.reserved.remove(&self.key);
            }
        }
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
        let a = claims.reserve_quota("demo", 2026, 8, 10);
        let b = claims.reserve_quota("demo", 2026, 8, 10);
        assert!(a.is_some() && b.is_some());
        assert!(claims.reserve_quota("demo", 2026, 8, 10).is_none());
        assert_eq!(claims.reserved("demo", 2026), 2);
        drop(a);
        assert_eq!(claims.reserved("demo", 2026), 1);
        assert!(claims.reserve_quota("demo", 2026, 8, 10).is_some());
        // Another year has its own quota.
        assert!(claims.reserve_quota("demo", 2027, 0, 1).is_some());
    }
}
