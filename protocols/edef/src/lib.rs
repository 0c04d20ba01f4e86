//! The messages of the DGI's e-MCF web API ("e-DEF"), as far as public evidence shows them
//! (`docs/web-api.md` of the gateway): the invoice request the gateway sends,
//! the calculation and the confirmation the DGI answers, the e-MCF's status with its pending
//! requests, and the VAT rates. No I/O, no runtime.
//!
//! Amounts are [`rust_decimal::Decimal`] end to end: written as JSON numbers with their exact
//! digits ([`number`]), read from numbers or strings. Replies are read by a tolerant reader
//! ([`read`]): the fields the gateway uses are read strictly, every other field is left alone,
//! and what was odd (an amount sent as text, a key in another case, an error code on a 2xx)
//! is reported as an [`Anomaly`] for the caller to log once and count.

pub mod number;
pub mod paths;
pub mod read;
pub mod reply;
pub mod request;

pub use read::{Anomaly, ReplyError};
pub use reply::{Calculation, Confirmation, DgiError, EmcfStatus, PendingRequest, TaxRates};
pub use request::{
    ConfirmBody, Currency, InvoiceRequest, RequestClient, RequestItem, RequestOperator,
    RequestPayment,
};

/// The sixteen VAT groups, `A`..`P`, in the order of the calculation's fields (`taa`..`tap`).
pub const GROUPS: [char; 16] = [
    'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O', 'P',
];
