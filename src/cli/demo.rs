//! The demo organization of a gateway without configured devices: created on the bundled
//! simulator at the first start that listens, with one live and one sandbox key printed once;
//! a later start says how to get another key.
//!
//! The lines `emcf-gateway listening on http://ADDR`, `live key: KEY` and `sandbox key: KEY`
//! are read by scripts and tests: they stay as they are in every language.

use std::net::SocketAddr;

use super::embedded;
use crate::i18n::default_lang;
use crate::keys;
use crate::model::{Environment, Organization, Plan};
use crate::msg;
use crate::store::Store;

/// Name of the bundled simulator used when no device is configured.
pub const EMBEDDED_DEVICE: &str = "embedded";
/// Id of the demo organization created on the embedded simulator.
pub const DEMO_ORG: &str = "demo";

/// What a start has to say about the demo organization.
#[derive(Debug)]
pub(super) enum DemoKeys {
    /// Devices are configured: no demo.
    NotDemo,
    /// Created now: its keys, shown this once.
    Created {
        /// The `mcf_live_` key.
        live: String,
        /// The `mcf_test_` key.
        sandbox: String,
    },
    /// It existed: its keys were shown at its first start.
    Existing,
}

/// Creates the demo organization with its two keys unless it exists.
pub(super) fn ensure_organization(store: &Store) -> anyhow::Result<DemoKeys> {
    if store.organization(DEMO_ORG)?.is_some() {
        return Ok(DemoKeys::Existing);
    }
    store.save_organization(Organization {
        id: DEMO_ORG.to_string(),
        name: "Demo shop (simulated device, not fiscal)".to_string(),
        nif: embedded::simulator_nif(),
        isf: "ISF-DEMO-001".to_string(),
        plan: Plan::Start,
        quota_override: None,
        device: EMBEDDED_DEVICE.to_string(),
        admin_emails: Vec::new(),
        max_invoice_total: None,
    })?;
    let now = chrono::Utc::now();
    let live = keys::issue(DEMO_ORG, Environment::Production, "demo live key", now);
    let sandbox = keys::issue(DEMO_ORG, Environment::Sandbox, "demo sandbox key", now);
    store.issue_key(live.record)?;
    store.issue_key(sandbox.record)?;
    Ok(DemoKeys::Created {
        live: live.plaintext,
        sandbox: sandbox.plaintext,
    })
}

/// Prints what the operator needs: the keys once, or how to get one.
pub(super) fn print(addr: SocketAddr, demo: &DemoKeys) {
    let lang = default_lang();
    let host = if addr.ip().is_unspecified() {
        format!("127.0.0.1:{}", addr.port())
    } else {
        addr.to_string()
    };
    match demo {
        DemoKeys::NotDemo => {}
        DemoKeys::Existing => {
            println!("{}", msg!("cli-demo-existing", org = DEMO_ORG).render(lang));
            println!("  emcf-gateway key issue --org {DEMO_ORG}");
            println!(
                "{}",
                msg!(
                    "cli-demo-dashboard",
                    url = format!("http://{host}/dashboard")
                )
                .render(lang)
            );
            println!("  emcf-gateway dashboard-token issue --org {DEMO_ORG}");
        }
        DemoKeys::Created { live, sandbox } => {
            println!("{}", msg!("cli-demo-created").render(lang));
            println!("live key: {live}");
            println!("sandbox key: {sandbox}");
            println!("{}", msg!("cli-demo-try").render(lang));
            println!(
                "curl -s http://{host}/api/v1/Invoice -H 'Authorization: Bearer {live}' -H 'Content-Type: application/json' -d '{{\"rn\":\"DEMO-1\",\"mode\":\"ttc\",\"type\":\"FV\",\"curCode\":\"CDF\",\"curRate\":\"-1\",\"items\":[{{\"name\":\"STYLO BIC\",\"type\":\"BIE\",\"price\":\"1160.00\",\"quantity\":\"1\",\"taxGroup\":\"B\"}}],\"operator\":{{\"id\":\"1\",\"name\":\"Caisse 1\"}}}}'"
            );
            println!("{}", msg!("cli-demo-lost", org = DEMO_ORG).render(lang));
        }
    }
}
