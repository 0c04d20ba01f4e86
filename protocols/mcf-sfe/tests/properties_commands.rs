//! Properties of the typed commands and replies: a command's or reply's DATA parses back to
//! the same value, also through its frame and the codec; a command too long for a frame is
//! refused, never cut; parsing arbitrary DATA for any command byte never panics.

mod strategies;

use mcf_sfe::fields::FieldError;
use mcf_sfe::reply::Reading;
use mcf_sfe::wire::{MAX_REPLY_DATA, MAX_REQUEST_DATA};
use mcf_sfe::{
    Command, DeviceCodec, Dialect, FromDevice, FromHost, HostCodec, LineBreaks, Reply, ReplyFrame,
    Status,
};
use proptest::collection::vec;
use proptest::prelude::*;
use strategies::typed::{command, device_state, reply, text};
use strategies::{decode_whole, seq};

// ---------------------------------------------------------------------------------------------
// Typed values

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A command's DATA parses back to the same command, and so does its frame after the wire;
    /// a command that does not fit is refused with DataTooLong, never cut.
    #[test]
    fn typed_commands_round_trip(command in command(), seq in seq()) {
        match command.encode() {
            Ok(data) => {
                prop_assert!(data.len() <= MAX_REQUEST_DATA);
                prop_assert_eq!(Command::parse(command.code(), &data), Ok(command.clone()));
                let frame = command.to_frame(seq).unwrap();
                prop_assert_eq!(frame.data(), &data[..]);
                let items = decode_whole(&mut DeviceCodec, &frame.to_bytes());
                let [FromHost::Request(decoded)] = &items[..] else {
                    return Err(TestCaseError::fail(format!("decoded {items:?}")));
                };
                prop_assert_eq!(decoded.seq(), seq);
                prop_assert_eq!(Command::from_frame(decoded), Ok(command));
            }
            Err(FieldError::DataTooLong { cmd, len, max }) => {
                prop_assert_eq!(cmd, command.code());
                prop_assert_eq!(max, MAX_REQUEST_DATA);
                prop_assert!(len > max);
                prop_assert!(command.to_frame(seq).is_err());
            }
            Err(other) => prop_assert!(false, "{:?} refused: {}", command, other),
        }
    }

    /// A reply's DATA parses back to the same reply, through a reply frame and the host codec.
    #[test]
    fn typed_replies_round_trip((cmd, reply) in reply(), seq in seq(), status in any::<[u8; 6]>()) {
        match reply.encode(cmd) {
            Ok(data) => {
                prop_assert_eq!(Reply::parse(cmd, &data), Ok(reply.clone()));
                let frame = ReplyFrame::new(seq, cmd, data, Status(status)).unwrap();
                let items = decode_whole(&mut HostCodec, &frame.to_bytes());
                let [FromDevice::Reply(decoded)] = &items[..] else {
                    return Err(TestCaseError::fail(format!("decoded {items:?}")));
                };
                prop_assert_eq!(decoded.status(), Status(status));
                prop_assert_eq!(Reply::parse(decoded.cmd(), decoded.data()), Ok(reply));
            }
            Err(FieldError::DataTooLong { len, max, .. }) => {
                prop_assert_eq!(max, MAX_REPLY_DATA);
                prop_assert!(len > max);
            }
            Err(other) => prop_assert!(false, "{:?} refused: {}", reply, other),
        }
    }

    /// Parsing arbitrary DATA for any command byte never panics, nor does the tolerant reader
    /// with any status and dialect; what the reader reports as odd names a field.
    #[test]
    fn parsing_arbitrary_data_never_panics(
        cmd in any::<u8>(),
        data in vec(any::<u8>(), 0..80),
        text in text(20),
        status in any::<[u8; 6]>(),
        swapped in any::<bool>(),
        by_status in any::<bool>(),
    ) {
        let _ = Command::parse(cmd, &data);
        let _ = Reply::parse(cmd, &data);
        let _ = Command::parse(cmd, text.as_bytes());
        let _ = Reply::parse(cmd, text.as_bytes());
        let dialect = Dialect {
            line_breaks: if swapped { LineBreaks::Swapped } else { LineBreaks::Protocol },
            refusal_by_status: by_status,
        };
        for bytes in [&data[..], text.as_bytes()] {
            if let Ok(reading) = Reply::read(cmd, bytes, Status(status), &dialect) {
                prop_assert!(reading.anomalies.iter().all(|a| !a.field.is_empty()));
            }
        }
    }

    /// Fields of real-box forms the reader tolerates never change what it reads from the
    /// fields a host needs: a C1h with any currency block, extra fields, or a cut after
    /// lastAmount gives the same identity and counters.
    #[test]
    fn tolerated_fields_never_change_the_needed_ones(
        state in device_state(),
        tail in vec("[A-Za-z0-9.-]{0,6}", 0..5),
        cut in 11usize..=30,
    ) {
        let Ok(data) = Reply::DeviceState(state.clone()).encode(0xC1) else {
            return Ok(());
        };
        let text = String::from_utf8(data).unwrap();
        let fields: Vec<&str> = text.split(',').collect();
        let variants = [
            format!("{text},{}", tail.join(",")),
            fields[..cut.min(fields.len())].join(","),
        ];
        for variant in variants {
            let reading = Reply::read(0xC1, variant.as_bytes(), Status::default(), &Dialect::default());
            let Ok(Reading { reply: Reply::DeviceState(read), .. }) = reading else {
                return Err(TestCaseError::fail(format!("{variant}: {reading:?}")));
            };
            prop_assert_eq!((&read.mid, &read.nif, read.tc, read.fvc, read.frc),
                (&state.mid, &state.nif, state.tc, state.fvc, state.frc));
            prop_assert_eq!(&read.last, &state.last);
        }
    }
}
