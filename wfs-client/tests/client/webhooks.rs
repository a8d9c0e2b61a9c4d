//! Receiving webhooks: deliveries are signed here exactly as the server signs them,
//! with the `standardwebhooks` crate's `Webhook::sign`, then checked and parsed by
//! `wfs_client::webhooks`.

use chrono::{TimeZone, Utc};
use http::{HeaderMap, HeaderValue};
use standardwebhooks::Webhook;
use wfs_client::webhooks::{
    self, EVENT_TYPES, Event, EventData, SecretError, Verifier, VerifyError,
};

/// The endpoint's secret before a rotation, and after it.
const PREVIOUS: &str = "whsec_kp1qMwZdekGIcJwsyljLD1ixip/5t4GvIr4ZwlrNzjg=";
const NEW: &str = "whsec_bYUTilJqsSCOBLXfNY/Vnb2qTzUL7Hza+Bg+uWK8WnU=";
/// Another endpoint's secret.
const OTHER: &str = "whsec_oFKUNimKZamMhMOdm6jGXx40CENyIF/zuZ/b57OoHr8=";

const ID: &str = "0193a4a2-7c1e-7d4e-9b8a-3f2e1d0c9b8a";

const SHIFT_CANCELLED: &str = r#"{"type":"shift.cancelled","timestamp":"2026-11-25T09:30:00Z","data":{"id":"sh_1","slotId":"sl_1","branchId":"br_1","userId":"u_1","status":"cancelled","start":"2026-12-07T14:00:00Z","end":"2026-12-07T22:00:00Z","clockedIn":null,"clockedOut":null,"totalBreakTime":0}}"#;

fn now() -> i64 {
    Utc::now().timestamp()
}

/// `v1,<base64>`: what the server puts in `webhook-signature` for one secret.
fn sign(secret: &str, id: &str, timestamp: i64, body: &str) -> String {
    Webhook::new(secret)
        .unwrap()
        .sign(id, timestamp, body.as_bytes())
        .unwrap()
}

fn headers(id: &str, timestamp: i64, signature: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("webhook-id", HeaderValue::from_str(id).unwrap());
    headers.insert("webhook-timestamp", HeaderValue::from(timestamp));
    headers.insert(
        "webhook-signature",
        HeaderValue::from_str(signature).unwrap(),
    );
    headers
}

/// The headers of a delivery of `body` signed now with `secret`.
fn signed(secret: &str, body: &str) -> HeaderMap {
    let timestamp = now();
    headers(ID, timestamp, &sign(secret, ID, timestamp, body))
}

