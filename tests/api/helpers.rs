//! `TestApp`: a fresh database, the migrated store, the service with a pinned clock,
//! and request helpers that read like the spec.

use bytes::Bytes;
use chrono::{DateTime, TimeZone, Utc};
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use std::net::SocketAddr;
use tower::ServiceExt;
use wfs_core::service::accounts::NewCompanyAdmin;
use wfs_core::service::webhooks::WebhookSettings;
use wfs_core::{FixedClock, Store, StoreOptions, Wfs};
pub use wfs_test_support::TestDatabase;
use wfs_tower::{Config, PeerAddr, WfsService};

pub const SECRET: &[u8] = b"test-secret-test-secret-test-secret!!";
pub const PASSWORD: &str = "correct-horse-battery";

/// How long the test store waits for a pooled connection, opening one included.
///
/// The production default (`wfs_core::DEFAULT_ACQUIRE_TIMEOUT`, 1.5 s)
/// fails fast on purpose: a database outage answers 503 in under 2 s. But a test
/// opens a brand-new SQLite file, and creating it and switching it to WAL mode
/// waits on fsync. On a CI machine that is flushing the gigabytes the build just
/// linked, fsync can stall for seconds. With 1.5 s, every test that started during
/// such a stall failed in `Store::connect` with `PoolTimedOut`: a run of consecutive
/// tests, in name order, while the long tests that already had their connections
/// passed. Reproduced by throttling the suite's writes to 10 IOPS for 20 s (blkio
/// cgroup): ten consecutive hardening tests failed, 1.5 s each. No test asserts on
/// this bound; the outage test (routing.rs) closes the pool, which fails at once.
/// 30 s matches the service's own request timeout.
pub const TEST_ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The instant every test starts at.
pub fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 18, 9, 30, 0).unwrap()
}

#[derive(Clone)]
pub struct TestApp {
    pub svc: WfsService,
    pub wfs: Wfs,
    pub clock: FixedClock,
    /// The database the app was spawned on, dropped with the app's last clone.
    _db: Option<std::sync::Arc<TestDatabase>>,
}

#[derive(Debug)]
pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl TestResponse {
    /// The error message of an error body, asserting its shape on the way.
    pub fn error_message(&self) -> &str {
        assert_eq!(
            self.body["error"]["code"].as_u64(),
            Some(u64::from(self.status.as_u16())),
            "error body must carry the status as code: {:?}",
            self.body
        );
        self.body["error"]["message"]
            .as_str()
            .expect("error message")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    #[track_caller]
    pub fn assert_status(&self, status: u16) -> &Self {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected answer: {:?}",
            self.body
        );
        self
    }

    #[track_caller]
    pub fn assert_error(&self, status: u16, message: &str) {
        self.assert_status(status);
        assert_eq!(self.error_message(), message);
    }
}

/// An answer whose body is kept as bytes (the API reference's HTML, scripts, styles).
#[derive(Debug)]
pub struct RawResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("a UTF-8 body")
    }
}

/// An API key pair.
#[derive(Debug, Clone)]
pub struct Key {
    pub id: String,
    pub client_id: String,
    pub secret: String,
}

/// A company with its signed-in super admin.
#[derive(Debug, Clone)]
pub struct Company {
    pub id: String,
    pub email: String,
    pub token: String,
}

/// A request under construction.
pub struct Req {
    method: Method,
    path: String,
    headers: Vec<(String, String)>,
    body: Option<Bytes>,
    peer: Option<SocketAddr>,
}

