//! [`PgStore`]: the PostgreSQL store as the seam (`store::Store`) uses it. The seam's methods
//! block, as the embedded store's do, and callers run them off the runtime's workers; this
//! store's client is async, so each method runs its future to the end on the runtime's
//! handle from the caller's thread (a thread of the blocking pool in the service, the CLI's
//! main thread with a runtime of its own). A method called on a worker by mistake still
//! works: it hands the worker's other tasks over first (`block_in_place`) instead of stalling
//! them.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::runtime::{Handle, Runtime};

use super::{migrate, Migrated, PgError, PgPool, PgRegister, PgSettings, Refusal, MIGRATIONS};
use crate::store::{FaultKind, StoreError, WriteFault};
use crate::sync::lock;

/// How many times a write another writer raced ([`Refusal::Raced`]) is tried before it is
/// answered as a conflict.
const RACED_TRIES: usize = 5;

/// The longest an operation may take, connection included: a server that holds a COMMIT (a
/// synchronous standby gone, a lock never released, a half-open connection) is a server
/// that does not answer, never an invoice that waits for ever holding its channel. The
/// operation is dropped (its connection closed, its transaction rolled back unless its
/// COMMIT was already under way: settled from the database, never guessed).
const OPERATION_LIMIT: Duration = Duration::from_secs(10);

/// The probe's limit: shorter, so that the watch looks again soon.
const PROBE_LIMIT: Duration = Duration::from_secs(5);

/// The probe: a transaction with an id, committed, so that it waits where a certification's
/// COMMIT would (a synchronous standby), not only for the server to answer.
const PROBE: &str = "BEGIN; SELECT pg_current_xact_id(); COMMIT";

/// The PostgreSQL store: its register and the runtime its client runs on.
pub struct PgStore {
    register: PgRegister,
    /// The server stopped answering (an operation failed unreachable, or a COMMIT's outcome
    /// is unknown): the register counts as unwritable, as a full disk does for the embedded
    /// store, until [`PgStore::resume_writes`] reaches the server again.
    fault: Mutex<Option<WriteFault>>,
    handle: Handle,
    /// The runtime this store made for itself (the CLI), dropped with it; `None` in the
    /// service, which runs on its own.
    _runtime: Option<Arc<Runtime>>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("register", &self.register)
            .finish()
    }
}

impl PgStore {
    /// Connects to the server of `settings` and brings its schema to this binary's
    /// migrations (refusing a newer one), on the current runtime (the service's).
    pub async fn open(settings: &PgSettings) -> Result<(PgStore, Migrated), PgError> {
        let pool = PgPool::connect(settings).await?;
        let migrated = migrate(&pool, MIGRATIONS).await?;
        let store = PgStore {
            register: PgRegister::new(pool),
            fault: Mutex::new(None),
            handle: Handle::current(),
            _runtime: None,
        };
        Ok((store, migrated))
    }