/// The event a delivery of `{"type": event_type, "timestamp": ..., "data": data}` reads as.
fn receive(event_type: &str, data: &str) -> Event {
    let body =
        format!(r#"{{"type":"{event_type}","timestamp":"2026-11-25T09:30:00Z","data":{data}}}"#);
    let verifier = Verifier::new([NEW]).unwrap();
    verifier
        .verify(&signed(NEW, &body), body.as_bytes())
        .unwrap_or_else(|e| panic!("{event_type} refused: {e}"))
}

fn refusal(secrets: &[&str], headers: &HeaderMap, body: &str) -> VerifyError {
    match webhooks::verify(secrets, headers, body.as_bytes()) {
        Ok(event) => panic!("accepted {event:?}"),
        Err(e) => e,
    }
}

// --- Signatures, headers and timestamps -------------------------------------------

#[test]
fn a_delivery_signed_with_the_secret_is_accepted_with_its_id_and_timestamp() {
    // Arrange
    let headers = signed(NEW, SHIFT_CANCELLED);

    // Act
    let event = webhooks::verify(&[NEW], &headers, SHIFT_CANCELLED.as_bytes()).unwrap();

    // Assert
    assert_eq!(event.id, ID);
    assert_eq!(
        event.timestamp,
        Utc.with_ymd_and_hms(2026, 11, 25, 9, 30, 0).unwrap()
    );
    assert_eq!(event.event_type(), "shift.cancelled");
    let EventData::ShiftCancelled(shift) = event.kind else {
        panic!("not a cancellation: {:?}", event.kind);
    };
    assert_eq!(shift.id, "sh_1");
}

#[test]
fn a_tampered_body_is_refused() {
    let headers = signed(NEW, SHIFT_CANCELLED);
    let tampered = SHIFT_CANCELLED.replace("\"u_1\"", "\"u_2\"");

    let error = refusal(&[NEW], &headers, &tampered);

    assert!(matches!(error, VerifyError::BadSignature), "{error:?}");
}

#[test]
fn a_reserialised_body_is_refused_so_the_raw_body_must_be_verified() {
    let headers = signed(NEW, SHIFT_CANCELLED);
    let value: serde_json::Value = serde_json::from_str(SHIFT_CANCELLED).unwrap();
    let pretty = serde_json::to_string_pretty(&value).unwrap();

    let error = refusal(&[NEW], &headers, &pretty);

    assert!(matches!(error, VerifyError::BadSignature), "{error:?}");
}

#[test]
fn a_delivery_signed_with_another_secret_is_refused() {
    let headers = signed(OTHER, SHIFT_CANCELLED);

    let error = refusal(&[NEW, PREVIOUS], &headers, SHIFT_CANCELLED);

    assert!(matches!(error, VerifyError::BadSignature), "{error:?}");
    assert_eq!(
        error.to_string(),
        "no signature in `webhook-signature` matches a secret"
    );
}

#[test]
fn a_timestamp_older_than_five_minutes_is_refused_even_when_correctly_signed() {
    let stale = now() - 6 * 60;
    let headers = headers(ID, stale, &sign(NEW, ID, stale, SHIFT_CANCELLED));

    let error = refusal(&[NEW], &headers, SHIFT_CANCELLED);

    assert!(matches!(error, VerifyError::StaleTimestamp), "{error:?}");
}

#[test]
fn a_timestamp_four_minutes_old_is_accepted() {
    let recent = now() - 4 * 60;
    let headers = headers(ID, recent, &sign(NEW, ID, recent, SHIFT_CANCELLED));

    assert!(webhooks::verify(&[NEW], &headers, SHIFT_CANCELLED.as_bytes()).is_ok());
}

#[test]
fn a_timestamp_more_than_five_minutes_ahead_is_refused() {
    let ahead = now() + 6 * 60;
    let headers = headers(ID, ahead, &sign(NEW, ID, ahead, SHIFT_CANCELLED));

    let error = refusal(&[NEW], &headers, SHIFT_CANCELLED);

    assert!(matches!(error, VerifyError::FutureTimestamp), "{error:?}");
}

#[test]
fn a_signature_for_another_timestamp_is_refused() {
    let timestamp = now();
    let headers = headers(
        ID,
        timestamp,
        &sign(NEW, ID, timestamp - 1, SHIFT_CANCELLED),
    );

    let error = refusal(&[NEW], &headers, SHIFT_CANCELLED);

    assert!(matches!(error, VerifyError::BadSignature), "{error:?}");
}

#[test]
fn a_signature_for_another_event_id_is_refused() {
    let timestamp = now();
    let headers = headers(
        "another-event",
        timestamp,
        &sign(NEW, ID, timestamp, SHIFT_CANCELLED),
    );

    let error = refusal(&[NEW], &headers, SHIFT_CANCELLED);

    assert!(matches!(error, VerifyError::BadSignature), "{error:?}");
}

#[test]
fn each_missing_header_is_refused_and_named() {
    for header in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        // Arrange
        let mut headers = signed(NEW, SHIFT_CANCELLED);
        headers.remove(header);

        // Act
        let error = refusal(&[NEW], &headers, SHIFT_CANCELLED);

        // Assert
        assert!(
            matches!(error, VerifyError::MissingHeader(name) if name == header),
            "{header}: {error:?}"
        );
        assert_eq!(error.to_string(), format!("missing `{header}` header"));
    }
}

