//! A minimal SMTP sink for the tests: listens on a local socket, greets 220, answers EHLO/HELO,
//! MAIL FROM, RCPT TO, DATA (until `<CRLF>.<CRLF>`), RSET, NOOP and QUIT, and records every
//! message it accepted. No TLS, no authentication (the gateway's `tls = "none"`).
//!
//! [`Received::strict`] reads a message as a strict mail client would: Python's `email`
//! package with `policy=email.policy.strict` (`strict_mail.py`). Python rather than a Rust
//! crate: it is on every machine the tests run on (python3 runs other helpers), it is written
//! from the RFCs by people who are not lettre's authors, and its strict policy fails on a
//! defect where the maintained Rust parsers (mail-parser...) are lenient by design, which is
//! what a checker must not be; and no new dependency comes into Cargo.lock.

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// A message the sink accepted.
#[derive(Debug, Clone, Default)]
pub struct Received {
    /// `MAIL FROM` address.
    pub from: String,
    /// `RCPT TO` addresses.
    pub to: Vec<String>,
    /// The message as sent (headers and body, dot-unstuffed).
    pub data: String,
}

impl Received {
    /// The message as a strict client reads it (panics with the checker's reason when it is
    /// not right): `headers` (lower-case names, decoded values), `raw_subject` (as sent,
    /// unfolded), `date_unix`, `from`/`to` (addresses), `message_id`, and `parts` (`type`,
    /// `charset`, `encoding`, decoded `text`, its line breaks `\n`).
    pub fn strict(&self) -> Value {
        self.check().unwrap_or_else(|reason| {
            panic!(
                "not a message a strict client reads: {reason}\n{}",
                self.data
            )
        })
    }

    /// [`Received::strict`]'s reading, or the checker's reason why the message is not right.
    pub fn check(&self) -> Result<Value, String> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/strict_mail.py");
        let mut child = Command::new("python3")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs (the strict mail check)");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(self.data.as_bytes())
            .expect("message written");
        let out = child.wait_with_output().expect("checked");
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        Ok(serde_json::from_slice(&out.stdout).expect("the checker's JSON"))
    }
}

/// The running sink.
pub struct SmtpSink {
    /// Where it listens.
    pub addr: SocketAddr,
    messages: Arc<Mutex<Vec<Received>>>,
}

impl SmtpSink {
    /// Starts it on 127.0.0.1 (an ephemeral port).
    pub async fn start() -> SmtpSink {
        SmtpSink::start_on("127.0.0.1:0".parse().expect("address")).await
    }

    /// Starts it on `addr` (a relay that was down comes back on its address).
    pub async fn start_on(addr: SocketAddr) -> SmtpSink {
        let listener = TcpListener::bind(addr).await.expect("smtp bind");
        let addr = listener.local_addr().expect("smtp addr");
        let messages: Arc<Mutex<Vec<Received>>> = Arc::default();
        let store = Arc::clone(&messages);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let store = Arc::clone(&store);
                tokio::spawn(async move {
                    let _ = session(stream, store).await;
                });
            }
        });
        SmtpSink { addr, messages }
    }

    /// The messages accepted so far.
    pub fn messages(&self) -> Vec<Received> {
        self.messages.lock().expect("messages").clone()
    }

    /// Waits until at least `n` messages arrived (panics after `within`).
    pub async fn wait_for(&self, n: usize, within: std::time::Duration) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let messages = self.messages();
            if messages.len() >= n {
                return messages;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} e-mail(s) after {within:?}, {n} expected: {messages:?}",
                messages.len()
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

async fn session(stream: TcpStream, store: Arc<Mutex<Vec<Received>>>) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    write.write_all(b"220 sink.test ESMTP ready\r\n").await?;
    let mut current = Received::default();
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let command = line.trim_end().to_string();
        let upper = command.to_ascii_uppercase();
        let reply: &[u8] = if upper.starts_with("EHLO") {
            b"250-sink.test\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n"
        } else if upper.starts_with("HELO") {
            b"250 sink.test\r\n"
        } else if upper.starts_with("MAIL FROM:") {
            current = Received {
                from: address(&command["MAIL FROM:".len()..]),
                ..Received::default()
            };
            b"250 OK\r\n"
        } else if upper.starts_with("RCPT TO:") {
            current.to.push(address(&command["RCPT TO:".len()..]));
            b"250 OK\r\n"
        } else if upper == "DATA" {
            write
                .write_all(b"354 end data with <CR><LF>.<CR><LF>\r\n")
                .await?;
            let mut data = String::new();
            loop {
                line.clear();
                if lines.read_line(&mut line).await? == 0 {
                    return Ok(());
                }
                if line == ".\r\n" || line == ".\n" {
                    break;
                }
                let unstuffed = line.strip_prefix('.').unwrap_or(&line);
                data.push_str(unstuffed);
            }
            current.data = data;
            store
                .lock()
                .expect("messages")
                .push(std::mem::take(&mut current));
            b"250 OK queued\r\n"
        } else if upper == "RSET" {
            current = Received::default();
            b"250 OK\r\n"
        } else if upper == "NOOP" {
            b"250 OK\r\n"
        } else if upper == "QUIT" {
            write.write_all(b"221 bye\r\n").await?;
            return Ok(());
        } else {
            b"502 command not implemented\r\n"
        };
        write.write_all(reply).await?;
    }
}

/// `<a@b.cd> SIZE=...` -> `a@b.cd`.
fn address(text: &str) -> String {
    let text = text.trim();
    match (text.find('<'), text.find('>')) {
        (Some(start), Some(end)) if start < end => text[start + 1..end].to_string(),
        _ => text
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string(),
    }
}
