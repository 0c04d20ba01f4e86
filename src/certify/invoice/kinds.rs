//! The invoice's enumerations, spelt as the HTTP API's body spells them (docs/error-codes.md):
//! what a body's `type`, `mode`, `referenceType`, `items[].type`, `items[].taxGroup` and
//! `payments[].name` may hold, and the comment lines `cmta`..`cmth`. Each channel says them
//! in its own words (the box: `certify/box_channel/commands/translate.rs`; the web API: the same
//! texts, `certify/web_api_channel/invoice.rs`).

use std::fmt;

/// Declares an enum of texts with `ALL`, `as_str`, `from_text` and `Display`.
macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// Every value, in the contract's order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The contract's text.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// The value of a contract text (exact spelling), `None` for any other text.
            pub fn from_text(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

text_enum!(
    /// Invoice type (`type`).
    InvoiceType {
        /// Sales invoice.
        Fv = "FV",
        /// Down payment / advance invoice.
        Ft = "FT",
        /// Credit note.
        Fa = "FA",
        /// Export sales invoice.
        Ev = "EV",
        /// Export down payment invoice.
        Et = "ET",
        /// Export credit note.
        Ea = "EA",
    }
);

impl InvoiceType {
    /// FA and EA refer to an original invoice.
    pub fn is_credit_note(self) -> bool {
        matches!(self, InvoiceType::Fa | InvoiceType::Ea)
    }
}

text_enum!(
    /// How item prices are given (`mode`).
    PriceMode {
        /// Prices exclude VAT.
        Ht = "ht",
        /// Prices include VAT.
        Ttc = "ttc",
    }
);

text_enum!(
    /// Why a credit note refers to its original (`referenceType`).
    ReferenceType {
        /// Correction.
        Cor = "COR",
        /// Cancellation.
        Ran = "RAN",
        /// Amount reduction.
        Ram = "RAM",
        /// Refund / rebate.
        Rrr = "RRR",
    }
);

text_enum!(
    /// Item kind (`items[].type`).
    ItemType {
        /// Goods.
        Bie = "BIE",
        /// Service.
        Ser = "SER",
        /// A tax line.
        Tax = "TAX",
    }
);

text_enum!(
    /// Payment method (`payments[].name`).
    PaymentMethod {
        /// Cash.
        Especes = "ESPECES",
        /// Bank transfer.
        Virement = "VIREMENT",
        /// Bank card.
        CarteBancaire = "CARTEBANCAIRE",
        /// Mobile money.
        MobileMoney = "MOBILEMONEY",
        /// Cheque.
        Cheques = "CHEQUES",
        /// Credit.
        Credit = "CREDIT",
        /// Other.
        Autre = "AUTRE",
    }
);

text_enum!(
    /// Comment line, `cmta`..`cmth` (their order on the invoice).
    CommentLine {
        /// `cmta`.
        A = "A",
        /// `cmtb`.
        B = "B",
        /// `cmtc`.
        C = "C",
        /// `cmtd`.
        D = "D",
        /// `cmte`.
        E = "E",
        /// `cmtf`.
        F = "F",
        /// `cmtg`.
        G = "G",
        /// `cmth`.
        H = "H",
    }
);

/// A VAT group (`items[].taxGroup`), A to P.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaxGroup(u8);

impl TaxGroup {
    /// Number of groups (A..=P).
    pub const COUNT: usize = 16;

    /// The group of a letter `A..=P`.
    pub fn from_letter(letter: char) -> Option<TaxGroup> {
        ('A'..='P')
            .contains(&letter)
            .then(|| TaxGroup(letter as u8 - b'A'))
    }

    /// Every group, A to P.
    pub fn all() -> impl Iterator<Item = TaxGroup> {
        (0..Self::COUNT as u8).map(TaxGroup)
    }

    /// 0 for A .. 15 for P: the place of the group in a table of rates or amounts.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// The letter.
    pub fn letter(self) -> char {
        char::from(b'A' + self.0)
    }
}

impl fmt::Display for TaxGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_read_back_and_other_spellings_are_refused() {
        for &t in InvoiceType::ALL {
            assert_eq!(InvoiceType::from_text(t.as_str()), Some(t));
        }
        for &m in PaymentMethod::ALL {
            assert_eq!(PaymentMethod::from_text(&m.to_string()), Some(m));
        }
        assert_eq!(InvoiceType::from_text("fv"), None);
        assert_eq!(PriceMode::from_text("TTC"), None);
        assert_eq!(PaymentMethod::from_text("E"), None);
        assert!(InvoiceType::Ea.is_credit_note() && !InvoiceType::Ev.is_credit_note());
    }

    #[test]
    fn tax_groups_are_a_to_p() {
        assert_eq!(TaxGroup::from_letter('A').map(TaxGroup::index), Some(0));
        assert_eq!(TaxGroup::from_letter('P').map(TaxGroup::index), Some(15));
        assert_eq!(TaxGroup::from_letter('Q'), None);
        assert_eq!(TaxGroup::from_letter('b'), None);
        assert_eq!(TaxGroup::all().count(), TaxGroup::COUNT);
        assert_eq!(TaxGroup::all().nth(1).map(TaxGroup::letter), Some('B'));
    }
}
