//! `/external/v1/staff`: list, deactivate, bulk create; and the welcome-email outbox.

use crate::helpers::*;
use serde_json::{Value, json};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use wfs_core::persistence::entity::{member_skill, membership, outbox, skill_set, user};
use wfs_core::sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};
use wfs_core::service::outbox::{Email, MailFuture, Mailer};

const STAFF: &str = "/external/v1/staff";
const BULK: &str = "/external/v1/staff/bulk";

fn staff_path(id: &str) -> String {
    format!("{STAFF}/{id}")
}

/// A valid bulk item for person `n`.
fn person(n: &str, branch: &str, role: &str) -> Value {
    json!({
        "firstName": format!("First{n}"), "lastName": format!("Last{n}"),
        "userName": format!("user{n}"), "email": format!("person{n}@example.test"),
        "phone": "+1 415 555 0100", "gender": "female", "countryId": "US",
        "assignedBranchId": branch, "jobRoleId": role, "privilege": 3
    })
}

/// `person` with some fields replaced.
fn person_with(n: &str, branch: &str, role: &str, changes: Value) -> Value {
    let mut item = person(n, branch, role);
    for (k, v) in changes.as_object().unwrap() {
        item[k] = v.clone();
    }
    item
}

/// A company's key with one location and one job role (symbol `RN`).
struct Setup {
    company: Company,
    key: Key,
    branch: String,
    role: String,
}

async fn setup(app: &TestApp, name: &str) -> Setup {
    let company = app.company(name).await;
    let key = app.key(&company).await;
    let branch = app
        .post(
            &key,
            "/external/v1/locations",
            &json!({"name": format!("{name} Ward")}),
        )
        .await
        .body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let role = app
        .post(
            &key,
            "/external/v1/job-roles",
            &json!({"title": "Nurse", "symbol": "RN"}),
        )
        .await
        .body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    Setup {
        company,
        key,
        branch,
        role,
    }
}

async fn bulk(app: &TestApp, key: &Key, items: Value) -> TestResponse {
    let res = app.post(key, BULK, &items).await;
    res.assert_status(200);
    res
}

async fn list(app: &TestApp, key: &Key, query: &str) -> Vec<Value> {
    let res = app.get(key, &format!("{STAFF}{query}")).await;
    res.assert_status(200);
    res.body.as_array().unwrap().clone()
}

/// Membership ids of a staff list.
fn ids(staff: &[Value]) -> Vec<&str> {
    staff
        .iter()
        .map(|m| m["membershipId"].as_str().unwrap())
        .collect()
}

/// The error reasons of a bulk answer, in order.
fn reasons(res: &TestResponse) -> Vec<String> {
    res.body["err"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["reason"].as_str().unwrap().to_owned())
        .collect()
}

async fn membership_row(app: &TestApp, id: &str) -> membership::Model {
    membership::Entity::find_by_id(id.parse::<uuid::Uuid>().unwrap())
        .one(app.wfs.store().conn())
        .await
        .unwrap()
        .unwrap()
}

async fn outbox_rows(app: &TestApp) -> Vec<outbox::Model> {
    outbox::Entity::find()
        .all(app.wfs.store().conn())
        .await
        .unwrap()
}

/// The member created for `email`, found in the active list by its user.
async fn member_by_email(app: &TestApp, key: &Key, email: &str) -> Value {
    let user = user::Entity::find()
        .filter(user::Column::Email.eq(email))
        .one(app.wfs.store().conn())
        .await
        .unwrap()
        .expect("user exists");
    list(app, key, "")
        .await
        .into_iter()
        .find(|m| m["userId"] == user.id.to_string())
        .expect("member listed")
}

async fn insert_skill_set(app: &TestApp, company: &str, code: &str) -> String {
    let id = uuid::Uuid::now_v7();
    skill_set::ActiveModel {
        id: Set(id),
        company_id: Set(company.parse().unwrap()),
        code: Set(code.into()),
        name: Set(format!("{code} certificate")),
        created_at: Set(t0()),
    }
    .insert(app.wfs.store().conn())
    .await
    .unwrap();
    id.to_string()
}

/// A mailer that records what it sends, fails the first `fail` sends, and may
/// take its time.
#[derive(Debug, Default)]
struct RecordingMailer {
    sent: Mutex<Vec<Email>>,
    fail: AtomicUsize,
    delay_ms: u64,
}

impl RecordingMailer {
    fn sent(&self) -> Vec<Email> {
        self.sent.lock().unwrap().clone()
    }
}

impl Mailer for RecordingMailer {
    fn send<'a>(&'a self, email: &'a Email) -> MailFuture<'a> {
        Box::pin(async move {
            tokio::time::sleep(std::time::Duration::from_millis(self.delay_ms)).await;
            if self
                .fail
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
                return Err("421 mail system unavailable".into());
            }
            self.sent.lock().unwrap().push(email.clone());
            Ok(())
        })
    }
}

