//! Administration: organizations, keys, dashboard tokens and the LogInvoices register, for
//! the CLI and the dashboard. The operations run on the store; while the service runs the CLI
//! goes through its admin socket (`socket`), because sled (and the journal's lock) allow one
//! process. The methods are typed; JSON exists only at the socket (`requests.rs`: the wire
//! format and its dispatch). The `Org*` requests are scoped to one organization (the dashboard's session's):
//! anything of another organization answers [`AdminError::NotFound`], as if it did not exist.
//!
//! Nothing here modifies or deletes a register entry: the register has no such operation.

mod answers;
pub mod audit;
pub mod backup;
pub mod csv;
pub mod devices;
pub mod invoice_view;
mod lost_rns;
mod requests;
mod scoped;
pub mod sessions;
pub mod socket;
pub mod token;

pub use crate::store::EntryFilter;
pub use answers::{EntryCounts, KeyCounts, LogPage, OrgShown, OrgSummary, PublicToken, QuotaUse};
pub use requests::AdminRequest;
pub use scoped::{Search, SignedIn, MAX_PAGE};

use std::sync::Arc;

use chrono::{Datelike, FixedOffset, Utc};
use rust_decimal::Decimal;

use crate::certify::invoice::MAX_AMOUNT;

use crate::i18n::{Localized, Message};
use crate::keys::{self, IssuedKey};
use crate::model::{AnomalyRecord, Environment, KeyRecord, Organization, Plan, RegisterEntry};
use crate::msg;
use crate::store::{Store, StoreError, VerifyReport};

/// Why an administration request failed. A person reads its [`Localized::message`] (the CLI,
/// the dashboard); `Display` is the English one, for logs.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The request is wrong (unknown id, bad value).
    #[error("{0}")]
    Invalid(Message),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The admin socket failed (the operating system's or the encoding's text).
    #[error("admin socket: {0}")]
    Socket(String),
    /// This account may not use the running service's admin socket (owner only).
    #[error("admin socket {}: permission denied", .0.display())]
    SocketDenied(std::path::PathBuf),
    /// Nothing with this id in the organization asked about.
    #[error("{0}")]
    NotFound(Message),
    /// The running service refused the request: its text, already in the language the
    /// request asked for (the admin socket carries the reader's language).
    #[error("{0}")]
    Service(String),
    /// A fault of the gateway itself (an answer that cannot be encoded, a task that failed):
    /// its technical text.
    #[error("internal error: {0}")]
    Internal(String),
    /// A name a person will read (in `org list`, the dashboard, an e-mail's subject) is not
    /// one plain line of at most [`MAX_NAME`] characters ([`check_name`]).
    #[error("{}", name_message(*.field, *.fault))]
    BadName {
        /// Which name.
        field: NameField,
        /// What is wrong with it.
        fault: NameFault,
    },
}

/// A name an administrator types that people read: what [`AdminError::BadName`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameField {
    /// An organization's name (`org add/update --name`).
    OrgName,
    /// An API key's label (`key issue --label`, the dashboard's form).
    KeyLabel,
    /// A dashboard token's label (`dashboard-token issue --label`).
    TokenLabel,
}

impl NameField {
    /// The value of `$field` in `admin-bad-name`.
    fn as_str(self) -> &'static str {
        match self {
            NameField::OrgName => "org-name",
            NameField::KeyLabel => "key-label",
            NameField::TokenLabel => "token-label",
        }
    }
}

/// What is wrong with a name ([`check_name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameFault {
    /// More than [`MAX_NAME`] characters: `length` of them.
    TooLong {
        /// Its length in characters.
        length: usize,
    },
    /// A control character or a bidirectional or line mark
    /// ([`crate::i18n::format::is_hidden_effect`]): `character`, at `position` (from 1).
    Hidden {
        /// The character.
        character: char,
        /// Its place, in characters from 1.
        position: usize,
    },
    /// `=?`, the start of an e-mail encoded word (RFC 2047): a mail client would decode it.
    EncodedWord,
}

/// The longest name, in characters: a table's column, a page's heading, an e-mail subject
/// well under a line's 998 octets (RFC 5322 §2.1.1) once encoded.
pub const MAX_NAME: usize = 100;

