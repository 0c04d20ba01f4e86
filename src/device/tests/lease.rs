//! Jobs shipped to the port (`Lease::run`): they run on the port inside the actor; a job that
//! dies unanswered is reported as such (what it did is not known), and the actor goes on.

use std::time::Duration;

use futures::future::BoxFuture;
use mcf_sfe::types::TaxpayerKey;
use mcf_sfe::{Command, Reply};

use super::FakeDevice;
use crate::device::{DeviceError, PortSession, SessionJob};

const I0: Command = Command::TaxpayerField(TaxpayerKey::I0);

/// Reads 2Bh I0 on the port, then panics if asked to.
struct ReadI0 {
    panic_after: bool,
}

impl SessionJob for ReadI0 {
    type Output = Result<Reply, DeviceError>;

    fn run(self: Box<Self>, mut session: PortSession<'_>) -> BoxFuture<'_, Self::Output> {
        Box::pin(async move {
            let reply = session.execute(I0).await;
            assert!(!self.panic_after, "a bug in the job, after its command");
            reply
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_runs_on_the_port_and_a_dead_one_is_not_taken_for_nothing_sent() {
    let mut device = FakeDevice::new();
    let handle = device.connect().await;

    let lease = handle.lease_in_turn(handle.take_turn()).await.unwrap();
    let job = lease.run(ReadI0 { panic_after: false });
    let (answer, ()) = tokio::join!(job, async {
        let request = device.recv(Duration::from_secs(2)).await.expect("2Bh");
        assert_eq!(request.cmd(), 0x2B);
        device.reply(&request, b"I0,VALUE-1").await;
    });
    match answer {
        Ok(Ok(Reply::TaxpayerField(value))) => assert_eq!(value.value, "VALUE-1"),
        other => panic!("2Bh answered {other:?}"),
    }

    // The command went out and was answered, then the job died: its caller must not read
    // that as "nothing was sent".
    let lease = handle.lease_in_turn(handle.take_turn()).await.unwrap();
    let job = lease.run(ReadI0 { panic_after: true });
    let (answer, ()) = tokio::join!(job, async {
        let request = device.recv(Duration::from_secs(2)).await.expect("2Bh");
        device.reply(&request, b"I0,VALUE-2").await;
    });
    assert!(matches!(answer, Err(DeviceError::JobAborted)), "{answer:?}");

    // The actor goes on, and a lease dropped unused gives the port back.
    let unused = handle.lease_in_turn(handle.take_turn()).await.unwrap();
    drop(unused);
    let mut session = handle.acquire().await.unwrap();
    let (answer, ()) = tokio::join!(session.execute(I0), async {
        let request = device.recv(Duration::from_secs(2)).await.expect("2Bh");
        device.reply(&request, b"I0,VALUE-3").await;
    });
    assert!(matches!(answer, Ok(Reply::TaxpayerField(_))), "{answer:?}");
}
