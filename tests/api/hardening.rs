//! Hostile input, faults and limits (decisions.md, "Hostile input, faults and limits",
//! and the "Order of checks" rule). The API faces the open internet: no request,
//! however malformed, crashes a task, answers 500 for the client's mistake, or leaves
//! an idempotency key stuck. The clock stands at 2026-11-18 09:30 UTC.

use crate::helpers::*;
use bytes::Bytes;
use chrono::Duration;
use http::{Method, Request};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};
use tower::ServiceExt;
use wfs_core::persistence::entity::{job_role, membership, skill_set, user};
use wfs_core::sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};
use wfs_tower::{Config, WfsService};

const ROLES: &str = "/external/v1/job-roles";
const SCHEDULES: &str = "/external/v1/schedules";
const HOURS: &str = "/external/v1/hours";
const FEED: &str = "/external/v1/workforce/resources";
const STAFF: &str = "/external/v1/staff";
const BULK: &str = "/external/v1/staff/bulk";
const KEYS: &str = "/external/v1/auth/keys";
const SIGN_IN: &str = "/external/v1/auth/signin";
const SLOTS: &str = "/external/v1/shifts/slots";
const BOOK: &str = "/external/v1/shifts/book";

const ADDRESS_REFUSED: &str = "Address not allowed for this API key";
const THROTTLED: &str = "Too many sign-in attempts";

// ------------------------------------------------------------------ helpers

/// Asserts a 400 whose message names `name` (a field or a query parameter).
#[track_caller]
fn assert_400_naming(res: &TestResponse, name: &str, what: &str) {
    assert_eq!(
        res.status.as_u16(),
        400,
        "{what} on {}: expected 400 naming `{name}`, got {:?}",
        backend_name(),
        res.body
    );
    let message = res.error_message();
    assert!(
        message.contains(name),
        "{what}: the message should name `{name}`: {message}"
    );
}

/// A `Retry-After` header in whole seconds, at least 1.
#[track_caller]
fn retry_after(res: &TestResponse) -> u64 {
    let value = res
        .header("retry-after")
        .unwrap_or_else(|| panic!("no Retry-After on {:?}", res.status));
    let seconds: u64 = value
        .parse()
        .unwrap_or_else(|_| panic!("Retry-After is not whole seconds: {value:?}"));
    assert!(seconds >= 1, "Retry-After {seconds}");
    seconds
}

fn from(ip: &str) -> Option<SocketAddr> {
    Some(SocketAddr::new(ip.parse().unwrap(), 50_000))
}

fn sign_in_req(email: &str, password: &str) -> Req {
    Req::new(Method::POST, SIGN_IN).json(&json!({"email": email, "password": password}))
}

/// Sends a request with any body type through `svc`, as a host would.
async fn send_through<B>(svc: &WfsService, req: Request<B>) -> TestResponse
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let res = svc.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| panic!("non-JSON body ({status}): {bytes:?}"));
    TestResponse {
        status,
        headers,
        body,
    }
}

/// A request body that panics when the server reads it.
#[derive(Debug)]
struct PanickingBody;

impl Body for PanickingBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        panic!("hardening test: the request body blew up");
    }
}

/// A request body whose next byte never arrives.
#[derive(Debug)]
struct StalledBody;

impl Body for StalledBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Pending
    }
}

/// A request body that arrives one byte every `every`, as a slow-body attacker sends it.
#[derive(Debug)]
struct TrickledBody {
    bytes: Bytes,
    every: std::time::Duration,
    next: Pin<Box<tokio::time::Sleep>>,
}

impl TrickledBody {
    fn new(bytes: Vec<u8>, every: std::time::Duration) -> Self {
        Self {
            bytes: Bytes::from(bytes),
            every,
            next: Box::pin(tokio::time::sleep(every)),
        }
    }
}

impl Body for TrickledBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.bytes.is_empty() {
            return Poll::Ready(None);
        }
        std::task::ready!(self.next.as_mut().poll(cx));
        let every = self.every;
        self.next
            .as_mut()
            .reset(tokio::time::Instant::now() + every);
        let byte = self.bytes.split_to(1);
        Poll::Ready(Some(Ok(Frame::data(byte))))
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// base64url without padding, as cursors are written.
fn b64url_encode(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn b64url_decode(text: &str) -> Vec<u8> {
    let sextets: Vec<u32> = text
        .bytes()
        .map(|c| B64.iter().position(|b| *b == c).expect("base64url") as u32)
        .collect();
    let mut out = Vec::new();
    for chunk in sextets.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, s)| n | (s << (18 - 6 * i)));
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

/// `text` with the character at `at` replaced by another base64url character.
fn flip(text: &str, at: usize) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    chars[at] = if chars[at] == 'A' { 'B' } else { 'A' };
    chars.into_iter().collect()
}

/// A valid slot body running on Wednesdays (2026-11-18 is one).
fn slot_body(s: &Scene, book_date: &str) -> Value {
    json!({
        "branchId": s.branch, "jobRoleId": s.role, "startTime": "08:00", "endTime": "16:00",
        "bookDate": book_date, "dayOfWeek": 3, "maxStaffRequired": 5, "timeZone": "UTC",
        "shiftName": "Early", "shiftColor": "#123456", "openShift": false, "isOncall": false,
        "unpaidBreak": 0
    })
}

async fn slot(s: &Scene) -> String {
    let res = s.app.post(&s.key, SLOTS, &slot_body(s, "2026-11-18")).await;
    res.assert_status(201);
    res.body["slotId"].as_str().unwrap().to_owned()
}