/// Whether `name` is one plain line people can read as it is written: at most [`MAX_NAME`]
/// characters, none of [`crate::i18n::format::is_hidden_effect`] (the rule of an invoice's
/// texts, codes 71 and 73: no line break to forge a line on a terminal or in an e-mail, no
/// bidirectional override to reorder one), and no `=?` (which a mail client would read as an
/// encoded word in a subject). Checked when a name is saved, never when a register is read:
/// older journals keep what they hold.
pub fn check_name(field: NameField, name: &str) -> Result<(), AdminError> {
    let bad = |fault| Err(AdminError::BadName { field, fault });
    if let Some((index, character)) = name
        .chars()
        .enumerate()
        .find(|(_, c)| crate::i18n::format::is_hidden_effect(*c))
    {
        return bad(NameFault::Hidden {
            character,
            position: index + 1,
        });
    }
    let length = name.chars().count();
    if length > MAX_NAME {
        return bad(NameFault::TooLong { length });
    }
    if name.contains("=?") {
        return bad(NameFault::EncodedWord);
    }
    Ok(())
}

/// What a person reads of [`AdminError::BadName`].
fn name_message(field: NameField, fault: NameFault) -> Message {
    let (fault_name, kind, character, position, length) = match fault {
        NameFault::TooLong { length } => ("too-long", "", String::new(), 0, length),
        NameFault::Hidden {
            character,
            position,
        } => {
            let kind = match character {
                '\n' => "lf",
                '\r' => "cr",
                '\t' => "tab",
                c if c.is_control() => "other",
                _ => "layout",
            };
            let code = format!("{:04X}", u32::from(character));
            ("hidden", kind, code, position, 0)
        }
        NameFault::EncodedWord => ("encoded-word", "", String::new(), 0, 0),
    };
    msg!(
        "admin-bad-name",
        field = field.as_str(),
        fault = fault_name,
        kind = kind,
        char = character,
        position = position,
        length = length,
        max = MAX_NAME
    )
}

impl Localized for AdminError {
    fn message(&self) -> Message {
        match self {
            AdminError::Invalid(message) | AdminError::NotFound(message) => message.clone(),
            AdminError::Store(error) => error.message(),
            AdminError::Socket(detail) => msg!("admin-socket-failed", detail = detail),
            AdminError::SocketDenied(path) => {
                msg!("admin-socket-denied", path = path.display().to_string())
            }
            AdminError::Service(text) => msg!("admin-service-said", text = text),
            AdminError::Internal(detail) => msg!("admin-internal", detail = detail),
            AdminError::BadName { field, fault } => name_message(*field, *fault),
        }
    }
}

/// Quota settings needed to show quota use.
#[derive(Debug, Clone, Copy)]
pub struct QuotaSettings {
    /// Quota year's time zone.
    pub offset: FixedOffset,
    /// Start plan quota.
    pub start: u64,
    /// Grow plan quota.
    pub grow: u64,
}

/// Runs administration requests on a store.
pub struct Admin {
    store: Arc<Store>,
    quotas: QuotaSettings,
}

impl Admin {
    /// Administration of `store`.
    pub fn new(store: Arc<Store>, quotas: QuotaSettings) -> Admin {
        Admin { store, quotas }
    }

    /// The time zone of quota years and register days.
    pub fn time_zone(&self) -> FixedOffset {
        self.quotas.offset
    }

    /// Creates or updates an organization.
    pub fn org_save(&self, org: Organization) -> Result<Organization, AdminError> {
        check_organization(&org)?;
        // One device certifies for one taxpayer: a second organization with the same NIF on
        // the same device would share its counters and its register under two names.
        if let Some(other) = self
            .store
            .organizations()?
            .into_iter()
            .find(|o| o.id != org.id && o.nif == org.nif && o.device == org.device)
        {
            return Err(AdminError::Invalid(msg!(
                "admin-nif-taken",
                other = other.id.as_str(),
                nif = org.nif.as_str(),
                device = org.device.as_str()
            )));
        }
        self.store.save_organization(org.clone())?;
        Ok(org)
    }

    /// All organizations.
    pub fn org_list(&self) -> Result<Vec<Organization>, AdminError> {
        Ok(self.store.organizations()?)
    }

    /// One organization with its quota use of the current year.
    pub fn org_show(&self, id: &str) -> Result<OrgShown, AdminError> {
        let organization = self.organization(id)?;
        let quota = self.quota_use(&organization)?;
        Ok(OrgShown {
            organization,
            quota,
        })
    }

    /// Issues a key; the answer carries the plaintext key, shown once.
    pub fn key_issue(
        &self,
        org: &str,
        environment: Environment,
        label: &str,
    ) -> Result<IssuedKey, AdminError> {
        self.organization(org)?;
        check_name(NameField::KeyLabel, label)?;
        let issued = keys::issue(org, environment, label, Utc::now());
        self.store.issue_key(issued.record.clone())?;
        Ok(issued)
    }

    /// The keys of an organization (never their secrets).
    pub fn key_list(&self, org: &str) -> Result<Vec<KeyRecord>, AdminError> {
        self.organization(org)?;
        Ok(self.store.keys_of(org)?)
    }

