//! Welcome emails over real SMTP: the outbox delivered through [`SmtpMailer`] to an
//! SMTP server running in-process (mailin-embedded) on a loopback port.
//!
//! Runs on a temp-file SQLite, or on a fresh PostgreSQL database when
//! `WFS_TEST_DATABASE_URL` is set.

use crate::common;

use chrono::{TimeZone, Utc};
use common::{BIN, sqlite_url};
use mailin_embedded::{Handler, Response, Server, SslConfig, response};
use serde_json::{Value, json};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wfs_core::persistence::entity::outbox;
use wfs_core::sea_orm::EntityTrait;
use wfs_core::service::accounts::NewCompanyAdmin;
use wfs_core::service::job_roles::NewJobRole;
use wfs_core::service::locations::NewLocation;
use wfs_core::service::staff::{NewStaffMember, StaffFilter};
use wfs_core::{CompanyId, FixedClock, Store, StoreOptions, Wfs};
use wfs_server::mail::{MailConfigError, SmtpMailer, mailer_from_options};

const SECRET: &[u8] = b"mail-test-secret-mail-test-secret-0123";
const FROM: &str = "Acme Rota <rota@acme.test>";

/// A message as the SMTP server received it.
#[derive(Debug, Clone)]
struct Received {
    from: String,
    to: Vec<String>,
    data: String,
}

/// What the SMTP server has accepted so far.
#[derive(Debug, Clone, Default)]
struct Inbox(Arc<Mutex<Vec<Received>>>);

impl Inbox {
    fn messages(&self) -> Vec<Received> {
        self.0.lock().unwrap().clone()
    }
}

/// mailin's per-connection handler: collects each message into the inbox.
#[derive(Clone)]
struct Recorder {
    inbox: Inbox,
    current: Option<Received>,
}

impl Handler for Recorder {
    fn data_start(&mut self, _domain: &str, from: &str, _is8bit: bool, to: &[String]) -> Response {
        self.current = Some(Received {
            from: from.to_owned(),
            to: to.to_vec(),
            data: String::new(),
        });
        response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if let Some(current) = &mut self.current {
            current.data.push_str(&String::from_utf8_lossy(buf));
        }
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        if let Some(done) = self.current.take() {
            self.inbox.0.lock().unwrap().push(done);
        }
        response::OK
    }
}

/// Runs a real SMTP server on `listener` for the rest of the test process.
fn start_smtp(listener: TcpListener) -> Inbox {
    let inbox = Inbox::default();
    let mut server = Server::new(Recorder {
        inbox: inbox.clone(),
        current: None,
    });
    server
        .with_name("smtp.test")
        .with_ssl(SslConfig::None)
        .unwrap()
        .with_tcp_listener(listener);
    std::thread::spawn(move || {
        if let Err(err) = server.serve() {
            eprintln!("smtp server stopped: {err}");
        }
    });
    inbox
}

fn loopback_listener() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

fn smtp_mailer(port: u16) -> SmtpMailer {
    SmtpMailer::new(&format!("smtp://127.0.0.1:{port}"), FROM).unwrap()
}

struct World {
    wfs: Wfs,
    clock: FixedClock,
    company: CompanyId,
    _dir: tempfile::TempDir,
    _cluster: common::ClusterShare,
}

async fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let (url, cluster) = common::database(&dir, "mail").await;
    let store = Store::connect(&StoreOptions::new(url)).await.unwrap();
    store.migrate().await.unwrap();
    let clock = FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 18, 9, 0, 0).unwrap());
    let wfs = Wfs::new(store, SECRET).unwrap().with_clock(clock.clone());
    let tx = wfs.begin().await.unwrap();
    let company = wfs
        .create_company_with_admin(
            &tx,
            NewCompanyAdmin {
                company_name: "Acme Care".into(),
                email: "admin@acme.test".into(),
                password: "correct-horse".into(),
                first_name: "Ada".into(),
                last_name: "Admin".into(),
            },
        )
        .await
        .unwrap()
        .company_id;
    tx.commit().await.unwrap();
    World {
        wfs,
        clock,
        company,
        _dir: dir,
        _cluster: cluster,
    }
}

