//! Leases on PostgreSQL (`src/store/postgres/leases.rs`, issue 29): one holder at a time, by
//! the database's clock; an expired lease taken over under a higher epoch, so that the old
//! holder's epoch no longer holds (fencing); the schema keeps the epoch from going back. Two
//! replicas' `Leadership` (`src/certify/leader.rs`): never both leading, the leader's
//! successor within seconds of its last renewal.

use std::sync::Arc;
use std::time::{Duration, Instant};

use emcf_gateway::certify::leader::{Leadership, RENEW, TERM};
use emcf_gateway::store::postgres::{PgStore, PgTls};
use emcf_gateway::store::Store;
use tokio_postgres::error::SqlState;

use super::postgres::{app_pool, server, settings, APP};
use super::postgres_register::register_on;

const LEADER: &str = "leader";
const LONG: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_holder_at_a_time_and_a_late_holder_is_fenced_off() {
    let Some((_server, register)) = register_on("PostgreSQL leases").await else {
        return;
    };
    // A takes it; B cannot while A holds it; A renews under the same epoch.
    assert_eq!(
        register.take_lease(LEADER, "A", LONG).await.unwrap(),
        Some(1)
    );
    assert_eq!(register.take_lease(LEADER, "B", LONG).await.unwrap(), None);
    assert_eq!(
        register.take_lease(LEADER, "A", LONG).await.unwrap(),
        Some(1)
    );
    assert!(register.holds_lease(LEADER, "A", 1).await.unwrap());

    // A stops renewing (a short lease that runs out): B takes it over under epoch 2.
    let short = Duration::from_millis(300);
    assert_eq!(
        register.take_lease(LEADER, "A", short).await.unwrap(),
        Some(1)
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        !register.holds_lease(LEADER, "A", 1).await.unwrap(),
        "ran out"
    );
    assert_eq!(
        register.take_lease(LEADER, "B", LONG).await.unwrap(),
        Some(2)
    );
    // A, back, neither holds it under its epoch, nor takes it, nor gives it back.
    assert!(!register.holds_lease(LEADER, "A", 1).await.unwrap());
    assert_eq!(register.take_lease(LEADER, "A", LONG).await.unwrap(), None);
    assert!(!register.release_lease(LEADER, "A", 1).await.unwrap());
    assert!(register.holds_lease(LEADER, "B", 2).await.unwrap());

    // B gives it back: A takes it at once, under a higher epoch again.
    assert!(register.release_lease(LEADER, "B", 2).await.unwrap());
    assert!(!register.holds_lease(LEADER, "B", 2).await.unwrap());
    assert_eq!(
        register.take_lease(LEADER, "A", LONG).await.unwrap(),
        Some(3)
    );

    // Leases of other names are their own.
    assert_eq!(
        register.take_lease("other", "B", LONG).await.unwrap(),
        Some(1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_takers_at_once_get_one_lease_and_its_epoch_never_goes_back() {
    let Some((server, register)) = register_on("PostgreSQL leases at once").await else {
        return;
    };
    let register = Arc::new(register);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let register = Arc::clone(&register);
        tasks.push(tokio::spawn(async move {
            register
                .take_lease(LEADER, &format!("replica-{i}"), LONG)
                .await
                .unwrap()
        }));
    }
    let mut granted = Vec::new();
    for task in tasks {
        granted.extend(task.await.unwrap());
    }
    assert_eq!(granted, vec![1], "exactly one of eight takers");

    // The schema refuses an epoch going back, whoever asks.
    let pool = app_pool(&server).await;
    let client = pool.client().await.unwrap();
    let refused = client
        .execute(
            "UPDATE leases SET epoch = epoch - 1 WHERE name = 'leader'",
            &[],
        )
        .await
        .err()
        .and_then(|e| e.as_db_error().map(|db| db.code().clone()));
    assert_eq!(refused, Some(SqlState::CHECK_VIOLATION));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_leader_is_succeeded_within_seconds_and_never_while_it_still_leads() {
    let Some(server) = server("PostgreSQL leadership") else {
        return;
    };
    let (pg, _) = PgStore::open(&settings(server.socket_url(APP, APP), None, PgTls::Disable))
        .await
        .unwrap();
    let store = Arc::new(Store::Postgres(pg));
    let (a, b) = (
        Leadership::new(&Leadership::replica_name()),
        Leadership::new(&Leadership::replica_name()),
    );
    let renew = |who: &Leadership| {
        let (who, store) = (who.clone(), Arc::clone(&store));
        tokio::task::spawn_blocking(move || who.renew(&store))
    };
    renew(&a).await.unwrap();
    renew(&b).await.unwrap();
    assert!(a.leads() && !b.leads(), "the first to ask leads");
    let first = a.epoch().unwrap();

    // A falls silent (a replica frozen or cut off): B asks every tenth of a second; at no
    // moment do both count themselves leader, and B leads within a term and a renewal.
    let silent = Instant::now();
    let took_over = loop {
        renew(&b).await.unwrap();
        assert!(!(a.leads() && b.leads()), "two leaders at once");
        if b.leads() {
            break silent.elapsed();
        }
        assert!(silent.elapsed() < TERM + RENEW * 2, "no successor");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        took_over >= TERM - Duration::from_millis(500),
        "{took_over:?}: not before A's term ran out"
    );
    assert!(
        b.epoch().unwrap() > first,
        "a new epoch fences A's writes off"
    );

    // A comes back: it does not lead; B gives the lease back at its shutdown and A leads at
    // its next renewal.
    renew(&a).await.unwrap();
    assert!(!a.leads());
    let (resigning, store2) = (b.clone(), Arc::clone(&store));
    tokio::task::spawn_blocking(move || resigning.resign(&store2))
        .await
        .unwrap();
    assert!(!b.leads());
    renew(&a).await.unwrap();
    assert!(a.leads());
}
