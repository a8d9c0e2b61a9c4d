//! The sign-in throttle shared through Redis (`Config::redis_url`, issue 23 point 4):
//! two servers (two services over one database, each with its own memory) and a real
//! `redis-server` (see `redis_server`), started per test on a free loopback port and
//! stopped by its PID.
//!
//! Attempts spread over both servers meet the limits of one: 10 failures per login and
//! address, 30 attempts per address a minute, the slow-down of a login guessed from
//! many addresses. With Redis gone, every sign-in is still answered (never a 500), by
//! each server's own throttle, and the fallback is counted.

use crate::helpers::*;
use crate::redis_server::Redis;
use http::Method;
use metrics_util::MetricKind;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use serde_json::json;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use wfs_tower::Config;

const SIGN_IN: &str = "/external/v1/auth/signin";
const THROTTLED: &str = "Too many sign-in attempts";
const INVALID: &str = "Invalid email or password";
const STORE_ERRORS: &str = "wfs_sign_in_throttle_store_errors_total";

fn from(ip: &str) -> Option<SocketAddr> {
    Some(SocketAddr::new(ip.parse().unwrap(), 50_000))
}

fn sign_in(email: &str, password: &str, peer: Option<SocketAddr>) -> Req {
    Req::new(Method::POST, SIGN_IN)
        .json(&json!({"email": email, "password": password}))
        .peer(peer)
}

/// The whole seconds of `Retry-After`.
fn retry_after(res: &TestResponse) -> u64 {
    res.header("retry-after")
        .unwrap_or_else(|| panic!("no Retry-After: {res:?}"))
        .parse()
        .unwrap()
}

/// Two servers on one database sharing `redis`. A generous Redis timeout: on a loaded
/// machine a call that waited the default 100 ms would be decided in the process, and
/// the test would not show the shared counts.
async fn two_servers(redis: &Redis) -> (TestApp, TestApp) {
    let config = Config::default()
        .redis_url(redis.url())
        .redis_timeout(Duration::from_secs(5));
    let a = TestApp::spawn_with(config.clone()).await;
    let b = a.second_server(config);
    (a, b)
}

/// `servers[i % 2]` for the `i`-th attempt: A, B, A, ...
fn alternate<'a>(servers: &'a [&'a TestApp; 2], i: usize) -> &'a TestApp {
    servers[i % 2]
}

#[tokio::test]
#[cfg_attr(
    not(wfs_test_redis),
    ignore = "needs redis-server on PATH or at $WFS_TEST_REDIS_SERVER: apt-get install redis-server (Debian/Ubuntu), brew install redis (macOS)"
)]
async fn failures_spread_over_two_servers_meet_one_limit_per_login_and_address() {
    // Arrange
    let redis = Redis::start();
    let (a, b) = two_servers(&redis).await;
    let servers = [&a, &b];
    let acme = a.company("Acme").await;
    let attacker = from("203.0.113.40");

    // Act: 10 wrong passwords for one login from one address, alternating servers.
    for i in 0..10 {
        alternate(&servers, i)
            .send(sign_in(&acme.email, "wrong-password", attacker))
            .await
            .assert_error(401, INVALID);
    }

    // Assert: the 11th is refused on either server, even with the right password.
    for server in servers {
        let res = server.send(sign_in(&acme.email, PASSWORD, attacker)).await;
        res.assert_error(429, THROTTLED);
        let wait = retry_after(&res);
        assert!((1..=15 * 60).contains(&wait), "Retry-After {wait}");
    }
    // The admin, from elsewhere, signs in on either server.
    let admin = from("198.51.100.20");
    b.send(sign_in(&acme.email, PASSWORD, admin))
        .await
        .assert_status(200);

    // Two more failures from two more addresses, one on each server: 12 for the login
    // from all addresses, so an attempt at it waits 2 x 250 ms first, and succeeds.
    for (i, guesser) in ["192.0.2.1", "192.0.2.2"].into_iter().enumerate() {
        alternate(&servers, i)
            .send(sign_in(&acme.email, "wrong-password", from(guesser)))
            .await
            .assert_error(401, INVALID);
    }
    let started = Instant::now();
    a.send(sign_in(&acme.email, PASSWORD, admin))
        .await
        .assert_status(200);
    assert!(
        started.elapsed() >= Duration::from_millis(450),
        "12 failures through both servers: slowed by half a second, took {:?}",
        started.elapsed()
    );

    // Redis holds the counts under hashed names, each expiring within its window.
    let keys = redis.keys("*");
    assert!(
        keys.iter().any(|k| k.starts_with("wfs:si:fail:")),
        "{keys:?}"
    );
    assert!(
        keys.iter().any(|k| k.starts_with("wfs:si:login:")),
        "{keys:?}"
    );
    assert!(
        keys.iter().any(|k| k.starts_with("wfs:si:addr:")),
        "{keys:?}"
    );
    for key in &keys {
        assert!(key.starts_with("wfs:si:"), "{key}");
        for clear in ["acme", "admin", "203.0.113", "198.51.100", "192.0.2"] {
            assert!(!key.contains(clear), "{key} names {clear}");
        }
        let ttl = redis.pttl(key);
        assert!((1..=15 * 60 * 1000).contains(&ttl), "{key}: PTTL {ttl}");
    }
}

