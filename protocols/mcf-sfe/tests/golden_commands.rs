//! Golden vectors, host -> device: the typed command of every command vector encodes to
//! exactly its frame (through `Command::to_frame` and `HostCodec`), and the frame decodes back
//! to the typed command (through `DeviceCodec`).

mod meaning;
mod vectors;

use bytes::BytesMut;
use mcf_sfe::{Command, DeviceCodec, FromHost, HostCodec, Seq};
use meaning::{decode_all, text, typed_of, Typed};
use tokio_util::codec::Encoder;
use vectors::{hex, Body};

#[test]
fn commands_encode_to_the_golden_bytes() {
    let mut checked = 0;
    for v in vectors::all() {
        let Body::Request { seq, cmd, data } = &v.body else {
            continue;
        };
        let Typed::Command(command) = typed_of(&v) else {
            panic!("{v}: a host->device vector must be a command");
        };
        assert_eq!(command.code(), *cmd, "{v}: command byte");
        assert_eq!(text(&command.encode().unwrap()), text(data), "{v}: DATA");
        let frame = command.to_frame(Seq::new(*seq).unwrap()).unwrap();
        let bytes = frame.to_bytes();
        assert_eq!(
            hex(&bytes),
            hex(&v.frame),
            "{v}: Command::to_frame(..).to_bytes()"
        );
        let mut via_codec = BytesMut::new();
        HostCodec.encode(&frame, &mut via_codec).unwrap();
        assert_eq!(&via_codec[..], &v.frame[..], "{v}: HostCodec encoder");
        checked += 1;
    }
    assert_eq!(checked, 15);
}

#[test]
fn command_frames_decode_to_the_typed_command() {
    for v in vectors::all() {
        let Body::Request { seq, .. } = &v.body else {
            continue;
        };
        let Typed::Command(command) = typed_of(&v) else {
            unreachable!()
        };
        let items = decode_all(&mut DeviceCodec, &v.frame);
        let [FromHost::Request(frame)] = &items[..] else {
            panic!("{v}: DeviceCodec decoded {items:?}");
        };
        assert_eq!(frame.seq().get(), *seq, "{v}: SEQ");
        assert_eq!(frame.cmd(), command.code(), "{v}: CMD");
        assert_eq!(Command::from_frame(frame).as_ref(), Ok(&command), "{v}");
    }
}
