//! A PostgreSQL register written back to a new embedded store (`emcf-gateway store export`):
//! every fact replayed through the embedded store's own writes, which journal it (fsynced,
//! chained) as a running service would, then both stores compared and the new journal
//! verified.
//!
//! The order of the new journal: the facts an import brought (ids up to its journal's last
//! seq, said by its [`IMPORTED`] event) in the order of their ids, each settlement (an entry,
//! an abandon) filling the seqs between them, so that every intent and anomaly keeps its id;
//! then the facts written in PostgreSQL since, by time. Those were numbered by two
//! identities at once (events, intents) and cannot all keep their ids in one journal: the
//! intent ids that change are in the report ([`Exported::renumbered`]), and each entry is
//! compared with its intent's id so mapped (docs/postgresql.md). Register numbers,
//! codeDEFDGI, counters and invoices are never renumbered: an entry that would take another
//! number stops the export.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;

use chrono::{DateTime, Utc};

use super::{compare, Checked, IdMap, TransferError};
use crate::model::{Environment, IntentId, OrgId, RegisterEntry};
use crate::msg;
use crate::store::postgres::{EventRow, IntentRow, IntentState, PgStore, IMPORTED};
use crate::store::{DashboardToken, EmbeddedStore, EntryFilter, Event, StoreError};

/// Entries read from PostgreSQL at a time.
const PAGE: usize = 500;

/// An export done and checked.
#[derive(Debug, Clone)]
pub struct Exported {
    /// Records of the new journal.
    pub records: u64,
    /// Register entries written (both environments).
    pub entries: u64,
    /// Intents whose id changed (written in PostgreSQL after an import, or never imported).
    pub renumbered: u64,
    /// What was compared.
    pub checked: Checked,
}

/// A fact of `events` or `intents`, in the new journal's order.
enum Item {
    Event(EventRow),
    Intent(Box<IntentRow>),
}

impl Item {
    fn id(&self) -> u64 {
        match self {
            Item::Event(e) => e.id,
            Item::Intent(i) => i.id,
        }
    }

    /// When it happened: an event's time, an intent's arrival.
    fn at(&self) -> DateTime<Utc> {
        match self {
            Item::Event(e) => e.at,
            Item::Intent(i) => i.intent.received_at,
        }
    }
}

/// Each register's entries, read a page at a time in sequence order.
struct Entries {
    env: Environment,
    after: u64,
    page: VecDeque<RegisterEntry>,
    done: bool,
}

impl Entries {
    fn peek(&mut self, pg: &PgStore) -> Result<Option<&RegisterEntry>, TransferError> {
        if self.page.is_empty() && !self.done {
            let filter = EntryFilter {
                org: None,
                environment: self.env,
                after_sequence: self.after,
                limit: PAGE,
            };
            let page = pg.run(pg.register().entries(&filter))?;
            self.done = page.len() < PAGE;
            if let Some(last) = page.last() {
                self.after = last.sequence;
            }
            self.page = page.into();
        }
        Ok(self.page.front())
    }
}

/// The replay: the new store, the ids it gave, what waits for its turn.
struct Replay<'a> {
    pg: &'a PgStore,
    store: &'a EmbeddedStore,
    /// The next record's seq in the new journal.
    next: u64,
    /// PostgreSQL's intent ids and anomaly ids, as the new journal numbers them.
    ids: IdMap,
    /// The intents replayed, by PostgreSQL id.
    replayed: HashMap<IntentId, IntentId>,
    /// Abandons whose intent is replayed: (time, PostgreSQL id) -> reason.
    abandons: BTreeMap<(DateTime<Utc>, IntentId), String>,
    /// Open or abandoned-later intents replayed, by (organization, environment, rn).
    live: HashMap<(OrgId, Environment, String), IntentId>,
    /// The abandon each abandoned intent waits for, by PostgreSQL id.
    pending_abandons: HashMap<IntentId, (DateTime<Utc>, String)>,
    entries: [Entries; 2],
    written: u64,
}

/// The next settlement to write.
enum Settlement {
    Certify(usize),
    Abandon((DateTime<Utc>, IntentId)),
}

