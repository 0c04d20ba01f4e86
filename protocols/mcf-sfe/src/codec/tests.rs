use super::*;

fn decode_all<D: Decoder>(codec: &mut D, bytes: &[u8]) -> Vec<D::Item>
where
    D::Error: std::fmt::Debug,
{
    let mut buf = BytesMut::from(bytes);
    let mut items = Vec::new();
    while let Some(item) = codec.decode(&mut buf).unwrap() {
        items.push(item);
    }
    items
}

/// Decodes `bytes` as a whole stream: `decode` until it waits, then `decode_eof` until
/// `None`, as `Framed` does at end of stream.
fn decode_to_end<D: Decoder>(codec: &mut D, bytes: &[u8]) -> Vec<D::Item>
where
    D::Error: std::fmt::Debug,
{
    let mut buf = BytesMut::from(bytes);
    let mut items = decode_all_from(codec, &mut buf);
    while let Some(item) = codec.decode_eof(&mut buf).unwrap() {
        items.push(item);
    }
    assert!(buf.is_empty(), "bytes left after end of stream: {buf:?}");
    items
}

fn decode_all_from<D: Decoder>(codec: &mut D, buf: &mut BytesMut) -> Vec<D::Item>
where
    D::Error: std::fmt::Debug,
{
    let mut items = Vec::new();
    while let Some(item) = codec.decode(buf).unwrap() {
        items.push(item);
    }
    items
}

fn c1_request() -> RequestFrame {
    RequestFrame::new(Seq::FIRST, 0xC1, Vec::new()).unwrap()
}

#[test]
fn garbage_before_a_frame_is_dropped() {
    let mut bytes = vec![0x00, 0xFF, 0x42, 0x03];
    bytes.extend(c1_request().to_bytes());
    assert_eq!(
        decode_all(&mut DeviceCodec, &bytes),
        vec![FromHost::Request(c1_request())]
    );
}

#[test]
fn nak_and_syn_are_items_towards_the_host() {
    let reply = ReplyFrame::new(Seq::FIRST, 0xC1, b"x".to_vec(), Status::default()).unwrap();
    let mut bytes = vec![SYN, SYN, NAK];
    bytes.extend(reply.to_bytes());
    assert_eq!(
        decode_all(&mut HostCodec, &bytes),
        vec![
            FromDevice::Syn,
            FromDevice::Syn,
            FromDevice::Nak,
            FromDevice::Reply(reply)
        ]
    );
}

#[test]
fn bad_checksum_is_an_item_and_the_next_frame_still_decodes() {
    let mut bytes = c1_request().to_bytes();
    bytes[5] ^= 0x01; // first BCC nibble
    bytes.extend(c1_request().to_bytes());
    let items = decode_all(&mut DeviceCodec, &bytes);
    assert!(matches!(
        items[0],
        FromHost::Malformed(FrameError::BadChecksum {
            seq: 0x20,
            cmd: 0xC1,
            ..
        })
    ));
    assert_eq!(items[1], FromHost::Request(c1_request()));
    assert_eq!(items.len(), 2);
}

#[test]
fn a_partial_frame_waits_and_a_truncated_one_is_reported_at_eof() {
    let bytes = c1_request().to_bytes();
    let mut buf = BytesMut::from(&bytes[..6]);
    assert_eq!(DeviceCodec.decode(&mut buf).unwrap(), None);
    assert_eq!(
        DeviceCodec.decode_eof(&mut buf).unwrap(),
        Some(FromHost::Malformed(FrameError::Truncated(6)))
    );
    assert_eq!(DeviceCodec.decode_eof(&mut buf).unwrap(), None);
}

#[test]
fn a_stalled_false_start_is_dropped_and_the_frame_behind_it_decodes() {
    // A stray SOH with the largest LEN, then a whole frame: the decoder waits for 229 bytes.
    let mut buf = BytesMut::from(&[SOH, 0xFF][..]);
    buf.extend_from_slice(&c1_request().to_bytes());
    assert_eq!(DeviceCodec.decode(&mut buf).unwrap(), None);
    assert_eq!(drop_stalled(&mut buf), Some(FrameError::Stalled(12)));
    assert_eq!(
        DeviceCodec.decode(&mut buf).unwrap(),
        Some(FromHost::Request(c1_request()))
    );
    assert_eq!(drop_stalled(&mut buf), None);
}

