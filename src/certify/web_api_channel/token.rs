//! The token of an e-MCF: read from its file, read again when the file changes, never shown
//! (its `Debug` is redacted; it goes only into the `Authorization` header, marked sensitive).

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::SystemTime;

use hyper::header::HeaderValue;

/// A token. Its text never leaves this module except as a header value.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(redacted)")
    }
}

impl Token {
    /// The `Authorization` header value, marked sensitive (hyper keeps it out of its logs).
    pub(super) fn header(&self) -> Result<HeaderValue, TokenError> {
        let mut value = HeaderValue::from_str(&format!("Bearer {}", self.0))
            .map_err(|_| TokenError::Malformed)?;
        value.set_sensitive(true);
        Ok(value)
    }
}

/// Why the token cannot be used. No variant carries the token's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// The file cannot be read.
    #[error("the token file {path} cannot be read: {why}")]
    Unreadable {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// The file is empty.
    #[error("the token file {0} is empty: paste the e-MCF's token from the DGI portal into it")]
    Empty(String),
    /// The text cannot be sent in a header (a control character, a line break inside).
    #[error("the token file holds characters that cannot be sent in an HTTP header")]
    Malformed,
}

impl From<TokenError> for crate::certify::TokenReason {
    fn from(error: TokenError) -> Self {
        use crate::certify::TokenReason;
        match error {
            TokenError::Unreadable { path, why } => TokenReason::FileUnreadable { path, why },
            TokenError::Empty(path) => TokenReason::FileEmpty { path },
            TokenError::Malformed => TokenReason::Malformed,
        }
    }
}

/// A token given as text rather than as a file: a device kept in the store, its token opened
/// from its sealed form (`src/certify/stored_devices.rs`). Never shown (`Debug` redacted).
#[derive(Clone, PartialEq, Eq)]
pub struct GivenToken(Token);

impl std::fmt::Debug for GivenToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GivenToken(redacted)")
    }
}

impl GivenToken {
    /// `text` as a token (a `Bearer ` prefix and spaces around left out, as in a file).
    pub fn new(text: &str) -> Result<GivenToken, TokenError> {
        let text = text.trim();
        let text = text.strip_prefix("Bearer ").unwrap_or(text).trim();
        if text.is_empty() {
            return Err(TokenError::Empty(String::new()));
        }
        let token = Token(text.to_owned());
        token.header()?;
        Ok(GivenToken(token))
    }
}

/// The token file, read again when its modification time or size changes; or the token
/// given ([`GivenToken`]), the file then unused.
pub(super) struct TokenFile {
    path: PathBuf,
    given: Option<Token>,
    cached: Mutex<Option<(Option<SystemTime>, u64, Token)>>,
}

impl TokenFile {
    pub(super) fn new(path: PathBuf, given: Option<GivenToken>) -> TokenFile {
        TokenFile {
            path,
            given: given.map(|given| given.0),
            cached: Mutex::new(None),
        }
    }

    /// The current token.
    pub(super) fn current(&self) -> Result<Token, TokenError> {
        if let Some(token) = &self.given {
            return Ok(token.clone());
        }
        let unreadable = |e: std::io::Error| TokenError::Unreadable {
            path: self.path.display().to_string(),
            why: e.to_string(),
        };
        let meta = std::fs::metadata(&self.path).map_err(unreadable)?;
        let stamp = (meta.modified().ok(), meta.len());
        let mut cached = crate::sync::lock(&self.cached);
        if let Some((modified, len, token)) = cached.as_ref() {
            if (*modified, *len) == stamp {
                return Ok(token.clone());
            }
        }
        let text = std::fs::read_to_string(&self.path).map_err(unreadable)?;
        let text = text.trim();
        let text = text.strip_prefix("Bearer ").unwrap_or(text).trim();
        if text.is_empty() {
            return Err(TokenError::Empty(self.path.display().to_string()));
        }
        let token = Token(text.to_owned());
        token.header()?;
        *cached = Some((stamp.0, stamp.1, token.clone()));
        Ok(token)
    }

    /// Whether users other than the service's may read the file (a warning at start-up).
    pub(super) fn readable_by_others(&self) -> bool {
        if self.given.is_some() {
            return false;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(&self.path)
                .map(|meta| meta.permissions().mode() & 0o077 != 0)
                .unwrap_or(false)
        }
        #[cfg(not(unix))]
        {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_never_shown_and_is_read_again_when_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "eyJ.first.sig\n").unwrap();
        let file = TokenFile::new(path.clone(), None);
        let first = file.current().unwrap();
        assert_eq!(format!("{first:?}"), "Token(redacted)");
        assert!(first.header().unwrap().is_sensitive());
        std::fs::write(&path, "Bearer eyJ.second.longer.sig").unwrap();
        let second = file.current().unwrap();
        assert_ne!(first, second);
        assert_eq!(second.header().unwrap(), "Bearer eyJ.second.longer.sig");
        std::fs::write(&path, "  \n").unwrap();
        let error = file.current().unwrap_err();
        assert!(matches!(error, TokenError::Empty(_)));
        assert!(!error.to_string().contains("eyJ"));
    }

    #[test]
    fn a_given_token_is_used_instead_of_the_file_and_never_shown() {
        let given = GivenToken::new("Bearer eyJ.given.sig\n").unwrap();
        assert_eq!(format!("{given:?}"), "GivenToken(redacted)");
        let file = TokenFile::new(PathBuf::from("/nonexistent/token"), Some(given));
        assert_eq!(
            file.current().unwrap().header().unwrap(),
            "Bearer eyJ.given.sig"
        );
        assert!(!file.readable_by_others());
        assert!(GivenToken::new(" ").is_err());
        assert_eq!(
            GivenToken::new("a\u{7}b").unwrap_err(),
            TokenError::Malformed
        );
    }
}
