//! A panic inside a request answers 500 with the error body instead of dropping the
//! connection, and is logged once, at ERROR, with the route.
//!
//! [`CatchPanic`] polls the request future inside `catch_unwind`, within the
//! request's span (`request{request_id=...}`), which the service enters on every poll.
//! The hook installed by [`install_panic_hook`] tells a request's panic from any
//! other by that span: it records the panic's `file:line` on it (`panic_at`), where
//! the service's one line shows it, and prints no report of its own; panics anywhere
//! else reach the previous hook unchanged. No state of ours is kept per thread: the
//! span is the request's own value, entered and left by tracing. A panic inside a
//! span of its own within the request (`bulk_create_staff`'s) is not seen as the
//! request's: the previous hook reports it as well, and the service's line still
//! names the route.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll};

/// The target and name of the span the service opens for each request.
pub(crate) const REQUEST_TARGET: &str = "wfs::request";
/// See [`REQUEST_TARGET`].
pub(crate) const REQUEST_SPAN: &str = "request";
/// The request span's field that the hook fills with the panic's `file:line`.
pub(crate) const PANIC_AT: &str = "panic_at";

/// Installs (once per process) a panic hook that stays quiet about panics inside
/// [`WfsService`](crate::WfsService) requests, which the service logs itself with the
/// route; every other panic goes to the hook that was installed before.
///
/// Optional: without it a request panic still answers 500 and is logged by the
/// service, and the default hook prints its own report as well. With logging off
/// (no subscriber, or one that keeps no ERROR line), the request has no span, and
/// the previous hook prints the report.
pub fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let span = tracing::Span::current();
            let in_request = span
                .metadata()
                .is_some_and(|m| m.target() == REQUEST_TARGET && m.name() == REQUEST_SPAN);
            if !in_request {
                previous(info);
            } else if let Some(at) = info.location() {
                span.record(
                    PANIC_AT,
                    tracing::field::display(format_args!("{}:{}", at.file(), at.line())),
                );
            }
        }));
    });
}

/// A panic caught while serving a request.
#[derive(Debug)]
pub(crate) struct Caught {
    /// The panic message, when it was a string.
    pub(crate) message: String,
}

/// Polls `F`, turning a panic into `Err(Caught)`.
pub(crate) struct CatchPanic<F> {
    inner: Pin<Box<F>>,
}

impl<F> CatchPanic<F> {
    pub(crate) fn new(inner: F) -> Self {
        Self {
            inner: Box::pin(inner),
        }
    }
}

impl<F: Future> Future for CatchPanic<F> {
    type Output = Result<F::Output, Caught>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match catch_unwind(AssertUnwindSafe(|| self.inner.as_mut().poll(cx))) {
            Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(Caught {
                message: message(&*payload),
            })),
        }
    }
}

fn message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}
