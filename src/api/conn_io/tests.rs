use super::*;
use crate::api::peers::Peers;
use std::net::{IpAddr, Ipv4Addr};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

const LOCAL: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

#[tokio::test]
async fn hyper_s_bodiless_431_becomes_the_json_error_in_the_head_s_language() {
    let peers = Peers::new(4, 4, CancellationToken::new());
    let slot = peers.admit(LOCAL).expect("admitted");
    let (server, mut client) = tokio::io::duplex(64 * 1024);
    let mut io = ConnIo::new(server, Arc::clone(&slot.conn), Duration::from_secs(10));
    client
        .write_all(b"GET / HTTP/1.1\r\nAccept-Language: en\r\nX-1: a\r\n")
        .await
        .expect("head");
    let mut buf = [0u8; 1024];
    let n = io.read(&mut buf).await.expect("read");
    assert!(n > 0);
    io.write_all(
        b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: x\r\n\r\n",
    )
    .await
    .expect("write");
    io.shutdown().await.expect("shutdown");
    let mut answer = String::new();
    client.read_to_string(&mut answer).await.expect("answer");
    let (head, body) = answer.split_once("\r\n\r\n").expect("head and body");
    assert!(head.starts_with("HTTP/1.1 431 "), "{head}");
    assert!(head.contains("content-language: en"), "{head}");
    assert!(head.contains("connection: close"), "{head}");
    let json: serde_json::Value = serde_json::from_str(body).expect("json");
    assert_eq!(json["errorCode"], 129);
    assert!(json["errorDesc"]
        .as_str()
        .is_some_and(|d| d.contains("too large")));
}

#[tokio::test]
async fn an_answer_of_the_api_goes_through_untouched() {
    let peers = Peers::new(4, 4, CancellationToken::new());
    let slot = peers.admit(LOCAL).expect("admitted");
    let (server, mut client) = tokio::io::duplex(64 * 1024);
    let mut io = ConnIo::new(server, Arc::clone(&slot.conn), Duration::from_secs(10));
    let ours =
        b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
    io.write_all(ours).await.expect("write");
    io.shutdown().await.expect("shutdown");
    let mut answer = Vec::new();
    client.read_to_end(&mut answer).await.expect("answer");
    assert_eq!(answer, ours);
}

#[tokio::test]
async fn a_head_that_does_not_come_in_time_gets_a_json_408() {
    let peers = Peers::new(4, 4, CancellationToken::new());
    let slot = peers.admit(LOCAL).expect("admitted");
    let (server, mut client) = tokio::io::duplex(64 * 1024);
    let mut io = ConnIo::new(server, Arc::clone(&slot.conn), Duration::from_millis(200));
    client
        .write_all(b"POST /api/v1/Invoice HTTP/1.1\r\nAccept-Language: fr\r\n")
        .await
        .expect("part of a head");
    let mut buf = [0u8; 1024];
    assert!(io.read(&mut buf).await.expect("read") > 0);
    let error = io.read(&mut buf).await.expect_err("the deadline passes");
    assert_eq!(error.kind(), io::ErrorKind::TimedOut);
    let mut answer = String::new();
    client.read_to_string(&mut answer).await.expect("answer");
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    assert!(answer.contains("content-language: fr"), "{answer}");
    assert!(answer.contains("\"errorCode\":190"), "{answer}");
}

#[tokio::test]
async fn an_idle_keep_alive_connection_closes_without_a_word() {
    let peers = Peers::new(4, 4, CancellationToken::new());
    let slot = peers.admit(LOCAL).expect("admitted");
    drop(slot.conn.begin()); // one request answered
    let (server, mut client) = tokio::io::duplex(64 * 1024);
    let mut io = ConnIo::new(server, Arc::clone(&slot.conn), Duration::from_millis(200));
    let mut buf = [0u8; 16];
    let error = io.read(&mut buf).await.expect_err("the deadline passes");
    assert_eq!(error.kind(), io::ErrorKind::TimedOut);
    let mut answer = Vec::new();
    client.read_to_end(&mut answer).await.expect("closed");
    assert!(answer.is_empty(), "{}", String::from_utf8_lossy(&answer));
}
