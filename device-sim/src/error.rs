//! Errors of the simulator engine: configuration and fiscal memory file.
//!
//! A command the device refuses is not an error here: it is an `E:` reply (see
//! [`crate::invoice::Refusal`]). These errors stop the device from starting, or make a
//! finalization fail before anything is committed.

use std::io;
use std::path::PathBuf;

/// Why the simulated device cannot start, or cannot commit an invoice.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The fiscal memory file cannot be read or written.
    #[error("fiscal memory file {}: {source}", path.display())]
    StateFile {
        /// The file (or, when writing, its directory or temporary file).
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The fiscal memory file exists but is not a fiscal memory this simulator wrote.
    #[error("fiscal memory file {} is corrupt: {reason}", path.display())]
    CorruptState {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Another simulator has this fiscal memory file open.
    #[error("fiscal memory file {} is in use by another simulator", path.display())]
    InUse {
        /// The file.
        path: PathBuf,
    },
    /// The device configuration cannot be used (e.g. a rate with 3 decimals).
    #[error("invalid device configuration: {reason}")]
    Config {
        /// What is wrong.
        reason: String,
    },
    /// The fiscal memory holds as many invoices as it can; nothing more can be committed.
    #[error("fiscal memory full ({capacity} invoices)")]
    MemoryFull {
        /// The capacity reached.
        capacity: u64,
    },
}
