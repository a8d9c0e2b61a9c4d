//! `cfg(wfs_postgres)` when `WFS_TEST_DATABASE_URL` is set at build time: the tests,
//! which need PostgreSQL, are then run; on a SQLite-only run they are reported as
//! ignored, never as passed.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(wfs_postgres)");
    println!("cargo::rerun-if-env-changed=WFS_TEST_DATABASE_URL");
    if std::env::var_os("WFS_TEST_DATABASE_URL").is_some() {
        println!("cargo::rustc-cfg=wfs_postgres");
    }
}
