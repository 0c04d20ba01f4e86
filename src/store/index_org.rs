//! Index queries of the dashboard: one organization's register pages (newest first, with a
//! filter), its entry counts, and dashboard tokens. Keys are those of `index.rs`.

use super::event::DashboardToken;
use super::index::{be_u64, k_org_entry, k_token, k_token_by_org, Index};
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
        let range = k_org_entry(org, env, 0)..k_org_entry(org, env, before);
        for kv in self.tree.range(range).rev() {
            let seq = be_u64(&kv?.0)?;
            let entry = self.entry(env, seq)?.ok_or_else(|| {
                StoreError::Invalid(format!(
                    "index lists {} entry {seq} for {org:?} but does not hold it",
                    env.as_str()
                ))
            })?;
            if keep(&entry) {
                out.push(entry);
                if out.len() >= limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// How many entries `org` has in the `env` register.
    pub fn org_entry_count(&self, org: &str, env: Environment) -> Result<u64, StoreError> {
        let mut prefix = k_org_entry(org, env, 0);
        prefix.truncate(prefix.len() - 8);
        let mut count = 0;
        for kv in self.tree.scan_prefix(prefix).keys() {
            kv?;
            count += 1;
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