#[test]
fn a_timestamp_that_is_not_unix_seconds_is_refused() {
    let mut headers = signed(NEW, SHIFT_CANCELLED);
    headers.insert(
        "webhook-timestamp",
        HeaderValue::from_static("2026-11-25T09:30:00Z"),
    );

    let error = refusal(&[NEW], &headers, SHIFT_CANCELLED);

    assert!(
        matches!(error, VerifyError::MalformedHeader("webhook-timestamp")),
        "{error:?}"
    );
}

#[test]
fn a_body_that_is_not_utf8_is_refused_as_unsigned() {
    let headers = signed(NEW, SHIFT_CANCELLED);

    let error = webhooks::verify(&[NEW], &headers, b"\xff\xfe{}").unwrap_err();

    assert!(matches!(error, VerifyError::BadSignature), "{error:?}");
}

// --- Secret rotation ----------------------------------------------------------------

#[test]
fn a_header_signed_with_the_new_and_the_previous_secret_verifies_with_either() {
    // Arrange: the 24 hours after a rotation, the server signs with both.
    let timestamp = now();
    let both = format!(
        "{} {}",
        sign(NEW, ID, timestamp, SHIFT_CANCELLED),
        sign(PREVIOUS, ID, timestamp, SHIFT_CANCELLED)
    );
    let headers = headers(ID, timestamp, &both);

    // Act and assert: a receiver not yet told of the rotation, one that moved on, and
    // one that holds both.
    for secrets in [
        &[PREVIOUS][..],
        &[NEW],
        &[NEW, PREVIOUS],
        &[OTHER, PREVIOUS],
    ] {
        let event = webhooks::verify(secrets, &headers, SHIFT_CANCELLED.as_bytes())
            .unwrap_or_else(|e| panic!("{} secret(s): {e}", secrets.len()));
        assert_eq!(event.id, ID);
    }
    let error = refusal(&[OTHER], &headers, SHIFT_CANCELLED);
    assert!(matches!(error, VerifyError::BadSignature), "{error:?}");
}

#[test]
fn a_verifier_holding_two_secrets_accepts_a_delivery_signed_with_either_alone() {
    let verifier = Verifier::new([NEW, PREVIOUS]).unwrap();

    for secret in [NEW, PREVIOUS] {
        let headers = signed(secret, SHIFT_CANCELLED);
        assert!(
            verifier
                .verify(&headers, SHIFT_CANCELLED.as_bytes())
                .is_ok()
        );
    }
}

#[test]
fn secrets_are_read_with_or_without_surrounding_spaces() {
    let verifier = Verifier::new([format!(" {NEW} "), format!("{PREVIOUS}\n")]).unwrap();

    let headers = signed(PREVIOUS, SHIFT_CANCELLED);

    assert!(
        verifier
            .verify(&headers, SHIFT_CANCELLED.as_bytes())
            .is_ok()
    );
}

#[test]
fn unusable_secrets_are_refused_by_position_without_echoing_them() {
    let no_secret: [&str; 0] = [];
    assert_eq!(Verifier::new(no_secret).unwrap_err(), SecretError::Missing);

    let error = Verifier::new([NEW, "whsec_not base64!"]).unwrap_err();
    assert_eq!(error, SecretError::Malformed { position: 2 });
    assert!(!error.to_string().contains("not base64!"), "{error}");

    assert_eq!(
        Verifier::new(["whsec_"]).unwrap_err(),
        SecretError::Malformed { position: 1 }
    );

    let headers = signed(NEW, SHIFT_CANCELLED);
    let error = refusal(&["whsec_%%%"], &headers, SHIFT_CANCELLED);
    assert!(
        matches!(
            error,
            VerifyError::Secret(SecretError::Malformed { position: 1 })
        ),
        "{error:?}"
    );
}