impl Req {
    pub fn new(method: Method, path: &str) -> Self {
        Self {
            method,
            path: path.into(),
            headers: Vec::new(),
            body: None,
            peer: Some(([127, 0, 0, 1], 40000).into()),
        }
    }
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
    pub fn key(self, key: &Key) -> Self {
        self.header("x-api-key", &key.client_id)
            .header("x-api-secret", &key.secret)
    }
    pub fn bearer(self, token: &str) -> Self {
        self.header("authorization", &format!("Bearer {token}"))
    }
    pub fn idem(self, value: &str) -> Self {
        self.header("idempotency-key", value)
    }
    pub fn json(mut self, body: &Value) -> Self {
        self.body = Some(Bytes::from(body.to_string()));
        self.header("content-type", "application/json")
    }
    pub fn raw(mut self, body: impl Into<Bytes>) -> Self {
        self.body = Some(body.into());
        self
    }
    pub fn peer(mut self, peer: Option<SocketAddr>) -> Self {
        self.peer = peer;
        self
    }
    pub fn build(self) -> Request<Full<Bytes>> {
        let mut builder = Request::builder().method(self.method).uri(self.path);
        for (n, v) in self.headers {
            builder = builder.header(n, v);
        }
        let mut req = builder
            .body(Full::new(self.body.unwrap_or_default()))
            .unwrap();
        if let Some(peer) = self.peer {
            req.extensions_mut().insert(PeerAddr(peer));
        }
        req
    }
}

/// A well-formed client secret (its checksum checks out) that no key has: what a
/// guess must look like to reach the key lookup at all.
pub fn unheld_secret() -> String {
    wfs_core::domain::credentials::ClientSecret::generate()
        .expose()
        .to_owned()
}

pub fn unique_idem() -> String {
    format!("idem-{}", uuid::Uuid::new_v4().simple())
}

