//! `examples/reverse-proxy/nginx.conf` run as written by a real nginx in front of the real
//! gateway (in the `example_clients` module: both run the integrator kit's examples as a
//! shop would): only its ports, the gateway's address and the certificate's paths are
//! replaced, and each replacement must find its text, so the example cannot drift from what
//! is tested. A self-signed certificate is made with the `openssl` command. Through HTTPS,
//! from another address than nginx's (127.0.0.2): the status, a certification, an invoice
//! above the gateway's body limit answered by the gateway's own JSON 413; the dashboard's
//! sign-in sees the client's address (not nginx's, not one the client claims in its own
//! `X-Forwarded-For`) and sets its session cookie `Secure`; plain HTTP redirects to HTTPS;
//! `/metrics` is refused to others than this machine.
//!
//! Without nginx (or openssl) the test is skipped with a note, except under CI (`CI` set),
//! where `.ci/run` installs nginx and a missing one fails.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use super::common::{
    add_org_with_key, config_with_device, csrf_field, form_body, get, invoice,
    issue_dashboard_token, needs, Gateway, Sim,
};

/// The client's own address: another one than nginx's, so that which one the gateway sees
/// tells.
const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// A tool that is not there: skipped, except under CI.
fn missing(what: &str, how: &str) {
    needs::missing(
        "the reverse-proxy example (examples/reverse-proxy)",
        what,
        how,
    );
}

/// The nginx binary (Debian puts it in /usr/sbin, not always on a user's PATH).
fn nginx() -> Option<PathBuf> {
    ["nginx", "/usr/sbin/nginx"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| needs::runs(p, &["-v"]))
}

/// A self-signed certificate for 127.0.0.1 and localhost: (certificate, key) in `dir`.
fn certificate(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        // A server's certificate, not a CA's (rustls refuses a CA as the end entity).
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .args(["-addext", "extendedKeyUsage=serverAuth"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    made.then_some((cert, key))
}

/// A free local port (bound, then let go).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    listener.local_addr().expect("addr").port()
}

/// `text` with `from` replaced by `to`; the example must still hold `from`.
fn replaced(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "examples/reverse-proxy/nginx.conf no longer has {from:?}: update the test with it"
    );
    text.replace(from, to)
}

/// nginx running the example; stopped when dropped.
struct Nginx(Child);

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts nginx in `dir` with the example, its upstream `gateway`, listening on `http` and
/// `https` with `cert`.
fn start_nginx(
    binary: &Path,
    dir: &Path,
    gateway: SocketAddr,
    (http, https): (u16, u16),
    (cert, key): (&Path, &Path),
) -> Nginx {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/reverse-proxy/nginx.conf");
    let mut site = std::fs::read_to_string(example).expect("the example");
    for (from, to) in [
        ("server 127.0.0.1:8080;", format!("server {gateway};")),
        ("listen 80;", format!("listen 127.0.0.1:{http};")),
        ("listen [::]:80;", String::new()),
        ("listen 443 ssl;", format!("listen 127.0.0.1:{https} ssl;")),
        ("listen [::]:443 ssl;", String::new()),
        (
            "/etc/letsencrypt/live/factures.example.cd/fullchain.pem",
            cert.display().to_string(),
        ),
        (
            "/etc/letsencrypt/live/factures.example.cd/privkey.pem",
            key.display().to_string(),
        ),
    ] {
        site = replaced(&site, from, &to);
    }
    std::fs::write(dir.join("site.conf"), site).expect("site");
    let d = dir.display();
    // As root, nginx's workers would run as nobody, who cannot enter the test's folder.
    let user = if needs::is_root() { "user root;\n" } else { "" };
    let main = format!(
        "{user}daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log info;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n  access_log {d}/access.log;\n  client_body_temp_path {d}/body;\n\
         proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n\
         scgi_temp_path {d}/scgi;\n  include {d}/site.conf;\n}}\n"
    );
    std::fs::write(dir.join("nginx.conf"), main).expect("nginx.conf");
    let child = Command::new(binary)
        .arg("-p")
        .arg(dir)
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .arg("-e")
        .arg(dir.join("error.log"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nginx starts");
    Nginx(child)
}

/// Waits until something listens on `port`.
async fn wait_listening(port: u16, dir: &Path) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
    panic!("nginx does not listen on {port}:\n{log}");
}

type Https = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// An HTTPS client from [`CLIENT`] that trusts only `cert`.
fn https_client(cert: &Path) -> Https {
    let pem = std::fs::read(cert).expect("certificate");
    let mut roots = rustls::RootCertStore::empty();
    for der in rustls_pemfile::certs(&mut pem.as_slice()) {
        roots.add(der.expect("PEM")).expect("root");
    }
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_local_address(Some(CLIENT));
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_only()
        .enable_http1()
        .wrap_connector(http);
    Client::builder(TokioExecutor::new()).build(connector)
}

/// An answer: status, headers (lower-case names), body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    fn all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

async fn send(
    client: &Https,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Answer {
    let mut request = hyper::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::from(body))).expect("request");
    let response = tokio::time::timeout(Duration::from_secs(20), client.request(request))
        .await
        .unwrap_or_else(|_| panic!("{method} {url}: no answer in time"))
        .unwrap_or_else(|e| panic!("{method} {url}: {e:?}"));
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// The value of cookie `name` among the `Set-Cookie` headers, and that whole header.
fn cookie<'a>(answer: &'a Answer, name: &str) -> Option<(&'a str, &'a str)> {
    answer.all("set-cookie").into_iter().find_map(|header| {
        let value = header.strip_prefix(&format!("{name}="))?;
        Some((value.split(';').next().unwrap_or(""), header))
    })
}

