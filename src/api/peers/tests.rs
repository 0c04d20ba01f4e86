use super::*;
use std::net::Ipv4Addr;

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(192, 168, 1, last))
}

#[tokio::test]
async fn each_address_has_its_own_cap_and_places_come_back() {
    let peers = Peers::new(2, 100, CancellationToken::new());
    let first = peers.admit(ip(10)).expect("1st");
    let second = peers.admit(ip(10)).expect("2nd");
    let _busy = (first.conn.begin(), second.conn.begin());
    assert_eq!(
        peers.admit(ip(10)).map(|_| ()),
        Err(Cap::PerPeer(2)),
        "3rd from the same address, both busy"
    );
    assert!(
        peers.admit(ip(11)).is_ok(),
        "another address is not affected"
    );
    let mapped = IpAddr::V6(Ipv4Addr::new(192, 168, 1, 10).to_ipv6_mapped());
    assert!(peers.admit(mapped).is_err(), "IPv4-mapped is the same peer");
    drop(_busy);
    drop(first);
    assert!(
        peers.admit(ip(10)).is_ok(),
        "a closed connection gives its place back"
    );
}

#[tokio::test]
async fn over_a_cap_the_longest_idle_connection_is_closed_for_the_new_one() {
    let peers = Peers::new(2, 3, CancellationToken::new());
    let older = peers.admit(ip(10)).expect("1st");
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let newer = peers.admit(ip(10)).expect("2nd");
    // Over the address's cap: its longest-idle connection makes room.
    let third = peers.admit(ip(10)).expect("3rd takes an idle one's place");
    assert!(older.conn.close.is_cancelled() && older.conn.is_evicted());
    assert!(!newer.conn.close.is_cancelled());
    // Over the server's cap (3 open, one of them told to close but not closed yet): the
    // longest-idle one not told yet, whatever its address; a busy one is never chosen.
    let _busy = newer.conn.begin();
    let other = peers
        .admit(ip(20))
        .expect("another address over the server's cap");
    assert!(third.conn.close.is_cancelled(), "the idle one closes");
    assert!(!newer.conn.close.is_cancelled(), "the busy one stays");
    // Every one busy or told to close: refused, with the cap said.
    let _busy_other = other.conn.begin();
    assert_eq!(peers.admit(ip(30)).map(|_| ()), Err(Cap::Server(3)));
}

#[tokio::test]
async fn the_drain_waits_for_every_connection() {
    let shutdown = CancellationToken::new();
    let peers = Peers::new(4, 4, shutdown.clone());
    let slot = peers.admit(ip(10)).expect("admitted");
    shutdown.cancel();
    assert!(
        slot.conn.close.is_cancelled(),
        "shutdown closes connections"
    );
    let waiting = tokio::spawn({
        let peers = Arc::clone(&peers);
        async move { peers.all_closed().await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert!(!waiting.is_finished());
    drop(slot);
    tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
        .await
        .expect("closed")
        .expect("task");
}

#[test]
fn the_refusal_is_a_complete_json_503() {
    for (cap, code) in [(Cap::PerPeer(32), 127), (Cap::Server(256), 193)] {
        let text = String::from_utf8(refusal(cap)).expect("utf-8");
        let (head, body) = text.split_once("\r\n\r\n").expect("head and body");
        assert!(head.starts_with("HTTP/1.1 503 "));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let json: serde_json::Value = serde_json::from_str(body).expect("json");
        assert_eq!(json["errorCode"], code);
    }
}

#[test]
fn the_refusal_speaks_the_language_it_is_given() {
    let french = String::from_utf8(refusal_in(Cap::PerPeer(32), Lang::Fr)).expect("utf-8");
    let (head, body) = french.split_once("\r\n\r\n").expect("head and body");
    assert!(head.contains("content-language: fr"), "{head}");
    let json: serde_json::Value = serde_json::from_str(body).expect("json");
    assert_eq!(
        json["errorDesc"],
        crate::i18n::nbsp(
            "trop de connexions depuis votre adresse (32 au plus à la fois) ; \
             fermez les connexions inactives ou réessayez dans un instant"
        )
    );
    let english = String::from_utf8(refusal_in(Cap::PerPeer(32), Lang::En)).expect("utf-8");
    assert!(english.contains("content-language: en"));
    assert!(english.contains("too many connections from your address (at most 32 at once)"));
}
