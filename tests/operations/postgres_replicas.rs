//! Replicas over one PostgreSQL register (`src/store/postgres/replicas.rs`, issue 29): a
//! replica's intents name it and are written only under its own lease; another replica takes
//! them over only once that lease is fenced off, and from then on the first replica writes
//! nothing (not its certification, not its abandon, not a new intent) and cannot take its
//! lease back; a replica with its lease held, or gone with nothing open, is left alone.

use std::time::Duration;

use emcf_gateway::store::postgres::{lease_of, PgRegister, Refusal};

use super::postgres::app_pool;
use super::postgres_register::{at, claim, intent, register_on, security};
use crate::pg::PgServer;

const TERM: Duration = Duration::from_secs(60);

/// A process of its own on `server`'s register, as replica `name` holding its lease for `ttl`.
pub(super) async fn replica(server: &PgServer, name: &str, ttl: Duration) -> PgRegister {
    let replica = PgRegister::new(app_pool(server).await);
    assert!(replica
        .take_lease(&lease_of(name), name, ttl)
        .await
        .unwrap()
        .is_some());
    replica.set_replica(name);
    replica
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_gone_is_fenced_off_before_its_intents_are_taken_over() {
    let Some((server, _register)) = register_on("PostgreSQL replicas").await else {
        return;
    };
    let a = replica(&server, "A", Duration::from_millis(300)).await;
    let b = replica(&server, "B", TERM).await;
    let devices = vec!["web".to_owned()];

    let first = a
        .record_intent(&intent("demo", "FV-1"), claim(10))
        .await
        .unwrap()
        .unwrap();
    let second = a
        .record_intent(&intent("demo", "FV-2"), claim(10))
        .await
        .unwrap()
        .unwrap();
    let owner = |id: u64| {
        server.sql(
            "emcf_app",
            &format!("SELECT owner FROM intents WHERE id = {id}"),
        )
    };
    assert_eq!(
        owner(first),
        "A",
        "an intent names the replica that wrote it"
    );

    // While A's lease holds (and within the grace after it ran out), B takes nothing.
    let taken = b.take_over(&devices, None, Some(TERM)).await.unwrap();
    assert!(taken.is_empty(), "A's lease holds: {taken:?}");
    tokio::time::sleep(Duration::from_millis(600)).await;
    let taken = b.take_over(&devices, None, Some(TERM)).await.unwrap();
    assert!(
        taken.is_empty(),
        "A's lease ran out within the grace: {taken:?}"
    );

    // Past the grace: A is fenced, its two open intents are B's.
    let taken = b
        .take_over(&devices, None, Some(Duration::ZERO))
        .await
        .unwrap();
    let mut ids: Vec<u64> = taken.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    assert_eq!(ids, vec![first, second]);
    assert_eq!(owner(first), "B");

    // A, back, writes nothing: not the certification, not the abandon, not a new intent,
    // and it cannot take its lease back.
    assert!(matches!(
        a.record_certified(first, 2026, at(), security("FV-1"), "finalize")
            .await
            .unwrap(),
        Err(Refusal::Fenced)
    ));
    assert!(matches!(
        a.record_abandoned(second, "cancelled", at()).await.unwrap(),
        Err(Refusal::Fenced)
    ));
    assert!(matches!(
        a.record_intent(&intent("demo", "FV-3"), claim(10))
            .await
            .unwrap(),
        Err(Refusal::Fenced)
    ));
    assert_eq!(a.take_lease(&lease_of("A"), "A", TERM).await.unwrap(), None);
    assert!(!a.holds_own_lease().await.unwrap());

    // B settles them: one certified, one abandoned; nothing left open, one entry.
    let entry = b
        .record_certified(first, 2026, at(), security("FV-1"), "reconciled")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(entry.sequence, 1);
    b.record_abandoned(second, "gone", at())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        server.sql(
            "emcf_app",
            "SELECT count(*) FROM intents WHERE state = 'open'"
        ),
        "0"
    );
    assert_eq!(
        server.sql("emcf_app", "SELECT count(*) FROM register_entries"),
        "1"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_dead_are_fenced_and_only_their_devices_taken() {
    let Some((server, _register)) = register_on("PostgreSQL replicas' devices").await else {
        return;
    };
    let a = replica(&server, "A", Duration::from_millis(200)).await;
    let b = replica(&server, "B", TERM).await;
    // A, gone with nothing open, is not fenced: back, it renews its lease and goes on.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(b
        .take_over(&["web".to_owned()], None, Some(Duration::ZERO))
        .await
        .unwrap()
        .is_empty());
    assert!(a
        .take_lease(&lease_of("A"), "A", Duration::from_millis(200))
        .await
        .unwrap()
        .is_some());

    // A's open intent on a box "web" is not taken by a replica without that device...
    a.record_intent(&intent("demo", "FV-1"), claim(10))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let other = vec!["another".to_owned()];
    assert!(b
        .take_over(&other, None, Some(Duration::ZERO))
        .await
        .unwrap()
        .is_empty());
    // ...and a predecessor fenced at once (the next process on its state directory) is
    // taken over without waiting.
    let c = replica(&server, "C", TERM).await;
    c.fence_replica("A").await.unwrap();
    let taken = c.take_over(&["web".to_owned()], None, None).await.unwrap();
    assert_eq!(taken.len(), 1);
    assert!(!a.holds_own_lease().await.unwrap());
}
