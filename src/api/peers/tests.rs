use super::*;
use std::net::Ipv4Addr;

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(192, 168, 1, last))
}

fn begun(slot: &PeerSlot) -> Busy {
    slot.conn
        .begin()
        .expect("a request begins on a connection not evicted")
}

#[tokio::test]
async fn each_address_has_its_own_cap_and_places_come_back() {
    let peers = Peers::new(2, 100, CancellationToken::new());
    let first = peers.admit(ip(10)).expect("1st");
    let second = peers.admit(ip(10)).expect("2nd");
    let _busy = (begun(&first), begun(&second));
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
    let _busy = begun(&newer);
    let other = peers
        .admit(ip(20))
        .expect("another address over the server's cap");
    assert!(third.conn.close.is_cancelled(), "the idle one closes");
    assert!(!newer.conn.close.is_cancelled(), "the busy one stays");
    // Every one busy or told to close: refused, with the cap said.
    let _busy_other = begun(&other);
    assert_eq!(peers.admit(ip(30)).map(|_| ()), Err(Cap::Server(3)));
}

#[tokio::test]
async fn an_evicted_connection_begins_no_request_and_says_which_cap() {
    let peers = Peers::new(1, 2, CancellationToken::new());
    let first = peers.admit(ip(10)).expect("1st");
    let second = peers
        .admit(ip(10))
        .expect("over the address's cap: the 1st evicted");
    assert!(first.conn.is_evicted() && first.conn.close.is_cancelled());
    // A head that completes after the eviction is not begun: the 503 of the address's cap.
    assert_eq!(first.conn.begin().map(|_| ()), Err(Cap::PerPeer(1)));
    assert!(first.conn.is_idle(), "nothing is in progress on it");
    assert_eq!(first.conn.started(), 0);
    // Over the server's cap (2 open, one of them evicted): that cap is said.
    let other = peers
        .admit(ip(20))
        .expect("the 2nd evicted for the server's cap");
    assert!(second.conn.is_evicted());
    assert_eq!(second.conn.begin().map(|_| ()), Err(Cap::Server(2)));
    // Evicted once only: not chosen again, so the next one is refused while `other` works.
    let _busy = begun(&other);
    assert_eq!(peers.admit(ip(30)).map(|_| ()), Err(Cap::Server(2)));
}

#[tokio::test]
async fn a_request_begun_first_keeps_its_connection_another_is_evicted() {
    let peers = Peers::new(2, 100, CancellationToken::new());
    let older = peers.admit(ip(10)).expect("1st");
    let newer = peers.admit(ip(10)).expect("2nd");
    // The longest-idle one began a request just after the caps were looked at: it cannot be
    // marked evicted any more; the next in the order is.
    let busy = begun(&older);
    assert!(!older.conn.try_evict(EVICTED_PER_PEER), "busy: not evicted");
    assert!(!older.conn.is_evicted() && !older.conn.close.is_cancelled());
    let _third = peers.admit(ip(10)).expect("the other one makes room");
    assert!(newer.conn.is_evicted() && !older.conn.is_evicted());
    // Its answer handed over, it is idle again and may be evicted like any other.
    drop(busy);
    assert!(older.conn.is_idle());
    assert!(older.conn.try_evict(EVICTED_PER_PEER));
    assert!(!older.conn.try_evict(EVICTED_PER_PEER), "once only");
}

#[test]
fn an_eviction_and_a_request_s_beginning_never_both_win() {
    // Both raced from two threads, many times: exactly one wins each time, so a request is
    // never begun on a connection told to close (which would cut it), and a connection whose
    // request began is never closed for another.
    let peers = Peers::new(1_000_000, 1_000_000, CancellationToken::new());
    let (mut evictions, mut requests) = (0, 0);
    for _ in 0..2_000 {
        let slot = peers.admit(ip(10)).expect("admitted");
        let start = Arc::new(std::sync::Barrier::new(2));
        let evicting = std::thread::spawn({
            let (conn, start) = (Arc::clone(&slot.conn), Arc::clone(&start));
            move || {
                start.wait();
                conn.try_evict(EVICTED_SERVER)
            }
        });
        start.wait();
        let begun = slot.conn.begin();
        let evicted = evicting.join().expect("thread");
        assert_ne!(evicted, begun.is_ok(), "exactly one of the two wins");
        assert_eq!(slot.conn.is_evicted(), evicted);
        assert_eq!(slot.conn.close.is_cancelled(), evicted);
        if evicted {
            evictions += 1;
        } else {
            requests += 1;
        }
    }
    eprintln!("{evictions} evictions, {requests} requests first");
}

#[tokio::test]
async fn a_connection_between_two_requests_is_the_last_victim() {
    let peers = Peers::new(2, 100, CancellationToken::new());
    // `busy_client` answered a request, then `fresh` connected and has sent nothing yet:
    // `busy_client` has been idle for longer, but for less than `SETTLED`.
    let busy_client = peers.admit(ip(10)).expect("1st");
    drop(begun(&busy_client));
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let fresh = peers.admit(ip(10)).expect("2nd");
    let now = Instant::now();
    assert!(busy_client.conn.eviction_rank(now) > fresh.conn.eviction_rank(now));
    let third = peers.admit(ip(10)).expect("3rd");
    assert!(
        fresh.conn.is_evicted(),
        "the one with no request yet goes first"
    );
    assert!(!busy_client.conn.is_evicted());
    // Idle for `SETTLED` or more, it is no longer between requests: the longest idle first.
    let later = now + SETTLED;
    assert!(busy_client.conn.eviction_rank(later) < fresh.conn.eviction_rank(later));
    // With nothing else to evict, it is evicted all the same (the new connection comes in).
    let _busy = begun(&third);
    let _fourth = peers.admit(ip(10)).expect("4th");
    assert!(busy_client.conn.is_evicted());
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