    /// Enables or disables a key; takes effect on the next request.
    pub fn key_set_enabled(&self, id: &str, enabled: bool) -> Result<KeyRecord, AdminError> {
        Ok(self.store.set_key_enabled(id, enabled)?)
    }

    /// A page of register entries in sequence order.
    pub fn log_list(&self, filter: EntryFilter) -> Result<Vec<RegisterEntry>, AdminError> {
        let filter = EntryFilter {
            limit: filter.limit.clamp(1, 10_000),
            ..filter
        };
        Ok(self.store.entries(&filter)?)
    }

    /// One register entry.
    pub fn log_show(
        &self,
        environment: Environment,
        sequence: u64,
    ) -> Result<RegisterEntry, AdminError> {
        self.store.entry(environment, sequence)?.ok_or_else(|| {
            AdminError::NotFound(msg!(
                "admin-no-entry",
                environment = environment.as_str(),
                sequence = sequence
            ))
        })
    }

    /// How many entries the `environment` register holds.
    pub fn log_length(&self, environment: Environment) -> Result<u64, AdminError> {
        Ok(self.store.register_length(environment)?)
    }

    /// Checks every CRC and the hash chain of the journal.
    pub fn log_verify(&self) -> Result<VerifyReport, AdminError> {
        Ok(self.store.verify()?)
    }

    /// How far the embedded store's journal is durable now, for a backup's copy of it; a
    /// register in PostgreSQL is backed up with its database, not by the gateway.
    pub fn journal_durable(&self) -> Result<crate::store::DurableJournal, AdminError> {
        match self.store.embedded() {
            Some(store) => Ok(store.durable_journal()?),
            None => Err(AdminError::Invalid(msg!("admin-register-in-database"))),
        }
    }

    /// The fiscal anomalies of the register (counter continuity), oldest first.
    pub fn fiscal_anomalies(&self) -> Result<Vec<AnomalyRecord>, AdminError> {
        Ok(self.store.fiscal_anomalies()?)
    }

    /// Acknowledges a fiscal anomaly (journaled with who and why). A register behind its box
    /// is acknowledged with the missing certifications' `numbers`, exactly as the anomaly
    /// lists them (the box then certifies again, from that counter); the other kinds take none.
    /// The rns known for those numbers are journaled with them and never certified again for
    /// that device's organizations: the one its C1h named, and those given in `rns` (by
    /// number, from the DGI's portal).
    pub fn fiscal_anomaly_ack(
        &self,
        id: u64,
        by: &str,
        note: &str,
        numbers: &[u64],
        rns: &[(u64, String)],
    ) -> Result<AnomalyRecord, AdminError> {
        if by.trim().is_empty() || note.trim().is_empty() {
            return Err(AdminError::Invalid(msg!("admin-ack-needs-who-and-why")));
        }
        let anomalies = self.store.fiscal_anomalies()?;
        let mut lost = Vec::new();
        if let Some(record) = anomalies.iter().find(|a| a.id == id) {
            check_ack_numbers(record, numbers)?;
            if record.acknowledged.is_some() {
                return Ok(record.clone());
            }
            lost = lost_rns::of(record, rns)?;
        } else if !rns.is_empty() {
            return Err(AdminError::Invalid(msg!("admin-ack-no-numbers-here")));
        }
        Ok(self
            .store
            .acknowledge_fiscal_anomaly(id, by, note, numbers, &lost)?)
    }

    /// The quota use of `org` in the current quota year.
    fn quota_use(&self, org: &Organization) -> Result<QuotaUse, AdminError> {
        let year = Utc::now().with_timezone(&self.quotas.offset).year();
        let used = self.store.quota_used(&org.id, year)?;
        let quota = org.quota_override.unwrap_or(match org.plan {
            Plan::Start => self.quotas.start,
            Plan::Grow => self.quotas.grow,
        });
        Ok(QuotaUse {
            year,
            used,
            quota,
            remaining: quota.saturating_sub(used),
        })
    }

    fn organization(&self, id: &str) -> Result<Organization, AdminError> {
        self.store
            .organization(id)?
            .ok_or_else(|| AdminError::Invalid(msg!("admin-no-organization", id = id)))
    }
}

/// Whether `amount` can be an organization's `max_invoice_total`: an amount in CDF above 0,
/// with at most 2 decimals, no more than the largest amount an invoice can carry.
/// The numbers an acknowledgement of `record` must carry: a register behind its box's missing
/// ones, exactly; none for the other kinds.
fn check_ack_numbers(record: &AnomalyRecord, numbers: &[u64]) -> Result<(), AdminError> {
    let missing = &record.anomaly.missing;
    if record.anomaly.kind != crate::model::FiscalAnomalyKind::RegisterBehind {
        if numbers.is_empty() {
            return Ok(());
        }
        return Err(AdminError::Invalid(msg!("admin-ack-no-numbers-here")));
    }
    let mut given = numbers.to_vec();
    given.sort_unstable();
    given.dedup();
    if &given == missing || record.acknowledged.is_some() {
        return Ok(());
    }
    Err(AdminError::Invalid(msg!(
        "admin-ack-numbers-differ",
        anomaly = record.id,
        missing = crate::model::numbers_text(missing),
        given = crate::model::numbers_text(&given)
    )))
}