// ---------------------------------------------------------------- GET /staff

#[tokio::test]
async fn the_company_admin_is_listed_as_an_active_super_admin_with_identifiers_only() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    let staff = list(&app, &key, "").await;

    assert_eq!(staff.len(), 1);
    let admin = staff[0].as_object().unwrap();
    let mut fields: Vec<&str> = admin.keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "branchId",
            "jobRoleId",
            "membershipId",
            "privilege",
            "status",
            "userId"
        ]
    );
    assert_eq!(admin["privilege"], 1);
    assert_eq!(admin["status"], 1);
    assert_eq!(admin["branchId"], Value::Null);
    assert_eq!(admin["jobRoleId"], Value::Null);
}

#[tokio::test]
async fn created_members_are_listed_with_their_branch_role_and_privilege_in_creation_order() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    bulk(
        &app,
        &s.key,
        json!([
            person_with("1", &s.branch, &s.role, json!({"privilege": 2})),
            person("2", &s.branch, &s.role),
        ]),
    )
    .await;

    let staff = list(&app, &s.key, "").await;

    assert_eq!(staff.len(), 3);
    assert_eq!(staff[0]["privilege"], 1, "the admin came first");
    for (member, privilege) in staff[1..].iter().zip([2, 3]) {
        assert_eq!(member["branchId"], s.branch.as_str());
        assert_eq!(member["jobRoleId"], s.role.as_str());
        assert_eq!(member["privilege"], privilege);
        assert_eq!(member["status"], 1);
    }
    assert_eq!(list(&app, &s.key, "").await, staff, "the order is stable");
}

#[tokio::test]
async fn staff_can_be_filtered_by_branch_and_job_role() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    let other_branch = app
        .post(&s.key, "/external/v1/locations", &json!({"name": "Other"}))
        .await
        .body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let other_role = app.create_role(&s.key, "Porter").await;
    bulk(
        &app,
        &s.key,
        json!([
            person("1", &s.branch, &s.role),
            person("2", &s.branch, &other_role),
            person("3", &other_branch, &s.role),
        ]),
    )
    .await;
    let user_of = |m: &Value| m["userId"].as_str().unwrap().to_owned();
    let one = user_of(&member_by_email(&app, &s.key, "person1@example.test").await);
    let two = user_of(&member_by_email(&app, &s.key, "person2@example.test").await);
    let three = user_of(&member_by_email(&app, &s.key, "person3@example.test").await);
    let users = |staff: Vec<Value>| -> Vec<String> { staff.iter().map(user_of).collect() };

    assert_eq!(
        users(list(&app, &s.key, &format!("?branchId={}", s.branch)).await),
        [one.clone(), two.clone()]
    );
    assert_eq!(
        users(list(&app, &s.key, &format!("?jobRoleId={}", s.role)).await),
        [one.clone(), three.clone()]
    );
    assert_eq!(
        users(
            list(
                &app,
                &s.key,
                &format!("?branchId={}&jobRoleId={}", s.branch, s.role)
            )
            .await
        ),
        [one]
    );
    assert_eq!(
        users(
            list(
                &app,
                &s.key,
                &format!("?branchId={other_branch}&jobRoleId={other_role}")
            )
            .await
        ),
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn unknown_or_malformed_filter_ids_give_an_empty_list() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    bulk(&app, &s.key, json!([person("1", &s.branch, &s.role)])).await;
    let unknown = uuid::Uuid::now_v7();

    for query in [
        format!("?branchId={unknown}"),
        format!("?jobRoleId={unknown}"),
        "?branchId=nope".to_owned(),
        "?jobRoleId=RN".to_owned(),
        "?branchId=".to_owned(),
        format!("?branchId={}&jobRoleId=nope", s.branch),
    ] {
        let res = app.get(&s.key, &format!("{STAFF}{query}")).await;
        res.assert_status(200);
        assert_eq!(res.body, json!([]), "{query}");
    }
}

#[tokio::test]
async fn the_status_filter_defaults_to_active_and_accepts_only_0_or_1() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    bulk(&app, &s.key, json!([person("1", &s.branch, &s.role)])).await;
    let member = member_by_email(&app, &s.key, "person1@example.test").await;
    let id = member["membershipId"].as_str().unwrap();
    app.delete(&s.key, &staff_path(id)).await.assert_status(200);

    assert_eq!(list(&app, &s.key, "").await.len(), 1, "only the admin");
    assert_eq!(list(&app, &s.key, "?status=1").await.len(), 1);
    let deactivated = list(&app, &s.key, "?status=0").await;
    assert_eq!(ids(&deactivated), [id]);
    assert_eq!(deactivated[0]["status"], 0);
    for bad in ["2", "-1", "active", "", "1.0"] {
        let res = app.get(&s.key, &format!("{STAFF}?status={bad}")).await;
        res.assert_status(400);
        assert!(
            res.error_message().contains("status"),
            "{bad}: {:?}",
            res.body
        );
    }
}

