//! A register behind its channel (docs/design.md, "A register behind its box"): the box's
//! (or the web API e-MCF's) total counter against the register's last known counter for its
//! NIM. A counter the register holds neither as an entry nor as an open intent of that
//! channel (an open intent may have been finalized: the in-doubt path settles it from C1h)
//! means certifications the register lost: a restored older copy, a disk that lost its last
//! records. Certifying on would hand out numbers whose earlier invoices the register cannot
//! show, and a retry of a lost rn would be certified a second time. So it is a fiscal anomaly
//! of its own kind, journaled once with the missing numbers, and the channel certifies
//! nothing more until an administrator restores a newer copy of the register or acknowledges
//! the missing numbers (`emcf-gateway device anomalies ack ID --numbers ...`).
//!
//! Checked when a box's actor first reads C1h (start-up: the device's open intents and the
//! NIM's counters read in one statement, [`Store::device_view`]), before each invoice (the
//! organization's channel refused before quota is reserved; then the C1h of the invoice,
//! against the register's view read with the invoice's intent, before 38h: a box ahead has
//! its invoice cancelled and the intent abandoned, so its counter does not move and no quota
//! is used), and for the web API at each confirmation (the only place its counters are
//! given), against the view read with its certification. On the success path the register is
//! never read for the check on its own: the view comes with the write ([`DeviceView`]); only a
//! web API certification that could not be journaled is checked against a read of its own
//! (`ahead_after_failed_write`, `certify/web_api_channel/run.rs`). A NIM
//! the register has never seen is a first use, not ahead. The refusals are kept in memory,
//! read from the register at start and every [`RELOAD`] (an acknowledgement through the CLI
//! clears them).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tracing::{error, info, warn};

use crate::certify::register_writer::blocking;
use crate::certify::status::Problem;
use crate::certify::{Certifier, CertifyError};
use crate::model::{
    missing_numbers, numbers_text, AnomalyRecord, BoxCounters, DeviceView, FiscalAnomaly,
    FiscalAnomalyKind, LostInvoice,
};
use crate::msg;
use crate::store::{Store, StoreError};

/// How often the refusals are read again from the register (an acknowledgement made through
/// the admin socket or by a CLI that opened the store).
pub(crate) const RELOAD: Duration = Duration::from_secs(1);

/// How often a box whose first C1h is awaited is looked at (its state in memory, no I/O).
const FIRST_READ: Duration = Duration::from_millis(25);

/// At most this many missing numbers are recorded (a register that far behind is a wrong
/// copy, not a lost tail; the first ones are enough to name it).
const MAX_MISSING: usize = 10_000;

/// Why a channel certifies nothing: its open `register_behind` anomaly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// The anomaly's id.
    pub anomaly: u64,
    /// `box` or `web_api`.
    pub channel: &'static str,
    /// The counter numbers the register does not hold.
    pub missing: Vec<u64>,
}

/// The channels stopped because their register is behind them, by name. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct RegistersBehind(Arc<Mutex<BTreeMap<String, Stop>>>);

impl RegistersBehind {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Stop>> {
        crate::sync::lock(&self.0)
    }

    /// The stops from the register's unacknowledged `register_behind` anomalies (blocking),
    /// merged with the ones [`check`] set since they were read: a stop whose anomaly is newer
    /// than every anomaly read stays (the read came before its journaling).
    pub(crate) fn load(&self, store: &Store) -> Result<(), StoreError> {
        let anomalies = store.fiscal_anomalies()?;
        let newest = anomalies.iter().map(|a| a.id).max().unwrap_or(0);
        let mut stops = stops_of(&anomalies);
        let mut current = self.lock();
        for (device, stop) in current.iter() {
            if stop.anomaly > newest {
                stops.insert(device.clone(), stop.clone());
            }
        }
        for (device, stop) in &stops {
            if current.get(device) != Some(stop) {
                warn!(%device, anomaly = stop.anomaly, "the register is behind this device: it certifies nothing until an administrator settles it");
            }
        }
        for device in current.keys() {
            if !stops.contains_key(device) {
                info!(%device, "register behind settled: the device certifies again");
            }
        }
        *current = stops;
        Ok(())
    }

