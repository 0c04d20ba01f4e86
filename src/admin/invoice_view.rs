//! What an auditor sees of one register entry: the one model `log show` (the CLI, as text,
//! `cli/invoice_view.rs`) and the dashboard's invoice page (as HTML,
//! `dashboard/invoice_page.rs`) both render. It is built from an [`InvoiceRecord`] with every
//! date, amount, number and name already said in the reader's language and zone; the
//! register's own texts (names, numbers, codes) are given as journaled, for each rendering
//! to make visible (`format::visible`) and, for HTML, escape.

use chrono::FixedOffset;

use super::audit::{EntryLink, InvoiceRecord, KeptInvoice};
use crate::i18n::{format, names, Lang};
use crate::model::{ClientContent, Environment, InvoiceContent, FISCAL_CURRENCY};

/// One entry as an auditor reads it.
#[derive(Debug, Clone)]
pub struct InvoiceView<'a> {
    /// The document's name (`Facture de vente`).
    pub document: String,
    /// The document's name and its code (`Facture de vente (FV)`).
    pub type_and_code: String,
    /// The invoice number.
    pub rn: &'a str,
    /// Its register.
    pub environment: Environment,
    /// Its sequence in that register.
    pub sequence: u64,
    /// The seller: organization, NIF, ISF.
    pub org: &'a str,
    /// The seller's NIF.
    pub nif: &'a str,
    /// The seller's ISF.
    pub isf: &'a str,
    /// When it was certified.
    pub certified: String,
    /// When the gateway received it.
    pub received: String,
    /// The channel (device) that certified it.
    pub device: &'a str,
    /// The API key it came with.
    pub key_id: &'a str,
    /// Who recorded it (the API, a settlement...).
    pub recorded_by: String,
    /// The SHA-256 of the request as certified.
    pub digest: &'a str,
    /// The invoice it certified, as far as it was kept.
    pub content: Content<'a>,
    /// HT, VAT and TTC of each tax group: (group, HT, VAT, TTC).
    pub groups: Vec<[String; 4]>,
    /// Totals, in CDF whatever the invoice's currency (the channel computes in CDF).
    pub total: String,
    /// The VAT.
    pub vat: String,
    /// The specific tax (`None` when zero).
    pub specific_tax: Option<String>,
    /// The specific tax, zero included.
    pub specific_tax_or_zero: String,
    /// The USD equivalent, when the invoice has one.
    pub usd: Option<String>,
    /// The security elements.
    pub security: Security<'a>,
    /// For a credit note: the code of the invoice it reduces and the kind of reduction.
    pub reference: Option<Reference<'a>>,
    /// That invoice, when this register holds it.
    pub original: Option<Link<'a>>,
    /// The credit notes that reduce this invoice, in register order.
    pub credit_notes: Vec<Link<'a>>,
}

/// The security elements of the entry.
#[derive(Debug, Clone)]
pub struct Security<'a> {
    /// codeDEFDGI.
    pub code_def: &'a str,
    /// The counters.
    pub counters: &'a str,
    /// The NIM.
    pub nim: &'a str,
    /// The device's time.
    pub device_time: String,
    /// The QR code's text.
    pub qr_code: &'a str,
}

/// What the entry's invoice names as its original.
#[derive(Debug, Clone)]
pub struct Reference<'a> {
    /// The original's codeDEFDGI.
    pub code: &'a str,
    /// The kind of reduction (`COR` when the invoice says none).
    pub kind: &'a str,
}

/// The invoice the entry certified.
#[derive(Debug, Clone)]
pub enum Content<'a> {
    /// As certified.
    Kept(Box<Kept<'a>>),
    /// Certified by 1.4.0 or before: only its digest was kept.
    NotKept,
    /// Kept, but unreadable: why.
    Unreadable(&'a str),
}

/// A kept invoice.
#[derive(Debug, Clone)]
pub struct Kept<'a> {
    /// Its mode, upper case.
    pub mode: String,
    /// Its currency, said.
    pub currency: String,
    /// The operator: name, and id in brackets when given.
    pub operator: String,
    /// Its client, if any.
    pub client: Option<&'a ClientContent>,
    /// Its items.
    pub items: Vec<Item<'a>>,
    /// Its payments.
    pub payments: Vec<Payment<'a>>,
    /// Its comments.
    pub comments: Vec<&'a str>,
}

/// One item of a kept invoice.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its code, if any.
    pub code: Option<&'a str>,
    /// Its type.
    pub item_type: &'a str,
    /// Its tax group.
    pub tax_group: &'a str,
    /// Its quantity.
    pub quantity: String,
    /// Its unit price.
    pub price: String,
    /// Its line amount (`-` when it has none).
    pub amount: String,
    /// Its specific tax, in CDF.
    pub specific_tax: Option<String>,
    /// A changed price: the original price in CDF and why (made visible).
    pub price_change: Option<(String, String)>,
}

/// One payment of a kept invoice.
#[derive(Debug, Clone)]
pub struct Payment<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its amount, in CDF whatever currency it was paid in.
    pub amount: String,
    /// That currency, with what the amount was worth in it.
    pub paid_in: Option<String>,
}

