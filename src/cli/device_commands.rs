//! `device probe` and `device anomalies`: for technicians at a box's first contact, and for
//! administrators who acknowledge fiscal anomalies.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context};

use super::admin_commands::run_request;
use super::{AnomaliesCommand, DeviceCommand};
use crate::admin::{socket, AdminRequest};
use crate::config::Config;
use crate::device::capture::Capture;
use crate::device::probe::{probe, ProbeReport};
use crate::model::AnomalyRecord;

pub(super) fn run(config: &Config, command: DeviceCommand) -> anyhow::Result<()> {
    match command {
        DeviceCommand::Probe {
            device,
            capture,
            json,
        } => {
            let report = probe_device(config, device, capture.as_deref())?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", probe_text(&report));
            }
            if !report.errors.is_empty() {
                bail!("the box did not answer every question (see the errors above)");
            }
            Ok(())
        }
        DeviceCommand::Anomalies(AnomaliesCommand::List { json }) => {
            let value = run_request(config, AdminRequest::FiscalAnomalies)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&value)?);
                return Ok(());
            }
            let anomalies: Vec<AnomalyRecord> = serde_json::from_value(value)?;
            print_anomalies(&anomalies, config);
            Ok(())
        }
        DeviceCommand::Anomalies(AnomaliesCommand::Ack { id, by, note }) => {
            let value = run_request(config, AdminRequest::FiscalAnomalyAck { id, by, note })?;
            let record: AnomalyRecord = serde_json::from_value(value)?;
            match &record.acknowledged {
                Some(ack) => println!(
                    "fiscal anomaly {} acknowledged by {} on {}: {}",
                    record.id,
                    ack.by,
                    ack.at
                        .with_timezone(&config.offset())
                        .format("%Y-%m-%d %H:%M %:z"),
                    ack.note
                ),
                None => bail!("fiscal anomaly {id} is not acknowledged"),
            }
            Ok(())
        }
    }
}

/// Through the running service if there is one, else on the port itself.
fn probe_device(
    config: &Config,
    device: Option<String>,
    capture: Option<&Path>,
) -> anyhow::Result<ProbeReport> {
    let request = AdminRequest::DeviceProbe {
        device: device.clone(),
    };
    let socket = socket::path_in(config.resolved_state_dir());
    if let Some(answer) = socket::call(&socket, &request)? {
        if capture.is_some() {
            eprintln!(
                "note: the running service owns the port, so --capture is ignored; start the \
                 service with `serve --capture FILE` to capture its traffic"
            );
        }
        return Ok(serde_json::from_value(answer)?);
    }
    if config.devices.is_empty() {
        bail!(
            "no [[devices]] in the configuration: nothing to probe (demo mode uses the bundled \
             simulator; `serve` probes it through the running service)"
        );
    }
    let entry = match &device {
        Some(name) => config.device(name).with_context(|| {
            format!(
                "no configured device is named {name:?} (configured: {})",
                names(config)
            )
        })?,
        None if config.devices.len() == 1 => &config.devices[0],
        None => bail!(
            "several devices are configured ({}): name one with --device",
            names(config)
        ),
    };
    let mut device_config = entry.device_config();
    device_config.health_interval = None;
    if let Some(path) = capture {
        device_config.capture = Some(
            Capture::create(path)
                .with_context(|| format!("creating the wire capture {}", path.display()))?,
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let wait = entry.timing().command_budget * 2 + Duration::from_secs(1);
    runtime.block_on(async move {
        let handle = crate::device::spawn(device_config);
        let deadline = tokio::time::Instant::now() + wait;
        while !handle.status().connected {
            if tokio::time::Instant::now() >= deadline {
                let why = handle.status().last_error.unwrap_or_default();
                handle.shutdown().await;
                bail!(
                    "the box on {} does not answer ({why}); check the cable, the power, the \
                     baud rate and that no other program holds the port",
                    entry.path.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let report = probe(&handle).await;
        handle.shutdown().await;
        Ok(report?)
    })
}

fn names(config: &Config) -> String {
    config
        .devices
        .iter()
        .map(|d| d.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn print_anomalies(anomalies: &[AnomalyRecord], config: &Config) {
    if anomalies.is_empty() {
        println!("no fiscal anomaly: every box's counters follow the register");
        return;
    }
    println!(
        "{:<6} {:<22} {:<12} {:<14} {:<30} {:<28} {:<22} ACKNOWLEDGED",
        "ID", "DETECTED", "DEVICE", "NIM", "WHAT", "REGISTER KNEW", "BOX SAID"
    );
    for record in anomalies {
        let a = &record.anomaly;
        println!(
            "{:<6} {:<22} {:<12} {:<14} {:<30} {:<28} {:<22} {}",
            record.id,
            record
                .detected_at
                .with_timezone(&config.offset())
                .format("%Y-%m-%d %H:%M %:z")
                .to_string(),
            a.device,
            a.nim,
            a.kind.describe(),
            format!(
                "NIF {} TC {} (entry {})",
                a.known.nif, a.known.tc, a.known.sequence
            ),
            format!("NIF {} TC {} ({})", a.seen_nif, a.seen_tc, a.seen_in),
            record.acknowledged.as_ref().map_or_else(
                || "no".to_string(),
                |ack| format!("by {}: {}", ack.by, ack.note)
            ),
        );
    }
}

/// The report in plain words, for the terminal.
fn probe_text(report: &ProbeReport) -> String {
    let mut out = String::new();
    let line = |out: &mut String, label: &str, value: &str| {
        out.push_str(&format!("{label:<22}{value}\n"));
    };
    let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".to_owned());
    line(&mut out, "device", &report.device);
    line(&mut out, "machine id (NIM)", &or_unknown(&report.nim));
    line(&mut out, "taxpayer NIF", &or_unknown(&report.nif));
    line(&mut out, "box clock", &or_unknown(&report.clock));
    line(
        &mut out,
        "counters",
        &report.counters.map_or_else(
            || "unknown".to_owned(),
            |(tc, fvc, frc)| format!("{tc} invoices ({fvc} sales, {frc} credit notes)"),
        ),
    );
    line(&mut out, "last invoice", &or_unknown(&report.last_invoice));
    line(
        &mut out,
        "VAT rates",
        &report.rates.as_ref().map_or_else(
            || "not in its C1h: the configured rates are used".to_owned(),
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
            &mut out,
            "currency (C1h)",
            &format!("{code:?} {rate:?} {date:?}"),
        );
    }
    line(&mut out, "link with the DGI", &or_unknown(&report.dgi));
    for (key, value) in &report.taxpayer {
        line(&mut out, &format!("taxpayer {key}"), value);
    }
    line(&mut out, "status bytes", &or_unknown(&report.status_bytes));
    line(
        &mut out,
        "can certify now",
        &report
            .blocked
            .as_ref()
            .map_or_else(|| "yes".to_owned(), |why| format!("NO: {why}")),
    );
    if report.anomalies.is_empty() {
        line(
            &mut out,
            "differences",
            "none: every reply is as PROTOCOL.md describes",
        );
    } else {
        line(
            &mut out,
            "differences",
            "from PROTOCOL.md, in fields the gateway reads tolerantly:",
        );
        for a in &report.anomalies {
            out.push_str(&format!(
                "  {} {}: received {:?} ({} times), PROTOCOL.md says {}\n",
                a.command, a.field, a.raw, a.count, a.expected
            ));
        }
    }
    for error in &report.errors {
        out.push_str(&format!("error: {error}\n"));
    }
    out
}
