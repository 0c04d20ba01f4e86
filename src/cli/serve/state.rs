//! What `serve` opens in the state directory besides the devices: the register (halted
//! rather than refused when it is damaged) and the alerts' raised state.

use std::path::Path;
use std::sync::Arc;
use tracing::{error, info};

use super::super::errors::Say;
use crate::alerts::{AlertEngine, EngineSettings};
use crate::config::Config;
use crate::msg;
use crate::notices::Notices;
use crate::store::{Store, StoreError, StoreOptions};

/// The register in `state_dir`; `Ok(Err(reason))` when it is damaged (the service then runs
/// halted: 503, nothing written).
pub(super) fn open_register(
    state_dir: &Path,
    config: &Config,
) -> anyhow::Result<Result<Arc<Store>, String>> {
    match Store::open_with(state_dir, &store_options(config)) {
        Ok(store) => {
            info!(state_dir = %state_dir.display(), "register open");
            Ok(Ok(Arc::new(store)))
        }
        Err(error @ StoreError::Damaged { .. }) => {
            let reason = error.to_string();
            error!(
                state_dir = %state_dir.display(),
                %reason,
                "THE INVOICE REGISTER IS DAMAGED: certification is stopped (503) until an operator restores journal/journal.log from a backup, or runs `emcf-gateway index rebuild` if only the index disagrees"
            );
            Ok(Err(reason))
        }
        Err(error) => {
            Err(error).say(|| msg!("cli-register-open", dir = state_dir.display().to_string()))
        }
    }
}

/// A journal from this size on (about 45,000 invoices) is opened from the index's checkpoint
/// and its history checked in the background (`store/embedded/history.rs`): checking it before serving
/// would take about 1 s per 1,000,000 invoices. A smaller one is checked whole first (under
/// 50 ms). `EMCF_BACKGROUND_CHECK_ABOVE_BYTES` sets another size (tests use 0).
const BACKGROUND_CHECK_ABOVE_BYTES: u64 = 64 << 20;

fn store_options(config: &Config) -> StoreOptions {
    let above = std::env::var("EMCF_BACKGROUND_CHECK_ABOVE_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(BACKGROUND_CHECK_ABOVE_BYTES);
    StoreOptions {
        background_check_above: Some(above),
        index_cache_mib: config.index_cache_mib,
        ..StoreOptions::default()
    }
}

/// The alerts (`[alerts]`, `[smtp]`), their raised state read back from the state directory.
pub(super) fn alert_engine(
    config: &Config,
    state_dir: &Path,
    notices: Arc<Notices>,
) -> anyhow::Result<Arc<AlertEngine>> {
    let settings = EngineSettings {
        alerts: config.alerts.clone(),
        zone: config.offset(),
        lang: config.language,
        public_url: config.public_url.clone(),
    };
    let engine = AlertEngine::open(state_dir, settings, config.smtp.as_ref())
        .say(|| msg!("cli-alerts-setup"))?
        .with_notices(notices);
    Ok(Arc::new(engine))
}
