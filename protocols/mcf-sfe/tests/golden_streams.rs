//! Golden vectors as a line carries them: each vector file decodes as one byte stream to the
//! vectors' values in order, a false start before a golden frame does not hide it, and any
//! single changed byte in a golden frame is detected.

mod meaning;
mod vectors;

use mcf_sfe::{Command, DeviceCodec, FrameError, FromDevice, FromHost, HostCodec, Reply};
use meaning::{decode_all, typed_of, Typed};
use vectors::{Body, Direction, Vector};

/// The whole device -> host file as one byte stream (as a host would read a session) decodes
/// to the vectors' items in order, and so does the host -> device file.
#[test]
fn each_file_decodes_as_one_stream() {
    let all = vectors::all();
    let host_bytes: Vec<u8> = all
        .iter()
        .filter(|v| v.direction == Direction::HostToDevice)
        .flat_map(|v| v.frame.clone())
        .collect();
    let commands: Vec<Command> = decode_all(&mut DeviceCodec, &host_bytes)
        .into_iter()
        .map(|item| match item {
            FromHost::Request(frame) => Command::from_frame(&frame).unwrap(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    let expected: Vec<Command> = all
        .iter()
        .filter_map(|v| match typed_of(v) {
            Typed::Command(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(commands, expected);

    let device_bytes: Vec<u8> = all
        .iter()
        .filter(|v| v.direction == Direction::DeviceToHost)
        .flat_map(|v| v.frame.clone())
        .collect();
    let items = decode_all(&mut HostCodec, &device_bytes);
    let device_vectors: Vec<&Vector> = all
        .iter()
        .filter(|v| v.direction == Direction::DeviceToHost)
        .collect();
    assert_eq!(items.len(), device_vectors.len());
    for (item, v) in items.iter().zip(device_vectors) {
        match (item, typed_of(v)) {
            (
                FromDevice::Reply(frame),
                Typed::Reply(reply, _) | Typed::ReadOnlyReply(reply, ..),
            ) => {
                assert_eq!(Reply::parse(frame.cmd(), frame.data()), Ok(reply), "{v}")
            }
            (FromDevice::Nak, Typed::Nak) | (FromDevice::Syn, Typed::Syn) => {}
            (item, _) => panic!("{v}: decoded as {item:?}"),
        }
    }
}

/// A two-byte false start `01 26` before the golden C1h frame: its LEN puts the 05 and 03 it
/// expects on those of the real frame, so only the BCC tells it is no frame. The decoder drops
/// only its SOH, and the C1h frame behind it still comes through.
#[test]
fn a_false_start_before_the_golden_c1h_frame_does_not_hide_it() {
    let v = vectors::get("cmd-c1-device-state");
    let mut bytes = vec![0x01, 0x26];
    bytes.extend(&v.frame);
    let items = decode_all(&mut DeviceCodec, &bytes);
    let [FromHost::Malformed(FrameError::BadChecksum { .. }), FromHost::Request(frame)] =
        &items[..]
    else {
        panic!("{v}: decoded {items:?}");
    };
    assert_eq!(frame.to_bytes(), v.frame);
    assert_eq!(Command::from_frame(frame), Ok(Command::DeviceState));
}

/// One changed byte anywhere in a golden frame is never taken for a frame. Unless the change
/// hits the SOH or makes a second one, the broken frame is exactly one Malformed item: its
/// other bytes hold no SOH, so the rescan after its SOH skips them.
#[test]
fn any_single_byte_change_in_a_golden_frame_is_detected() {
    for v in vectors::all() {
        if v.body == Body::Control {
            continue;
        }
        assert_eq!(v.frame.iter().filter(|&&b| b == 0x01).count(), 1, "{v}");
        for index in 0..v.frame.len() {
            for delta in [0x01u8, 0x10, 0x80, 0xFF] {
                let mut bytes = v.frame.clone();
                bytes[index] = bytes[index].wrapping_add(delta);
                let (good, malformed) = match v.direction {
                    Direction::HostToDevice => {
                        let items = decode_all(&mut DeviceCodec, &bytes);
                        (
                            items.iter().any(|i| matches!(i, FromHost::Request(_))),
                            items
                                .iter()
                                .filter(|i| matches!(i, FromHost::Malformed(_)))
                                .count(),
                        )
                    }
                    Direction::DeviceToHost => {
                        let items = decode_all(&mut HostCodec, &bytes);
                        (
                            items.iter().any(|i| matches!(i, FromDevice::Reply(_))),
                            items
                                .iter()
                                .filter(|i| matches!(i, FromDevice::Malformed(_)))
                                .count(),
                        )
                    }
                };
                let change = format!("{v}: byte {index} + {delta:#04x}");
                assert!(!good, "{change} still decodes as a frame");
                if index != 0 && bytes[index] != 0x01 {
                    assert_eq!(malformed, 1, "{change}: one broken frame, one report");
                }
            }
        }
    }
}