#[tokio::test]
async fn another_companys_branch_and_role_ids_filter_to_an_empty_list() {
    let app = TestApp::spawn().await;
    let acme = setup(&app, "Acme").await;
    let globex = setup(&app, "Globex").await;
    bulk(
        &app,
        &acme.key,
        json!([person("1", &acme.branch, &acme.role)]),
    )
    .await;

    for query in [
        format!("?branchId={}", acme.branch),
        format!("?jobRoleId={}", acme.role),
    ] {
        assert_eq!(
            list(&app, &globex.key, &query).await,
            Vec::<Value>::new(),
            "{query}"
        );
    }
    assert_eq!(
        list(&app, &globex.key, "").await.len(),
        1,
        "only Globex's admin"
    );
}

#[tokio::test]
async fn no_personal_data_appears_in_staff_or_location_reads() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    let location = app
        .post(
            &s.key,
            "/external/v1/locations",
            &json!({"name": "Secret Clinic", "address": "99 Quixotic Boulevard", "zipCode": "Z9X8Y7"}),
        )
        .await;
    location.assert_status(201);
    let secret_branch = location.body["id"].as_str().unwrap().to_owned();
    bulk(
        &app,
        &s.key,
        json!([
            person_with(
                "1",
                &s.branch,
                &s.role,
                json!({
                    "firstName": "Zebulon", "lastName": "Quagmire", "userName": "zquagmire",
                    "email": "Zebulon.Q@private.test", "phone": "+49 151 2345 6789"
                })
            ),
            person_with(
                "2",
                &secret_branch,
                &s.role,
                json!({
                    "firstName": "Xanthippe", "lastName": "Vortigern", "userName": "xvort",
                    "email": "xanthippe@private.test", "phone": "+44 20 7946 0958"
                })
            ),
        ]),
    )
    .await;
    let member = member_by_email(&app, &s.key, "xanthippe@private.test").await;
    app.delete(
        &s.key,
        &staff_path(member["membershipId"].as_str().unwrap()),
    )
    .await
    .assert_status(200);

    let mut bodies = Vec::new();
    for path in [
        STAFF.to_owned(),
        format!("{STAFF}?status=0"),
        format!("{STAFF}?branchId={}", s.branch),
        format!("{STAFF}?jobRoleId={}", s.role),
        "/external/v1/locations".to_owned(),
    ] {
        let res = app.get(&s.key, &path).await;
        res.assert_status(200);
        assert!(!res.body.as_array().unwrap().is_empty(), "{path}");
        bodies.push(res.body.to_string().to_lowercase());
    }

    // Only strings no identifier can contain by chance (UUIDs are hex and dashes).
    for secret in [
        "zebulon",
        "quagmire",
        "zquagmire",
        "private.test",
        "4915123456789",
        "xanthippe",
        "vortigern",
        "xvort",
        "442079460958",
        "quixotic",
        "boulevard",
        "z9x8y7",
        "first1",
        "last1",
        "example.test",
        "admin-",
        "acme.test",
    ] {
        for body in &bodies {
            assert!(!body.contains(secret), "{secret} leaked in {body}");
        }
    }
}

// ------------------------------------------------------- DELETE /staff/{id}

#[tokio::test]
async fn deactivating_a_member_sets_status_0_keeps_the_user_and_takes_a_new_version() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    bulk(&app, &s.key, json!([person("1", &s.branch, &s.role)])).await;
    let member = member_by_email(&app, &s.key, "person1@example.test").await;
    let id = member["membershipId"].as_str().unwrap();
    let before = membership_row(&app, id).await.resource_version;

    let res = app.delete(&s.key, &staff_path(id)).await;

    res.assert_status(200);
    assert_eq!(res.body, json!({"message": "Staff member deactivated"}));
    let row = membership_row(&app, id).await;
    assert_eq!(row.status, 0);
    assert!(row.resource_version > before);
    let user_id: uuid::Uuid = member["userId"].as_str().unwrap().parse().unwrap();
    assert!(
        user::Entity::find_by_id(user_id)
            .one(app.wfs.store().conn())
            .await
            .unwrap()
            .is_some(),
        "the user account is kept"
    );
    assert!(!ids(&list(&app, &s.key, "").await).contains(&id));
}

#[tokio::test]
async fn deactivating_a_deactivated_member_is_200_again_without_a_new_version() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    bulk(&app, &s.key, json!([person("1", &s.branch, &s.role)])).await;
    let member = member_by_email(&app, &s.key, "person1@example.test").await;
    let id = member["membershipId"].as_str().unwrap();
    app.delete(&s.key, &staff_path(id)).await.assert_status(200);
    let first = membership_row(&app, id).await;

    let again = app.delete(&s.key, &staff_path(id)).await;

    again.assert_status(200);
    assert_eq!(again.body, json!({"message": "Staff member deactivated"}));
    assert_eq!(membership_row(&app, id).await, first, "nothing changed");
}

