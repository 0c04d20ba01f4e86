//! A host that follows PROTOCOL.md (500 ms window restarted by SYN, 3 tries with the same SEQ,
//! a 38h with totals listened to until its budget, `P:` polled with a new SEQ every 500 ms,
//! rates from C1h) but reads every reply with `Reply::read` and the profile's dialect, and a
//! session that certifies the four invoices every profile must certify.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use emcf_sim::config::DeviceConfig;
use emcf_sim::{start_on_pty, Firmware};
use mcf_sfe::command::{code, Comment, CreditReference, Payment, UsdRate};
use mcf_sfe::reply::{Certification, DeviceState, GroupRate, Reading, Subtotal};
use mcf_sfe::types::{
    CommentLine, InvoiceType, PaymentMethod, PriceMode, ReferenceType, TaxpayerKey,
};
use mcf_sfe::{Command, Dialect, FromDevice, Reply, ReplyFrame, RequestFrame, Seq};
use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use crate::common::{client, fast_options, group, item, open, Host, HostError, LineStats};

/// One exchange as the host saw it.
pub struct Exchange {
    pub cmd: u8,
    pub frame: ReplyFrame,
    pub reading: Reading,
    /// SYN bytes received while waiting for this reply.
    pub syns: u32,
}

impl Exchange {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(self.frame.data()).into_owned()
    }

    pub fn field_count(&self) -> usize {
        self.frame.data().split(|&b| b == b',').count()
    }
}

pub struct TolerantHost {
    host: Host,
    seq: Seq,
    dialect: Dialect,
    /// SYN bytes seen while listening past the third window of a 38h.
    late_syns: u32,
    pub seen: Vec<Exchange>,
}

impl TolerantHost {
    fn frame(&mut self, command: &Command) -> RequestFrame {
        self.seq = self.seq.next();
        let data = command.encode().expect("command encodes");
        let data = self.dialect.line_breaks.outgoing(&data).into_owned();
        RequestFrame::new(self.seq, command.code(), data).expect("command fits a frame")
    }

    /// Sends `frame` as PROTOCOL.md §3.3 says and records the reply.
    pub async fn send(&mut self, frame: &RequestFrame) -> &Exchange {
        let syns = self.host.stats.syns + self.late_syns;
        let started = Instant::now();
        let totals = frame.cmd() == code::FINALIZE && frame.data() != b"C";
        let reply = match self.host.exchange(frame).await {
            Ok(reply) => reply,
            // A 38h with totals is never sent blindly again: listen until its budget ends.
            Err(HostError::NoAnswer(_)) if totals => {
                self.listen(frame, started + Duration::from_secs(90)).await
            }
            Err(error) => panic!("{:#04x} unanswered: {error:?}", frame.cmd()),
        };
        let reading = Reply::read(reply.cmd(), reply.data(), reply.status(), &self.dialect)
            .unwrap_or_else(|e| panic!("{:#04x} reply unreadable: {e}", reply.cmd()));
        self.seen.push(Exchange {
            cmd: frame.cmd(),
            frame: reply,
            reading,
            syns: self.host.stats.syns + self.late_syns - syns,
        });
        self.seen.last().expect("just pushed")
    }

    async fn listen(&mut self, frame: &RequestFrame, until: Instant) -> ReplyFrame {
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.host.next_item(left).await {
                Some(FromDevice::Syn) => self.late_syns += 1,
                Some(FromDevice::Reply(reply)) if reply.answers(frame) => return reply,
                Some(_) => {}
                None => panic!("38h: no reply within its budget"),
            }
        }
    }

    pub async fn call(&mut self, command: &Command) -> Reply {
        let frame = self.frame(command);
        self.send(&frame).await.reading.reply.clone()
    }

    async fn device_state(&mut self) -> DeviceState {
        match self.call(&Command::DeviceState).await {
            Reply::DeviceState(state) => state,
            other => panic!("C1h answered {other:?}"),
        }
    }

    /// C1h, then `build(rates)` up to its payments, checking MV and MT of 33h, then 38h
    /// (polled while `P:`), checking the security elements against C1h.
    async fn certify(
        &mut self,
        rn: &str,
        kind: InvoiceType,
        expected: (Decimal, Decimal),
        build: impl FnOnce(&dyn Fn(char) -> Decimal) -> Vec<Command>,
    ) -> Certification {
        let state = self.device_state().await;
        assert_eq!(state.nif, crate::common::NIF);
        let rate = |letter: char| rate_of(&state, letter);
        let mut subtotal: Option<Subtotal> = None;
        for command in build(&rate) {
            match self.call(&command).await {
                Reply::Subtotal(s) => subtotal = Some(s),
                Reply::Done => {}
                other => panic!("{rn}: {command:?} answered {other:?}"),
            }
        }
        let subtotal = subtotal.expect("the invoice has a 33h");
        assert_eq!((subtotal.total, subtotal.vat()), expected, "{rn}: 33h");
        let finalize = Command::Finalize(subtotal.finalize_totals());
        let cert = loop {
            match self.call(&finalize).await {
                Reply::Certified(cert) => break cert,
                Reply::Pending(_) => tokio::time::sleep(Duration::from_millis(500)).await,
                other => panic!("{rn}: 38h answered {other:?}"),
            }
        };
        let (counter, fc) = match kind {
            InvoiceType::Fa | InvoiceType::Ea => ("FRC", state.frc + 1),
            _ => ("FVC", state.fvc + 1),
        };
        assert_eq!(cert.invoice_type, kind, "{rn}");
        assert_eq!(
            (cert.mid.as_str(), cert.nif.as_str()),
            (state.mid.as_str(), state.nif.as_str())
        );
        assert_eq!(cert.tc, state.tc + 1, "{rn}: TC");
        assert_eq!(cert.fc, fc, "{rn}: {counter}");
        if let Some(cert_rn) = &cert.rn {
            assert_eq!(cert_rn, rn);
        }
        cert
    }
}

