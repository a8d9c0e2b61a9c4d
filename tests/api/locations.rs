//! `/external/v1/locations`.

use crate::helpers::*;
use serde_json::{Value, json};
use wfs_core::persistence::entity::{location, membership};
use wfs_core::sea_orm::EntityTrait;

const LOCATIONS: &str = "/external/v1/locations";

fn location_path(id: &str) -> String {
    format!("{LOCATIONS}/{id}")
}

/// Creates a location; returns its id.
async fn create_location(app: &TestApp, key: &Key, body: Value) -> String {
    let res = app.post(key, LOCATIONS, &body).await;
    res.assert_status(201);
    res.body["id"].as_str().unwrap().to_owned()
}

async fn names(app: &TestApp, key: &Key) -> Vec<String> {
    let res = app.get(key, LOCATIONS).await;
    res.assert_status(200);
    res.body
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap().to_owned())
        .collect()
}

/// A member assigned to `branch`, created through bulk staff; returns its membership id.
async fn member_at(app: &TestApp, key: &Key, branch: &str, role: &str, n: u32) -> String {
    let res = app
        .post(
            key,
            "/external/v1/staff/bulk",
            &json!([{
                "firstName": "Mem", "lastName": format!("Ber{n}"), "userName": format!("member{n}"),
                "email": format!("member{n}@example.test"), "phone": "+15550001111", "gender": "female",
                "countryId": "US", "assignedBranchId": branch, "jobRoleId": role, "privilege": 3
            }]),
        )
        .await;
    res.assert_status(200);
    assert_eq!(res.body["success"], 1, "{}", res.body);
    let staff = app
        .get(key, &format!("/external/v1/staff?branchId={branch}"))
        .await;
    staff.body.as_array().unwrap().last().unwrap()["membershipId"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn resource_version(app: &TestApp, membership_id: &str) -> i64 {
    membership::Entity::find_by_id(membership_id.parse::<uuid::Uuid>().unwrap())
        .one(app.wfs.store().conn())
        .await
        .unwrap()
        .unwrap()
        .resource_version
}

#[tokio::test]
async fn creating_a_location_answers_201_with_the_creation_fields_only() {
    // Arrange
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    // Act
    let res = app
        .post(
            &key,
            LOCATIONS,
            &json!({
                "name": "North Clinic", "address": "1 Main St", "countryId": "US", "stateId": "CA",
                "cityId": "SF", "zipCode": "94103", "hexcode": "#1A2B3C", "symbol": "NO",
                "latitude": 37.7749, "longitude": -122.4194
            }),
        )
        .await;

    // Assert
    res.assert_status(201);
    let id = res.body["id"].as_str().unwrap();
    assert_eq!(
        res.body,
        json!({
            "id": id, "name": "North Clinic", "address": "1 Main St", "latitude": 37.7749,
            "longitude": -122.4194, "hexcode": "#1A2B3C", "symbol": "NO"
        })
    );
}

#[tokio::test]
async fn a_location_created_with_only_a_name_gets_an_empty_address_null_coordinates_and_defaults() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;

    let res = app
        .post(&key, LOCATIONS, &json!({"name": "  Downtown Clinic "}))
        .await;

    res.assert_status(201);
    assert_eq!(res.body["name"], "Downtown Clinic");
    assert_eq!(res.body["address"], "");
    assert_eq!(res.body["latitude"], Value::Null);
    assert_eq!(res.body["longitude"], Value::Null);
    assert_eq!(res.body["hexcode"], "#3B82F6");
    assert_eq!(res.body["symbol"], "DC");
    let listed = &app.get(&key, LOCATIONS).await.body[0];
    assert_eq!(listed["city"], Value::Null);
    assert_eq!(listed["state"], Value::Null);
    assert_eq!(listed["locationDetectionEnabled"], false);
}

#[tokio::test]
async fn the_list_shows_city_and_state_ids_and_never_the_address_or_zip_code() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = create_location(
        &app,
        &key,
        json!({"name": "Ward", "address": "742 Evergreen Terrace", "zipCode": "49007",
               "cityId": "springfield", "stateId": "OR", "countryId": "US",
               "latitude": 44, "longitude": -123.5}),
    )
    .await;

    let res = app.get(&key, LOCATIONS).await;

    res.assert_status(200);
    assert_eq!(
        res.body,
        json!([{
            "id": id, "name": "Ward", "city": "springfield", "state": "OR", "latitude": 44,
            "longitude": -123.5, "hexcode": "#3B82F6", "symbol": "WA", "locationDetectionEnabled": false
        }])
    );
    let text = res.body.to_string();
    assert!(
        !text.contains("Evergreen") && !text.contains("49007"),
        "{text}"
    );
}

#[tokio::test]
async fn the_list_is_alphabetical_ignoring_case_then_by_exact_name() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    for name in ["north", "Central", "ambulatory", "Beach", "central", "Zeta"] {
        create_location(&app, &key, json!({ "name": name })).await;
    }

    assert_eq!(
        names(&app, &key).await,
        ["ambulatory", "Beach", "Central", "central", "north", "Zeta"]
    );
}

