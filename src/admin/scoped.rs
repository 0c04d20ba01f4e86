//! Requests scoped to one organization (the dashboard's), and dashboard tokens.
//!
//! Every `org_*` operation takes the organization from the caller's session and checks that
//! what it touches belongs to it; another organization's key or entry is "not found", the
//! same answer as one that does not exist, so nothing tells an admin what other
//! organizations hold.

use chrono::{NaiveDate, Utc};

use super::answers::{EntryCounts, KeyCounts, LogPage, OrgSummary, PublicToken};
use super::audit::Period;
use super::token::{self, IssuedToken};
use super::{Admin, AdminError};
use crate::model::{Environment, KeyRecord, RegisterEntry};
use crate::msg;
use crate::store::DashboardToken;

/// Filters and cursor of a register search.
#[derive(Debug, Clone, Default)]
pub struct Search {
    /// Only entries whose rn contains this (ASCII case-insensitive).
    pub rn: Option<String>,
    /// Only entries certified on or after this day (configured time zone).
    pub from: Option<NaiveDate>,
    /// Only entries certified on or before this day (configured time zone).
    pub to: Option<NaiveDate>,
    /// Only entries with a sequence below this one (the next page's cursor).
    pub before: Option<u64>,
    /// At most this many (1..=500).
    pub limit: usize,
}

/// Largest page of a register search.
pub const MAX_PAGE: usize = 500;

/// Who signed in to the dashboard: a valid, unrevoked token of an existing organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// The token's public id (sessions are checked against it: revoking ends them).
    pub token_id: String,
    /// Its organization's id.
    pub org: String,
}

impl Admin {
    /// Checks a dashboard token typed into the sign-in form. `Ok(None)`: not a valid token
    /// (malformed, unknown, wrong secret, revoked, organization gone); the caller says only
    /// that. The secret is compared in constant time and never logged.
    pub fn dashboard_sign_in(&self, text: &str) -> Result<Option<SignedIn>, AdminError> {
        let Some(presented) = token::parse(text) else {
            return Ok(None);
        };
        let Some(record) = self.store.dashboard_token(&presented.id)? else {
            // Same work as for a known id.
            let _ = presented.matches(&dummy_record());
            return Ok(None);
        };
        if !presented.matches(&record) || record.revoked {
            return Ok(None);
        }
        if self.store.organization(&record.org)?.is_none() {
            return Ok(None);
        }
        Ok(Some(SignedIn {
            token_id: record.id,
            org: record.org,
        }))
    }

    /// The organization whose dashboard token `text`'s id names, without checking its secret
    /// (to count failed sign-ins per organization); `None` if the id is not one of them.
    pub fn dashboard_token_org(&self, text: &str) -> Result<Option<String>, AdminError> {
        let Some(presented) = token::parse(text) else {
            return Ok(None);
        };
        Ok(self.store.dashboard_token(&presented.id)?.map(|t| t.org))
    }

    /// Whether a session opened with `token_id` for `org` may go on (the token is not
    /// revoked and still names that organization).
    pub fn dashboard_token_valid(&self, token_id: &str, org: &str) -> Result<bool, AdminError> {
        Ok(self
            .store
            .dashboard_token(token_id)?
            .is_some_and(|t| !t.revoked && t.org == org))
    }

    /// Issues a dashboard sign-in token; the answer carries the plaintext, shown once.
    pub fn dashboard_token_issue(&self, org: &str, label: &str) -> Result<IssuedToken, AdminError> {
        self.organization(org)?;
        super::check_name(super::NameField::TokenLabel, label)?;
        let issued = token::issue(org, label, Utc::now());
        self.store.issue_dashboard_token(issued.record.clone())?;
        Ok(issued)
    }

    /// The dashboard tokens of an organization (never their hashes).
    pub fn dashboard_token_list(&self, org: &str) -> Result<Vec<PublicToken>, AdminError> {
        self.organization(org)?;
        let tokens = self.store.dashboard_tokens_of(org)?;
        Ok(tokens.iter().map(PublicToken::from).collect())
    }

    /// Revokes a dashboard token: it signs in no more and its sessions end.
    pub fn dashboard_token_revoke(&self, id: &str) -> Result<PublicToken, AdminError> {
        if self.store.dashboard_token(id)?.is_none() {
            return Err(AdminError::NotFound(msg!("admin-no-token", id = id)));
        }
        Ok(PublicToken::from(&self.store.revoke_dashboard_token(id)?))
    }