/// The rate to send for a group: C1h's, or the host's own table when C1h carries none.
fn rate_of(state: &DeviceState, letter: char) -> Decimal {
    match state.rate(group(letter)) {
        Some(GroupRate::Percent(rate)) => *rate,
        Some(GroupRate::NotCharged) => Decimal::ZERO,
        Some(GroupRate::Unreadable(raw)) => panic!("rate of {letter} unreadable: {raw}"),
        None => DeviceConfig::default()
            .rate(group(letter))
            .unwrap_or_default(),
    }
}

fn pay(method: PaymentMethod, amount: Decimal) -> Command {
    Command::Payment(Payment { method, amount })
}

/// What a whole session showed.
pub struct Session {
    pub seen: Vec<Exchange>,
    pub certs: Vec<Certification>,
    pub stats: LineStats,
    pub late_syns: u32,
    /// The same C0h frame sent twice with one SEQ: both replies.
    pub repeated: [usize; 2],
    /// 38h C with no invoice open.
    pub refusal: usize,
}

impl Session {
    pub fn of(&self, cmd: u8) -> Vec<&Exchange> {
        self.seen.iter().filter(|e| e.cmd == cmd).collect()
    }

    pub fn certifications(&self) -> Vec<&Exchange> {
        self.of(code::FINALIZE)
            .into_iter()
            .filter(|e| matches!(e.reading.reply, Reply::Certified(_)))
            .collect()
    }

    pub fn anomalies(&self) -> BTreeSet<&'static str> {
        self.seen
            .iter()
            .flat_map(|e| e.reading.anomalies.iter().map(|a| a.field))
            .collect()
    }

    pub fn syns(&self) -> u32 {
        self.stats.syns + self.late_syns
    }
}

