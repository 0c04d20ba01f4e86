//! A connection's bytes as hyper reads and writes them, for the two answers hyper cannot give
//! with a body (issue 27):
//!
//! * **the header-read deadline (408).** hyper's own header timeout closes without a word, so
//!   the server keeps it here instead: while no request is in progress on the connection
//!   (`peers::Conn::is_idle`) and hyper waits for the next request head, the head must be
//!   complete within `header_read_timeout` of the moment the connection became idle (its
//!   opening, or the end of its last answer). When it is not, the connection gets a JSON 408
//!   (code 190, in the language of the head's `Accept-Language` if it came) and closes, if a
//!   request head had begun or none was ever sent; an idle keep-alive connection after a
//!   complete answer is closed without a word (an answer then could be read as the answer to
//!   a request the client is sending at that moment).
//! * **hyper's automatic answers to a head it cannot parse** (400, 414, 431), which it writes
//!   with no body: they are recognized as they are written (a `4xx` status line with
//!   `content-length: 0` and no `content-type`, which no answer of the API has) and replaced by
//!   the JSON error (codes 191, 192, 129), in the head's language, with `Connection: close`.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

use super::peers::Conn;
use super::reply::{raw_error, HttpError};
use crate::i18n::{self, Lang};

/// Bytes of a request head kept to find its `Accept-Language` (it is usually near the top).
const HEAD_KEPT: usize = 16 * 1024;

/// A connection's stream with the header deadline and the JSON rewrites (module docs).
pub(crate) struct ConnIo<T> {
    inner: T,
    conn: Arc<Conn>,
    header_timeout: Duration,
    timer: Pin<Box<Sleep>>,
    /// `conn.started()` when `head` was begun: a new request empties it.
    head_of: u64,
    /// The start of the request head being read while idle.
    head: Vec<u8>,
    /// Our answer, written instead of hyper's bytes, and how much of it is written.
    out: Vec<u8>,
    out_at: usize,
    /// hyper's bytes are dropped: an answer of ours replaced them.
    replaced: bool,
    /// The header deadline passed: the answer (if any) is written, then reads fail.
    timed_out: bool,
}

impl<T> ConnIo<T> {
    pub(crate) fn new(inner: T, conn: Arc<Conn>, header_timeout: Duration) -> ConnIo<T> {
        let deadline = conn.idle_since() + header_timeout;
        ConnIo {
            inner,
            conn,
            header_timeout,
            timer: Box::pin(tokio::time::sleep_until(deadline)),
            head_of: 0,
            head: Vec::new(),
            out: Vec::new(),
            out_at: 0,
            replaced: false,
            timed_out: false,
        }
    }

    /// The language of the head read so far: its `Accept-Language`, else the default.
    fn head_lang(&self) -> Lang {
        let text = String::from_utf8_lossy(&self.head);
        let value = text.split("\r\n").find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("accept-language")
                .then(|| value.trim().to_string())
        });
        Lang::negotiate(value.as_deref(), i18n::default_lang())
    }

    /// Keeps the start of a head read while no request is in progress.
    fn note_head(&mut self, bytes: &[u8]) {
        let started = self.conn.started();
        if started != self.head_of {
            self.head_of = started;
            self.head.clear();
        }
        let room = HEAD_KEPT.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// Whether a head has begun since the last request.
    fn head_begun(&self) -> bool {
        self.head_of == self.conn.started() && !self.head.is_empty()
    }

    /// Our answer to write in place of hyper's `bytes`, when they are one of its bodiless
    /// error answers (module docs).
    fn replacement(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        if !bytes.starts_with(b"HTTP/1.") || bytes.get(9) != Some(&b'4') {
            return None;
        }
        let head = bytes.get(..bytes.len().min(1024))?;
        let end = head.windows(4).position(|w| w == b"\r\n\r\n")?;
        let head = String::from_utf8_lossy(&head[..end + 2]).to_ascii_lowercase();
        let status = head
            .strip_prefix("http/1.1 ")
            .or_else(|| head.strip_prefix("http/1.0 "))?
            .get(..3)?;
        if !head.contains("\r\ncontent-length: 0\r\n") || head.contains("\r\ncontent-type:") {
            return None;
        }
        let error = match status {
            "400" => HttpError::HeadUnreadable,
            "414" => HttpError::UriTooLong,
            "431" => HttpError::HeadTooLarge,
            _ => return None,
        };
        crate::metrics::connection_refused(match error {
            HttpError::HeadTooLarge => "header_too_large",
            _ => "head_unreadable",
        });
        Some(raw_error(&error, self.head_lang()))
    }
}

impl<T: AsyncWrite + Unpin> ConnIo<T> {
    /// Writes what is left of our answer.
    fn poll_out(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.out_at < self.out.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.out[self.out_at..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.out_at += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for ConnIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.timed_out {
            // Best effort: the answer, then the end of the connection.
            let _ = ready!(this.poll_out(cx));
            let _ = ready!(Pin::new(&mut this.inner).poll_shutdown(cx));
            return Poll::Ready(Err(io::ErrorKind::TimedOut.into()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if this.conn.is_idle() {
                    let read = buf.filled()[before..].to_vec();
                    this.note_head(&read);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => {
                if !this.conn.is_idle() {
                    return Poll::Pending;
                }
                let deadline = this.conn.idle_since() + this.header_timeout;
                if this.timer.deadline() != deadline {
                    this.timer.as_mut().reset(deadline);
                }
                ready!(this.timer.as_mut().poll(cx));
                this.timed_out = true;
                if this.head_begun() || this.conn.started() == 0 {
                    crate::metrics::connection_refused("header_timeout");
                    this.out = raw_error(&HttpError::HeadTimeout, this.head_lang());
                    this.out_at = 0;
                }
                Pin::new(this).poll_read(cx, buf)
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ConnIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if !this.replaced {
            match this.replacement(buf) {
                Some(answer) => {
                    this.replaced = true;
                    this.out = answer;
                    this.out_at = 0;
                }
                None => return Pin::new(&mut this.inner).poll_write(cx, buf),
            }
        }
        ready!(this.poll_out(cx))?;
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_out(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_out(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests;
