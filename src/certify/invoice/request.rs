//! The invoice request body of `POST /api/v1/Invoice`, with the seed's field names.
//!
//! [`parse_body`] is the only way in. It reads the JSON itself (`json.rs`, through
//! `serde_json::value::RawValue`, one object level at a time) rather than deriving
//! `Deserialize` with `#[serde(deny_unknown_fields)]`, so that every refusal carries the JSON
//! path of the field at fault (`items[2].pricee`; serde's error names the key, not where):
//!
//! - a field name that is not in the schema is refused with its path (a misspelt field must
//!   not vanish silently); so is a field given twice, and an array where an object is expected;
//! - text fields must be JSON strings; decimal fields may be JSON strings or JSON numbers and
//!   are read from their text into [`Decimal`], never through `f64`; exponents are refused;
//! - `null`, and `""` for a decimal field, mean "absent";
//! - nesting deeper than [`MAX_DEPTH`] is refused by a byte scan before any recursive parsing.
//!
//! Nothing here checks values (ranges, enumerations, lengths): that is [`super::validate`].

use rust_decimal::Decimal;

use super::json::{self, Obj};
use super::ValidationError;

/// Deepest nesting of arrays and objects accepted in a body (the schema needs 3).
pub const MAX_DEPTH: usize = 32;

/// The request body. Every field is optional here; [`super::validate::validate`] says which
/// are required.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InvoiceRequest {
    /// `nif`: seller NIF; if sent, must be the API key's organization's.
    pub nif: Option<String>,
    /// `rn`: the client's invoice number.
    pub rn: Option<String>,
    /// `mode`: `ht` or `ttc`.
    pub mode: Option<String>,
    /// `isF`: seller ISF; if sent, must be the API key's organization's.
    pub isf: Option<String>,
    /// `type`: FV FT FA EV ET EA.
    pub invoice_type: Option<String>,
    /// `curCode`: CDF or USD.
    pub cur_code: Option<String>,
    /// `curDate`: date of the USD rate, ISO 8601.
    pub cur_date: Option<String>,
    /// `curRate`: CDF per USD, or -1 for a CDF invoice.
    pub cur_rate: Option<Decimal>,
    /// `items`.
    pub items: Option<Vec<ItemRequest>>,
    /// `client`.
    pub client: Option<ClientRequest>,
    /// `payments`.
    pub payments: Option<Vec<PaymentRequest>>,
    /// `operator`.
    pub operator: Option<OperatorRequest>,
    /// `reference`: the original codeDEFDGI of a credit note.
    pub reference: Option<String>,
    /// `referenceType`: COR RAN RAM RRR.
    pub reference_type: Option<String>,
    /// `cmta`..`cmth`: comment lines A..H.
    pub comments: [Option<String>; 8],
}

/// One element of `items`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ItemRequest {
    /// `code`.
    pub code: Option<String>,
    /// `name`.
    pub name: Option<String>,
    /// `type`: BIE SER TAX.
    pub item_type: Option<String>,
    /// `price`: unit price.
    pub price: Option<Decimal>,
    /// `quantity`.
    pub quantity: Option<Decimal>,
    /// `taxGroup`: A..P.
    pub tax_group: Option<String>,
    /// `taxSpecificValue`: a percentage such as `5.00%`.
    pub tax_specific_value: Option<String>,
    /// `taxSpecificAmount`.
    pub tax_specific_amount: Option<Decimal>,
    /// `originalPrice`.
    pub original_price: Option<Decimal>,
    /// `priceModification`: what changed the price.
    pub price_modification: Option<String>,
}

/// `client`. `email` and `rccm` are accepted beyond the seed: C3h carries them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientRequest {
    /// `nif`.
    pub nif: Option<String>,
    /// `type` (e.g. PM).
    pub client_type: Option<String>,
    /// `typeDesc`: not sent to the device.
    pub type_desc: Option<String>,
    /// `name`.
    pub name: Option<String>,
    /// `contact`.
    pub contact: Option<String>,
    /// `address`.
    pub address: Option<String>,
    /// `email`.
    pub email: Option<String>,
    /// `rccm`.
    pub rccm: Option<String>,
}

/// One element of `payments`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaymentRequest {
    /// `name`: ESPECES VIREMENT CARTEBANCAIRE MOBILEMONEY CHEQUES CREDIT AUTRE.
    pub name: Option<String>,
    /// `amount`.
    pub amount: Option<Decimal>,
    /// `curCode`.
    pub cur_code: Option<String>,
    /// `curRate`.
    pub cur_rate: Option<Decimal>,
}