pub fn is_valid_max_invoice_total(amount: Decimal) -> bool {
    amount > Decimal::ZERO && amount.normalize().scale() <= 2 && amount <= MAX_AMOUNT
}

/// Identity fields go to the device in C0h: short printable ASCII without the DATA separators.
fn check_organization(org: &Organization) -> Result<(), AdminError> {
    let id_ok = !org.id.is_empty()
        && org.id.len() <= 32
        && org
            .id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !id_ok {
        return Err(AdminError::Invalid(msg!(
            "admin-bad-org-id",
            id = org.id.as_str()
        )));
    }
    for (name, value) in [("NIF", &org.nif), ("ISF", &org.isf)] {
        let ok = !value.is_empty()
            && value.len() <= 20
            && value
                .bytes()
                .all(|b| b.is_ascii_graphic() && !b",;:&<>^".contains(&b));
        if !ok {
            return Err(AdminError::Invalid(msg!(
                "admin-bad-identity-field",
                name = name,
                value = value.as_str()
            )));
        }
    }
    if org.admin_emails.len() > Organization::MAX_ADMIN_EMAILS
        || !org
            .admin_emails
            .iter()
            .all(|a| crate::model::is_plausible_email(a))
    {
        return Err(AdminError::Invalid(msg!(
            "admin-bad-emails",
            max = Organization::MAX_ADMIN_EMAILS
        )));
    }
    if let Some(max) = org.max_invoice_total {
        if !is_valid_max_invoice_total(max) {
            return Err(AdminError::Invalid(msg!(
                "admin-bad-max-invoice-total",
                value = max.to_string(),
                max = MAX_AMOUNT.to_string()
            )));
        }
    }
    if org.name.trim().is_empty() || org.device.trim().is_empty() {
        return Err(AdminError::Invalid(msg!("admin-empty-name-or-device")));
    }
    check_name(NameField::OrgName, &org.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::{nbsp, Lang};

    fn fault(name: &str) -> Option<NameFault> {
        match check_name(NameField::OrgName, name) {
            Ok(()) => None,
            Err(AdminError::BadName { fault, .. }) => Some(fault),
            Err(other) => panic!("{other}"),
        }
    }

    #[test]
    fn a_name_is_one_plain_line_of_100_characters_at_most() {
        for good in [
            "Épicerie Ngaliema",
            "Boutique «\u{a0}Gombe\u{a0}» = ?",
            &"é".repeat(100),
        ] {
            assert_eq!(fault(good), None, "{good}");
        }
        assert_eq!(
            fault("Evil\r\nBcc: victim@x.cd"),
            Some(NameFault::Hidden {
                character: '\r',
                position: 5
            })
        );
        assert_eq!(
            fault("abc\u{202E}fed"),
            Some(NameFault::Hidden {
                character: '\u{202E}',
                position: 4
            })
        );
        assert_eq!(
            fault(&"a".repeat(1100)),
            Some(NameFault::TooLong { length: 1100 })
        );
        assert_eq!(fault("=?utf-8?q?Fake?="), Some(NameFault::EncodedWord));
    }

    #[test]
    fn the_refusal_names_the_field_and_the_character() {
        let error = check_name(NameField::OrgName, "Evil\nBcc").unwrap_err();
        assert_eq!(
            error.message().render(Lang::Fr),
            nbsp("le nom de l'organisation contient un saut de ligne (U+000A) au caractère 5 : il doit tenir sur une ligne et se lire tel qu'il est écrit")
        );
        assert_eq!(
            error.to_string(),
            "the organization's name contains a line feed (U+000A) at character 5: it must be one line, read as it is written"
        );
        let long = check_name(NameField::OrgName, &"a".repeat(101)).unwrap_err();
        assert_eq!(
            long.message().render(Lang::En),
            "the organization's name is 101 characters long, 100 at most"
        );
        let mark = check_name(NameField::OrgName, "a\u{2066}").unwrap_err();
        assert!(mark.to_string().contains("invisible mark"), "{mark}");
        let word = check_name(NameField::OrgName, "=?x").unwrap_err();
        assert!(
            word.message().render(Lang::Fr).contains(&nbsp("« =? »")),
            "{word}"
        );
    }
}
