//! Connection limits the API itself cannot see.
//!
//! Deadlines ([`Deadlines`]): a client must deliver each request head within
//! [`HEAD_TIMEOUT`] of its first byte (and a new connection its first head within
//! [`HEAD_TIMEOUT`] of opening), a keep-alive connection with no request in flight is
//! closed after [`IDLE_TIMEOUT`], and a connection whose answer the client does not
//! take (the socket accepts no byte) for [`WRITE_TIMEOUT`] is closed.
//!
//! hyper's own `header_read_timeout` also runs while a keep-alive connection sits
//! idle, so it cannot tell "slow head" from "idle"; [`Deadlines`] wraps the socket
//! instead. Its reads fail with `TimedOut` when the deadline of the current phase
//! passes, and hyper then closes the connection. While a request is in flight
//! ([`InFlight`]) there is no read deadline: the request timeout bounds it, and the
//! API's body timeout bounds reading its body.
//!
//! The write deadline is a stall deadline of the connection, not of a request: it
//! runs while the socket refuses bytes and restarts only when it takes some. hyper
//! serves pipelined requests one after the other, writing each answer before it
//! reads the next request, so a client that pipelines forty requests and reads
//! nothing is closed one write deadline after its socket buffers fill, as one that
//! sent a single request: pipelining does not multiply what a connection can pin.
//!
//! Address cap ([`AddressCap`], in `address`): at most so many connections at once
//! from one client address (IPv6: by /64, /56 and /48), so that one address cannot
//! take every connection slot. Slots ([`Slots`], in `slots`): under pressure the
//! longest-idle keep-alive connections give their slots up, and the last slots are
//! kept for addresses that hold none.

mod address;
mod slots;

pub use address::{AddressCap, AddressSlot, Admission, Refused};
pub use slots::{HIGH_WATER, Held, IdleWatch, PRESSED_IDLE, Slots, reserve};

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// Time allowed for a request head, from its first byte (or from the connect).
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a keep-alive connection may wait, with nothing in flight, for its next request.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Time an answer may wait for the client to take any byte of it (`--write-timeout`).
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// The deadlines of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// See [`HEAD_TIMEOUT`].
    pub head: Duration,
    /// See [`IDLE_TIMEOUT`].
    pub idle: Duration,
    /// See [`WRITE_TIMEOUT`].
    pub write: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            head: HEAD_TIMEOUT,
            idle: IDLE_TIMEOUT,
            write: WRITE_TIMEOUT,
        }
    }
}

/// Requests of one connection being served; shared by the socket wrapper and the
/// connection's service.
#[derive(Debug, Default)]
pub struct InFlight {
    now: AtomicUsize,
    started: AtomicUsize,
}

impl InFlight {
    /// Marks a request as being served until the guard drops.
    pub fn start(self: &Arc<Self>) -> Serving {
        self.now.fetch_add(1, Ordering::AcqRel);
        self.started.fetch_add(1, Ordering::AcqRel);
        Serving(self.clone())
    }

    fn any(&self) -> bool {
        self.now.load(Ordering::Acquire) > 0
    }

    /// Requests started so far on this connection.
    fn started(&self) -> usize {
        self.started.load(Ordering::Acquire)
    }
}

/// See [`InFlight::start`].
#[derive(Debug)]
pub struct Serving(Arc<InFlight>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body that keeps its request [`Serving`] until hyper has sent all of
/// it (and dropped it): a connection streaming a large answer is busy, not idle.
#[derive(Debug)]
pub struct ServingBody<B> {
    body: B,
    _serving: Serving,
}

impl<B> ServingBody<B> {
    /// `body`, its request served until it drops.
    pub fn new(body: B, serving: Serving) -> Self {
        Self {
            body,
            _serving: serving,
        }
    }
}

impl<B: http_body::Body + Unpin> http_body::Body for ServingBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for (the rest of) a request head.
    Head,
    /// Nothing in flight, no byte of a next request yet.
    Idle,
    /// A request is being served.
    Busy,
}

