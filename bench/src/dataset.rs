//! Register data for the scale figures: entries written through the store's public API (to
//! measure its honest append rate) and a large journal generated in the store's exact record
//! format (`[len u32 LE][crc32 u32 LE][payload]`, payload = `serde_json` of the store's own
//! `Record` type, `prev` = SHA-256 of the previous payload), whose index the store builds
//! itself at its first open.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Datelike, FixedOffset, TimeZone, Utc};
use emcf_gateway::keys;
use emcf_gateway::model::{
    DeviceTotals, Environment, Intent, KeyRecord, Organization, Plan, RegisterEntry,
    SecurityElements,
};
use emcf_gateway::store::{Event, Record, Store};
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};

use crate::rig::SIM_NIF;

/// The organization of the generated register.
pub const ORG: &str = "bench";

pub fn organization() -> Organization {
    Organization {
        id: ORG.to_string(),
        name: "Bench shop".to_string(),
        nif: SIM_NIF.to_string(),
        isf: "ISF-1".to_string(),
        plan: Plan::Grow,
        quota_override: Some(100_000_000),
        device: "shop".to_string(),
        admin_emails: Vec::new(),
        max_invoice_total: None,
    }
}

pub fn key(now: DateTime<Utc>) -> KeyRecord {
    keys::issue(ORG, Environment::Production, "bench key", now).record
}

fn base_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2022, 1, 3, 7, 0, 0)
        .single()
        .expect("a valid date")
}

/// The intent of entry `i` (0-based): a 3-item sale of group B to a named client, received
/// at `at`, keeping its invoice as 1.5.0 does (the canonical form, about 450 bytes).
pub fn intent(i: u64, key_id: &str, at: DateTime<Utc>) -> Intent {
    let total = Decimal::new(100_000 + (i % 50_000) as i64 * 10, 2);
    let vat = (total * Decimal::new(16, 0) / Decimal::new(116, 0)).round_dp(2);
    let rn = format!("FV-{:09}", i + 1);
    let invoice = format!(
        r#"{{"canon":"1","client":{{"name":"Client {c}","nif":"A{c:07}Z","type":"PM"}},"curCode":"CDF","items":[{{"code":"ART-1","name":"Sac de ciment 50 kg","price":"{p}","quantity":"1","taxGroup":"B","type":"BIE"}},{{"name":"Fer a beton 12 mm","price":"0","quantity":"2","taxGroup":"B","type":"BIE"}},{{"name":"Livraison","price":"0","quantity":"1","taxGroup":"B","type":"SER"}}],"mode":"ttc","operator":{{"id":"1","name":"Caisse 1"}},"payments":[{{"amount":"{p}","curCode":"CDF","name":"ESPECES"}}],"rn":"{rn}","type":"FV"}}"#,
        c = i % 10_000,
        p = total.normalize(),
    );
    Intent {
        org: ORG.to_string(),
        environment: Environment::Production,
        request_digest: hex::encode(Sha256::digest(invoice.as_bytes())),
        rn,
        invoice_type: "FV".to_string(),
        key_id: key_id.to_string(),
        device: "shop".to_string(),
        received_at: at,
        totals: DeviceTotals {
            total,
            vat,
            group_ttc: vec![('B', total)],
            group_vat: vec![('B', vat)],
            specific_tax: Decimal::ZERO,
            usd_equivalent: None,
            mcur: None,
        },
        nif: SIM_NIF.to_string(),
        isf: "ISF-1".to_string(),
        idempotency_key: None,
        device_tc: None,
        channel_ref: None,
        invoice: Some(invoice),
    }
}

/// The security elements the device would return for entry `i`.
pub fn security(i: u64, at: DateTime<Utc>) -> SecurityElements {
    let local = at.with_timezone(&kinshasa()).naive_local();
    let code: String = hex::encode_upper(Sha256::digest(i.to_be_bytes()))
        .chars()
        .take(24)
        .collect();
    SecurityElements {
        qr_code: format!(
            "RDCDEF01;SIM0000001;{code};{SIM_NIF};{}",
            local.format("%Y%m%d%H%M%S")
        ),
        code_def: code,
        counters: format!("{}/{} FV", i + 1, i + 1),
        nim: "SIM0000001".to_string(),
        date_time: local,
        date_time_as_sent: None,
    }
}

/// UTC+1, the default quota time zone and the simulator's clock.
fn kinshasa() -> FixedOffset {
    FixedOffset::east_opt(3600).expect("+01:00 is a valid offset")
}

fn quota_year(at: DateTime<Utc>) -> i32 {
    at.with_timezone(&kinshasa()).year()
}

/// Appends `count` entries through the public store API (`record_intent` then
/// `record_certified`, each fsynced) in a new store at `dir`; returns the time each entry took.
pub fn through_store_api(dir: &Path, count: u64) -> anyhow::Result<Vec<Duration>> {
    let store = Store::open(dir)?;
    store.save_organization(organization())?;
    let key = key(Utc::now());
    let key_id = key.id.clone();
    store.issue_key(key)?;
    let mut times = Vec::with_capacity(count as usize);
    for i in 0..count {
        let now = Utc::now();
        let started = Instant::now();
        let id = store.record_intent(intent(i, &key_id, now), None)?;
        store.record_certified(id, quota_year(now), now, security(i, now), "finalize")?;
        times.push(started.elapsed());
    }
    Ok(times)
}

