//! Moving a register between the stores (issue 28, docs/postgresql.md "Moving a register"):
//! [`import`] copies an embedded register into an empty PostgreSQL store, then checks that
//! both stores give the same answers; [`export`] (`transfer/export.rs`) goes back, writing a
//! new journal through the embedded store's own writes.
//!
//! The journal is read with the embedded store's reader (`journal::scan`, as `backup` reads
//! it), twice: once to learn how each intent ends (its quota year) and how many records there
//! are, once to send each record to the import's transaction. The embedded store is held
//! open meanwhile (its lock: the service must be stopped), and its answers are the reference
//! of the comparison ([`compare`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, SubsecRound, Utc};

use super::embedded::journal::{self, Mode};
use super::postgres::{ImportCounts, ImportRefusal, ImportRules, PgError, PgStore, Settled};
use super::{journal_path, EmbeddedStore, EntryFilter, Event, Record, StoreError};
use crate::i18n::Message;
use crate::model::{AnomalyRecord, Environment, IntentId, OrgId, Organization, RegisterEntry};
use crate::msg;

/// The longest a whole register's import, or its check, may take: a register of millions of
/// entries is minutes of work, not the seconds an invoice's operation gets.
pub(super) const TRANSFER_LIMIT: Duration = Duration::from_secs(24 * 3600);

mod export;

pub use export::{export, Exported};

/// Differences shown at most; the rest are counted.
const SHOWN: usize = 20;

/// Entries compared a page at a time.
const PAGE: usize = 500;

/// The reader's error when the import's side stopped first (its own error says why).
const STOPPED: &str = "the import stopped";

/// Why a move did not happen, or did not end as it should.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    /// The state directory holds no journal.
    #[error("{0} holds no register (no journal/journal.log)")]
    NoRegister(PathBuf),
    /// The database holds organizations or events already: nothing was written.
    #[error("the PostgreSQL database is not empty: it holds organizations or events")]
    DatabaseNotEmpty,
    /// The export's state directory holds a register already.
    #[error("{0} is not empty")]
    DirectoryNotEmpty(PathBuf),
    /// The stores do not give the same answers after the move.
    #[error("the stores differ after the move: {}", said(.differences))]
    Differs {
        /// What differs, one line each (the first [`SHOWN`], then how many more).
        differences: Vec<Message>,
    },
    /// The import's transaction failed (a record refused by a rule of the schema, the
    /// server, the journal's reader): nothing was committed.
    #[error("nothing was imported: {0}")]
    NotImported(#[source] StoreError),
    /// The embedded store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Lines of differences in English, for logs.
fn said(differences: &[Message]) -> String {
    let lines: Vec<String> = differences.iter().map(Message::to_string).collect();
    lines.join("; ")
}

impl From<PgError> for TransferError {
    fn from(error: PgError) -> TransferError {
        TransferError::Store(StoreError::from(error))
    }
}

/// What the configuration says of quotas, for the claims of the imported intents.
pub struct QuotaRules {
    /// An organization's annual quota (its override, else its plan's).
    pub quota_of: Box<dyn Fn(&Organization) -> u64 + Sync>,
    /// The quota year of an instant.
    pub year_of: Box<dyn Fn(DateTime<Utc>) -> i32 + Sync>,
}

/// What the comparison of the two stores checked, all equal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checked {
    /// Register entries compared one by one (both environments).
    pub entries: u64,
    /// Organizations' hash chains recomputed on PostgreSQL.
    pub chains: u64,
    /// (organization, year) quota counts compared.
    pub quota_years: u64,
    /// Intents still open, compared.
    pub open_intents: u64,
}

/// An import done and checked.
#[derive(Debug, Clone)]
pub struct Imported {
    /// What was written.
    pub counts: ImportCounts,
    /// What was compared.
    pub checked: Checked,
}

/// What the first pass over the journal learnt.
struct Plan {
    records: u64,
    head_sha256: String,
    settled: HashMap<IntentId, Settled>,
    /// Production intents still open: their organization and when they were received.
    open: HashMap<IntentId, (OrgId, DateTime<Utc>)>,
}

fn scan_journal(
    path: &Path,
    mut visit: impl FnMut(Record) -> Result<(), StoreError>,
) -> Result<journal::Scanned, StoreError> {
    let mut file = File::open(path).map_err(|e| super::error::io_at(path, "opening", e))?;
    let len = file
        .metadata()
        .map_err(|e| super::error::io_at(path, "reading", e))?
        .len();
    journal::scan(&mut file, len, Mode::Strict, path, |record, _, _| {
        visit(record)
    })
}

