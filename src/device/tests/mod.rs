//! Tests of the device link over real pseudo-terminals: against the simulator (`sim.rs`), and
//! against a scripted device the test plays byte by byte (`raw.rs`).

mod lease;
mod raw;
mod sim;
mod transport;

use std::path::{Path, PathBuf};
use std::time::Duration;

use emcf_sim::config::DeviceConfig as SimDevice;
use emcf_sim::SimOptions;
use futures::{SinkExt, StreamExt};
use mcf_sfe::command::{Client, Comment, CreditReference, Item, OpenInvoice, Payment};
use mcf_sfe::reply::Subtotal;
use mcf_sfe::types::{
    CommentLine, InvoiceType, ItemType, PaymentMethod, PriceMode, ReferenceType, TaxGroup,
};
use mcf_sfe::{Command, DeviceCodec, FromHost, ReplyFrame, RequestFrame, Seq, Status, ToHost};
use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;
use tokio_serial::{SerialPort, SerialStream};
use tokio_util::codec::Framed;

use super::{DeviceConfig, DeviceHandle, LinkTiming, PortSession};
use mcf_sfe::Reply;

pub(super) const NIF: &str = "A1234567B";

/// The C1h the fake device answers: a fresh box (no invoice), PROTOCOL.md's 30 fields.
pub(super) const FAKE_STATE: &[u8] =
    b"FAKE0001,A1234567B,20261121143000,0,0,0,,,,,,,16.00,5.00,,0.00,16.00,5.00,,,,,,,,1.00,1.00,,,";

/// Short timings: window 150 ms, 3 tries, short budgets, fast reconnects.
pub(super) fn timing() -> LinkTiming {
    LinkTiming {
        window: Duration::from_millis(150),
        tries: 3,
        command_budget: Duration::from_secs(2),
        finalize_budget: Duration::from_secs(1),
        credit_note_budget: Duration::from_secs(2),
        poll_interval: Duration::from_millis(100),
        reconnect_min: Duration::from_millis(20),
        reconnect_max: Duration::from_millis(200),
    }
}

pub(super) fn config(path: &Path) -> DeviceConfig {
    DeviceConfig {
        timing: timing(),
        health_interval: None,
        ..DeviceConfig::simulator("test-device", path)
    }
}

/// A simulator with its fiscal memory in `state` and short processing times.
pub(super) fn sim_options(state: &Path) -> SimOptions {
    let mut device = SimDevice {
        state_file: Some(state.to_path_buf()),
        ..SimDevice::default()
    };
    device.timing.command = Duration::from_millis(2);
    device.timing.finalize = Duration::from_millis(100);
    device.timing.credit_note = Duration::from_millis(600);
    SimOptions {
        device,
        ..SimOptions::default()
    }
}