    /// As [`PgStore::open`], from a thread with no runtime (a CLI command): the store keeps a
    /// small runtime of its own for its connections.
    pub fn open_blocking(settings: &PgSettings) -> Result<(PgStore, Migrated), PgError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("emcf-store")
            .enable_all()
            .build()
            .map_err(|e| PgError::Settings {
                reason: format!("starting the PostgreSQL client's runtime: {e}"),
            })?;
        let runtime = Arc::new(runtime);
        let (mut store, migrated) = runtime.block_on(PgStore::open(settings))?;
        store._runtime = Some(runtime);
        Ok((store, migrated))
    }

    /// The register, for what the seam calls.
    pub fn register(&self) -> &PgRegister {
        &self.register
    }

    /// Runs `work` to its end from the calling thread (never from inside a current-thread
    /// runtime: `block_in_place` refuses it), for at most [`OPERATION_LIMIT`].
    pub fn run<T>(&self, work: impl Future<Output = Result<T, PgError>>) -> Result<T, StoreError> {
        self.run_long(OPERATION_LIMIT, work)
    }

    /// [`PgStore::run`] for work that reads the whole register (`log verify`), which may take
    /// minutes on a large one: at most `limit`.
    pub fn run_long<T>(
        &self,
        limit: Duration,
        work: impl Future<Output = Result<T, PgError>>,
    ) -> Result<T, StoreError> {
        self.within(limit, work).map_err(|error| {
            if error.is_unreachable() {
                self.fault_seen(&error);
            }
            StoreError::from(error)
        })
    }

    /// `work` run to its end from the calling thread, or `Unreachable` after `limit`. On a
    /// thread of the blocking pool or with no runtime, `block_in_place` just runs the closure;
    /// on a worker of the service's runtime it first hands the worker's other tasks over.
    fn within<T>(
        &self,
        limit: Duration,
        work: impl Future<Output = Result<T, PgError>>,
    ) -> Result<T, PgError> {
        // The timer is made inside `block_on`, in the runtime's context (a CLI's thread has none).
        let limited = async move { tokio::time::timeout(limit, work).await };
        match tokio::task::block_in_place(|| self.handle.block_on(limited)) {
            Ok(outcome) => outcome,
            Err(_) => Err(PgError::Unreachable {
                target: self.register.pool().target().to_owned(),
                reason: format!("no answer within {} s", limit.as_secs()),
            }),
        }
    }

    /// One [`PROBE`] on a connection of the pool.
    fn ping(&self) -> Result<(), PgError> {
        let pool = self.register.pool();
        self.within(PROBE_LIMIT, async {
            let client = pool.client().await?;
            client
                .batch_execute(PROBE)
                .await
                .map_err(|e| pool.query_error("asking the server whether it commits", &e))
        })
    }

    /// Keeps the first sign that the server does not answer.
    fn fault_seen(&self, error: &PgError) {
        let mut fault = lock(&self.fault);
        if fault.is_none() {
            tracing::error!(%error, "the register's PostgreSQL server does not answer: new invoices are refused until it does");
            *fault = Some(WriteFault {
                kind: FaultKind::Database,
                detail: error.to_string(),
                since: chrono::Utc::now(),
            });
        }
    }

    /// Why the register cannot be written now, if the server stopped answering.
    pub fn write_fault(&self) -> Option<WriteFault> {
        lock(&self.fault).clone()
    }

    /// Asks the server whether it commits, while no fault is kept (one short transaction): a
    /// server gone, or holding its commits, while no invoice was under way is a fault before
    /// the next invoice meets it.
    pub fn probe(&self) {
        if lock(&self.fault).is_some() {
            return;
        }
        if let Err(error) = self.ping() {
            if error.is_unreachable() {
                self.fault_seen(&error);
            }
        }
    }

    /// Asks the server again after a fault: `Ok(true)` once it commits (the fault is lifted),
    /// `Ok(false)` without a fault, the error while it still does not.
    pub fn resume_writes(&self) -> Result<bool, StoreError> {
        if lock(&self.fault).is_none() {
            return Ok(false);
        }
        self.ping()?;
        *lock(&self.fault) = None;
        tracing::info!("the register's PostgreSQL server answers again: certification resumes");
        Ok(true)
    }

    /// Runs a write whose rules the schema holds, `tries` times while another writer raced
    /// it; a rule it broke becomes the [`StoreError`] the embedded store answers for it.
    pub fn write<T, F, W>(
        &self,
        mut attempt: W,
        refused: impl Fn(Refusal) -> StoreError,
    ) -> Result<T, StoreError>
    where
        W: FnMut() -> F,
        F: Future<Output = super::Written<T>>,
    {
        for _ in 1..RACED_TRIES {
            match self.run(attempt())? {
                Ok(done) => return Ok(done),
                Err(Refusal::Raced) => continue,
                Err(refusal) => return Err(refused(refusal)),
            }
        }
        match self.run(attempt())? {
            Ok(done) => Ok(done),
            Err(refusal) => Err(refused(refusal)),
        }
    }
}
