//! `notice add` and `notice list`: the change notices ([`crate::notices`]). Through the
//! running service's admin socket when there is one (its alert engine e-mails a new notice
//! at once); else on the state directory, the store held meanwhile (its lock: no service
//! starts in between) to read the organizations, and the e-mails go at the next start.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::anyhow;
use chrono::{NaiveDate, Utc};

use super::admin_commands::{print_json, print_table, Runner};
use super::errors::Say;
use crate::admin::{socket, AdminRequest};
use crate::api::SERVED_VERSIONS;
use crate::config::Config;
use crate::i18n::{default_lang, format, Localized};
use crate::model::Organization;
use crate::msg;
use crate::notices::{self, NewNotice, Notice, Notices};

/// `notice` commands.
#[derive(Debug, clap::Subcommand)]
pub enum NoticeCommand {
    /// Publish a change notice: at least 30 days ahead, e-mailed once to every
    /// organization's administrators, a banner on their dashboards until the date.
    Add {
        /// The day the change takes effect, YYYY-MM-DD (its first second, in the gateway's
        /// time zone, at least 30 full days from now).
        #[arg(long, value_name = "DATE", value_parser = super::args::parse_day)]
        effective: NaiveDate,
        /// The notice's subject, one line.
        #[arg(long, value_name = "TEXT")]
        subject: String,
        /// A UTF-8 text file holding the notice's body, as it is to be read.
        #[arg(long, value_name = "FILE")]
        body_file: PathBuf,
        /// The API version the change retires (v1): its answers then carry the Deprecation,
        /// Sunset and Link headers.
        #[arg(long, value_name = "VERSION")]
        retires: Option<String>,
    },
    /// The change notices and their e-mails, sent or pending, per organization.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs a `notice` command.
pub fn run(config: &Config, command: NoticeCommand) -> anyhow::Result<()> {
    match command {
        NoticeCommand::Add {
            effective,
            subject,
            body_file,
            retires,
        } => {
            let body = std::fs::read_to_string(&body_file).say(|| {
                msg!(
                    "cli-notice-body-file",
                    path = body_file.display().to_string()
                )
            })?;
            let new = NewNotice {
                effective,
                subject,
                body,
                retires,
            };
            add(config, new)
        }
        NoticeCommand::List { json } => list(config, json),
    }
}

fn add(config: &Config, new: NewNotice) -> anyhow::Result<()> {
    let lang = default_lang();
    // Said before anything else, service running or not.
    if let Err(error) = notices::check(&new, Utc::now(), config.offset(), SERVED_VERSIONS) {
        return Err(anyhow!(error.message()));
    }
    let state_dir = config.resolved_state_dir();
    let request = AdminRequest::NoticeAdd {
        notice: new.clone(),
    };
    let (notice, running) = match socket::call(&socket::path_in(state_dir), &request, lang)? {
        Some(answer) => (serde_json::from_value::<Notice>(answer)?, true),
        None => (add_stopped(config, new)?, false),
    };
    let effective = format::day(&notice.notice.effective.to_string(), lang);
    println!(
        "{}",
        msg!(
            "cli-notice-added",
            id = i64::from(notice.id),
            date = effective,
            orgs = notice.recipients.len() as i64
        )
        .render(lang)
    );
    let when = if config.smtp.is_none() {
        msg!("cli-notice-no-smtp")
    } else if running {
        msg!("cli-notice-mail-now")
    } else {
        msg!("cli-notice-mail-at-start")
    };
    println!("{}", when.render(lang));
    Ok(())
}

/// Publishes `new` with no service running: the store is opened (and held) to read the
/// organizations, then the notice is written.
fn add_stopped(config: &Config, new: NewNotice) -> anyhow::Result<Notice> {
    let mut runner = Runner::new(config);
    let orgs: Vec<Organization> = serde_json::from_value(runner.run(AdminRequest::OrgList)?)?;
    if !runner.holds_store() {
        // The service started meanwhile and answered: its notices are in its memory.
        anyhow::bail!(msg!("cli-notice-service-started"));
    }
    let recipients: BTreeSet<String> = orgs.into_iter().map(|o| o.id).collect();
    let notices = open(config)?;
    notices
        .add(new, recipients, SERVED_VERSIONS)
        .map_err(|e| anyhow!(e.message()))
}

fn open(config: &Config) -> anyhow::Result<Notices> {
    Notices::open(config.resolved_state_dir(), config.offset()).map_err(|e| anyhow!(e.message()))
}

fn list(config: &Config, json: bool) -> anyhow::Result<()> {
    let lang = default_lang();
    let path = socket::path_in(config.resolved_state_dir());
    let all: Vec<Notice> = match socket::call(&path, &AdminRequest::NoticeList, lang)? {
        Some(answer) => serde_json::from_value(answer)?,
        None => open(config)?.all(),
    };
    let now = Utc::now();
    let zone = config.offset();
    if json {
        // Each notice as kept, and `late`: e-mails still pending with less than 30 days left.
        let mut listed = Vec::with_capacity(all.len());
        for n in &all {
            let mut value = serde_json::to_value(n)?;
            if let Some(fields) = value.as_object_mut() {
                fields.insert("late".into(), n.late(now, zone).into());
            }
            listed.push(value);
        }
        return print_json(&serde_json::Value::Array(listed));
    }
    if all.is_empty() {
        println!("{}", msg!("cli-notices-none").render(lang));
        return Ok(());
    }
    let rows = all
        .iter()
        .map(|n| {
            let pending = n.pending().count();
            [
                n.id.to_string(),
                format::day(&n.notice.effective.to_string(), lang),
                n.notice.retires.clone().unwrap_or_else(|| "-".into()),
                msg!(
                    "cli-notice-mails",
                    sent = n.sent.len() as i64,
                    pending = pending as i64
                )
                .render(lang),
                format::visible(&n.notice.subject).into_owned(),
            ]
        })
        .collect();
    print_table(
        &[4, 12, 8, 28],
        &msg!("cli-notices-header").render(lang),
        rows,
    );
    for n in all.iter().filter(|n| n.late(now, zone)) {
        println!(
            "{}",
            msg!(
                "cli-notice-late",
                id = i64::from(n.id),
                pending = n.pending().count() as i64,
                date = format::day(&n.notice.effective.to_string(), lang),
                days = notices::NOTICE_DAYS
            )
            .render(lang)
        );
    }
    for n in &all {
        for org in &n.recipients {
            let state = if let Some(at) = n.sent.get(org) {
                msg!(
                    "cli-notice-org-sent",
                    at = format::date_time(*at, zone, lang)
                )
            } else if n.given_up.contains(org) {
                msg!("cli-notice-org-given-up")
            } else {
                msg!("cli-notice-org-pending")
            };
            println!(
                "{}",
                msg!(
                    "cli-notice-org",
                    id = i64::from(n.id),
                    org = org.as_str(),
                    state = state
                )
                .render(lang)
            );
        }
    }
    Ok(())
}