/// The database this suite runs on, named in failure output.
pub fn backend_name() -> &'static str {
    if std::env::var("WFS_TEST_DATABASE_URL").is_ok() {
        "postgres"
    } else {
        "sqlite"
    }
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        Self::spawn_with(Config::default()).await
    }

    pub async fn spawn_with(config: Config) -> TestApp {
        Self::spawn_custom(config, |wfs| wfs).await
    }

    /// A TestApp whose core runs with these webhook settings (e.g. `allow_private`).
    pub async fn spawn_with_webhook_settings(settings: WebhookSettings) -> TestApp {
        Self::spawn_custom(Config::default(), |wfs| wfs.with_webhook_settings(settings)).await
    }

    /// A TestApp whose core `customise` adjusts after the clock is pinned.
    pub async fn spawn_custom(config: Config, customise: impl FnOnce(Wfs) -> Wfs) -> TestApp {
        let db = TestDatabase::fresh("t").await;
        let mut options = StoreOptions::new(db.url());
        options.max_connections = 8;
        options.acquire_timeout = TEST_ACQUIRE_TIMEOUT;
        options.schema = test_schema();
        let store = Store::connect(&options).await.expect("connect");
        store.migrate().await.expect("migrate");
        let clock = FixedClock::new(t0());
        let wfs = customise(Wfs::new(store, SECRET).unwrap().with_clock(clock.clone()));
        let svc = WfsService::with_config(wfs.clone(), config);
        TestApp {
            svc,
            wfs,
            clock,
            _db: Some(std::sync::Arc::new(db)),
        }
    }

    /// A TestApp over a store the test opened and migrated itself (wfs in a host's
    /// database, on a host's pool).
    pub fn on_store(store: Store) -> TestApp {
        let clock = FixedClock::new(t0());
        let wfs = Wfs::new(store, SECRET).unwrap().with_clock(clock.clone());
        TestApp {
            svc: WfsService::with_config(wfs.clone(), Config::default()),
            wfs,
            clock,
            _db: None,
        }
    }

    /// A second server beside this one: its own facade and service (its own caches,
    /// limits and throttle in memory) over the same database, with `config`.
    /// `restore-admin` for `company` (`Wfs::restore_admin`, committed): the user with
    /// `email` becomes an active super admin with [`PASSWORD`].
    pub async fn restore_admin(
        &self,
        company: &Company,
        email: &str,
    ) -> wfs_core::service::accounts::RestoredAdmin {
        let tx = self.wfs.begin().await.unwrap();
        let restored = self
            .wfs
            .restore_admin(
                &tx,
                company.id.parse().unwrap(),
                wfs_core::service::accounts::RestoredAdminInput {
                    email: email.into(),
                    password: PASSWORD.into(),
                    first_name: "Restored".into(),
                    last_name: "Admin".into(),
                },
            )
            .await
            .unwrap();
        tx.commit().await.unwrap();
        restored
    }

    pub fn second_server(&self, config: Config) -> TestApp {
        let wfs = Wfs::new(self.wfs.store().clone(), SECRET)
            .unwrap()
            .with_clock(self.clock.clone());
        TestApp {
            svc: WfsService::with_config(wfs.clone(), config),
            wfs,
            clock: self.clock.clone(),
            _db: self._db.clone(),
        }
    }

    /// Serves the app over HTTP on a loopback port and answers its base URL: the
    /// client SDK speaks real HTTP. The server lives as long as the test's runtime.
    pub async fn serve_http(&self) -> String {
        use hyper_util::rt::{TokioExecutor, TokioIo};
        use hyper_util::server::conn::auto;
        use hyper_util::service::TowerToHyperService;

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let api = self.svc.clone();
        tokio::spawn(async move {
            while let Ok((stream, peer)) = listener.accept().await {
                let svc = api.clone().map_request(
                    move |mut req: http::Request<hyper::body::Incoming>| {
                        req.extensions_mut().insert(PeerAddr(peer));
                        req
                    },
                );
                tokio::spawn(async move {
                    let _ = auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc))
                        .await;
                });
            }
        });
        format!("http://{addr}")
    }

    pub async fn send(&self, req: Req) -> TestResponse {
        let res = self.svc.clone().oneshot(req.build()).await.unwrap();
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or_else(|_| panic!("non-JSON body: {bytes:?}"))
        };
        TestResponse {
            status,
            headers,
            body,
        }
    }

    /// Sends a request and keeps the body as bytes, JSON or not.
    pub async fn send_raw(&self, req: Req) -> RawResponse {
        let res = self.svc.clone().oneshot(req.build()).await.unwrap();
        let status = res.status();
        let headers = res.headers().clone();
        let body = res.into_body().collect().await.unwrap().to_bytes();
        RawResponse {
            status,
            headers,
            body,
        }
    }

    /// Creates a company and its super admin through the core API, then signs in.
    pub async fn company(&self, name: &str) -> Company {
        let email = format!(
            "admin-{}@{}.test",
            uuid::Uuid::new_v4().simple(),
            name.to_lowercase().replace(' ', "-")
        );
        let tx = self.wfs.begin().await.unwrap();
        let created = self
            .wfs
            .create_company_with_admin(
                &tx,
                NewCompanyAdmin {
                    company_name: name.into(),
                    email: email.clone(),
                    password: PASSWORD.into(),
                    first_name: "Ada".into(),
                    last_name: "Admin".into(),
                },
            )
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let token = self.sign_in(&email, PASSWORD).await;
        Company {
            id: created.company_id.to_string(),
            email,
            token,
        }
    }

    pub async fn sign_in(&self, email: &str, password: &str) -> String {
        let res = self
            .send(
                Req::new(Method::POST, "/external/v1/auth/signin")
                    .json(&json!({"email": email, "password": password})),
            )
            .await;
        res.assert_status(200);
        res.body["accessToken"].as_str().unwrap().to_owned()
    }

    /// Creates a key with the given creation body.
    pub async fn key_with(&self, company: &Company, body: Value) -> Key {
        let res = self
            .send(
                Req::new(Method::POST, "/external/v1/auth/keys")
                    .bearer(&company.token)
                    .json(&body),
            )
            .await;
        res.assert_status(201);
        Key {
            id: res.body["id"].as_str().unwrap().into(),
            client_id: res.body["clientId"].as_str().unwrap().into(),
            secret: res.body["clientSecret"].as_str().unwrap().into(),
        }
    }

    /// A key with exactly these scopes.
    pub async fn key_with_scopes(&self, company: &Company, scopes: &[&str]) -> Key {
        self.key_with(company, json!({"name": "scoped", "scopes": scopes}))
            .await
    }

    /// A key with every scope.
    pub async fn key(&self, company: &Company) -> Key {
        self.key_with(
            company,
            json!({"name": "all", "scopes": ["workforce:read", "workforce:write", "availability:read", "webhooks:manage"]}),
        )
        .await
    }

    pub async fn get(&self, key: &Key, path: &str) -> TestResponse {
        self.send(Req::new(Method::GET, path).key(key)).await
    }

    pub async fn post(&self, key: &Key, path: &str, body: &Value) -> TestResponse {
        self.send(
            Req::new(Method::POST, path)
                .key(key)
                .idem(&unique_idem())
                .json(body),
        )
        .await
    }

    pub async fn patch(&self, key: &Key, path: &str, body: &Value) -> TestResponse {
        self.send(
            Req::new(Method::PATCH, path)
                .key(key)
                .idem(&unique_idem())
                .json(body),
        )
        .await
    }

    pub async fn delete(&self, key: &Key, path: &str) -> TestResponse {
        self.send(Req::new(Method::DELETE, path).key(key).idem(&unique_idem()))
            .await
    }

    pub async fn create_role(&self, key: &Key, title: &str) -> String {
        let res = self
            .post(key, "/external/v1/job-roles", &json!({"title": title}))
            .await;
        res.assert_status(201);
        res.body["id"].as_str().unwrap().into()
    }

    /// Lists the admin's keys.
    pub async fn list_keys(&self, company: &Company) -> Vec<Value> {
        let res = self
            .send(Req::new(Method::GET, "/external/v1/auth/keys").bearer(&company.token))
            .await;
        res.assert_status(200);
        res.body.as_array().unwrap().clone()
    }
}

