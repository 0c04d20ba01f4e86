//! Organizations: who certifies, with which identity, on which device, under which plan.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// An organization's id: short, lowercase ASCII letters, digits and `-` (e.g. `demo`).
pub type OrgId = String;

/// The commercial plan; its annual quota comes from the configuration unless the organization
/// overrides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Plan {
    /// The small plan.
    Start,
    /// The larger plan.
    Grow,
}

impl Plan {
    /// The name used in the CLI and the configuration: `start` or `grow`.
    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Start => "start",
            Plan::Grow => "grow",
        }
    }

    /// Parses `start` or `grow` (any case).
    pub fn parse(text: &str) -> Option<Plan> {
        match text.to_ascii_lowercase().as_str() {
            "start" => Some(Plan::Start),
            "grow" => Some(Plan::Grow),
            _ => None,
        }
    }
}

/// Which register and device a key certifies into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Environment {
    /// `mcf_live_` keys: the organization's fiscal device, its quota and LogInvoices.
    Production,
    /// `mcf_test_` keys: the sandbox device (a simulator), a separate register, no quota.
    Sandbox,
}

impl Environment {
    /// `production` or `sandbox`.
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Production => "production",
            Environment::Sandbox => "sandbox",
        }
    }
}

/// An organization, as last saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Organization {
    /// Its id.
    pub id: OrgId,
    /// Display name.
    pub name: String,
    /// Seller tax number (NIF); must equal the NIF of its device.
    pub nif: String,
    /// Seller ISF identifier.
    pub isf: String,
    /// Plan.
    pub plan: Plan,
    /// Annual quota overriding the plan's, if any.
    pub quota_override: Option<u64>,
    /// Name of the configured device it certifies on.
    pub device: String,
    /// Where its alerts are e-mailed (quota, channel down, DGI contact, invoices in doubt)
    /// when SMTP is configured; absent from older journals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub admin_emails: Vec<String>,
    /// The largest total (TTC, in CDF) one invoice of this organization may have: a larger
    /// one is refused before anything is sent (error 181), in both registers. `None`: no
    /// limit, the default; absent from journals before 1.6.0 (and left out when `None`, so
    /// that such a record reads the same in an older release).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_invoice_total: Option<Decimal>,
}

impl Organization {
    /// At most this many `admin_emails`.
    pub const MAX_ADMIN_EMAILS: usize = 20;

    /// `addresses` without repeats (the same address in another case counts once), in order.
    pub fn distinct_emails(addresses: &[String]) -> Vec<String> {
        let mut seen = std::collections::BTreeSet::new();
        addresses
            .iter()
            .filter(|a| seen.insert(a.to_ascii_lowercase()))
            .cloned()
            .collect()
    }
}

/// Whether `address` is an e-mail address the alerts can be sent to: one the mailer (lettre)
/// accepts, and moreover `local@domain.tld` (a domain with a dot, no spaces or angle
/// brackets, at most 254 bytes), which catches typing mistakes. Not a proof that the mailbox
/// exists. The one check of `org add`/`org update`, the admin socket and the mailer.
pub fn is_plausible_email(address: &str) -> bool {
    let Some((local, domain)) = address.rsplit_once('@') else {
        return false;
    };
    address.len() <= 254
        && !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains("..")
        && address
            .chars()
            .all(|c| c.is_ascii_graphic() && !"<>()[]\\,;:\"".contains(c))
        && !local.contains('@')
        && address.parse::<lettre::Address>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::{is_plausible_email, Organization};

    #[test]
    fn rough_email_check() {
        for good in ["a@b.cd", "admin.shop+alerts@example.co.cd"] {
            assert!(is_plausible_email(good), "{good}");
        }
        for bad in [
            "",
            "a",
            "a@b",
            "@b.cd",
            "a@.cd",
            "a@b.",
            "a b@c.cd",
            "<a@b.cd>",
            "a@b@c.cd",
            // Refused by the mailer (lettre).
            "a..b@c.cd",
            ".a@b.cd",
            "a@-b.cd",
        ] {
            assert!(!is_plausible_email(bad), "{bad}");
        }
    }

    #[test]
    fn an_organization_of_an_older_journal_has_no_largest_invoice_total() {
        // As 1.5.0 journaled it: no `max_invoice_total`.
        let old = r#"{"id":"acme","name":"ACME","nif":"A1234567B","isf":"ISF-1","plan":"Start","quota_override":null,"device":"shop"}"#;
        let org: Organization = serde_json::from_str(old).expect("an older record reads");
        assert_eq!(org.max_invoice_total, None);
        // Written back without it, so that an older release reads it the same.
        let text = serde_json::to_string(&org).expect("json");
        assert!(!text.contains("max_invoice_total"), "{text}");
        let limited = Organization {
            max_invoice_total: Some(rust_decimal::Decimal::new(150_000_050, 2)),
            ..org
        };
        let text = serde_json::to_string(&limited).expect("json");
        assert!(
            text.contains(r#""max_invoice_total":"1500000.50""#),
            "{text}"
        );
        let back: Organization = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, limited);
    }

    #[test]
    fn repeated_addresses_count_once() {
        let given = ["a@b.cd", "c@d.cd", "A@B.cd"].map(String::from);
        assert_eq!(Organization::distinct_emails(&given), ["a@b.cd", "c@d.cd"]);
    }
}
