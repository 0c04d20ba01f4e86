//! The small enumerations that commands and replies carry as text.

use std::fmt;
use std::str::FromStr;

use crate::fields::DataError;

/// Declares a text-coded enum with `as_str`, `Display` and `FromStr`.
macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// Every value, in protocol order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The text sent on the wire.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownValue;
            fn from_str(text: &str) -> Result<Self, UnknownValue> {
                match text {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownValue { kind: stringify!($name), value: text.to_owned() }),
                }
            }
        }
    };
}

/// A text that is not one of an enumeration's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not a valid {kind}")]
pub struct UnknownValue {
    /// The enumeration.
    pub kind: &'static str,
    /// The text given.
    pub value: String,
}

/// Parses a wire field into an enum, naming the field on failure.
pub(crate) fn parse_enum<T: FromStr>(field: &'static str, value: &str) -> Result<T, DataError> {
    value.parse().map_err(|_| DataError::BadField {
        field,
        value: value.to_owned(),
        reason: "not one of the allowed values",
    })
}

text_enum!(
    /// Invoice type.
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
    /// FA and EA refer to an original invoice and count in FRC.
    pub fn is_credit_note(self) -> bool {
        matches!(self, InvoiceType::Fa | InvoiceType::Ea)
    }
}

text_enum!(
    /// How item prices are given.
    PriceMode {
        /// Prices exclude VAT.
        Ht = "ht",
        /// Prices include VAT.
        Ttc = "ttc",
    }
);

text_enum!(
    /// Why a credit note refers to an original invoice.
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
    /// Item kind.
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
    /// Payment method of 35h; the wire form is one letter.
    PaymentMethod {
        /// Cash.
        Especes = "E",
        /// Bank transfer.
        Virement = "V",
        /// Bank card.
        CarteBancaire = "C",
        /// Mobile money.
        MobileMoney = "M",
        /// Cheque.
        Cheques = "D",
        /// Credit.
        Credit = "R",
        /// Other.
        Autre = "A",
    }
);

impl PaymentMethod {
    /// The name the HTTP API uses (ESPECES, VIREMENT...).
    pub fn name(self) -> &'static str {
        match self {
            PaymentMethod::Especes => "ESPECES",
            PaymentMethod::Virement => "VIREMENT",
            PaymentMethod::CarteBancaire => "CARTEBANCAIRE",
            PaymentMethod::MobileMoney => "MOBILEMONEY",
            PaymentMethod::Cheques => "CHEQUES",
            PaymentMethod::Credit => "CREDIT",
            PaymentMethod::Autre => "AUTRE",
        }
    }

    /// The method of an HTTP API name.
    pub fn from_name(name: &str) -> Option<PaymentMethod> {
        PaymentMethod::ALL
            .iter()
            .copied()
            .find(|m| m.name() == name)
    }
}

text_enum!(
    /// Taxpayer field read with 2Bh (meanings are the simulator's; see PROTOCOL.md).
    TaxpayerKey {
        /// Taxpayer name.
        I0 = "I0",
        /// Address.
        I1 = "I1",
        /// Telephone.
        I2 = "I2",
        /// E-mail.
        I3 = "I3",
        /// RCCM (trade register number).
        I4 = "I4",
        /// Header line 1.
        D0 = "D0",
        /// Header line 2.
        D1 = "D1",
        /// Footer line.
        D2 = "D2",
    }
);

text_enum!(
    /// Comment line slot of 36h.
    CommentLine {
        /// Line A.
        A = "A",
        /// Line B.
        B = "B",
        /// Line C.
        C = "C",
        /// Line D.
        D = "D",
        /// Line E.
        E = "E",
        /// Line F.
        F = "F",
        /// Line G.
        G = "G",
        /// Line H.
        H = "H",
    }
);

text_enum!(
    /// State of the device's link to the DGI server (C2h).
    DgiLinkState {
        /// Connected.
        Connected = "CON",
        /// Transmitting.
        Transmitting = "TRA",
        /// Disconnected.
        Disconnected = "DIS",
    }
);

/// A VAT group letter, A to P.
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

    /// The group at `index` 0..16.
    pub fn from_index(index: usize) -> Option<TaxGroup> {
        u8::try_from(index)
            .ok()
            .filter(|&i| usize::from(i) < Self::COUNT)
            .map(TaxGroup)
    }

    /// Every group, A to P.
    pub fn all() -> impl Iterator<Item = TaxGroup> {
        (0..Self::COUNT as u8).map(TaxGroup)
    }

    /// 0 for A .. 15 for P.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// The letter.
    pub fn letter(self) -> char {
        char::from(b'A' + self.0)
    }
}

/// The VAT rates of the DGI's table (the seed API's): B and F 16 %, C and G 5 %, O and P 1 %,
/// E 0 %, the other groups without VAT (`None`). The simulator's default, and the gateway's
/// fallback for a box whose C1h carries no rates.
pub fn dgi_rates() -> [Option<rust_decimal::Decimal>; TaxGroup::COUNT] {
    let mut rates = [None; TaxGroup::COUNT];
    for (letter, percent) in [
        ('B', 16),
        ('F', 16),
        ('C', 5),
        ('G', 5),
        ('O', 1),
        ('P', 1),
        ('E', 0),
    ] {
        if let Some(group) = TaxGroup::from_letter(letter) {
            rates[group.index()] = Some(rust_decimal::Decimal::new(percent * 100, 2));
        }
    }
    rates
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
    fn enums_round_trip_through_text() {
        for &t in InvoiceType::ALL {
            assert_eq!(t.as_str().parse::<InvoiceType>(), Ok(t));
        }
        for &m in PaymentMethod::ALL {
            assert_eq!(PaymentMethod::from_name(m.name()), Some(m));
        }
        assert!("fv".parse::<InvoiceType>().is_err());
        assert!(InvoiceType::Ea.is_credit_note());
    }

    #[test]
    fn tax_groups_are_a_to_p() {
        assert_eq!(TaxGroup::from_letter('A').map(TaxGroup::index), Some(0));
        assert_eq!(TaxGroup::from_letter('P').map(TaxGroup::index), Some(15));
        assert_eq!(TaxGroup::from_letter('Q'), None);
        assert_eq!(TaxGroup::all().count(), 16);
        assert_eq!(TaxGroup::from_index(1).map(TaxGroup::letter), Some('B'));
    }
}
