//! Administration: organizations, keys, dashboard tokens and the LogInvoices register, for
//! the CLI and the dashboard. The operations run on the store; while the service runs the CLI
//! goes through its admin socket (`socket`), because sled (and the journal's lock) allow one
//! process. The `Org*` requests are scoped to one organization (the dashboard's session's):
//! anything of another organization answers [`AdminError::NotFound`], as if it did not exist.
//!
//! Nothing here modifies or deletes a register entry: the register has no such operation.

pub mod csv;
mod scoped;
pub mod socket;
pub mod token;

pub use scoped::{SignedIn, MAX_PAGE};

use std::sync::Arc;

use chrono::{Datelike, FixedOffset, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::keys;
use crate::model::{Environment, Organization, Plan};
use crate::store::{EntryFilter, Store, StoreError};

/// One administration request (the admin socket's wire format, one JSON per line).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum AdminRequest {
    /// Create or update an organization.
    OrgSave {
        /// The organization.
        org: Organization,
    },
    /// All organizations.
    OrgList,
    /// One organization with its quota use of the current year.
    OrgShow {
        /// Its id.
        id: String,
    },
    /// Issue a key; the answer carries the plaintext key, shown once.
    KeyIssue {
        /// Organization.
        org: String,
        /// Production or Sandbox.
        environment: Environment,
        /// Free text.
        label: String,
    },
    /// The keys of an organization (never their secrets).
    KeyList {
        /// Organization.
        org: String,
    },
    /// Enable or disable a key; takes effect on the next request.
    KeySetEnabled {
        /// Key id.
        id: String,
        /// New state.
        enabled: bool,
    },
    /// A page of register entries in sequence order.
    LogList {
        /// Only this organization's.
        org: Option<String>,
        /// Which register.
        environment: Environment,
        /// Entries after this sequence number.
        after: u64,
        /// At most this many.
        limit: usize,
    },
    /// One register entry.
    LogShow {
        /// Which register.
        environment: Environment,
        /// Its sequence number.
        sequence: u64,
    },
    /// Check every CRC and the hash chain of the journal.
    LogVerify,
    /// Issue a dashboard sign-in token; the answer carries the plaintext, shown once.
    DashboardTokenIssue {
        /// Organization it signs in to.
        org: String,
        /// Free text (whose token it is).
        label: String,
    },
    /// The dashboard tokens of an organization (never their hashes).
    DashboardTokenList {
        /// Organization.
        org: String,
    },
    /// Revoke a dashboard token: it signs in no more and its sessions end.
    DashboardTokenRevoke {
        /// Token id.
        id: String,
    },
    /// An organization's overview: quota of the year, entries per register, keys.
    OrgSummary {
        /// Organization.
        org: String,
    },
    /// Enable or disable a key of `org` (another organization's key is not found).
    OrgKeySetEnabled {
        /// Organization.
        org: String,
        /// Key id.
        id: String,
        /// New state.
        enabled: bool,
    },
    /// A page of one organization's register, newest first, with optional filters.
    OrgLogSearch {
        /// Organization.
        org: String,
        /// Which register.
        environment: Environment,
        /// Only entries whose rn contains this (ASCII case-insensitive).
        #[serde(default)]
        rn: Option<String>,
        /// Only entries certified on or after this day (configured time zone).
        #[serde(default)]
        from: Option<NaiveDate>,
        /// Only entries certified on or before this day (configured time zone).
        #[serde(default)]
        to: Option<NaiveDate>,
        /// Only entries with a sequence below this one (the next page's cursor).
        #[serde(default)]
        before: Option<u64>,
        /// At most this many (1..=500).
        limit: usize,
    },
    /// One entry of one organization's register.
    OrgLogShow {
        /// Organization.
        org: String,
        /// Which register.
        environment: Environment,
        /// Its sequence number.
        sequence: u64,
    },
    /// The fiscal anomalies of the register (counter continuity), oldest first.
    FiscalAnomalies,
    /// Acknowledge a fiscal anomaly (journaled with who and why).
    FiscalAnomalyAck {
        /// Its id.
        id: u64,
        /// Who acknowledges it.
        by: String,
        /// Why it is understood.
        note: String,
    },
    /// Probe a configured device (`device probe`): answered by the running service only,
    /// through its device link.
    DeviceProbe {
        /// The device; `None`: the only configured one.
        device: Option<String>,
    },
}

