//! The admin socket: `<state_dir>/admin.sock`, a Unix socket (mode 0600: root or the service
//! user only) on which the running service takes one JSON `AdminRequest` per line and answers
//! one JSON line, `{"ok": ...}` or `{"error": "..."}`. The CLI uses it while the service
//! runs, and opens the store itself when it does not.
//!
//! A request may carry `"lang": "fr"` or `"en"` next to its `op` (since 1.6.0): the error's
//! text is then in that language, the CLI's, else in the service's default language.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use super::{Admin, AdminError, AdminRequest};
use crate::i18n::{default_lang, Lang, Localized, Message};
use crate::msg;

/// The socket's path in a state directory.
pub fn path_in(state_dir: &Path) -> PathBuf {
    state_dir.join("admin.sock")
}

/// Answers the requests only the running service can ([`AdminRequest::needs_service`]:
/// a device probe, the invoices in doubt): they need the channels, which are async. Texts
/// (a probe's words, an error) are in the given language.
pub type ServiceRequests = Arc<
    dyn Fn(
            AdminRequest,
            Lang,
        )
            -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, Message>> + Send>>
        + Send
        + Sync,
>;

/// Told after each request the service answered itself (organizations, keys, tokens may have
/// changed): the certification service's status reads them again.
pub type AfterRequest = Arc<dyn Fn() + Send + Sync>;

/// Longest request line accepted.
const MAX_LINE: usize = 64 * 1024;

/// Serves the admin socket until `stop` is cancelled.
pub async fn serve(
    path: PathBuf,
    admin: Arc<Admin>,
    service_requests: Option<ServiceRequests>,
    after_request: Option<AfterRequest>,
    stop: CancellationToken,
) -> std::io::Result<()> {
    // A socket left by a killed process would make bind fail.
    if path.exists() {
        std::fs::remove_file(&path)?;
    }
    let listener = UnixListener::bind(&path)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    info!(path = %path.display(), "admin socket listening");
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    warn!(%error, "admin socket accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let admin = Arc::clone(&admin);
        let service_requests = service_requests.clone();
        let after_request = after_request.clone();
        tokio::spawn(async move {
            if let Err(error) = serve_client(stream, admin, service_requests, after_request).await {
                warn!(%error, "admin client failed");
            }
        });
    }
    let _ = std::fs::remove_file(&path);
    Ok(())
}

async fn serve_client(
    stream: UnixStream,
    admin: Arc<Admin>,
    service_requests: Option<ServiceRequests>,
    after_request: Option<AfterRequest>,
) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = AsyncBufReader::new(read.take(MAX_LINE as u64 * 64)).lines();
    while let Some(line) = lines.next_line().await? {
        let (request, lang) = read_request(&line);
        let refused = |message: Message| json!({ "error": message.render(lang) });
        let answer = match request {
            Ok(request) if request.needs_service() => match &service_requests {
                Some(service_requests) => match service_requests(request, lang).await {
                    Ok(value) => json!({ "ok": value }),
                    Err(error) => refused(error),
                },
                None => refused(msg!("admin-no-channel")),
            },
            Ok(request) => {
                let admin = Arc::clone(&admin);
                match tokio::task::spawn_blocking(move || admin.handle(request)).await {
                    Ok(Ok(value)) => {
                        if let Some(after_request) = &after_request {
                            after_request();
                        }
                        json!({ "ok": value })
                    }
                    Ok(Err(error)) => refused(error.message()),
                    Err(error) => refused(AdminError::Internal(error.to_string()).message()),
                }
            }
            Err(error) => refused(msg!("admin-bad-request", detail = error.to_string())),
        };
        let mut bytes = serde_json::to_vec(&answer).unwrap_or_else(|_| b"{}".to_vec());
        bytes.push(b'\n');
        write.write_all(&bytes).await?;
    }
    Ok(())
}

/// A request line: the request, and the language its answer's texts are to be in (`lang`,
/// else the service's default).
fn read_request(line: &str) -> (Result<AdminRequest, serde_json::Error>, Lang) {
    let value = match serde_json::from_str::<Value>(line) {
        Ok(value) => value,
        Err(error) => return (Err(error), default_lang()),
    };
    let lang = value
        .get("lang")
        .and_then(Value::as_str)
        .and_then(Lang::parse)
        .unwrap_or_else(default_lang);
    (serde_json::from_value(value), lang)
}

use tokio::io::AsyncReadExt as _;

/// Sends one request to the service at `path`, asking for its texts in `lang`. `Ok(None)`
/// when no service listens there.
pub fn call(path: &Path, request: &AdminRequest, lang: Lang) -> Result<Option<Value>, AdminError> {
    let mut stream = match StdUnixStream::connect(path) {
        Ok(stream) => stream,
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Ok(None)
        }
        Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(AdminError::SocketDenied(path.to_path_buf()))
        }
        Err(error) => return Err(AdminError::Socket(error.to_string())),
    };
    let mut request =
        serde_json::to_value(request).map_err(|e| AdminError::Socket(e.to_string()))?;
    if let Some(fields) = request.as_object_mut() {
        fields.insert("lang".to_owned(), Value::from(lang.code()));
    }
    let mut line = serde_json::to_vec(&request).map_err(|e| AdminError::Socket(e.to_string()))?;
    line.push(b'\n');
    stream
        .write_all(&line)
        .map_err(|e| AdminError::Socket(e.to_string()))?;
    let mut answer = String::new();
    BufReader::new(stream)
        .read_line(&mut answer)
        .map_err(|e| AdminError::Socket(e.to_string()))?;
    let value: Value =
        serde_json::from_str(&answer).map_err(|e| AdminError::Socket(e.to_string()))?;
    if let Some(error) = value.get("error").and_then(Value::as_str) {
        return Err(AdminError::Service(error.to_string()));
    }
    Ok(Some(value.get("ok").cloned().unwrap_or(Value::Null)))
}
