//! The small HTTP/1.1 client of the end-to-end tests and the crash harness (one request per
//! connection, `Connection: close`, the whole response read). Included with `#[path]` by
//! `tests/common/mod.rs` and `tests/crash_oracle/mod.rs` (which `examples/crash.rs` includes
//! too), since an example cannot use `tests/common`.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// An HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub json: Value,
}

impl Response {
    /// A header's value (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One request (`Connection: close`) within `limit`; `Err` saying what failed when no
/// complete response came back.
pub async fn try_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
    limit: Duration,
) -> Result<Response, String> {
    let bytes = request_bytes(addr, method, path, headers, body);
    exchange_from(None, addr, &bytes, limit)
        .await
        .map_err(|e| format!("{method} {path}: {e}"))
}

/// The bytes of one request (`Connection: close`, `Content-Length` when there is a body).
pub fn request_bytes(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Vec<u8> {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(body) = body {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.unwrap_or_default());
    bytes
}

/// A connection to `addr`, from the local address `local` when given (tests of what the
/// server does per peer use 127.0.0.2 and up, which loopback answers too), with a small send
/// buffer then: what it writes beyond the server's receive buffer waits for the server to read.
pub async fn connect_from(local: Option<IpAddr>, addr: SocketAddr) -> std::io::Result<TcpStream> {
    let Some(local) = local else {
        return TcpStream::connect(addr).await;
    };
    let socket = match local {
        IpAddr::V4(_) => TcpSocket::new_v4()?,
        IpAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.set_send_buffer_size(64 * 1024)?;
    socket.bind(SocketAddr::new(local, 0))?;
    socket.connect(addr).await
}

/// Writes `bytes` whole (from `local` if given), then reads the answer to its end, within
/// `limit`; `Err` saying what failed when no complete response came back.
pub async fn exchange_from(
    local: Option<IpAddr>,
    addr: SocketAddr,
    bytes: &[u8],
    limit: Duration,
) -> Result<Response, String> {
    let exchange = async {
        let mut stream = connect_from(local, addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        stream
            .write_all(bytes)
            .await
            .map_err(|e| format!("write: {e}"))?;
        let mut raw = Vec::new();
        stream
            .read_to_end(&mut raw)
            .await
            .map_err(|e| format!("read: {e}"))?;
        parse_response(&raw)
    };
    tokio::time::timeout(limit, exchange)
        .await
        .map_err(|_| format!("timed out after {limit:?}"))?
}

/// A whole response; `Err` if it is incomplete, has no status line, or its body is shorter
/// than its `Content-Length`.
pub fn parse_response(raw: &[u8]) -> Result<Response, String> {
    let text = String::from_utf8_lossy(raw).to_string();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("incomplete response ({} bytes)", raw.len()))?;
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or("no status line")?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let announced = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok());
    if announced.is_some_and(|length| body.len() < length) {
        return Err("response body cut".to_string());
    }
    let json = serde_json::from_str(body).unwrap_or(Value::Null);
    Ok(Response {
        status,
        headers,
        body: body.to_string(),
        json,
    })
}
