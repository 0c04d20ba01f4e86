//! Golden vectors, device -> host: the typed reply and status flags of every reply vector
//! encode to exactly its frame (through `ReplyFrame` and `DeviceCodec`), including the forms
//! the crate only reads; the frame decodes back to the typed reply (through `HostCodec`); the
//! NAK and SYN control bytes encode and decode; and the golden session's certification gives
//! the expected security elements.

mod meaning;
mod vectors;

use bytes::BytesMut;
use mcf_sfe::{
    Command, DeviceCodec, FromDevice, HostCodec, Reply, ReplyFrame, Seq, Status, StatusFlag, ToHost,
};
use meaning::{decode_all, text, typed, typed_of, typed_reply, Typed};
use rust_decimal_macros::dec;
use tokio_util::codec::Encoder;
use vectors::{hex, Body};

#[test]
fn replies_encode_to_the_golden_bytes() {
    let mut checked = 0;
    let mut read_only = 0;
    for v in vectors::all() {
        let Body::Reply {
            seq,
            cmd,
            data,
            status,
        } = &v.body
        else {
            continue;
        };
        let (reply, flags, written) = match typed_of(&v) {
            Typed::Reply(reply, flags) => (reply, flags, None),
            Typed::ReadOnlyReply(reply, flags, written) => (reply, flags, Some(written)),
            _ => panic!("{v}: a reply vector must be a reply"),
        };
        assert_eq!(Status::with(&flags).0, *status, "{v}: status flags");
        let encoded = reply.encode(*cmd).unwrap();
        match written {
            None => assert_eq!(text(&encoded), text(data), "{v}: DATA"),
            Some(written) => {
                // An older form: the crate writes the current form of the same value.
                assert_ne!(written.as_bytes(), &data[..], "{v}: not a read-only form");
                assert_eq!(text(&encoded), written, "{v}: DATA the crate writes");
                assert_eq!(Reply::parse(*cmd, &encoded).as_ref(), Ok(&reply), "{v}");
                read_only += 1;
            }
        }
        let frame =
            ReplyFrame::new(Seq::new(*seq).unwrap(), *cmd, data.clone(), Status(*status)).unwrap();
        assert_eq!(
            hex(&frame.to_bytes()),
            hex(&v.frame),
            "{v}: ReplyFrame bytes"
        );
        let mut via_codec = BytesMut::new();
        DeviceCodec
            .encode(ToHost::Reply(frame), &mut via_codec)
            .unwrap();
        assert_eq!(&via_codec[..], &v.frame[..], "{v}: DeviceCodec encoder");
        checked += 1;
    }
    assert_eq!((checked, read_only), (16, 1));
}

#[test]
fn reply_frames_decode_to_the_typed_reply() {
    for v in vectors::all() {
        let Body::Reply { seq, cmd, .. } = &v.body else {
            continue;
        };
        let (reply, flags) = typed_reply(&v);
        let items = decode_all(&mut HostCodec, &v.frame);
        let [FromDevice::Reply(frame)] = &items[..] else {
            panic!("{v}: HostCodec decoded {items:?}");
        };
        assert_eq!((frame.seq().get(), frame.cmd()), (*seq, *cmd), "{v}");
        for flag in StatusFlag::ALL {
            assert_eq!(
                frame.status().has(flag),
                flags.contains(&flag),
                "{v}: {flag:?}"
            );
        }
        assert_eq!(
            Reply::parse(frame.cmd(), frame.data()).as_ref(),
            Ok(&reply),
            "{v}"
        );
    }
}

#[test]
fn control_bytes_encode_and_decode() {
    for v in vectors::all() {
        if v.body != Body::Control {
            continue;
        }
        let (item, expected) = match typed_of(&v) {
            Typed::Nak => (ToHost::Nak, FromDevice::Nak),
            Typed::Syn => (ToHost::Syn, FromDevice::Syn),
            _ => panic!("{v}: a control vector must be NAK or SYN"),
        };
        let mut bytes = BytesMut::new();
        DeviceCodec.encode(item, &mut bytes).unwrap();
        assert_eq!(&bytes[..], &v.frame[..], "{v}");
        assert_eq!(decode_all(&mut HostCodec, &v.frame), vec![expected], "{v}");
        // Towards the device a lone control byte is line noise, not an item.
        assert_eq!(decode_all(&mut DeviceCodec, &v.frame), vec![], "{v}");
    }
}

/// The golden session is coherent the way the gateway uses it: 38h repeats the 33h totals,
/// the credit note refers to a codeDEFDGI, and the certification gives the security elements.
#[test]
fn the_golden_session_gives_the_expected_security_elements() {
    let Some(Typed::Reply(Reply::Subtotal(subtotal), _)) = typed("reply-33-subtotal") else {
        unreachable!()
    };
    let Some(Typed::Command(Command::Finalize(totals))) = typed("cmd-38-finalize") else {
        unreachable!()
    };
    assert_eq!(subtotal.finalize_totals(), totals);
    assert_eq!(subtotal.vat(), dec!(372.41));

    let v = vectors::get("reply-38-certified");
    let items = decode_all(&mut HostCodec, &v.frame);
    let [FromDevice::Reply(frame)] = &items[..] else {
        panic!("{items:?}")
    };
    let Ok(Reply::Certified(cert)) = Reply::parse(frame.cmd(), frame.data()) else {
        panic!("not a certification")
    };
    assert_eq!(cert.code_def, "ZYXWVUTSRQPONMLKJIHGFEDC");
    assert_eq!(cert.counters(), "331/346 FV");
    assert_eq!(
        cert.qr_code(),
        "RDCDEF01;SIM0000001;ZYXWVUTSRQPONMLKJIHGFEDC;A1234567B;20261121143107"
    );
    assert_eq!(cert.rn.as_deref(), Some("F-2026-001"));

    // The older forms carry the same security elements (FN aside).
    for name in ["reply-38-certified-no-fn", "reply-38-certified-no-r"] {
        let v = vectors::get(name);
        let items = decode_all(&mut HostCodec, &v.frame);
        let [FromDevice::Reply(frame)] = &items[..] else {
            panic!("{v}: {items:?}")
        };
        let Ok(Reply::Certified(old)) = Reply::parse(frame.cmd(), frame.data()) else {
            panic!("{v}: not a certification")
        };
        assert_eq!(old.code_def, cert.code_def, "{v}");
        assert_eq!(old.counters(), cert.counters(), "{v}");
        assert_eq!(old.qr_code(), cert.qr_code(), "{v}");
    }
}