/// Creates one member through the core bulk operation, in one committed transaction.
async fn create_member(w: &World, email: &str) {
    let tx = w.wfs.begin().await.unwrap();
    let branch = w
        .wfs
        .create_location(
            &tx,
            w.company,
            NewLocation {
                name: "North Ward".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .id;
    let role = w
        .wfs
        .create_job_role(
            &tx,
            w.company,
            NewJobRole {
                title: "Nurse".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .id;
    let report = w
        .wfs
        .bulk_create_staff(
            &tx,
            w.company,
            vec![Ok(NewStaffMember {
                first_name: "Grace".into(),
                last_name: "Hopper".into(),
                user_name: "ghopper".into(),
                email: email.into(),
                phone: "+1 415 555 0100".into(),
                gender: "female".into(),
                country_id: "US".into(),
                assigned_branch_id: branch.into(),
                job_role_id: role.into(),
                privilege: 3,
                skill_set_ids: Vec::new(),
            })],
        )
        .await
        .unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    tx.commit().await.unwrap();
}

async fn outbox_rows(w: &World) -> Vec<outbox::Model> {
    outbox::Entity::find()
        .all(w.wfs.store().conn())
        .await
        .unwrap()
}

async fn staff_count(w: &World) -> usize {
    w.wfs
        .list_staff(w.company, StaffFilter::default())
        .await
        .unwrap()
        .len()
}

#[tokio::test]
async fn a_new_members_welcome_email_arrives_over_smtp_with_its_recipient_and_subject() {
    // Arrange
    let (listener, port) = loopback_listener();
    let inbox = start_smtp(listener);
    let w = world().await;
    create_member(&w, "Grace@Example.test").await;

    // Act
    let report = w.wfs.deliver_outbox(&smtp_mailer(port), 10).await.unwrap();

    // Assert
    assert_eq!((report.sent, report.failed), (1, 0));
    let messages = inbox.messages();
    assert_eq!(messages.len(), 1);
    let message = &messages[0];
    assert_eq!(message.to, ["grace@example.test"]);
    assert_eq!(message.from, "rota@acme.test");
    assert!(
        message.data.contains("Subject: Welcome to Acme Care"),
        "{}",
        message.data
    );
    assert!(message.data.contains("To: grace@example.test"));
    assert!(message.data.contains("ghopper"), "{}", message.data);
    assert!(outbox_rows(&w).await[0].sent_at.is_some());
}

#[tokio::test]
async fn with_the_smtp_server_down_the_member_stays_and_the_email_is_sent_once_it_is_back() {
    // Arrange: a port with nobody listening, yet.
    let (listener, port) = loopback_listener();
    drop(listener);
    let w = world().await;
    create_member(&w, "grace@example.test").await;
    let mailer = smtp_mailer(port);

    // Act: the server is down.
    let down = w.wfs.deliver_outbox(&mailer, 10).await.unwrap();

    // Assert: the send failed, the member is there once, a retry is scheduled.
    assert_eq!((down.sent, down.failed), (0, 1));
    assert_eq!(staff_count(&w).await, 2, "the admin and the one new member");
    let row = &outbox_rows(&w).await[0];
    assert_eq!(row.attempts, 1);
    assert!(row.sent_at.is_none());
    assert!(row.last_error.is_some());
    assert!(row.next_attempt_at > w.wfs.now());

    // Act: the server comes back on the same port; the retry falls due.
    let inbox = start_smtp(TcpListener::bind(("127.0.0.1", port)).unwrap());
    assert_eq!(
        w.wfs.deliver_outbox(&mailer, 10).await.unwrap().claimed,
        0,
        "not before the backoff"
    );
    w.clock.advance(chrono::Duration::seconds(30));
    let back = w.wfs.deliver_outbox(&mailer, 10).await.unwrap();

    // Assert: delivered exactly once, and never again.
    assert_eq!((back.sent, back.failed), (1, 0));
    w.clock.advance(chrono::Duration::hours(2));
    assert_eq!(w.wfs.deliver_outbox(&mailer, 10).await.unwrap().claimed, 0);
    let messages = inbox.messages();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].to, ["grace@example.test"]);
    assert_eq!(outbox_rows(&w).await.len(), 1);
    assert_eq!(staff_count(&w).await, 2);
}

#[tokio::test]
async fn the_background_work_delivers_the_outbox_through_smtp_and_stops_on_shutdown() {
    let (listener, port) = loopback_listener();
    let inbox = start_smtp(listener);
    let w = world().await;
    create_member(&w, "grace@example.test").await;

    let wfs = w.wfs.clone().with_mailer(Arc::new(smtp_mailer(port)));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (ready, first_round) = tokio::sync::oneshot::channel::<()>();
    let background = tokio::spawn(async move {
        wfs.run_background_with_ready(
            async move {
                let _ = stopped.await;
            },
            move || {
                let _ = ready.send(());
            },
        )
        .await
    });
    tokio::time::timeout(Duration::from_secs(10), first_round)
        .await
        .expect("the first round ends")
        .unwrap();
    assert_eq!(
        inbox.messages().len(),
        1,
        "what was due at start is sent by the first round"
    );
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), background)
        .await
        .expect("the background work stops on shutdown")
        .unwrap()
        .unwrap();

    assert_eq!(inbox.messages().len(), 1);
    assert!(outbox_rows(&w).await[0].sent_at.is_some());
}

