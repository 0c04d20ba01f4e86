//! The `errorCode` of every validation rule (HTTP 400), documented in `docs/error-codes.md`.
//!
//! One code per rule, stable: a code is never reused for another rule. Validation uses 1..=99
//! (31 is the seed's "rn empty"); codes from 100 up belong to other layers (auth, quota,
//! device) and never come from here.

/// The body is not UTF-8 or not JSON (syntax, trailing data, empty body).
pub const MALFORMED_JSON: u16 = 1;
/// Arrays and objects nested deeper than `request::MAX_DEPTH`.
pub const TOO_DEEP: u16 = 2;
/// A field name that is not in the schema (`field` is its path).
pub const UNKNOWN_FIELD: u16 = 3;
/// The same field twice in one object.
pub const DUPLICATE_FIELD: u16 = 4;
/// A value of the wrong JSON type (a number for a text, an object for an array...).
pub const WRONG_TYPE: u16 = 5;
/// A decimal that is not a plain decimal (exponent, letters, more than 28 digits).
pub const BAD_DECIMAL: u16 = 6;
/// A required field is absent (`null` and, for decimals, `""` count as absent).
pub const MISSING_FIELD: u16 = 7;
/// The validated invoice is too large to be kept whole in the register (its canonical form is
/// over `MAX_KEPT_BYTES`: a journal record holds at most 1 MiB).
pub const TOO_LARGE_TO_KEEP: u16 = 8;

/// `rn` is not a valid invoice number: 1 to [`MAX_RN_LEN`](super::MAX_RN_LEN) printable ASCII
/// characters, none [`is_reserved`](super::is_reserved) (the box's FN rule).
pub const RN_INVALID: u16 = 10;
/// `mode` is not `ht` or `ttc`.
pub const MODE_INVALID: u16 = 11;
/// `type` is not FV FT FA EV ET EA.
pub const TYPE_INVALID: u16 = 12;
/// `nif` was sent and is not the API key's organization's.
pub const NIF_MISMATCH: u16 = 13;
/// `isF` was sent and is not the API key's organization's.
pub const ISF_MISMATCH: u16 = 14;
/// `curCode` is not CDF or USD.
pub const CURRENCY_INVALID: u16 = 15;
/// A CDF invoice with a `curRate` other than -1.
pub const CDF_RATE_INVALID: u16 = 16;
/// A USD invoice without a `curRate` > 0 with at most 4 decimals.
pub const USD_RATE_INVALID: u16 = 17;
/// `curDate` missing on a USD invoice, or not an ISO 8601 date or date-time.
pub const CUR_DATE_INVALID: u16 = 18;
/// A credit note (FA, EA) without `reference`.
pub const REFERENCE_MISSING: u16 = 19;
/// `reference` is not 24 characters the device carries as they are.
pub const REFERENCE_INVALID: u16 = 20;
/// `referenceType` is not COR RAN RAM RRR.
pub const REFERENCE_TYPE_INVALID: u16 = 21;
/// `reference` or `referenceType` on an invoice that is not a credit note.
pub const REFERENCE_NOT_ALLOWED: u16 = 22;
/// `operator.name` empty.
pub const OPERATOR_NAME_EMPTY: u16 = 23;
/// `client.typeDesc` longer than `MAX_TYPE_DESC` bytes (it is not sent to the device).
pub const TYPE_DESC_TOO_LONG: u16 = 24;
/// `rn` missing or empty (the seed's code).
pub const RN_EMPTY: u16 = 31;