#[tokio::test]
async fn unknown_and_malformed_membership_ids_are_404() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    for id in [uuid::Uuid::now_v7().to_string(), "nope".to_owned()] {
        app.delete(&key, &staff_path(&id))
            .await
            .assert_error(404, "Staff member not found");
    }
}

#[tokio::test]
async fn another_companys_member_answers_404_and_stays_active() {
    let app = TestApp::spawn().await;
    let acme = setup(&app, "Acme").await;
    let globex = app.key(&app.company("Globex").await).await;
    bulk(
        &app,
        &acme.key,
        json!([person("1", &acme.branch, &acme.role)]),
    )
    .await;
    let member = member_by_email(&app, &acme.key, "person1@example.test").await;
    let id = member["membershipId"].as_str().unwrap();

    app.delete(&globex, &staff_path(id))
        .await
        .assert_error(404, "Staff member not found");

    assert_eq!(membership_row(&app, id).await.status, 1);
}

// --------------------------------------------------------- POST /staff/bulk

#[tokio::test]
async fn bulk_creation_reports_every_item_and_creates_the_valid_ones() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;

    let res = bulk(
        &app,
        &s.key,
        json!([
            person("1", &s.branch, &s.role),
            person_with("2", &s.branch, &s.role, json!({"gender": "other"})),
            person("3", &s.branch, &s.role),
        ]),
    )
    .await;

    assert_eq!(res.body["success"], 2);
    assert_eq!(res.body["failed"], 1);
    assert_eq!(res.body["total"], 3);
    assert!(res.body["message"].is_string());
    assert_eq!(
        res.body["err"],
        json!([{
            "firstName": "First2", "lastName": "Last2", "email": "person2@example.test",
            "status": "failed", "reason": "gender must be 'male' or 'female' (got 'other')"
        }])
    );
    assert_eq!(
        list(&app, &s.key, "").await.len(),
        3,
        "admin and two members"
    );
}

#[tokio::test]
async fn a_created_member_has_a_user_without_password_and_unverified_skills() {
    let app = TestApp::spawn().await;
    let Setup {
        company,
        key,
        branch,
        role,
    } = setup(&app, "Acme").await;
    let bls = insert_skill_set(&app, &company.id, "BLS").await;
    let acls = insert_skill_set(&app, &company.id, "ACLS").await;

    let res = bulk(
        &app,
        &key,
        json!([person_with(
            "1",
            &branch,
            &role,
            json!({
                "email": "  Mixed.Case@Example.TEST ", "phone": "+1 (415) 555-0123",
                "gender": "male", "skillSetIds": [bls, acls, bls]
            })
        )]),
    )
    .await;

    assert_eq!(res.body["success"], 1, "{}", res.body);
    let user = user::Entity::find()
        .filter(user::Column::Email.eq("mixed.case@example.test"))
        .one(app.wfs.store().conn())
        .await
        .unwrap()
        .expect("stored lower-cased");
    assert!(user.password_hash.is_none());
    assert!(user.must_change_password);
    assert_eq!(user.phone.as_deref(), Some("+14155550123"));
    assert_eq!(user.gender.as_deref(), Some("male"));
    assert_eq!(user.user_name.as_deref(), Some("user1"));
    let member = member_by_email(&app, &key, "mixed.case@example.test").await;
    let skills = member_skill::Entity::find()
        .filter(
            member_skill::Column::MembershipId.eq(member["membershipId"]
                .as_str()
                .unwrap()
                .parse::<uuid::Uuid>()
                .unwrap()),
        )
        .all(app.wfs.store().conn())
        .await
        .unwrap();
    assert_eq!(skills.len(), 2);
    assert!(skills.iter().all(|s| s.verified_at.is_none()));
}

#[tokio::test]
async fn every_new_member_takes_its_own_increasing_resource_version() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    let admin = list(&app, &s.key, "").await[0]["membershipId"]
        .as_str()
        .unwrap()
        .to_owned();
    let admin_version = membership_row(&app, &admin).await.resource_version;

    bulk(
        &app,
        &s.key,
        json!([
            person("1", &s.branch, &s.role),
            person("2", &s.branch, &s.role)
        ]),
    )
    .await;

    let mut versions = Vec::new();
    for email in ["person1@example.test", "person2@example.test"] {
        let m = member_by_email(&app, &s.key, email).await;
        versions.push(
            membership_row(&app, m["membershipId"].as_str().unwrap())
                .await
                .resource_version,
        );
    }
    assert!(
        admin_version < versions[0] && versions[0] < versions[1],
        "{admin_version} {versions:?}"
    );
}

