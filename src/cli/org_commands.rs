//! `org add`, `org update`, `org list`, `org show`. Setup mistakes are refused here, before
//! any invoice: a device that is not configured, a NIF the device is not personalized for
//! (checked with the device through the running service; said when it could not be), two
//! organizations with one NIF on one device (`Admin::org_save`).

use anyhow::bail;

use super::admin_commands::{print_json, print_table, run as run_request};
use super::demo::EMBEDDED_DEVICE;
use super::{embedded, OrgCommand};
use crate::admin::{socket, AdminRequest, OrgShown};
use crate::config::Config;
use crate::i18n::{default_lang, format, Lang, Localized};
use crate::model::{Organization, Plan};
use crate::msg;
use rust_decimal::Decimal;

/// `org ...`
pub(super) fn run(config: &Config, command: OrgCommand) -> anyhow::Result<()> {
    let lang = default_lang();
    match command {
        OrgCommand::Add {
            id,
            name,
            nif,
            isf,
            plan,
            quota,
            device,
            admin_emails,
            max_invoice_total,
        } => {
            let plan = parse_plan(&plan)?;
            let admin_emails = check_emails(&admin_emails)?;
            let max_invoice_total = max_invoice_total
                .map(|text| parse_max_total(&text))
                .transpose()?;
            if config.resolved_state_dir().exists() && find(config, &id)?.is_some() {
                bail!(msg!("cli-org-exists", id = id.as_str()));
            }
            let org = Organization {
                id,
                name,
                nif,
                isf,
                plan,
                quota_override: quota,
                device,
                admin_emails,
                max_invoice_total,
            };
            save(config, org, lang)
        }
        OrgCommand::Update {
            id,
            name,
            nif,
            isf,
            plan,
            quota,
            plan_quota,
            device,
            admin_emails,
            no_admin_email,
            max_invoice_total,
            no_max_invoice_total,
        } => {
            let admin_emails = check_emails(&admin_emails)?;
            let max_invoice_total = max_invoice_total
                .map(|text| parse_max_total(&text))
                .transpose()?;
            let Some(mut org) = find(config, &id)? else {
                bail!(msg!("cli-org-not-found", id = id.as_str()));
            };
            if let Some(plan) = plan {
                org.plan = parse_plan(&plan)?;
            }
            if quota.is_some() || plan_quota {
                org.quota_override = quota;
            }
            org.name = name.unwrap_or(org.name);
            org.nif = nif.unwrap_or(org.nif);
            org.isf = isf.unwrap_or(org.isf);
            org.device = device.unwrap_or(org.device);
            if no_admin_email || !admin_emails.is_empty() {
                org.admin_emails = admin_emails;
            }
            if no_max_invoice_total || max_invoice_total.is_some() {
                org.max_invoice_total = max_invoice_total;
            }
            save(config, org, lang)
        }
        OrgCommand::List { json } => {
            let answer = run_request(config, AdminRequest::OrgList)?;
            if json {
                return print_json(&answer);
            }
            let orgs: Vec<Organization> = serde_json::from_value(answer)?;
            let rows = orgs
                .into_iter()
                .map(|org| {
                    [
                        org.id,
                        org.nif,
                        org.isf,
                        org.plan.as_str().to_string(),
                        org.device,
                        max_total_text(org.max_invoice_total, lang),
                        format::visible(&org.name).into_owned(),
                    ]
                })
                .collect();
            let header = msg!("cli-org-list-header").render(lang);
            print_table(&[16, 12, 12, 7, 12, 20], &header, rows);
            Ok(())
        }
        OrgCommand::Show { id, json } => {
            let answer = run_request(config, AdminRequest::OrgShow { id })?;
            if json {
                return print_json(&answer);
            }
            let shown: OrgShown = serde_json::from_value(answer)?;
            print_shown(&shown, lang);
            Ok(())
        }
    }
}

/// The addresses without repeats; refuses one the alerts could not be sent to, and more
/// than [`Organization::MAX_ADMIN_EMAILS`].
fn check_emails(addresses: &[String]) -> anyhow::Result<Vec<String>> {
    if let Some(bad) = addresses
        .iter()
        .find(|a| !crate::model::is_plausible_email(a))
    {
        bail!(msg!("cli-org-bad-email", address = bad.as_str()));
    }
    let distinct = Organization::distinct_emails(addresses);
    if distinct.len() > Organization::MAX_ADMIN_EMAILS {
        bail!(msg!(
            "cli-org-too-many-emails",
            max = Organization::MAX_ADMIN_EMAILS,
            count = distinct.len()
        ));
    }
    Ok(distinct)
}

/// `--max-invoice-total`: an amount in CDF above 0 with at most 2 decimals (`1500000`,
/// `1500000.50`), read exactly.
fn parse_max_total(text: &str) -> anyhow::Result<Decimal> {
    text.trim()
        .parse::<Decimal>()
        .ok()
        .filter(|amount| crate::admin::is_valid_max_invoice_total(*amount))
        .ok_or_else(|| anyhow::Error::new(msg!("cli-org-bad-max-total", value = text)))
}

/// An organization's largest invoice total as people read it, or "none".
fn max_total_text(max: Option<Decimal>, lang: Lang) -> String {
    match max {
        Some(max) => format::amount(max, crate::model::FISCAL_CURRENCY, lang),
        None => msg!("cli-org-no-max-total").render(lang),
    }
}

