//! Index queries of the dashboard: one organization's register pages (newest first, with a
//! filter), its entry counts, and dashboard tokens. Keys are those of `index.rs`.

use super::blocks::{k_org_prefix, org_bits};
use super::event::DashboardToken;
use super::index::{k_token, k_token_by_org, Index};
use super::StoreError;
use crate::model::{Environment, RegisterEntry};

impl Index {
    /// Entries of `org` in `env` with a sequence below `before`, newest first, that `keep`
    /// accepts; stops after `limit` of them.
    pub fn org_entries_back(
        &self,
        org: &str,
        env: Environment,
        before: u64,
        limit: usize,
        keep: &mut dyn FnMut(&RegisterEntry) -> bool,
    ) -> Result<Vec<RegisterEntry>, StoreError> {
        let mut out = Vec::new();
        if limit == 0 || before == 0 {
            return Ok(out);
        }
        self.org_seqs(org, env, (0, before), true, &mut |seq| {
            let entry = self.listed_entry(org, env, seq)?;
            if keep(&entry) {
                out.push(entry);
            }
            Ok(out.len() < limit)
        })?;
        Ok(out)
    }

    /// How many entries `org` has in the `env` register.
    pub fn org_entry_count(&self, org: &str, env: Environment) -> Result<u64, StoreError> {
        let mut count = 0;
        for kv in self.tree.scan_prefix(k_org_prefix(org, env)).values() {
            count += u64::from(org_bits(&kv?)?.count_ones());
        }
        Ok(count)
    }

    pub fn dashboard_token(&self, id: &str) -> Result<Option<DashboardToken>, StoreError> {
        self.get_json(&k_token(id))
    }

    pub fn dashboard_tokens_of(&self, org: &str) -> Result<Vec<DashboardToken>, StoreError> {
        let prefix = k_token_by_org(org, "");
        let mut tokens = Vec::new();
        for kv in self.tree.scan_prefix(&prefix).keys() {
            let k = kv?;
            let id = String::from_utf8_lossy(&k[prefix.len()..]).into_owned();
            match self.dashboard_token(&id)? {
                Some(token) => tokens.push(token),
                None => {
                    return Err(StoreError::Invalid(format!(
                        "index lists dashboard token {id:?} for {org:?} but has no record of it"
                    )))
                }
            }
        }
        Ok(tokens)
    }
}