#[tokio::test]
async fn job_roles_may_be_named_by_symbol_ignoring_case() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    app.post(
        &s.key,
        "/external/v1/job-roles",
        &json!({"title": "Porter A", "symbol": "PT"}),
    )
    .await
    .assert_status(201);
    app.post(
        &s.key,
        "/external/v1/job-roles",
        &json!({"title": "Porter B", "symbol": "pt"}),
    )
    .await
    .assert_status(201);
    let gone = app
        .post(
            &s.key,
            "/external/v1/job-roles",
            &json!({"title": "Old", "symbol": "OLD"}),
        )
        .await
        .body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.delete(&s.key, &format!("/external/v1/job-roles/{gone}"))
        .await
        .assert_status(200);

    let res = bulk(
        &app,
        &s.key,
        json!([
            person("1", &s.branch, "rn"),
            person("2", &s.branch, "PT"),
            person("3", &s.branch, "OLD"),
            person("4", &s.branch, &gone),
            person("5", &s.branch, "NOPE"),
            person("6", &s.branch, ""),
        ]),
    )
    .await;

    assert_eq!(res.body["success"], 1);
    let r = reasons(&res);
    assert!(
        r[0].contains("jobRoleId") && r[0].contains("several"),
        "{r:?}"
    );
    for reason in &r[1..4] {
        assert_eq!(reason, "jobRoleId: Job role not found");
    }
    assert!(r[4].contains("jobRoleId"), "{r:?}");
    let member = member_by_email(&app, &s.key, "person1@example.test").await;
    assert_eq!(member["jobRoleId"], s.role.as_str());
}

#[tokio::test]
async fn invalid_items_are_reported_with_a_reason_naming_the_field_and_the_rest_are_created() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    let mut missing_phone = person("m", &s.branch, &s.role);
    missing_phone.as_object_mut().unwrap().remove("phone");
    let cases = [
        (missing_phone, "phone"),
        (
            person_with("a", &s.branch, &s.role, json!({"firstName": 5})),
            "firstName",
        ),
        (
            person_with("b", &s.branch, &s.role, json!({"lastName": "  "})),
            "lastName",
        ),
        (
            person_with("c", &s.branch, &s.role, json!({"userName": "has space"})),
            "userName",
        ),
        (
            person_with("d", &s.branch, &s.role, json!({"email": "not-an-email"})),
            "email",
        ),
        (
            person_with("e", &s.branch, &s.role, json!({"phone": "4155550100"})),
            "phone",
        ),
        (
            person_with("f", &s.branch, &s.role, json!({"gender": "Female"})),
            "gender",
        ),
        (
            person_with("g", &s.branch, &s.role, json!({"countryId": ""})),
            "countryId",
        ),
        (
            person_with("h", &s.branch, &s.role, json!({"privilege": 0})),
            "privilege",
        ),
        (
            person_with("i", &s.branch, &s.role, json!({"privilege": 4})),
            "privilege",
        ),
        (
            person_with("j", &s.branch, &s.role, json!({"privilege": "3"})),
            "privilege",
        ),
        (
            person_with("k", &s.branch, &s.role, json!({"skillSetIds": "x"})),
            "skillSetIds",
        ),
        (
            person_with("l", &s.branch, &s.role, json!({"skillSetIds": ["nope"]})),
            "skillSetIds",
        ),
        (
            person_with("n", "nope", &s.role, json!({})),
            "assignedBranchId",
        ),
        (
            person_with("o", &uuid::Uuid::now_v7().to_string(), &s.role, json!({})),
            "assignedBranchId",
        ),
        (
            person_with("p", &s.branch, &uuid::Uuid::now_v7().to_string(), json!({})),
            "jobRoleId",
        ),
        (json!("just a string"), "object"),
    ];
    let mut items: Vec<Value> = cases.iter().map(|(item, _)| item.clone()).collect();
    items.push(person("ok", &s.branch, &s.role));

    let res = bulk(&app, &s.key, Value::Array(items)).await;

    assert_eq!(res.body["success"], 1);
    assert_eq!(res.body["failed"], cases.len());
    assert_eq!(res.body["total"], cases.len() + 1);
    let errs = res.body["err"].as_array().unwrap();
    for ((item, hint), err) in cases.iter().zip(errs) {
        let reason = err["reason"].as_str().unwrap();
        assert!(reason.contains(hint), "{item}: {reason}");
        assert_eq!(err["status"], "failed");
        assert_eq!(
            err["email"],
            item.get("email").cloned().unwrap_or(json!(""))
        );
        assert!(err["firstName"].is_string() && err["lastName"].is_string());
    }
    assert_eq!(
        errs[1]["firstName"], "",
        "a non-string name is reported empty"
    );
    assert_eq!(list(&app, &s.key, "").await.len(), 2);
}

