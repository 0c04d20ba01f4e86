//! `device probe` and `device anomalies`: for technicians at a box's first contact, and for
//! administrators who acknowledge fiscal anomalies.

use std::path::Path;
use std::time::Duration;

use anyhow::bail;

use super::admin_commands::{print_json, print_table, run_request};
use super::errors::Say;
use super::{AnomaliesCommand, DeviceCommand};
use crate::admin::{socket, AdminRequest};
use crate::config::{Config, DeviceEntry};
use crate::device::capture::Capture;
use crate::device::probe::{probe, ProbeReport};
use crate::i18n::{default_lang, format, Lang};
use crate::model::{numbers_text, parse_numbers, AnomalyAck, AnomalyRecord, FiscalAnomalyKind};
use crate::msg;

/// The most counter numbers one acknowledgement names.
const MAX_ACK_NUMBERS: usize = 100_000;

pub(super) fn run(config: &Config, command: DeviceCommand) -> anyhow::Result<()> {
    let lang = default_lang();
    match command {
        DeviceCommand::Probe {
            device,
            capture,
            json,
        } => {
            // The JSON keeps the English words scripts read before 1.6.0.
            let words = if json { Lang::En } else { lang };
            let report = probe_device(config, device, capture.as_deref(), words)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", probe_text(&report, lang));
            }
            if !report.errors.is_empty() {
                bail!(msg!("cli-probe-incomplete"));
            }
            Ok(())
        }
        DeviceCommand::Add {
            name,
            kind,
            url,
            token_file,
        } => super::stored_devices::add(config, &name, &kind, &url, &token_file),
        DeviceCommand::Update {
            name,
            url,
            token_file,
        } => super::stored_devices::update(config, &name, url.as_deref(), token_file.as_deref()),
        DeviceCommand::Remove { name } => super::stored_devices::remove(config, &name),
        DeviceCommand::List { json } => super::stored_devices::list(config, json),
        DeviceCommand::Anomalies(AnomaliesCommand::List { json }) => {
            let value = run_request(config, AdminRequest::FiscalAnomalies)?;
            if json {
                return print_json(&value);
            }
            let anomalies: Vec<AnomalyRecord> = serde_json::from_value(value)?;
            print_anomalies(&anomalies, config, lang);
            Ok(())
        }
        DeviceCommand::Anomalies(AnomaliesCommand::Ack {
            id,
            by,
            note,
            numbers,
            rn: rns,
        }) => {
            let numbers = match numbers.as_deref() {
                None => Vec::new(),
                Some(text) => parse_numbers(text, MAX_ACK_NUMBERS)
                    .ok_or_else(|| msg!("cli-anomaly-bad-numbers", text = text))?,
            };
            let rns = rns
                .iter()
                .map(|text| parse_rn(text).ok_or_else(|| msg!("cli-anomaly-bad-rn", text = text)))
                .collect::<Result<Vec<_>, _>>()?;
            let request = AdminRequest::FiscalAnomalyAck {
                id,
                by,
                note,
                numbers,
                rns,
            };
            let value = run_request(config, request)?;
            let record: AnomalyRecord = serde_json::from_value(value)?;
            match &record.acknowledged {
                Some(ack) => println!(
                    "{}",
                    msg!(
                        "cli-anomaly-acknowledged",
                        id = record.id,
                        by = ack.by.as_str(),
                        at = format::date_time(ack.at, config.offset(), lang),
                        note = ack.note.as_str()
                    )
                    .render(lang)
                ),
                None => bail!(msg!("cli-anomaly-not-acknowledged", id = id)),
            }
            if let Some(ack) = record
                .acknowledged
                .as_ref()
                .filter(|a| !a.numbers.is_empty())
            {
                let numbers = numbers_text(&ack.numbers);
                let tc = record.anomaly.seen_tc;
                let line = msg!(
                    "cli-anomaly-acknowledged-numbers",
                    numbers = numbers,
                    tc = tc
                );
                println!("{}", line.render(lang));
                print_lost_rns(ack, lang);
            }
            Ok(())
        }
    }
}

/// `NUMBER=RN` of `--rn`.
fn parse_rn(text: &str) -> Option<(u64, String)> {
    let (number, rn) = text.split_once('=')?;
    let rn = rn.trim();
    (!rn.is_empty()).then(|| Some((number.trim().parse().ok()?, rn.to_owned())))?
}