    /// An organization's overview: quota of the year, entries per register, keys.
    pub fn org_summary(&self, org: &str) -> Result<OrgSummary, AdminError> {
        let organization = self.organization(org)?;
        let keys = self.store.keys_of(org)?;
        let enabled = keys.iter().filter(|k| k.enabled).count();
        Ok(OrgSummary {
            quota: self.quota_use(&organization)?,
            organization,
            entries: EntryCounts {
                production: self.store.org_entry_count(org, Environment::Production)?,
                sandbox: self.store.org_entry_count(org, Environment::Sandbox)?,
            },
            keys: KeyCounts {
                total: keys.len(),
                enabled,
            },
        })
    }

    /// Enables or disables a key of `org` (another organization's key is not found).
    pub fn org_key_set_enabled(
        &self,
        org: &str,
        id: &str,
        enabled: bool,
    ) -> Result<KeyRecord, AdminError> {
        match self.store.key(id)? {
            Some(key) if key.org == org => Ok(self.store.set_key_enabled(id, enabled)?),
            _ => Err(AdminError::NotFound(msg!("admin-no-key-here", id = id))),
        }
    }

    /// A page of one organization's register, newest first, with optional filters.
    pub fn org_log_search(
        &self,
        org: &str,
        env: Environment,
        search: &Search,
    ) -> Result<LogPage, AdminError> {
        self.organization(org)?;
        let limit = search.limit.clamp(1, MAX_PAGE);
        let needle = search
            .rn
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_ascii_lowercase);
        let offset = self.quotas.offset;
        let period = Period {
            from: search.from,
            to: search.to,
        };
        let keep = |entry: &RegisterEntry| {
            needle
                .as_deref()
                .is_none_or(|n| entry.request.rn.to_ascii_lowercase().contains(n))
                && period.holds(entry, offset)
        };
        let before = search.before.unwrap_or(u64::MAX);
        let mut entries = self
            .store
            .org_entries_back(org, env, before, limit + 1, keep)?;
        let next_before = if entries.len() > limit {
            entries.truncate(limit);
            entries.last().map(|e| e.sequence)
        } else {
            None
        };
        Ok(LogPage {
            entries,
            next_before,
        })
    }

    /// One entry of one organization's register.
    pub fn org_log_show(
        &self,
        org: &str,
        env: Environment,
        sequence: u64,
    ) -> Result<RegisterEntry, AdminError> {
        match self.store.entry(env, sequence)? {
            Some(entry) if entry.request.org == org => Ok(entry),
            _ => Err(AdminError::NotFound(msg!(
                "admin-no-entry-here",
                environment = env.as_str(),
                sequence = sequence
            ))),
        }
    }
}

fn dummy_record() -> DashboardToken {
    DashboardToken {
        id: String::new(),
        org: String::new(),
        token_sha256: "0".repeat(64),
        label: String::new(),
        created_at: Utc::now(),
        revoked: true,
    }
}

