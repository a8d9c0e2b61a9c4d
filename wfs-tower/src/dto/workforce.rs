//! The workforce feed's query on the wire: snake_case, as the spec writes it.
//!
//! A page is answered as the core's [`WorkforcePage`](wfs_core::resource::workforce::WorkforcePage)
//! itself, written into one buffer sized from the page
//! ([`json_size_hint`](wfs_core::resource::workforce::WorkforcePage::json_size_hint)), so
//! answering a page holds its read model and its body, once each (docs/decisions.md,
//! "The workforce page's weight").

use super::limits::{CursorText, Line};
use serde::Deserialize;
use utoipa::IntoParams;

/// The feed's query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct FeedQuery {
    /// Window start, ISO-8601 date or date-time; default now. `supply_status` is taken
    /// at this instant.
    #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
    pub(crate) from: Option<Line>,
    /// Window end (exclusive); default `from` + 30 days; at most 90 days after `from`.
    #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
    pub(crate) to: Option<Line>,
    /// Page size, 1 to 200; default 100.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 200)]
    pub(crate) limit: Option<Line>,
    /// Opaque, from `pagination.next_cursor` or `pagination.resume_cursor`, signed by
    /// the server: any change to it is a 400. It must be sent with the same other
    /// parameters as the first page (else 400); `wait` and `start` are not bound. A
    /// `next_cursor` carries the first page's window; a `resume_cursor` resolves a
    /// window left to its default afresh at each use.
    #[param(value_type = Option<String>, max_length = 1024)]
    pub(crate) cursor: Option<CursorText>,
    /// Only resources updated at or after this instant (inclusive).
    #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
    pub(crate) updated_since: Option<Line>,
    /// `now`: answer an empty page whose `resume_cursor` is the head of the feed, to
    /// follow every change committed from now on without reading what came before.
    /// Not with `updated_since`; with a `cursor`, the cursor's position wins.
    #[param(value_type = Option<String>, pattern = "^now$", max_length = 3)]
    pub(crate) start: Option<Line>,
    /// Seconds, 1 to 60: when nothing follows the position, hold the request until a
    /// change of the company commits (then answer it at once) or until `wait` runs out
    /// (then answer an empty page whose `resume_cursor` is at the same position).
    /// By default each API key may have 100 requests held at once (429 past that), a
    /// server 2,000 (503); a held request counts once against the rate limit.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 60)]
    pub(crate) wait: Option<Line>,
}
