//! A minimal host for the simulator tests: opens the pty through tokio-serial like the
//! gateway will, and follows the host rules of PROTOCOL.md (500 ms per reply-or-SYN, resend
//! the same SEQ on NAK, bad frame or timeout, 3 tries, ignore replies to other SEQs).
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use chrono::NaiveDate;
use emcf_sim::config::DeviceConfig;
use emcf_sim::{start_on_pty, RunningSim, SimOptions};
use futures::{SinkExt, StreamExt};
use mcf_sfe::command::{
    Client, Comment, CreditReference, FinalizeTotals, Item, OpenInvoice, Payment, UsdRate,
};
use mcf_sfe::reply::{Certification, Subtotal};
use mcf_sfe::types::{
    CommentLine, InvoiceType, ItemType, PaymentMethod, PriceMode, ReferenceType, TaxGroup,
};
use mcf_sfe::{Command, FromDevice, HostCodec, Reply, ReplyFrame, RequestFrame, Seq};
use rust_decimal::Decimal;
use rust_decimal_macros::dec;
use tokio::io::AsyncWriteExt;
use tokio::time::timeout;
use tokio_serial::{SerialPortBuilderExt, SerialStream};
use tokio_util::codec::Framed;

/// What the host saw on the line, for assertions.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LineStats {
    pub naks: u32,
    pub syns: u32,
    pub malformed: u32,
    pub timeouts: u32,
    pub stale: u32,
}

pub struct Host {
    framed: Framed<SerialStream, HostCodec>,
    seq: Seq,
    pub stats: LineStats,
    pub wait: Duration,
}

#[derive(Debug)]
pub enum HostError {
    NoAnswer(LineStats),
    Io(std::io::Error),
}

pub const NIF: &str = "A1234567B";

/// A simulator with its fiscal memory in `state` and short processing times.
pub fn fast_options(state: &Path) -> SimOptions {
    let mut device = DeviceConfig {
        state_file: Some(state.to_path_buf()),
        ..DeviceConfig::default()
    };
    device.timing.command = Duration::from_millis(2);
    device.timing.finalize = Duration::from_millis(100);
    device.timing.credit_note = Duration::from_millis(700);
    SimOptions {
        device,
        ..SimOptions::default()
    }
}

/// Starts a simulator on a new pty and opens it as a host.
pub async fn start(options: SimOptions) -> (RunningSim, Host) {
    let sim = start_on_pty(options, None)
        .await
        .expect("start the simulator");
    let host = Host::open(sim.path());
    (sim, host)
}

impl Host {
    pub fn open(path: &Path) -> Host {
        let port = tokio_serial::new(path.to_string_lossy(), 115_200)
            .open_native_async()
            .expect("open the simulator's pty through tokio-serial");
        Host {
            framed: Framed::new(port, HostCodec),
            seq: Seq::new(0xF0).expect("seq"),
            stats: LineStats::default(),
            wait: Duration::from_millis(500),
        }
    }

    /// Sends `cmd` with a new SEQ and returns the typed reply.
    pub async fn call(&mut self, cmd: &Command) -> Reply {
        let reply = self.call_frame(cmd).await.expect("device answers");
        Reply::parse(reply.cmd(), reply.data()).expect("reply parses")
    }

    /// Sends `cmd` with a new SEQ and returns the reply frame.
    pub async fn call_frame(&mut self, cmd: &Command) -> Result<ReplyFrame, HostError> {
        self.seq = self.seq.next();
        let frame = cmd.to_frame(self.seq).expect("command fits a frame");
        self.exchange(&frame).await
    }

    /// Sends `frame` (up to 3 tries) until a reply with its SEQ and CMD arrives.
    pub async fn exchange(&mut self, frame: &RequestFrame) -> Result<ReplyFrame, HostError> {
        for _ in 0..3 {
            self.framed.send(frame).await.map_err(HostError::Io)?;
            loop {
                match timeout(self.wait, self.framed.next()).await {
                    Err(_) => {
                        self.stats.timeouts += 1;
                        break;
                    }
                    Ok(None) => {
                        return Err(HostError::Io(std::io::ErrorKind::UnexpectedEof.into()))
                    }
                    Ok(Some(Err(e))) => return Err(HostError::Io(e)),
                    Ok(Some(Ok(FromDevice::Syn))) => self.stats.syns += 1,
                    Ok(Some(Ok(FromDevice::Nak))) => {
                        self.stats.naks += 1;
                        break;
                    }
                    Ok(Some(Ok(FromDevice::Malformed(_)))) => {
                        self.stats.malformed += 1;
                        break;
                    }
                    Ok(Some(Ok(FromDevice::Reply(reply)))) if reply.answers(frame) => {
                        return Ok(reply)
                    }
                    Ok(Some(Ok(FromDevice::Reply(_)))) => self.stats.stale += 1,
                }
            }
        }
        Err(HostError::NoAnswer(self.stats))
    }