#[tokio::test]
#[cfg_attr(
    not(wfs_test_redis),
    ignore = "needs redis-server on PATH or at $WFS_TEST_REDIS_SERVER: apt-get install redis-server (Debian/Ubuntu), brew install redis (macOS)"
)]
async fn thirty_attempts_a_minute_from_one_address_count_over_both_servers() {
    // Arrange
    let redis = Redis::start();
    let (a, b) = two_servers(&redis).await;
    let servers = [&a, &b];
    let busy = from("192.0.2.10");

    // Act: 30 attempts at made-up logins from one address, alternating servers.
    for n in 0..30 {
        let res = alternate(&servers, n)
            .send(sign_in(&format!("nobody{n}@nowhere.test"), PASSWORD, busy))
            .await;
        assert_eq!(res.status.as_u16(), 401, "attempt {n}: {:?}", res.body);
    }

    // Assert: the 31st is refused on either server; another address is not.
    for server in servers {
        let res = server
            .send(sign_in("nobody31@nowhere.test", PASSWORD, busy))
            .await;
        res.assert_error(429, THROTTLED);
        let wait = retry_after(&res);
        assert!((1..=60).contains(&wait), "Retry-After {wait}");
    }
    b.send(sign_in(
        "nobody31@nowhere.test",
        PASSWORD,
        from("192.0.2.11"),
    ))
    .await
    .assert_error(401, INVALID);
}

/// The value of the sign-in throttle's fallback counter (0 before it is registered).
fn store_errors(snapshotter: &Snapshotter) -> u64 {
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .find_map(|(key, _, _, value)| match (key.kind(), value) {
            (MetricKind::Counter, DebugValue::Counter(n)) if key.key().name() == STORE_ERRORS => {
                Some(n)
            }
            _ => None,
        })
        .unwrap_or(0)
}