/// A valid bulk staff item.
fn person(s: &Scene, privilege: u8) -> Value {
    let tag = uuid::Uuid::new_v4().simple().to_string();
    json!({
        "firstName": "Grace", "lastName": "Hopper", "userName": format!("u{tag}"),
        "email": format!("p{tag}@people.test"), "phone": "+1 415 555 0100", "gender": "female",
        "countryId": "US", "assignedBranchId": s.branch, "jobRoleId": s.role, "privilege": privilege
    })
}

/// Membership ids of the company's active super admins, in list order.
async fn super_admins(s: &Scene) -> Vec<String> {
    let res = s.app.get(&s.key, STAFF).await;
    res.assert_status(200);
    res.body
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["privilege"] == 1)
        .map(|m| m["membershipId"].as_str().unwrap().to_owned())
        .collect()
}

async fn user_id_of(app: &TestApp, email: &str) -> uuid::Uuid {
    user::Entity::find()
        .filter(user::Column::Email.eq(email))
        .one(app.wfs.store().conn())
        .await
        .unwrap()
        .expect("user exists")
        .id
}

// ------------------------------------------- dates inside the years 0001-9999

#[tokio::test]
async fn dates_with_a_year_outside_0001_to_9999_or_not_of_4_digits_are_400_naming_the_parameter() {
    let s = Scene::new().await;
    let app = &s.app;
    let cases = [
        (format!("{SCHEDULES}?from=%2B262142-12-31"), "from"),
        (format!("{SCHEDULES}?from=+262142-12-31"), "from"),
        (format!("{SCHEDULES}?from=-5000-01-01"), "from"),
        (format!("{SCHEDULES}?from=0000-01-01"), "from"),
        (format!("{SCHEDULES}?from=2026-11-01&to=10000-01-01"), "to"),
        (
            format!("{HOURS}?from=%2B262142-12-31&to=2026-11-18"),
            "from",
        ),
        (format!("{HOURS}?from=2026-11-18&to=%2B262142-12-31"), "to"),
        (format!("{FEED}?from=99999-01-01"), "from"),
        (format!("{FEED}?from=%2B262142-01-01T00:00:00Z"), "from"),
        (
            format!("{FEED}?updated_since=%2B262142-01-01"),
            "updated_since",
        ),
        (
            format!("{FEED}?updated_since=+262142-01-01"),
            "updated_since",
        ),
    ];
    for (path, parameter) in &cases {
        let res = app.get(&s.key, path).await;
        assert_400_naming(&res, parameter, path);
    }

    let far_slot = app
        .post(&s.key, SLOTS, &slot_body(&s, "+12026-01-01"))
        .await;
    assert_400_naming(&far_slot, "bookDate", "bookDate +12026-01-01");
    let slot_id = slot(&s).await;
    let book = app
        .post(
            &s.key,
            BOOK,
            &json!({"slotId": slot_id, "date": "10000-01-01"}),
        )
        .await;
    assert_400_naming(&book, "date", "date 10000-01-01");
    let key = app
        .send(
            Req::new(Method::POST, KEYS)
                .bearer(&s.company.token)
                .json(&json!({"name": "far", "expiresAt": "+10000-01-01T00:00:00Z"})),
        )
        .await;
    assert_400_naming(&key, "expiresAt", "expiresAt +10000");
}

#[tokio::test]
async fn date_arithmetic_that_would_leave_the_years_0001_to_9999_is_400_naming_the_parameter() {
    let s = Scene::new().await;
    let app = &s.app;

    // The default 30-day window from 9999-12-31 would end in the year 10000.
    let feed = app.get(&s.key, &format!("{FEED}?from=9999-12-31")).await;
    assert_400_naming(&feed, "from", "feed from 9999-12-31");
    // /hours counts `to` inclusively: its end is the day after, 10000-01-01.
    let hours = app
        .get(&s.key, &format!("{HOURS}?from=9999-12-30&to=9999-12-31"))
        .await;
    assert_400_naming(&hours, "to", "hours to 9999-12-31");

    // Windows that stay inside the range are served.
    app.get(&s.key, &format!("{FEED}?from=9999-12-01&to=9999-12-31"))
        .await
        .assert_status(200);
    let served = app
        .get(&s.key, &format!("{HOURS}?from=9999-12-29&to=9999-12-30"))
        .await;
    served.assert_status(200);
    assert_eq!(served.body.as_array().unwrap().len(), 2);
}

// ------------------------------------------------------------- schedule pages

#[tokio::test]
async fn a_schedules_page_above_100000_is_400_naming_page() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    for page in ["9223372036854775808", "18446744073709551616", "100001"] {
        let res = app.get(&key, &format!("{SCHEDULES}?page={page}")).await;
        assert_400_naming(&res, "page", page);
    }
    let last_allowed = app.get(&key, &format!("{SCHEDULES}?page=100000")).await;
    last_allowed.assert_status(200);
    assert_eq!(last_allowed.body, json!([]), "a page past the end is empty");
}

// ------------------------------------------------------------------- cursors