fn plan(path: &Path) -> Result<Plan, StoreError> {
    let mut settled = HashMap::new();
    let mut open = HashMap::new();
    let scanned = scan_journal(path, |record| {
        match record.event {
            Event::Intent(intent) if intent.environment == Environment::Production => {
                open.insert(record.seq, (intent.org, intent.received_at));
            }
            Event::Certified(entry) => {
                open.remove(&entry.intent);
                settled.insert(entry.intent, Settled::Certified(entry.quota_year));
            }
            Event::Abandoned { intent, .. } => {
                open.remove(&intent);
                settled.insert(intent, Settled::Abandoned);
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(Plan {
        records: scanned.records,
        head_sha256: hex::encode(scanned.head),
        settled,
        open,
    })
}

/// Copies the embedded register of `state_dir` (the service stopped) into the empty
/// database of `pg`, then compares both stores ([`compare`]). Refused, writing nothing,
/// when the database holds anything. A difference found after the commit is
/// [`TransferError::Differs`]: the database then holds a copy not to be used
/// (docs/postgresql.md says how to start again).
pub fn import(
    state_dir: &Path,
    pg: &PgStore,
    quotas: &QuotaRules,
) -> Result<Imported, TransferError> {
    let path = journal_path(state_dir);
    if !path.is_file() {
        return Err(TransferError::NoRegister(state_dir.to_path_buf()));
    }
    let embedded = EmbeddedStore::open(state_dir)?;
    let plan = plan(&path)?;
    let rules = ImportRules {
        settled: &plan.settled,
        quota_of: &*quotas.quota_of,
        year_of: &*quotas.year_of,
        records: plan.records,
        head_sha256: &plan.head_sha256,
    };
    let (sender, receiver) = tokio::sync::mpsc::channel::<Record>(256);
    let outcome = std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            scan_journal(&path, |record| {
                sender
                    .blocking_send(record)
                    .map_err(|_| StoreError::Invalid(STOPPED.to_owned()))
            })
        });
        let written = pg.run_long(TRANSFER_LIMIT, pg.register().import(receiver, &rules));
        let read = reader.join();
        (written, read)
    });
    let counts = match outcome {
        (Ok(Ok(counts)), _) => counts,
        (Ok(Err(ImportRefusal::NotEmpty)), _) => return Err(TransferError::DatabaseNotEmpty),
        // The reader's own failure (damage met on the second pass) says more than the
        // import's "fewer records than the journal has".
        (Err(written), Ok(Err(StoreError::Invalid(stopped)))) if stopped == STOPPED => {
            return Err(TransferError::NotImported(written))
        }
        (Err(_), Ok(Err(read))) => return Err(TransferError::NotImported(read)),
        (Err(written), _) => return Err(TransferError::NotImported(written)),
    };
    let mut expected_quota: BTreeMap<(OrgId, i32), u64> = BTreeMap::new();
    for (org, received) in plan.open.values() {
        *expected_quota
            .entry((org.clone(), (quotas.year_of)(*received)))
            .or_default() += 1;
    }
    let checked = compare(&embedded, pg, &expected_quota, &IdMap::kept())?;
    Ok(Imported { counts, checked })
}

/// How the ids of one store became the other's (an export that could not keep every id):
/// intents and anomalies whose id changed, by their PostgreSQL id.
#[derive(Debug)]
pub(crate) struct IdMap {
    pub intents: HashMap<IntentId, IntentId>,
    pub anomalies: HashMap<u64, u64>,
    /// The anomalies' times are the same in both stores (an import).
    pub same_times: bool,
}

impl IdMap {
    /// The ids of an import: all kept, and the times.
    pub(crate) fn kept() -> IdMap {
        IdMap {
            intents: HashMap::new(),
            anomalies: HashMap::new(),
            same_times: true,
        }
    }

    fn intent(&self, id: IntentId) -> IntentId {
        self.intents.get(&id).copied().unwrap_or(id)
    }
}

/// Anomaly records with their times as `timestamptz` keeps them (microseconds), or with no
/// time at all (`None`: an export, whose journal records them when it writes them).
fn comparable(records: Vec<AnomalyRecord>, times: bool) -> Vec<AnomalyRecord> {
    let at = |time: DateTime<Utc>| {
        if times {
            time.trunc_subsecs(6)
        } else {
            DateTime::<Utc>::MIN_UTC
        }
    };
    records
        .into_iter()
        .map(|mut record| {
            record.detected_at = at(record.detected_at);
            if let Some(ack) = &mut record.acknowledged {
                ack.at = at(ack.at);
            }
            record
        })
        .collect()
}

/// Collects differences, keeping the first [`SHOWN`].
#[derive(Default)]
struct Differences {
    shown: Vec<Message>,
    more: u64,
}

impl Differences {
    /// `what` of the embedded store is `a`, of PostgreSQL `b` (each shown as its record).
    fn check<T: PartialEq + std::fmt::Debug>(&mut self, what: impl Fn() -> Message, a: &T, b: &T) {
        if a != b {
            if self.shown.len() < SHOWN {
                self.shown.push(msg!(
                    "store-move-difference",
                    what = what(),
                    here = format!("{a:?}"),
                    there = format!("{b:?}")
                ));
            } else {
                self.more += 1;
            }
        }
    }
}

