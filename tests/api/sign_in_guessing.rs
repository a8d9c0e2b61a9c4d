//! Guessing one admin's password (docs/security.md, "Sign-in"): the budget counts the
//! user, not the name typed; an IPv6 client counts by its /64; past the budget the
//! guesses are checked one at a time whatever their addresses; and past 100 wrong
//! passwords in a row only an address the guesses did not come from may try.

use crate::helpers::*;
use http::Method;
use serde_json::json;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use wfs_core::persistence::entity::{outbox, user};
use wfs_core::sea_orm::sea_query::Expr;
use wfs_core::sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use wfs_core::service::auth::KIND_SIGN_IN_LOCKED_EMAIL;
use wfs_core::service::throttle::{CONSECUTIVE_FAILURES_MAX, LOGIN_FAILURES, TURNS_WAITING};

const SIGN_IN: &str = "/external/v1/auth/signin";
const THROTTLED: &str = "Too many sign-in attempts";
const WRONG: &str = "Invalid email or password";

fn from(ip: &str) -> Option<SocketAddr> {
    Some(SocketAddr::new(ip.parse().unwrap(), 50_000))
}

fn sign_in_req(login: &str, password: &str) -> Req {
    Req::new(Method::POST, SIGN_IN).json(&json!({"email": login, "password": password}))
}

async fn admin(app: &TestApp, acme: &Company) -> user::Model {
    user::Entity::find()
        .filter(user::Column::Email.eq(acme.email.as_str()))
        .one(app.wfs.store().conn())
        .await
        .unwrap()
        .unwrap()
}

async fn set_failures(app: &TestApp, acme: &Company, failures: i32) {
    user::Entity::update_many()
        .col_expr(user::Column::SignInFailures, Expr::value(failures))
        .filter(user::Column::Email.eq(acme.email.as_str()))
        .exec(app.wfs.store().conn())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_admins_email_and_user_name_share_one_budget() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let name = format!("admin-{}", uuid::Uuid::new_v4().simple());
    user::Entity::update_many()
        .col_expr(user::Column::UserName, Expr::value(name.clone()))
        .filter(user::Column::Email.eq(acme.email.as_str()))
        .exec(app.wfs.store().conn())
        .await
        .unwrap();
    let here = from("203.0.113.7");
    for n in 0..LOGIN_FAILURES {
        // Half by email, half by user name (in any case): one user, one budget.
        let login = if n % 2 == 0 {
            acme.email.clone()
        } else {
            name.to_uppercase()
        };
        app.send(sign_in_req(&login, "wrong-password").peer(here))
            .await
            .assert_error(401, WRONG);
    }
    for login in [&acme.email, &name] {
        app.send(sign_in_req(login, PASSWORD).peer(here))
            .await
            .assert_error(429, THROTTLED);
    }
}

#[tokio::test]
async fn an_ipv6_client_counts_by_its_64_at_the_sign_in_throttle() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    // Ten addresses of one /64, as a host rotating privacy addresses has.
    for n in 1..=LOGIN_FAILURES {
        app.send(
            sign_in_req(&acme.email, "wrong-password").peer(from(&format!("2001:db8:7:1::{n:x}"))),
        )
        .await
        .assert_error(401, WRONG);
    }
    app.send(sign_in_req(&acme.email, PASSWORD).peer(from("2001:db8:7:1:ffff::1")))
        .await
        .assert_error(429, THROTTLED);
    // Another /64 is another origin.
    app.send(sign_in_req(&acme.email, PASSWORD).peer(from("2001:db8:7:2::1")))
        .await
        .assert_status(200);

    // And thirty attempts a minute from one /64, at made-up logins, shut that /64.
    let app = TestApp::spawn().await;
    for n in 1..=30u32 {
        let peer = from(&format!("2001:db8:9:9::{n:x}"));
        app.send(sign_in_req(&format!("nobody{n}@nowhere.test"), PASSWORD).peer(peer))
            .await
            .assert_error(401, WRONG);
    }
    app.send(sign_in_req("nobody31@nowhere.test", PASSWORD).peer(from("2001:db8:9:9::99")))
        .await
        .assert_error(429, THROTTLED);
}

