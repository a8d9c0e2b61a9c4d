//! wfs inside a host's database: its own schema beside the host's tables of the same
//! names, on the host's pool, in the host's transactions (issue 19, points 1-3), and
//! a database of the previous release upgraded in place.
//!
//! The host here is what a real one looks like: its own `users`, `companies` and
//! `orders` (its own shapes) made by its own sea-orm migrator, which keeps its
//! bookkeeping in sea-orm's default `seaql_migrations`. Tests that need PostgreSQL
//! (schemas, a shared pool's session state) are reported as ignored on SQLite; they
//! run with `WFS_TEST_DATABASE_URL` set and `--include-ignored`.

use crate::helpers::*;
use http::Method;
use sea_orm_migration::prelude::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use wfs_core::sea_orm::{
    ConnectionTrait, Database, DatabaseBackend, DatabaseConnection, SqliteTransactionMode,
    Statement, TransactionOptions, TransactionTrait,
};
use wfs_core::service::job_roles::NewJobRole;
use wfs_core::{CompanyId, Error, Store, StoreOptions};

const ROLES: &str = "/external/v1/job-roles";

/// The host's own migrator: sea-orm's defaults, so `seaql_migrations`.
struct HostMigrator;

#[async_trait::async_trait]
impl MigratorTrait for HostMigrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![Box::new(CreateHostTables)]
    }
}

struct CreateHostTables;

impl MigrationName for CreateHostTables {
    fn name(&self) -> &str {
        "m20260101_000001_create_host_tables"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for CreateHostTables {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let conn = manager.get_connection();
        for sql in [
            "CREATE TABLE users (id bigserial PRIMARY KEY, email text NOT NULL)",
            "CREATE TABLE companies (id bigserial PRIMARY KEY, name text NOT NULL)",
            "CREATE TABLE orders (id bigserial PRIMARY KEY, company_id bigint NOT NULL REFERENCES companies (id))",
        ] {
            conn.execute_unprepared(sql).await?;
        }
        Ok(())
    }
}

/// wfs's migrations as the previous release recorded them: in `seaql_migrations`.
struct PreviousRelease;

#[async_trait::async_trait]
impl MigratorTrait for PreviousRelease {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        wfs_core::persistence::migration::Migrator::migrations()
    }
}

/// A fresh PostgreSQL database: its URL, and the database (dropped when the test ends).
async fn fresh_postgres() -> (String, TestDatabase) {
    let admin = std::env::var("WFS_TEST_DATABASE_URL")
        .expect("this test needs PostgreSQL: set WFS_TEST_DATABASE_URL");
    let db = TestDatabase::postgres(&admin, "sharing").await;
    (db.url().to_owned(), db)
}

fn wfs_options(url: &str) -> StoreOptions {
    StoreOptions::new(url)
        .schema("wfs")
        .max_connections(4)
        .acquire_timeout(TEST_ACQUIRE_TIMEOUT)
}

async fn strings(conn: &impl ConnectionTrait, sql: &str) -> Vec<String> {
    conn.query_all_raw(Statement::from_string(conn.get_database_backend(), sql))
        .await
        .unwrap()
        .iter()
        .map(|row| row.try_get_by_index::<String>(0).unwrap())
        .collect()
}

async fn count(conn: &impl ConnectionTrait, sql: &str) -> i64 {
    conn.query_one_raw(Statement::from_string(conn.get_database_backend(), sql))
        .await
        .unwrap()
        .unwrap()
        .try_get_by_index::<i64>(0)
        .unwrap()
}

fn titles(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|r| r["title"].as_str().unwrap().to_owned())
        .collect()
}

/// The tables of `schema`, sorted.
async fn tables_in(conn: &impl ConnectionTrait, schema: &str) -> Vec<String> {
    strings(
        conn,
        &format!(
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = '{schema}' ORDER BY table_name"
        ),
    )
    .await
}