/// An entry a credit note links to, or from.
#[derive(Debug, Clone)]
pub struct Link<'a> {
    /// Its sequence.
    pub sequence: u64,
    /// Its invoice number.
    pub rn: &'a str,
    /// Its type's code.
    pub invoice_type: &'a str,
    /// Its total TTC, a number.
    pub total: String,
    /// Its total TTC, an amount in CDF.
    pub total_amount: String,
    /// Its codeDEFDGI.
    pub code_def: &'a str,
    /// When it was certified.
    pub certified: String,
}

impl<'a> InvoiceView<'a> {
    /// The view of `record`, in `lang`, its times in `zone`.
    pub fn of(record: &'a InvoiceRecord, zone: FixedOffset, lang: Lang) -> InvoiceView<'a> {
        let (e, r) = (&record.entry, &record.entry.request);
        let cdf = |value| format::amount(value, FISCAL_CURRENCY, lang);
        let kept = match &record.certified_invoice {
            KeptInvoice::Kept { invoice } => Some(invoice.as_ref()),
            _ => None,
        };
        let content = match &record.certified_invoice {
            KeptInvoice::Kept { invoice } => Content::Kept(Box::new(Kept::of(invoice, lang))),
            KeptInvoice::NotKept => Content::NotKept,
            KeptInvoice::Unreadable { reason } => Content::Unreadable(reason),
        };
        let link = |l: &'a EntryLink| Link {
            sequence: l.sequence,
            rn: &l.rn,
            invoice_type: &l.invoice_type,
            total: format::number(l.total, lang),
            total_amount: cdf(l.total),
            code_def: &l.code_def,
            certified: format::date_time(l.certified_at, zone, lang),
        };
        let totals = &r.totals;
        InvoiceView {
            document: names::document(&r.invoice_type).render(lang),
            type_and_code: names::document_and_code(&r.invoice_type, lang),
            rn: &r.rn,
            environment: r.environment,
            sequence: e.sequence,
            org: &r.org,
            nif: &r.nif,
            isf: &r.isf,
            certified: format::date_time(e.certified_at, zone, lang),
            received: format::date_time(r.received_at, zone, lang),
            device: &r.device,
            key_id: &r.key_id,
            recorded_by: names::recorded_by(&e.source).render(lang),
            digest: &r.request_digest,
            content,
            groups: record
                .groups
                .iter()
                .map(|g| {
                    [
                        g.group.to_string(),
                        format::number(g.ht, lang),
                        format::number(g.vat, lang),
                        format::number(g.ttc, lang),
                    ]
                })
                .collect(),
            total: cdf(totals.total),
            vat: cdf(totals.vat),
            specific_tax: (!totals.specific_tax.is_zero()).then(|| cdf(totals.specific_tax)),
            specific_tax_or_zero: cdf(totals.specific_tax),
            usd: totals
                .usd_equivalent
                .map(|usd| format::amount(usd, "USD", lang)),
            security: Security {
                code_def: &e.security.code_def,
                counters: &e.security.counters,
                nim: &e.security.nim,
                device_time: format::device_date_time(&e.security.date_time, lang),
                qr_code: &e.security.qr_code,
            },
            reference: kept.and_then(|invoice| {
                Some(Reference {
                    code: invoice.reference.as_deref()?,
                    kind: invoice.reference_type.as_deref().unwrap_or("COR"),
                })
            }),
            original: record.original.as_ref().map(link),
            credit_notes: record.credit_notes.iter().map(link).collect(),
        }
    }
}

impl<'a> Kept<'a> {
    fn of(invoice: &'a InvoiceContent, lang: Lang) -> Kept<'a> {
        let cdf = |value| format::amount(value, FISCAL_CURRENCY, lang);
        let operator = match &invoice.operator.id {
            Some(id) => format!("{} ({id})", invoice.operator.name),
            None => invoice.operator.name.clone(),
        };
        Kept {
            mode: invoice.mode.to_uppercase(),
            currency: names::invoice_currency(invoice, lang),
            operator,
            client: invoice.client.as_ref(),
            items: invoice
                .items
                .iter()
                .map(|item| Item {
                    name: &item.name,
                    code: item.code.as_deref(),
                    item_type: &item.item_type,
                    tax_group: &item.tax_group,
                    quantity: format::quantity(item.quantity, lang),
                    price: format::number(item.price, lang),
                    amount: item
                        .line_amount()
                        .map_or_else(|| "-".into(), |v| format::number(v, lang)),
                    specific_tax: item.tax_specific_amount.map(cdf),
                    price_change: item.original_price.map(|original| {
                        let why = item.price_modification.as_deref().unwrap_or("-");
                        (cdf(original), format::visible(why).into_owned())
                    }),
                })
                .collect(),
            payments: invoice
                .payments
                .iter()
                .map(|p| Payment {
                    name: &p.name,
                    amount: cdf(p.amount),
                    paid_in: names::payment_currency(p, invoice, lang),
                })
                .collect(),
            comments: invoice.comments(),
        }
    }
}
