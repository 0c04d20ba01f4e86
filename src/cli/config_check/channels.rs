//! `config check`'s checks of what the gateway talks to: the running service (its admin
//! socket), each `[[devices]]` box (through the service, which owns its port, or on the port
//! itself with the probe's read-only commands), each web API entry (its status call with its
//! token, through the channel's own client), and the SMTP relay.

use crate::admin::{socket, AdminRequest};
use crate::alerts::{try_relay, RelayFailureKind};
use crate::certify::new_web_api_channel;
use crate::config::{Config, DeviceEntry, DeviceKind};
use crate::i18n::{Lang, Localized, Message};
use crate::model::ProbeReport;
use crate::msg;

use super::super::device_commands::probe_on_port;
use super::files::current_user;
use super::{Finding, Level};

/// Whether a service runs on the state directory.
pub(super) enum Service {
    /// Its admin socket answers: the devices are asked through it.
    Running,
    /// Nothing answers: the ports are opened here.
    Stopped,
    /// The socket is there but this account may not use it.
    Unusable,
}

/// Asks the admin socket (a read-only request) whether the service runs.
pub(super) fn service(config: &Config, lang: Lang) -> (Service, Finding) {
    let dir = config.resolved_state_dir().display().to_string();
    let path = socket::path_in(config.resolved_state_dir());
    let finding = |level, message| Finding::new("service", &dir, level, message);
    match socket::call(&path, &AdminRequest::OrgList, lang) {
        Ok(Some(_)) => (
            Service::Running,
            finding(Level::Note, msg!("cli-check-service-running")),
        ),
        Ok(None) => {
            let has_box = config.devices.iter().any(|d| d.kind == DeviceKind::Box);
            let said = if has_box {
                msg!("cli-check-service-stopped")
            } else {
                msg!("cli-check-service-stopped-no-box")
            };
            (Service::Stopped, finding(Level::Note, said))
        }
        Err(error) => (
            Service::Unusable,
            finding(
                Level::Error,
                msg!(
                    "cli-check-service-unusable",
                    reason = error.message(),
                    user = current_user()
                ),
            ),
        ),
    }
}

/// No `[[devices]]`: with e-MCFs kept in the store (`kept`, by name), a note naming them;
/// else, with `demo = true` the bundled simulator certifies (nothing is fiscal); with
/// `demo = false` (the packaged file) nothing is certified until a box is named. A warning
/// either way: the package installs that state on purpose.
pub(super) fn device_mode(config: &Config, kept: &[String]) -> Option<Finding> {
    if config.has_devices() {
        return None;
    }
    if !kept.is_empty() {
        let message = msg!(
            "cli-check-devices-kept",
            count = kept.len(),
            names = kept.join(", ")
        );
        return Some(Finding::new("devices", "", Level::Note, message));
    }
    let message = if config.demo {
        msg!("cli-check-no-device")
    } else {
        msg!("cli-check-no-device-demo-off")
    };
    Some(Finding::new("devices", "", Level::Warning, message))
}

/// One box: through the service when it runs (it owns the port), else on its port: opened
/// at its baud and closed (what a missing path or a refused permission says), then the
/// probe's read-only commands (C1h, C2h, 2Bh).
pub(super) async fn serial(
    config: &Config,
    entry: &DeviceEntry,
    service: &Service,
    lang: Lang,
) -> Finding {
    let name = entry.name.as_str();
    let finding = |level, message| Finding::new("device", name, level, message);
    let path = entry.path.display().to_string();
    match service {
        Service::Unusable => finding(
            Level::Error,
            msg!("cli-check-device-not-asked", name = name),
        ),
        Service::Running => {
            let request = AdminRequest::DeviceProbe {
                device: Some(entry.name.clone()),
            };
            let socket = socket::path_in(config.resolved_state_dir());
            let how = msg!("cli-check-how-service");
            match socket::call(&socket, &request, lang) {
                Ok(Some(answer)) => match serde_json::from_value::<ProbeReport>(answer) {
                    Ok(report) => from_report(name, how, &report, lang),
                    Err(error) => {
                        let errors = error.to_string();
                        let message = msg!(
                            "cli-check-device-errors",
                            name = name,
                            how = how,
                            errors = errors
                        );
                        finding(Level::Error, message)
                    }
                },
                Ok(None) => finding(
                    Level::Error,
                    msg!("cli-check-device-service-gone", name = name),
                ),
                Err(error) => {
                    let message = msg!(
                        "cli-check-device-service-refused",
                        name = name,
                        reason = error.message()
                    );
                    finding(Level::Error, message)
                }
            }
        }
        Service::Stopped => {
            let path = path.as_str();
            match entry.path.try_exists() {
                Ok(true) => {}
                Ok(false) => {
                    return finding(
                        Level::Error,
                        msg!("cli-check-device-missing", name = name, path = path),
                    )
                }
                Err(error) => {
                    let message = msg!(
                        "cli-check-device-open-failed",
                        name = name,
                        path = path,
                        reason = error.message()
                    );
                    return finding(Level::Error, message);
                }
            }
            if let Err(error) = crate::device::try_open(&entry.path, entry.baud) {
                let message = match error.kind() {
                    std::io::ErrorKind::PermissionDenied => {
                        msg!(
                            "cli-check-device-denied",
                            name = name,
                            path = path,
                            user = current_user()
                        )
                    }
                    // The path exists: the port is held by another program, or nothing is
                    // behind it.
                    std::io::ErrorKind::NotFound => {
                        msg!("cli-check-device-busy", name = name, path = path)
                    }
                    _ => msg!(
                        "cli-check-device-open-failed",
                        name = name,
                        path = path,
                        reason = error.message()
                    ),
                };
                return finding(Level::Error, message);
            }
            let how = msg!(
                "cli-check-how-port",
                path = path,
                baud = entry.baud.to_string()
            );
            match probe_on_port(entry, None, lang).await {
                Ok(report) => from_report(name, how, &report, lang),
                Err(error) => {
                    let said = match error.downcast::<Message>() {
                        Ok(message) => message,
                        Err(error) => match error.downcast_ref::<crate::device::DeviceError>() {
                            Some(error) => error.message(),
                            None => msg!("cli-error-text", text = format!("{error:#}")),
                        },
                    };
                    let message = msg!(
                        "cli-check-device-silent",
                        name = name,
                        baud = entry.baud.to_string(),
                        said = said
                    );
                    finding(Level::Error, message)
                }
            }
        }
    }
}

