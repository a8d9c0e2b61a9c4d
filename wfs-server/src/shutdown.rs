//! SIGINT and SIGTERM, caught from the moment they are installed.
//!
//! Tokio's `ctrl_c()` installs its handler when it is first polled, and until then a
//! signal has its default action: the process dies. So the server installs both
//! handlers before it announces anything (`listening`, the demo's key): from the
//! first line an orchestrator can read, a SIGTERM drains the server instead of
//! killing it, whenever it arrives (during the demo's seeding too).

use std::io;

/// The shutdown signals, installed.
#[derive(Debug)]
pub(crate) struct ShutdownSignals {
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
}

impl ShutdownSignals {
    /// Installs the handlers now: a signal that arrives from here on is kept for
    /// [`ShutdownSignals::recv`], however late that is called.
    pub(crate) fn install() -> io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Self {
                terminate: signal(SignalKind::terminate())?,
                interrupt: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    /// Waits for SIGINT or SIGTERM (or one that came since [`ShutdownSignals::install`]).
    pub(crate) async fn recv(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.terminate.recv() => {},
            _ = self.interrupt.recv() => {},
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutdown signal received");
    }
}