impl Replay<'_> {
    /// The earliest settlement ready (its intent replayed; an entry the next of its
    /// register), with its time.
    fn ready(&mut self) -> Result<Option<(DateTime<Utc>, Settlement)>, TransferError> {
        let mut best: Option<(DateTime<Utc>, Settlement)> = None;
        for slot in 0..2 {
            let pg = self.pg;
            if let Some(entry) = self.entries[slot].peek(pg)? {
                if self.replayed.contains_key(&entry.intent)
                    && best.as_ref().is_none_or(|(at, _)| entry.certified_at < *at)
                {
                    best = Some((entry.certified_at, Settlement::Certify(slot)));
                }
            }
        }
        if let Some((&(at, id), _)) = self.abandons.first_key_value() {
            if best.as_ref().is_none_or(|(best_at, _)| at < *best_at) {
                best = Some((at, Settlement::Abandon((at, id))));
            }
        }
        Ok(best)
    }

    /// The new journal's id of PostgreSQL's intent `id` (replayed: a settlement is ready only
    /// then).
    fn new_id(&self, id: IntentId) -> Result<IntentId, TransferError> {
        self.replayed
            .get(&id)
            .copied()
            .ok_or(TransferError::Store(StoreError::UnknownIntent(id)))
    }

    fn settle(&mut self, settlement: Settlement) -> Result<(), TransferError> {
        match settlement {
            Settlement::Certify(slot) => {
                let Some(entry) = self.entries[slot].page.pop_front() else {
                    return Ok(());
                };
                let id = self.new_id(entry.intent)?;
                let written = self.store.record_certified(
                    id,
                    entry.quota_year,
                    entry.certified_at,
                    entry.security.clone(),
                    &entry.source,
                )?;
                if written.sequence != entry.sequence {
                    return Err(TransferError::Differs {
                        differences: vec![msg!(
                            "store-move-renumbered-entry",
                            environment = entry.request.environment.as_str(),
                            sequence = entry.sequence,
                            written = written.sequence
                        )],
                    });
                }
                let r = &entry.request;
                self.live
                    .remove(&(r.org.clone(), r.environment, r.rn.clone()));
                self.written += 1;
            }
            Settlement::Abandon(key) => {
                let Some(reason) = self.abandons.remove(&key) else {
                    return Ok(());
                };
                let id = self.new_id(key.1)?;
                self.store.record_abandoned(id, &reason)?;
                self.live.retain(|_, pg_id| *pg_id != key.1);
            }
        }
        self.next += 1;
        Ok(())
    }

    /// Writes the settlements that come before `item`: up to its id for an imported fact,
    /// up to its time for a later one.
    fn before(&mut self, item: &Item, imported: bool) -> Result<(), TransferError> {
        while let Some((at, settlement)) = self.ready()? {
            let due = if imported {
                self.next < item.id()
            } else {
                at <= item.at()
            };
            if !due {
                break;
            }
            self.settle(settlement)?;
        }
        // An rn abandoned then asked again: the abandon first, whatever the times say.
        if let Item::Intent(row) = item {
            let i = &row.intent;
            if let Some(earlier) = self.live.get(&(i.org.clone(), i.environment, i.rn.clone())) {
                if let Some(key) = self.abandons.keys().find(|(_, id)| id == earlier).copied() {
                    self.settle(Settlement::Abandon(key))?;
                }
            }
        }
        Ok(())
    }

    fn write(&mut self, item: Item) -> Result<(), TransferError> {
        match item {
            Item::Intent(row) => {
                let mut intent = row.intent.clone();
                intent.invoice = self.pg.run(self.pg.register().intent_invoice(row.id))?;
                let id = self.store.record_intent(intent)?;
                if id != row.id {
                    self.ids.intents.insert(row.id, id);
                }
                self.replayed.insert(row.id, id);
                let i = &row.intent;
                self.live
                    .insert((i.org.clone(), i.environment, i.rn.clone()), row.id);
                if let Some((at, reason)) = self.pending_abandons.remove(&row.id) {
                    self.abandons.insert((at, row.id), reason);
                }
                self.next = id + 1;
            }
            Item::Event(row) => {
                let Some(event) = row.event()? else {
                    return Ok(());
                };
                let s = self.store;
                match event {
                    Event::OrganizationSaved(org) => s.save_organization(org)?,
                    Event::KeyIssued(key) => s.issue_key(key)?,
                    Event::KeyEnabled { id } => drop(s.set_key_enabled(&id, true)?),
                    Event::KeyDisabled { id } => drop(s.set_key_enabled(&id, false)?),
                    Event::DashboardTokenIssued {
                        token_id,
                        org,
                        token_sha256,
                        created_at,
                        label,
                    } => s.issue_dashboard_token(DashboardToken {
                        id: token_id,
                        org,
                        token_sha256,
                        label,
                        created_at,
                        revoked: false,
                    })?,
                    Event::DashboardTokenRevoked { token_id } => {
                        drop(s.revoke_dashboard_token(&token_id)?)
                    }
                    Event::FiscalAnomaly(anomaly) => {
                        let (record, _) = s.record_fiscal_anomaly(anomaly)?;
                        if record.id != row.id {
                            self.ids.anomalies.insert(row.id, record.id);
                        }
                    }
                    Event::FiscalAnomalyAcknowledged {
                        anomaly,
                        by,
                        note,
                        numbers,
                        rns,
                    } => {
                        let id = self.ids.anomalies.get(&anomaly).copied().unwrap_or(anomaly);
                        drop(s.acknowledge_fiscal_anomaly(id, &by, &note, &numbers, &rns)?)
                    }
                    other => {
                        return Err(StoreError::Invalid(format!(
                            "event {} is a {} event, which PostgreSQL keeps elsewhere",
                            row.id,
                            other.kind()
                        ))
                        .into())
                    }
                }
                self.next = self.store.durable_journal()?.records + 1;
            }
        }
        Ok(())
    }
}