#[tokio::test]
#[cfg_attr(
    not(wfs_test_redis),
    ignore = "needs redis-server on PATH or at $WFS_TEST_REDIS_SERVER: apt-get install redis-server (Debian/Ubuntu), brew install redis (macOS)"
)]
async fn with_redis_gone_each_server_throttles_alone_and_sign_in_never_fails() {
    // Arrange: the counter is read from a recorder of this test's own (the runtime
    // runs every task of the test on this thread).
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let _guard = metrics::set_default_local_recorder(&recorder);
    let mut redis = Redis::start();
    let (a, b) = two_servers(&redis).await;
    let acme = a.company("Acme").await;
    let here = from("198.51.100.30");
    b.send(sign_in(&acme.email, "wrong-password", here))
        .await
        .assert_error(401, INVALID);
    assert_eq!(store_errors(&snapshotter), 0, "Redis answers");

    // Act
    redis.kill();

    // Assert: every sign-in is answered as without Redis, on both servers.
    a.send(sign_in(&acme.email, PASSWORD, here))
        .await
        .assert_status(200);
    b.send(sign_in(&acme.email, "wrong-password", here))
        .await
        .assert_error(401, INVALID);
    b.send(sign_in(&acme.email, PASSWORD, here))
        .await
        .assert_status(200);
    assert!(store_errors(&snapshotter) > 0, "the fallback is counted");

    // Each server now throttles alone, with the same limits: 10 failures on A shut
    // the login out at that address on A, while B counted none of them.
    let guesser = from("203.0.113.77");
    for attempt in 1..=10 {
        let res = a
            .send(sign_in(&acme.email, "wrong-password", guesser))
            .await;
        assert_eq!(
            res.status.as_u16(),
            401,
            "attempt {attempt}: {:?}",
            res.body
        );
    }
    let res = a.send(sign_in(&acme.email, PASSWORD, guesser)).await;
    res.assert_error(429, THROTTLED);
    assert!(retry_after(&res) <= 15 * 60);
    b.send(sign_in(&acme.email, PASSWORD, guesser))
        .await
        .assert_status(200);
}

/// Issue 33 through Redis: a login counts under its user and an IPv6 client by its /64
/// on both servers alike; and past the ceiling of wrong passwords, only an address the
/// guesses did not come from signs in, whichever server counted them.
#[tokio::test]
#[cfg_attr(
    not(wfs_test_redis),
    ignore = "needs redis-server on PATH or at $WFS_TEST_REDIS_SERVER: apt-get install redis-server (Debian/Ubuntu), brew install redis (macOS)"
)]
async fn a_users_budget_an_ipv6_64_and_the_ceiling_are_shared_by_both_servers() {
    use wfs_core::persistence::entity::user;
    use wfs_core::sea_orm::sea_query::Expr;
    use wfs_core::sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    use wfs_core::service::throttle::CONSECUTIVE_FAILURES_MAX;

    let redis = Redis::start();
    let (a, b) = two_servers(&redis).await;
    let servers = [&a, &b];
    let acme = a.company("Acme").await;
    let name = format!("admin-{}", uuid::Uuid::new_v4().simple());
    user::Entity::update_many()
        .col_expr(user::Column::UserName, Expr::value(name.clone()))
        .filter(user::Column::Email.eq(acme.email.as_str()))
        .exec(a.wfs.store().conn())
        .await
        .unwrap();

    // Ten failures from ten addresses of one /64, by email and by userName, alternating
    // servers: one user, one origin.
    for i in 0..10 {
        let login = if i % 2 == 0 {
            acme.email.clone()
        } else {
            name.clone()
        };
        alternate(&servers, i)
            .send(sign_in(
                &login,
                "wrong-password",
                from(&format!("2001:db8:9::{:x}", i + 1)),
            ))
            .await
            .assert_error(401, INVALID);
    }
    for server in servers {
        server
            .send(sign_in(&acme.email, PASSWORD, from("2001:db8:9::ffff")))
            .await
            .assert_error(429, THROTTLED);
    }

    // The ceiling: one more wrong password on A reaches it; B refuses that address
    // even the right password, and lets another one in.
    user::Entity::update_many()
        .col_expr(
            user::Column::SignInFailures,
            Expr::value(CONSECUTIVE_FAILURES_MAX - 1),
        )
        .filter(user::Column::Email.eq(acme.email.as_str()))
        .exec(a.wfs.store().conn())
        .await
        .unwrap();
    let attacker = from("203.0.113.77");
    a.send(sign_in(&acme.email, "wrong-password", attacker))
        .await
        .assert_error(401, INVALID);
    b.send(sign_in(&acme.email, PASSWORD, attacker))
        .await
        .assert_error(429, THROTTLED);
    b.send(sign_in(&acme.email, PASSWORD, from("198.51.100.30")))
        .await
        .assert_status(200);
}
