//! The leased port: its holder sends commands on it in its own task; a holder that panics or
//! drops the lease gives the port back, and the actor goes on.

use std::time::Duration;

use mcf_sfe::types::TaxpayerKey;
use mcf_sfe::{Command, Reply};

use super::FakeDevice;

const I0: Command = Command::TaxpayerField(TaxpayerKey::I0);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_runs_on_the_port_and_a_holder_that_dies_gives_it_back() {
    let mut device = FakeDevice::new();
    let handle = device.connect().await;

    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let (answer, ()) = tokio::join!(session.execute(I0), async {
        let request = device.recv(Duration::from_secs(2)).await.expect("2Bh");
        assert_eq!(request.cmd(), 0x2B);
        device.reply(&request, b"I0,VALUE-1").await;
    });
    match answer {
        Ok(Reply::TaxpayerField(value)) => assert_eq!(value.value, "VALUE-1"),
        other => panic!("2Bh answered {other:?}"),
    }
    drop(lease);

    // The holder's task panics after its command: the port comes back with it.
    let lease = handle.lease().await.unwrap();
    let holder = tokio::spawn(async move {
        let mut lease = lease;
        let reply = lease.session().execute(I0).await;
        assert!(reply.is_err(), "a bug in the holder, after its command");
    });
    let request = device.recv(Duration::from_secs(2)).await.expect("2Bh");
    device.reply(&request, b"I0,VALUE-2").await;
    assert!(holder.await.unwrap_err().is_panic());

    // The actor goes on, and a lease dropped unused gives the port back.
    let unused = handle.lease().await.unwrap();
    drop(unused);
    let mut lease = handle.lease().await.unwrap();
    let mut session = lease.session();
    let (answer, ()) = tokio::join!(session.execute(I0), async {
        let request = device.recv(Duration::from_secs(2)).await.expect("2Bh");
        device.reply(&request, b"I0,VALUE-3").await;
    });
    assert!(matches!(answer, Ok(Reply::TaxpayerField(_))), "{answer:?}");
}