/// Writes the register of `pg` into a new embedded store in `dir` (missing or empty), then
/// verifies the new journal and compares both stores.
pub fn export(pg: &PgStore, dir: &Path) -> Result<Exported, TransferError> {
    if let Ok(mut inside) = std::fs::read_dir(dir) {
        if inside.next().is_some() {
            return Err(TransferError::DirectoryNotEmpty(dir.to_path_buf()));
        }
    }
    let reg = pg.register();
    let events = pg.run_long(super::TRANSFER_LIMIT, reg.all_events())?;
    let intents = pg.run_long(super::TRANSFER_LIMIT, reg.all_intents())?;
    let imported = events
        .iter()
        .find(|e| e.kind == IMPORTED)
        .and_then(|e| serde_json::from_str::<serde_json::Value>(&e.body).ok())
        .and_then(|body| body["records"].as_u64())
        .unwrap_or(0);
    let mut open_claims: BTreeMap<(OrgId, i32), u64> = BTreeMap::new();
    let mut pending_abandons = HashMap::new();
    for row in &intents {
        match (&row.state, row.quota_year) {
            (IntentState::Open, Some(year)) => {
                *open_claims
                    .entry((row.intent.org.clone(), year))
                    .or_default() += 1;
            }
            (IntentState::Abandoned(at, reason), _) => {
                pending_abandons.insert(row.id, (*at, reason.clone()));
            }
            _ => {}
        }
    }
    let mut items: Vec<Item> = events
        .into_iter()
        .map(Item::Event)
        .chain(intents.into_iter().map(|row| Item::Intent(Box::new(row))))
        .collect();
    // The imported facts by id, then the later ones by time (an event before an intent of
    // the same instant: a key is issued before it is used).
    items.sort_by_key(|item| {
        let later = item.id() > imported;
        let rank = matches!(item, Item::Intent(_));
        if later {
            (true, 0, item.at(), rank)
        } else {
            (false, item.id(), DateTime::<Utc>::MIN_UTC, rank)
        }
    });
    let store = EmbeddedStore::open(dir)?;
    let mut replay = Replay {
        pg,
        store: &store,
        next: 1,
        ids: IdMap {
            same_times: false,
            ..IdMap::kept()
        },
        replayed: HashMap::new(),
        abandons: BTreeMap::new(),
        live: HashMap::new(),
        pending_abandons,
        entries: [Environment::Production, Environment::Sandbox].map(|env| Entries {
            env,
            after: 0,
            page: VecDeque::new(),
            done: false,
        }),
        written: 0,
    };
    for item in items {
        let is_imported = item.id() <= imported;
        replay.before(&item, is_imported)?;
        replay.write(item)?;
    }
    while let Some((_, settlement)) = replay.ready()? {
        replay.settle(settlement)?;
    }
    for slot in 0..2 {
        if let Some(entry) = replay.entries[slot].peek(pg)? {
            return Err(TransferError::Differs {
                differences: vec![msg!(
                    "store-move-entry-without-intent",
                    environment = entry.request.environment.as_str(),
                    sequence = entry.sequence,
                    intent = entry.intent
                )],
            });
        }
    }
    let verified = store.verify()?;
    let checked = compare(&store, pg, &open_claims, &replay.ids)?;
    Ok(Exported {
        records: verified.records,
        entries: replay.written,
        renumbered: replay.ids.intents.len() as u64,
        checked,
    })
}
