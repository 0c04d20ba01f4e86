//! A small HTTP/1.1 client on a real socket (keep-alive or not), the load generator built on
//! it, and the minimal hyper server the gateway's status endpoint is compared with.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// `Err` naming `what` unless the status is 200.
    pub fn ensure_ok(&self, what: &str) -> anyhow::Result<()> {
        if self.status != 200 {
            anyhow::bail!(
                "{what}: {} {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            );
        }
        Ok(())
    }
}

/// One client connection.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    /// The server said `Connection: close` (or closed).
    pub closed: bool,
}

impl Conn {
    pub async fn connect(addr: SocketAddr) -> io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: Vec::with_capacity(8192),
            closed: false,
        })
    }

    /// [`Conn::exchange`] that must answer 200 (else `Err` naming `what`); returns the
    /// response and the seconds it took.
    pub async fn exchange_ok(
        &mut self,
        request: &[u8],
        what: &str,
    ) -> anyhow::Result<(Response, f64)> {
        let started = Instant::now();
        let response = self.exchange(request).await?;
        let seconds = started.elapsed().as_secs_f64();
        response.ensure_ok(what)?;
        Ok((response, seconds))
    }

    /// Writes `request` (complete bytes), then reads one response.
    pub async fn exchange(&mut self, request: &[u8]) -> io::Result<Response> {
        self.write(request).await?;
        self.read_response().await
    }

    pub async fn write(&mut self, request: &[u8]) -> io::Result<()> {
        self.stream.write_all(request).await
    }

    /// Reads one response (Content-Length, chunked, or up to the end of the stream).
    pub async fn read_response(&mut self) -> io::Result<Response> {
        let head_end = loop {
            if let Some(at) = find(&self.buf, b"\r\n\r\n") {
                break at + 4;
            }
            self.fill().await?;
        };
        let head = String::from_utf8_lossy(&self.buf[..head_end]).to_string();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::other(format!("bad status line in {head:?}")))?;
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
            .collect();
        let get = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.to_ascii_lowercase())
        };
        if get("connection").as_deref() == Some("close") {
            self.closed = true;
        }
        self.buf.drain(..head_end);
        let body = if let Some(len) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
            while self.buf.len() < len {
                self.fill().await?;
            }
            self.buf.drain(..len).collect()
        } else if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            self.read_chunked().await?
        } else {
            loop {
                match self.fill().await {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                    Err(e) => return Err(e),
                }
            }
            self.closed = true;
            std::mem::take(&mut self.buf)
        };
        Ok(Response {
            status,
            headers,
            body,
        })
    }

    async fn read_chunked(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let line_end = loop {
                if let Some(at) = find(&self.buf, b"\r\n") {
                    break at;
                }
                self.fill().await?;
            };
            let size_text = String::from_utf8_lossy(&self.buf[..line_end]).to_string();
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|e| io::Error::other(format!("chunk size {size_text:?}: {e}")))?;
            self.buf.drain(..line_end + 2);
            while self.buf.len() < size + 2 {
                self.fill().await?;
            }
            body.extend(self.buf.drain(..size));
            self.buf.drain(..2);
            if size == 0 {
                return Ok(body);
            }
        }
    }

    async fn fill(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).await?;
        if n == 0 {
            self.closed = true;
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `GET path` bytes (keep-alive).
pub fn get_request(addr: SocketAddr, path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\n\r\n").into_bytes()
}

/// `POST /api/v1/Invoice` bytes.
pub fn post_invoice_request(addr: SocketAddr, key: &str, body: &[u8], keep_alive: bool) -> Vec<u8> {
    let connection = if keep_alive { "keep-alive" } else { "close" };
    let mut bytes = format!(
        "POST /api/v1/Invoice HTTP/1.1\r\nHost: {addr}\r\nConnection: {connection}\r\n\
         Authorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// One request on a new connection.
pub async fn once(addr: SocketAddr, request: &[u8]) -> io::Result<Response> {
    let mut conn = Conn::connect(addr).await?;
    conn.exchange(request).await
}

/// What a load run did.
#[derive(Debug, Clone)]
pub struct Load {
    /// Requests answered 200 within the window.
    pub ok: u64,
    /// Other answers and errors within the window.
    pub errors: u64,
    pub window: Duration,
    /// Latencies (µs) of the answered requests in the window.
    pub latencies_us: Vec<f64>,
}

impl Load {
    pub fn rate(&self) -> f64 {
        self.ok as f64 / self.window.as_secs_f64()
    }
}

/// `connections` keep-alive connections each sending `GET path` in a loop for `warmup` then
/// `window`; counts what is answered within the window.
pub async fn load(
    addr: SocketAddr,
    path: &str,
    connections: usize,
    warmup: Duration,
    window: Duration,
) -> io::Result<Load> {
    let request: Arc<[u8]> = get_request(addr, path).into();
    let begin = Instant::now() + warmup;
    let end = begin + window;
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let request = Arc::clone(&request);
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::connect(addr).await?;
            let (mut ok, mut errors) = (0u64, 0u64);
            let mut latencies = Vec::new();
            loop {
                let sent = Instant::now();
                if sent >= end {
                    break;
                }
                let answer = conn.exchange(&request).await;
                let done = Instant::now();
                let counted = sent >= begin && done <= end;
                match answer {
                    Ok(response) if response.status == 200 => {
                        if counted {
                            ok += 1;
                            latencies.push((done - sent).as_secs_f64() * 1e6);
                        }
                        if conn.closed {
                            conn = Conn::connect(addr).await?;
                        }
                    }
                    Ok(_) | Err(_) => {
                        if counted {
                            errors += 1;
                        }
                        conn = Conn::connect(addr).await?;
                    }
                }
            }
            Ok::<_, io::Error>((ok, errors, latencies))
        }));
    }
    let mut total = Load {
        ok: 0,
        errors: 0,
        window,
        latencies_us: Vec::new(),
    };
    for task in tasks {
        let (ok, errors, latencies) = task.await.map_err(io::Error::other)??;
        total.ok += ok;
        total.errors += errors;
        total.latencies_us.extend(latencies);
    }
    Ok(total)
}

/// The comparison server: hyper 1.x HTTP/1.1 on a multi-thread runtime like the gateway's,
/// answering every request with the same JSON the gateway's `GET /api/v1/status` gives, and
/// nothing else (no routing, limits, logging). Prints `listening on ADDR` and serves forever.
pub fn minimal_server(listen: SocketAddr) -> anyhow::Result<()> {
    use bytes::Bytes;
    use http_body_util::Full;
    use hyper::header::{HeaderValue, CONTENT_TYPE};
    use hyper::server::conn::http1;
    use hyper::service::service_fn;
    use hyper::{Request, Response as HyperResponse};
    use hyper_util::rt::TokioIo;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        println!("listening on {}", listener.local_addr()?);
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let service = service_fn(|_request: Request<hyper::body::Incoming>| async {
                    let body = serde_json::json!({
                        "status": true,
                        "version": "1.0",
                        "serverDateTime": chrono::Utc::now()
                            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    });
                    let mut response = HyperResponse::new(Full::new(Bytes::from(body.to_string())));
                    response
                        .headers_mut()
                        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                    Ok::<_, std::convert::Infallible>(response)
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}