/// What a probe says of channel `name` (reached `how`): errors and a blocked box are errors.
fn from_report(name: &str, how: Message, report: &ProbeReport, lang: Lang) -> Finding {
    let finding = |level, message| Finding::new("device", name, level, message);
    if !report.errors.is_empty() {
        let errors = report.errors.join(" ; ");
        return finding(
            Level::Error,
            msg!(
                "cli-check-device-errors",
                name = name,
                how = how,
                errors = errors
            ),
        );
    }
    if let Some(why) = &report.blocked {
        return finding(
            Level::Error,
            msg!(
                "cli-check-device-blocked",
                name = name,
                how = how,
                why = why.as_str()
            ),
        );
    }
    let unknown = || msg!("cli-probe-unknown").render(lang);
    finding(
        Level::Ok,
        msg!(
            "cli-check-device-ok",
            name = name,
            how = how,
            nim = report.nim.clone().unwrap_or_else(unknown),
            nif = report.nif.clone().unwrap_or_else(unknown)
        ),
    )
}

/// One web API entry: its status call with its token, through the channel's client.
pub(super) async fn web_api(entry: &DeviceEntry, lang: Lang) -> Finding {
    let name = entry.name.as_str();
    let settings = entry.web_api_settings();
    let url = settings.url.clone();
    let how = msg!("cli-check-how-web-api", url = url.as_str());
    let channel = match new_web_api_channel(settings) {
        Ok(channel) => channel,
        Err(detail) => {
            let message = msg!("cli-check-web-api-setup", name = name, detail = detail);
            return Finding::new("device", name, Level::Error, message);
        }
    };
    let finding = match channel.probe(lang).await {
        Ok(report) => from_report(name, how, &report, lang),
        Err(error) => Finding::new(
            "device",
            name,
            Level::Error,
            msg!(
                "cli-check-device-errors",
                name = name,
                how = how,
                errors = error.describe(lang)
            ),
        ),
    };
    channel.shutdown().await;
    finding
}

/// The relay of `[smtp]`: tried only when asked (`--smtp`).
pub(super) async fn smtp(config: &Config, try_it: bool) -> Finding {
    let Some(settings) = &config.smtp else {
        return Finding::new("smtp", "", Level::Note, msg!("cli-check-smtp-none"));
    };
    let relay = format!("{}:{}", settings.host, settings.port());
    let finding = |level, message| Finding::new("smtp", &relay, level, message);
    if !try_it {
        return finding(
            Level::Note,
            msg!("cli-check-smtp-not-tried", relay = relay.as_str()),
        );
    }
    let tls = settings.tls.as_str();
    match try_relay(settings).await {
        Ok(()) => finding(
            Level::Ok,
            msg!(
                "cli-check-smtp-ok",
                relay = relay.as_str(),
                tls = tls,
                login = settings.username.is_some().to_string()
            ),
        ),
        Err(failure) => {
            let detail = failure.detail.as_str();
            let relay = relay.as_str();
            let message = match failure.kind {
                RelayFailureKind::Unreachable => {
                    msg!("cli-check-smtp-unreachable", relay = relay, detail = detail)
                }
                RelayFailureKind::Tls => {
                    msg!(
                        "cli-check-smtp-tls",
                        relay = relay,
                        tls = tls,
                        detail = detail
                    )
                }
                RelayFailureKind::Refused => {
                    msg!("cli-check-smtp-refused", relay = relay, detail = detail)
                }
                RelayFailureKind::Other => {
                    msg!("cli-check-smtp-other", relay = relay, detail = detail)
                }
            };
            finding(Level::Error, message)
        }
    }
}