/// The schema every test store uses on PostgreSQL: `WFS_TEST_DATABASE_SCHEMA`, so the
/// whole suite can run with wfs in a schema of its own (any statement that escaped
/// the qualification then finds no table). `None` on SQLite.
pub fn test_schema() -> Option<String> {
    std::env::var("WFS_TEST_DATABASE_URL").ok()?;
    std::env::var("WFS_TEST_DATABASE_SCHEMA").ok()
}

/// Seeds through the store what other routes would create, so a suite depends only
/// on the routes it tests.
impl TestApp {
    /// A location of `company`.
    pub async fn seed_location(&self, company: &Company, name: &str) -> String {
        use wfs_core::persistence::entity::location;
        use wfs_core::sea_orm::{ActiveModelTrait, Set};
        let now = self.wfs.now();
        let id = uuid::Uuid::now_v7();
        location::ActiveModel {
            id: Set(id),
            company_id: Set(company.id.parse().unwrap()),
            name: Set(name.into()),
            address: Set(Some("1 Secret Street".into())),
            country_id: Set(None),
            state_id: Set(None),
            city_id: Set(None),
            zip_code: Set(Some("99999".into())),
            hexcode: Set("#123456".into()),
            symbol: Set("LO".into()),
            latitude: Set(None),
            longitude: Set(None),
            location_detection_enabled: Set(false),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(self.wfs.store().conn())
        .await
        .unwrap();
        id.to_string()
    }

    /// An active member (privilege 3) of `company`; returns (membership id, user id).
    pub async fn seed_member(&self, company: &Company, first_name: &str) -> (String, String) {
        use wfs_core::persistence::entity::{membership, user};
        use wfs_core::sea_orm::{ActiveModelTrait, Set};
        let now = self.wfs.now();
        let user_id = uuid::Uuid::now_v7();
        let tag = uuid::Uuid::new_v4().simple().to_string();
        user::ActiveModel {
            id: Set(user_id),
            email: Set(format!("{}-{tag}@people.test", first_name.to_lowercase())),
            user_name: Set(Some(format!("{}-{tag}", first_name.to_lowercase()))),
            first_name: Set(first_name.into()),
            last_name: Set("Person".into()),
            phone: Set(Some("+15550100".into())),
            gender: Set(Some("female".into())),
            country_id: Set(Some("US".into())),
            password_hash: Set(None),
            must_change_password: Set(true),
            sign_in_failures: Set(0),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(self.wfs.store().conn())
        .await
        .unwrap();
        let membership_id = uuid::Uuid::now_v7();
        membership::ActiveModel {
            id: Set(membership_id),
            company_id: Set(company.id.parse().unwrap()),
            user_id: Set(user_id),
            branch_id: Set(None),
            job_role_id: Set(None),
            privilege: Set(3),
            status: Set(1),
            resource_version: Set(0),
            updated_at: Set(now),
            created_at: Set(now),
        }
        .insert(self.wfs.store().conn())
        .await
        .unwrap();
        (membership_id.to_string(), user_id.to_string())
    }
}

/// Company "Acme" with a key, a location "North", a role "Nurse", a member "Ada" and a
/// day slot on Monday 2026-11-16 (08:00-16:00 UTC, three places): where the host API's
/// tests and the shared-database readings start.
pub struct DaySlot {
    pub company: Company,
    pub key: Key,
    /// Ada's membership and user ids.
    pub member: String,
    pub user: String,
    /// The slot's id, as the create answer gives it.
    pub slot: Value,
}

impl TestApp {
    /// Makes the [`DaySlot`] scene through the API (the slot) and the store (the rest).
    pub async fn day_slot(&self) -> DaySlot {
        let company = self.company("Acme").await;
        let key = self.key(&company).await;
        let branch = self.seed_location(&company, "North").await;
        let role = self.create_role(&key, "Nurse").await;
        let (member, user) = self.seed_member(&company, "Ada").await;
        let slot = self
            .post(
                &key,
                "/external/v1/shifts/slots",
                &json!({"branchId": branch, "jobRoleId": role, "startTime": "08:00", "endTime": "16:00", "bookDate": "2026-11-16",
                        "dayOfWeek": 1, "maxStaffRequired": 3, "timeZone": "UTC", "shiftName": "Day", "shiftColor": "#123",
                        "openShift": false, "isOncall": false, "unpaidBreak": 30}),
            )
            .await;
        slot.assert_status(201);
        DaySlot {
            company,
            key,
            member,
            user,
            slot: slot.body["slotId"].clone(),
        }
    }
}

/// A company with a key, a location ("North Clinic") and a job role ("Nurse"): the
/// scene most scheduling tests start from.
pub struct Scene {
    pub app: TestApp,
    pub company: Company,
    pub key: Key,
    pub branch: String,
    pub role: String,
}

impl Scene {
    pub async fn new() -> Scene {
        let app = TestApp::spawn().await;
        let company = app.company("Acme").await;
        let key = app.key(&company).await;
        let branch = app.seed_location(&company, "North Clinic").await;
        let role = app.create_role(&key, "Nurse").await;
        Scene {
            app,
            company,
            key,
            branch,
            role,
        }
    }
}

impl Scene {
    /// Another company in the same app (same database).
    pub async fn new_in(app: &TestApp, name: &str) -> Scene {
        let company = app.company(name).await;
        let key = app.key(&company).await;
        let branch = app.seed_location(&company, "Elsewhere").await;
        let role = app.create_role(&key, "Porter").await;
        Scene {
            app: app.clone(),
            company,
            key,
            branch,
            role,
        }
    }
}

/// The app's webhook delivery worker, running until [`Worker::stop`] (no worker runs
/// unless a test starts one).
pub struct Worker {
    stop: tokio::sync::oneshot::Sender<()>,
    done: tokio::task::JoinHandle<()>,
}

impl Worker {
    pub fn start(app: &TestApp) -> Worker {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let wfs = app.wfs.clone();
        let done = tokio::spawn(async move {
            wfs.run_webhook_worker(async move {
                let _ = stopped.await;
            })
            .await
            .expect("worker");
        });
        Worker { stop, done }
    }

    /// Stops the worker and waits until it has.
    pub async fn stop(self) {
        drop(self.stop);
        self.done.await.unwrap();
    }
}
