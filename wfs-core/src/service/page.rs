//! A page of a list behind sealed cursors (webhook history, the audit log).
//!
//! A cursor seals the list's scope (its name, the company and the filters) with the
//! position the next page starts after, so a cursor cannot be edited, nor used on
//! another list, company or filter.

use crate::Wfs;
use crate::error::{Error, Result};
use crate::event::{EventRecord, WebhookEventPage};
use crate::resource::audit::{AuditLogEntry, AuditLogPage, AuditPagination};
use crate::resource::webhook::{Delivery, WebhookDeliveryPage, WebhookPagination};

/// One page of a list, and the cursor of the next.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// The items.
    pub data: Vec<T>,
    /// The page size in force.
    pub limit: u64,
    /// Cursor of the next page; `None` on the last.
    pub next_cursor: Option<String>,
}

/// Each list's page as its route answers it: the items, then `pagination`.
macro_rules! answered_as {
    ($($item:ty => $page:ident { $pagination:ident }),* $(,)?) => {$(
        impl From<Page<$item>> for $page {
            fn from(p: Page<$item>) -> Self {
                Self {
                    data: p.data,
                    pagination: $pagination {
                        limit: p.limit,
                        next_cursor: p.next_cursor,
                    },
                }
            }
        }
    )*};
}

answered_as! {
    AuditLogEntry => AuditLogPage { AuditPagination },
    Delivery => WebhookDeliveryPage { WebhookPagination },
    EventRecord => WebhookEventPage { WebhookPagination },
}

impl Wfs {
    /// The cursor of the list `scope` names, continuing after `position`.
    pub(crate) fn seal_cursor(&self, scope: &str, position: &str) -> String {
        self.tokens()
            .cursors
            .seal(format!("{scope}{position}").as_bytes())
    }

    /// The position `cursor` continues after, read by `parse`; a cursor of another
    /// list, company or filter, or one this server did not issue, is a 400 naming
    /// `cursor`.
    pub(crate) fn open_cursor<T>(
        &self,
        scope: &str,
        cursor: Option<&str>,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<Option<T>> {
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        let bad =
            || Error::invalid_field("cursor", "is not a cursor this API issued for this list");
        let payload = self.tokens().cursors.open(cursor.trim()).ok_or_else(bad)?;
        let text = String::from_utf8(payload).map_err(|_| bad())?;
        let position = text.strip_prefix(scope).ok_or_else(bad)?;
        parse(position).map(Some).ok_or_else(bad)
    }
}
