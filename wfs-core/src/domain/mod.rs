//! Pure types and rules: parsing and validation with no I/O.
//!
//! Values of these types are valid by construction, so the services never re-check them.

pub mod audit;
pub mod credentials;
pub mod idempotency;
pub mod json;
pub mod membership;
pub mod origin;
pub mod scope;
pub mod secret_format;
pub mod shift;
pub mod signed;
pub mod supply;
pub mod time;
pub mod validate;
pub mod webhook;
