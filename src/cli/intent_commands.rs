//! `intent list` and `intent resolve`: the invoices in doubt, through the running service's
//! admin socket (only the running service knows which wait for an administrator).

use anyhow::bail;
use chrono::NaiveDateTime;

use super::admin_commands::{print_json, print_table};
use super::errors::Say;
use super::IntentCommand;
use crate::admin::{socket, AdminRequest};
use crate::certify::{OpenIntent, Resolution};
use crate::config::Config;
use crate::i18n::{default_lang, format, names};
use crate::msg;

/// Runs an `intent` command.
pub fn run(config: &Config, command: IntentCommand) -> anyhow::Result<()> {
    let lang = default_lang();
    match command {
        IntentCommand::List { json } => {
            let answer = call(config, &AdminRequest::IntentList)?;
            let open: Vec<OpenIntent> = serde_json::from_value(answer)?;
            if json {
                print_json(&serde_json::to_value(&open)?)?;
            } else if open.is_empty() {
                println!("{}", msg!("cli-intents-none").render(lang));
            } else {
                let rows = open
                    .iter()
                    .map(|intent| {
                        let state = match intent.state.as_str() {
                            "awaiting_administrator" => msg!("cli-intent-awaiting"),
                            _ => msg!("cli-intent-settling"),
                        };
                        let environment = names::environment(intent.environment);
                        [
                            intent.intent.to_string(),
                            state.render(lang),
                            intent.org.clone(),
                            environment.render(lang),
                            intent.rn.clone(),
                            intent.invoice_type.clone(),
                            intent.device.clone(),
                            format::number(intent.total, lang),
                            intent.channel_ref.clone().unwrap_or_default(),
                        ]
                    })
                    .collect();
                let header = msg!("cli-intents-header").render(lang);
                print_table(&[6, 22, 12, 12, 20, 4, 12, 16], &header, rows);
                for intent in &open {
                    if let Some(reason) = &intent.reason {
                        println!(
                            "{}",
                            msg!(
                                "cli-intent-why",
                                id = intent.intent,
                                reason = reason.as_str()
                            )
                            .render(lang)
                        );
                    }
                }
            }
            Ok(())
        }
        IntentCommand::Resolve {
            intent,
            certified,
            not_certified,
            code_def,
            qr_code,
            counters,
            nim,
            date_time,
            by,
            note,
        } => {
            let resolution = match (certified, not_certified) {
                (true, false) => {
                    let text = date_time.unwrap_or_default();
                    let at = NaiveDateTime::parse_from_str(text.trim(), "%Y-%m-%dT%H:%M:%S")
                        .say(|| msg!("cli-intent-date-time", value = text.as_str()))?;
                    Resolution::Certified {
                        code_def: code_def.unwrap_or_default(),
                        qr_code: qr_code.unwrap_or_default(),
                        counters: counters.unwrap_or_default(),
                        nim: nim.unwrap_or_default(),
                        date_time: at,
                    }
                }
                (false, true) => Resolution::NotCertified,
                _ => bail!(msg!("cli-intent-say-which")),
            };
            let request = AdminRequest::IntentResolve {
                intent,
                resolution,
                by,
                note,
            };
            let answer = call(config, &request)?;
            if answer.is_null() {
                println!(
                    "{}",
                    msg!("cli-intent-not-certified", id = intent).render(lang)
                );
            } else {
                println!("{}", msg!("cli-intent-certified", id = intent).render(lang));
                print_json(&answer)?;
            }
            Ok(())
        }
    }
}

fn call(config: &Config, request: &AdminRequest) -> anyhow::Result<serde_json::Value> {
    let path = socket::path_in(config.resolved_state_dir());
    match socket::call(&path, request, default_lang())? {
        Some(answer) => Ok(answer),
        None => bail!(msg!(
            "cli-intents-need-service",
            path = path.display().to_string()
        )),
    }
}
