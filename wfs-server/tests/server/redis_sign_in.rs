//! `--redis-url`: the sign-in throttle shared by every server on one Redis, through the
//! real binary and a real `redis-server` (see `redis_server`): a login guessed through
//! two servers meets the limit of one, and Redis never holds the login or the address.

use crate::common;
use crate::redis_server::Redis;

use common::{EMAIL, PASSWORD, Server, create_admin};
use serde_json::json;

/// `serve` with Redis at `redis_url` (in `WFS_REDIS_URL`, as an operator passes a
/// secret) and a generous Redis timeout: on a loaded machine an attempt that waited the
/// default 100 ms would be decided locally, and the test would not show the shared
/// limit.
fn start(db_url: &str, redis_url: &str) -> Server {
    Server::serve(db_url)
        .args(&["--redis-timeout", "5s"])
        .env("WFS_REDIS_URL", redis_url)
        .env_remove("RUST_LOG")
        .start()
}

async fn sign_in(http: &reqwest::Client, server: &Server, password: &str) -> reqwest::Response {
    http.post(server.url("/external/v1/auth/signin"))
        .json(&json!({"email": EMAIL, "password": password}))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
#[cfg_attr(
    not(wfs_test_redis),
    ignore = "needs redis-server on PATH or at $WFS_TEST_REDIS_SERVER: apt-get install redis-server (Debian/Ubuntu), brew install redis (macOS)"
)]
async fn ten_failures_spread_over_two_servers_shut_the_login_out_on_both() {
    // Arrange: two servers on one database and one Redis.
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let (url, _cluster) = common::database(&dir, "redis_si").await;
    create_admin(&url);
    let servers = [start(&url, &redis.url()), start(&url, &redis.url())];
    let http = reqwest::Client::new();

    // Act: ten wrong passwords from one address, alternating between the servers
    // (each server alone saw five).
    for attempt in 0..10 {
        let res = sign_in(&http, &servers[attempt % 2], "wrong-password").await;
        assert_eq!(res.status(), 401, "attempt {attempt}");
    }

    // Assert: the right password is now refused on either server, with a wait.
    for server in &servers {
        let res = sign_in(&http, server, PASSWORD).await;
        assert_eq!(res.status(), 429, "{:?}", server.log());
        let wait: u64 = res.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(wait >= 1, "Retry-After: {wait}");
        let body: serde_json::Value = res.json().await.unwrap();
        assert_eq!(body["error"]["code"], 429, "the error body: {body}");
    }
    // Redis counts by keyed pseudonyms: neither the email nor the address is in it.
    let keys = redis.keys("wfs:si:*");
    assert!(!keys.is_empty(), "the counts are in Redis");
    for key in &keys {
        assert!(!key.contains("ada") && !key.contains("acme"), "{key}");
        assert!(!key.contains("127.0.0.1"), "{key}");
    }
}