/// A socket whose reads time out by what the connection is doing: waiting for a
/// request head, idle between requests, or serving one (no read deadline then); and
/// whose writes time out when the socket takes no byte for the write deadline.
pub struct Deadlines<T> {
    io: T,
    in_flight: Arc<InFlight>,
    phase: Phase,
    /// The phase's read deadline.
    deadline: Instant,
    /// Armed at or before `deadline`: a deadline that moves later is not armed again
    /// until the timer fires (`poll_deadline`). Arming takes a lock of tokio's timer
    /// wheel, and the deadline moves at least twice a request.
    timer: Pin<Box<Sleep>>,
    head: Duration,
    idle: Duration,
    /// [`InFlight::started`] when last looked at.
    seen: usize,
    write: Duration,
    /// Armed while the socket refuses bytes: since the first refusal.
    write_timer: Pin<Box<Sleep>>,
    write_stalled: bool,
    /// Tells the connection's slot when it is idle; may close it then.
    watch: IdleWatch,
    /// Bytes written since the last flush: the connection is not idle until its
    /// answer has been flushed whole.
    unflushed: bool,
    /// The waker of the last read that found nothing: a flush that completes an
    /// answer wakes it, so the idle phase (and its deadline) starts then, not at the
    /// next byte or timer.
    reader: Option<std::task::Waker>,
}

impl<T> std::fmt::Debug for Deadlines<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deadlines")
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

impl<T> Deadlines<T> {
    /// Wraps an accepted socket; the head deadline runs from now. `watch` (from the
    /// connection's [`Held`] slot) lets the slots close it while it is idle under
    /// pressure; [`IdleWatch::default`] for a listener without shared slots.
    pub fn new(io: T, in_flight: Arc<InFlight>, timeouts: Timeouts, watch: IdleWatch) -> Self {
        let deadline = Instant::now() + timeouts.head;
        Self {
            io,
            in_flight,
            phase: Phase::Head,
            deadline,
            timer: Box::pin(tokio::time::sleep_until(deadline)),
            head: timeouts.head,
            idle: timeouts.idle,
            seen: 0,
            write: timeouts.write,
            write_timer: Box::pin(tokio::time::sleep(timeouts.write)),
            write_stalled: false,
            watch,
            unflushed: false,
            reader: None,
        }
    }

    /// After a write, flush or shutdown: any progress ends a stall; a refusal starts
    /// one (or continues it), and past the write deadline turns into `TimedOut`. The
    /// timer is polled with the caller's context, so hyper is woken at the deadline
    /// even if the socket never becomes writable.
    fn after_write<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if polled.is_ready() {
            self.write_stalled = false;
            return polled;
        }
        if !self.write_stalled {
            self.write_stalled = true;
            self.write_timer.as_mut().reset(Instant::now() + self.write);
        }
        ready!(self.write_timer.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client took no byte of the answer in time",
        )))
    }

    fn enter(&mut self, phase: Phase) {
        self.phase = phase;
        let after = match phase {
            Phase::Head => {
                self.watch.busy();
                self.head
            }
            Phase::Idle => self.watch.went_idle(self.idle),
            Phase::Busy => {
                self.watch.busy();
                return;
            }
        };
        self.deadline = Instant::now() + after;
        if self.deadline < self.timer.deadline() {
            self.timer.as_mut().reset(self.deadline);
        }
    }

    /// Ready once the phase's deadline has passed; a timer armed for an earlier one is
    /// armed again for it.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            ready!(self.timer.as_mut().poll(cx));
            if self.timer.deadline() >= self.deadline {
                return Poll::Ready(());
            }
            self.timer.as_mut().reset(self.deadline);
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Deadlines<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.in_flight.any() {
            if this.phase != Phase::Busy {
                this.enter(Phase::Busy);
            }
            return Pin::new(&mut this.io).poll_read(cx, buf);
        }
        // A request served since the last read ends the head phase, even one answered
        // before any read saw it in flight (`/livez`, a 404); the idle phase starts
        // once its answer has been flushed.
        let started = this.in_flight.started();
        if (this.phase == Phase::Busy || started != this.seen) && !this.unflushed {
            this.seen = started;
            this.enter(Phase::Idle);
        }
        let before = buf.filled().len();
        match poll_read_at_most(Pin::new(&mut this.io), cx, buf, HEAD_READ_CHUNK) {
            Poll::Ready(Ok(())) => {
                if this.phase == Phase::Idle && buf.filled().len() > before {
                    this.enter(Phase::Head);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(err)) => Poll::Ready(Err(err)),
            Poll::Pending => {
                if !this
                    .reader
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                {
                    this.reader = Some(cx.waker().clone());
                }
                if this.phase == Phase::Idle && this.watch.evicted(cx) {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "idle keep-alive connection closed under connection pressure",
                    )));
                }
                ready!(this.poll_deadline(cx));
                let what = match this.phase {
                    Phase::Idle => "idle keep-alive connection closed",
                    _ => "request head not received in time",
                };
                Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, what)))
            }
        }
    }
}

