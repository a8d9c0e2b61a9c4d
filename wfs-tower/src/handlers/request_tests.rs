//! The request types parse through `extract` as the routes do: a query string or a
//! body is either read or refused with a 400 that names the offending parameter.

use super::job_roles::body::CreateJobRoleRequest;
use super::schedules::body::SchedulesQuery;
use super::workforce::body::FeedQuery;
use crate::extract::{json, query};
use proptest::prelude::*;

#[test]
fn a_bad_query_value_names_the_parameter() {
    let err = query::<SchedulesQuery>(Some("page=abc")).unwrap_err();
    assert_eq!(err.status(), 400);
    assert!(err.message().contains("page"), "{}", err.message());
    let err = query::<SchedulesQuery>(Some("from=%00")).unwrap_err();
    assert!(err.message().contains("from"), "{}", err.message());
    let long = format!("branchId={}", "a".repeat(257));
    assert!(
        query::<SchedulesQuery>(Some(&long))
            .unwrap_err()
            .message()
            .contains("branchId")
    );
}

proptest! {
    #[test]
    fn any_query_string_parses_or_is_a_400(raw in any::<String>(), ascii in "[ -~]{0,200}") {
        for q in [&raw, &ascii] {
            if let Err(e) = query::<SchedulesQuery>(Some(q)) {
                prop_assert_eq!(e.status(), 400);
            }
            if let Err(e) = query::<FeedQuery>(Some(q)) {
                prop_assert_eq!(e.status(), 400);
            }
        }
    }

    #[test]
    fn any_body_parses_or_is_a_400(body in any::<Vec<u8>>()) {
        if let Err(e) = json::<CreateJobRoleRequest>(&body) {
            prop_assert_eq!(e.status(), 400);
        }
    }
}
