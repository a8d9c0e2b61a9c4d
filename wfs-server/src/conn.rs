//! Connection deadlines the API itself cannot see: a client must deliver each
//! request head within [`HEAD_TIMEOUT`] of its first byte (and a new connection its
//! first head within [`HEAD_TIMEOUT`] of opening), and a keep-alive connection with
//! no request in flight is closed after [`IDLE_TIMEOUT`].
//!
//! hyper's own `header_read_timeout` also runs while a keep-alive connection sits
//! idle, so it cannot tell "slow head" from "idle"; [`Deadlines`] wraps the socket
//! instead. Its reads fail with `TimedOut` when the deadline of the current phase
//! passes, and hyper then closes the connection. While a request is in flight
//! ([`InFlight`]) there is no read deadline: the request timeout bounds it.

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
/// request head, idle between requests, or serving one (no read deadline then).
pub struct Deadlines<T> {
    io: T,
    in_flight: Arc<InFlight>,
    phase: Phase,
    timer: Pin<Box<Sleep>>,
    head: Duration,
    idle: Duration,
    /// [`InFlight::started`] when last looked at.
    seen: usize,
}

impl<T> std::fmt::Debug for Deadlines<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deadlines")
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

impl<T> Deadlines<T> {
    pub fn new(io: T, in_flight: Arc<InFlight>, head: Duration, idle: Duration) -> Self {
        Self {
            io,
            in_flight,
            phase: Phase::Head,
            timer: Box::pin(tokio::time::sleep(head)),
            head,
            idle,
            seen: 0,
        }
    }

    fn enter(&mut self, phase: Phase) {
        self.phase = phase;
        let after = match phase {
            Phase::Head => self.head,
            Phase::Idle => self.idle,
            Phase::Busy => return,
        };
        self.timer.as_mut().reset(Instant::now() + after);
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
            this.phase = Phase::Busy;
            return Pin::new(&mut this.io).poll_read(cx, buf);
        }
        // A request served since the last read ends the head phase, even one answered
        // before any read saw it in flight (`/livez`, a 404).
        let started = this.in_flight.started();
        if this.phase == Phase::Busy || started != this.seen {
            this.seen = started;
            this.enter(Phase::Idle);
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if this.phase == Phase::Idle && buf.filled().len() > before {
                    this.enter(Phase::Head);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(err)) => Poll::Ready(Err(err)),
            Poll::Pending => {
                ready!(this.timer.as_mut().poll(cx));
                let what = match this.phase {
                    Phase::Idle => "idle keep-alive connection closed",
                    _ => "request head not received in time",
                };
                Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, what)))
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Deadlines<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
}
