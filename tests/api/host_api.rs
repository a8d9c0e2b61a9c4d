//! The host-side domain API of `wfs-core` (no external route): its rules and errors,
//! and what the read routes show afterwards.

use crate::helpers::*;
use chrono::{DateTime, Utc};
use serde_json::json;
use wfs_core::{CompanyId, Error, MembershipId, ShiftId, SkillSetId};

fn at(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

struct Setup {
    app: TestApp,
    company: CompanyId,
    key: Key,
    member: MembershipId,
    shift: ShiftId,
    open_shift: ShiftId,
}

async fn setup() -> Setup {
    let app = TestApp::spawn().await;
    let DaySlot {
        company,
        key,
        member,
        user,
        slot: slot_id,
    } = app.day_slot().await;
    let booked = app
        .post(
            &key,
            "/external/v1/shifts/book",
            &json!({"slotId": slot_id, "date": "2026-11-16", "assignees": [{"userId": user}]}),
        )
        .await;
    let open = app
        .post(
            &key,
            "/external/v1/shifts/book",
            &json!({"slotId": slot_id, "date": "2026-11-16"}),
        )
        .await;
    Setup {
        company: company.id.parse().unwrap(),
        member: member.parse().unwrap(),
        shift: booked.body["shifts"][0]["id"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap(),
        open_shift: open.body["shifts"][0]["id"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap(),
        app,
        key,
    }
}

#[tokio::test]
async fn clock_in_break_and_clock_out_show_on_the_shift() {
    let s = setup().await;
    let tx = s.app.wfs.begin().await.unwrap();
    s.app
        .wfs
        .clock_in(&tx, s.company, s.shift, at("2026-11-16T07:58:00Z"))
        .await
        .unwrap();
    s.app
        .wfs
        .record_break(&tx, s.company, s.shift, 20)
        .await
        .unwrap();
    s.app
        .wfs
        .record_break(&tx, s.company, s.shift, 15)
        .await
        .unwrap();
    s.app
        .wfs
        .clock_out(&tx, s.company, s.shift, at("2026-11-16T16:03:00Z"))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let res = s
        .app
        .get(&s.key, &format!("/external/v1/shifts?shiftId={}", s.shift))
        .await;
    assert_eq!(res.body["clockedIn"], "2026-11-16T07:58:00Z");
    assert_eq!(res.body["clockedOut"], "2026-11-16T16:03:00Z");
    assert_eq!(res.body["totalBreakTime"], 35);
}

#[tokio::test]
async fn clocking_follows_the_shifts_state() {
    let s = setup().await;
    let w = &s.app.wfs;
    let tx = w.begin().await.unwrap();
    assert!(
        matches!(
            w.clock_out(&tx, s.company, s.shift, at("2026-11-16T16:00:00Z"))
                .await,
            Err(Error::Conflict(_))
        ),
        "not clocked in"
    );
    assert!(
        matches!(
            w.clock_in(&tx, s.company, s.open_shift, at("2026-11-16T08:00:00Z"))
                .await,
            Err(Error::Conflict(_))
        ),
        "no assignee"
    );
    w.clock_in(&tx, s.company, s.shift, at("2026-11-16T08:00:00Z"))
        .await
        .unwrap();
    assert!(
        matches!(
            w.clock_in(&tx, s.company, s.shift, at("2026-11-16T08:01:00Z"))
                .await,
            Err(Error::Conflict(_))
        ),
        "twice"
    );
    assert!(
        matches!(
            w.clock_out(&tx, s.company, s.shift, at("2026-11-16T07:00:00Z"))
                .await,
            Err(Error::Invalid { .. })
        ),
        "before clock-in"
    );
    assert!(matches!(
        w.record_break(&tx, s.company, s.shift, 0).await,
        Err(Error::Invalid { .. })
    ));
    assert!(matches!(
        w.clock_in(&tx, s.company, ShiftId::new(), at("2026-11-16T08:00:00Z"))
            .await,
        Err(Error::NotFound { kind: "Shift" })
    ));
    tx.commit().await.unwrap();
    s.app
        .delete(&s.key, &format!("/external/v1/shifts/{}", s.open_shift))
        .await
        .assert_status(200);
    let tx = w.begin().await.unwrap();
    assert!(
        matches!(
            w.record_break(&tx, s.company, s.open_shift, 10).await,
            Err(Error::Conflict(_))
        ),
        "cancelled"
    );
}

#[tokio::test]
async fn another_companys_records_are_unknown_to_the_host_api() {
    let s = setup().await;
    let other: CompanyId = s.app.company("Globex").await.id.parse().unwrap();
    let w = &s.app.wfs;
    let tx = w.begin().await.unwrap();
    assert!(matches!(
        w.clock_in(&tx, other, s.shift, at("2026-11-16T08:00:00Z"))
            .await,
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        w.approve_overtime(&tx, other, s.member, "2026-11-16".parse().unwrap(), 1.0)
            .await,
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        w.add_unavailability(
            &tx,
            other,
            s.member,
            at("2026-11-20T00:00:00Z"),
            at("2026-11-21T00:00:00Z"),
            "x"
        )
        .await,
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        w.delete_membership(&tx, other, s.member).await,
        Err(Error::NotFound { .. })
    ));
}

#[tokio::test]
async fn overtime_and_unavailability_validate_their_input() {
    let s = setup().await;
    let w = &s.app.wfs;
    let tx = w.begin().await.unwrap();
    for hours in [0.0, -1.0, 25.0, f64::NAN] {
        assert!(
            matches!(
                w.approve_overtime(
                    &tx,
                    s.company,
                    s.member,
                    "2026-11-16".parse().unwrap(),
                    hours
                )
                .await,
                Err(Error::Invalid { .. })
            ),
            "{hours}"
        );
    }
    assert!(matches!(
        w.add_unavailability(
            &tx,
            s.company,
            s.member,
            at("2026-11-21T00:00:00Z"),
            at("2026-11-21T00:00:00Z"),
            "x"
        )
        .await,
        Err(Error::Invalid { .. })
    ));
    let id = w
        .add_unavailability(
            &tx,
            s.company,
            s.member,
            at("2026-11-20T00:00:00Z"),
            at("2026-11-21T00:00:00Z"),
            "leave",
        )
        .await
        .unwrap();
    w.remove_unavailability(&tx, s.company, id).await.unwrap();
    assert!(matches!(
        w.remove_unavailability(&tx, s.company, id).await,
        Err(Error::NotFound { .. })
    ));
}

#[tokio::test]
async fn qualifications_are_added_once_and_removed() {
    let s = setup().await;
    let w = &s.app.wfs;
    let tx = w.begin().await.unwrap();
    let bls = w
        .create_skill_set(&tx, s.company, "BLS", "Basic Life Support")
        .await
        .unwrap();
    w.add_qualification(&tx, s.company, s.member, bls)
        .await
        .unwrap();
    w.add_qualification(&tx, s.company, s.member, bls)
        .await
        .unwrap();
    w.remove_qualification(&tx, s.company, s.member, bls)
        .await
        .unwrap();
    assert!(matches!(
        w.remove_qualification(&tx, s.company, s.member, bls).await,
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        w.add_qualification(&tx, s.company, s.member, SkillSetId::new())
            .await,
        Err(Error::NotFound { kind: "Skill set" })
    ));
    assert!(matches!(
        w.create_skill_set(&tx, s.company, " ", "x").await,
        Err(Error::Invalid { .. })
    ));
}

#[tokio::test]
async fn a_deleted_membership_leaves_the_staff_list_and_keeps_shift_history() {
    let s = setup().await;
    let tx = s.app.wfs.begin().await.unwrap();
    s.app
        .wfs
        .delete_membership(&tx, s.company, s.member)
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let staff = s.app.get(&s.key, "/external/v1/staff").await;
    assert!(!staff.body.to_string().contains(&s.member.to_string()));
    let shift = s
        .app
        .get(&s.key, &format!("/external/v1/shifts?shiftId={}", s.shift))
        .await;
    shift.assert_status(200);
    assert_eq!(shift.body["status"], "confirmed");
}