#[test]
fn a_verifier_never_shows_its_secrets() {
    let verifier = Verifier::new([NEW, PREVIOUS]).unwrap();

    let debug = format!("{verifier:?}");

    assert_eq!(debug, "Verifier { secrets: 2, .. }");
}

// --- Events ---------------------------------------------------------------------------

#[test]
fn workforce_resource_updated_reads_its_snake_case_data() {
    let event = receive(
        "workforce.resource.updated",
        r#"{"staff_resource_id":"m_1","resource_version":42,"updated_at":"2026-11-25T09:29:59.123Z"}"#,
    );

    let EventData::WorkforceResourceUpdated(data) = event.kind else {
        panic!("{:?}", event.kind);
    };
    assert_eq!(data.staff_resource_id, "m_1");
    assert_eq!(data.resource_version, 42);
    assert_eq!(
        data.updated_at,
        "2026-11-25T09:29:59.123Z"
            .parse::<chrono::DateTime<Utc>>()
            .unwrap()
    );
}

#[test]
fn workforce_resource_updated_in_camel_case_is_not_an_event() {
    let body = r#"{"type":"workforce.resource.updated","timestamp":"2026-11-25T09:30:00Z","data":{"staffResourceId":"m_1","resourceVersion":42,"updatedAt":"2026-11-25T09:29:59Z"}}"#;

    let error = refusal(&[NEW], &signed(NEW, body), body);

    let VerifyError::NotAnEvent(reason) = &error else {
        panic!("{error:?}");
    };
    let reason = reason.to_string();
    assert!(
        reason.contains("`workforce.resource.updated` data")
            && reason.contains("staff_resource_id"),
        "{reason}"
    );
}

#[test]
fn workforce_resource_deleted_reads_the_tombstone() {
    let event = receive(
        "workforce.resource.deleted",
        r#"{"staff_resource_id":"m_1","deleted":true,"resource_version":43,"updated_at":"2026-11-25T09:30:00Z"}"#,
    );

    let EventData::WorkforceResourceDeleted(tombstone) = event.kind else {
        panic!("{:?}", event.kind);
    };
    assert_eq!(tombstone.staff_resource_id, "m_1");
    assert!(tombstone.deleted);
    assert_eq!(tombstone.resource_version, 43);
}

#[test]
fn shift_slot_created_reads_the_slot_as_get_shifts_lists_it() {
    let event = receive(
        "shift_slot.created",
        r##"{"id":"sl_1","startTime":"09:00","endTime":"17:00","dayOfWeek":1,"maxStaffRequired":3,"timeZone":"America/New_York","hours":8.0,"shiftName":"Day","shiftColor":"#336699","openShift":true,"isOncall":false,"unpaidBreak":30,"swappable":true,"branch":{"id":"br_1","name":"North Clinic"},"jobRole":{"id":"jr_1","title":"Nurse"}}"##,
    );

    let EventData::ShiftSlotCreated(slot) = event.kind else {
        panic!("{:?}", event.kind);
    };
    assert_eq!(slot.id, "sl_1");
    assert_eq!(slot.start_time.as_str(), "09:00");
    assert_eq!(slot.end_time.as_str(), "17:00");
    assert_eq!(slot.day_of_week, 1);
    assert_eq!(slot.max_staff_required, 3);
    assert_eq!(slot.time_zone, "America/New_York");
    assert_eq!(slot.hours, 8.0);
    assert_eq!(slot.shift_name, "Day");
    assert_eq!(slot.shift_color, "#336699");
    assert!(slot.open_shift && !slot.is_oncall && slot.swappable);
    assert_eq!(slot.unpaid_break, 30);
    assert_eq!(slot.branch.name, "North Clinic");
    assert_eq!(slot.job_role.title, "Nurse");
}

