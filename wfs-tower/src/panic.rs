//! A panic inside a request answers 500 with the error body instead of dropping the
//! connection, and is logged once, at ERROR, with the route.
//!
//! [`CatchPanic`] polls the request future inside `catch_unwind`. While it polls, a
//! thread-local flag tells the hook installed by [`install_panic_hook`] to keep the
//! panic's message and location for the one log line instead of printing its own
//! report; panics anywhere else reach the previous hook unchanged.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll};

thread_local! {
    static IN_REQUEST: Cell<bool> = const { Cell::new(false) };
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once per process) a panic hook that stays quiet about panics inside
/// [`WfsService`](crate::WfsService) requests, which the service logs itself with the
/// route; every other panic goes to the hook that was installed before.
///
/// Optional: without it a request panic still answers 500 and is logged by the
/// service, and the default hook prints its own report as well.
pub fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_REQUEST.with(Cell::get) {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                CAUGHT.with(|c| *c.borrow_mut() = Some(at));
            } else {
                previous(info);
            }
        }));
    });
}

/// A panic caught while serving a request.
#[derive(Debug)]
pub(crate) struct Caught {
    /// The panic message, when it was a string.
    pub(crate) message: String,
    /// `file:line`, when the hook of [`install_panic_hook`] saw it.
    pub(crate) location: String,
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
        let was = IN_REQUEST.with(|f| f.replace(true));
        let polled = catch_unwind(AssertUnwindSafe(|| self.inner.as_mut().poll(cx)));
        IN_REQUEST.with(|f| f.set(was));
        match polled {
            Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(Caught {
                message: message(&*payload),
                location: CAUGHT.with(|c| c.borrow_mut().take()).unwrap_or_default(),
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