/// The rns an acknowledgement of a register behind its box refuses from now on, and a
/// warning for the numbers whose rn is not known (a retry of those would be certified again).
fn print_lost_rns(ack: &AnomalyAck, lang: Lang) {
    if !ack.rns.is_empty() {
        let rns = ack
            .rns
            .iter()
            .map(|lost| format!("{} = {}", lost.number, lost.rn))
            .collect::<Vec<_>>()
            .join(", ");
        println!("{}", msg!("cli-anomaly-lost-rns", rns = rns).render(lang));
    }
    let unknown: Vec<u64> = ack
        .numbers
        .iter()
        .copied()
        .filter(|n| !ack.rns.iter().any(|lost| lost.number == *n))
        .collect();
    if !unknown.is_empty() {
        let numbers = numbers_text(&unknown);
        eprintln!(
            "{}",
            msg!("cli-anomaly-rns-unknown", numbers = numbers).render(lang)
        );
    }
}

/// Through the running service if there is one, else on the port itself; the report's words
/// in `lang`.
fn probe_device(
    config: &Config,
    device: Option<String>,
    capture: Option<&Path>,
    lang: Lang,
) -> anyhow::Result<ProbeReport> {
    let known = names(config);
    if let Some(name) = &device {
        let configured = if config.has_devices() {
            config.device(name).is_some()
        } else {
            name == super::demo::EMBEDDED_DEVICE
        };
        if !configured {
            bail!(msg!(
                "cli-probe-unknown-device",
                name = name.as_str(),
                known = known
            ));
        }
    }
    let request = AdminRequest::DeviceProbe {
        device: device.clone(),
    };
    let socket = socket::path_in(config.resolved_state_dir());
    if let Some(answer) = socket::call(&socket, &request, lang)? {
        if capture.is_some() {
            eprintln!(
                "{}",
                msg!("cli-probe-capture-ignored").render(default_lang())
            );
        }
        return Ok(serde_json::from_value(answer)?);
    }
    if config.devices.is_empty() {
        bail!(msg!("cli-probe-no-devices"));
    }
    let entry = match &device {
        Some(name) => config.device(name).ok_or_else(|| {
            msg!(
                "cli-probe-unknown-device",
                name = name.as_str(),
                known = known
            )
        })?,
        None if config.devices.len() == 1 => &config.devices[0],
        None => bail!(msg!("cli-probe-which-device", known = known)),
    };
    let capture = capture
        .map(|path| {
            Capture::create(path)
                .say(|| msg!("cli-capture-create", path = path.display().to_string()))
        })
        .transpose()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .say(|| msg!("cli-runtime-failed"))?;
    runtime.block_on(probe_on_port(entry, capture, lang))
}