#[test]
fn the_three_shift_events_read_the_shift_record() {
    let open = r#"{"id":"sh_1","slotId":"sl_1","branchId":"br_1","userId":null,"status":"pending","start":"2026-12-07T14:00:00Z","end":"2026-12-07T22:00:00Z","clockedIn":null,"clockedOut":null,"totalBreakTime":0}"#;
    let worked = r#"{"id":"sh_1","slotId":"sl_1","branchId":"br_1","userId":"u_1","status":"confirmed","start":"2026-12-07T14:00:00Z","end":"2026-12-07T22:00:00Z","clockedIn":"2026-12-07T13:58:00Z","clockedOut":"2026-12-07T22:03:00Z","totalBreakTime":30}"#;

    let EventData::ShiftCreated(created) = receive("shift.created", open).kind else {
        panic!("not shift.created");
    };
    assert_eq!(created.user_id, None);
    assert_eq!(created.status, "pending");
    assert_eq!(created.clocked_in, None);

    let EventData::ShiftUpdated(updated) = receive("shift.updated", worked).kind else {
        panic!("not shift.updated");
    };
    assert_eq!(updated.user_id.as_deref(), Some("u_1"));
    assert_eq!(updated.slot_id, "sl_1");
    assert_eq!(updated.branch_id, "br_1");
    assert_eq!(
        updated.clocked_in,
        Some(Utc.with_ymd_and_hms(2026, 12, 7, 13, 58, 0).unwrap())
    );
    assert_eq!(
        updated.clocked_out,
        Some(Utc.with_ymd_and_hms(2026, 12, 7, 22, 3, 0).unwrap())
    );
    assert_eq!(updated.total_break_time, 30);

    let EventData::ShiftCancelled(cancelled) = receive("shift.cancelled", open).kind else {
        panic!("not shift.cancelled");
    };
    assert_eq!(
        cancelled.end,
        Utc.with_ymd_and_hms(2026, 12, 7, 22, 0, 0).unwrap()
    );
}

#[test]
fn the_two_staff_events_read_the_staff_member() {
    let member = r#"{"membershipId":"m_1","userId":"u_1","branchId":null,"jobRoleId":"jr_1","privilege":3,"status":1}"#;
    let deactivated = r#"{"membershipId":"m_1","userId":"u_1","branchId":"br_1","jobRoleId":null,"privilege":3,"status":0}"#;

    let EventData::StaffCreated(created) = receive("staff.created", member).kind else {
        panic!("not staff.created");
    };
    assert_eq!(created.membership_id, "m_1");
    assert_eq!(created.user_id, "u_1");
    assert_eq!(created.branch_id, None);
    assert_eq!(created.job_role_id.as_deref(), Some("jr_1"));
    assert_eq!(created.privilege.get(), 3);
    assert_eq!(created.status, 1);

    let EventData::StaffDeactivated(gone) = receive("staff.deactivated", deactivated).kind else {
        panic!("not staff.deactivated");
    };
    assert_eq!(gone.status, 0);
    assert_eq!(gone.branch_id.as_deref(), Some("br_1"));
}

#[test]
fn the_three_job_role_events_read_id_title_and_weekly_hours() {
    let EventData::JobRoleCreated(created) = receive(
        "job_role.created",
        r#"{"id":"jr_1","title":"Nurse","weeklyHours":37.5}"#,
    )
    .kind
    else {
        panic!("not job_role.created");
    };
    assert_eq!(
        (created.id.as_str(), created.title.as_str()),
        ("jr_1", "Nurse")
    );
    assert_eq!(created.weekly_hours, Some(37.5));

    let EventData::JobRoleUpdated(updated) = receive(
        "job_role.updated",
        r#"{"id":"jr_1","title":"Senior nurse","weeklyHours":null}"#,
    )
    .kind
    else {
        panic!("not job_role.updated");
    };
    assert_eq!(updated.title, "Senior nurse");
    assert_eq!(updated.weekly_hours, None);

    let EventData::JobRoleDeleted(deleted) = receive(
        "job_role.deleted",
        r#"{"id":"jr_1","title":"Senior nurse","weeklyHours":40}"#,
    )
    .kind
    else {
        panic!("not job_role.deleted");
    };
    assert_eq!(deleted.weekly_hours, Some(40.0));
}

