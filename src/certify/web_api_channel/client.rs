//! The HTTP(S) client of one e-MCF on the web API: hyper with rustls (no OpenSSL), a connect
//! timeout and a timeout on each whole call, the token from its file. What a failed call
//! means is typed ([`CallError`]): nothing reached the DGI, or the request may have reached it
//! and its answer was lost; that difference is what the channel settles on.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use hyper::{Method, Request};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::settings::WebApiSettings;
use super::token::{TokenError, TokenFile};

/// Largest answer body read (the API's answers are small).
const MAX_ANSWER: usize = 1 << 20;

/// An answer with its status.
#[derive(Debug)]
pub(super) struct Answer {
    pub status: u16,
    pub body: Bytes,
}

/// Why a call got no answer.
#[derive(Debug, thiserror::Error)]
pub(super) enum CallError {
    /// Nothing reached the DGI (no connection, bad URL, the token unusable).
    #[error("the DGI could not be reached: {0}")]
    NotSent(String),
    /// The token cannot be used (nothing was sent).
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The request may have reached the DGI; its answer was lost (timeout, reset, cut body).
    #[error("no answer from the DGI: {0}")]
    Lost(String),
}

/// The client of one e-MCF.
pub(super) struct DgiClient {
    http: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    base: String,
    token: TokenFile,
    request_timeout: Duration,
}

impl DgiClient {
    /// A client for `settings`; fails when its CA file cannot be read.
    pub(super) fn new(settings: &WebApiSettings) -> Result<DgiClient, String> {
        let tls = tls_config(settings)?;
        let mut http = HttpConnector::new();
        http.set_connect_timeout(Some(settings.connect_timeout));
        http.enforce_http(false);
        http.set_nodelay(true);
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let http = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector);
        Ok(DgiClient {
            http,
            base: settings.url.clone(),
            token: TokenFile::new(settings.token_file.clone(), settings.token.clone()),
            request_timeout: settings.request_timeout,
        })
    }

    pub(super) fn token_file(&self) -> &TokenFile {
        &self.token
    }

    /// One call: `method` on `path` under the base, with a JSON `body`.
    pub(super) async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Answer, CallError> {
        let token = self.token.current()?;
        let uri = format!("{}{path}", self.base);
        let mut request = Request::builder()
            .method(method)
            .uri(&uri)
            .header(ACCEPT, "application/json")
            .header(AUTHORIZATION, token.header()?);
        if body.is_some() {
            request = request.header(CONTENT_TYPE, "application/json");
        }
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| CallError::NotSent(format!("bad request to {uri}: {e}")))?;
        let exchange = async {
            let response = self.http.request(request).await.map_err(|e| {
                if e.is_connect() {
                    CallError::NotSent(error_chain(&e))
                } else {
                    CallError::Lost(error_chain(&e))
                }
            })?;
            let status = response.status().as_u16();
            let body = http_body_util::Limited::new(response.into_body(), MAX_ANSWER)
                .collect()
                .await
                .map_err(|e| CallError::Lost(format!("the answer was cut: {e}")))?
                .to_bytes();
            Ok(Answer { status, body })
        };
        match tokio::time::timeout(self.request_timeout, exchange).await {
            Ok(result) => result,
            Err(_) => Err(CallError::Lost(format!(
                "no answer within {} s",
                self.request_timeout.as_secs_f32()
            ))),
        }
    }
}

/// The error and its sources, in one line (hyper's own message is terse).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The TLS settings: the public roots, or only the certificates of `ca_file`.
fn tls_config(settings: &WebApiSettings) -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    match &settings.ca_file {
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        Some(path) => {
            let pem = std::fs::read(path)
                .map_err(|e| format!("ca_file {} cannot be read: {e}", path.display()))?;
            let mut reader = std::io::BufReader::new(pem.as_slice());
            let mut added = 0;
            for cert in rustls_pemfile::certs(&mut reader) {
                let cert = cert.map_err(|e| format!("ca_file {}: {e}", path.display()))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("ca_file {}: {e}", path.display()))?;
                added += 1;
            }
            if added == 0 {
                return Err(format!(
                    "ca_file {} holds no PEM certificate",
                    path.display()
                ));
            }
        }
    }
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth())
}
