//! The demo organization of a gateway without configured devices: created on the bundled
//! simulator at the first start that listens, with one live and one sandbox key shown once;
//! a later start says how to get another key.
//!
//! The keys are printed only to a terminal. A service whose output is not one (systemd's
//! journal, a log file, a pipe) writes them to `<state>/demo-keys.txt` (0600) and prints
//! that file's path: keys never go to a log that others may read.
//!
//! The lines `emcf-gateway listening on http://ADDR`, `live key: KEY` and `sandbox key: KEY`
//! (on the terminal, or in the keys file) are read by scripts and tests: they stay as they are
//! in every language.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

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
/// The file of the demo keys when the output is not a terminal, in the state directory.
pub const KEYS_FILE: &str = "demo-keys.txt";

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

/// Creates the demo organization with its two keys unless it exists (its name and the keys'
/// labels in the installation's language).
pub(super) fn ensure_organization(store: &Store) -> anyhow::Result<DemoKeys> {
    if store.organization(DEMO_ORG)?.is_some() {
        return Ok(DemoKeys::Existing);
    }
    let lang = default_lang();
    store.save_organization(Organization {
        id: DEMO_ORG.to_string(),
        name: msg!("cli-demo-org-name").render(lang),
        nif: embedded::simulator_nif(),
        isf: "ISF-DEMO-001".to_string(),
        plan: Plan::Start,
        quota_override: None,
        device: EMBEDDED_DEVICE.to_string(),
        admin_emails: Vec::new(),
        max_invoice_total: None,
    })?;
    let now = chrono::Utc::now();
    let live_label = msg!("cli-demo-live-label").render(lang);
    let sandbox_label = msg!("cli-demo-sandbox-label").render(lang);
    let live = keys::issue(DEMO_ORG, Environment::Production, &live_label, now);
    let sandbox = keys::issue(DEMO_ORG, Environment::Sandbox, &sandbox_label, now);
    store.issue_key(live.record)?;
    store.issue_key(sandbox.record)?;
    Ok(DemoKeys::Created {
        live: live.plaintext,
        sandbox: sandbox.plaintext,
    })
}

/// Prints what the operator needs: the keys once (on a terminal, else in the keys file of
/// `state_dir`, whose path is printed), or how to get one.
pub(super) fn print(addr: SocketAddr, demo: &DemoKeys, state_dir: &Path) -> anyhow::Result<()> {
    let lang = default_lang();
    let host = if addr.ip().is_unspecified() {
        format!("127.0.0.1:{}", addr.port())
    } else {
        addr.to_string()
    };
    match demo {
        DemoKeys::NotDemo => {}
        DemoKeys::Existing => {
            let file = state_dir.join(KEYS_FILE);
            println!(
                "{}",
                msg!(
                    "cli-demo-existing",
                    org = DEMO_ORG,
                    file = file.display().to_string()
                )
                .render(lang)
            );
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
            let keys = keys_text(&host, live, sandbox);
            if std::io::stdout().is_terminal() {
                println!("{}", msg!("cli-demo-created").render(lang));
                print!("{keys}");
            } else {
                let file = write_keys(state_dir, &keys)?;
                println!("{}", msg!("cli-demo-created-file").render(lang));
                println!("  {}", file.display());
            }
        }
    }
    Ok(())
}

/// The keys, how to try them, and how to get another: what the terminal or the file shows.
fn keys_text(host: &str, live: &str, sandbox: &str) -> String {
    let lang = default_lang();
    let mut text = format!("live key: {live}\nsandbox key: {sandbox}\n");
    text.push_str(&format!("{}\n", msg!("cli-demo-try").render(lang)));
    text.push_str(&format!(
        "curl -s http://{host}/api/v1/Invoice -H 'Authorization: Bearer {live}' -H 'Content-Type: application/json' -d '{{\"rn\":\"DEMO-1\",\"mode\":\"ttc\",\"type\":\"FV\",\"curCode\":\"CDF\",\"curRate\":\"-1\",\"items\":[{{\"name\":\"STYLO BIC\",\"type\":\"BIE\",\"price\":\"1160.00\",\"quantity\":\"1\",\"taxGroup\":\"B\"}}],\"operator\":{{\"id\":\"1\",\"name\":\"Caisse 1\"}}}}'\n"
    ));
    text.push_str(&format!(
        "{}\n",
        msg!("cli-demo-lost", org = DEMO_ORG).render(lang)
    ));
    text
}

/// Writes the keys to `<state_dir>/demo-keys.txt`, readable by this user only: a new file
/// created 0600 and renamed over any older one, so the keys are never in a file others can
/// read, even for a moment.
fn write_keys(state_dir: &Path, text: &str) -> anyhow::Result<PathBuf> {
    let file = state_dir.join(KEYS_FILE);
    embedded::write_private(&file, text)?;
    Ok(file)
}
