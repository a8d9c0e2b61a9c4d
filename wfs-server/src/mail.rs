//! Email for the transactional outbox: the [`Mailer`]s the server can use. The
//! outbox is delivered through one of them by the core's background work
//! (`Wfs::run_background_with_ready`, with the mailer given by `Wfs::with_mailer`).
//!
//! With `--smtp-url` the server sends through [`SmtpMailer`] (lettre, async, on
//! Tokio, TLS by rustls); without it, [`LogMailer`] only logs each message's
//! recipient and subject, so a development server needs no mail system.

use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use std::fmt;
use std::sync::Arc;
use wfs_core::service::outbox::{Email, MailFuture, Mailer};

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
/// outbox's one INFO line per round says how many were not sent, and why.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogMailer;

impl Mailer for LogMailer {
    fn send<'a>(&'a self, email: &'a Email) -> MailFuture<'a> {
        tracing::debug!(to = %email.to, subject = %email.subject, "email not sent: no --smtp-url configured");
        Box::pin(std::future::ready(Ok(())))
    }

    fn not_sent_because(&self) -> Option<&str> {
        Some(
            "no --smtp-url is configured, so the welcome emails of new staff are logged and dropped instead of delivered (set --smtp-url and --mail-from to send them; RUST_LOG=info,wfs_server::mail=debug lists them)",
        )
    }
}
