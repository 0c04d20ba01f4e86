//! The admin socket's wire format (one JSON request per line, one JSON answer) and its
//! dispatch to the typed methods of [`Admin`]: the only place administration speaks JSON.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::scoped::Search;
use super::{Admin, AdminError};
use crate::model::{Environment, Organization};
use crate::msg;
use crate::store::EntryFilter;

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
    /// One register entry for an auditor: the invoice it certified, its groups, its credit
    /// notes or original; by sequence, or by organization and rn.
    LogInvoice {
        /// Which register.
        environment: Environment,
        /// Its sequence number (else `org` and `rn`).
        #[serde(default)]
        sequence: Option<u64>,
        /// Organization (with `rn`).
        #[serde(default)]
        org: Option<String>,
        /// Invoice number (with `org`).
        #[serde(default)]
        rn: Option<String>,
    },
    /// How many entries the `environment` register holds (its last sequence).
    LogLength {
        /// Which register.
        environment: Environment,
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
        /// A register behind its box: the missing certifications' numbers (1.8.0).
        #[serde(default)]
        numbers: Vec<u64>,
        /// Of those, the rns the administrator found on the DGI's portal, by number (1.8.1).
        #[serde(default)]
        rns: Vec<(u64, String)>,
    },
    /// Probe a configured device (`device probe`): answered by the running service only,
    /// through its device link.
    DeviceProbe {
        /// The device; `None`: the only configured one.
        device: Option<String>,
    },
    /// The NIF a configured device last said it is personalized for (`org add` checks with
    /// it): answered by the running service only, without traffic to the device.
    DeviceNif {
        /// The device.
        device: String,
    },
    /// The open intents and which wait for an administrator (`intent list`): answered by the
    /// running service only (the channels know which).
    IntentList,
    /// Settle an intent that waits for an administrator (`intent resolve`): running service
    /// only; journaled with who.
    IntentResolve {
        /// The intent.
        intent: u64,
        /// What the administrator found.
        resolution: crate::certify::Resolution,
        /// Who.
        by: String,
        /// Where it was read, why.
        note: String,
    },
    /// Publish a change notice (`notice add`) to every organization's administrators:
    /// through the running service (its alert engine e-mails it now); a stopped service's
    /// is written by the CLI and e-mailed at the next start.
    NoticeAdd {
        /// What the operator wrote.
        notice: crate::notices::NewNotice,
    },
    /// The change notices (`notice list`).
    NoticeList,
    /// How far the journal is durable (`backup`): its length after the last successful
    /// fsync, so that a copy never holds a record that a failed fsync may take back.
    JournalDurable,
}

impl AdminRequest {
    /// Whether only the running service can answer it (it needs the channels).
    pub fn needs_service(&self) -> bool {
        matches!(
            self,
            AdminRequest::DeviceProbe { .. }
                | AdminRequest::DeviceNif { .. }
                | AdminRequest::IntentList
                | AdminRequest::IntentResolve { .. }
                | AdminRequest::NoticeAdd { .. }
                | AdminRequest::NoticeList
        )
    }
}

impl Admin {
    /// Runs one request of the admin socket's wire format (blocking: it may fsync the
    /// journal) and answers its JSON.
    pub fn handle(&self, request: AdminRequest) -> Result<Value, AdminError> {
        match request {
            AdminRequest::OrgSave { org } => json(self.org_save(org)),
            AdminRequest::OrgList => json(self.org_list()),
            AdminRequest::OrgShow { id } => json(self.org_show(&id)),
            AdminRequest::KeyIssue {
                org,
                environment,
                label,
            } => json(self.key_issue(&org, environment, &label)),
            AdminRequest::KeyList { org } => json(self.key_list(&org)),
            AdminRequest::KeySetEnabled { id, enabled } => json(self.key_set_enabled(&id, enabled)),
            AdminRequest::LogList {
                org,
                environment,
                after,
                limit,
            } => json(self.log_list(EntryFilter {
                org,
                environment,
                after_sequence: after,
                limit,
            })),
            AdminRequest::LogShow {
                environment,
                sequence,
            } => json(self.log_show(environment, sequence)),
            AdminRequest::LogInvoice {
                environment,
                sequence,
                org,
                rn,
            } => json(match (sequence, org, rn) {
                (Some(sequence), None, None) => self.log_invoice(environment, sequence),
                (None, Some(org), Some(rn)) => self.log_invoice_by_rn(&org, environment, &rn),
                _ => Err(AdminError::Invalid(msg!("admin-entry-by-sequence-or-rn"))),
            }),
            AdminRequest::LogLength { environment } => json(self.log_length(environment)),
            AdminRequest::LogVerify => json(self.log_verify()),
            AdminRequest::JournalDurable => json(self.journal_durable()),
            AdminRequest::DashboardTokenIssue { org, label } => {
                json(self.dashboard_token_issue(&org, &label))
            }
            AdminRequest::DashboardTokenList { org } => json(self.dashboard_token_list(&org)),
            AdminRequest::DashboardTokenRevoke { id } => json(self.dashboard_token_revoke(&id)),
            AdminRequest::OrgSummary { org } => json(self.org_summary(&org)),
            AdminRequest::OrgKeySetEnabled { org, id, enabled } => {
                json(self.org_key_set_enabled(&org, &id, enabled))
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
                let search = Search {
                    rn,
                    from,
                    to,
                    before,
                    limit,
                };
                json(self.org_log_search(&org, environment, &search))
            }
            AdminRequest::OrgLogShow {
                org,
                environment,
                sequence,
            } => json(self.org_log_show(&org, environment, sequence)),
            AdminRequest::FiscalAnomalies => json(self.fiscal_anomalies()),
            AdminRequest::FiscalAnomalyAck {
                id,
                by,
                note,
                numbers,
                rns,
            } => json(self.fiscal_anomaly_ack(id, &by, &note, &numbers, &rns)),
            AdminRequest::DeviceProbe { .. } => {
                Err(AdminError::Invalid(msg!("admin-probe-needs-service")))
            }
            AdminRequest::DeviceNif { .. } => {
                Err(AdminError::Invalid(msg!("admin-nif-needs-service")))
            }
            AdminRequest::IntentList | AdminRequest::IntentResolve { .. } => {
                Err(AdminError::Invalid(msg!("admin-intents-need-service")))
            }
            AdminRequest::NoticeAdd { .. } | AdminRequest::NoticeList => {
                Err(AdminError::Invalid(msg!("admin-notices-need-service")))
            }
        }
    }
}

/// The JSON of a typed answer.
fn json<T: Serialize>(answer: Result<T, AdminError>) -> Result<Value, AdminError> {
    serde_json::to_value(answer?).map_err(|e| AdminError::Internal(e.to_string()))
}