/// Probes the box of `entry` on its port (the service stopped): its link opened as the
/// service would, read-only commands only, then closed. Fails when the box does not answer
/// within two command budgets.
pub(super) async fn probe_on_port(
    entry: &DeviceEntry,
    capture: Option<Capture>,
    lang: Lang,
) -> anyhow::Result<ProbeReport> {
    let mut device_config = entry.device_config();
    device_config.health_interval = None;
    device_config.capture = capture;
    let wait = entry.timing().command_budget * 2 + Duration::from_secs(1);
    let handle = crate::device::spawn(device_config);
    let deadline = tokio::time::Instant::now() + wait;
    while !handle.status().connected {
        if tokio::time::Instant::now() >= deadline {
            let why = handle.status().last_error.unwrap_or_default();
            handle.shutdown().await;
            bail!(msg!(
                "cli-probe-silent",
                path = entry.path.display().to_string(),
                detail = why
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let report = probe(&handle, lang).await;
    handle.shutdown().await;
    Ok(report?)
}

/// The configured devices' names (the bundled simulator's without any).
fn names(config: &Config) -> String {
    if !config.has_devices() {
        return super::demo::EMBEDDED_DEVICE.to_owned();
    }
    config
        .devices
        .iter()
        .map(|d| d.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn print_anomalies(anomalies: &[AnomalyRecord], config: &Config, lang: Lang) {
    if anomalies.is_empty() {
        println!("{}", msg!("cli-anomalies-none").render(lang));
        return;
    }
    let rows = anomalies
        .iter()
        .map(|record| {
            let a = &record.anomaly;
            [
                record.id.to_string(),
                format::date_time(record.detected_at, config.offset(), lang),
                a.device.clone(),
                a.nim.clone(),
                crate::i18n::names::anomaly(a.kind).render(lang),
                msg!(
                    "cli-anomaly-register-knew",
                    nif = a.known.nif.as_str(),
                    tc = a.known.tc,
                    sequence = a.known.sequence
                )
                .render(lang),
                if a.kind == FiscalAnomalyKind::RegisterBehind {
                    msg!(
                        "cli-anomaly-box-said-missing",
                        nif = a.seen_nif.as_str(),
                        tc = a.seen_tc,
                        place = a.seen_in.as_str(),
                        missing = numbers_text(&a.missing)
                    )
                } else {
                    msg!(
                        "cli-anomaly-box-said",
                        nif = a.seen_nif.as_str(),
                        tc = a.seen_tc,
                        place = a.seen_in.as_str()
                    )
                }
                .render(lang),
                record.acknowledged.as_ref().map_or_else(
                    || msg!("no").render(lang),
                    |ack| {
                        msg!(
                            "cli-anomaly-ack-by",
                            by = ack.by.as_str(),
                            note = ack.note.as_str()
                        )
                        .render(lang)
                    },
                ),
            ]
        })
        .collect();
    let header = msg!("cli-anomalies-header").render(lang);
    print_table(&[6, 22, 12, 14, 30, 28, 22], &header, rows);
}

/// The report in plain words, for the terminal.
fn probe_text(report: &ProbeReport, lang: Lang) -> String {
    let mut lines: Vec<[String; 2]> = Vec::new();
    let mut line = |label: crate::i18n::Message, value: String| {
        lines.push([label.render(lang), value]);
    };
    let unknown = || msg!("cli-probe-unknown").render(lang);
    let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(unknown);
    line(msg!("cli-probe-device"), report.device.clone());
    line(msg!("cli-probe-nim"), or_unknown(&report.nim));
    line(msg!("cli-probe-nif"), or_unknown(&report.nif));
    line(msg!("cli-probe-clock"), or_unknown(&report.clock));
    line(
        msg!("cli-probe-counters"),
        report.counters.map_or_else(unknown, |(tc, fvc, frc)| {
            msg!("cli-probe-counters-value", tc = tc, fvc = fvc, frc = frc).render(lang)
        }),
    );
    line(
        msg!("cli-probe-last-invoice"),
        or_unknown(&report.last_invoice),
    );
    line(
        msg!("cli-probe-rates"),
        report.rates.as_ref().map_or_else(
            || msg!("cli-probe-rates-configured").render(lang),
            |rates| {
                rates
                    .iter()
                    .filter(|(_, r)| r != "-")
                    .map(|(g, r)| format!("{g} {r}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        ),
    );
    if let Some((code, rate, date)) = &report.currency {
        line(
            msg!("cli-probe-currency"),
            format!("{code:?} {rate:?} {date:?}"),
        );
    }
    line(msg!("cli-probe-dgi"), or_unknown(&report.dgi));
    for (key, value) in &report.taxpayer {
        line(
            msg!("cli-probe-taxpayer", key = key.as_str()),
            value.clone(),
        );
    }
    line(
        msg!("cli-probe-status-bytes"),
        or_unknown(&report.status_bytes),
    );
    line(
        msg!("cli-probe-can-certify"),
        report.blocked.as_ref().map_or_else(
            || msg!("yes").render(lang),
            |why| msg!("cli-probe-cannot", why = why.as_str()).render(lang),
        ),
    );
    line(
        msg!("cli-probe-differences"),
        if report.anomalies.is_empty() {
            msg!("cli-probe-no-difference")
        } else {
            msg!("cli-probe-some-differences")
        }
        .render(lang),
    );
    let width = lines
        .iter()
        .map(|[label, _]| label.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    let mut out = String::new();
    for [label, value] in &lines {
        let pad = width.saturating_sub(label.chars().count());
        out.push_str(&format!("{label}{:pad$}{value}\n", ""));
    }
    for a in &report.anomalies {
        out.push_str(&format!(
            "  {}\n",
            msg!(
                "cli-probe-difference",
                command = a.command.as_str(),
                field = a.field.as_str(),
                raw = format!("{:?}", a.raw),
                count = a.count,
                expected = a.expected.as_str()
            )
            .render(lang)
        ));
    }
    for error in &report.errors {
        out.push_str(&format!(
            "{}\n",
            msg!("cli-probe-error", text = error.as_str()).render(lang)
        ));
    }
    out
}