#[tokio::test]
async fn locations_with_the_same_name_are_ordered_by_id() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(create_location(&app, &key, json!({"name": "Same"})).await);
    }
    ids.sort();

    let listed: Vec<String> = app
        .get(&key, LOCATIONS)
        .await
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap().to_owned())
        .collect();

    assert_eq!(listed, ids);
}

#[tokio::test]
async fn bad_creations_are_400_naming_the_field_and_create_nothing() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    for (body, hint) in [
        (json!({}), "name"),
        (json!({"name": "   "}), "name"),
        (json!({"name": 7}), "name"),
        (json!({"name": "x", "hexcode": "blue"}), "hexcode"),
        (json!({"name": "x", "hexcode": "#12345"}), "hexcode"),
        (json!({"name": "x", "latitude": 90.5}), "latitude"),
        (json!({"name": "x", "latitude": -91}), "latitude"),
        (json!({"name": "x", "longitude": 180.01}), "longitude"),
        (json!({"name": "x", "longitude": "east"}), "longitude"),
        (json!({"name": "x", "symbol": ""}), "symbol"),
        (
            json!({"name": "x", "symbol": "ABCDEFGHIJKLMNOPQ"}),
            "symbol",
        ),
        (json!({"name": "x".repeat(201)}), "name"),
        (json!([{"name": "x"}]), "body"),
    ] {
        let res = app.post(&key, LOCATIONS, &body).await;
        res.assert_status(400);
        assert!(
            res.error_message().contains(hint),
            "{body}: {}",
            res.error_message()
        );
    }
    for ok in [
        json!({"name": "Edge", "latitude": 90, "longitude": -180, "hexcode": "#fff"}),
        json!({"name": "Edge", "latitude": -90, "longitude": 180, "hexcode": "#A1b2C3"}),
    ] {
        app.post(&key, LOCATIONS, &ok).await.assert_status(201);
    }
    assert_eq!(names(&app, &key).await, ["Edge", "Edge"]);
}

#[tokio::test]
async fn patch_changes_only_the_fields_sent_and_answers_the_list_item() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = create_location(
        &app,
        &key,
        json!({"name": "Ward", "cityId": "sf", "stateId": "CA", "latitude": 1.5, "longitude": 2.5, "symbol": "WD"}),
    )
    .await;

    let res = app
        .patch(
            &key,
            &location_path(&id),
            &json!({"name": "East Ward", "hexcode": "#00FF00", "locationDetectionEnabled": true}),
        )
        .await;

    res.assert_status(200);
    let expected = json!({
        "id": id, "name": "East Ward", "city": "sf", "state": "CA", "latitude": 1.5,
        "longitude": 2.5, "hexcode": "#00FF00", "symbol": "WD", "locationDetectionEnabled": true
    });
    assert_eq!(res.body, expected);
    assert_eq!(app.get(&key, LOCATIONS).await.body, json!([expected]));
}

#[tokio::test]
async fn patch_accepts_every_updatable_field_and_null_clears_the_nullable_ones() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = create_location(
        &app,
        &key,
        json!({"name": "Ward", "address": "1 Main St", "zipCode": "12345", "countryId": "US",
               "cityId": "sf", "stateId": "CA", "latitude": 1.5, "longitude": 2.5}),
    )
    .await;

    let updated = app
        .patch(
            &key,
            &location_path(&id),
            &json!({"address": "2 Side St", "zipCode": "54321", "countryId": "CA", "stateId": "ON",
                    "cityId": "toronto", "symbol": "TO", "latitude": -10, "longitude": 20}),
        )
        .await;
    updated.assert_status(200);
    assert_eq!(updated.body["city"], "toronto");
    assert_eq!(updated.body["state"], "ON");
    assert_eq!(updated.body["latitude"], -10);
    assert_eq!(updated.body["longitude"], 20);
    assert_eq!(updated.body["symbol"], "TO");
    assert!(updated.body.get("address").is_none() && updated.body.get("zipCode").is_none());

    let cleared = app
        .patch(
            &key,
            &location_path(&id),
            &json!({"address": null, "zipCode": null, "countryId": null, "stateId": null,
                    "cityId": null, "latitude": null, "longitude": null}),
        )
        .await;

    cleared.assert_status(200);
    assert_eq!(cleared.body["city"], Value::Null);
    assert_eq!(cleared.body["state"], Value::Null);
    assert_eq!(cleared.body["latitude"], Value::Null);
    assert_eq!(cleared.body["longitude"], Value::Null);
    assert_eq!(cleared.body["name"], "Ward");
    let stored = location::Entity::find_by_id(id.parse::<uuid::Uuid>().unwrap())
        .one(app.wfs.store().conn())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.address, stored.zip_code, stored.country_id),
        (None, None, None)
    );
}

