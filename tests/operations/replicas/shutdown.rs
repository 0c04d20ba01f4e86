//! A replica told to stop (SIGTERM) in front of a load balancer: the connections it had
//! already been given are answered, not reset. A load balancer sends its request as soon as
//! its connection is made and cannot send it elsewhere once it was written (HAProxy retries a
//! failed connection only): a connection the kernel completed before the stop, waiting in the
//! listening socket's backlog, or accepted but not yet read, must get its answer. One gateway
//! (demo mode), no database needed.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{self, http, Gateway};

/// `GET /api/v1/status` on a connection of its own.
fn status_request() -> &'static [u8] {
    b"GET /api/v1/status HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n"
}

/// A load balancer's check (docs/haproxy.cfg), on a connection of its own.
fn check_request() -> &'static [u8] {
    b"GET /api/v1/status/replica HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n"
}

/// Reads the answer on `stream` to its end: the response, or what went wrong.
async fn answer(mut stream: TcpStream) -> Result<http::Response, String> {
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .map_err(|_| "no answer within 10 s".to_string())?
        .map_err(|e| format!("read: {e}"))?;
    http::parse_response(&raw)
}

/// Sends `signal` to the gateway.
fn signal(gateway: &Gateway, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(gateway.pid()).expect("a pid");
    // SAFETY: kill(2) only sends a signal to a child this test started.
    unsafe {
        libc::kill(pid, signal);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_accepted_just_before_sigterm_gets_its_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut gateway = tokio::task::block_in_place(|| Gateway::start_demo(dir.path()));
    gateway.wait_ready().await;
    // Connected (and accepted by the gateway), its request not sent yet.
    let mut stream = TcpStream::connect(gateway.addr).await.expect("connect");
    tokio::time::sleep(Duration::from_millis(200)).await;
    common::sigterm(gateway.pid());
    tokio::time::sleep(Duration::from_millis(50)).await;
    stream.write_all(check_request()).await.expect("write");
    let response = answer(stream).await.unwrap_or_else(|e| {
        panic!(
            "the request sent just after SIGTERM got no answer: {e}\n{}",
            gateway.log()
        )
    });
    // The stopping replica says it takes nothing new (503, when to ask again), and closes
    // the connection.
    assert_eq!(response.status, 503, "{}", response.body);
    assert_eq!(response.json["ready"], false, "{}", response.body);
    assert!(
        response.header("retry-after").is_some(),
        "{:?}",
        response.headers
    );
    assert_eq!(response.header("connection"), Some("close"));
    assert!(tokio::task::block_in_place(|| gateway.terminate()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_waiting_in_the_backlog_at_sigterm_get_their_answers() {
    const WAITING: usize = 20;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut gateway = tokio::task::block_in_place(|| Gateway::start_demo(dir.path()));
    gateway.wait_ready().await;
    // The gateway frozen: the kernel completes the connections, nobody accepts them; each
    // writes its request at once, as a load balancer does.
    signal(&gateway, libc::SIGSTOP);
    let mut waiting = Vec::new();
    for _ in 0..WAITING {
        let mut stream = TcpStream::connect(gateway.addr).await.expect("connect");
        stream.write_all(status_request()).await.expect("write");
        waiting.push(stream);
    }
    // SIGTERM is pending when it runs again: it stops with the connections in its backlog.
    common::sigterm(gateway.pid());
    signal(&gateway, libc::SIGCONT);
    let mut failed = Vec::new();
    for (i, stream) in waiting.into_iter().enumerate() {
        match answer(stream).await {
            Ok(response) => assert_eq!(response.status, 200, "{}", response.body),
            Err(error) => failed.push((i, error)),
        }
    }
    assert!(
        failed.is_empty(),
        "connections waiting at SIGTERM got no answer: {failed:?}\n{}",
        gateway.log()
    );
    assert!(tokio::task::block_in_place(|| gateway.terminate()));
    // And the port is closed once they are answered.
    let after = TcpStream::connect(gateway.addr).await;
    assert!(after.is_err(), "the port is still open after the exit");
}