/// The most bytes one read takes while a head is awaited. hyper checks its head
/// limit (`max_buf_size`) before each read, so a read may overshoot it by what one
/// read takes: by at most this much, whatever the buffer's capacity happens to be.
const HEAD_READ_CHUNK: usize = 8 * 1024;

/// `io.poll_read` into at most `most` bytes of `buf`.
fn poll_read_at_most<T: AsyncRead>(
    io: Pin<&mut T>,
    cx: &mut Context<'_>,
    buf: &mut ReadBuf<'_>,
    most: usize,
) -> Poll<io::Result<()>> {
    if buf.remaining() <= most {
        return io.poll_read(cx, buf);
    }
    // Through a buffer of its own (a copy of a head's few bytes; no `unsafe` to
    // hand the inner read a shorter view of `buf`'s uninitialised tail).
    let mut chunk = [0u8; HEAD_READ_CHUNK];
    let mut part = ReadBuf::new(&mut chunk[..most.min(HEAD_READ_CHUNK)]);
    ready!(io.poll_read(cx, &mut part))?;
    buf.put_slice(part.filled());
    Poll::Ready(Ok(()))
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Deadlines<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write(cx, buf);
        self.unflushed |= matches!(polled, Poll::Ready(Ok(n)) if n > 0);
        self.after_write(cx, polled)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_flush(cx);
        if matches!(polled, Poll::Ready(Ok(()))) && self.unflushed {
            self.unflushed = false;
            // An answer went out whole: a reader waiting for the next request learns
            // that the connection is idle now.
            if !self.in_flight.any()
                && let Some(reader) = &self.reader
            {
                reader.wake_by_ref();
            }
        }
        self.after_write(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_shutdown(cx);
        self.after_write(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.unflushed |= matches!(polled, Poll::Ready(Ok(n)) if n > 0);
        self.after_write(cx, polled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};

    /// A connection that has served one request, and its client's end.
    fn served_once(timeouts: Timeouts) -> (Deadlines<DuplexStream>, DuplexStream) {
        let (server, client) = tokio::io::duplex(1024);
        let in_flight = Arc::new(InFlight::default());
        let conn = Deadlines::new(server, in_flight.clone(), timeouts, IdleWatch::default());
        drop(in_flight.start());
        (conn, client)
    }

    fn timeouts(head_ms: u64, idle_ms: u64) -> Timeouts {
        Timeouts {
            head: Duration::from_millis(head_ms),
            idle: Duration::from_millis(idle_ms),
            write: WRITE_TIMEOUT,
        }
    }

    #[tokio::test]
    async fn an_idle_connection_outlives_the_head_deadline_armed_before_it_and_closes_at_its_own() {
        // Arrange: the timer was armed for the first head (100 ms); idle allows 800 ms.
        let (mut conn, _client) = served_once(timeouts(100, 800));
        let idle_from = Instant::now();
        let mut buf = [0u8; 16];

        // Act
        let early = tokio::time::timeout(Duration::from_millis(400), conn.read(&mut buf)).await;
        let closed = conn.read(&mut buf).await;

        // Assert
        assert!(early.is_err(), "closed before its idle deadline: {early:?}");
        let err = closed.expect_err("an idle connection past its deadline reads an error");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(err.to_string(), "idle keep-alive connection closed");
        let after = idle_from.elapsed();
        assert!(
            after >= Duration::from_millis(800) && after < Duration::from_secs(5),
            "closed {after:?} after going idle, wanted 800 ms"
        );
    }

    #[tokio::test]
    async fn a_head_begun_on_an_idle_connection_is_held_to_the_head_deadline_not_the_idle_one() {
        // Arrange: idle allows 10 s, a head 300 ms. Idle past the first head's
        // deadline, so that the timer is armed for the idle one.
        let (mut conn, mut client) = served_once(timeouts(300, 10_000));
        let mut buf = [0u8; 16];
        let pending = tokio::time::timeout(Duration::from_millis(500), conn.read(&mut buf)).await;
        assert!(pending.is_err(), "an idle connection read {pending:?}");

        // Act: the first byte of a head, then nothing.
        client.write_all(b"G").await.unwrap();
        let started = Instant::now();
        assert_eq!(conn.read(&mut buf).await.unwrap(), 1);
        let closed = conn.read(&mut buf).await;

        // Assert
        let err = closed.expect_err("a head past its deadline reads an error");
        assert_eq!(err.to_string(), "request head not received in time");
        let after = started.elapsed();
        assert!(
            after >= Duration::from_millis(300) && after < Duration::from_secs(5),
            "closed {after:?} after the head's first byte, wanted 300 ms"
        );
    }
}