#[tokio::test]
async fn bad_patches_are_400_and_change_nothing() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let id = create_location(&app, &key, json!({"name": "Ward"})).await;
    for (body, hint) in [
        (json!({}), "at least one field"),
        (json!({"colour": "#fff"}), "colour"),
        (json!({"city": "sf"}), "city"),
        (json!({"name": null}), "name"),
        (json!({"name": " "}), "name"),
        (json!({"hexcode": null}), "hexcode"),
        (json!({"hexcode": "#GGG"}), "hexcode"),
        (json!({"symbol": null}), "symbol"),
        (
            json!({"locationDetectionEnabled": null}),
            "locationDetectionEnabled",
        ),
        (
            json!({"locationDetectionEnabled": "yes"}),
            "locationDetectionEnabled",
        ),
        (json!({"latitude": 100}), "latitude"),
        (json!({"longitude": -200}), "longitude"),
        (json!({"name": "Fine", "latitude": 91}), "latitude"),
    ] {
        let res = app.patch(&key, &location_path(&id), &body).await;
        res.assert_status(400);
        assert!(
            res.error_message().contains(hint),
            "{body}: {}",
            res.error_message()
        );
    }
    assert_eq!(names(&app, &key).await, ["Ward"]);
}

#[tokio::test]
async fn unknown_and_malformed_location_ids_are_404() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    for id in [uuid::Uuid::now_v7().to_string(), "nope".to_owned()] {
        app.patch(&key, &location_path(&id), &json!({"name": "x"}))
            .await
            .assert_error(404, "Location not found");
    }
}

#[tokio::test]
async fn another_companys_location_is_invisible_and_answers_404_to_patch() {
    let app = TestApp::spawn().await;
    let acme = app.key(&app.company("Acme").await).await;
    let globex = app.key(&app.company("Globex").await).await;
    let acme_location = create_location(&app, &acme, json!({"name": "Acme HQ"})).await;
    create_location(&app, &globex, json!({"name": "Globex HQ"})).await;

    assert_eq!(names(&app, &globex).await, ["Globex HQ"]);
    app.patch(
        &globex,
        &location_path(&acme_location),
        &json!({"name": "Stolen"}),
    )
    .await
    .assert_error(404, "Location not found");
    assert_eq!(names(&app, &acme).await, ["Acme HQ"]);
}

#[tokio::test]
async fn renaming_a_location_gives_every_member_there_a_new_resource_version() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let north = create_location(&app, &key, json!({"name": "North"})).await;
    let south = create_location(&app, &key, json!({"name": "South"})).await;
    let role = app.create_role(&key, "Nurse").await;
    let a = member_at(&app, &key, &north, &role, 1).await;
    let b = member_at(&app, &key, &north, &role, 2).await;
    let elsewhere = member_at(&app, &key, &south, &role, 3).await;
    app.delete(&key, &format!("/external/v1/staff/{b}"))
        .await
        .assert_status(200);
    let before = [
        resource_version(&app, &a).await,
        resource_version(&app, &b).await,
        resource_version(&app, &elsewhere).await,
    ];

    app.patch(&key, &location_path(&north), &json!({"name": "North Wing"}))
        .await
        .assert_status(200);

    let after = [
        resource_version(&app, &a).await,
        resource_version(&app, &b).await,
        resource_version(&app, &elsewhere).await,
    ];
    assert!(
        after[0] > before.iter().copied().max().unwrap(),
        "{before:?} {after:?}"
    );
    assert!(
        after[1] > before.iter().copied().max().unwrap(),
        "{before:?} {after:?}"
    );
    assert_ne!(after[0], after[1], "each member takes its own version");
    assert_eq!(after[2], before[2], "members elsewhere keep their version");
}

#[tokio::test]
async fn a_patch_that_keeps_the_name_leaves_resource_versions_alone() {
    let app = TestApp::spawn().await;
    let key = app.key(&app.company("Acme").await).await;
    let north = create_location(&app, &key, json!({"name": "North"})).await;
    let role = app.create_role(&key, "Nurse").await;
    let member = member_at(&app, &key, &north, &role, 1).await;
    let before = resource_version(&app, &member).await;

    for body in [
        json!({"name": "North"}),
        json!({"hexcode": "#000", "latitude": 3}),
    ] {
        app.patch(&key, &location_path(&north), &body)
            .await
            .assert_status(200);
    }

    assert_eq!(resource_version(&app, &member).await, before);
}

#[tokio::test]
async fn reading_locations_needs_workforce_read_and_writing_needs_workforce_write() {
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

    app.get(&read_only, LOCATIONS).await.assert_status(200);
    app.post(&read_only, LOCATIONS, &json!({"name": "x"}))
        .await
        .assert_error(403, "Missing required scope: workforce:write");
    app.get(&write_only, LOCATIONS)
        .await
        .assert_error(403, "Missing required scope: workforce:read");
    let id = create_location(&app, &write_only, json!({"name": "x"})).await;
    app.patch(&read_only, &location_path(&id), &json!({"name": "y"}))
        .await
        .assert_error(403, "Missing required scope: workforce:write");
}
