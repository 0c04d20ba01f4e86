//! Journaling the outcomes of a certification through the store, off the async threads:
//! the certification (from a 38h reply or a C1h reconciliation) and the abandonment.

use std::sync::Arc;

use chrono::{Datelike, FixedOffset, Utc};
use mcf_sfe::reply::Certification;

use crate::certify::CertifyError;
use crate::model::{IntentId, RegisterEntry, SecurityElements};
use crate::store::{Store, StoreError};

/// Journals the certification of `intent` (fsync'd before this returns) and returns its
/// LogInvoices entry. `source` says how it was learnt: `finalize` or `reconciled`.
pub(crate) async fn record_certification(
    store: &Arc<Store>,
    offset: FixedOffset,
    intent: IntentId,
    certification: &Certification,
    source: &'static str,
) -> Result<RegisterEntry, CertifyError> {
    let certified_at = Utc::now();
    let quota_year = certified_at.with_timezone(&offset).year();
    let security = security_elements(certification);
    blocking(store, move |store| {
        store.record_certified(intent, quota_year, certified_at, security, source)
    })
    .await
}

/// Journals that `intent` was not finalized on the device.
pub(crate) async fn record_abandonment(
    store: &Arc<Store>,
    intent: IntentId,
    reason: String,
) -> Result<(), CertifyError> {
    blocking(store, move |store| store.record_abandoned(intent, &reason)).await
}

/// The security elements of a certification.
pub(crate) fn security_elements(certification: &Certification) -> SecurityElements {
    SecurityElements {
        code_def: certification.code_def.clone(),
        qr_code: certification.qr_code(),
        counters: certification.counters(),
        nim: certification.mid.clone(),
        date_time: certification.at,
    }
}

/// Runs a blocking store call on the blocking pool (the store fsyncs).
pub(crate) async fn blocking<T, F>(store: &Arc<Store>, call: F) -> Result<T, CertifyError>
where
    T: Send + 'static,
    F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
{
    let store = Arc::clone(store);
    tokio::task::spawn_blocking(move || call(&store))
        .await
        .map_err(|e| CertifyError::Internal(format!("store task failed: {e}")))?
        .map_err(CertifyError::from)
}
