//! Email for the transactional outbox: the [`Mailer`]s the server can use, and the
//! background task that delivers the outbox through one of them.
//!
//! With `--smtp-url` the server sends through [`SmtpMailer`] (lettre, async, on
//! Tokio, TLS by rustls); without it, [`LogMailer`] only logs each message's
//! recipient and subject, so a development server needs no mail system.

use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use wfs_core::Wfs;
use wfs_core::service::outbox::{Email, MailFuture, Mailer};

/// How often the background sender looks for due messages.
pub const SEND_INTERVAL: Duration = Duration::from_secs(2);
/// Messages claimed per outbox pass.
pub const SEND_BATCH: usize = 50;

/// Why mail could not be configured.
#[derive(Debug)]
pub enum MailConfigError {
    /// `--smtp-url` without `--mail-from`.
    MissingFrom,
    /// The sender is not an address such as `Rota <rota@example.com>`.
    From(lettre::address::AddressError),
    /// The SMTP URL could not be used.
    Url(lettre::transport::smtp::Error),
}

impl fmt::Display for MailConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingFrom => {
                f.write_str("--mail-from (WFS_MAIL_FROM) is required with --smtp-url")
            }
            Self::From(e) => write!(f, "invalid --mail-from address: {e}"),
            Self::Url(e) => write!(f, "invalid --smtp-url: {e}"),
        }
    }
}

impl std::error::Error for MailConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::MissingFrom => None,
            Self::From(e) => Some(e),
            Self::Url(e) => Some(e),
        }
    }
}

/// The mailer the server's options ask for: SMTP when `smtp_url` is set, else the
/// log. Call it inside a Tokio runtime (see [`SmtpMailer::new`]).
///
/// # Errors
/// [`MailConfigError`] for an SMTP URL without a sender, a bad sender or a bad URL.
pub fn mailer_from_options(
    smtp_url: Option<&str>,
    mail_from: Option<&str>,
) -> Result<Arc<dyn Mailer>, MailConfigError> {
    match smtp_url {
        Some(url) => {
            let from = mail_from.ok_or(MailConfigError::MissingFrom)?;
            Ok(Arc::new(SmtpMailer::new(url, from)?))
        }
        None => Ok(Arc::new(LogMailer)),
    }
}

/// Sends through an SMTP server (pooled connections).
///
/// URL forms, as lettre reads them: `smtp://host:port` (plain), `smtp://user:pass@host:587?tls=required`
/// (STARTTLS), `smtps://user:pass@host:465` (TLS from the start).
#[derive(Clone)]
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl SmtpMailer {
    /// A mailer for the SMTP server at `url`, sending as `from`. Call it inside a
    /// Tokio runtime: the connection pool runs as a task.
    ///
    /// # Errors
    /// [`MailConfigError::Url`] or [`MailConfigError::From`].
    pub fn new(url: &str, from: &str) -> Result<Self, MailConfigError> {
        let from = from.parse().map_err(MailConfigError::From)?;
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(MailConfigError::Url)?
            .build();
        Ok(Self { transport, from })
    }
}

impl fmt::Debug for SmtpMailer {
    // The transport holds the SMTP credentials: never print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpMailer")
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl Mailer for SmtpMailer {
    fn send<'a>(&'a self, email: &'a Email) -> MailFuture<'a> {
        Box::pin(async move {
            let message = Message::builder()
                .from(self.from.clone())
                .to(email.to.parse()?)
                .subject(email.subject.as_str())
                .header(ContentType::TEXT_PLAIN)
                .body(email.text.clone())?;
            self.transport.send(message).await?;
            Ok(())
        })
    }
}

/// Logs each message's recipient and subject (at DEBUG) instead of sending it; the
/// [`OutboxSender`] says at INFO, in one line per round, how many were not sent.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogMailer;

impl Mailer for LogMailer {
    fn send<'a>(&'a self, email: &'a Email) -> MailFuture<'a> {
        tracing::debug!(to = %email.to, subject = %email.subject, "email not sent: no --smtp-url configured");
        Box::pin(std::future::ready(Ok(())))
    }
}

/// What the [`OutboxSender`]'s one INFO line per round says of the emails it handed
/// to the mailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summary {
    /// They were sent (a real mail system).
    Sent,
    /// They were only logged ([`LogMailer`]: no `--smtp-url`).
    NotSent,
}

/// One INFO line for a round that handed emails to the mailer.
fn summarise(summary: Summary, sent: usize, failed: usize) {
    match (summary, sent, failed) {
        (_, 0, 0) => {}
        (Summary::NotSent, n, _) => tracing::info!(
            emails = n,
            "{n} queued emails not sent: no --smtp-url is configured, so the welcome emails of new staff are logged and dropped instead of delivered (set --smtp-url and --mail-from to send them; RUST_LOG=info,wfs_server::mail=debug lists them)"
        ),
        (Summary::Sent, sent, 0) => tracing::info!(emails = sent, "sent {sent} queued emails"),
        (Summary::Sent, sent, failed) => tracing::info!(
            emails = sent,
            failed,
            "sent {sent} queued emails; {failed} failed and will be retried"
        ),
    }
}

/// The running background sender; [`OutboxSender::shutdown`] stops it.
#[derive(Debug)]
pub struct OutboxSender {
    stop: watch::Sender<bool>,
    rounds: watch::Receiver<u64>,
    task: JoinHandle<()>,
}

impl OutboxSender {
    /// Delivers the outbox through `mailer` every `every`, until shut down.
    ///
    /// A pass that fills its batch is followed at once by another, so a backlog
    /// drains without waiting for the next tick; each round that handed emails to
    /// the mailer ends with one INFO line ([`Summary::Sent`]).
    pub fn spawn(wfs: Wfs, mailer: Arc<dyn Mailer>, every: Duration) -> Self {
        Self::spawn_with_summary(wfs, mailer, every, Summary::Sent)
    }

    /// [`OutboxSender::spawn`], with the words of the round's summary line.
    pub fn spawn_with_summary(
        wfs: Wfs,
        mailer: Arc<dyn Mailer>,
        every: Duration,
        summary: Summary,
    ) -> Self {
        let (stop, mut stopped) = watch::channel(false);
        let (rounds_done, rounds) = watch::channel(0u64);
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = stopped.changed() => break,
                }
                let (mut sent, mut failed) = (0, 0);
                loop {
                    match wfs.deliver_outbox(&*mailer, SEND_BATCH).await {
                        Ok(report) => {
                            sent += report.sent;
                            failed += report.failed;
                            if report.claimed > 0 {
                                tracing::debug!(
                                    sent = report.sent,
                                    failed = report.failed,
                                    "outbox pass"
                                );
                            }
                            if report.claimed < SEND_BATCH || *stopped.borrow() {
                                break;
                            }
                        }
                        Err(err) => {
                            tracing::warn!(error = %err, "outbox delivery failed");
                            break;
                        }
                    }
                }
                summarise(summary, sent, failed);
                rounds_done.send_modify(|n| *n += 1);
            }
        });
        Self { stop, rounds, task }
    }

    /// Resolves once a round of delivery has finished since the sender started (at
    /// once if one has): after it, the emails due at start have been handed over and
    /// the round's summary line is logged.
    pub fn first_round(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rounds = self.rounds.clone();
        async move {
            let _ = rounds.wait_for(|n| *n > 0).await;
        }
    }

    /// Stops the sender after the pass in progress, if any, has finished.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        if let Err(err) = self.task.await {
            tracing::warn!(error = %err, "outbox sender ended abnormally");
        }
    }
}