#[tokio::test]
async fn a_workforce_cursor_changed_in_any_way_is_400_naming_cursor() {
    let s = Scene::new().await;
    crate::workforce::members(&s, 3).await;
    let first = s.app.get(&s.key, &format!("{FEED}?limit=1")).await;
    first.assert_status(200);
    let cursor = first.body["pagination"]["next_cursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let (payload, tag) = cursor
        .split_once('.')
        .expect("cursor = base64url(json) \".\" base64url(tag)");

    // One character changed, in the payload or in the tag.
    let mut edited = vec![
        flip(&cursor, 0),
        flip(&cursor, payload.len() / 2),
        flip(&cursor, payload.len() + 1 + tag.len() / 2),
    ];
    // The payload re-encoded with another limit, under the old tag: a page limit the
    // server never granted.
    let mut fields: Value = serde_json::from_slice(&b64url_decode(payload)).unwrap();
    assert_eq!(
        fields["l"], 1,
        "the cursor carries its limit as `l`: {fields}"
    );
    for limit in [2, 200, 1_000_000] {
        fields["l"] = json!(limit);
        let forged = b64url_encode(fields.to_string().as_bytes());
        edited.push(format!("{forged}.{tag}"));
    }
    // The same payload bytes re-encoded, with a truncated tag or without one.
    edited.push(format!("{payload}.{}", &tag[..tag.len() - 2]));
    edited.push(format!("{payload}."));
    edited.push(payload.to_owned());

    for bad in &edited {
        let res = s.app.get(&s.key, &format!("{FEED}?cursor={bad}")).await;
        assert_400_naming(&res, "cursor", bad);
    }
    let next = s.app.get(&s.key, &format!("{FEED}?cursor={cursor}")).await;
    next.assert_status(200);
    assert_eq!(next.body["data"].as_array().unwrap().len(), 1);
}

// ------------------------------------------------------------------ API keys

#[tokio::test]
async fn rotating_an_expired_key_is_409_api_key_expired() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app
        .key_with(
            &acme,
            json!({"name": "short-lived", "expiresAt": "2026-11-18T10:30:00Z"}),
        )
        .await;

    app.clock.advance(Duration::hours(2));
    let token = app.sign_in(&acme.email, PASSWORD).await;
    let res = app
        .send(Req::new(Method::POST, &format!("{KEYS}/{}/rotate", key.id)).bearer(&token))
        .await;

    res.assert_error(409, "API key expired");
    app.get(&key, ROLES)
        .await
        .assert_error(401, "API key expired");
}

#[tokio::test]
async fn responses_carrying_a_token_or_a_secret_send_cache_control_no_store() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let no_store = |res: &TestResponse, what: &str| {
        assert_eq!(res.header("cache-control"), Some("no-store"), "{what}");
    };

    let signed_in = app.send(sign_in_req(&acme.email, PASSWORD)).await;
    signed_in.assert_status(200);
    no_store(&signed_in, "sign-in");

    let create = || {
        Req::new(Method::POST, KEYS)
            .bearer(&acme.token)
            .idem("portal-no-store-1")
            .json(&json!({"name": "sync"}))
    };
    let created = app.send(create()).await;
    created.assert_status(201);
    no_store(&created, "key create");
    let replayed = app.send(create()).await;
    replayed.assert_status(201);
    assert_eq!(replayed.header("idempotent-replayed"), Some("true"));
    no_store(&replayed, "replayed key create");

    let id = created.body["id"].as_str().unwrap();
    let rotated = app
        .send(Req::new(Method::POST, &format!("{KEYS}/{id}/rotate")).bearer(&acme.token))
        .await;
    rotated.assert_status(200);
    no_store(&rotated, "key rotate");
}

#[tokio::test]
async fn bearer_route_idempotency_keys_are_scoped_to_the_admin_and_the_company() {
    let app = TestApp::spawn().await;
    let alpha = app.company("Alpha").await;
    let beta = app.company("Beta").await;
    // Beta's admin becomes a super admin of Alpha too; sign-in makes the first company
    // by name active, so a fresh sign-in acts for Alpha and the old token for Beta.
    let now = app.wfs.now();
    membership::ActiveModel {
        id: Set(uuid::Uuid::now_v7()),
        company_id: Set(alpha.id.parse().unwrap()),
        user_id: Set(user_id_of(&app, &beta.email).await),
        branch_id: Set(None),
        job_role_id: Set(None),
        privilege: Set(1),
        status: Set(1),
        resource_version: Set(1_000),
        updated_at: Set(now),
        created_at: Set(now),
    }
    .insert(app.wfs.store().conn())
    .await
    .unwrap();
    let beta_admin_in_alpha = app.sign_in(&beta.email, PASSWORD).await;
    let beta_admin_in_beta = beta.token.clone();
    let create = |token: &str| {
        Req::new(Method::POST, KEYS)
            .bearer(token)
            .idem("portal-shared-key-1")
            .json(&json!({"name": "sync"}))
    };

    let alpha_by_alpha_admin = app.send(create(&alpha.token)).await;
    let alpha_by_beta_admin = app.send(create(&beta_admin_in_alpha)).await;
    let beta_by_beta_admin = app.send(create(&beta_admin_in_beta)).await;

    let mut ids = Vec::new();
    for (res, who) in [
        (&alpha_by_alpha_admin, "Alpha's admin in Alpha"),
        (&alpha_by_beta_admin, "Beta's admin in Alpha"),
        (&beta_by_beta_admin, "Beta's admin in Beta"),
    ] {
        res.assert_status(201);
        assert_eq!(res.header("idempotent-replayed"), None, "{who}");
        assert!(
            res.body["clientSecret"].as_str().is_some(),
            "{who}: a new key with its secret"
        );
        ids.push(res.body["id"].as_str().unwrap().to_owned());
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "three different keys");
    assert_eq!(app.list_keys(&alpha).await.len(), 2);
    assert_eq!(app.list_keys(&beta).await.len(), 1);

    // Within one admin and one company the key is honoured.
    let replay = app.send(create(&beta_admin_in_alpha)).await;
    replay.assert_status(201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.body["id"], alpha_by_beta_admin.body["id"]);
}

// ------------------------------------------------------------- super admins