/// `items` missing or empty.
pub const NO_ITEMS: u16 = 40;
/// `items[i].name` missing or blank.
pub const ITEM_NAME_EMPTY: u16 = 41;
/// `items[i].type` is not BIE SER TAX.
pub const ITEM_TYPE_INVALID: u16 = 42;
/// `items[i].taxGroup` is not one letter A..P.
pub const TAX_GROUP_INVALID: u16 = 43;
/// `items[i].price` negative.
pub const PRICE_NEGATIVE: u16 = 44;
/// `items[i].price` with more than 2 decimals.
pub const PRICE_TOO_PRECISE: u16 = 45;
/// `items[i].quantity` zero or negative.
pub const QUANTITY_NOT_POSITIVE: u16 = 46;
/// `items[i].quantity` with more than 3 decimals.
pub const QUANTITY_TOO_PRECISE: u16 = 47;
/// `items[i].taxSpecificValue` is not a percentage `N[.NN]%` >= 0.
pub const SPECIFIC_VALUE_INVALID: u16 = 48;
/// `items[i].taxSpecificAmount` negative or with more than 2 decimals.
pub const SPECIFIC_AMOUNT_INVALID: u16 = 49;
/// `taxSpecificValue` and `taxSpecificAmount` disagree.
pub const SPECIFIC_TAX_INCOHERENT: u16 = 50;
/// `items[i].originalPrice` negative or with more than 2 decimals.
pub const ORIGINAL_PRICE_INVALID: u16 = 51;
/// `originalPrice` and `priceModification` disagree.
pub const PRICE_CHANGE_INCOHERENT: u16 = 52;
/// An amount beyond `MAX_AMOUNT` (15 integer digits), e.g. price x quantity.
pub const AMOUNT_OUT_OF_RANGE: u16 = 53;

/// `payments[i].name` is not one of the seven methods.
pub const PAYMENT_METHOD_INVALID: u16 = 60;
/// `payments[i].amount` zero or negative.
pub const PAYMENT_NOT_POSITIVE: u16 = 61;
/// `payments[i].amount` with more than 2 decimals.
pub const PAYMENT_TOO_PRECISE: u16 = 62;
/// `payments[i].curCode` is not CDF or USD.
pub const PAYMENT_CURRENCY_INVALID: u16 = 63;
/// `payments[i].curRate` does not fit its currency (-1 for CDF, > 0 for USD).
pub const PAYMENT_RATE_INVALID: u16 = 64;

/// A text too long for its device frame (never truncated); `field` is the longest text of
/// the command at fault.
pub const TEXT_TOO_LONG: u16 = 70;
/// A control character in a text: TAB, CR, LF, NUL, ESC, DEL, C1... (since 1.6.0 CR and LF
/// too). Checked for every text as the body is read (`json::check_text`), and again by the
/// device frames.
pub const CONTROL_CHARACTER: u16 = 71;
/// Any other value the device protocol cannot carry.
pub const NOT_ENCODABLE: u16 = 72;
/// A character that reorders or breaks a line of text without being a control character:
/// a bidirectional embedding, override, isolate or mark, or a Unicode line or paragraph
/// separator (`i18n::format::is_layout_mark`). Checked for every text as the body is read.
pub const LAYOUT_CHARACTER: u16 = 73;

/// Every code above, for tests and documentation checks.
pub const ALL: &[u16] = &[
    MALFORMED_JSON,
    TOO_DEEP,
    UNKNOWN_FIELD,
    DUPLICATE_FIELD,
    WRONG_TYPE,
    BAD_DECIMAL,
    MISSING_FIELD,
    TOO_LARGE_TO_KEEP,
    RN_INVALID,
    MODE_INVALID,
    TYPE_INVALID,
    NIF_MISMATCH,
    ISF_MISMATCH,
    CURRENCY_INVALID,
    CDF_RATE_INVALID,
    USD_RATE_INVALID,
    CUR_DATE_INVALID,
    REFERENCE_MISSING,
    REFERENCE_INVALID,
    REFERENCE_TYPE_INVALID,
    REFERENCE_NOT_ALLOWED,
    OPERATOR_NAME_EMPTY,
    TYPE_DESC_TOO_LONG,
    RN_EMPTY,
    NO_ITEMS,
    ITEM_NAME_EMPTY,
    ITEM_TYPE_INVALID,
    TAX_GROUP_INVALID,
    PRICE_NEGATIVE,
    PRICE_TOO_PRECISE,
    QUANTITY_NOT_POSITIVE,
    QUANTITY_TOO_PRECISE,
    SPECIFIC_VALUE_INVALID,
    SPECIFIC_AMOUNT_INVALID,
    SPECIFIC_TAX_INCOHERENT,
    ORIGINAL_PRICE_INVALID,
    PRICE_CHANGE_INCOHERENT,
    AMOUNT_OUT_OF_RANGE,
    PAYMENT_METHOD_INVALID,
    PAYMENT_NOT_POSITIVE,
    PAYMENT_TOO_PRECISE,
    PAYMENT_CURRENCY_INVALID,
    PAYMENT_RATE_INVALID,
    TEXT_TOO_LONG,
    CONTROL_CHARACTER,
    NOT_ENCODABLE,
    LAYOUT_CHARACTER,
];
