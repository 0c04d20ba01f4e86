//! Throughput of the codec and the typed layer, printed as figures (not a test):
//!
//! ```sh
//! cargo run --release -p mcf-sfe --example bench
//! ```
//!
//! A link at 115200 baud carries about 11.5 KB/s, so the decoder needs to be orders of
//! magnitude faster than that to stay out of the way; these figures show by how much.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use mcf_sfe::command::Item;
use mcf_sfe::types::{ItemType, TaxGroup};
use mcf_sfe::{Command, DeviceCodec, FromHost, HostCodec, Seq};
use rust_decimal::Decimal;
use tokio_util::codec::Decoder;

fn item_command() -> Command {
    let group = TaxGroup::from_letter('B').unwrap_or_else(|| unreachable!("B is a group"));
    let item = Item::new(
        "STYLO BIC bleu, pointe fine",
        ItemType::Bie,
        group,
        Decimal::new(1600, 2),
        Decimal::new(60000, 2),
        Decimal::new(2, 0),
    )
    .unwrap_or_else(|| unreachable!("small amounts"));
    Command::Item(Item {
        code: Some("LR 1515".into()),
        ..item
    })
}

fn report(what: &str, count: u64, bytes: u64, elapsed: Duration) {
    let secs = elapsed.as_secs_f64();
    println!(
        "{what:<44} {:>12.0} /s {:>9.1} MB/s",
        count as f64 / secs,
        bytes as f64 / secs / 1e6
    );
}

fn main() {
    const N: u64 = 200_000;
    let command = item_command();

    let start = Instant::now();
    let mut bytes = 0u64;
    let mut seq = Seq::FIRST;
    for _ in 0..N {
        let frame = command.to_frame(seq).unwrap_or_else(|e| panic!("{e}"));
        bytes += black_box(frame.to_bytes()).len() as u64;
        seq = seq.next();
    }
    report("encode 31h (typed -> bytes)", N, bytes, start.elapsed());

    let mut stream = Vec::new();
    for _ in 0..N {
        let frame = command.to_frame(seq).unwrap_or_else(|e| panic!("{e}"));
        stream.extend(frame.to_bytes());
        seq = seq.next();
    }
    let start = Instant::now();
    let mut buf = BytesMut::from(&stream[..]);
    let mut decoded = 0u64;
    while let Ok(Some(item)) = DeviceCodec.decode(&mut buf) {
        if let FromHost::Request(frame) = item {
            black_box(Command::from_frame(&frame).ok());
            decoded += 1;
        }
    }
    report(
        "decode + parse 31h (bytes -> typed)",
        decoded,
        stream.len() as u64,
        start.elapsed(),
    );

    // Noise: 1 MB of bytes without SOH, as a broken line would send.
    let noise: Vec<u8> = (0..1_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 | 0x02)
        .collect();
    let start = Instant::now();
    let mut buf = BytesMut::from(&noise[..]);
    let mut items = 0u64;
    while let Ok(Some(_)) = HostCodec.decode(&mut buf) {
        items += 1;
    }
    report(
        "resync through noise (host side)",
        noise.len() as u64,
        noise.len() as u64,
        start.elapsed(),
    );
    println!("  ({items} NAK/SYN bytes seen in the noise)");
}
