//! `device probe`: everything a technician needs to know of a box on first contact, read
//! through one session (C1h, C2h, 2Bh I0..D2) and the link's status (status bytes, what
//! blocks certification, what differs from PROTOCOL.md). Read-only: nothing is opened,
//! certified or cancelled on the box. Its words are in the language asked (`--json` asks
//! English, so that scripts read the same texts as before 1.6.0).

use mcf_sfe::reply::{DeviceState, GroupRate, Last, LinkState};
use mcf_sfe::types::{TaxGroup, TaxpayerKey};
use mcf_sfe::{Command, Reply};

use super::{DeviceError, DeviceHandle, PortSession};
use crate::i18n::{format, Lang, Localized};
pub use crate::model::ProbeReport;
use crate::msg;

/// Probes the device behind `handle` on its leased port (it waits for its turn like an
/// invoice); its words in `lang`.
pub async fn probe(handle: &DeviceHandle, lang: Lang) -> Result<ProbeReport, DeviceError> {
    let mut lease = handle.lease().await?;
    let mut session = lease.session();
    let mut report = ProbeReport {
        device: handle.name().to_owned(),
        ..ProbeReport::default()
    };
    let answered = |command: &str, other: &Reply| {
        msg!(
            "probe-answered-other",
            command = command,
            detail = format!("{other:?}")
        )
        .render(lang)
    };
    let failed = |command: &str, error: &DeviceError| {
        msg!("probe-failed", command = command, reason = error.message()).render(lang)
    };
    match session.execute(Command::DeviceState).await {
        Ok(Reply::DeviceState(state)) => read_state(&mut report, &state, lang),
        Ok(other) => report.errors.push(answered("C1h", &other)),
        Err(error) => report.errors.push(failed("C1h", &error)),
    }
    match session.execute(Command::LinkState).await {
        Ok(Reply::LinkState(link)) => report.dgi = Some(dgi_in_words(&link, lang)),
        Ok(other) => report.errors.push(answered("C2h", &other)),
        Err(error) => report.errors.push(failed("C2h", &error)),
    }
    read_taxpayer(&mut session, &mut report, lang).await;
    drop(lease);
    let status = handle.status();
    report.status_bytes = status.status_bytes.map(|s| {
        s.0.iter()
            .map(|b| format!("{b:02X}"))
            .collect::<Vec<_>>()
            .join(" ")
    });
    report.blocked = status.blocked.map(|why| why.render(lang));
    report.anomalies = status.oddities;
    Ok(report)
}

/// What C1h says, in the report.
fn read_state(report: &mut ProbeReport, state: &DeviceState, lang: Lang) {
    report.nim = Some(state.mid.clone());
    report.nif = Some(state.nif.clone());
    report.clock = state.clock.map(|c| format::device_date_time(&c, lang));
    report.counters = Some((state.tc, state.fvc, state.frc));
    let last = match &state.last {
        Last::Nothing => msg!("probe-last-none"),
        Last::Invoice(last) => {
            let at = format::device_date_time(&last.at, lang);
            let kind = last.invoice_type.to_string();
            match last.amount {
                Some(total) => msg!(
                    "probe-last-invoice-total",
                    kind = kind,
                    rn = last.rn.as_str(),
                    at = at,
                    code = last.code_def.as_str(),
                    total = format::amount(total, crate::model::FISCAL_CURRENCY, lang)
                ),
                None => msg!(
                    "probe-last-invoice",
                    kind = kind,
                    rn = last.rn.as_str(),
                    at = at,
                    code = last.code_def.as_str()
                ),
            }
        }
        Last::Unreadable(why) => msg!("probe-last-unreadable", detail = why.as_str()),
    };
    report.last_invoice = Some(last.render(lang));
    report.rates = state.rates.as_ref().map(|rates| {
        TaxGroup::all()
            .zip(rates.iter())
            .map(|(group, rate)| {
                let text = match rate {
                    GroupRate::NotCharged => "-".to_owned(),
                    GroupRate::Percent(rate) => format!("{rate} %"),
                    GroupRate::Unreadable(raw) => {
                        msg!("probe-rate-unreadable", raw = format!("{raw:?}")).render(lang)
                    }
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
fn dgi_in_words(link: &LinkState, lang: Lang) -> String {
    let count = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
    let contact = match link.last_contact {
        Some(at) => msg!(
            "probe-dgi-contact",
            at = format::device_date_time(&at, lang)
        ),
        None => msg!("probe-dgi-never"),
    };
    let words = msg!(
        "probe-dgi",
        state = format!("{:?}", link.state),
        contact = contact,
        sent = count(link.sent),
        stored = count(link.stored)
    );
    let words = if link.error.is_empty() {
        words
    } else {
        msg!(
            "probe-dgi-error",
            text = words,
            error = format!("{:?}", link.error)
        )
    };
    words.render(lang)
}

/// 2Bh for every taxpayer key; a link lost stops the reading.
async fn read_taxpayer(session: &mut PortSession<'_>, report: &mut ProbeReport, lang: Lang) {
    for &key in TaxpayerKey::ALL {
        let value = match session.execute(Command::TaxpayerField(key)).await {
            Ok(Reply::TaxpayerField(value)) => value.value,
            Ok(Reply::Refused(text)) => msg!("probe-field-refused", text = text).render(lang),
            Ok(other) => msg!("probe-field-answered", detail = format!("{other:?}")).render(lang),
            Err(error @ (DeviceError::Disconnected | DeviceError::ShuttingDown)) => {
                let command = format!("2Bh {key}");
                report.errors.push(
                    msg!("probe-failed", command = command, reason = error.message()).render(lang),
                );
                break;
            }
            Err(error) => msg!("probe-field-failed", reason = error.message()).render(lang),
        };
        report.taxpayer.push((key.to_string(), value));
    }
}
