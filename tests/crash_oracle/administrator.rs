//! The administrator of a web API gateway, as the harness plays it: a confirm whose answer
//! died with the gateway leaves its invoice in doubt (`intent list` shows it awaiting an
//! administrator, the client gets 409/111); the administrator reads the DGI's portal (here:
//! the invoices the simulator finalized, by uid) and settles it with `intent resolve`, as
//! certified with the DGI's elements or as not certified. Every invoice the DGI finalized
//! must then be in the register, which the oracle checks right after.

use chrono::Utc;
use serde_json::Value;

use super::device::DeviceInvoice;
use super::{Harness, SIM_NIF};

/// The NIM of the web API simulator's e-MCF (its default).
const WEB_API_NIM: &str = "CD01000001-1";

impl Harness {
    /// Settles every intent awaiting an administrator, from what the DGI shows.
    pub(super) async fn settle_as_administrator(&mut self) -> Result<(), String> {
        let listed = self.cli(&["intent", "list", "--json"]).await?;
        let open: Vec<Value> =
            serde_json::from_str(&listed).map_err(|e| format!("intent list --json: {e}"))?;
        let finalized = self.device.invoices()?;
        for intent in open
            .iter()
            .filter(|intent| intent["state"] == "awaiting_administrator")
        {
            let id = intent_id(intent);
            let on_portal = on_portal(intent, &finalized);
            let args = resolution(&id, on_portal);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            self.cli(&args).await?;
            self.report.settled_by_administrator += 1;
            if on_portal.is_none() {
                self.report.settled_not_certified += 1;
            }
        }
        Ok(())
    }
}

/// The invoice the DGI finalized for `intent`'s request (its uid), if any: what its portal shows.
pub(super) fn on_portal<'a>(
    intent: &Value,
    finalized: &'a [DeviceInvoice],
) -> Option<&'a DeviceInvoice> {
    let uid = intent["channelRef"].as_str()?;
    finalized
        .iter()
        .find(|invoice| invoice.uid.as_deref() == Some(uid))
}

/// The `intent resolve` arguments for what the portal shows of the intent `id`.
pub(super) fn resolution(id: &str, on_portal: Option<&DeviceInvoice>) -> Vec<String> {
    let mut args: Vec<String> = ["intent", "resolve", id].map(String::from).to_vec();
    match on_portal {
        Some(invoice) => {
            let now = Utc::now();
            args.extend(
                [
                    "--certified",
                    "--code-def",
                    &invoice.code_def,
                    "--qr-code",
                    &format!(
                        "DGI-RDC;{WEB_API_NIM};{};{SIM_NIF};{}",
                        invoice.code_def,
                        now.format("%Y%m%d%H%M%S")
                    ),
                    "--counters",
                    &invoice.counters,
                    "--nim",
                    WEB_API_NIM,
                    "--date-time",
                    &now.format("%Y-%m-%dT%H:%M:%S").to_string(),
                    "--by",
                    "crash harness",
                    "--note",
                    "read from the invoices the simulator finalized",
                ]
                .map(String::from),
            );
        }
        None => args.extend(
            [
                "--not-certified",
                "--by",
                "crash harness",
                "--note",
                "the simulator finalized no invoice with this uid",
            ]
            .map(String::from),
        ),
    }
    args
}

/// An intent's id as `intent list --json` gives it (a string, or a number).
pub(super) fn intent_id(intent: &Value) -> String {
    match &intent["intent"] {
        Value::String(id) => id.clone(),
        other => other.to_string(),
    }
}
