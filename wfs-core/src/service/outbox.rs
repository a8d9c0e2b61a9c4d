//! The transactional outbox and the Mailer that delivers it.