    /// 503 (171, 172) while `device` is stopped.
    pub(crate) fn refuse(&self, device: &str) -> Result<(), CertifyError> {
        match self.lock().get(device) {
            Some(stop) => Err(CertifyError::RegisterBehind {
                channel: stop.channel,
                missing: stop.missing.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Why `device` could not certify now, if its register is behind it.
    pub(crate) fn problem(&self, device: &str) -> Option<Problem> {
        let stop = self.lock().get(device).cloned()?;
        Some(Problem {
            code: "register_behind",
            channel: stop.channel,
            text: msg!(
                "problem-register-behind",
                channel = stop.channel,
                missing = numbers_text(&stop.missing),
                anomaly = stop.anomaly
            ),
        })
    }

    /// Every stopped channel and its missing numbers, by name.
    pub fn all(&self) -> Vec<(String, Vec<u64>)> {
        self.lock()
            .iter()
            .map(|(device, stop)| (device.clone(), stop.missing.clone()))
            .collect()
    }

    fn stop(&self, device: &str, stop: Stop) {
        self.lock().insert(device.to_owned(), stop);
    }
}

/// The stops the unacknowledged `register_behind` anomalies of `anomalies` make.
fn stops_of(anomalies: &[AnomalyRecord]) -> BTreeMap<String, Stop> {
    anomalies
        .iter()
        .filter(|a| a.acknowledged.is_none() && a.anomaly.kind == FiscalAnomalyKind::RegisterBehind)
        .map(|a| {
            let stop = Stop {
                anomaly: a.id,
                channel: channel_of(&a.anomaly.seen_in),
                missing: a.anomaly.missing.clone(),
            };
            (a.anomaly.device.clone(), stop)
        })
        .collect()
}

/// Where a counter was seen for a web API e-MCF (its confirmation).
pub(crate) const SEEN_IN_CONFIRM: &str = "confirm";

fn channel_of(seen_in: &str) -> &'static str {
    if seen_in == SEEN_IN_CONFIRM {
        "web_api"
    } else {
        "box"
    }
}

/// What a channel said of its counter.
pub(crate) struct Said<'a> {
    /// The configured device name.
    pub device: &'a str,
    /// Its NIM.
    pub nim: &'a str,
    /// The NIF it named.
    pub nif: &'a str,
    /// Its total counter (TC).
    pub tc: u64,
    /// `C1h`, `38h` or [`SEEN_IN_CONFIRM`].
    pub seen_in: &'static str,
    /// Counter numbers it is known to have given that the register may not hold yet
    /// (a web API certification journaled with the view).
    pub explained: Vec<u64>,
    /// What its C1h says of its last invoice (number `tc`), when read.
    pub last: Option<LostInvoice>,
}

/// A box's state as its actor last read it (C1h): the start-up check.
pub(crate) struct BoxState {
    /// Its NIM.
    pub nim: String,
    /// Its NIF.
    pub nif: String,
    /// Its total counter (TC).
    pub tc: u64,
    /// What C1h says of its last invoice (number `tc`), when read.
    pub last: Option<LostInvoice>,
}

/// The numbers `said` shows missing from the register as `view` holds it (its counters for
/// the NIM and the device's other open intents), with those counters; `None` when nothing is
/// missing, or for a NIM the register does not know (a first use).
fn missing(said: &Said<'_>, view: &DeviceView) -> Option<(BoxCounters, Vec<u64>)> {
    let known = view.known.as_ref()?;
    let missing = missing_numbers(
        known.highest(),
        said.tc,
        &view.open,
        &said.explained,
        MAX_MISSING,
    );
    (!missing.is_empty()).then(|| (known.clone(), missing))
}

/// Whether `said` shows a channel ahead of its register, as `view` holds it: read with the
/// write it goes with (the invoice's intent on a box, its certification on the web API), or
/// alone at start ([`Store::device_view`]). Journals the anomaly (once), stops the device, and
/// answers 171 or 172.
pub(crate) async fn check(
    store: &Arc<Store>,
    behind: &RegistersBehind,
    said: Said<'_>,
    view: &DeviceView,
) -> Result<(), CertifyError> {
    let Some((known, missing)) = missing(&said, view) else {
        return Ok(());
    };
    let channel = channel_of(said.seen_in);
    let anomaly = FiscalAnomaly {
        device: said.device.to_owned(),
        nim: said.nim.to_owned(),
        kind: FiscalAnomalyKind::RegisterBehind,
        known,
        seen_nif: said.nif.to_owned(),
        seen_tc: said.tc,
        seen_in: said.seen_in.to_owned(),
        last: said.last.filter(|last| missing.contains(&last.number)),
        missing,
    };
    let (record, new) = blocking(store, move |store| store.record_fiscal_anomaly(anomaly)).await?;
    if new {
        error!(
            device = said.device,
            nim = said.nim,
            anomaly = record.id,
            known_tc = record.anomaly.known.tc,
            known_sequence = record.anomaly.known.sequence,
            seen_tc = said.tc,
            seen_in = said.seen_in,
            missing = %numbers_text(&record.anomaly.missing),
            "FISCAL ANOMALY: the register is behind this device (certifications missing from it); the device certifies nothing until an administrator restores a newer copy of the register or acknowledges the missing numbers (emcf-gateway device anomalies ack)"
        );
    }
    let stop = Stop {
        anomaly: record.id,
        channel,
        missing: record.anomaly.missing.clone(),
    };
    behind.stop(said.device, stop);
    Err(CertifyError::RegisterBehind {
        channel,
        missing: record.anomaly.missing,
    })
}

impl Certifier {
    /// The start-up check and the reload (see the module's doc): each configured box is
    /// checked once its actor has read its first C1h; the stops are read again from the
    /// register every [`RELOAD`], off the runtime's workers, while the service lives.
    pub(super) fn spawn_register_behind_watch(self: &Arc<Self>) {
        let this = Arc::downgrade(self);
        let mut unchecked: Vec<String> = self
            .channels
            .all()
            .into_iter()
            .filter(|(_, configured)| *configured)
            .map(|(channel, _)| channel.name().to_owned())
            .collect();
        tokio::spawn(async move {
            let mut reloaded_at = tokio::time::Instant::now();
            loop {
                let Some(this) = this.upgrade() else { return };
                let mut still = Vec::new();
                for name in unchecked {
                    let Some(channel) = this.channels.configured(&name) else {
                        continue;
                    };
                    match channel.last_counters() {
                        Some(state) => this.check_at_start(&name, state).await,
                        // A box not read yet; the web API never is (its counters come with
                        // each confirmation).
                        None if channel.kind() == "box" => still.push(name),
                        None => {}
                    }
                }
                unchecked = still;
                if reloaded_at.elapsed() >= RELOAD {
                    let behind = this.journal.registers_behind().clone();
                    let reloaded = blocking(&this.store, move |store| behind.load(store)).await;
                    if let Err(error) = reloaded {
                        warn!(%error, "register behind: the anomalies cannot be read again");
                    }
                    reloaded_at = tokio::time::Instant::now();
                }
                drop(this);
                // A box not read yet is looked at often, so that the status never says it
                // can certify before it was checked; then only the reload.
                let pause = if unchecked.is_empty() {
                    RELOAD
                } else {
                    FIRST_READ
                };
                tokio::time::sleep(pause).await;
            }
        });
    }

    async fn check_at_start(&self, device: &str, state: BoxState) {
        let (nim, nif, tc) = (state.nim.as_str(), state.nif.as_str(), state.tc);
        let said = Said {
            device,
            nim,
            nif,
            tc,
            seen_in: "C1h",
            explained: Vec::new(),
            last: state.last.clone(),
        };
        let (of, machine) = (device.to_owned(), nim.to_owned());
        let read = blocking(&self.store, move |store| {
            store.device_view(&of, &machine, None)
        })
        .await;
        let checked = match read {
            Ok(view) => self.journal.check_ahead(said, &view).await,
            Err(error) => Err(error),
        };
        match checked {
            Ok(()) => info!(
                device,
                nim, tc, "the device's counter does not run ahead of its register"
            ),
            Err(CertifyError::RegisterBehind { .. }) => {}
            Err(error) => {
                warn!(device, %error, "register behind: not checked at start; checked before each invoice")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(tc: u64, explained: Vec<u64>) -> Said<'static> {
        Said {
            device: "shop",
            nim: "NIM1",
            nif: "NIF",
            tc,
            seen_in: "C1h",
            explained,
            last: None,
        }
    }

    fn view(known_tc: Option<u64>, open: Vec<Option<u64>>) -> DeviceView {
        DeviceView {
            open,
            known: known_tc.map(|tc| BoxCounters {
                nim: "NIM1".into(),
                nif: "NIF".into(),
                tc,
                sequence: 1,
                highest_tc: 0,
            }),
        }
    }

    #[test]
    fn what_is_missing_is_read_from_the_view_alone() {
        // A NIM the register does not know: a first use.
        assert_eq!(missing(&said(9, vec![]), &view(None, vec![])), None);
        // Level with the register, or behind it (continuity's business): nothing missing.
        assert_eq!(missing(&said(5, vec![]), &view(Some(5), vec![])), None);
        assert_eq!(missing(&said(4, vec![]), &view(Some(5), vec![])), None);
        // Two numbers ahead: an open intent recorded at C1h counter 5 explains no. 6.
        let found = missing(&said(7, vec![]), &view(Some(5), vec![Some(5)]));
        assert_eq!(
            found.map(|(known, gone)| (known.tc, gone)),
            Some((5, vec![7]))
        );
        // A web API confirmation explains its own number.
        assert_eq!(missing(&said(6, vec![6]), &view(Some(5), vec![])), None);
        let found = missing(&said(7, vec![7]), &view(Some(5), vec![]));
        assert_eq!(found.map(|(_, gone)| gone), Some(vec![6]));
    }

    #[test]
    fn a_reload_keeps_a_stop_newer_than_what_it_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("store");
        let behind = RegistersBehind::default();
        // check() journaled anomaly 7 and stopped the box after the reload read the register
        // (which held no anomaly then).
        let stop = Stop {
            anomaly: 7,
            channel: "box",
            missing: vec![3],
        };
        behind.stop("shop", stop);
        behind.load(&store).expect("reload");
        assert!(behind.refuse("shop").is_err(), "still stopped");
        // A stop whose anomaly the reload read and found settled (or absent) goes.
        behind.stop(
            "other",
            Stop {
                anomaly: 0,
                channel: "box",
                missing: vec![1],
            },
        );
        behind.load(&store).expect("reload");
        assert!(behind.refuse("other").is_ok());
        assert!(behind.refuse("shop").is_err());
    }
}
