//! Plausibility: what the register and the organization say an invoice's total may be, known
//! before anything is sent (docs/error-codes.md, 180 and 181). A credit note may take at most
//! what is left of its original in this register (the original's total less the credit notes
//! of it certified, and those being certified now: their shares are claims); an invoice may
//! total at most its organization's `max_invoice_total`.
//!
//! An `ht` invoice's TTC depends on the VAT rates the channel gives, so admission knows only
//! a range ([`ValidInvoice::total_range`]): what is over the limit even without VAT is
//! refused here; the rest goes on with a [`Ceiling`] that the channel checks as soon as its
//! rates give the exact total, before the invoice is opened on it (after C1h on a box, before
//! the request on the web API). A credit note in flight holds as its share the most it can
//! total (at most what is left), so that a concurrent one cannot take the same amount.

use std::collections::HashSet;

use crate::certify::invoice::TaxGroup;
use rust_decimal::Decimal;

use super::claims::CreditClaim;
use super::{Admission, Asked, Principal};
use crate::certify::error::CreditExcess;
use crate::certify::invoice::ValidInvoice;
use crate::certify::CertifyError;

/// The most an admitted invoice's total may be, and why; checked again by the channel with
/// the exact total ([`Ceiling::check_total`]). The default has no limit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ceiling {
    /// The organization's largest invoice total.
    max_total: Option<Decimal>,
    /// A credit note's share of its original: what it may total at most, with the figures
    /// its refusal gives.
    credit: Option<CreditExcess>,
}

impl Ceiling {
    /// The exact total (TTC plus specific taxes, CDF) against every limit: 180 or 181.
    pub fn check_total(&self, total: Decimal) -> Result<(), CertifyError> {
        if let Some(max) = self.max_total.filter(|max| total > *max) {
            return Err(CertifyError::AboveMaxTotal {
                total,
                at_least: false,
                max,
            });
        }
        match &self.credit {
            Some(share) if total > share.room => Err(CertifyError::CreditExceedsOriginal(
                Box::new(CreditExcess {
                    total,
                    at_least: false,
                    ..share.clone()
                }),
            )),
            _ => Ok(()),
        }
    }

    /// The organization's largest total against the least `invoice` can total: 181 now when
    /// even that is over it.
    fn check_least(&self, least: Decimal, at_least: bool) -> Result<(), CertifyError> {
        match self.max_total.filter(|max| least > *max) {
            Some(max) => Err(CertifyError::AboveMaxTotal {
                total: least,
                at_least,
                max,
            }),
            None => Ok(()),
        }
    }

    /// [`Ceiling::check_total`] with the total `invoice` comes to at the channel's `rates`.
    pub fn check_with_rates(
        &self,
        invoice: &ValidInvoice,
        rates: &[Option<Decimal>; TaxGroup::COUNT],
    ) -> Result<(), CertifyError> {
        if *self == Ceiling::default() {
            return Ok(());
        }
        let expected = invoice
            .expected_totals(rates)
            .ok_or(CertifyError::TotalsTooLarge)?;
        self.check_total(expected.total)
    }
}

impl Admission {
    /// The limits `invoice` of `principal` must keep: refused now when even its least total
    /// breaks one; else its ceiling and, for a credit note of an original in this register,
    /// its share of that original (held until the answer).
    pub(super) fn plausible(
        &self,
        principal: &Principal,
        invoice: &Asked,
    ) -> Result<(Ceiling, Option<CreditClaim>), CertifyError> {
        let (least, most) = invoice.total_range.ok_or(CertifyError::TotalsTooLarge)?;
        let at_least = least != most;
        let mut ceiling = Ceiling {
            max_total: principal.org.max_invoice_total,
            credit: None,
        };
        let reference = match &invoice.credits {
            Some(reference) => reference.as_str(),
            None => {
                ceiling.check_least(least, at_least)?;
                return Ok((ceiling, None));
            }
        };
        let (org, env) = (principal.org.id.as_str(), principal.environment);
        // Locked from the register's read to the share's: two credit notes of one original
        // cannot both read the same room.
        let book = self.claims.credit_book();
        let Some((original, credit_notes)) = self.store.credited_original(org, env, reference)?
        else {
            // Not certified through this register (before the gateway, or elsewhere):
            // allowed within the organization's largest total, and its answer says so
            // (warning 302).
            ceiling.check_least(least, at_least)?;
            return Ok((ceiling, None));
        };
        // A credit note of an original in this register is bounded by that original: the
        // organization's largest total (which may have been lowered since) does not refuse
        // the refund of an invoice it once certified.
        ceiling.max_total = None;
        let certified: HashSet<&str> = credit_notes
            .iter()
            .map(|note| note.request.rn.as_str())
            .collect();
        let credited = credit_notes.iter().fold(Decimal::ZERO, |sum, note| {
            sum.saturating_add(note.request.totals.total)
        });
        let key = (org.to_owned(), env, reference.to_owned());
        // A share whose credit note the register already holds is counted there.
        let in_flight = book.pending(&key, |rn| !certified.contains(rn) && rn != invoice.rn);
        // A credit note whose run ended in doubt (an administrator or reconciliation settles
        // it) no longer holds a share, but may be certified yet: its open intent counts, at
        // the device's total, unless a run in flight already holds its share.
        let unsettled = self
            .store
            .open_intents()?
            .into_iter()
            .filter(|(_, open)| {
                open.org.as_str() == org
                    && open.environment == env
                    && open.is_credit_note()
                    && open.rn != invoice.rn
                    && !certified.contains(open.rn.as_str())
                    && !book.holds(&key, &open.rn)
                    && open
                        .content()
                        .and_then(Result::ok)
                        .is_some_and(|content| content.reference.as_deref() == Some(reference))
            })
            .fold(Decimal::ZERO, |sum, (_, open)| {
                sum.saturating_add(open.totals.total)
            });
        let pending = in_flight.saturating_add(unsettled);
        let original_total = original.request.totals.total;
        let room = original_total
            .saturating_sub(credited)
            .saturating_sub(pending);
        let mut excess = CreditExcess {
            reference: reference.to_owned(),
            original_rn: original.request.rn.clone(),
            original_total,
            credited,
            pending,
            room,
            total: least,
            at_least,
        };
        if least > room {
            return Err(CertifyError::CreditExceedsOriginal(Box::new(excess)));
        }
        // The most it can total, within what is left: its share, and its limit.
        excess.room = most.min(room);
        let claim = book.reserve(key, &invoice.rn, excess.room);
        ceiling.credit = Some(excess);
        Ok((ceiling, Some(claim)))
    }
}