#[tokio::test]
async fn mail_options_need_a_sender_with_an_smtp_url_and_reject_bad_values() {
    assert!(matches!(
        mailer_from_options(Some("smtp://127.0.0.1:2525"), None),
        Err(MailConfigError::MissingFrom)
    ));
    assert!(matches!(
        mailer_from_options(Some("smtp://127.0.0.1:2525"), Some("not an address")),
        Err(MailConfigError::From(_))
    ));
    assert!(matches!(
        mailer_from_options(Some("ftp://127.0.0.1"), Some(FROM)),
        Err(MailConfigError::Url(_))
    ));
    let smtp = mailer_from_options(Some("smtp://user:hunter2@127.0.0.1:2525"), Some(FROM)).unwrap();
    assert!(
        !format!("{smtp:?}").contains("hunter2"),
        "credentials never printed"
    );
    let log = mailer_from_options(None, None).unwrap();
    assert_eq!(format!("{log:?}"), "LogMailer");
}

#[test]
fn serve_refuses_an_smtp_url_without_a_sender() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("WFS_DATABASE_URL", sqlite_url(&dir))
        .env("WFS_SMTP_URL", "smtp://127.0.0.1:2525")
        .env_remove("WFS_MAIL_FROM")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--mail-from"));
}

#[tokio::test]
async fn the_server_sends_the_welcome_email_of_a_member_created_over_http() {
    // Arrange: an SMTP server, and `wfs-server serve` pointed at it.
    let (listener, port) = loopback_listener();
    let inbox = start_smtp(listener);
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    common::create_admin(&url);
    let server = common::Server::serve(&url)
        .env("WFS_SMTP_URL", format!("smtp://127.0.0.1:{port}"))
        .env("WFS_MAIL_FROM", FROM)
        .start();
    let base = server.url("/external/v1");
    let http = reqwest::Client::new();
    let key = common::api_key(
        &http,
        &server,
        "mail",
        &["workforce:read", "workforce:write"],
    )
    .await;
    let write = |path: &str, body: Value| {
        http.post(format!("{base}{path}"))
            .header("x-api-key", &key.client_id)
            .header("x-api-secret", &key.secret)
            .header(
                "idempotency-key",
                format!("mail-test{}", path.replace('/', "-")),
            )
            .json(&body)
            .send()
    };
    let branch: Value = write("/locations", json!({"name": "Ward"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let role: Value = write("/job-roles", json!({"title": "Nurse", "symbol": "RN"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();

    // Act
    let bulk: Value = write(
        "/staff/bulk",
        json!([{
            "firstName": "Grace", "lastName": "Hopper", "userName": "ghopper",
            "email": "grace@example.test", "phone": "+14155550100", "gender": "female",
            "countryId": "US", "assignedBranchId": branch["id"], "jobRoleId": "RN", "privilege": 3
        }]),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(bulk["success"], 1, "{bulk} {role}");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while inbox.messages().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(server);

    // Assert
    let messages = inbox.messages();
    assert_eq!(messages.len(), 1, "the background sender delivered it");
    assert_eq!(messages[0].to, ["grace@example.test"]);
    assert!(messages[0].data.contains("Subject: Welcome to Acme Care"));
}