#[test]
fn the_two_location_events_read_the_location_list_item() {
    let EventData::LocationCreated(created) = receive(
        "location.created",
        r##"{"id":"lo_1","name":"North Clinic","city":null,"state":null,"latitude":null,"longitude":null,"hexcode":"#336699","symbol":"NC","locationDetectionEnabled":false}"##,
    )
    .kind
    else {
        panic!("not location.created");
    };
    assert_eq!(created.name, "North Clinic");
    assert_eq!(created.symbol, "NC");
    assert_eq!(created.hexcode, "#336699");
    assert_eq!(created.city, None);
    assert!(!created.location_detection_enabled);

    let EventData::LocationUpdated(updated) = receive(
        "location.updated",
        r##"{"id":"lo_1","name":"North Clinic","city":"c_9","state":"s_2","latitude":40.7128,"longitude":-74.006,"hexcode":"#336699","symbol":"NC","locationDetectionEnabled":true}"##,
    )
    .kind
    else {
        panic!("not location.updated");
    };
    assert_eq!(updated.city.as_deref(), Some("c_9"));
    assert_eq!(updated.state.as_deref(), Some("s_2"));
    assert_eq!(updated.latitude, Some(40.7128));
    assert_eq!(updated.longitude, Some(-74.006));
    assert!(updated.location_detection_enabled);
}