/// Why an administration request failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The request is wrong (unknown id, bad value).
    #[error("{0}")]
    Invalid(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The admin socket failed.
    #[error("admin socket: {0}")]
    Socket(String),
    /// Nothing with this id in the organization asked about.
    #[error("{0}")]
    NotFound(String),
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

    /// Runs one request (blocking: it may fsync the journal).
    pub fn handle(&self, request: AdminRequest) -> Result<Value, AdminError> {
        match request {
            AdminRequest::OrgSave { org } => {
                check_organization(&org)?;
                self.store.save_organization(org.clone())?;
                Ok(json!(org))
            }
            AdminRequest::OrgList => Ok(json!(self.store.organizations()?)),
            AdminRequest::OrgShow { id } => {
                let org = self.organization(&id)?;
                Ok(json!({
                    "organization": org,
                    "quota": self.quota_json(&org)?,
                }))
            }
            AdminRequest::KeyIssue {
                org,
                environment,
                label,
            } => {
                self.organization(&org)?;
                let issued = keys::issue(&org, environment, &label, Utc::now());
                self.store.issue_key(issued.record.clone())?;
                Ok(json!({"key": issued.plaintext, "record": issued.record}))
            }
            AdminRequest::KeyList { org } => {
                self.organization(&org)?;
                Ok(json!(self.store.keys_of(&org)?))
            }
            AdminRequest::KeySetEnabled { id, enabled } => {
                Ok(json!(self.store.set_key_enabled(&id, enabled)?))
            }
            AdminRequest::LogList {
                org,
                environment,
                after,
                limit,
            } => {
                let filter = EntryFilter {
                    org,
                    environment,
                    after_sequence: after,
                    limit: limit.clamp(1, 10_000),
                };
                Ok(json!(self.store.entries(&filter)?))
            }
            AdminRequest::LogShow {
                environment,
                sequence,
            } => match self.store.entry(environment, sequence)? {
                Some(entry) => Ok(json!(entry)),
                None => Err(AdminError::Invalid(format!(
                    "no {} register entry with sequence {sequence}",
                    environment.as_str()
                ))),
            },
            AdminRequest::LogVerify => Ok(json!(self.store.verify()?)),
            AdminRequest::DashboardTokenIssue { org, label } => {
                self.dashboard_token_issue(&org, &label)
            }
            AdminRequest::DashboardTokenList { org } => self.dashboard_token_list(&org),
            AdminRequest::DashboardTokenRevoke { id } => self.dashboard_token_revoke(&id),
            AdminRequest::OrgSummary { org } => self.org_summary(&org),
            AdminRequest::OrgKeySetEnabled { org, id, enabled } => {
                self.org_key_set_enabled(&org, &id, enabled)
            }
            AdminRequest::OrgLogSearch {
                org,
                environment,
                rn,
                from,
                to,
                before,
                limit,
            } => {
                let search = scoped::Search {
                    rn,
                    from,
                    to,
                    before,
                    limit,
                };
                self.org_log_search(&org, environment, &search)
            }
            AdminRequest::OrgLogShow {
                org,
                environment,
                sequence,
            } => self.org_log_show(&org, environment, sequence),
            AdminRequest::FiscalAnomalies => Ok(json!(self.store.fiscal_anomalies()?)),
            AdminRequest::FiscalAnomalyAck { id, by, note } => {
                if by.trim().is_empty() || note.trim().is_empty() {
                    return Err(AdminError::Invalid(
                        "say who acknowledges the anomaly (--by) and why (--note)".into(),
                    ));
                }
                Ok(json!(self
                    .store
                    .acknowledge_fiscal_anomaly(id, &by, &note)?))
            }
            AdminRequest::DeviceProbe { .. } => Err(AdminError::Invalid(
                "a device is probed by the running service (or by the CLI on the port when \
                 the service is stopped), not on the register"
                    .into(),
            )),
        }
    }

    /// `{"year", "used", "quota", "remaining"}` of `org` for the current quota year.
    fn quota_json(&self, org: &Organization) -> Result<Value, AdminError> {
        let year = Utc::now().with_timezone(&self.quotas.offset).year();
        let used = self.store.quota_used(&org.id, year)?;
        let quota = org.quota_override.unwrap_or(match org.plan {
            Plan::Start => self.quotas.start,
            Plan::Grow => self.quotas.grow,
        });
        Ok(json!({"year": year, "used": used, "quota": quota,
                  "remaining": quota.saturating_sub(used)}))
    }

    fn organization(&self, id: &str) -> Result<Organization, AdminError> {
        self.store
            .organization(id)?
            .ok_or_else(|| AdminError::Invalid(format!("no organization with id {id:?}")))
    }
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
        return Err(AdminError::Invalid(
            "organization id: 1 to 32 characters among a-z, 0-9 and '-'".to_string(),
        ));
    }
    for (name, value) in [("nif", &org.nif), ("isf", &org.isf)] {
        let ok = !value.is_empty()
            && value.len() <= 20
            && value
                .bytes()
                .all(|b| b.is_ascii_graphic() && !b",;:&<>^".contains(&b));
        if !ok {
            return Err(AdminError::Invalid(format!(
                "{name}: 1 to 20 printable ASCII characters, no , ; : & < > ^"
            )));
        }
    }
    if org.name.trim().is_empty() || org.device.trim().is_empty() {
        return Err(AdminError::Invalid(
            "organization name and device must not be empty".to_string(),
        ));
    }
    Ok(())
}