#[tokio::test]
async fn the_companys_last_active_super_admin_cannot_be_deactivated() {
    let s = Scene::new().await;
    let app = &s.app;
    let admins = super_admins(&s).await;
    assert_eq!(admins.len(), 1);
    let first = admins[0].clone();

    let alone = app.delete(&s.key, &format!("{STAFF}/{first}")).await;

    alone.assert_error(409, "Cannot deactivate the company's last super admin");
    app.sign_in(&s.company.email, PASSWORD).await;
    assert_eq!(super_admins(&s).await, admins, "still active");

    // With a second super admin who can sign in, the first may go; then the second
    // is the last.
    let second_email = format!("second-{}@admins.test", uuid::Uuid::new_v4().simple());
    let second = restore_admin(app, &s, &second_email).await;

    app.delete(&s.key, &format!("{STAFF}/{first}"))
        .await
        .assert_status(200);
    app.delete(&s.key, &format!("{STAFF}/{second}"))
        .await
        .assert_error(409, "Cannot deactivate the company's last super admin");
    assert_eq!(super_admins(&s).await, [second]);
    app.sign_in(&second_email, PASSWORD).await;
}

/// The probe's sequence: a write key makes a super admin through bulk (no password,
/// so nobody can sign in as it), then deactivates the real admin. The admin stays,
/// signs in, and revokes the key.
#[tokio::test]
async fn a_write_key_cannot_lock_every_admin_out_with_a_passwordless_super_admin() {
    let s = Scene::new().await;
    let app = &s.app;
    let first = super_admins(&s).await.remove(0);
    let report = app.post(&s.key, BULK, &json!([person(&s, 1)])).await;
    report.assert_status(200);
    assert_eq!(report.body["success"], 1, "{}", report.body);
    assert_eq!(super_admins(&s).await.len(), 2, "bulk made a super admin");

    app.delete(&s.key, &format!("{STAFF}/{first}"))
        .await
        .assert_error(409, "Cannot deactivate the company's last super admin");

    let token = app.sign_in(&s.company.email, PASSWORD).await;
    app.send(
        Req::new(
            Method::POST,
            &format!("/external/v1/auth/keys/{}/revoke", s.key.id),
        )
        .bearer(&token),
    )
    .await
    .assert_status(200);
    app.get(&s.key, STAFF)
        .await
        .assert_error(401, "Invalid API credentials");
}

/// The operator's way back in (`wfs-server restore-admin`): a deactivated admin is
/// made an active super admin again, with a new password, and can sign in.
#[tokio::test]
async fn restore_admin_reactivates_a_deactivated_admin_who_can_then_sign_in() {
    let s = Scene::new().await;
    let app = &s.app;
    let first = super_admins(&s).await.remove(0);
    let second_email = format!("second-{}@admins.test", uuid::Uuid::new_v4().simple());
    let second = restore_admin(app, &s, &second_email).await;
    app.delete(&s.key, &format!("{STAFF}/{first}"))
        .await
        .assert_status(200);
    let refused = app
        .send(
            Req::new(Method::POST, "/external/v1/auth/signin")
                .json(&json!({"email": s.company.email, "password": PASSWORD})),
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);

    let again = restore_admin(app, &s, &s.company.email).await;

    assert_eq!(again, first, "the same membership, reactivated");
    let mut admins = super_admins(&s).await;
    admins.sort();
    let mut expected = vec![first, second];
    expected.sort();
    assert_eq!(admins, expected);
    app.sign_in(&s.company.email, PASSWORD).await;
}

/// `Wfs::restore_admin` for `email` in the scene's company; its membership id.
async fn restore_admin(app: &TestApp, s: &Scene, email: &str) -> String {
    let restored = app.restore_admin(&s.company, email).await;
    restored.membership_id.to_string()
}

// ------------------------------------------------------ addresses and order

#[tokio::test]
async fn a_refused_address_is_answered_before_the_scope_and_everything_else() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app
        .key_with(
            &acme,
            json!({"name": "pinned reader", "scopes": ["workforce:read"], "allowedIps": ["203.0.113.5"]}),
        )
        .await;
    let outside = from("198.51.100.9");

    // Needs workforce:write, which the key lacks; the caller is outside the list.
    let res = app
        .send(
            Req::new(Method::POST, ROLES)
                .key(&key)
                .idem(&unique_idem())
                .json(&json!({"title": "Nurse"}))
                .peer(outside),
        )
        .await;
    res.assert_error(403, ADDRESS_REFUSED);
    // Neither a missing Idempotency-Key nor a bad body is reported first.
    app.send(
        Req::new(Method::POST, ROLES)
            .key(&key)
            .raw("{not json")
            .peer(outside),
    )
    .await
    .assert_error(403, ADDRESS_REFUSED);
    // Wrong credentials come before the address.
    let wrong = Key {
        secret: "sec_wrong".into(),
        ..key.clone()
    };
    app.send(Req::new(Method::GET, ROLES).key(&wrong).peer(outside))
        .await
        .assert_error(401, "Invalid API credentials");
    // From the listed address the scope is what fails.
    app.send(
        Req::new(Method::POST, ROLES)
            .key(&key)
            .idem(&unique_idem())
            .json(&json!({"title": "Nurse"}))
            .peer(from("203.0.113.5")),
    )
    .await
    .assert_error(403, "Missing required scope: workforce:write");
}

#[tokio::test]
async fn forwarded_addresses_count_only_behind_a_trusted_proxy_and_fail_closed() {
    let proxy: IpAddr = "10.0.0.1".parse().unwrap();
    let app = TestApp::spawn_with(Config::default().trusted_proxies(vec![proxy])).await;
    let acme = app.company("Acme").await;
    let key = app
        .key_with(
            &acme,
            json!({"name": "pinned", "allowedIps": ["198.51.100.7"]}),
        )
        .await;
    let via_proxy = |forwarded: &str| {
        Req::new(Method::GET, ROLES)
            .key(&key)
            .peer(Some(SocketAddr::new(proxy, 443)))
            .header("x-forwarded-for", forwarded)
    };

    for refused in [
        // A client cannot smuggle an address in front of its real one.
        "198.51.100.7, 203.0.113.9",
        "198.51.100.7, 198.51.100.7:443",
        "198.51.100.7, unknown",
        "198.51.100.7, [198.51.100.7]",
        "198.51.100.7, garbage",
        "198.51.100.7, ",
    ] {
        let res = app.send(via_proxy(refused)).await;
        assert_eq!(res.status.as_u16(), 403, "X-Forwarded-For: {refused}");
        assert_eq!(res.error_message(), ADDRESS_REFUSED, "{refused}");
    }
    for admitted in [
        "203.0.113.1, 198.51.100.7",
        "198.51.100.7",
        "198.51.100.7, 10.0.0.1",
    ] {
        let res = app.send(via_proxy(admitted)).await;
        assert_eq!(
            res.status.as_u16(),
            200,
            "X-Forwarded-For: {admitted}: {:?}",
            res.body
        );
    }
}

