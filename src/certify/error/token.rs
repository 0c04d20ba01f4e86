//! Why the DGI's web API does not take the e-MCF's token (error 155): the operator's words
//! for the logs, the client's from the catalogue.

use crate::i18n::Message;
use crate::msg;

/// Why the DGI's web API does not take the e-MCF's token (155). `Display` is the English of
/// the logs and the channel's status, with what only an operator needs (the file, the
/// system's words); the client's text ([`TokenReason::message`]) has neither.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenReason {
    /// The token file cannot be read.
    #[error("the token file {path} cannot be read: {why}")]
    FileUnreadable {
        /// The file.
        path: String,
        /// The system's words.
        why: String,
    },
    /// The token file is empty.
    #[error("the token file {path} is empty: paste the e-MCF's token from the DGI portal into it")]
    FileEmpty {
        /// The file.
        path: String,
    },
    /// The token cannot be sent in a header (a control character, a line break inside).
    #[error("the token file holds characters that cannot be sent in an HTTP header")]
    Malformed,
    /// The DGI answered 401 or 403.
    #[error("the DGI rejected the e-MCF's token (HTTP {status}): a new token is needed")]
    Rejected {
        /// The HTTP status.
        status: u16,
    },
}

impl TokenReason {
    /// Why, for the client, in the catalogue's words.
    pub fn message(&self) -> Message {
        match self {
            TokenReason::FileUnreadable { .. } => msg!("token-file-unreadable"),
            TokenReason::FileEmpty { .. } => msg!("token-file-empty"),
            TokenReason::Malformed => msg!("token-malformed"),
            TokenReason::Rejected { status } => msg!("token-rejected-by-dgi", status = *status),
        }
    }
}
