//! `intent list` and `intent resolve`: the invoices in doubt, through the running service's
//! admin socket (only the running service knows which wait for an administrator).

use anyhow::{bail, Context};
use chrono::NaiveDateTime;

use super::IntentCommand;
use crate::admin::{socket, AdminRequest};
use crate::certify::{OpenIntent, Resolution};
use crate::config::Config;

/// Runs an `intent` command.
pub fn run(config: &Config, command: IntentCommand) -> anyhow::Result<()> {
    match command {
        IntentCommand::List { json } => {
            let answer = call(config, &AdminRequest::IntentList)?;
            let open: Vec<OpenIntent> = serde_json::from_value(answer)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&open)?);
            } else if open.is_empty() {
                println!("no open intent: nothing is in doubt");
            } else {
                for intent in &open {
                    println!(
                        "{:>6}  {:<22}  {:<12} {:<10} rn {:<20} {} {} total {}  {}",
                        intent.intent,
                        intent.state,
                        intent.org,
                        intent.environment.as_str(),
                        intent.rn,
                        intent.invoice_type,
                        intent.device,
                        intent.total,
                        intent
                            .channel_ref
                            .as_deref()
                            .map_or(String::new(), |uid| format!("uid {uid}")),
                    );
                    if let Some(reason) = &intent.reason {
                        println!("        why: {reason}");
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
                        .with_context(|| format!("--date-time {text:?}: write yyyy-MM-ddTHH:mm:ss"))?;
                    Resolution::Certified {
                        code_def: code_def.unwrap_or_default(),
                        qr_code: qr_code.unwrap_or_default(),
                        counters: counters.unwrap_or_default(),
                        nim: nim.unwrap_or_default(),
                        date_time: at,
                    }
                }
                (false, true) => Resolution::NotCertified,
                _ => bail!("say what the DGI's portal shows: --certified (with its elements) or --not-certified"),
            };
            let request = AdminRequest::IntentResolve {
                intent,
                resolution,
                by,
                note,
            };
            let answer = call(config, &request)?;
            if answer.is_null() {
                println!("intent {intent} settled as not certified (journaled)");
            } else {
                println!("intent {intent} settled as certified (journaled):");
                println!("{}", serde_json::to_string_pretty(&answer)?);
            }
            Ok(())
        }
    }
}

fn call(config: &Config, request: &AdminRequest) -> anyhow::Result<serde_json::Value> {
    let path = socket::path_in(config.resolved_state_dir());
    match socket::call(&path, request)? {
        Some(answer) => Ok(answer),
        None => bail!(
            "the service is not running (no admin socket at {}): invoices in doubt are listed and settled by the running service",
            path.display()
        ),
    }
}