/// A token as shown: id, organization, label, creation time, revoked; never the hash.
#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chrono::FixedOffset;

    use super::*;
    use crate::admin::{AdminRequest, QuotaSettings};
    use crate::store::tests::{certify, seeded};
    use serde_json::json;

    const P: Environment = Environment::Production;

    fn admin(dir: &std::path::Path) -> Admin {
        let quotas = QuotaSettings {
            offset: FixedOffset::east_opt(3600).unwrap(),
            start: 100,
            grow: 1000,
        };
        Admin::new(Arc::new(seeded(dir).into()), quotas)
    }

    fn embedded(admin: &Admin) -> &crate::store::EmbeddedStore {
        admin
            .store
            .embedded()
            .expect("these tests open an embedded store")
    }

    fn issue(admin: &Admin, org: &str) -> (String, String) {
        let answer = admin
            .handle(AdminRequest::DashboardTokenIssue {
                org: org.into(),
                label: "owner".into(),
            })
            .unwrap();
        let token = answer["token"].as_str().unwrap().to_string();
        let id = answer["record"]["id"].as_str().unwrap().to_string();
        (token, id)
    }

    #[test]
    fn a_dashboard_token_signs_in_to_its_organization_until_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let admin = admin(dir.path());
        let (token, id) = issue(&admin, "demo");
        let (other, _) = issue(&admin, "acme");
        let signed = admin.dashboard_sign_in(&token).unwrap().unwrap();
        assert_eq!(
            signed,
            SignedIn {
                token_id: id.clone(),
                org: "demo".into()
            }
        );
        assert_eq!(
            admin.dashboard_sign_in(&other).unwrap().unwrap().org,
            "acme"
        );
        // Right id, wrong secret; garbage; unknown id.
        let forged = format!("{}{}", &token[..22], &other[22..]);
        assert_eq!(admin.dashboard_sign_in(&forged).unwrap(), None);
        assert_eq!(
            admin.dashboard_token_org(&forged).unwrap().as_deref(),
            Some("demo"),
            "the forged token's id names demo's token: its failure counts against demo"
        );
        assert_eq!(admin.dashboard_sign_in("mcf_dash_nope").unwrap(), None);
        assert_eq!(admin.dashboard_token_org("mcf_dash_nope").unwrap(), None);
        let unknown = format!("mcf_dash_{}{}", "Z".repeat(12), &token[21..]);
        assert_eq!(admin.dashboard_sign_in(&unknown).unwrap(), None);
        assert_eq!(admin.dashboard_token_org(&unknown).unwrap(), None);
        assert!(admin.dashboard_token_valid(&id, "demo").unwrap());
        assert!(!admin.dashboard_token_valid(&id, "acme").unwrap());

        let list = admin
            .handle(AdminRequest::DashboardTokenList { org: "demo".into() })
            .unwrap();
        assert_eq!(list.as_array().unwrap().len(), 1);
        assert!(!list.to_string().contains("sha256"), "{list}");
        assert!(!list.to_string().contains(&token[22..]));

        admin
            .handle(AdminRequest::DashboardTokenRevoke { id: id.clone() })
            .unwrap();
        assert_eq!(admin.dashboard_sign_in(&token).unwrap(), None);
        assert!(!admin.dashboard_token_valid(&id, "demo").unwrap());
        assert!(matches!(
            admin.handle(AdminRequest::DashboardTokenRevoke { id: "x".into() }),
            Err(AdminError::NotFound(_))
        ));
        assert!(admin
            .handle(AdminRequest::DashboardTokenIssue {
                org: "nobody".into(),
                label: String::new()
            })
            .is_err());
    }

    #[test]
    fn scoped_requests_never_reach_another_organization() {
        let dir = tempfile::tempdir().unwrap();
        let admin = admin(dir.path());
        let acme_entry = certify(embedded(&admin), "acme", P, "A-1", 2026);
        let demo_entry = certify(embedded(&admin), "demo", P, "D-1", 2026);
        let toggle = |org: &str, id: &str| {
            admin.handle(AdminRequest::OrgKeySetEnabled {
                org: org.into(),
                id: id.into(),
                enabled: false,
            })
        };
        assert!(matches!(
            toggle("demo", "live-acme"),
            Err(AdminError::NotFound(_))
        ));
        assert!(admin.store.key("live-acme").unwrap().unwrap().enabled);
        assert_eq!(toggle("demo", "live-demo").unwrap()["enabled"], false);
        let show = |org: &str, sequence: u64| {
            admin.handle(AdminRequest::OrgLogShow {
                org: org.into(),
                environment: P,
                sequence,
            })
        };
        assert!(matches!(
            show("demo", acme_entry.sequence),
            Err(AdminError::NotFound(_))
        ));
        assert_eq!(show("demo", demo_entry.sequence).unwrap()["rn"], "D-1");
        assert!(matches!(show("demo", 99), Err(AdminError::NotFound(_))));
        let summary = admin
            .handle(AdminRequest::OrgSummary { org: "demo".into() })
            .unwrap();
        assert_eq!(summary["entries"]["production"], 1);
        assert_eq!(summary["keys"], json!({"total": 2, "enabled": 1}));
        assert_eq!(summary["quota"]["quota"], 100);
    }

    #[test]
    fn register_search_filters_by_rn_and_day_and_pages_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let admin = admin(dir.path());
        for rn in ["F-1", "F-2", "f-10", "G-1"] {
            certify(embedded(&admin), "demo", P, rn, 2026);
        }
        certify(embedded(&admin), "acme", P, "F-3", 2026);
        let search = |rn: Option<&str>, from: Option<&str>, before: Option<u64>, limit| {
            let value = admin
                .handle(AdminRequest::OrgLogSearch {
                    org: "demo".into(),
                    environment: P,
                    rn: rn.map(str::to_string),
                    from: from.map(|d| d.parse().unwrap()),
                    to: None,
                    before,
                    limit,
                })
                .unwrap();
            let rns: Vec<String> = value["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["rn"].as_str().unwrap().to_string())
                .collect();
            (rns, value["next_before"].as_u64())
        };
        assert_eq!(
            search(Some(" f-1"), None, None, 10),
            (vec!["f-10".into(), "F-1".into()], None)
        );
        let (page, next) = search(None, None, None, 3);
        assert_eq!(page, ["G-1", "f-10", "F-2"]);
        assert_eq!(search(None, None, next, 3), (vec!["F-1".into()], None));
        // The fixtures certify on 2026-03-03 10:00 UTC (11:00 at +01:00).
        assert_eq!(search(None, Some("2026-03-03"), None, 10).0.len(), 4);
        assert!(search(None, Some("2026-03-04"), None, 10).0.is_empty());
    }
}
