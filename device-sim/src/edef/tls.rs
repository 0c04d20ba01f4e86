//! HTTPS: a self-signed certificate made at start for `localhost`, `127.0.0.1` and `::1`,
//! served with rustls (ring). Its PEM is what a client adds to its trusted roots.

use std::sync::Arc;

use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

use super::EdefError;

/// The names the certificate is valid for.
pub const CERTIFICATE_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A TLS acceptor and the certificate it presents.
pub(crate) struct TlsIdentity {
    /// Accepts TLS connections with the certificate.
    pub acceptor: TlsAcceptor,
    /// The certificate, PEM.
    pub certificate_pem: String,
}

/// A new self-signed certificate and the acceptor that serves it (HTTP/1.1 over TLS 1.2
/// or 1.3).
pub(crate) fn self_signed() -> Result<TlsIdentity, EdefError> {
    let names: Vec<String> = CERTIFICATE_NAMES.iter().map(|&n| n.to_owned()).collect();
    let certified = rcgen::generate_simple_self_signed(names)
        .map_err(|e| EdefError::Tls(format!("making the certificate: {e}")))?;
    let certificate: CertificateDer<'static> = certified.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()));
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| EdefError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(vec![certificate], key)
        .map_err(|e| EdefError::Tls(e.to_string()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsIdentity {
        acceptor: TlsAcceptor::from(Arc::new(config)),
        certificate_pem: certified.cert.pem(),
    })
}
