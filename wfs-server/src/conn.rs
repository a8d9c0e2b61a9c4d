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
//! Address cap ([`AddressCap`]): at most so many connections at once from one client
//! address (an IPv6 client: from one /64, the block one host is usually given), so
//! that one address cannot take every connection slot. Trusted proxies are exempt:
//! every client behind one shares its address.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv6Addr};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
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
    timer: Pin<Box<Sleep>>,
    head: Duration,
    idle: Duration,
    /// [`InFlight::started`] when last looked at.
    seen: usize,
    write: Duration,
    /// Armed while the socket refuses bytes: since the first refusal.
    write_timer: Pin<Box<Sleep>>,
    write_stalled: bool,
}

impl<T> std::fmt::Debug for Deadlines<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deadlines")
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

impl<T> Deadlines<T> {
    /// Wraps an accepted socket; the head deadline runs from now.
    pub fn new(io: T, in_flight: Arc<InFlight>, timeouts: Timeouts) -> Self {
        Self {
            io,
            in_flight,
            phase: Phase::Head,
            timer: Box::pin(tokio::time::sleep(timeouts.head)),
            head: timeouts.head,
            idle: timeouts.idle,
            seen: 0,
            write: timeouts.write,
            write_timer: Box::pin(tokio::time::sleep(timeouts.write)),
            write_stalled: false,
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
        let polled = Pin::new(&mut self.io).poll_write(cx, buf);
        self.after_write(cx, polled)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_flush(cx);
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
        self.after_write(cx, polled)
    }
}

/// Connections open at once per client address, beyond which a new one is refused
/// (the reference server answers it 429 and closes it). IPv4 addresses count one by
/// one, IPv6 ones by /64 (an IPv4-mapped IPv6 address counts as its IPv4 address);
/// the exempt addresses (trusted proxies) are not counted.
#[derive(Debug)]
pub struct AddressCap {
    limit: usize,
    exempt: Vec<IpAddr>,
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl AddressCap {
    /// At most `limit` connections per address; none counted for `exempt`.
    pub fn new(limit: usize, exempt: &[IpAddr]) -> Arc<Self> {
        Arc::new(Self {
            limit,
            exempt: exempt.iter().map(std::net::IpAddr::to_canonical).collect(),
            open: Mutex::new(HashMap::new()),
        })
    }

    /// The most connections one address may hold.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Counts a new connection from `ip` until the returned guard drops; `None` when
    /// its address already holds [`limit`](Self::limit) connections.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<AddressSlot> {
        let ip = ip.to_canonical();
        if self.exempt.contains(&ip) {
            return Some(AddressSlot(None));
        }
        let block = block_of(ip);
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = open.entry(block).or_insert(0);
        if *count >= self.limit {
            return None;
        }
        *count += 1;
        Some(AddressSlot(Some((self.clone(), block))))
    }

    /// Addresses holding connections now.
    #[cfg(test)]
    fn addresses(&self) -> usize {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }
}

/// What one client holds: its address, or its IPv6 /64.
fn block_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(bits))
        }
    }
}

/// One connection counted by [`AddressCap::admit`], until it drops.
#[derive(Debug)]
pub struct AddressSlot(Option<(Arc<AddressCap>, IpAddr)>);

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let Some((cap, block)) = self.0.take() else {
            return;
        };
        let mut open = cap
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = open.get_mut(&block) {
            *count -= 1;
            if *count == 0 {
                open.remove(&block);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn an_address_holds_at_most_the_limit_and_gets_its_slots_back() {
        let cap = AddressCap::new(2, &[]);
        let a = cap.admit(ip("192.0.2.1")).unwrap();
        let _b = cap.admit(ip("192.0.2.1")).unwrap();
        assert!(cap.admit(ip("192.0.2.1")).is_none());
        let _other = cap.admit(ip("192.0.2.2")).unwrap();
        drop(a);
        let _c = cap.admit(ip("192.0.2.1")).unwrap();
        assert!(cap.admit(ip("192.0.2.1")).is_none());
    }

    #[test]
    fn ipv6_counts_by_64_block_and_mapped_ipv4_as_ipv4() {
        let cap = AddressCap::new(1, &[]);
        let _a = cap.admit(ip("2001:db8:1:2::1")).unwrap();
        assert!(cap.admit(ip("2001:db8:1:2:ffff::9")).is_none());
        let _b = cap.admit(ip("2001:db8:1:3::1")).unwrap();
        let _c = cap.admit(ip("198.51.100.4")).unwrap();
        assert!(cap.admit(ip("::ffff:198.51.100.4")).is_none());
    }

    #[test]
    fn trusted_proxies_are_not_counted() {
        let cap = AddressCap::new(1, &[ip("10.0.0.1")]);
        let held: Vec<_> = (0..10)
            .map(|_| cap.admit(ip("10.0.0.1")).unwrap())
            .collect();
        assert_eq!(held.len(), 10);
        assert_eq!(cap.addresses(), 0);
        let _a = cap.admit(ip("10.0.0.2")).unwrap();
        assert!(cap.admit(ip("10.0.0.2")).is_none());
    }

    #[test]
    fn closed_addresses_leave_no_entry_behind() {
        let cap = AddressCap::new(4, &[]);
        let slots: Vec<_> = (1..=50)
            .map(|n| cap.admit(ip(&format!("192.0.2.{n}"))).unwrap())
            .collect();
        assert_eq!(cap.addresses(), 50);
        drop(slots);
        assert_eq!(cap.addresses(), 0);
    }
}