/// Serves `firmware` in-process and runs: C2h (throwaway), 2Bh D0, FV ttc (groups A, B, C),
/// FV ht, FV with a USD rate, FA COR on the first FV (each after its C1h), C1h, C2h, one C0h
/// frame sent twice with the same SEQ, 38h C twice. Checks the fiscal memory afterwards.
pub async fn run(firmware: Firmware, window: Duration) -> Session {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut options = fast_options(&dir.path().join("state.json"));
    options.device.taxpayer[5] = "Ligne 1\nLigne 2".to_owned();
    let dialect = Dialect {
        line_breaks: firmware.line_breaks,
        refusal_by_status: true,
    };
    options.firmware = firmware;
    let sim = start_on_pty(options, None)
        .await
        .expect("start the simulator");
    let mut host = Host::open(sim.path());
    host.wait = window;
    let mut h = TolerantHost {
        host,
        seq: Seq::FIRST,
        dialect,
        late_syns: 0,
        seen: Vec::new(),
    };
    h.call(&Command::LinkState).await;
    h.call(&Command::TaxpayerField(TaxpayerKey::D0)).await;

    let fv = h
        .certify(
            "FV-TTC-1",
            InvoiceType::Fv,
            (dec!(2750.00), dec!(215.52)),
            |rate| {
                let mut stylo = item("STYLO BIC", 'B', rate('B'), dec!(600), dec!(2));
                stylo.code = Some("LR 1515".into());
                vec![
                    Command::SetClient(client()),
                    Command::OpenInvoice(open("FV-TTC-1", InvoiceType::Fv, PriceMode::Ttc)),
                    Command::Item(item("SAC", 'A', rate('A'), dec!(500), dec!(1))),
                    Command::Item(stylo),
                    Command::Item(item("CAHIER 100p", 'C', rate('C'), dec!(1050), dec!(1))),
                    Command::Comment(Comment {
                        line: CommentLine::A,
                        text: "Merci, à bientôt\r\nKinshasa".into(),
                    }),
                    Command::Subtotal,
                    pay(PaymentMethod::Especes, dec!(2750.00)),
                ]
            },
        )
        .await;
    let ht = h
        .certify(
            "FV-HT-1",
            InvoiceType::Fv,
            (dec!(1370.00), dec!(170.00)),
            |rate| {
                vec![
                    Command::OpenInvoice(open("FV-HT-1", InvoiceType::Fv, PriceMode::Ht)),
                    Command::Item(item("ECRAN", 'B', rate('B'), dec!(1000), dec!(1))),
                    Command::Item(item("LIVRE", 'C', rate('C'), dec!(200), dec!(1))),
                    Command::Subtotal,
                    pay(PaymentMethod::Virement, dec!(1370.00)),
                ]
            },
        )
        .await;
    let usd = h
        .certify(
            "FV-USD-1",
            InvoiceType::Fv,
            (dec!(1392.00), dec!(192.00)),
            |rate| {
                let mut header = open("FV-USD-1", InvoiceType::Fv, PriceMode::Ht);
                header.usd_rate = Some(UsdRate {
                    rate: dec!(2850.5),
                    date: NaiveDate::from_ymd_opt(2026, 11, 20).expect("date"),
                });
                vec![
                    Command::OpenInvoice(header),
                    Command::Item(item("STYLO BIC", 'B', rate('B'), dec!(600), dec!(2))),
                    Command::Subtotal,
                    pay(PaymentMethod::Especes, dec!(1392.00)),
                ]
            },
        )
        .await;
    let fa = h
        .certify(
            "AV-1",
            InvoiceType::Fa,
            (dec!(600.00), dec!(82.76)),
            |rate| {
                let mut header = open("AV-1", InvoiceType::Fa, PriceMode::Ttc);
                header.reference = Some(CreditReference {
                    kind: ReferenceType::Cor,
                    code_def: fv.code_def.clone(),
                });
                vec![
                    Command::OpenInvoice(header),
                    Command::Item(item("STYLO BIC", 'B', rate('B'), dec!(600), dec!(1))),
                    Command::Subtotal,
                    pay(PaymentMethod::Especes, dec!(600.00)),
                ]
            },
        )
        .await;
    h.call(&Command::DeviceState).await;
    h.call(&Command::LinkState).await;

    // A retransmission the box has already executed (PROTOCOL.md §3.2).
    let repeat = h.frame(&Command::OpenInvoice(open(
        "DUP-1",
        InvoiceType::Fv,
        PriceMode::Ttc,
    )));
    h.send(&repeat).await;
    h.send(&repeat).await;
    let first = h.seen.len() - 2;
    assert_eq!(h.call(&Command::Cancel).await, Reply::Done);
    h.call(&Command::Cancel).await;
    let refusal = h.seen.len() - 1;

    let stats = h.host.stats;
    drop(h.host);
    let (_, engine) = sim.stop().await.expect("the simulator stops cleanly");
    let certs = vec![fv, ht, usd, fa];
    let memory = engine.memory();
    assert_eq!((memory.tc(), memory.fvc(), memory.frc()), (4, 3, 1));
    for cert in &certs {
        let record = memory
            .find(&cert.code_def)
            .expect("the fiscal memory holds it");
        assert_eq!((record.tc, record.fc), (cert.tc, cert.fc));
        assert_eq!(record.invoice_type, cert.invoice_type);
    }
    let rns: Vec<&str> = memory.invoices().iter().map(|r| r.rn.as_str()).collect();
    assert_eq!(rns, ["FV-TTC-1", "FV-HT-1", "FV-USD-1", "AV-1"]);
    assert_eq!(
        memory.invoices()[3].reference.as_deref(),
        Some(certs[0].code_def.as_str())
    );
    assert_eq!(
        memory.invoices()[2].usd_rate.map(|u| u.rate),
        Some(dec!(2850.5))
    );
    Session {
        seen: h.seen,
        certs,
        stats,
        late_syns: h.late_syns,
        repeated: [first, first + 1],
        refusal,
    }
}