#[tokio::test]
async fn duplicate_emails_in_the_store_or_earlier_in_the_request_are_reported() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    bulk(&app, &s.key, json!([person("1", &s.branch, &s.role)])).await;

    let res = bulk(
        &app,
        &s.key,
        json!([
            person_with(
                "2",
                &s.branch,
                &s.role,
                json!({"email": "PERSON1@example.test"})
            ),
            person_with(
                "3",
                &s.branch,
                &s.role,
                json!({"email": s.company.email.to_uppercase()})
            ),
            person("4", &s.branch, &s.role),
            person_with(
                "5",
                &s.branch,
                &s.role,
                json!({"email": "Person4@Example.test"})
            ),
        ]),
    )
    .await;

    assert_eq!(res.body["success"], 1);
    assert_eq!(
        reasons(&res),
        [
            "email is not available",
            "email is not available",
            "email appears in an earlier item of this request",
        ]
    );
    assert_eq!(res.body["err"][2]["email"], "Person4@Example.test");
    assert_eq!(list(&app, &s.key, "").await.len(), 3);
}

#[tokio::test]
async fn duplicate_user_names_in_the_store_or_earlier_in_the_request_are_reported() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    bulk(&app, &s.key, json!([person("1", &s.branch, &s.role)])).await;

    let res = bulk(
        &app,
        &s.key,
        json!([
            person_with("2", &s.branch, &s.role, json!({"userName": "USER1"})),
            person_with("3", &s.branch, &s.role, json!({"userName": "shared"})),
            person_with("4", &s.branch, &s.role, json!({"userName": "Shared"})),
        ]),
    )
    .await;

    assert_eq!(res.body["success"], 1);
    assert_eq!(
        reasons(&res),
        [
            "userName is not available",
            "userName appears in an earlier item of this request",
        ]
    );
}

#[tokio::test]
async fn a_bulk_report_tells_nothing_about_other_companies_users() {
    let app = TestApp::spawn().await;
    let acme = setup(&app, "Acme").await;
    let globex = setup(&app, "Globex").await;
    bulk(
        &app,
        &acme.key,
        json!([person("1", &acme.branch, &acme.role)]),
    )
    .await;
    bulk(
        &app,
        &globex.key,
        json!([person("2", &globex.branch, &globex.role)]),
    )
    .await;
    let made_up = uuid::Uuid::now_v7().to_string();

    // A made-up branch answers the same for another company's email or userName
    // as for a fresh one: the caller's own references come first.
    let probe = bulk(
        &app,
        &globex.key,
        json!([
            person_with("1", &made_up, &globex.role, json!({"userName": "fresh1"})),
            person_with(
                "3",
                &made_up,
                &globex.role,
                json!({"email": "person1@x.test", "userName": "user1"})
            ),
            person("4", &made_up, &globex.role),
        ]),
    )
    .await;
    assert_eq!(
        reasons(&probe),
        ["assignedBranchId: Location not found"; 3],
        "{}",
        probe.body
    );

    // With valid references, a taken email reads the same whether its holder is
    // in the caller's company or in another.
    let taken = bulk(
        &app,
        &globex.key,
        json!([
            person_with(
                "5",
                &globex.branch,
                &globex.role,
                json!({"email": "person1@example.test"})
            ),
            person_with(
                "6",
                &globex.branch,
                &globex.role,
                json!({"email": "person2@example.test"})
            ),
            person_with(
                "7",
                &globex.branch,
                &globex.role,
                json!({"userName": "USER1"})
            ),
            person_with(
                "8",
                &globex.branch,
                &globex.role,
                json!({"userName": "user2"})
            ),
        ]),
    )
    .await;
    assert_eq!(
        reasons(&taken),
        [
            "email is not available",
            "email is not available",
            "userName is not available",
            "userName is not available",
        ]
    );
    assert!(!taken.body.to_string().contains("exists"), "{}", taken.body);
}

#[tokio::test]
async fn a_request_whose_items_all_fail_is_still_a_200_report() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;

    let res = bulk(
        &app,
        &s.key,
        json!([
            person_with("1", &s.branch, &s.role, json!({"privilege": 9})),
            {}
        ]),
    )
    .await;

    assert_eq!(res.body["success"], 0);
    assert_eq!(res.body["failed"], 2);
    assert_eq!(res.body["total"], 2);
    assert!(outbox_rows(&app).await.is_empty());
}

#[tokio::test]
async fn a_bulk_body_that_is_not_a_non_empty_array_of_at_most_1000_items_is_400() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    let too_many: Vec<Value> = (0..1001)
        .map(|n| person(&n.to_string(), &s.branch, &s.role))
        .collect();

    for (body, hint) in [
        (json!({"items": []}), "array"),
        (json!(person("1", &s.branch, &s.role)), "array"),
        (json!("x"), "array"),
        (json!([]), "at least one"),
        (Value::Array(too_many), "at most 1000"),
    ] {
        let res = app.post(&s.key, BULK, &body).await;
        res.assert_status(400);
        assert!(
            res.error_message().contains(hint),
            "{}",
            res.error_message()
        );
    }
    let malformed = app
        .send(
            Req::new(http::Method::POST, BULK)
                .key(&s.key)
                .idem(&unique_idem())
                .raw("[{\"firstName\": "),
        )
        .await;
    malformed.assert_status(400);
    assert_eq!(list(&app, &s.key, "").await.len(), 1, "nobody created");
}