// ------------------------------------------------------- sign-in throttle

#[tokio::test]
async fn sign_in_is_throttled_after_10_failures_for_one_login() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;

    for attempt in 1..=10 {
        let res = app.send(sign_in_req(&acme.email, "wrong-password")).await;
        assert_eq!(
            res.status.as_u16(),
            401,
            "attempt {attempt}: {:?}",
            res.body
        );
        assert_eq!(res.error_message(), "Invalid email or password");
    }
    // Even the right password waits now.
    let res = app.send(sign_in_req(&acme.email, PASSWORD)).await;

    res.assert_error(429, THROTTLED);
    assert!(retry_after(&res) <= 15 * 60);
    // The login is the same whatever its case.
    app.send(sign_in_req(&acme.email.to_uppercase(), PASSWORD))
        .await
        .assert_error(429, THROTTLED);
}

/// The probe's lockout: wrong guesses from an attacker's addresses shut the attacker
/// out, and only slow the real admin, who still signs in.
#[tokio::test]
async fn failed_sign_ins_from_elsewhere_never_lock_the_admin_out() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let attacker = from("203.0.113.40");
    for _ in 1..=10 {
        app.send(sign_in_req(&acme.email, "wrong-password").peer(attacker))
            .await
            .assert_error(401, "Invalid email or password");
    }
    // The attacker's address is shut, even with the right password.
    app.send(sign_in_req(&acme.email, PASSWORD).peer(attacker))
        .await
        .assert_error(429, THROTTLED);
    // The admin, from another address, signs in.
    let admin = from("198.51.100.20");
    app.send(sign_in_req(&acme.email, PASSWORD).peer(admin))
        .await
        .assert_status(200);

    // Guesses spread over many addresses slow the login down, never shut it.
    for n in 1..=4u8 {
        app.send(sign_in_req(&acme.email, "wrong-password").peer(from(&format!("192.0.2.{n}"))))
            .await
            .assert_error(401, "Invalid email or password");
    }
    let started = std::time::Instant::now();
    app.send(sign_in_req(&acme.email, PASSWORD).peer(admin))
        .await
        .assert_status(200);
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(900),
        "14 failures: slowed by about a second, took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn sign_in_is_throttled_after_30_attempts_a_minute_from_one_address() {
    let app = TestApp::spawn().await;
    let busy = from("192.0.2.10");

    for n in 1..=30 {
        let res = app
            .send(sign_in_req(&format!("nobody{n}@nowhere.test"), PASSWORD).peer(busy))
            .await;
        assert_eq!(res.status.as_u16(), 401, "attempt {n}: {:?}", res.body);
    }
    let res = app
        .send(sign_in_req("nobody31@nowhere.test", PASSWORD).peer(busy))
        .await;

    res.assert_error(429, THROTTLED);
    assert!(retry_after(&res) <= 60);
    app.send(sign_in_req("nobody31@nowhere.test", PASSWORD).peer(from("192.0.2.11")))
        .await
        .assert_error(401, "Invalid email or password");
}

// ------------------------------------------------------------------ faults

#[tokio::test]
async fn a_panic_while_handling_a_request_answers_500_and_the_service_keeps_serving() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let idem = unique_idem();
    let exploding = Req::new(Method::POST, ROLES)
        .key(&key)
        .idem(&idem)
        .header("content-type", "application/json")
        .build()
        .map(|_| PanickingBody);

    let res = send_through(&app.svc, exploding).await;

    res.assert_status(500);
    assert!(!res.error_message().is_empty());
    app.get(&key, ROLES).await.assert_status(200);
    // A 5xx is not stored: the retry with the same key runs afresh.
    let retry = app
        .send(
            Req::new(Method::POST, ROLES)
                .key(&key)
                .idem(&idem)
                .json(&json!({"title": "Nurse"})),
        )
        .await;
    retry.assert_status(201);
    assert_eq!(retry.header("idempotent-replayed"), None);
}

