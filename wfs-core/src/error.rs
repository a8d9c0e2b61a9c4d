//! The one error type of `wfs-core`.
//!
//! It speaks no HTTP: `wfs-tower` maps each variant to a status in a single table
//! (`wfs_tower::error`). Variants carry the client-visible message; internal causes
//! travel in [`Error::Internal`] and are never shown to callers.

use std::fmt;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a caller could not be authenticated.
///
/// The variants are kept apart because the specification gives them different
/// messages ("missing" and "invalid" credentials are not the same answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthFailure {
    /// No credentials, or only half of a key pair.
    MissingCredentials,
    /// Unknown client id, wrong secret or revoked key.
    InvalidCredentials,
    /// The key's `expiresAt` has passed.
    KeyExpired,
    /// Sign-in with an unknown user or a wrong password.
    InvalidLogin,
    /// Missing, malformed or expired bearer token.
    InvalidToken,
}

impl AuthFailure {
    /// The client-visible message, exact where the specification fixes it.
    pub fn message(self) -> &'static str {
        match self {
            Self::MissingCredentials => "Missing API credentials",
            Self::InvalidCredentials => "Invalid API credentials",
            Self::KeyExpired => "API key expired",
            Self::InvalidLogin => "Invalid email or password",
            Self::InvalidToken => "Invalid or expired access token",
        }
    }
}

/// Why a request with a valid Idempotency-Key could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdempotencyConflict {
    /// The key was used before for a different method, path or body.
    KeyReused,
    /// The original request with this key has not finished yet.
    InProgress,
}

impl IdempotencyConflict {
    /// The client-visible message.
    pub fn message(self) -> &'static str {
        match self {
            Self::KeyReused => "Idempotency-Key was already used for a different request",
            Self::InProgress => "A request with this Idempotency-Key is still in progress",
        }
    }
}

/// The input a validation error is about, as the path of keys and indexes that
/// leads to it from the top of the input (`assignees[0].userId`, `from`). `Display`
/// writes it as that JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field(Vec<Segment>);

/// One step of a [`Field`] path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A named member or parameter.
    Key(String),
    /// An array position.
    Index(usize),
}

impl Field {
    /// A top-level field or parameter.
    pub fn new(name: impl Into<String>) -> Self {
        Self(vec![Segment::Key(name.into())])
    }

    /// The member `name` of this field.
    pub fn key(mut self, name: impl Into<String>) -> Self {
        self.0.push(Segment::Key(name.into()));
        self
    }

    /// The item `index` of this array field.
    pub fn index(mut self, index: usize) -> Self {
        self.0.push(Segment::Index(index));
        self
    }

    /// The path's steps.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }
}

