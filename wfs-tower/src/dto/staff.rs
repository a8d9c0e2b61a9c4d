//! Staff wire types. Reads carry identifiers only: no names, emails or phones.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use wfs_core::service::staff::{
    BulkStaffItem, BulkStaffReport, NewStaffMember, RejectedStaff, StaffMember,
};

/// A staff member as listed.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = StaffMember)]
pub(crate) struct StaffMemberResponse {
    /// Membership ID; also the `staff_resource_id` of the workforce feed.
    membership_id: String,
    user_id: String,
    branch_id: Option<String>,
    job_role_id: Option<String>,
    /// 1 = Super Admin, 2 = Admin, 3 = Member.
    #[schema(minimum = 1, maximum = 3)]
    privilege: i16,
    /// 1 = active; 0 = deactivated.
    #[schema(minimum = 0, maximum = 1)]
    status: i16,
}

impl From<StaffMember> for StaffMemberResponse {
    fn from(m: StaffMember) -> Self {
        Self {
            membership_id: m.membership_id.to_string(),
            user_id: m.user_id.to_string(),
            branch_id: m.branch_id.map(|id| id.to_string()),
            job_role_id: m.job_role_id.map(|id| id.to_string()),
            privilege: m.privilege,
            status: m.status,
        }
    }
}

/// `GET /staff` query: raw, so a malformed id can match nothing instead of failing.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StaffQuery {
    /// Only members of this location.
    pub(crate) branch_id: Option<String>,
    /// Only members with this job role.
    pub(crate) job_role_id: Option<String>,
    /// 1 = active (default), 0 = deactivated; anything else is 400.
    #[param(value_type = Option<i32>, minimum = 0, maximum = 1)]
    pub(crate) status: Option<String>,
}

/// One bulk item with the JSON types the spec gives; the core checks the values.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = BulkStaffItem)]
pub(crate) struct BulkStaffItemRequest {
    first_name: String,
    last_name: String,
    /// Unique.
    user_name: String,
    email: String,
    /// With country code.
    #[schema(example = "+14155550100")]
    phone: String,
    /// `male` or `female`.
    #[schema(example = "female")]
    gender: String,
    /// ISO 3166 alpha-2 expected (not enforced).
    #[schema(example = "US")]
    country_id: String,
    /// A location ID (see `GET /locations`).
    assigned_branch_id: String,
    /// Job role UUID or symbol.
    job_role_id: String,
    /// 1 = Super Admin, 2 = Admin, 3 = Member.
    #[schema(minimum = 1, maximum = 3)]
    privilege: i64,
    /// Skill set IDs to assign.
    #[serde(default)]
    skill_set_ids: Option<Vec<String>>,
}

/// Reads one item; an item of the wrong shape becomes a rejection naming the field,
/// so it is reported in `err` like any other invalid item.
pub(crate) fn bulk_item(item: Value) -> BulkStaffItem {
    let text = |field: &str| {
        item.get(field)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let reject = |reason: String| RejectedStaff {
        first_name: text("firstName"),
        last_name: text("lastName"),
        email: text("email"),
        reason,
    };
    if !item.is_object() {
        return Err(reject("each staff member must be a JSON object".into()));
    }
    match serde_path_to_error::deserialize::<_, BulkStaffItemRequest>(&item) {
        Ok(r) => Ok(NewStaffMember {
            first_name: r.first_name,
            last_name: r.last_name,
            user_name: r.user_name,
            email: r.email,
            phone: r.phone,
            gender: r.gender,
            country_id: r.country_id,
            assigned_branch_id: r.assigned_branch_id,
            job_role_id: r.job_role_id,
            privilege: r.privilege,
            skill_set_ids: r.skill_set_ids.unwrap_or_default(),
        }),
        Err(err) => {
            let path = err.path().to_string();
            let inner = err.into_inner();
            Err(reject(if path == "." {
                inner.to_string()
            } else {
                format!("{path}: {inner}")
            }))
        }
    }
}

/// The bulk result: `{message, success, failed, total, err}`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = BulkStaffResult)]
pub(crate) struct BulkStaffResponse {
    /// Status message.
    message: String,
    /// Members created.
    #[schema(value_type = i64)]
    success: usize,
    /// Members that failed.
    #[schema(value_type = i64)]
    failed: usize,
    /// Items processed.
    #[schema(value_type = i64)]
    total: usize,
    /// One entry per failure.
    err: Vec<BulkStaffFailure>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct BulkStaffFailure {
    first_name: String,
    last_name: String,
    email: String,
    /// Always `failed`.
    status: &'static str,
    /// Why, e.g. a duplicate email or the field at fault.
    reason: String,
}

impl From<BulkStaffReport> for BulkStaffResponse {
    fn from(r: BulkStaffReport) -> Self {
        let success = r.created.len();
        Self {
            message: format!("{success} of {} staff members created", r.total),
            success,
            failed: r.errors.len(),
            total: r.total,
            err: r
                .errors
                .into_iter()
                .map(|e| BulkStaffFailure {
                    first_name: e.first_name,
                    last_name: e.last_name,
                    email: e.email,
                    status: "failed",
                    reason: e.reason,
                })
                .collect(),
        }
    }
}
