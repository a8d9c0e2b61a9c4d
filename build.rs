//! `cfg(wfs_pg)` when `WFS_TEST_DATABASE_URL` names a PostgreSQL cluster: the
//! PostgreSQL-only tests run then, and are reported as ignored otherwise.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(wfs_pg)");
    println!("cargo::rerun-if-env-changed=WFS_TEST_DATABASE_URL");
    if std::env::var_os("WFS_TEST_DATABASE_URL").is_some() {
        println!("cargo::rustc-cfg=wfs_pg");
    }
}