#[test]
fn a_false_soh_is_skipped() {
    // SOH followed by a LEN that claims 5 counted bytes, then a real frame.
    let mut bytes = vec![SOH, 0x25, 0x00, 0x00];
    bytes.extend(c1_request().to_bytes());
    let items = decode_all(&mut DeviceCodec, &bytes);
    assert!(matches!(
        items[0],
        FromHost::Malformed(FrameError::BadStructure { .. })
    ));
    assert_eq!(items.last(), Some(&FromHost::Request(c1_request())));
}

#[test]
fn a_two_byte_false_start_does_not_hide_the_frame_behind_it() {
    // `01 26` claims 6 counted bytes: its 05 and 03 land on those of the C1h frame behind
    // it, so only the BCC tells it is not a frame. Only its SOH may be dropped.
    let mut bytes = vec![SOH, 0x26];
    bytes.extend(c1_request().to_bytes());
    let expected = vec![
        FromHost::Malformed(FrameError::BadChecksum {
            seq: 0x01,
            cmd: 0x24,
            received: "010:".into(),
            computed: 0x0131,
        }),
        FromHost::Request(c1_request()),
    ];
    assert_eq!(decode_all(&mut DeviceCodec, &bytes), expected);
    assert_eq!(decode_to_end(&mut DeviceCodec, &bytes), expected);
}

#[test]
fn a_bad_seq_is_one_item_and_the_next_frame_still_decodes() {
    let counted = [0x24, 0x1F, 0xC1, POSTAMBLE];
    let mut bytes = vec![SOH];
    bytes.extend(counted);
    bytes.extend(crate::wire::bcc(&counted));
    bytes.push(ETX);
    bytes.extend(c1_request().to_bytes());
    assert_eq!(
        decode_to_end(&mut DeviceCodec, &bytes),
        vec![
            FromHost::Malformed(FrameError::BadSeq(0x1F)),
            FromHost::Request(c1_request())
        ]
    );
}

#[test]
fn a_corrupted_frame_is_one_item_and_the_frame_behind_it_still_decodes() {
    let good = c1_request().to_bytes();
    for index in 1..good.len() {
        for delta in [0x01u8, 0x10, 0x80, 0xFF] {
            let mut bytes = good.clone();
            bytes[index] = bytes[index].wrapping_add(delta);
            if bytes[index] == SOH {
                continue; // a second start: two reports, checked elsewhere
            }
            bytes.extend(&good);
            let items = decode_to_end(&mut DeviceCodec, &bytes);
            assert!(
                matches!(
                    &items[..],
                    [FromHost::Malformed(_), FromHost::Request(frame)] if *frame == c1_request()
                ),
                "byte {index} + {delta:#04x}: {items:?}"
            );
        }
    }
}

#[test]
fn a_truncated_false_start_at_eof_does_not_hide_the_frames_behind_it() {
    // Towards the device: `01 FF` waits for 229 bytes that never come.
    let mut buf = BytesMut::from(&[SOH, 0xFF][..]);
    buf.extend_from_slice(&c1_request().to_bytes());
    assert_eq!(DeviceCodec.decode(&mut buf).unwrap(), None);
    assert_eq!(
        DeviceCodec.decode_eof(&mut buf).unwrap(),
        Some(FromHost::Malformed(FrameError::Truncated(12)))
    );
    assert_eq!(
        DeviceCodec.decode_eof(&mut buf).unwrap(),
        Some(FromHost::Request(c1_request()))
    );
    assert_eq!(DeviceCodec.decode_eof(&mut buf).unwrap(), None);
    assert!(buf.is_empty());

    // Towards the host, two nested false starts, a reply and a NAK.
    let reply = ReplyFrame::new(Seq::FIRST, 0xC1, b"x".to_vec(), Status::default()).unwrap();
    let mut bytes = vec![SOH, 0xFF, SOH, 0xF0];
    bytes.extend(reply.to_bytes());
    bytes.push(NAK);
    let mut buf = BytesMut::from(&bytes[..]);
    assert_eq!(decode_all_from(&mut HostCodec, &mut buf), vec![]);
    assert_eq!(
        decode_to_end(&mut HostCodec, &bytes),
        vec![
            FromDevice::Malformed(FrameError::Truncated(23)),
            FromDevice::Malformed(FrameError::Truncated(21)),
            FromDevice::Reply(reply),
            FromDevice::Nak,
        ]
    );
}