#[tokio::test]
async fn a_request_stalled_past_the_request_timeout_answers_503_and_its_key_can_be_retried() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    // The same store, served with a short request timeout.
    let svc = WfsService::with_config(
        app.wfs.clone(),
        Config::default().request_timeout(Some(std::time::Duration::from_millis(500))),
    );
    let idem = unique_idem();
    let stalled = Req::new(Method::POST, ROLES)
        .key(&key)
        .idem(&idem)
        .header("content-type", "application/json")
        .build()
        .map(|_| StalledBody);

    let res = send_through(&svc, stalled).await;

    res.assert_status(503);
    assert!(!res.error_message().is_empty());
    retry_after(&res);
    let retry = Req::new(Method::POST, ROLES)
        .key(&key)
        .idem(&idem)
        .json(&json!({"title": "Nurse"}))
        .build();
    let retried = send_through(&svc, retry).await;
    retried.assert_status(201);
    assert_eq!(retried.header("idempotent-replayed"), None);
    assert_eq!(app.get(&key, ROLES).await.body.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_write_cut_off_by_the_request_timeout_rolls_back_and_frees_its_idempotency_key() {
    let s = Scene::new().await;
    let app = &s.app;
    // A thousand members take far longer than 100 ms to create, so the timeout strikes
    // after the idempotency key was claimed and the transaction opened.
    let svc = WfsService::with_config(
        app.wfs.clone(),
        Config::default().request_timeout(Some(std::time::Duration::from_millis(100))),
    );
    let items = Value::Array((0..1000).map(|_| person(&s, 3)).collect());
    let idem = unique_idem();
    let bulk = || {
        Req::new(Method::POST, BULK)
            .key(&s.key)
            .idem(&idem)
            .json(&items)
    };

    let res = send_through(&svc, bulk().build()).await;

    res.assert_status(503);
    assert!(!res.error_message().is_empty());
    retry_after(&res);
    let listed = app.get(&s.key, STAFF).await;
    assert_eq!(
        listed.body.as_array().unwrap().len(),
        1,
        "rolled back: only the admin"
    );
    // An immediate retry with the same key runs afresh: the key was freed before
    // the 503 went out (the clock is pinned, so a key left "in progress" would
    // never reach its lock timeout and answer 409 for ever).
    let retried = app.send(bulk()).await;
    retried.assert_status(200);
    assert_eq!(retried.header("idempotent-replayed"), None);
    assert_eq!(retried.body["success"], 1000, "{}", retried.body["err"]);
    let listed = app.get(&s.key, STAFF).await;
    assert_eq!(listed.body.as_array().unwrap().len(), 1001);
}

#[tokio::test]
async fn a_body_trickled_past_the_body_timeout_answers_408_with_the_error_body_even_on_sign_in() {
    // Arrange: the same store, served with a 300 ms body deadline; bodies arriving a
    // byte every 50 ms, several seconds in all.
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let limit = std::time::Duration::from_millis(300);
    let svc = WfsService::with_config(app.wfs.clone(), Config::default().body_timeout(Some(limit)));
    let every = std::time::Duration::from_millis(50);
    let sign_in =
        serde_json::to_vec(&json!({"email": "ada@acme.test", "password": "x".repeat(64)})).unwrap();
    let trickled_sign_in = sign_in_req("ada@acme.test", "unused")
        .build()
        .map(|_| TrickledBody::new(sign_in, every));
    let idem = unique_idem();
    let role = serde_json::to_vec(&json!({"title": "Nurse"})).unwrap();
    let trickled_write = Req::new(Method::POST, ROLES)
        .key(&key)
        .idem(&idem)
        .header("content-type", "application/json")
        .build()
        .map(|_| TrickledBody::new(role.clone(), every));

    // Act
    let started = std::time::Instant::now();
    let signin = send_through(&svc, trickled_sign_in).await;
    let signin_took = started.elapsed();
    let write = send_through(&svc, trickled_write).await;

    // Assert: 408, the error body, Connection: close, at the deadline (not at the
    // 30 s request timeout, not after the whole body).
    for res in [&signin, &write] {
        res.assert_status(408);
        assert_eq!(res.body["error"]["code"], 408, "{}", res.body);
        assert!(
            res.error_message().contains("did not arrive within 300 ms"),
            "{}",
            res.body
        );
        assert_eq!(res.header("connection"), Some("close"));
    }
    assert!(
        signin_took >= limit && signin_took < std::time::Duration::from_secs(2),
        "answered after {signin_took:?}"
    );
    // Nothing was written, and the Idempotency-Key is free for the retry.
    let retry = Req::new(Method::POST, ROLES)
        .key(&key)
        .idem(&idem)
        .json(&json!({"title": "Nurse"}))
        .build();
    let retried = send_through(&svc, retry).await;
    retried.assert_status(201);
    assert_eq!(retried.header("idempotent-replayed"), None);
    assert_eq!(app.get(&key, ROLES).await.body.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_slow_body_that_arrives_within_the_body_timeout_is_served() {
    // Arrange: bytes every 20 ms, the whole body well within the 10 s default.
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let svc = WfsService::with_config(app.wfs.clone(), Config::default());
    let role = serde_json::to_vec(&json!({"title": "Nurse"})).unwrap();
    let trickled = Req::new(Method::POST, ROLES)
        .key(&key)
        .idem(&unique_idem())
        .header("content-type", "application/json")
        .build()
        .map(|_| TrickledBody::new(role, std::time::Duration::from_millis(20)));

    // Act
    let res = send_through(&svc, trickled).await;

    // Assert
    res.assert_status(201);
}

// ------------------------------------------------------------ input limits

#[tokio::test]
async fn a_single_line_string_over_256_characters_is_400_naming_the_field() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    let long = app
        .post(&key, ROLES, &json!({"title": "T".repeat(257)}))
        .await;
    assert_400_naming(&long, "title", "title of 257 characters");
    // A field may be stricter than 256: the document declares each field's own
    // maxLength (a job role title: 200), and the server holds to it exactly.
    assert_eq!(declared_max_length("CreateJobRoleRequest", "title"), 200);
    let over = app
        .post(&key, ROLES, &json!({"title": "T".repeat(201)}))
        .await;
    assert_400_naming(&over, "title", "title of 201 characters");
    // Characters, not bytes: 200 two-byte characters are fine.
    app.post(&key, ROLES, &json!({"title": "é".repeat(200)}))
        .await
        .assert_status(201);
    // A field whose limit is the general 256: a slot's time zone is checked as a
    // zone only after its length.
    let slot = app
        .post(
            &key,
            "/external/v1/shifts/slots",
            &json!({"timeZone": "Z".repeat(257)}),
        )
        .await;
    assert_400_naming(&slot, "timeZone", "timeZone of 257 characters");
}

#[tokio::test]
async fn a_free_text_string_over_4096_characters_is_400_naming_the_field() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    let long = app
        .post(
            &key,
            ROLES,
            &json!({"title": "Nurse", "desc": "d".repeat(4097)}),
        )
        .await;
    assert_400_naming(&long, "desc", "desc of 4097 characters");
    // A job role's desc declares its own, smaller limit (2000), held exactly.
    assert_eq!(declared_max_length("CreateJobRoleRequest", "desc"), 2000);
    let over = app
        .post(
            &key,
            ROLES,
            &json!({"title": "Nurse", "desc": "d".repeat(2001)}),
        )
        .await;
    assert_400_naming(&over, "desc", "desc of 2001 characters");
    app.post(
        &key,
        ROLES,
        &json!({"title": "Nurse", "desc": "d".repeat(2000)}),
    )
    .await
    .assert_status(201);
}

/// The `maxLength` the served OpenAPI document declares for a schema property.
fn declared_max_length(schema: &str, property: &str) -> u64 {
    let doc: serde_json::Value = serde_json::from_str(&wfs_tower::openapi_json()).unwrap();
    doc["components"]["schemas"][schema]["properties"][property]["maxLength"]
        .as_u64()
        .unwrap_or_else(|| panic!("{schema}.{property} declares no maxLength"))
}

#[tokio::test]
async fn a_control_character_in_a_string_is_400_naming_the_field_except_tab_cr_lf_in_free_text() {
    let app = TestApp::spawn().await;
    let acme = app.company("Acme").await;
    let key = app.key(&acme).await;

    for title in ["Nu\u{0}rse", "Nurse\u{7}", "Nurse\nNight", "Nurse\tNight"] {
        let res = app.post(&key, ROLES, &json!({"title": title})).await;
        assert_400_naming(&res, "title", &format!("title {title:?}"));
    }
    let nul_desc = app
        .post(&key, ROLES, &json!({"title": "Nurse", "desc": "a\u{0}b"}))
        .await;
    assert_400_naming(&nul_desc, "desc", "desc with NUL");
    let created = app
        .post(
            &key,
            ROLES,
            &json!({"title": "Nurse", "desc": "line1\nline2\ttab\r\nline3"}),
        )
        .await;
    created.assert_status(201);
    let stored = job_role::Entity::find_by_id(
        created.body["id"]
            .as_str()
            .unwrap()
            .parse::<uuid::Uuid>()
            .unwrap(),
    )
    .one(app.wfs.store().conn())
    .await
    .unwrap()
    .expect("the role is stored");
    assert_eq!(
        stored.description.as_deref(),
        Some("line1\nline2\ttab\r\nline3"),
        "tab, CR and LF are kept"
    );

    // Sign-in: a 400, never a 500 (PostgreSQL refuses NUL in text).
    for email in [format!("{}\u{0}", acme.email), "a\u{0}@b.test".to_owned()] {
        let res = app.send(sign_in_req(&email, PASSWORD)).await;
        assert_400_naming(&res, "email", "sign-in email with NUL");
    }
    let res = app.send(sign_in_req(&acme.email, "pass\u{0}word")).await;
    assert!(
        res.status.as_u16() == 400 || res.status.as_u16() == 401,
        "a NUL in the password: {res:?}"
    );
}

#[tokio::test]
async fn invisible_format_characters_and_separators_are_400_naming_the_field_in_one_line_strings() {
    let s = Scene::new().await;
    let app = &s.app;
    for title in [
        "Nur\u{200b}se",
        "\u{202e}esruN",
        "Nurse\u{2028}Night",
        "Nurse\u{feff}",
        "Nurse\u{e0041}",
        // Default-ignorable, though not format characters: the combining grapheme
        // joiner, variation selectors, Hangul fillers, Khmer inherent vowels, a
        // Mongolian free variation selector.
        "Nur\u{34f}se",
        "Nurse\u{fe00}",
        "Nurse\u{fe0f}",
        "Nurse\u{e0100}",
        "\u{115f}Nurse",
        "Nur\u{1160}se",
        "Nurse\u{3164}",
        "Nurse\u{ffa0}",
        "Nur\u{17b4}se",
        "Nurse\u{180b}",
    ] {
        let res = app.post(&s.key, ROLES, &json!({"title": title})).await;
        assert_400_naming(&res, "title", &format!("title {title:?}"));
    }
    // A look-alike email never becomes a user: the item goes to `err`, naming it.
    for invisible in ['\u{200b}', '\u{34f}', '\u{fe0f}', '\u{3164}'] {
        let mut item = person(&s, 3);
        let tag = uuid::Uuid::new_v4().simple().to_string();
        item["email"] = json!(format!("user{tag}{invisible}@a.test"));
        let report = app.post(&s.key, BULK, &json!([item])).await;
        report.assert_status(200);
        assert_eq!(report.body["success"], 0, "{invisible:?}: {}", report.body);
        let reason = report.body["err"][0]["reason"].as_str().unwrap();
        assert!(reason.starts_with("email"), "{reason}");
    }
    // Free text keeps the joiners scripts and emoji need, not bidi overrides.
    app.post(
        &s.key,
        ROLES,
        &json!({"title": "Nurse", "desc": "می\u{200c}خواهم 👩\u{200d}⚕️"}),
    )
    .await
    .assert_status(201);
    let res = app
        .post(
            &s.key,
            ROLES,
            &json!({"title": "Nurse", "desc": "a\u{202e}b"}),
        )
        .await;
    assert_400_naming(&res, "desc", "desc with a bidi override");
}

#[tokio::test]
async fn a_json_body_with_anything_after_its_document_is_400_and_writes_nothing() {
    let s = Scene::new().await;
    let app = &s.app;
    for body in [
        r#"{"title":"tg"} xxx"#,
        r#"{"title":"c1"}{"title":"c2"}"#,
        r#"{"title":"c3"} {}"#,
    ] {
        let res = app
            .send(
                Req::new(Method::POST, ROLES)
                    .key(&s.key)
                    .idem(&unique_idem())
                    .raw(body.to_owned()),
            )
            .await;
        res.assert_status(400);
        assert!(
            res.error_message()
                .starts_with("Malformed JSON in request body"),
            "{body}: {}",
            res.error_message()
        );
    }
    // Trailing white space is still one document.
    app.send(
        Req::new(Method::POST, ROLES)
            .key(&s.key)
            .idem(&unique_idem())
            .raw("{\"title\":\"ok\"} \r\n".to_owned()),
    )
    .await
    .assert_status(201);
    let titles: Vec<String> = app
        .get(&s.key, ROLES)
        .await
        .body
        .as_array()
        .map(|roles| {
            roles
                .iter()
                .map(|r| r["title"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default();
    for refused in ["tg", "c1", "c2", "c3"] {
        assert!(
            !titles.iter().any(|t| t == refused),
            "{refused} was created"
        );
    }
}

#[tokio::test]
async fn every_answer_says_x_content_type_options_nosniff() {
    let s = Scene::new().await;
    let app = &s.app;
    let wrong = Key {
        secret: "sec_wrong".into(),
        ..s.key.clone()
    };
    let answers = [
        app.get(&s.key, ROLES).await,
        app.get(&wrong, ROLES).await,
        app.get(&s.key, "/external/v1/nowhere").await,
        app.send(Req::new(Method::GET, "/external/v1/openapi.json"))
            .await,
        app.send(sign_in_req(&s.company.email, "wrong password"))
            .await,
    ];
    for res in answers {
        assert_eq!(
            res.header("x-content-type-options"),
            Some("nosniff"),
            "{} {:?}",
            res.status,
            res.body
        );
    }
}

#[tokio::test]
async fn assignees_over_100_scopes_over_16_and_allowed_ips_over_100_are_400_naming_the_field() {
    let s = Scene::new().await;
    let app = &s.app;
    let slot = slot(&s).await;
    let assignees = |n: usize| -> Vec<Value> {
        (0..n)
            .map(|_| json!({"userId": uuid::Uuid::now_v7().to_string()}))
            .collect()
    };

    let too_many = app
        .post(
            &s.key,
            BOOK,
            &json!({"slotId": slot, "date": "2026-11-18", "assignees": assignees(101)}),
        )
        .await;
    assert_400_naming(&too_many, "assignees", "101 assignees");
    // 100 pass the limit and meet the next check: unknown staff.
    app.post(
        &s.key,
        BOOK,
        &json!({"slotId": slot, "date": "2026-11-18", "assignees": assignees(100)}),
    )
    .await
    .assert_error(404, "Staff member not found");

    let create_key = |body: Value| {
        Req::new(Method::POST, KEYS)
            .bearer(&s.company.token)
            .json(&body)
    };
    let scopes = app
        .send(create_key(
            json!({"name": "k", "scopes": vec!["workforce:read"; 17]}),
        ))
        .await;
    assert_400_naming(&scopes, "scopes", "17 scopes");
    let ips: Vec<String> = (0..=100).map(|i| format!("198.51.100.{i}")).collect();
    let allowed = app
        .send(create_key(json!({"name": "k", "allowedIps": ips})))
        .await;
    assert_400_naming(&allowed, "allowedIps", "101 allowedIps");
    app.send(create_key(
        json!({"name": "k", "allowedIps": ips[..100].to_vec()}),
    ))
    .await
    .assert_status(201);
}

#[tokio::test]
async fn bulk_staff_limits_refuse_the_request_or_the_item() {
    let s = Scene::new().await;
    let app = &s.app;

    let thousand_and_one: Vec<Value> = (0..1001).map(|_| person(&s, 3)).collect();
    let res = app
        .post(&s.key, BULK, &Value::Array(thousand_and_one))
        .await;
    res.assert_status(400);
    assert!(!res.error_message().is_empty());

    let mut skills = Vec::new();
    for n in 0..51 {
        let id = uuid::Uuid::now_v7();
        skill_set::ActiveModel {
            id: Set(id),
            company_id: Set(s.company.id.parse().unwrap()),
            code: Set(format!("SK{n}")),
            name: Set(format!("Skill {n}")),
            created_at: Set(t0()),
        }
        .insert(app.wfs.store().conn())
        .await
        .unwrap();
        skills.push(id.to_string());
    }
    let mut fifty_one = person(&s, 3);
    fifty_one["skillSetIds"] = json!(skills);
    let mut fifty = person(&s, 3);
    fifty["skillSetIds"] = json!(skills[..50]);
    let mut bell = person(&s, 3);
    bell["firstName"] = json!("Gr\u{7}ace");
    let mut long_name = person(&s, 3);
    long_name["lastName"] = json!("L".repeat(257));

    let report = app
        .post(
            &s.key,
            BULK,
            &json!([fifty_one.clone(), fifty, bell.clone(), long_name.clone()]),
        )
        .await;

    report.assert_status(200);
    assert_eq!(report.body["success"], 1, "{}", report.body);
    assert_eq!(report.body["failed"], 3, "{}", report.body);
    let errs = report.body["err"].as_array().unwrap();
    for ((item, field), err) in [
        (&fifty_one, "skillSetIds"),
        (&bell, "firstName"),
        (&long_name, "lastName"),
    ]
    .into_iter()
    .zip(errs)
    {
        assert_eq!(err["email"], item["email"], "{err}");
        let reason = err["reason"].as_str().unwrap();
        assert!(reason.contains(field), "{field}: {reason}");
    }
}