#[tokio::test]
async fn a_thousand_members_can_be_created_in_one_request() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    let items: Vec<Value> = (0..1000)
        .map(|n| person(&n.to_string(), &s.branch, &s.role))
        .collect();

    let res = bulk(&app, &s.key, Value::Array(items)).await;

    assert_eq!(res.body["success"], 1000, "{}", res.body["err"]);
    assert_eq!(list(&app, &s.key, "").await.len(), 1001);
    assert_eq!(outbox_rows(&app).await.len(), 1000);
}

#[tokio::test]
async fn another_companys_branch_role_and_skill_sets_are_unknown_references() {
    let app = TestApp::spawn().await;
    let acme = setup(&app, "Acme").await;
    let globex_company = app.company("Globex").await;
    let globex = app.key(&globex_company).await;
    let globex_skill = insert_skill_set(&app, &globex_company.id, "BLS").await;
    app.post(
        &globex,
        "/external/v1/job-roles",
        &json!({"title": "Theirs", "symbol": "TH"}),
    )
    .await
    .assert_status(201);
    let globex_branch = app
        .post(
            &globex,
            "/external/v1/locations",
            &json!({"name": "Globex Ward"}),
        )
        .await
        .body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let globex_role = app.create_role(&globex, "Globex Nurse").await;

    let res = bulk(
        &app,
        &acme.key,
        json!([
            person("1", &globex_branch, &acme.role),
            person("2", &acme.branch, &globex_role),
            person("3", &acme.branch, "TH"),
            person_with(
                "4",
                &acme.branch,
                &acme.role,
                json!({"skillSetIds": [globex_skill]})
            ),
        ]),
    )
    .await;

    assert_eq!(res.body["success"], 0);
    assert_eq!(
        reasons(&res),
        [
            "assignedBranchId: Location not found".to_owned(),
            "jobRoleId: Job role not found".to_owned(),
            "jobRoleId: Job role not found".to_owned(),
            format!("skillSetIds: Skill set not found: {globex_skill}"),
        ]
    );
    assert_eq!(
        list(&app, &globex, "").await.len(),
        1,
        "nothing created at Globex"
    );
}

#[tokio::test]
async fn concurrent_requests_with_the_same_email_create_one_member() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    let item = json!([person("1", &s.branch, &s.role)]);

    let (a, b) = tokio::join!(app.post(&s.key, BULK, &item), app.post(&s.key, BULK, &item));

    a.assert_status(200);
    b.assert_status(200);
    let successes = a.body["success"].as_u64().unwrap() + b.body["success"].as_u64().unwrap();
    assert_eq!(successes, 1, "{} {}", a.body, b.body);
    let loser = if a.body["success"] == 1 { &b } else { &a };
    assert_eq!(reasons(loser), ["email is not available"]);
    assert_eq!(list(&app, &s.key, "").await.len(), 2);
    assert_eq!(outbox_rows(&app).await.len(), 1);
}

#[tokio::test]
async fn retrying_a_bulk_request_with_its_idempotency_key_creates_nobody_twice() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    let body = json!([person("1", &s.branch, &s.role)]);
    let idem = unique_idem();
    let send = || {
        app.send(
            Req::new(http::Method::POST, BULK)
                .key(&s.key)
                .idem(&idem)
                .json(&body),
        )
    };

    let first = send().await;
    let retry = send().await;

    first.assert_status(200);
    retry.assert_status(200);
    assert_eq!(retry.body, first.body);
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    assert_eq!(list(&app, &s.key, "").await.len(), 2);
    assert_eq!(outbox_rows(&app).await.len(), 1);
}

#[tokio::test]
async fn staff_routes_need_the_workforce_scopes() {
    let app = TestApp::spawn().await;
    let company = app.company("Acme").await;
    let read_only = app
        .key_with(&company, json!({"name": "r", "scopes": ["workforce:read"]}))
        .await;
    let write_only = app
        .key_with(
            &company,
            json!({"name": "w", "scopes": ["workforce:write"]}),
        )
        .await;

    app.get(&write_only, STAFF)
        .await
        .assert_error(403, "Missing required scope: workforce:read");
    app.post(&read_only, BULK, &json!([{}]))
        .await
        .assert_error(403, "Missing required scope: workforce:write");
    app.delete(&read_only, &staff_path(&uuid::Uuid::now_v7().to_string()))
        .await
        .assert_error(403, "Missing required scope: workforce:write");
}

// ------------------------------------------------------------ welcome emails

