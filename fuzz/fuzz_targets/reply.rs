//! Fuzzes the reply parser the way the gateway meets it: DATA from a hostile or broken box,
//! inside a well-formed reply frame, answering one of the commands the gateway sends.
//!
//! Input layout: `[cmd_index, seq, s0..s5, data...]`. `cmd_index` picks one of the ten
//! commands (C0h C1h C2h C3h 2Bh 31h 33h 35h 36h 38h), `seq` is made a valid SEQ, the six
//! status bytes are taken as they are, `data` is cut to the longest reply DATA.
//!
//! What must hold:
//! - the frame built from them goes through `HostCodec` as exactly one reply, equal to it,
//!   so the reader sees exactly the bytes the device sent;
//! - `Reply::read` (the tolerant reader, with the frame's status and a dialect taken from the
//!   SEQ's low bits) never panics, and neither does anything the gateway computes from a
//!   typed reply: `Subtotal::vat` and `finalize_totals` (saturating on hostile amounts),
//!   `Certification::counters` and `qr_code`, `DeviceState::rate` of every group;
//! - a reply that parses and encodes again reads back the same (one known exception, the
//!   same as the `decode` target's: a C1h MID that starts with `E:`);
//! - a refusal is recognised whatever the command: DATA starting with `E:` is `Refused`.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use mcf_sfe::command::code;
use mcf_sfe::reply::Reply;
use mcf_sfe::types::TaxGroup;
use mcf_sfe::wire::{Status, MAX_REPLY_DATA, STATUS_LEN};
use mcf_sfe::{Dialect, FromDevice, HostCodec, LineBreaks, ReplyFrame, Seq};
use tokio_util::codec::Decoder;

/// The commands whose replies the gateway reads.
const COMMANDS: [u8; 10] = [
    code::OPEN_INVOICE,
    code::DEVICE_STATE,
    code::LINK_STATE,
    code::SET_CLIENT,
    code::TAXPAYER_FIELD,
    code::ITEM,
    code::SUBTOTAL,
    code::PAYMENT,
    code::COMMENT,
    code::FINALIZE,
];

/// What the gateway derives from a typed reply; must not panic.
fn use_like_the_gateway(reply: &Reply) {
    match reply {
        Reply::DeviceState(state) => {
            for group in TaxGroup::all() {
                let _ = state.rate(group);
            }
        }
        Reply::Subtotal(subtotal) => {
            let totals = subtotal.finalize_totals();
            assert_eq!(totals.vat, subtotal.vat());
            assert_eq!(totals.total, subtotal.total);
        }
        Reply::Certified(certification) => {
            let counters = certification.counters();
            assert!(counters.contains('/'), "{counters}");
            let qr = certification.qr_code();
            assert!(qr.starts_with("RDCDEF01;"), "{qr}");
        }
        Reply::LinkState(_)
        | Reply::TaxpayerField(_)
        | Reply::Pending(_)
        | Reply::Done
        | Reply::Refused(_) => {}
    }
}

fuzz_target!(|input: &[u8]| {
    let [cmd_index, seq, rest @ ..] = input else {
        return;
    };
    if rest.len() < STATUS_LEN {
        return;
    }
    let (status_bytes, data) = rest.split_at(STATUS_LEN);
    let cmd = COMMANDS[usize::from(*cmd_index) % COMMANDS.len()];
    let seq = Seq::new(*seq).unwrap_or(Seq::FIRST);
    let mut status = [0u8; STATUS_LEN];
    status.copy_from_slice(status_bytes);
    let data = &data[..data.len().min(MAX_REPLY_DATA)];

    // The frame as the device would send it, read by the gateway's decoder.
    let frame = ReplyFrame::new(seq, cmd, data.to_vec(), Status(status)).expect("fits");
    let mut buf = BytesMut::from(frame.to_bytes().as_slice());
    let mut items = Vec::new();
    while let Some(item) = HostCodec.decode(&mut buf).expect("decode never fails") {
        items.push(item);
    }
    while let Some(item) = HostCodec.decode_eof(&mut buf).expect("decode never fails") {
        items.push(item);
    }
    assert_eq!(
        items,
        vec![FromDevice::Reply(frame.clone())],
        "a well-formed reply frame must decode as itself"
    );

    // The gateway reads tolerantly, with the box's dialect and the frame's status.
    let dialect = Dialect {
        line_breaks: if seq.get() & 1 == 0 {
            LineBreaks::Protocol
        } else {
            LineBreaks::Swapped
        },
        refusal_by_status: seq.get() & 2 == 0,
    };
    let parsed = Reply::read(cmd, frame.data(), frame.status(), &dialect).map(|r| r.reply);
    if data.starts_with(b"E:") {
        assert!(
            matches!(parsed, Ok(Reply::Refused(_))),
            "E: DATA not read as a refusal: {parsed:?}"
        );
    }
    let Ok(reply) = parsed else {
        return;
    };
    use_like_the_gateway(&reply);
    if let Ok(again) = reply.encode(cmd) {
        assert!(again.len() <= MAX_REPLY_DATA);
        let reads_as_refusal = again.starts_with(b"E:") && !matches!(reply, Reply::Refused(_));
        if !reads_as_refusal && dialect.line_breaks == LineBreaks::Protocol {
            assert_eq!(Reply::parse(cmd, &again), Ok(reply));
        }
    }
});
