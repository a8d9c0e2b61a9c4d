//! What the workspace's tests share: a database each test owns for as long as it runs.
//!
//! On PostgreSQL every test gets a database of its own (about 8 MB once created and
//! migrated); a suite of hundreds of tests that left them behind filled a CI disk
//! before it ended. [`TestDatabase`] drops its database when the test is done with it,
//! whether the test passed or panicked.

use sea_orm::{ConnectionTrait, Database};

/// A database a test owns: a temp-file SQLite, or a fresh PostgreSQL database next to
/// the one `WFS_TEST_DATABASE_URL` names, dropped (with its connections) on drop.
#[derive(Debug)]
pub struct TestDatabase {
    url: String,
    owner: Owner,
}

#[derive(Debug)]
enum Owner {
    Sqlite { _dir: tempfile::TempDir },
    Postgres { admin_url: String, name: String },
}

impl TestDatabase {
    /// PostgreSQL when `WFS_TEST_DATABASE_URL` is set (the PostgreSQL leg of
    /// `.ci/run`), else SQLite. `tag` starts the PostgreSQL database's name
    /// (`wfs_<tag>_<random>`), so one left behind by a killed run says whose it was.
    pub async fn fresh(tag: &str) -> TestDatabase {
        match std::env::var("WFS_TEST_DATABASE_URL") {
            Ok(admin_url) => TestDatabase::postgres(&admin_url, tag).await,
            Err(_) => TestDatabase::sqlite(),
        }
    }

    /// A file `wfs.db` in a new temporary directory (WAL: several processes on one
    /// file are fine), removed with it.
    pub fn sqlite() -> TestDatabase {
        let dir = tempfile::tempdir().expect("a temporary directory");
        TestDatabase {
            url: format!("sqlite://{}?mode=rwc", dir.path().join("wfs.db").display()),
            owner: Owner::Sqlite { _dir: dir },
        }
    }

    /// A new, empty database in the cluster of `admin_url` (a URL with a database
    /// path, whose user may create databases).
    pub async fn postgres(admin_url: &str, tag: &str) -> TestDatabase {
        let name = format!("wfs_{tag}_{}", uuid::Uuid::new_v4().simple());
        let admin = Database::connect(admin_url)
            .await
            .expect("connect to the test cluster's admin URL");
        admin
            .execute_unprepared(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create a test database");
        admin.close().await.ok();
        let (base, _) = admin_url
            .rsplit_once('/')
            .expect("a database URL with a path");
        TestDatabase {
            url: format!("{base}/{name}"),
            owner: Owner::Postgres {
                admin_url: admin_url.to_owned(),
                name,
            },
        }
    }

    /// The URL a store or a server connects with.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for TestDatabase {
    /// Drops the PostgreSQL database, ending the sessions still on it (a pool the test
    /// left open, a server process it did not stop). Drop runs on a runtime's worker,
    /// which must not block on that runtime, so the statement runs on a thread of its
    /// own; a failure (the cluster is down) is reported, never a panic while unwinding.
    fn drop(&mut self) {
        let Owner::Postgres { admin_url, name } = &self.owner else {
            return;
        };
        let (admin_url, name) = (admin_url.clone(), name.clone());
        let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(async {
                let admin = Database::connect(&admin_url)
                    .await
                    .map_err(|e| e.to_string())?;
                let result = admin.execute_unprepared(&sql).await;
                admin.close().await.ok();
                result.map(drop).map_err(|e| e.to_string())
            })
        })
        .join();
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(why)) => eprintln!("test database {name} left behind: {why}"),
            Err(_) => eprintln!("test database {name} left behind: the dropping thread panicked"),
        }
    }
}
