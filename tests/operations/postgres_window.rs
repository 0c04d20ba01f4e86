//! The DGI's window shared by the replicas, on a real server (`src/store/postgres/window.rs`):
//! never more places taken than the window has, whoever takes them; a fenced replica takes,
//! notes and gives back none; a place given back is taken again under a higher epoch, and its old holder's late
//! writes change nothing; a place whose holder's lease ran out is in doubt, ready only once
//! it has been so for the time asked (at once when its holder was fenced by its successor),
//! freed only while its holder stays gone.

use std::time::Duration;

use emcf_gateway::store::postgres::lease_of;

use super::postgres_register::register_on;
use super::postgres_replicas::replica;

const TERM: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replicas_take_no_more_places_than_the_window_has() {
    let Some((server, _register)) = register_on("PostgreSQL window").await else {
        return;
    };
    let a = replica(&server, "A", TERM).await;
    let b = replica(&server, "B", TERM).await;
    let mut taken = Vec::new();
    for i in 0..10 {
        let by = if i % 2 == 0 { &a } else { &b };
        let slot = by.take_window_slot("web", 10).await.unwrap();
        taken.push(slot.expect("a free place"));
    }
    let mut places: Vec<i32> = taken.iter().map(|s| s.slot).collect();
    places.sort_unstable();
    assert_eq!(places, (0..10).collect::<Vec<_>>(), "ten places, each once");
    assert_eq!(a.take_window_slot("web", 10).await.unwrap(), None);
    assert_eq!(b.take_window_slot("web", 10).await.unwrap(), None);
    // Another e-MCF has a window of its own.
    assert!(a.take_window_slot("other", 10).await.unwrap().is_some());

    // Given back, a place is taken again, under a higher epoch; its old holder's uid is
    // refused then, and giving it back again changes nothing.
    let old = taken[0].clone();
    assert!(a.note_window_uid(&old, "uid-1").await.unwrap());
    a.give_back_window_slot(&old).await.unwrap();
    let again = b.take_window_slot("web", 10).await.unwrap().expect("free");
    assert_eq!(again.slot, old.slot);
    assert!(again.epoch > old.epoch);
    assert!(!a.note_window_uid(&old, "uid-2").await.unwrap());
    a.give_back_window_slot(&old).await.unwrap();
    assert_eq!(b.take_window_slot("web", 10).await.unwrap(), None);
    assert!(b.note_window_uid(&again, "uid-3").await.unwrap());

    // A replica stopping gives back what it still holds.
    assert_eq!(a.give_back_window_slots().await.unwrap(), 5);
    assert!(b.take_window_slot("web", 10).await.unwrap().is_some());

    // A fenced replica takes nothing; what it held is in doubt at once, ready without a
    // wait (it was fenced by its successor on its state directory: its process is gone).
    let held = a.take_window_slot("web", 10).await.unwrap().expect("free");
    a.fence_replica("A").await.unwrap();
    assert_eq!(a.take_window_slot("web", 10).await.unwrap(), None);
    assert!(b.take_window_slot("web", 10).await.unwrap().is_some());
    // Nor does it note or give back: its place is the leader's to recover.
    assert!(!a.note_window_uid(&held, "uid-f").await.unwrap());
    a.give_back_window_slot(&held).await.unwrap();
    assert_eq!(a.give_back_window_slots().await.unwrap(), 0);
    let doubted = b
        .window_doubts("web", Duration::from_secs(3600))
        .await
        .unwrap();
    assert_eq!(doubted.len(), 1, "{doubted:?}");
    assert!(doubted[0].ready && doubted[0].slot == held, "{doubted:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_place_of_a_replica_gone_is_in_doubt_and_freed_only_while_it_stays_gone() {
    let Some((server, _register)) = register_on("PostgreSQL window doubts").await else {
        return;
    };
    let leader = replica(&server, "L", TERM).await;
    let a = replica(&server, "A", Duration::from_secs(2)).await;
    let noted = a.take_window_slot("web", 3).await.unwrap().expect("free");
    assert!(a.note_window_uid(&noted, "uid-a").await.unwrap());
    let silent = a.take_window_slot("web", 3).await.unwrap().expect("free");
    let late = a.take_window_slot("web", 3).await.unwrap().expect("free");

    // While A's lease holds, nothing is in doubt; what it noted is known.
    let doubted = leader.window_doubts("web", Duration::ZERO).await.unwrap();
    assert!(doubted.is_empty(), "{doubted:?}");
    let pending = vec!["uid-a".to_owned(), "uid-x".to_owned()];
    assert_eq!(
        leader.known_window_uids("web", &pending).await.unwrap(),
        ["uid-a"]
    );

    // A's lease runs out: its places are in doubt, not ready within the time asked.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let doubted = leader
        .window_doubts("web", Duration::from_secs(3600))
        .await
        .unwrap();
    assert_eq!(doubted.len(), 3, "{doubted:?}");
    assert!(doubted.iter().all(|d| !d.ready));
    let read = |slot: i32| {
        doubted
            .iter()
            .find(|d| d.slot.slot == slot)
            .cloned()
            .expect("in doubt")
    };
    assert_eq!(read(noted.slot).uid.as_deref(), Some("uid-a"));
    assert_eq!(read(silent.slot).uid, None);
    assert!(!leader
        .free_window_slot(&read(noted.slot), Duration::from_secs(3600))
        .await
        .unwrap());

    // Ready once in doubt long enough; freed then, as read.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let doubted = leader
        .window_doubts("web", Duration::from_millis(200))
        .await
        .unwrap();
    assert!(doubted.iter().all(|d| d.ready), "{doubted:?}");
    assert!(leader
        .free_window_slot(&read(noted.slot), Duration::from_millis(200))
        .await
        .unwrap());
    assert!(!a.note_window_uid(&noted, "late").await.unwrap());

    // A place whose uid A noted since it was read is not freed as read: A is not fenced,
    // and it may have sent a request the pending list read before did not show.
    assert!(a.note_window_uid(&late, "uid-late").await.unwrap());
    assert!(!leader
        .free_window_slot(&read(late.slot), Duration::ZERO)
        .await
        .unwrap());

    // A renews its lease before the other places are freed: it keeps them, and they are
    // no longer in doubt.
    assert!(a
        .take_lease(&lease_of("A"), "A", TERM)
        .await
        .unwrap()
        .is_some());
    assert!(!leader
        .free_window_slot(&read(silent.slot), Duration::ZERO)
        .await
        .unwrap());
    let doubted = leader.window_doubts("web", Duration::ZERO).await.unwrap();
    assert!(doubted.is_empty(), "{doubted:?}");
    assert!(a.note_window_uid(&silent, "uid-s").await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_gives_back_the_places_it_lost_track_of_and_keeps_those_its_lanes_hold() {
    let Some((server, _register)) = register_on("PostgreSQL window lost").await else {
        return;
    };
    let a = replica(&server, "A", TERM).await;
    let kept = a.take_window_slot("web", 3).await.unwrap().expect("free");
    let lost = a.take_window_slot("web", 3).await.unwrap().expect("free");
    // Too recent: a lane may have it without having noted it in memory yet.
    let held = [kept.slot];
    assert_eq!(
        a.give_back_lost_window_slots("web", &held, Duration::from_secs(3600))
            .await
            .unwrap(),
        0
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        a.give_back_lost_window_slots("web", &held, Duration::from_millis(100))
            .await
            .unwrap(),
        1
    );
    assert!(!a.note_window_uid(&lost, "uid").await.unwrap());
    assert!(a.note_window_uid(&kept, "uid").await.unwrap());
}