/// Waits until the link status says `connected` (panics after 2 s).
pub(super) async fn wait_connected(handle: &DeviceHandle, connected: bool) {
    let until = Instant::now() + Duration::from_secs(2);
    while handle.status().connected != connected {
        assert!(
            Instant::now() < until,
            "link never became connected={connected}: {:?}",
            handle.status()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until `queued` sessions wait (panics after 2 s).
pub(super) async fn wait_queued(handle: &DeviceHandle, queued: usize) {
    let until = Instant::now() + Duration::from_secs(2);
    while handle.status().queued != queued {
        assert!(Instant::now() < until, "queue never held {queued}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The commands of a sales invoice up to the payments (the design's example).
pub(super) fn fv_invoice(rn: &str) -> Vec<Command> {
    let mut stylo = item("STYLO BIC", 'B', dec!(16), dec!(600), dec!(2));
    stylo.code = Some("LR 1515".into());
    vec![
        Command::SetClient(Client {
            client_type: "PM".into(),
            nif: "B7654321C".into(),
            name: "Brasserie du Fleuve, SARL".into(),
            ..Client::default()
        }),
        Command::OpenInvoice(open(rn, InvoiceType::Fv)),
        Command::Item(stylo),
        Command::Item(item("CAHIER 100p", 'C', dec!(5), dec!(1050), dec!(1))),
        Command::Comment(Comment {
            line: CommentLine::A,
            text: "Merci de votre visite".into(),
        }),
        Command::Subtotal,
        Command::Payment(Payment {
            method: PaymentMethod::Especes,
            amount: dec!(2250),
        }),
    ]
}

/// A credit note refunding `refund` on the invoice `original` (its codeDEFDGI).
pub(super) fn fa_invoice(rn: &str, original: &str, refund: Decimal) -> Vec<Command> {
    let mut open = open(rn, InvoiceType::Fa);
    open.reference = Some(CreditReference {
        kind: ReferenceType::Cor,
        code_def: original.into(),
    });
    vec![
        Command::OpenInvoice(open),
        Command::Item(item("STYLO BIC", 'B', dec!(16), refund, dec!(1))),
        Command::Subtotal,
        Command::Payment(Payment {
            method: PaymentMethod::Especes,
            amount: refund,
        }),
    ]
}

fn item(name: &str, letter: char, rate: Decimal, price: Decimal, quantity: Decimal) -> Item {
    let group = TaxGroup::from_letter(letter).unwrap();
    Item::new(name, ItemType::Bie, group, rate, price, quantity).unwrap()
}

fn open(rn: &str, invoice_type: InvoiceType) -> OpenInvoice {
    OpenInvoice {
        operator_id: "7".into(),
        operator_name: "Caisse 1".into(),
        nif: NIF.into(),
        invoice_type,
        reference: None,
        price_mode: PriceMode::Ttc,
        isf: "ISF-01".into(),
        rn: rn.into(),
        usd_rate: None,
    }
}

/// Runs `commands` on the session; returns the 33h subtotal.
pub(super) async fn run_until_finalize(
    session: &mut PortSession<'_>,
    commands: Vec<Command>,
) -> Subtotal {
    let mut subtotal = None;
    for command in commands {
        let cmd = command.code();
        match session.execute(command).await {
            Ok(Reply::Subtotal(s)) => subtotal = Some(s),
            Ok(Reply::Done) => {}
            other => panic!("{cmd:#04x} answered {other:?}"),
        }
    }
    subtotal.expect("the invoice has a 33h")
}

/// A device the test plays: the master end of a pty; the link opens the slave's path.
pub(super) struct FakeDevice {
    framed: Framed<SerialStream, DeviceCodec>,
    _slave: SerialStream,
    pub path: PathBuf,
}

impl FakeDevice {
    pub fn new() -> FakeDevice {
        let (master, slave) = SerialStream::pair().unwrap();
        let path = PathBuf::from(slave.name().unwrap());
        FakeDevice {
            framed: Framed::new(master, DeviceCodec),
            _slave: slave,
            path,
        }
    }

    /// A link to this device, connected (the throwaway C2h answered).
    pub async fn connect(&mut self) -> DeviceHandle {
        self.connect_with(config(&self.path)).await
    }

    pub async fn connect_with(&mut self, config: DeviceConfig) -> DeviceHandle {
        let handle = super::spawn(config);
        let c2 = self.recv(Duration::from_secs(2)).await.expect("a C2h");
        assert_eq!(c2.cmd(), 0xC2, "the first command after opening is C2h");
        self.reply(&c2, b"0,0,,CON,").await;
        self.answer_state().await;
        wait_connected(&handle, true).await;
        handle
    }

    /// Answers the C1h the link sends once connected.
    pub async fn answer_state(&mut self) {
        let c1 = self.recv(Duration::from_secs(2)).await.expect("a C1h");
        assert_eq!(c1.cmd(), 0xC1, "C1h follows the throwaway C2h");
        self.reply(&c1, FAKE_STATE).await;
    }

    /// The next request frame within `wait`.
    pub async fn recv(&mut self, wait: Duration) -> Option<RequestFrame> {
        match tokio::time::timeout(wait, self.framed.next()).await {
            Ok(Some(Ok(FromHost::Request(frame)))) => Some(frame),
            Ok(Some(Ok(FromHost::Malformed(error)))) => panic!("host sent a bad frame: {error}"),
            Ok(Some(Err(error))) => panic!("device side read failed: {error}"),
            Ok(None) | Err(_) => None,
        }
    }

    /// Every request frame within `wait`.
    pub async fn collect(&mut self, wait: Duration) -> Vec<RequestFrame> {
        let until = Instant::now() + wait;
        let mut frames = Vec::new();
        while let Some(frame) = self
            .recv(until.saturating_duration_since(Instant::now()))
            .await
        {
            frames.push(frame);
        }
        frames
    }

    pub async fn reply(&mut self, to: &RequestFrame, data: &[u8]) {
        self.reply_as(to.seq(), to.cmd(), data).await;
    }

    pub async fn reply_as(&mut self, seq: Seq, cmd: u8, data: &[u8]) {
        let frame = ReplyFrame::new(seq, cmd, data.to_vec(), Status::default()).unwrap();
        self.framed.send(ToHost::Reply(frame)).await.unwrap();
    }

    pub async fn send(&mut self, item: ToHost) {
        self.framed.send(item).await.unwrap();
    }

    pub async fn raw(&mut self, bytes: &[u8]) {
        let port = self.framed.get_mut();
        port.write_all(bytes).await.unwrap();
        port.flush().await.unwrap();
    }
}