#[test]
fn webhook_test_reads_the_endpoint_id() {
    let event = receive("webhook.test", r#"{"endpointId":"we_1"}"#);

    let EventData::WebhookTest(test) = event.kind else {
        panic!("{:?}", event.kind);
    };
    assert_eq!(test.endpoint_id, "we_1");
}

#[test]
fn every_type_of_the_catalogue_has_its_own_variant() {
    // A minimal valid data object for each type, by the shape it shares.
    let shift = r#"{"id":"sh_1","slotId":"sl_1","branchId":"br_1","userId":null,"status":"pending","start":"2026-12-07T14:00:00Z","end":"2026-12-07T22:00:00Z","clockedIn":null,"clockedOut":null,"totalBreakTime":0}"#;
    let staff = r#"{"membershipId":"m_1","userId":"u_1","branchId":null,"jobRoleId":null,"privilege":2,"status":1}"#;
    let role = r#"{"id":"jr_1","title":"Nurse","weeklyHours":null}"#;
    let location = r##"{"id":"lo_1","name":"N","hexcode":"#000000","symbol":"N","locationDetectionEnabled":false}"##;
    let slot = r##"{"id":"sl_1","startTime":"22:00","endTime":"06:00","dayOfWeek":0,"maxStaffRequired":1,"timeZone":"UTC","hours":8,"shiftName":"Night","shiftColor":"#000000","openShift":false,"isOncall":true,"unpaidBreak":0,"swappable":false,"branch":{"id":"br_1","name":"N"},"jobRole":{"id":"jr_1","title":"Nurse"}}"##;
    let data = |event_type: &str| match event_type {
        "workforce.resource.updated" => {
            r#"{"staff_resource_id":"m_1","resource_version":1,"updated_at":"2026-11-25T09:30:00Z"}"#
        }
        "workforce.resource.deleted" => {
            r#"{"staff_resource_id":"m_1","deleted":true,"resource_version":2,"updated_at":"2026-11-25T09:30:00Z"}"#
        }
        "shift_slot.created" => slot,
        t if t.starts_with("shift.") => shift,
        t if t.starts_with("staff.") => staff,
        t if t.starts_with("job_role.") => role,
        t if t.starts_with("location.") => location,
        "webhook.test" => r#"{"endpointId":"we_1"}"#,
        other => panic!("no data for {other}: add it to this test"),
    };

    let mut seen = Vec::new();
    for &event_type in EVENT_TYPES {
        let event = receive(event_type, data(event_type));

        assert!(
            !matches!(event.kind, EventData::Unknown { .. }),
            "{event_type} read as Unknown"
        );
        assert_eq!(event.event_type(), event_type);
        let variant = format!("{:?}", event.kind);
        let variant = variant.split('(').next().unwrap().to_owned();
        assert!(!seen.contains(&variant), "{event_type} shares {variant}");
        seen.push(variant);
    }
    assert_eq!(
        seen.len(),
        14,
        "the catalogue of docs/spec/webhooks.md has 14 types"
    );
}

#[test]
fn an_unknown_type_reads_as_unknown_with_its_data_untouched() {
    let event = receive(
        "timesheet.approved",
        r#"{"timesheetId":"ts_1","hours":[7.5,8]}"#,
    );

    assert_eq!(event.event_type(), "timesheet.approved");
    let EventData::Unknown { r#type, data } = event.kind else {
        panic!("{:?}", event.kind);
    };
    assert_eq!(r#type, "timesheet.approved");
    assert_eq!(
        data,
        serde_json::json!({"timesheetId": "ts_1", "hours": [7.5, 8]})
    );
}

#[test]
fn fields_the_server_adds_later_are_ignored() {
    let body = r#"{"type":"webhook.test","timestamp":"2026-11-25T09:30:00Z","apiVersion":"2","data":{"endpointId":"we_1","note":"hello"}}"#;

    let event = webhooks::verify(&[NEW], &signed(NEW, body), body.as_bytes()).unwrap();

    assert!(matches!(event.kind, EventData::WebhookTest(ref t) if t.endpoint_id == "we_1"));
}

#[test]
fn an_authentic_body_that_is_not_an_event_is_told_apart_from_a_forgery() {
    for body in [
        "not json",
        r#"{"timestamp":"2026-11-25T09:30:00Z","data":{}}"#,
        r#"{"type":"webhook.test","timestamp":"yesterday","data":{"endpointId":"we_1"}}"#,
        r#"{"type":"shift.created","timestamp":"2026-11-25T09:30:00Z","data":{"id":"sh_1"}}"#,
    ] {
        let error = refusal(&[NEW], &signed(NEW, body), body);

        assert!(
            matches!(error, VerifyError::NotAnEvent(_)),
            "{body}: {error:?}"
        );
        assert!(error.to_string().starts_with("body is not a wfs event: "));
    }
}

#[test]
fn from_parts_types_the_data_of_a_listed_event() {
    let data = serde_json::json!({"id": "jr_1", "title": "Nurse", "weeklyHours": 20});

    let kind = EventData::from_parts("job_role.updated", data).unwrap();

    assert!(matches!(kind, EventData::JobRoleUpdated(ref role) if role.weekly_hours == Some(20.0)));
}

/// The catalogue has one source, the server's core; the document (`openapi.yaml`,
/// generated from it, and this package's copy of it) carries it as the
/// `WebhookEventType` enum. This crate's hand-written list must be that enum, in its
/// order; a type added in one place only fails here (and a known type without its own
/// `EventData` variant fails `every_type_of_the_catalogue_has_its_own_variant`).
#[test]
fn event_types_are_the_catalogue_of_the_document_the_client_is_generated_from() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.yaml");
    let document: serde_json::Value =
        yaml_serde::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let documented: Vec<&str> = document["components"]["schemas"]["WebhookEventType"]["enum"]
        .as_array()
        .expect("WebhookEventType is a string enum in openapi.yaml")
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();

    assert_eq!(EVENT_TYPES, documented.as_slice());
    for &event_type in EVENT_TYPES {
        // The generated enum (from the same document) knows every name too.
        let generated: wfs_client::types::WebhookEventType =
            serde_json::from_value(serde_json::json!(event_type)).unwrap();
        assert_eq!(serde_json::to_value(generated).unwrap(), event_type);
    }
}