/// Compares what `embedded` and `pg` answer: the organizations, their keys and dashboard
/// tokens, every register entry (whole, its invoice included), each organization's count of
/// entries per register, the quota used per organization and year (certified units on both;
/// `open_claims` names the years open intents hold units in), the open intents, the
/// boxes' counters, the fiscal anomalies, and PostgreSQL's own `log verify` (every chain).
/// `ids`: the PostgreSQL ids that are others in `embedded`, and whether the anomalies' times
/// are the same (to the microsecond) or new (an export's).
pub(crate) fn compare(
    embedded: &EmbeddedStore,
    pg: &PgStore,
    open_claims: &BTreeMap<(OrgId, i32), u64>,
    ids: &IdMap,
) -> Result<Checked, TransferError> {
    let reg = pg.register();
    let mut diff = Differences::default();
    let mut checked = Checked::default();
    let orgs = embedded.organizations()?;
    diff.check(
        || msg!("store-move-organizations"),
        &orgs,
        &pg.run(reg.organizations())?,
    );
    let mut years: BTreeSet<(OrgId, i32)> = open_claims.keys().cloned().collect();
    for org in &orgs {
        let id = &org.id;
        diff.check(
            || msg!("store-move-keys", org = id.clone()),
            &embedded.keys_of(id)?,
            &pg.run(reg.keys_of(id))?,
        );
        diff.check(
            || msg!("store-move-tokens", org = id.clone()),
            &embedded.dashboard_tokens_of(id)?,
            &pg.run(reg.dashboard_tokens_of(id))?,
        );
        for env in [Environment::Production, Environment::Sandbox] {
            diff.check(
                || {
                    msg!(
                        "store-move-count",
                        org = id.clone(),
                        environment = env.as_str()
                    )
                },
                &embedded.org_entry_count(id, env)?,
                &pg.run(reg.org_entry_count(id, env))?,
            );
        }
    }
    for env in [Environment::Production, Environment::Sandbox] {
        let length = embedded.register_length(env)?;
        diff.check(
            || msg!("store-move-length", environment = env.as_str()),
            &length,
            &pg.run(reg.register_length(env))?,
        );
        // A page of each store at a time, compared entry by entry by their numbers.
        let mut after = 0;
        while after < length {
            let page = |after| EntryFilter {
                org: None,
                environment: env,
                after_sequence: after,
                limit: PAGE,
            };
            let here = embedded.entries(&page(after))?;
            let there = pg.run(reg.entries(&page(after)))?;
            let mut there: BTreeMap<u64, RegisterEntry> = there
                .into_iter()
                .map(|mut entry| {
                    entry.intent = ids.intent(entry.intent);
                    (entry.sequence, entry)
                })
                .collect();
            let last = here.last().map_or(length, |entry| entry.sequence);
            let mut here: BTreeMap<u64, RegisterEntry> =
                here.into_iter().map(|e| (e.sequence, e)).collect();
            for sequence in after + 1..=last {
                let (here, there) = (here.remove(&sequence), there.remove(&sequence));
                if let Some(entry) = &here {
                    if env == Environment::Production {
                        years.insert((entry.request.org.clone(), entry.quota_year));
                    }
                }
                diff.check(
                    || {
                        msg!(
                            "store-move-entry",
                            environment = env.as_str(),
                            sequence = sequence
                        )
                    },
                    &here,
                    &there,
                );
                checked.entries += 1;
            }
            after = last;
        }
    }
    for (org, year) in &years {
        let here = embedded.quota_used(org, *year)?;
        diff.check(
            || msg!("store-move-quota", org = org.clone(), year = *year),
            &here,
            &pg.run(reg.quota_used(org, *year))?,
        );
        checked.quota_years += 1;
    }
    let open = embedded.open_intents()?;
    let open_pg: Vec<_> = pg
        .run(reg.open_intents())?
        .into_iter()
        .map(|(id, intent)| (ids.intent(id), intent))
        .collect();
    diff.check(|| msg!("store-move-open-intents"), &open, &open_pg);
    checked.open_intents = open.len() as u64;
    diff.check(
        || msg!("store-move-boxes"),
        &embedded.all_box_counters()?,
        &pg.run(reg.all_box_counters())?,
    );
    let anomalies_pg: Vec<AnomalyRecord> = pg
        .run(reg.fiscal_anomalies())?
        .into_iter()
        .map(|mut record| {
            record.id = ids.anomalies.get(&record.id).copied().unwrap_or(record.id);
            record
        })
        .collect();
    diff.check(
        || msg!("store-move-anomalies"),
        &comparable(embedded.fiscal_anomalies()?, ids.same_times),
        &comparable(anomalies_pg, ids.same_times),
    );
    let report = pg.run_long(TRANSFER_LIMIT, reg.verify())?;
    for problem in &report.problems {
        diff.check(|| msg!("store-move-verify"), &"", &problem.as_str());
    }
    diff.check(
        || msg!("store-move-verified"),
        &checked.entries,
        &report.entries,
    );
    checked.chains = report.chains;
    if diff.shown.is_empty() {
        return Ok(checked);
    }
    let mut differences = diff.shown;
    if diff.more > 0 {
        differences.push(msg!("store-move-more", count = diff.more));
    }
    Err(TransferError::Differs { differences })
}
