//! A fair share under attack, in-process (issue 30, points 3 and 4): held reads are
//! shared per company and per address, not only per key (keys are free to make), and
//! password work is bounded per facade, so neither one company's held reads nor a
//! flood of sign-ins takes the server from other tenants. Refusals are 429 or 503
//! with `Retry-After`, and are not logged at ERROR.

use crate::feed_follow::until_held;
use crate::helpers::*;
use crate::observability::Captured;
use http::Method;
use serde_json::json;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use wfs_core::service::password_work::PasswordWork;
use wfs_tower::Config;

const FEED: &str = "/external/v1/workforce/resources";
const HOLD: &str = "/external/v1/workforce/resources?start=now&wait=5";

fn from(ip: &str) -> Option<SocketAddr> {
    Some(SocketAddr::new(ip.parse().unwrap(), 50_000))
}

#[tokio::test]
async fn one_company_cannot_take_every_held_read_and_the_refusals_are_not_errors() {
    // Arrange: two held reads per key, three per company, six in all; one company
    // with three keys asks for six (two per key), as 21 keys took all 2,000.
    let app = TestApp::spawn_with(
        Config::default()
            .max_held_per_key(2)
            .max_held_per_company(3)
            .max_held(6),
    )
    .await;
    let (greedy, other) = (app.company("Greedy").await, app.company("Other").await);
    let mut keys = Vec::new();
    for _ in 0..3 {
        keys.push(app.key(&greedy).await);
    }
    let other_key = app.key(&other).await;
    let log = Captured::default();
    let _guard = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_writer(log.clone())
            .with_ansi(false)
            .finish(),
    );
    let mut held = Vec::new();
    for key in keys.iter().flat_map(|k| [k, k]).take(3) {
        let (app, key) = (app.clone(), key.clone());
        held.push(tokio::spawn(async move { app.get(&key, HOLD).await }));
    }
    until_held(&app, 3).await;

    // Act: the company's other attempts, then another company's wait.
    let mut refused = Vec::new();
    for key in keys.iter().skip(1).flat_map(|k| [k, k]).skip(1) {
        refused.push(app.get(key, HOLD).await);
    }
    let others = {
        let (app, key) = (app.clone(), other_key.clone());
        tokio::spawn(async move { app.get(&key, HOLD).await })
    };
    until_held(&app, 4).await;

    // Assert: the company's extra reads are 429 naming the company, with Retry-After;
    // the other company's read is held (not refused), and answered at the release.
    assert_eq!(refused.len(), 3);
    for answer in &refused {
        answer.assert_status(429);
        assert_eq!(answer.header("retry-after"), Some("1"));
        assert!(
            answer
                .error_message()
                .contains("This company's API keys already have 3"),
            "{}",
            answer.error_message()
        );
    }
    app.svc.release_held();
    let others = tokio::time::timeout(Duration::from_secs(10), others)
        .await
        .expect("released")
        .unwrap();
    others.assert_status(200);
    for read in held {
        read.await.unwrap().assert_status(200);
    }
    let errors: Vec<String> = log
        .lines()
        .into_iter()
        .filter(|line| line.contains("ERROR"))
        .collect();
    assert_eq!(errors, Vec::<String>::new(), "refusals logged as errors");
}

#[tokio::test]
async fn held_reads_from_one_address_are_capped_whatever_the_companies() {
    // Arrange: two held reads per address.
    let app = TestApp::spawn_with(Config::default().max_held_per_address(2)).await;
    let mut keys = Vec::new();
    for name in ["A", "B", "C"] {
        let company = app.company(name).await;
        keys.push(app.key(&company).await);
    }
    let hold = |key: &Key, peer: Option<SocketAddr>| {
        let (app, key) = (app.clone(), key.clone());
        tokio::spawn(async move {
            app.send(Req::new(Method::GET, HOLD).key(&key).peer(peer))
                .await
        })
    };
    let held = [
        hold(&keys[0], from("192.0.2.9")),
        hold(&keys[1], from("192.0.2.9")),
    ];
    until_held(&app, 2).await;

    // Act
    let third = app
        .send(
            Req::new(Method::GET, HOLD)
                .key(&keys[2])
                .peer(from("192.0.2.9")),
        )
        .await;
    let elsewhere = hold(&keys[2], from("198.51.100.1"));
    until_held(&app, 3).await;

    // Assert
    third.assert_status(429);
    assert_eq!(third.header("retry-after"), Some("1"));
    assert!(
        third.error_message().contains("This address already has 2"),
        "{}",
        third.error_message()
    );
    app.svc.release_held();
    for read in held.into_iter().chain([elsewhere]) {
        read.await.unwrap().assert_status(200);
    }
}

/// The median and the 95th percentile of `samples`.
fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_flood_is_refused_past_the_bound_and_keyed_reads_go_on() {
    // Arrange: one password check at a time and two waiting; forty sign-ins at once
    // from forty addresses (under every per-address and per-login limit), as the
    // probe's 80 from 40 addresses.
    let app = TestApp::spawn_custom(Config::default(), |wfs| {
        wfs.with_password_work(PasswordWork::new(1, 2))
    })
    .await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;
    let flood: Vec<_> = (0..40)
        .map(|n| {
            let app = app.clone();
            let email = acme.email.clone();
            tokio::spawn(async move {
                app.send(
                    Req::new(Method::POST, "/external/v1/auth/signin")
                        .json(&json!({"email": email, "password": "not the password"}))
                        .peer(from(&format!("203.0.113.{}", n + 1))),
                )
                .await
            })
        })
        .collect();

    // Act: a tenant reads with its key while the flood runs.
    let mut latencies = Vec::new();
    for _ in 0..20 {
        let asked = Instant::now();
        app.get(&key, FEED).await.assert_status(200);
        latencies.push(asked.elapsed());
    }
    let mut answers = Vec::new();
    for attempt in flood {
        answers.push(attempt.await.unwrap());
    }

    // Assert: past one running and two waiting, a sign-in is refused at once with
    // 503, Retry-After and the error body; the rest were checked (401).
    let refused: Vec<&TestResponse> = answers.iter().filter(|a| a.status == 503).collect();
    let checked = answers.iter().filter(|a| a.status == 401).count();
    let (median, p95) = percentiles(latencies);
    println!(
        "sign-in flood: {} refused, {checked} checked; keyed reads meanwhile: median {median:?}, p95 {p95:?}",
        refused.len()
    );
    assert_eq!(refused.len() + checked, 40, "{answers:?}");
    assert!(refused.len() >= 20, "only {} of 40 refused", refused.len());
    for answer in refused {
        assert_eq!(answer.header("retry-after"), Some("1"));
        assert_eq!(answer.body["error"]["code"], 503);
        assert_eq!(
            answer.error_message(),
            "Too many sign-ins are being checked at once; retry shortly"
        );
    }
    // The admin signs in once the flood has passed.
    app.sign_in(&acme.email, PASSWORD).await;
}