impl From<&str> for Field {
    fn from(name: &str) -> Self {
        Self::new(name)
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(name) if i == 0 => f.write_str(name)?,
                Segment::Key(name) => write!(f, ".{name}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// How [`Error::Invalid`] reads as one sentence: the field, then the reason.
struct Invalid;

impl Invalid {
    fn render(field: Option<&Field>, reason: &str) -> String {
        match field {
            Some(field) => format!("{field} {reason}"),
            None => reason.to_owned(),
        }
    }
}

/// Every failure a `wfs-core` operation can report.
///
/// New kinds of failure may be added (`#[non_exhaustive]`): a host's `match` keeps a
/// `_` arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Credentials are missing or wrong (HTTP 401).
    #[error("{}", .0.message())]
    Unauthenticated(AuthFailure),
    /// The caller is known but may not do this (HTTP 403).
    #[error("{0}")]
    Forbidden(String),
    /// Input failed validation (HTTP 400): `field` is the input at fault, when one
    /// is, and `reason` says what is wrong with it (`must be at most 200
    /// characters`). A transport renders the two in its own words.
    #[error("{}", Invalid::render(.field.as_ref(), .reason))]
    Invalid {
        /// The field or parameter at fault.
        field: Option<Field>,
        /// What is wrong, in words that follow the field's name.
        reason: String,
    },
    /// An identifier does not name a record of the caller's company (HTTP 404).
    ///
    /// Another company's id answers exactly like an unknown one.
    #[error("{kind} not found")]
    NotFound {
        /// What was looked for, e.g. `Job role`.
        kind: &'static str,
    },
    /// The request is valid but conflicts with the current state (HTTP 409).
    #[error("{0}")]
    Conflict(String),
    /// The Idempotency-Key cannot be honoured now (HTTP 409, never stored).
    #[error("{}", .0.message())]
    Idempotency(IdempotencyConflict),
    /// Too many sign-in attempts for this login or from this address (HTTP 429);
    /// try again after the wait.
    #[error("Too many sign-in attempts")]
    Throttled {
        /// How long to wait before the next attempt can be admitted.
        retry_after: std::time::Duration,
    },
    /// As much password hashing as the facade runs at once is running, and as much
    /// as may wait is waiting (HTTP 503); try again after the wait. Nothing was
    /// checked.
    #[error("Too many sign-ins are being checked at once; retry shortly")]
    Busy {
        /// How long to wait before trying again.
        retry_after: std::time::Duration,
    },
    /// The database could not serve the request now (HTTP 503, worth retrying):
    /// it is away, or it ended the transaction to break a lock conflict (a deadlock,
    /// a serialization failure, SQLite busy). Nothing was written either way.
    #[error("database unavailable")]
    Unavailable(#[source] sea_orm::DbErr),
    /// A bug or an unexpected store failure (HTTP 500); the cause is logged, not shown.
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl Error {
    /// [`Error::Invalid`] about the input as a whole, or a rule across fields.
    pub fn invalid(message: impl fmt::Display) -> Self {
        Self::Invalid {
            field: None,
            reason: message.to_string(),
        }
    }

    /// [`Error::Invalid`] about one field or parameter.
    pub fn invalid_field(field: impl Into<Field>, reason: impl fmt::Display) -> Self {
        Self::Invalid {
            field: Some(field.into()),
            reason: reason.to_string(),
        }
    }

    /// Shorthand for [`Error::NotFound`].
    pub fn not_found(kind: &'static str) -> Self {
        Self::NotFound { kind }
    }

    /// Shorthand for [`Error::Conflict`].
    pub fn conflict(message: impl fmt::Display) -> Self {
        Self::Conflict(message.to_string())
    }

    /// Wraps any unexpected failure as [`Error::Internal`].
    pub fn internal(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Internal(cause.into())
    }
}

impl From<sea_orm::DbErr> for Error {
    fn from(err: sea_orm::DbErr) -> Self {
        if is_unavailable(&err) {
            Self::Unavailable(err)
        } else {
            Self::Internal(Box::new(err))
        }
    }
}

/// Whether the database itself is away (pool exhausted or closed, connection lost,
/// server shutting down or not yet accepting), as opposed to a statement failing:
/// the former is a 503 worth retrying, never a 500.
fn is_unavailable(err: &sea_orm::DbErr) -> bool {
    use sea_orm::sqlx::Error as Sqlx;
    use sea_orm::{DbErr, RuntimeErr};
    match err {
        DbErr::ConnectionAcquire(_) | DbErr::Conn(_) => true,
        DbErr::Exec(RuntimeErr::SqlxError(e)) | DbErr::Query(RuntimeErr::SqlxError(e)) => {
            match &**e {
                Sqlx::Io(_)
                | Sqlx::PoolTimedOut
                | Sqlx::PoolClosed
                | Sqlx::WorkerCrashed
                | Sqlx::Tls(_)
                | Sqlx::Protocol(_) => true,
                Sqlx::Database(db) => is_transient(&**db),
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether the database refused the statement for a reason that retrying can clear:
/// its server is going ([`is_outage_state`]), or it aborted the transaction over a
/// conflict with another one. wfs takes its locks in one order and PostgreSQL's READ
/// COMMITTED raises no serialization failures for it, but a host's transaction that wfs
/// joined (or a host's own isolation level) can still meet one, and a single such
/// collision must answer "retry", not "bug".
fn is_transient(db: &dyn sea_orm::sqlx::error::DatabaseError) -> bool {
    #[cfg(feature = "sqlite")]
    if let Some(sqlite) = db.try_downcast_ref::<sea_orm::sqlx::sqlite::SqliteError>() {
        use sea_orm::sqlx::error::DatabaseError as _;
        // SQLITE_BUSY and SQLITE_LOCKED, with their extended codes (the low byte).
        return sqlite
            .code()
            .and_then(|c| c.parse::<i32>().ok())
            .is_some_and(|c| matches!(c & 0xff, 5 | 6));
    }
    db.code().is_some_and(|c| {
        // 40P01 deadlock_detected, 40001 serialization_failure.
        is_outage_state(&c) || matches!(&*c, "40P01" | "40001")
    })
}

/// PostgreSQL SQLSTATEs that mean "the server is going or not there": class 08
/// (connection exception), 57P01-57P03 (admin or crash shutdown, cannot connect
/// now), 53300 (too many connections).
fn is_outage_state(code: &str) -> bool {
    code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03" | "53300")
}

/// Maps unique-constraint violations to a client error instead of racing a pre-check.
pub(crate) trait OnConstraint<T> {
    /// Turns a unique violation into `Error::Conflict(message)`; other errors pass through.
    fn on_unique_violation(self, message: impl FnOnce() -> String) -> Result<T>;
}

impl<T> OnConstraint<T> for std::result::Result<T, sea_orm::DbErr> {
    fn on_unique_violation(self, message: impl FnOnce() -> String) -> Result<T> {
        match self {
            Ok(v) => Ok(v),
            Err(e)
                if matches!(
                    e.sql_err(),
                    Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
                ) =>
            {
                Err(Error::Conflict(message()))
            }
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_input_reads_as_the_field_then_the_reason() {
        let nested = Error::invalid_field(
            Field::new("assignees").index(0).key("userId"),
            "must not be empty",
        );
        assert_eq!(nested.to_string(), "assignees[0].userId must not be empty");
        let Error::Invalid { field, reason } = nested else {
            panic!("not Invalid")
        };
        assert_eq!(
            field.unwrap().segments(),
            [
                Segment::Key("assignees".into()),
                Segment::Index(0),
                Segment::Key("userId".into())
            ]
        );
        assert_eq!(reason, "must not be empty");
        let whole = Error::invalid("the window from..to may not exceed 90 days");
        assert_eq!(
            whole.to_string(),
            "the window from..to may not exceed 90 days"
        );
    }
}
