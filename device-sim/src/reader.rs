//! Reading host frames off the line, with the inter-byte timeout that `FramedRead` lacks:
//! an incomplete frame that gets no byte for [`INTER_BYTE_TIMEOUT`] is given up (its SOH
//! dropped, the rest rescanned) and reported as [`FrameError::Stalled`], so a stray
//! `01 FF` cannot hide the frames behind it.

use std::io;
use std::time::Duration;

use bytes::BytesMut;
use mcf_sfe::wire::{INTER_BYTE_TIMEOUT, MAX_FRAME_LEN};
use mcf_sfe::{drop_stalled, DeviceCodec, FromHost};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::timeout;
use tokio_util::codec::Decoder;

/// Frames from the host, one at a time.
#[derive(Debug)]
pub struct FrameReader<R> {
    reader: R,
    buf: BytesMut,
    inter_byte: Duration,
    ended: bool,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Reads from `reader` with the protocol's inter-byte timeout.
    pub fn new(reader: R) -> Self {
        Self::with_inter_byte_timeout(reader, INTER_BYTE_TIMEOUT)
    }

    /// Reads from `reader` with another inter-byte timeout.
    pub fn with_inter_byte_timeout(reader: R, inter_byte: Duration) -> Self {
        FrameReader {
            reader,
            buf: BytesMut::with_capacity(2 * MAX_FRAME_LEN),
            inter_byte,
            ended: false,
        }
    }

    /// The next item; `None` at end of stream. Cancel-safe: bytes read are kept in `self`.
    pub async fn next(&mut self) -> io::Result<Option<FromHost>> {
        loop {
            if let Some(item) = DeviceCodec.decode(&mut self.buf)? {
                return Ok(Some(item));
            }
            if self.ended {
                return DeviceCodec.decode_eof(&mut self.buf);
            }
            let read = if self.buf.is_empty() {
                self.reader.read_buf(&mut self.buf).await
            } else {
                match timeout(self.inter_byte, self.reader.read_buf(&mut self.buf)).await {
                    Ok(read) => read,
                    Err(_) => match drop_stalled(&mut self.buf) {
                        Some(error) => return Ok(Some(FromHost::Malformed(error))),
                        None => continue,
                    },
                }
            };
            if read? == 0 {
                self.ended = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcf_sfe::{Command, FrameError, Seq};
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn a_stray_soh_is_given_up_after_the_quiet_time_and_the_next_frame_is_read() {
        let (mut host, device) = tokio::io::duplex(1024);
        let mut frames = FrameReader::with_inter_byte_timeout(device, Duration::from_millis(20));
        let c1 = Command::DeviceState.to_frame(Seq::FIRST).unwrap();
        host.write_all(&[0x01, 0xFF]).await.unwrap();
        host.write_all(&c1.to_bytes()).await.unwrap();
        assert_eq!(
            frames.next().await.unwrap(),
            Some(FromHost::Malformed(FrameError::Stalled(12)))
        );
        assert_eq!(frames.next().await.unwrap(), Some(FromHost::Request(c1)));
        drop(host);
        assert_eq!(frames.next().await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_frame_cut_by_the_end_of_stream_is_reported_once() {
        let (mut host, device) = tokio::io::duplex(1024);
        let mut frames = FrameReader::new(device);
        let bytes = Command::Subtotal.to_frame(Seq::FIRST).unwrap().to_bytes();
        host.write_all(&bytes[..4]).await.unwrap();
        drop(host);
        assert_eq!(
            frames.next().await.unwrap(),
            Some(FromHost::Malformed(FrameError::Truncated(4)))
        );
        assert_eq!(frames.next().await.unwrap(), None);
    }
}