/// What [`generate_journal`] wrote.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Generated {
    pub entries: u64,
    pub records: u64,
    pub journal_bytes: u64,
    /// What the journal would take as 1.5.0 wrote it (per entry: intent + certified, each
    /// framed) minus the second copy of the invoice (`"invoice":` and its JSON string in the
    /// certified record): what an entry may cost in the journal (issue 27). 0 in data sets
    /// generated before it was counted.
    #[serde(default)]
    pub budget_bytes: u64,
    /// The bytes generated (`journal_bytes` follows the journal as later runs append to it;
    /// this does not): what `budget_bytes` is compared with.
    #[serde(default)]
    pub generated_bytes: u64,
    /// Generated as 1.5.0 to 1.7.0 wrote it (`--kept-twice`).
    #[serde(default)]
    pub kept_twice: bool,
    pub head_sha256: String,
    pub seconds: f64,
}

/// Appends records in the journal's format.
struct Writer {
    out: BufWriter<std::fs::File>,
    head: [u8; 32],
    seq: u64,
    bytes: u64,
}

impl Writer {
    /// The payload of `event` as the next record.
    fn payload(&self, event: Event, at: DateTime<Utc>) -> anyhow::Result<Vec<u8>> {
        Ok(serde_json::to_vec(&Record {
            seq: self.seq + 1,
            prev: hex::encode(self.head),
            at,
            event,
        })?)
    }

    fn append(&mut self, event: Event, at: DateTime<Utc>) -> anyhow::Result<u64> {
        let payload = self.payload(event, at)?;
        self.append_payload(&payload)
    }

    fn append_payload(&mut self, payload: &[u8]) -> anyhow::Result<u64> {
        self.seq += 1;
        self.out.write_all(&(payload.len() as u32).to_le_bytes())?;
        self.out
            .write_all(&crc32fast::hash(payload).to_le_bytes())?;
        self.out.write_all(payload)?;
        self.bytes += 8 + payload.len() as u64;
        self.head = Sha256::digest(payload).into();
        Ok(self.seq)
    }
}

/// Writes `state_dir/journal/journal.log` with an organization, its key and `entries`
/// certified invoices (an intent record and a certified record each, the invoice kept once
/// in the intent as the store writes them, or twice as 1.5.0 to 1.7.0 did with
/// `kept_twice`), 150 s apart from 2022-01-03 on. No index is written: the store builds it at
/// its first open.
pub fn generate_journal(
    state_dir: &Path,
    entries: u64,
    kept_twice: bool,
) -> anyhow::Result<Generated> {
    let started = Instant::now();
    let dir = state_dir.join("journal");
    std::fs::create_dir_all(&dir)?;
    let file = std::fs::File::create(dir.join("journal.log"))?;
    let mut writer = Writer {
        out: BufWriter::with_capacity(1 << 20, file),
        head: [0u8; 32],
        seq: 0,
        bytes: 0,
    };
    let base = base_time();
    writer.append(Event::OrganizationSaved(organization()), base)?;
    let key = key(base);
    let key_id = key.id.clone();
    writer.append(Event::KeyIssued(key), base)?;
    // The organization's and the key's records cost the same either way.
    let mut budget = writer.bytes;
    for i in 0..entries {
        let received = base + chrono::Duration::seconds(150 * i as i64 + 60);
        let certified = received + chrono::Duration::milliseconds(180);
        let request = intent(i, &key_id, received);
        let copy = request
            .invoice
            .as_ref()
            .map_or(0, |text| ",\"invoice\":".len() + json_len(text));
        let intent_start = writer.bytes;
        let intent_seq = writer.append(Event::Intent(request.clone()), received)?;
        let intent_bytes = writer.bytes - intent_start;
        let entry = RegisterEntry {
            sequence: i + 1,
            intent: intent_seq,
            request,
            certified_at: certified,
            security: security(i, certified),
            source: "finalize".to_string(),
            quota_year: quota_year(certified),
        };
        // 1.5.0's certified record (the invoice a second time), for the budget.
        let twice = writer.payload(Event::Certified(entry.clone()), certified)?;
        budget += intent_bytes + 8 + twice.len() as u64 - copy as u64;
        if kept_twice {
            writer.append_payload(&twice)?;
        } else {
            writer.append(Event::certified(&entry), certified)?;
        }
    }
    let file = writer.out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    Ok(Generated {
        entries,
        records: writer.seq,
        journal_bytes: writer.bytes,
        budget_bytes: budget,
        generated_bytes: writer.bytes,
        kept_twice,
        head_sha256: hex::encode(writer.head),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Bytes of `text` as a JSON string.
fn json_len(text: &str) -> usize {
    serde_json::to_string(text).map_or(0, |json| json.len())
}

/// Apparent and allocated bytes of every file under `path`.
pub fn disk_usage(path: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let mut apparent = 0;
    let mut allocated = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&p) {
                stack.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
            }
        } else {
            apparent += meta.len();
            allocated += meta.blocks() * 512;
        }
    }
    (apparent, allocated)
}
