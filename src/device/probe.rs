//! `device probe`: everything a technician needs to know of a box on first contact, read
//! through one session (C1h, C2h, 2Bh I0..D2) and the link's status (status bytes, what
//! blocks certification, what differs from PROTOCOL.md). Read-only: nothing is opened,
//! certified or cancelled on the box.

use mcf_sfe::reply::{DeviceState, GroupRate, Last, LinkState};
use mcf_sfe::types::{TaxGroup, TaxpayerKey};
use mcf_sfe::{Command, Reply};

use super::{DeviceError, DeviceHandle, Session};
pub use crate::model::ProbeReport;

/// Probes the device behind `handle` (waits for its turn like an invoice).
pub async fn probe(handle: &DeviceHandle) -> Result<ProbeReport, DeviceError> {
    let mut session = handle.acquire().await?;
    let mut report = ProbeReport {
        device: handle.name().to_owned(),
        ..ProbeReport::default()
    };
    match session.execute(Command::DeviceState).await {
        Ok(Reply::DeviceState(state)) => read_state(&mut report, &state),
        Ok(other) => report.errors.push(format!("C1h answered {other:?}")),
        Err(error) => report.errors.push(format!("C1h: {error}")),
    }
    match session.execute(Command::LinkState).await {
        Ok(Reply::LinkState(link)) => report.dgi = Some(dgi_in_words(&link)),
        Ok(other) => report.errors.push(format!("C2h answered {other:?}")),
        Err(error) => report.errors.push(format!("C2h: {error}")),
    }
    read_taxpayer(&mut session, &mut report).await;
    drop(session);
    let status = handle.status();
    report.status_bytes = status.status_bytes.map(|s| {
        s.0.iter()
            .map(|b| format!("{b:02X}"))
            .collect::<Vec<_>>()
            .join(" ")
    });
    report.blocked = status.blocked;
    report.anomalies = status.anomalies;
    Ok(report)
}

/// What C1h says, in the report.
fn read_state(report: &mut ProbeReport, state: &DeviceState) {
    report.nim = Some(state.mid.clone());
    report.nif = Some(state.nif.clone());
    report.clock = state
        .clock
        .map(|c| c.format("%Y-%m-%d %H:%M:%S").to_string());
    report.counters = Some((state.tc, state.fvc, state.frc));
    report.last_invoice = Some(match &state.last {
        Last::Nothing => "none yet".to_owned(),
        Last::Invoice(last) => format!(
            "{} {} certified {} codeDEFDGI {}{}",
            last.invoice_type,
            last.rn,
            last.at.format("%Y-%m-%d %H:%M:%S"),
            last.code_def,
            last.amount
                .map(|a| format!(", total {a}"))
                .unwrap_or_default()
        ),
        Last::Unreadable(why) => format!("reported but unreadable: {why}"),
    });
    report.rates = state.rates.as_ref().map(|rates| {
        TaxGroup::all()
            .zip(rates.iter())
            .map(|(group, rate)| {
                let text = match rate {
                    GroupRate::NotCharged => "-".to_owned(),
                    GroupRate::Percent(rate) => format!("{rate} %"),
                    GroupRate::Unreadable(raw) => format!("unreadable {raw:?}"),
                };
                (group.letter(), text)
            })
            .collect()
    });
    report.currency = state
        .currency
        .as_ref()
        .map(|c| (c.code.clone(), c.rate.clone(), c.date.clone()));
}

/// The box's link with the DGI (C2h), in words.
fn dgi_in_words(link: &LinkState) -> String {
    let count = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
    format!(
        "state {:?}, last contact {}, {} sent (EC), {} in DC{}",
        link.state,
        link.last_contact.map_or_else(
            || "never".to_owned(),
            |at| at.format("%Y-%m-%d %H:%M:%S").to_string()
        ),
        count(link.sent),
        count(link.stored),
        if link.error.is_empty() {
            String::new()
        } else {
            format!(", last error {:?}", link.error)
        }
    )
}

/// 2Bh for every taxpayer key; a link lost stops the reading.
async fn read_taxpayer(session: &mut Session, report: &mut ProbeReport) {
    for &key in TaxpayerKey::ALL {
        let value = match session.execute(Command::TaxpayerField(key)).await {
            Ok(Reply::TaxpayerField(value)) => value.value,
            Ok(Reply::Refused(text)) => format!("(refused: {text})"),
            Ok(other) => format!("(answered {other:?})"),
            Err(error @ (DeviceError::Disconnected | DeviceError::ShuttingDown)) => {
                report.errors.push(format!("2Bh {key}: {error}"));
                break;
            }
            Err(error) => format!("({error})"),
        };
        report.taxpayer.push((key.to_string(), value));
    }
}
