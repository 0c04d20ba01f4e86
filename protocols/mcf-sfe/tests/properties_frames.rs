//! Properties of the frame codecs: request and reply frames round trip through `HostCodec`
//! and `DeviceCodec`; a stream decodes the same however it is cut (split points), with noise
//! and garbage before frames (false starts, control bytes), with arbitrary bytes (no panic, no
//! loop, bounded buffer), with a changed byte (never a frame), and for the golden streams.
//! Case counts are kept moderate so that the file runs in a few seconds in debug builds.

mod strategies;
mod vectors;

use bytes::BytesMut;
use mcf_sfe::wire::SOH;
use mcf_sfe::{DeviceCodec, FromDevice, FromHost, HostCodec, RequestFrame, ToHost};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use strategies::{
    control_items, cuts, decode_whole, device_items, false_starts, feed, line_bytes, reply_frame,
    request_frame, soh_count, to_device_bytes,
};
use tokio_util::codec::Encoder;

// ---------------------------------------------------------------------------------------------
// Frames and codecs

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn request_frames_round_trip(frame in request_frame()) {
        let bytes = frame.to_bytes();
        prop_assert_eq!(bytes.len(), frame.data().len() + 10);
        prop_assert_eq!(usize::from(bytes[1]), 0x20 + 4 + frame.data().len());
        let mut encoded = BytesMut::new();
        HostCodec.encode(&frame, &mut encoded).unwrap();
        prop_assert_eq!(&encoded[..], &bytes[..]);
        prop_assert_eq!(
            decode_whole(&mut DeviceCodec, &bytes),
            vec![FromHost::Request(frame)]
        );
    }

    #[test]
    fn reply_frames_round_trip(frame in reply_frame()) {
        let mut bytes = BytesMut::new();
        DeviceCodec.encode(ToHost::Reply(frame.clone()), &mut bytes).unwrap();
        prop_assert_eq!(&bytes[..], &frame.to_bytes()[..]);
        prop_assert_eq!(bytes.len(), frame.data().len() + 17);
        prop_assert_eq!(usize::from(bytes[1]), 0x20 + 11 + frame.data().len());
        prop_assert_eq!(decode_whole(&mut HostCodec, &bytes), vec![FromDevice::Reply(frame)]);
    }

    /// A device's output cut anywhere (as a serial port delivers it) decodes to the same items.
    #[test]
    fn a_device_stream_cut_anywhere_decodes_the_same(items in device_items(), cuts in cuts()) {
        let bytes = to_device_bytes(&items);
        prop_assert_eq!(feed(&mut HostCodec, &bytes, &cuts), items);
    }

    #[test]
    fn a_host_stream_cut_anywhere_decodes_the_same(
        frames in vec(request_frame(), 0..5),
        cuts in cuts(),
    ) {
        let bytes: Vec<u8> = frames.iter().flat_map(RequestFrame::to_bytes).collect();
        let expected: Vec<FromHost> = frames.into_iter().map(FromHost::Request).collect();
        prop_assert_eq!(feed(&mut DeviceCodec, &bytes, &cuts), expected);
    }

    /// With noise on the line too, where the stream is cut does not change what it decodes to,
    /// and every frame comes through, in order: each SOH in the noise is one false start that
    /// gives one Malformed item and drops only itself, so it never swallows a frame behind it.
    #[test]
    fn a_noisy_stream_cut_anywhere_decodes_as_the_whole(
        pieces in vec((line_bytes(40), request_frame(), reply_frame()), 0..4),
        cuts in cuts(),
    ) {
        let mut to_device = Vec::new();
        let mut to_host = Vec::new();
        let mut requests = Vec::new();
        let mut host_items = Vec::new();
        let mut false_starts = 0;
        for (noise, request, reply) in &pieces {
            to_device.extend(noise);
            to_device.extend(request.to_bytes());
            to_host.extend(noise);
            to_host.extend(reply.to_bytes());
            requests.push(FromHost::Request(request.clone()));
            host_items.extend(control_items(noise));
            host_items.push(FromDevice::Reply(reply.clone()));
            false_starts += soh_count(noise);
        }

        let whole = decode_whole(&mut DeviceCodec, &to_device);
        prop_assert_eq!(&feed(&mut DeviceCodec, &to_device, &cuts), &whole);
        let (malformed, good): (Vec<FromHost>, Vec<FromHost>) = whole
            .into_iter()
            .partition(|item| matches!(item, FromHost::Malformed(_)));
        prop_assert_eq!(good, requests);
        prop_assert_eq!(malformed.len(), false_starts, "{:?}", malformed);

        let whole = decode_whole(&mut HostCodec, &to_host);
        prop_assert_eq!(&feed(&mut HostCodec, &to_host, &cuts), &whole);
        let (malformed, good): (Vec<FromDevice>, Vec<FromDevice>) = whole
            .into_iter()
            .partition(|item| matches!(item, FromDevice::Malformed(_)));
        prop_assert_eq!(good, host_items);
        prop_assert_eq!(malformed.len(), false_starts, "{:?}", malformed);
    }

    /// Garbage that may hold SOH bytes (false starts, some claiming more bytes than the stream
    /// still has) before a frame: once the stream has ended and the decoder is drained with
    /// `decode_eof`, the frame is the last good item, and each SOH of the garbage gave exactly
    /// one Malformed item.
    #[test]
    fn garbage_with_false_starts_before_a_frame_does_not_hide_it(
        garbage in false_starts(24),
        request in request_frame(),
        reply in reply_frame(),
        cuts in cuts(),
    ) {
        let mut bytes = garbage.clone();
        bytes.extend(request.to_bytes());
        let items = feed(&mut DeviceCodec, &bytes, &cuts);
        let last_good = items.iter().rev().find(|item| !matches!(item, FromHost::Malformed(_)));
        prop_assert_eq!(last_good, Some(&FromHost::Request(request)), "{:?}", items);
        let malformed = items.iter().filter(|item| matches!(item, FromHost::Malformed(_)));
        prop_assert_eq!(malformed.count(), soh_count(&garbage), "{:?}", items);

        let mut bytes = garbage.clone();
        bytes.extend(reply.to_bytes());
        let items = feed(&mut HostCodec, &bytes, &cuts);
        let last_good = items.iter().rev().find(|item| matches!(item, FromDevice::Reply(_)));
        prop_assert_eq!(last_good, Some(&FromDevice::Reply(reply)), "{:?}", items);
        let malformed = items.iter().filter(|item| matches!(item, FromDevice::Malformed(_)));
        prop_assert_eq!(malformed.count(), soh_count(&garbage), "{:?}", items);
    }

    /// Noise without SOH before a frame is dropped; towards the host, NAK and SYN bytes in it
    /// still count as control bytes, in order.
    #[test]
    fn garbage_without_soh_before_a_frame_is_dropped(
        garbage in vec(any::<u8>().prop_filter("no SOH", |&b| b != SOH), 0..64),
        request in request_frame(),
        reply in reply_frame(),
        cuts in cuts(),
    ) {
        let mut bytes = garbage.clone();
        bytes.extend(request.to_bytes());
        prop_assert_eq!(feed(&mut DeviceCodec, &bytes, &cuts), vec![FromHost::Request(request)]);

        let mut bytes = garbage.clone();
        bytes.extend(reply.to_bytes());
        let mut expected: Vec<FromDevice> = control_items(&garbage).collect();
        expected.push(FromDevice::Reply(reply));
        prop_assert_eq!(feed(&mut HostCodec, &bytes, &cuts), expected);
    }

    /// Long noise without SOH (a wrong baud rate, a device babbling) is dropped as it comes:
    /// nothing but its NAK and SYN bytes reaches the host, nothing at all the device, and the
    /// buffer stays bounded (checked inside `feed`).
    #[test]
    fn noise_without_soh_yields_only_its_control_bytes(
        noise in vec(any::<u8>().prop_filter("no SOH", |&b| b != SOH), 0..1500),
        cuts in cuts(),
    ) {
        prop_assert_eq!(feed(&mut DeviceCodec, &noise, &cuts), vec![]);
        let controls: Vec<FromDevice> = control_items(&noise).collect();
        prop_assert_eq!(feed(&mut HostCodec, &noise, &cuts), controls);
    }

    /// Whatever arrives, neither decoder panics, loops or hoards bytes (checked inside `feed`).
    #[test]
    fn arbitrary_bytes_never_panic_and_stay_bounded(bytes in line_bytes(1500), cuts in cuts()) {
        feed(&mut DeviceCodec, &bytes, &cuts);
        feed(&mut HostCodec, &bytes, &cuts);
    }

    /// One changed byte in a frame is never taken for a frame (the BCC catches any single
    /// change in LEN..05; SOH, separator, 05 and ETX are checked by position). When the
    /// changed frame still has exactly one SOH, its first byte, it gives exactly one Malformed
    /// item: the rescan after its SOH finds no other start.
    #[test]
    fn a_single_changed_byte_is_detected(
        request in request_frame(),
        reply in reply_frame(),
        at in any::<Index>(),
        delta in 1u8..=0xFF,
    ) {
        let one_start = |bytes: &[u8]| bytes[0] == SOH && soh_count(bytes) == 1;

        let mut bytes = request.to_bytes();
        let i = at.index(bytes.len());
        bytes[i] = bytes[i].wrapping_add(delta);
        let items = decode_whole(&mut DeviceCodec, &bytes);
        prop_assert!(!items.iter().any(|item| matches!(item, FromHost::Request(_))), "{:?}", items);
        if one_start(&bytes) {
            prop_assert!(matches!(&items[..], [FromHost::Malformed(_)]), "{:?}", items);
        }

        let mut bytes = reply.to_bytes();
        let i = at.index(bytes.len());
        bytes[i] = bytes[i].wrapping_add(delta);
        let items = decode_whole(&mut HostCodec, &bytes);
        prop_assert!(!items.iter().any(|item| matches!(item, FromDevice::Reply(_))), "{:?}", items);
        if one_start(&bytes) {
            let malformed = items.iter().filter(|item| matches!(item, FromDevice::Malformed(_)));
            prop_assert_eq!(malformed.count(), 1, "{:?}", items);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Every golden frame, concatenated in file order, decodes to one good item per vector,
    /// however the stream is cut.
    #[test]
    fn the_golden_streams_cut_anywhere_decode_the_same(cuts in cuts()) {
        let all = vectors::all();
        let stream = |direction| -> (usize, Vec<u8>) {
            let frames: Vec<&vectors::Vector> =
                all.iter().filter(|v| v.direction == direction).collect();
            (frames.len(), frames.iter().flat_map(|v| v.frame.clone()).collect())
        };

        let (count, bytes) = stream(vectors::Direction::HostToDevice);
        let whole = decode_whole(&mut DeviceCodec, &bytes);
        prop_assert_eq!(whole.len(), count);
        prop_assert!(whole.iter().all(|item| matches!(item, FromHost::Request(_))));
        prop_assert_eq!(feed(&mut DeviceCodec, &bytes, &cuts), whole);

        let (count, bytes) = stream(vectors::Direction::DeviceToHost);
        let whole = decode_whole(&mut HostCodec, &bytes);
        prop_assert_eq!(whole.len(), count);
        prop_assert!(!whole.iter().any(|item| matches!(item, FromDevice::Malformed(_))));
        prop_assert_eq!(feed(&mut HostCodec, &bytes, &cuts), whole);
    }
}
