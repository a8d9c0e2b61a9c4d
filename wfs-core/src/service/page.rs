//! A page of a list behind sealed cursors (webhook history, the audit log).

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
