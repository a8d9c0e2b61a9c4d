//! Rows written straight into the tables, many to a statement: the thousands of shifts
//! and memberships a paging test or a benchmark needs, which making one by one through
//! the API would take minutes. Shared by `tests/api` (`mod rows`) and `benches/feed.rs`
//! (`#[path]`), which seed the same tables.

use wfs_core::Wfs;
use wfs_core::sea_orm::{ConnectionTrait, Statement, Value};

/// Rows a statement: at most 13 columns x 200 rows, far below SQLite's and
/// PostgreSQL's limits on bound values.
const ROWS_PER_STATEMENT: usize = 200;

/// The columns of a shift row, in the order the seeding code gives its values.
pub(crate) const SHIFT_COLUMNS: [&str; 13] = [
    "id",
    "company_id",
    "slot_id",
    "branch_id",
    "job_role_id",
    "membership_id",
    "user_id",
    "book_date",
    "status",
    "start_at",
    "end_at",
    "created_at",
    "updated_at",
];

/// Inserts `rows` of `columns` into `table` in multi-row statements, each in a write
/// transaction of its own.
pub(crate) async fn insert_rows(wfs: &Wfs, table: &str, columns: &[&str], rows: Vec<Vec<Value>>) {
    let backend = wfs.store().conn().get_database_backend();
    for chunk in rows.chunks(ROWS_PER_STATEMENT) {
        let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
        for i in 0..chunk.len() {
            let placeholders: Vec<String> = (0..columns.len())
                .map(|c| format!("${}", i * columns.len() + c + 1))
                .collect();
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&format!("({})", placeholders.join(",")));
        }
        let values: Vec<Value> = chunk.iter().flatten().cloned().collect();
        let tx = wfs.begin().await.unwrap();
        // Through wfs's qualified connection: in a schema of its own (the PostgreSQL
        // leg's `WFS_TEST_DATABASE_SCHEMA`), the table names must name it.
        tx.qualified()
            .execute_raw(Statement::from_sql_and_values(backend, sql, values))
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }
}