/// What a host sees: its `users` with its own columns, its bookkeeping holding its
/// own migration only, and its `search_path` as PostgreSQL sets it.
async fn assert_host_untouched(host: &DatabaseConnection) {
    assert_eq!(
        strings(
            host,
            "SELECT column_name::text FROM information_schema.columns \
             WHERE table_schema = 'public' AND table_name = 'users' ORDER BY ordinal_position"
        )
        .await,
        ["id", "email"]
    );
    assert_eq!(
        tables_in(host, "public").await,
        ["companies", "orders", "seaql_migrations", "users"]
    );
    assert_eq!(
        strings(host, "SELECT version FROM seaql_migrations").await,
        ["m20260101_000001_create_host_tables"]
    );
    assert_eq!(
        strings(host, "SHOW search_path").await,
        ["\"$user\", public"]
    );
}

/// wfs's schema holds all its tables and its own bookkeeping, with every migration.
async fn assert_wfs_in_its_schema(conn: &impl ConnectionTrait) {
    let tables = tables_in(conn, "wfs").await;
    for table in [
        "companies",
        "shifts",
        "users",
        "webhook_events",
        "wfs_migrations",
    ] {
        assert!(tables.contains(&table.to_owned()), "{table} in {tables:?}");
    }
    assert_eq!(
        count(conn, "SELECT count(*) FROM wfs.wfs_migrations").await,
        wfs_core::persistence::migration::Migrator::migrations().len() as i64
    );
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn wfs_and_a_host_with_tables_of_the_same_names_share_a_database_whichever_migrates_first() {
    for wfs_first in [false, true] {
        // Arrange
        let (url, _db) = fresh_postgres().await;
        let host = Database::connect(&url).await.unwrap();

        // Act: each start migrates both, in this order; three starts.
        for _start in 0..3 {
            let store = Store::connect(&wfs_options(&url)).await.unwrap();
            if wfs_first {
                store.migrate().await.unwrap();
                HostMigrator::up(&host, None).await.unwrap();
            } else {
                HostMigrator::up(&host, None).await.unwrap();
                store.migrate().await.unwrap();
            }
            assert!(store.pending_migrations().await.unwrap().is_empty());
            assert!(
                HostMigrator::get_pending_migrations(&host)
                    .await
                    .unwrap()
                    .is_empty()
            );
            store.close().await.unwrap();
        }

        // Assert: both work, on their own tables.
        assert_host_untouched(&host).await;
        assert_wfs_in_its_schema(&host).await;
        host.execute_unprepared("INSERT INTO companies (name) VALUES ('Host Co')")
            .await
            .unwrap();
        host.execute_unprepared("INSERT INTO orders (company_id) SELECT id FROM companies")
            .await
            .unwrap();
        let app = TestApp::on_store(Store::connect(&wfs_options(&url)).await.unwrap());
        let key = app.key(&app.company("Acme").await).await;
        app.create_role(&key, "Nurse").await;
        assert_eq!(titles(&app.get(&key, ROLES).await.body), ["Nurse"]);
        assert_eq!(count(&host, "SELECT count(*) FROM companies").await, 1);
        assert_eq!(count(&host, "SELECT count(*) FROM wfs.companies").await, 1);
    }
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn wfs_runs_on_the_hosts_pool_and_the_hosts_queries_still_see_the_hosts_tables() {
    // Arrange: the host's one pool, its tables and a user of its own.
    let (url, _db) = fresh_postgres().await;
    let mut opts = wfs_core::sea_orm::ConnectOptions::new(url.clone());
    opts.max_connections(3).sqlx_logging(false);
    let host = Database::connect(opts).await.unwrap();
    HostMigrator::up(&host, None).await.unwrap();
    host.execute_unprepared("INSERT INTO users (email) VALUES ('owner@host.test')")
        .await
        .unwrap();

    // Act: wfs on that pool, migrated and used through its API.
    let store = Store::from_connection(host.clone(), &StoreOptions::default().schema("wfs"))
        .await
        .unwrap();
    store.migrate().await.unwrap();
    let app = TestApp::on_store(store);
    let key = app.key(&app.company("Acme").await).await;
    app.create_role(&key, "Nurse").await;
    assert_eq!(titles(&app.get(&key, ROLES).await.body), ["Nurse"]);

    // Assert: every pooled connection still shows the host its own users, and wfs's
    // change listener listens from the pool on its schema's channel.
    for _ in 0..6 {
        let tx = host.begin().await.unwrap();
        assert_eq!(
            strings(&tx, "SELECT email FROM users").await,
            ["owner@host.test"]
        );
        tx.commit().await.unwrap();
    }
    assert_host_untouched(&host).await;
    assert_wfs_in_its_schema(&host).await;
    let mut listening = 0;
    for _ in 0..100 {
        listening = count(
            &host,
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND query = 'LISTEN \"wfs_changes_wfs\"'",
        )
        .await;
        if listening == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(listening, 1, "one listener, on the schema's channel");
}

/// A host's table beside wfs's in the test store's database, and the host's
/// transaction on the store's pool (on SQLite, `IMMEDIATE`, as joined ones should be).
async fn host_orders(app: &TestApp) -> DatabaseConnection {
    let pool = app.wfs.store().conn().inner().clone();
    pool.execute_unprepared(
        "CREATE TABLE host_orders (id integer PRIMARY KEY, note text NOT NULL)",
    )
    .await
    .unwrap();
    pool
}

async fn host_begin(pool: &DatabaseConnection) -> wfs_core::sea_orm::DatabaseTransaction {
    pool.begin_with_options(TransactionOptions {
        sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
        ..Default::default()
    })
    .await
    .unwrap()
}

fn new_role(title: &str) -> NewJobRole {
    NewJobRole {
        title: title.into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_host_write_and_a_wfs_write_in_a_joined_transaction_commit_together_and_roll_back_together()
 {
    // Arrange
    let app = TestApp::spawn().await;
    let company = app.company("Acme").await;
    let id: CompanyId = company.id.parse().unwrap();
    let key = app.key(&company).await;
    let pool = host_orders(&app).await;

    // Act: one transaction rolled back, one committed.
    let tx = app.wfs.join(host_begin(&pool).await);
    tx.execute_unprepared("INSERT INTO host_orders (id, note) VALUES (1, 'rolled back')")
        .await
        .unwrap();
    app.wfs
        .create_job_role(&tx, id, new_role("Rolled back"))
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    let tx = app.wfs.join(host_begin(&pool).await);
    tx.execute_unprepared("INSERT INTO host_orders (id, note) VALUES (2, 'kept')")
        .await
        .unwrap();
    app.wfs
        .create_job_role(&tx, id, new_role("Kept"))
        .await
        .unwrap();
    // Neither is visible outside before the commit.
    assert_eq!(count(&pool, "SELECT count(*) FROM host_orders").await, 0);
    assert!(app.wfs.list_job_roles(id).await.unwrap().is_empty());
    tx.commit().await.unwrap();

    // Assert
    assert_eq!(
        strings(&pool, "SELECT note FROM host_orders").await,
        ["kept"]
    );
    assert_eq!(
        titles(&app.get(&key, ROLES).await.body),
        ["Kept"],
        "{}",
        backend_name()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_job_role_list_is_stale_after_a_joined_transaction_commits() {
    // Arrange: readers keep the cached list warm (and refill it) while each
    // transaction is open.
    const ROUNDS: usize = 120;
    let app = TestApp::spawn().await;
    let company = app.company("Acme").await;
    let id: CompanyId = company.id.parse().unwrap();
    let key = app.key(&company).await;
    let pool = host_orders(&app).await;
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (app, key, stop, reads) = (app.clone(), key.clone(), stop.clone(), reads.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    app.get(&key, ROLES).await.assert_status(200);
                    reads.fetch_add(1, Ordering::Relaxed);
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();

    // Act
    let mut stale = 0;
    for round in 0..ROUNDS {
        let title = format!("Role {round:03}");
        let tx = app.wfs.join(host_begin(&pool).await);
        tx.execute_unprepared(&format!(
            "INSERT INTO host_orders (id, note) VALUES ({round}, 'order')"
        ))
        .await
        .unwrap();
        app.wfs
            .create_job_role(&tx, id, new_role(&title))
            .await
            .unwrap();
        // Give the readers a turn inside the transaction.
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        tx.commit().await.unwrap();
        let listed = app.send(Req::new(Method::GET, ROLES).key(&key)).await;
        if !titles(&listed.body).contains(&title) {
            stale += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        reader.await.unwrap();
    }

    // Assert
    eprintln!(
        "joined-transaction job-role lists on {}: {stale} stale of {ROUNDS} rounds after commit ({} concurrent reads)",
        backend_name(),
        reads.load(Ordering::Relaxed)
    );
    assert_eq!(stale, 0);
}

#[tokio::test]
async fn a_hosts_after_commit_work_runs_after_the_commit_and_never_after_a_rollback() {
    // Arrange
    let app = TestApp::spawn().await;
    let pool = host_orders(&app).await;
    let ran = Arc::new(AtomicUsize::new(0));
    let work = || {
        let ran = ran.clone();
        move || {
            ran.fetch_add(1, Ordering::SeqCst);
        }
    };

    // Act / Assert
    let tx = app.wfs.join(host_begin(&pool).await);
    tx.after_commit(work());
    tx.rollback().await.unwrap();
    let tx = app.wfs.join(host_begin(&pool).await);
    tx.after_commit(work());
    drop(tx);
    assert_eq!(
        ran.load(Ordering::SeqCst),
        0,
        "rolled back, dropped: nothing ran"
    );
    let tx = app.wfs.join(host_begin(&pool).await);
    tx.after_commit(work());
    assert_eq!(ran.load(Ordering::SeqCst), 0, "nothing before the commit");
    tx.commit().await.unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_write_given_the_write_transaction_of_another_store_is_refused_and_writes_nothing() {
    // Arrange: a second store over the same pool, with caches of its own.
    let app = TestApp::spawn().await;
    let company = app.company("Acme").await;
    let id: CompanyId = company.id.parse().unwrap();
    let key = app.key(&company).await;
    let pool = app.wfs.store().conn().inner().clone();
    let options = match app.wfs.store().schema() {
        Some(schema) => StoreOptions::default().schema(schema),
        None => StoreOptions::default(),
    };
    let other = wfs_core::Wfs::new(
        Store::from_connection(pool, &options).await.unwrap(),
        b"another facade's secret, 32 bytes or more",
    )
    .unwrap();

    // Act: its commit would settle the other store's caches, not ours.
    let tx = other.begin().await.unwrap();
    let refused = app.wfs.create_job_role(&tx, id, new_role("Stray")).await;
    tx.commit().await.unwrap();

    // Assert
    match refused {
        Err(Error::Internal(err)) => {
            assert!(err.to_string().contains("another Store"), "says why: {err}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(titles(&app.get(&key, ROLES).await.body).is_empty());
}

#[tokio::test]
async fn a_bad_schema_name_or_a_schema_on_sqlite_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite://{}?mode=rwc", dir.path().join("w.db").display());
    let on_sqlite = Store::connect(&StoreOptions::new(sqlite).schema("wfs"))
        .await
        .unwrap_err();
    assert!(
        matches!(&on_sqlite, Error::Invalid { .. })
            && on_sqlite.to_string().contains("PostgreSQL only"),
        "{on_sqlite}"
    );
    for bad in ["Wfs", "wfs-schema", "users", "pg_wfs", ""] {
        let err =
            Store::connect(&StoreOptions::new("postgres://nobody@127.0.0.1:1/none").schema(bad))
                .await
                .unwrap_err();
        assert!(matches!(&err, Error::Invalid { .. }), "{bad}: {err}");
        assert!(err.to_string().contains("schema"), "{bad}: {err}");
    }
}

/// Every row of every table in `schema`, by table.
async fn row_counts(conn: &impl ConnectionTrait, schema: &str) -> Vec<(String, i64)> {
    let mut counts = Vec::new();
    for table in tables_in(conn, schema).await {
        if table == "seaql_migrations" || table == "wfs_migrations" {
            continue;
        }
        let n = count(
            conn,
            &format!("SELECT count(*) FROM \"{schema}\".\"{table}\""),
        )
        .await;
        counts.push((table, n));
    }
    counts
}

/// What the previous release's users would read: job roles, staff, shifts, a shift.
async fn readings(app: &TestApp, key: &Key) -> Vec<Value> {
    let mut out = Vec::new();
    for path in [ROLES, "/external/v1/staff", "/external/v1/shifts"] {
        let res = app.get(key, path).await;
        res.assert_status(200);
        out.push(res.body);
    }
    out
}

/// A database made by the previous release: its migrations recorded in
/// `seaql_migrations` (beside a host's row), tables in the default schema, and data
/// written through the API. Answers the app on it and what it read.
async fn previous_release(url: &str) -> (Key, Vec<Value>) {
    let db = Database::connect(url).await.unwrap();
    PreviousRelease::up(&db, None).await.unwrap();
    db.execute_unprepared(
        "INSERT INTO seaql_migrations (version, applied_at) VALUES ('m20260101_000001_create_host_tables', 1)",
    )
    .await
    .unwrap();
    db.close().await.unwrap();
    // The previous release's layout needs no migration: wfs with no schema reads it.
    let app = TestApp::on_store(
        Store::connect(
            &StoreOptions::new(url)
                .max_connections(4)
                .acquire_timeout(TEST_ACQUIRE_TIMEOUT),
        )
        .await
        .unwrap(),
    );
    let DaySlot {
        key, user, slot, ..
    } = app.day_slot().await;
    app.post(
        &key,
        "/external/v1/shifts/book",
        &json!({"slotId": slot, "date": "2026-11-16", "assignees": [{"userId": user}]}),
    )
    .await
    .assert_status(200);
    let read = readings(&app, &key).await;
    app.wfs.store().clone().close().await.unwrap();
    (key, read)
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn a_postgres_database_of_the_previous_release_moves_into_the_schema_without_loss() {
    // Arrange
    let (url, _db) = fresh_postgres().await;
    let (key, before) = previous_release(&url).await;
    let host = Database::connect(&url).await.unwrap();
    let rows_before = row_counts(&host, "public").await;
    assert!(rows_before.iter().any(|(t, n)| t == "shifts" && *n == 1));

    // Act: this release, with a schema, started twice.
    for _ in 0..2 {
        let store = Store::connect(&wfs_options(&url)).await.unwrap();
        store.migrate().await.unwrap();
        store.close().await.unwrap();
    }

    // Assert: every row moved, nothing of wfs's left in public but the host's row.
    assert_eq!(row_counts(&host, "wfs").await, rows_before);
    assert_eq!(tables_in(&host, "public").await, ["seaql_migrations"]);
    assert_eq!(
        strings(&host, "SELECT version FROM seaql_migrations").await,
        ["m20260101_000001_create_host_tables"]
    );
    assert_wfs_in_its_schema(&host).await;
    let app = TestApp::on_store(Store::connect(&wfs_options(&url)).await.unwrap());
    assert_eq!(readings(&app, &key).await, before);
    // public is the host's again: its own users, say.
    host.execute_unprepared("CREATE TABLE users (id bigserial PRIMARY KEY, email text NOT NULL)")
        .await
        .unwrap();
    assert_eq!(readings(&app, &key).await, before);
}

#[tokio::test]
async fn a_database_of_the_previous_release_without_a_schema_keeps_its_tables_and_moves_its_bookkeeping()
 {
    // Arrange
    let db = TestDatabase::fresh("old").await;
    let url = db.url().to_owned();
    let (key, before) = previous_release(&url).await;

    // Act
    let options = StoreOptions::new(url.as_str())
        .max_connections(4)
        .acquire_timeout(TEST_ACQUIRE_TIMEOUT);
    for _ in 0..2 {
        let store = Store::connect(&options).await.unwrap();
        store.migrate().await.unwrap();
        store.close().await.unwrap();
    }

    // Assert
    let app = TestApp::on_store(Store::connect(&options).await.unwrap());
    assert_eq!(readings(&app, &key).await, before, "{}", backend_name());
    let conn = app.wfs.store().conn().inner();
    assert_eq!(
        strings(conn, "SELECT version FROM seaql_migrations").await,
        ["m20260101_000001_create_host_tables"]
    );
    assert_eq!(
        count(conn, "SELECT count(*) FROM wfs_migrations").await,
        wfs_core::persistence::migration::Migrator::migrations().len() as i64
    );
    if conn.get_database_backend() == DatabaseBackend::Postgres {
        assert!(
            tables_in(conn, "public")
                .await
                .contains(&"shifts".to_owned())
        );
    }
}

/// PostgreSQL only (SQLite's single writer admits one of them at a time). A host's
/// transaction and a request that take the same rows in opposite orders deadlock, and
/// PostgreSQL ends one of them: a request it ends answers 503 with `Retry-After` (its
/// retry, with the same Idempotency-Key, then succeeds), a host call it ends fails with
/// `Error::Unavailable`. Never a 500, and nothing of the ended one is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn a_deadlock_between_a_host_transaction_and_a_request_answers_retry_never_500() {
    use wfs_core::service::locations::LocationPatch;
    use wfs_core::{LocationId, MembershipId};
    // Arrange: a location with a member (renaming it bumps the member's version, which
    // takes the company's version counter), and a second member.
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let company: CompanyId = acme.id.parse().unwrap();
    let north = app.seed_location(&acme, "North").await;
    let (holder, _) = app.seed_member(&acme, "Ada").await;
    let (other, _) = app.seed_member(&acme, "Bea").await;
    let conn = app.wfs.store().conn();
    // A statement about wfs's own table: `conn` names wfs's schema, if any.
    conn.execute_raw(Statement::from_sql_and_values(
        DatabaseBackend::Postgres,
        "UPDATE memberships SET branch_id = $1 WHERE id = $2",
        [
            north.parse::<uuid::Uuid>().unwrap().into(),
            holder.parse::<uuid::Uuid>().unwrap().into(),
        ],
    ))
    .await
    .unwrap();

    // Act: the host takes the counter (deactivating Bea bumps her version); the request
    // renames North (its row first, then the counter: it waits for the host); then the
    // host renames North too (it waits for the request).
    let host = app.wfs.begin().await.unwrap();
    app.wfs
        .deactivate_staff(&host, company, other.parse::<MembershipId>().unwrap())
        .await
        .unwrap();
    let idem = unique_idem();
    let rename = |name: &str| {
        Req::new(Method::PATCH, &format!("/external/v1/locations/{north}"))
            .key(&key)
            .idem(&idem)
            .json(&json!({ "name": name }))
    };
    let host_side = async {
        let mut waiting = 0;
        for _ in 0..200 {
            waiting = count(
                conn,
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
            .await;
            if waiting > 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert_eq!(waiting, 1, "the request waits for the host's lock");
        let renamed = app
            .wfs
            .update_location(
                &host,
                company,
                north.parse::<LocationId>().unwrap(),
                LocationPatch {
                    name: Some("Host's name".into()),
                    ..Default::default()
                },
            )
            .await;
        (renamed, host)
    };
    let (answer, (renamed, host)) = tokio::join!(app.send(rename("Request's name")), host_side);

    // Assert: exactly one was ended, and it was told to retry.
    match (answer.status.as_u16(), renamed) {
        (503, Ok(_)) => {
            answer.assert_error(503, "Service temporarily unavailable");
            assert_eq!(answer.header("retry-after"), Some("1"));
            host.commit().await.unwrap();
            let retried = app.send(rename("Request's name")).await;
            retried.assert_status(200);
            assert_eq!(retried.body["name"], "Request's name");
        }
        (200, Err(Error::Unavailable(_))) => {
            assert_eq!(answer.body["name"], "Request's name");
            drop(host);
        }
        (status, renamed) => panic!(
            "one side ends with a retryable error, the other succeeds: {status} {} / {renamed:?}",
            answer.body
        ),
    }
    let listed = app.get(&key, "/external/v1/locations").await;
    assert_eq!(listed.body[0]["name"], "Request's name");
}

/// On SQLite, whatever the run's backend. A host transaction begun `DEFERRED` (not
/// `IMMEDIATE`, as joined ones should be) that read before a wfs write committed cannot
/// write any more (`SQLITE_BUSY_SNAPSHOT`): the wfs call it makes fails with
/// `Error::Unavailable`, which a host retries (a request would answer 503 with
/// `Retry-After`), not with an internal error; and nothing of it is written.
#[tokio::test]
async fn on_sqlite_a_deferred_host_transaction_overtaken_by_a_wfs_write_gets_a_retryable_error() {
    // Arrange
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("wfs.db").display());
    let store = Store::connect(&StoreOptions::new(url)).await.unwrap();
    store.migrate().await.unwrap();
    let app = TestApp::on_store(store);
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let company: CompanyId = acme.id.parse().unwrap();
    let pool = app.wfs.store().conn().inner().clone();

    // Act: the host's transaction reads (its snapshot), a request's write commits, then
    // the host writes through wfs.
    let tx = app.wfs.join(pool.begin().await.unwrap());
    assert_eq!(count(&tx, "SELECT count(*) FROM job_roles").await, 0);
    app.create_role(&key, "Committed").await;
    let late = app
        .wfs
        .create_job_role(&tx, company, new_role("Late"))
        .await;

    // Assert
    assert!(matches!(late, Err(Error::Unavailable(_))), "{late:?}");
    tx.rollback().await.unwrap();
    assert_eq!(titles(&app.get(&key, ROLES).await.body), ["Committed"]);
}

/// On the schema leg (`WFS_TEST_DATABASE_SCHEMA`) the store's own pool names wfs's
/// schema in its search_path, so a statement on it runs as written: an alias or a
/// column spelled like one of wfs's tables (`locations`, `shifts`) stays what it is.
/// (A rewrite of the statement's text would have made them `"wfs"."locations"`.)
#[tokio::test]
async fn a_statement_on_the_stores_pool_whose_aliases_are_spelled_like_wfs_tables_runs_as_written()
{
    // Arrange
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    app.create_role(&key, "Nurse").await;

    // Act + Assert
    assert_aliases_spelled_like_tables_run_as_written(app.wfs.store().conn()).await;
}

/// On `conn`, which holds one job role, "Nurse": a statement whose aliases are
/// spelled like wfs's tables (`locations`, `shifts`) reads what it says.
async fn assert_aliases_spelled_like_tables_run_as_written(conn: &impl ConnectionTrait) {
    let row = conn
        .query_one_raw(Statement::from_string(
            conn.get_database_backend(),
            "SELECT count(*) AS locations, min(shifts.title) AS shifts FROM job_roles shifts",
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.try_get::<i64>("", "locations").unwrap(), 1);
    assert_eq!(row.try_get::<String>("", "shifts").unwrap(), "Nurse");
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with WFS_TEST_DATABASE_URL and --include-ignored"]
async fn on_the_hosts_pool_and_in_its_joined_transaction_wfs_statements_run_as_written_and_the_host_keeps_its_search_path()
 {
    // Arrange: the host's pool and tables (`companies` and `users` among them), and
    // wfs on that pool in its own schema, with one company and one role.
    let (url, _db) = fresh_postgres().await;
    let mut opts = wfs_core::sea_orm::ConnectOptions::new(url.clone());
    opts.max_connections(3).sqlx_logging(false);
    let host = Database::connect(opts).await.unwrap();
    HostMigrator::up(&host, None).await.unwrap();
    let store = Store::from_connection(host.clone(), &StoreOptions::default().schema("wfs"))
        .await
        .unwrap();
    store.migrate().await.unwrap();
    let app = TestApp::on_store(store);
    let company = app.company("Acme").await;
    let key = app.key(&company).await;
    app.create_role(&key, "Nurse").await;
    let conn = app.wfs.store().conn();

    // Act + Assert: on wfs's side of the host's pool, a statement whose alias and
    // columns are spelled like wfs's tables runs as written.
    assert_aliases_spelled_like_tables_run_as_written(conn).await;
    assert_eq!(count(conn, "SELECT count(*) FROM companies").await, 1);
    assert_eq!(count(&host, "SELECT count(*) FROM companies").await, 0);

    // In a transaction the host began and wfs joined, the host's statements before
    // and after wfs's see the host's tables, and wfs's write lands in wfs's.
    let tx = app.wfs.join(host.begin().await.unwrap());
    assert_eq!(count(&tx, "SELECT count(*) FROM companies").await, 0);
    let id: CompanyId = company.id.parse().unwrap();
    app.wfs
        .create_job_role(&tx, id, new_role("Porter"))
        .await
        .unwrap();
    assert_eq!(count(&tx, "SELECT count(*) FROM companies").await, 0);
    assert_eq!(
        strings(&tx, "SHOW search_path").await,
        ["\"$user\", public"]
    );
    assert_eq!(
        count(tx.qualified(), "SELECT count(*) FROM job_roles").await,
        2
    );
    tx.commit().await.unwrap();
    assert_eq!(
        titles(&app.get(&key, ROLES).await.body),
        ["Nurse", "Porter"]
    );
    assert_host_untouched(&host).await;
}
