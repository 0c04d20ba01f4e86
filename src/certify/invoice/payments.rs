//! Payment rules: method, amount, and the optional currency of each payment.

use rust_decimal::Decimal;

use super::header::given;
use super::items::check_amount;
use super::{code, quoted, Payment, PaymentMethod, ValidationError, MAX_AMOUNT};
use crate::certify::invoice::request::{InvoiceRequest, PaymentRequest};
use crate::msg;

/// A validated payment: method and amount, and the currency fields the client sent (they go
/// to the digest only; the channels carry method and amount).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ValidPayment {
    /// Method and amount.
    pub payment: Payment,
    /// `curCode`, if sent (CDF or USD).
    pub cur_code: Option<String>,
    /// `curRate`, if sent and > 0 (a CDF payment's -1 means "none").
    pub cur_rate: Option<Decimal>,
}

/// `payments`: absent or empty means none (the run then pays the device total in ESPECES).
pub(super) fn payments(request: &InvoiceRequest) -> Result<Vec<ValidPayment>, ValidationError> {
    let mut total = Decimal::ZERO;
    let mut out = Vec::new();
    for (i, p) in request.payments.iter().flatten().enumerate() {
        let path = format!("payments[{i}]");
        let valid = payment(p, &path)?;
        total = total
            .checked_add(valid.payment.amount)
            .filter(|t| *t <= MAX_AMOUNT)
            .ok_or_else(|| {
                ValidationError::at(
                    code::AMOUNT_OUT_OF_RANGE,
                    &format!("{path}.amount"),
                    msg!("err-payments-sum-out-of-range", max = MAX_AMOUNT),
                )
            })?;
        out.push(valid);
    }
    Ok(out)
}

fn payment(p: &PaymentRequest, path: &str) -> Result<ValidPayment, ValidationError> {
    let at = |field: &str| format!("{path}.{field}");
    let name = given(&p.name).ok_or_else(|| ValidationError::missing(&at("name")))?;
    let method = PaymentMethod::from_text(name).ok_or_else(|| {
        ValidationError::at(
            code::PAYMENT_METHOD_INVALID,
            &at("name"),
            msg!(
                "err-payment-method-invalid",
                field = at("name"),
                value = quoted(name)
            ),
        )
    })?;
    let amount = p
        .amount
        .ok_or_else(|| ValidationError::missing(&at("amount")))?;
    if amount <= Decimal::ZERO {
        return Err(ValidationError::at(
            code::PAYMENT_NOT_POSITIVE,
            &at("amount"),
            msg!("err-must-be-positive", field = at("amount"), value = amount),
        ));
    }
    check_amount(
        amount,
        &at("amount"),
        2,
        code::PAYMENT_NOT_POSITIVE,
        code::PAYMENT_TOO_PRECISE,
    )?;
    let cur_code = given(&p.cur_code).map(str::to_owned);
    if let Some(other) = cur_code.as_deref().filter(|c| !matches!(*c, "CDF" | "USD")) {
        return Err(ValidationError::at(
            code::PAYMENT_CURRENCY_INVALID,
            &at("curCode"),
            msg!(
                "err-currency-invalid",
                field = at("curCode"),
                value = quoted(other)
            ),
        ));
    }
    let cur_rate = match p.cur_rate {
        None => None,
        Some(rate) if rate == -Decimal::ONE && cur_code.as_deref() != Some("USD") => None,
        Some(rate)
            if rate > Decimal::ZERO
                && rate.round_dp(4) == rate
                && rate <= MAX_AMOUNT
                && cur_code.as_deref() != Some("CDF") =>
        {
            Some(rate)
        }
        Some(rate) => {
            return Err(ValidationError::at(
                code::PAYMENT_RATE_INVALID,
                &at("curRate"),
                msg!(
                    "err-payment-rate-invalid",
                    field = at("curRate"),
                    rate = rate
                ),
            ))
        }
    };
    Ok(ValidPayment {
        payment: Payment { method, amount },
        cur_code,
        cur_rate,
    })
}