    /// Writes raw bytes (for corrupted frames and garbage).
    pub async fn write_raw(&mut self, bytes: &[u8]) {
        let port = self.framed.get_mut();
        port.write_all(bytes).await.expect("write");
        port.flush().await.expect("flush");
    }

    /// The next item from the device, if one comes within `wait`.
    pub async fn next_item(&mut self, wait: Duration) -> Option<FromDevice> {
        match timeout(wait, self.framed.next()).await {
            Ok(Some(Ok(item))) => Some(item),
            _ => None,
        }
    }

    /// The current SEQ (of the last command sent).
    pub fn seq(&self) -> Seq {
        self.seq
    }

    /// Runs a whole invoice and returns the subtotal and the certification.
    pub async fn certify(&mut self, invoice: &[Command]) -> (Subtotal, Certification) {
        let mut subtotal = None;
        for cmd in invoice {
            match self.call(cmd).await {
                Reply::Subtotal(s) => subtotal = Some(s),
                Reply::Done => {}
                other => panic!("{cmd:?} answered {other:?}"),
            }
        }
        let subtotal = subtotal.expect("the invoice has a 33h");
        let finalize = Command::Finalize(subtotal.finalize_totals());
        loop {
            match self.call(&finalize).await {
                Reply::Certified(cert) => return (subtotal, cert),
                Reply::Pending(_) => tokio::time::sleep(Duration::from_millis(500)).await,
                other => panic!("38h answered {other:?}"),
            }
        }
    }
}

pub fn group(letter: char) -> TaxGroup {
    TaxGroup::from_letter(letter).expect("group letter")
}

pub fn item(name: &str, letter: char, rate: Decimal, price: Decimal, quantity: Decimal) -> Item {
    Item::new(name, ItemType::Bie, group(letter), rate, price, quantity).unwrap()
}

pub fn open(rn: &str, invoice_type: InvoiceType, mode: PriceMode) -> OpenInvoice {
    OpenInvoice {
        operator_id: "7".into(),
        operator_name: "Caisse 1".into(),
        nif: NIF.into(),
        invoice_type,
        reference: None,
        price_mode: mode,
        isf: "ISF-01".into(),
        rn: rn.into(),
        usd_rate: None,
    }
}

pub fn client() -> Client {
    Client {
        client_type: "PM".into(),
        nif: "B7654321C".into(),
        name: "Brasserie du Fleuve, SARL".into(),
        address: "12 av. du Commerce, Kinshasa".into(),
        contact: "+243 81 000 0000".into(),
        ..Client::default()
    }
}

/// The design's example: 2 x STYLO BIC at 600.00 TTC in group B, paid in cash.
pub fn fv_invoice(rn: &str) -> Vec<Command> {
    let mut stylo = item("STYLO BIC", 'B', dec!(16), dec!(600), dec!(2));
    stylo.code = Some("LR 1515".into());
    vec![
        Command::SetClient(client()),
        Command::OpenInvoice(open(rn, InvoiceType::Fv, PriceMode::Ttc)),
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

pub fn fa_invoice(rn: &str, original: &str, refund: Decimal) -> Vec<Command> {
    let mut open = open(rn, InvoiceType::Fa, PriceMode::Ttc);
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

/// An export sale priced HT in CDF from a USD source at 2800 CDF/USD.
pub fn ev_usd_invoice(rn: &str) -> Vec<Command> {
    let mut open = open(rn, InvoiceType::Ev, PriceMode::Ht);
    open.usd_rate = Some(UsdRate {
        rate: dec!(2800),
        date: NaiveDate::from_ymd_opt(2026, 11, 20).expect("date"),
    });
    vec![
        Command::OpenInvoice(open),
        Command::Item(item("CUIVRE CATHODE", 'E', dec!(0), dec!(280000), dec!(3))),
        Command::Subtotal,
        Command::Payment(Payment {
            method: PaymentMethod::Virement,
            amount: dec!(840000),
        }),
    ]
}

pub fn finalize(total: Decimal, vat: Decimal) -> Command {
    Command::Finalize(FinalizeTotals { total, vat })
}
