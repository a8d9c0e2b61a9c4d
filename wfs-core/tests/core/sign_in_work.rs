//! Sign-in does the same password work for an unknown login, a login without a
//! password and a wrong password, so its timing tells nothing about which logins
//! exist (decisions.md, "Hostile input, faults and limits"). The verification counter
//! is per process: no other test of this binary may sign in (see `main.rs`).

use chrono::Utc;
use wfs_core::persistence::entity::user;
use wfs_core::sea_orm::{ActiveModelTrait, Set};
use wfs_core::service::accounts::NewCompanyAdmin;
use wfs_core::{AuthFailure, Error, Store, StoreOptions, Wfs};

#[tokio::test]
async fn every_failed_sign_in_costs_one_password_verification() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("wfs.db").display());
    let mut options = StoreOptions::new(url);
    // A fresh file waits on fsync; a slow CI disk must not fail the test.
    options.acquire_timeout = std::time::Duration::from_secs(30);
    let store = Store::connect(&options).await.unwrap();
    store.migrate().await.unwrap();
    let wfs = Wfs::new(store, &[7; 32]).unwrap();
    let tx = wfs.begin().await.unwrap();
    wfs.create_company_with_admin(
        &tx,
        NewCompanyAdmin {
            company_name: "Acme".into(),
            email: "admin@acme.test".into(),
            password: "correct-horse-battery".into(),
            first_name: "Ada".into(),
            last_name: "Admin".into(),
        },
    )
    .await
    .unwrap();
    // A user who never set a password (as bulk-created staff are).
    user::ActiveModel {
        id: Set(uuid::Uuid::now_v7()),
        email: Set("nopass@acme.test".into()),
        user_name: Set(None),
        first_name: Set("No".into()),
        last_name: Set("Password".into()),
        phone: Set(None),
        gender: Set(None),
        country_id: Set(None),
        password_hash: Set(None),
        must_change_password: Set(true),
        sign_in_failures: Set(0),
        created_at: Set(Utc::now()),
        updated_at: Set(Utc::now()),
    }
    .insert(&tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();

    for (login, password) in [
        ("nobody@acme.test", "whatever-password"),
        ("nopass@acme.test", "whatever-password"),
        ("admin@acme.test", "wrong-password"),
    ] {
        let before = wfs.password_work().verifications();
        let err = wfs.sign_in(login, password, None).await.unwrap_err();
        assert!(
            matches!(err, Error::Unauthenticated(AuthFailure::InvalidLogin)),
            "{login}: {err:?}"
        );
        assert_eq!(
            wfs.password_work().verifications() - before,
            1,
            "{login}: one argon2 verification, as for any other login"
        );
    }
    let before = wfs.password_work().verifications();
    wfs.sign_in("admin@acme.test", "correct-horse-battery", None)
        .await
        .unwrap();
    assert_eq!(wfs.password_work().verifications() - before, 1);
}