/// `operator`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperatorRequest {
    /// `id`.
    pub id: Option<String>,
    /// `name`.
    pub name: Option<String>,
}

/// The JSON names of the comment fields, lines A..H.
pub const COMMENT_FIELDS: [&str; 8] = [
    "cmta", "cmtb", "cmtc", "cmtd", "cmte", "cmtf", "cmtg", "cmth",
];

/// The JSON names of the body's top-level fields (the schema; any other name is refused).
pub const TOP_FIELDS: &[&str] = &[
    "nif",
    "rn",
    "mode",
    "isF",
    "type",
    "curCode",
    "curDate",
    "curRate",
    "items",
    "client",
    "payments",
    "operator",
    "reference",
    "referenceType",
    "cmta",
    "cmtb",
    "cmtc",
    "cmtd",
    "cmte",
    "cmtf",
    "cmtg",
    "cmth",
];
/// The JSON names of the fields of one element of `items`.
pub const ITEM_FIELDS: &[&str] = &[
    "code",
    "name",
    "type",
    "price",
    "quantity",
    "taxGroup",
    "taxSpecificValue",
    "taxSpecificAmount",
    "originalPrice",
    "priceModification",
];
/// The JSON names of the fields of `client`.
pub const CLIENT_FIELDS: &[&str] = &[
    "nif", "type", "typeDesc", "name", "contact", "address", "email", "rccm",
];
/// The JSON names of the fields of one element of `payments`.
pub const PAYMENT_FIELDS: &[&str] = &["name", "amount", "curCode", "curRate"];
/// The JSON names of the fields of `operator`.
pub const OPERATOR_FIELDS: &[&str] = &["id", "name"];

/// Reads a request body: UTF-8 JSON, one object, the fields above and no others.
pub fn parse_body(body: &[u8]) -> Result<InvoiceRequest, ValidationError> {
    let root = json::root(body, MAX_DEPTH)?;
    let top = Obj::read(root, "", TOP_FIELDS)?;
    let mut comments: [Option<String>; 8] = Default::default();
    for (slot, name) in comments.iter_mut().zip(COMMENT_FIELDS) {
        *slot = top.text(name)?;
    }
    Ok(InvoiceRequest {
        nif: top.text("nif")?,
        rn: top.text("rn")?,
        mode: top.text("mode")?,
        isf: top.text("isF")?,
        invoice_type: top.text("type")?,
        cur_code: top.text("curCode")?,
        cur_date: top.text("curDate")?,
        cur_rate: top.decimal("curRate")?,
        items: top.array("items", ITEM_FIELDS, item)?,
        client: top.object("client", CLIENT_FIELDS, client)?,
        payments: top.array("payments", PAYMENT_FIELDS, payment)?,
        operator: top.object("operator", OPERATOR_FIELDS, operator)?,
        reference: top.text("reference")?,
        reference_type: top.text("referenceType")?,
        comments,
    })
}

fn item(o: &Obj<'_>) -> Result<ItemRequest, ValidationError> {
    Ok(ItemRequest {
        code: o.text("code")?,
        name: o.text("name")?,
        item_type: o.text("type")?,
        price: o.decimal("price")?,
        quantity: o.decimal("quantity")?,
        tax_group: o.text("taxGroup")?,
        tax_specific_value: o.text("taxSpecificValue")?,
        tax_specific_amount: o.decimal("taxSpecificAmount")?,
        original_price: o.decimal("originalPrice")?,
        price_modification: o.text("priceModification")?,
    })
}

fn client(o: &Obj<'_>) -> Result<ClientRequest, ValidationError> {
    Ok(ClientRequest {
        nif: o.text("nif")?,
        client_type: o.text("type")?,
        type_desc: o.text("typeDesc")?,
        name: o.text("name")?,
        contact: o.text("contact")?,
        address: o.text("address")?,
        email: o.text("email")?,
        rccm: o.text("rccm")?,
    })
}

fn payment(o: &Obj<'_>) -> Result<PaymentRequest, ValidationError> {
    Ok(PaymentRequest {
        name: o.text("name")?,
        amount: o.decimal("amount")?,
        cur_code: o.text("curCode")?,
        cur_rate: o.decimal("curRate")?,
    })
}

fn operator(o: &Obj<'_>) -> Result<OperatorRequest, ValidationError> {
    Ok(OperatorRequest {
        id: o.text("id")?,
        name: o.text("name")?,
    })
}