/// The probe: 80 guesses from 40 addresses at once were all checked within 6 s. Past
/// the login's budget they are checked one at a time, each after its wait, a few
/// waiting at most; the rest are refused at once.
#[tokio::test]
async fn guesses_sent_together_from_many_addresses_are_checked_one_at_a_time() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    // The budget: ten failures, from ten addresses (none of them shut).
    for n in 1..=LOGIN_FAILURES {
        app.send(sign_in_req(&acme.email, "wrong-password").peer(from(&format!("192.0.2.{n}"))))
            .await
            .assert_error(401, WRONG);
    }
    let started = Instant::now();
    let guesses = (0..20).map(|n| {
        let app = app.clone();
        let email = acme.email.clone();
        async move {
            let res = app
                .send(sign_in_req(&email, "wrong-password").peer(from(&format!("198.51.100.{n}"))))
                .await;
            (res, started.elapsed())
        }
    });
    let answers = futures_util::future::join_all(guesses).await;

    let checked: Vec<Duration> = answers
        .iter()
        .filter(|(res, _)| res.status == 401)
        .map(|(_, at)| *at)
        .collect();
    let refused = answers.iter().filter(|(res, _)| res.status == 429).count();
    let statuses: Vec<u16> = answers.iter().map(|(res, _)| res.status.as_u16()).collect();
    assert_eq!(
        checked.len() + refused,
        20,
        "only 401s and 429s: {statuses:?}"
    );
    assert!(
        !checked.is_empty() && checked.len() <= TURNS_WAITING + 1,
        "one checked and {TURNS_WAITING} waiting at most: {} checked",
        checked.len()
    );
    for (res, _) in answers.iter().filter(|(res, _)| res.status == 429) {
        res.assert_error(429, THROTTLED);
        assert!(res.header("retry-after").is_some());
    }
    // Each waits its slow-down (250 ms at eleven failures) in its turn: in a row,
    // not side by side.
    let last = checked.iter().max().unwrap();
    let in_a_row = Duration::from_millis(250) * u32::try_from(checked.len()).unwrap();
    assert!(
        *last >= in_a_row,
        "{} guesses checked by {last:?}: in a row they take at least {in_a_row:?}",
        checked.len()
    );
}

#[tokio::test]
async fn past_the_ceiling_of_wrong_passwords_only_an_address_they_did_not_come_from_signs_in() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let attacker = from("203.0.113.66");
    // 99 wrong passwords in a row, over days and addresses; one more from here.
    set_failures(&app, &acme, CONSECUTIVE_FAILURES_MAX - 1).await;
    app.send(sign_in_req(&acme.email, "wrong-password").peer(attacker))
        .await
        .assert_error(401, WRONG);
    assert_eq!(
        admin(&app, &acme).await.sign_in_failures,
        CONSECUTIVE_FAILURES_MAX
    );
    // The admin is told, once.
    let notices = outbox::Entity::find()
        .filter(outbox::Column::Kind.eq(KIND_SIGN_IN_LOCKED_EMAIL))
        .all(app.wfs.store().conn())
        .await
        .unwrap();
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].recipient, acme.email);

    // From where the guesses came, even the right password is refused.
    let res = app
        .send(sign_in_req(&acme.email, PASSWORD).peer(attacker))
        .await;
    res.assert_error(429, THROTTLED);
    assert!(res.header("retry-after").is_some());
    // From elsewhere the admin signs in, and the count starts again.
    app.send(sign_in_req(&acme.email, PASSWORD).peer(from("198.51.100.1")))
        .await
        .assert_status(200);
    assert_eq!(admin(&app, &acme).await.sign_in_failures, 0);
    app.send(sign_in_req(&acme.email, PASSWORD).peer(attacker))
        .await
        .assert_status(200);

    // restore-admin is the other way back.
    set_failures(&app, &acme, CONSECUTIVE_FAILURES_MAX + 5).await;
    app.restore_admin(&acme, &acme.email).await;
    assert_eq!(admin(&app, &acme).await.sign_in_failures, 0);
}

#[tokio::test]
async fn a_sign_in_resets_the_count_of_wrong_passwords() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let here = from("203.0.113.8");
    for _ in 0..3 {
        app.send(sign_in_req(&acme.email, "wrong-password").peer(here))
            .await
            .assert_error(401, WRONG);
    }
    assert_eq!(admin(&app, &acme).await.sign_in_failures, 3);
    app.send(sign_in_req(&acme.email, PASSWORD).peer(here))
        .await
        .assert_status(200);
    assert_eq!(admin(&app, &acme).await.sign_in_failures, 0);
}