/// Loads the sign-in form and posts `token` with `more` headers, through nginx at `base`.
async fn sign_in(client: &Https, base: &str, token: &str, more: &[(&str, &str)]) -> Answer {
    let form = send(
        client,
        "GET",
        &format!("{base}/dashboard/login"),
        more,
        Vec::new(),
    )
    .await;
    assert_eq!(form.status, 200, "{}", form.body);
    let (signin, _) = cookie(&form, "emcf_signin").expect("sign-in cookie");
    let field = csrf_field(&form.body).expect("form value");
    let cookie = format!("emcf_signin={signin}");
    let mut headers = vec![
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("Origin", base),
        ("Cookie", cookie.as_str()),
    ];
    headers.extend_from_slice(more);
    let body = form_body(&[("csrf", &field), ("token", token)]).into_bytes();
    send(
        client,
        "POST",
        &format!("{base}/dashboard/login"),
        &headers,
        body,
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_nginx_example_serves_the_gateway_over_https_and_passes_the_client_address() {
    let Some(binary) = nginx() else {
        return missing("no nginx", "install Debian's nginx; .ci/run does");
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let Some((cert, key)) = certificate(dir.path()) else {
        return missing(
            "openssl could not make a certificate",
            "install Debian's openssl; .ci/run does",
        );
    };
    let sim = Sim::start(dir.path()).await;
    let config = format!(
        "{}\n[http]\ntrusted_proxies = [\"127.0.0.1\"]\nmax_connections_per_peer = 256\n",
        config_with_device(dir.path(), &sim.link)
    );
    let gateway = Gateway::start(dir.path(), &config);
    let key_text = tokio::task::block_in_place(|| {
        add_org_with_key(dir.path(), &gateway.config, "acme", "shop", None)
    });
    gateway.wait_ready().await;
    let token = issue_dashboard_token(&gateway, "acme");

    let nginx_dir = dir.path().join("nginx");
    std::fs::create_dir(&nginx_dir).expect("nginx dir");
    let ports = (free_port(), free_port());
    let _nginx = start_nginx(&binary, &nginx_dir, gateway.addr, ports, (&cert, &key));
    wait_listening(ports.1, &nginx_dir).await;
    let client = https_client(&cert);
    let base = format!("https://127.0.0.1:{}", ports.1);

    // The status and a certification, over HTTPS through nginx.
    let status = send(
        &client,
        "GET",
        &format!("{base}/api/v1/status"),
        &[],
        Vec::new(),
    )
    .await;
    assert_eq!(status.status, 200, "{}", status.body);
    assert_eq!(status.json()["status"], true, "{}", status.body);
    let auth = format!("Bearer {key_text}");
    let json = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ];
    let body = serde_json::to_vec(&invoice("RP-1")).expect("invoice");
    let certified = send(
        &client,
        "POST",
        &format!("{base}/api/v1/Invoice"),
        &json,
        body,
    )
    .await;
    assert_eq!(certified.status, 200, "{}", certified.body);
    assert!(
        certified.json()["codeDEFDGI"]
            .as_str()
            .is_some_and(|c| !c.is_empty()),
        "{}",
        certified.body
    );
    // Above the gateway's limit, within nginx's: the gateway's own JSON 413.
    let large = vec![b' '; 300 * 1024];
    let refused = send(
        &client,
        "POST",
        &format!("{base}/api/v1/Invoice"),
        &json,
        large,
    )
    .await;
    assert_eq!(refused.status, 413, "{}", refused.body);
    assert_eq!(refused.json()["errorCode"], 122, "{}", refused.body);

    // The dashboard sees the client's address, whatever the client claims itself.
    let wrong = format!("{}{}", &token[..22], "A".repeat(token.len() - 22));
    let claimed = [("X-Forwarded-For", "203.0.113.66")];
    let refused = sign_in(&client, &base, &wrong, &claimed).await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    let signed = sign_in(&client, &base, &token, &[]).await;
    assert_eq!(signed.status, 303, "{}", signed.body);
    let (_, session) = cookie(&signed, "emcf_session").expect("session cookie");
    assert!(
        session.contains("Secure"),
        "behind TLS the cookie is Secure: {session}"
    );
    let log = gateway.log();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("dashboard sign-in"))
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("refused") && l.contains("client=127.0.0.2")),
        "{log}"
    );
    assert!(
        lines
            .iter()
            .any(|l| !l.contains("refused") && l.contains("client=127.0.0.2")),
        "{log}"
    );
    assert!(
        !log.contains("203.0.113.66"),
        "a claimed address is not believed: {log}"
    );

    // Plain HTTP redirects to HTTPS; /metrics is this machine's only.
    let http = SocketAddr::from(([127, 0, 0, 1], ports.0));
    let redirect = get(http, "/api/v1/status", None).await;
    assert_eq!(redirect.status, 301, "{}", redirect.body);
    assert!(
        redirect
            .header("location")
            .is_some_and(|l| l.starts_with("https://")),
        "{:?}",
        redirect.headers
    );
    let metrics = send(&client, "GET", &format!("{base}/metrics"), &[], Vec::new()).await;
    assert_eq!(
        metrics.status, 403,
        "from another address: {}",
        metrics.body
    );
}
