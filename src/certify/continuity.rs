//! Counter continuity: what a box says (its C1h at the start of an invoice, a certification)
//! against the register's last production entry of the same NIM. A box whose total counter
//! went back, or a known NIM with another NIF, is a fiscal anomaly: journaled once, shown on
//! the dashboard and in `/metrics`, logged at `error`.
//!
//! What the register knew of the box before the invoice (`known`) is not read on its own: it
//! comes with the invoice's intent (`model::DeviceView`, read in the same statement on
//! PostgreSQL, with the same write on the embedded store), so both checks, of the C1h
//! read before the invoice and of the certification, are made once the intent is journaled
//! (`box_channel/run.rs`), against the counters as they were before this invoice.
//!
//! Certification goes on: the box is the fiscal authority (its signature is what the DGI
//! checks), and stopping every sale of a shop for something only the DGI can settle would
//! not make the register more right. An administrator acknowledges the anomaly
//! (`emcf-gateway device anomalies ack`), which journals who and why.

use std::sync::Arc;

use tracing::error;

use crate::certify::register_writer::blocking;
use crate::model::{BoxCounters, FiscalAnomaly, FiscalAnomalyKind};
use crate::store::Store;

/// Where a box said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeenIn {
    /// Its state (C1h): its TC may equal the register's last.
    State,
    /// A certification (38h `R:`): its TC must be above the register's last.
    Certification,
}

impl SeenIn {
    fn as_str(self) -> &'static str {
        match self {
            SeenIn::State => "C1h",
            SeenIn::Certification => "38h",
        }
    }
}

/// What a box said of itself.
pub struct Seen<'a> {
    pub device: &'a str,
    pub nim: &'a str,
    pub nif: &'a str,
    pub tc: u64,
    pub seen_in: SeenIn,
}

/// Checks `seen` against `known` (the register's last entry of that box before this invoice)
/// and journals what contradicts it. A store error is logged, never returned.
pub(crate) async fn check(store: &Arc<Store>, known: Option<&BoxCounters>, seen: Seen<'_>) {
    let Some(known) = known else {
        return;
    };
    let went_back = match seen.seen_in {
        SeenIn::Certification => seen.tc <= known.tc,
        SeenIn::State => seen.tc < known.tc,
    };
    let mut kinds = Vec::new();
    if known.nif != seen.nif {
        kinds.push(FiscalAnomalyKind::NifChanged);
    }
    if went_back {
        kinds.push(FiscalAnomalyKind::CounterWentBack);
    }
    for kind in kinds {
        let anomaly = FiscalAnomaly {
            device: seen.device.to_owned(),
            nim: seen.nim.to_owned(),
            kind,
            known: known.clone(),
            seen_nif: seen.nif.to_owned(),
            seen_tc: seen.tc,
            seen_in: seen.seen_in.as_str().to_owned(),
            missing: Vec::new(),
            last: None,
        };
        match blocking(store, move |store| store.record_fiscal_anomaly(anomaly)).await {
            Ok((record, true)) => error!(
                device = seen.device,
                nim = seen.nim,
                anomaly = record.id,
                known_nif = %record.anomaly.known.nif,
                known_tc = record.anomaly.known.tc,
                known_sequence = record.anomaly.known.sequence,
                seen_nif = seen.nif,
                seen_tc = seen.tc,
                seen_in = seen.seen_in.as_str(),
                "FISCAL ANOMALY: {}; journaled, certification goes on; an administrator must acknowledge it (emcf-gateway device anomalies)",
                crate::i18n::names::anomaly(kind)
            ),
            Ok((_, false)) => {}
            Err(error) => error!(%error, "a fiscal anomaly could not be journaled"),
        }
    }
}