#[tokio::test]
async fn each_created_member_gets_one_welcome_email_and_failed_items_none() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    bulk(
        &app,
        &s.key,
        json!([
            person("1", &s.branch, &s.role),
            person_with("2", &s.branch, &s.role, json!({"gender": "x"})),
            person("3", &s.branch, &s.role),
        ]),
    )
    .await;
    let mailer = RecordingMailer::default();

    let report = app.wfs.deliver_outbox(&mailer, 10).await.unwrap();

    assert_eq!((report.claimed, report.sent, report.failed), (2, 2, 0));
    let sent = mailer.sent();
    let mut to: Vec<&str> = sent.iter().map(|e| e.to.as_str()).collect();
    to.sort_unstable();
    assert_eq!(to, ["person1@example.test", "person3@example.test"]);
    assert!(sent.iter().all(|e| e.subject == "Welcome to Acme"));
    let first = sent
        .iter()
        .find(|e| e.to == "person1@example.test")
        .unwrap();
    assert!(
        first.text.contains("First1") && first.text.contains("user1"),
        "{}",
        first.text
    );
    let again = app.wfs.deliver_outbox(&mailer, 10).await.unwrap();
    assert_eq!(again.claimed, 0, "sent rows are never sent again");
    assert!(outbox_rows(&app).await.iter().all(|r| r.sent_at.is_some()));
}

#[tokio::test]
async fn a_failed_send_keeps_the_member_and_is_retried_after_a_backoff_then_sent_once() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    bulk(&app, &s.key, json!([person("1", &s.branch, &s.role)])).await;
    let mailer = RecordingMailer {
        fail: AtomicUsize::new(2),
        ..Default::default()
    };

    let first = app.wfs.deliver_outbox(&mailer, 10).await.unwrap();

    assert_eq!((first.sent, first.failed), (0, 1));
    let row = &outbox_rows(&app).await[0];
    assert_eq!(row.attempts, 1);
    assert!(row.last_error.as_deref().unwrap().contains("421"));
    assert_eq!(row.next_attempt_at, t0() + chrono::Duration::seconds(30));
    assert_eq!(list(&app, &s.key, "").await.len(), 2, "the member stays");
    assert_eq!(
        app.wfs.deliver_outbox(&mailer, 10).await.unwrap().claimed,
        0,
        "not due yet"
    );

    app.clock.advance(chrono::Duration::seconds(30));
    let second = app.wfs.deliver_outbox(&mailer, 10).await.unwrap();
    assert_eq!(second.failed, 1);
    assert_eq!(
        outbox_rows(&app).await[0].next_attempt_at,
        t0() + chrono::Duration::seconds(90),
        "the delay doubles"
    );

    app.clock.advance(chrono::Duration::seconds(60));
    let third = app.wfs.deliver_outbox(&mailer, 10).await.unwrap();
    assert_eq!(third.sent, 1);
    app.clock.advance(chrono::Duration::hours(2));
    assert_eq!(
        app.wfs.deliver_outbox(&mailer, 10).await.unwrap().claimed,
        0
    );
    assert_eq!(mailer.sent().len(), 1);
    assert_eq!(outbox_rows(&app).await[0].attempts, 3);
    assert_eq!(
        list(&app, &s.key, "").await.len(),
        2,
        "still exactly one member"
    );
}

#[tokio::test]
async fn two_senders_running_at_once_never_send_the_same_email_twice() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    let items: Vec<Value> = (0..6)
        .map(|n| person(&n.to_string(), &s.branch, &s.role))
        .collect();
    bulk(&app, &s.key, Value::Array(items)).await;
    let mailer = RecordingMailer {
        delay_ms: 20,
        ..Default::default()
    };

    let (a, b) = tokio::join!(
        app.wfs.deliver_outbox(&mailer, 10),
        app.wfs.deliver_outbox(&mailer, 10)
    );

    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.sent + b.sent, 6, "{a:?} {b:?}");
    let mut to: Vec<String> = mailer.sent().into_iter().map(|e| e.to).collect();
    to.sort();
    to.dedup();
    assert_eq!(to.len(), 6, "each email once");
}

#[tokio::test]
async fn a_sender_that_died_mid_send_loses_its_claim_when_the_lease_runs_out() {
    let app = TestApp::spawn().await;
    let s = setup(&app, "Acme").await;
    bulk(&app, &s.key, json!([person("1", &s.branch, &s.role)])).await;
    let mailer = RecordingMailer::default();
    // A sender claimed the row and vanished: its lease is all that is left.
    let row = outbox_rows(&app).await.remove(0);
    let mut claimed: outbox::ActiveModel = row.into();
    claimed.next_attempt_at = Set(t0() + wfs_core::service::outbox::LEASE);
    claimed.update(app.wfs.store().conn()).await.unwrap();

    assert_eq!(
        app.wfs.deliver_outbox(&mailer, 10).await.unwrap().claimed,
        0
    );
    app.clock.advance(wfs_core::service::outbox::LEASE);
    assert_eq!(app.wfs.deliver_outbox(&mailer, 10).await.unwrap().sent, 1);
    assert_eq!(mailer.sent().len(), 1);
}