fn parse_plan(text: &str) -> anyhow::Result<Plan> {
    Plan::parse(text).ok_or_else(|| anyhow::Error::new(msg!("cli-org-bad-plan")))
}

/// The organization `id`, `None` if there is none.
fn find(config: &Config, id: &str) -> anyhow::Result<Option<Organization>> {
    let orgs: Vec<Organization> =
        serde_json::from_value(run_request(config, AdminRequest::OrgList)?)?;
    Ok(orgs.into_iter().find(|o| o.id == id))
}

/// Checks the device and the NIF, then saves.
fn save(config: &Config, org: Organization, lang: Lang) -> anyhow::Result<()> {
    check_device(config, &org.device)?;
    match check_nif(config, &org.device, &org.nif) {
        NifCheck::Matches => {}
        NifCheck::Differs(device_nif) => bail!(msg!(
            "cli-org-nif-differs",
            device = org.device.as_str(),
            device_nif = device_nif,
            nif = org.nif.as_str()
        )),
        NifCheck::Unchecked(reason) => eprintln!(
            "{}",
            msg!(
                "cli-org-nif-unchecked",
                device = org.device.as_str(),
                reason = reason
            )
            .render(lang)
        ),
    }
    let id = org.id.clone();
    run_request(config, AdminRequest::OrgSave { org })?;
    println!("{}", msg!("cli-org-saved", id = id.as_str()).render(lang));
    Ok(())
}

/// The device must be one this gateway certifies on: a `[[devices]]` entry, a web API device
/// kept in the PostgreSQL store, or the bundled simulator when none is configured and `demo`
/// is on.
fn check_device(config: &Config, device: &str) -> anyhow::Result<()> {
    let mut known: Vec<&str> = if config.has_devices() {
        config.devices.iter().map(|d| d.name.as_str()).collect()
    } else if config.demo {
        vec![EMBEDDED_DEVICE]
    } else {
        Vec::new()
    };
    if known.contains(&device) {
        return Ok(());
    }
    // A web API device kept in the PostgreSQL store (`device add`) is every replica's.
    let kept = super::stored_devices::kept_names(config)?;
    if kept.iter().any(|name| name == device) {
        return Ok(());
    }
    known.extend(kept.iter().map(String::as_str));
    bail!(msg!(
        "cli-org-unknown-device",
        device = device,
        known = known.join(", ")
    ))
}

/// What the device says of the NIF.
enum NifCheck {
    /// The device is personalized for this NIF.
    Matches,
    /// It is personalized for another NIF (given).
    Differs(String),
    /// It could not be asked (why).
    Unchecked(String),
}

fn check_nif(config: &Config, device: &str, nif: &str) -> NifCheck {
    let compare = |device_nif: String| {
        if device_nif == nif {
            NifCheck::Matches
        } else {
            NifCheck::Differs(device_nif)
        }
    };
    let lang = default_lang();
    let socket = socket::path_in(config.resolved_state_dir());
    let request = AdminRequest::DeviceNif {
        device: device.to_string(),
    };
    match socket::call(&socket, &request, lang) {
        Ok(Some(answer)) => match answer.get("nif").and_then(|nif| nif.as_str()) {
            Some(device_nif) => compare(device_nif.to_string()),
            None => NifCheck::Unchecked(msg!("cli-org-nif-not-said").render(lang)),
        },
        // Only the bundled simulator's NIF is known without the service: a device kept in
        // the store (`device add`) is asked by a running replica, never guessed.
        Ok(None) if config.runs_demo() && device == EMBEDDED_DEVICE => {
            compare(embedded::simulator_nif())
        }
        Ok(None) => NifCheck::Unchecked(msg!("cli-org-service-stopped").render(lang)),
        Err(error) => NifCheck::Unchecked(error.message().render(lang)),
    }
}

fn print_shown(shown: &OrgShown, lang: Lang) {
    let org = &shown.organization;
    let quota = &shown.quota;
    let quota_source = if org.quota_override.is_some() {
        msg!("cli-org-quota-override").render(lang)
    } else {
        msg!("cli-org-quota-plan", plan = org.plan.as_str()).render(lang)
    };
    let count = |n: u64| format::integer(n, lang);
    let rows: Vec<[String; 2]> = vec![
        [msg!("cli-field-id").render(lang), org.id.clone()],
        [
            msg!("cli-field-name").render(lang),
            format::visible(&org.name).into_owned(),
        ],
        ["NIF".into(), org.nif.clone()],
        ["ISF".into(), org.isf.clone()],
        [
            msg!("cli-field-plan").render(lang),
            org.plan.as_str().into(),
        ],
        [msg!("cli-field-device").render(lang), org.device.clone()],
        [
            msg!("cli-field-admin-emails").render(lang),
            org.admin_emails.join(", "),
        ],
        [
            msg!("cli-field-max-total").render(lang),
            max_total_text(org.max_invoice_total, lang),
        ],
        [
            msg!("cli-field-quota", year = quota.year).render(lang),
            msg!(
                "cli-org-quota-use",
                used = count(quota.used),
                quota = count(quota.quota),
                remaining = count(quota.remaining),
                source = quota_source
            )
            .render(lang),
        ],
    ];
    for [name, value] in rows {
        println!("{name:<14} {value}");
    }
}
