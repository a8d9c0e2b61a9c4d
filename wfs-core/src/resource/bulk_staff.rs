//! The bulk staff import's answer (`POST /staff/bulk`): how many members were made,
//! and each item that was not, as the caller sent its names.

use super::StaffMember;
use serde::{Serialize, Serializer};

#[doc = concat!("A member that was not created, and why: one `err` entry of the bulk result.")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = BulkStaffFailure))]
#[serde(rename_all = "camelCase")]
pub struct RejectedStaff {
    #[doc = concat!("First name as received (`\"\"` if none).")]
    pub first_name: String,
    #[doc = concat!("Last name as received (`\"\"` if none).")]
    pub last_name: String,
    #[doc = concat!("Email as received (`\"\"` if none).")]
    pub email: String,
    /// Always `failed`.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub status: Failed,
    /// Why, e.g. a duplicate email or the field at fault.
    pub reason: String,
}

/// The status of every rejected item: written `"failed"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Failed;

impl Serialize for Failed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("failed")
    }
}

/// The outcome of [`Wfs::bulk_create_staff`](crate::Wfs::bulk_create_staff).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkStaffReport {
    /// The members created, in request order.
    pub created: Vec<StaffMember>,
    /// The items not created, in request order.
    pub errors: Vec<RejectedStaff>,
    /// Items processed.
    pub total: usize,
}

/// The bulk result: `{message, success, failed, total, err}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BulkStaffResult {
    /// Status message.
    pub message: String,
    /// Members created.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub success: usize,
    /// Members that failed.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub failed: usize,
    /// Items processed.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub total: usize,
    /// One entry per failure.
    pub err: Vec<RejectedStaff>,
}

impl From<BulkStaffReport> for BulkStaffResult {
    fn from(r: BulkStaffReport) -> Self {
        let success = r.created.len();
        Self {
            message: format!("{success} of {} staff members created", r.total),
            success,
            failed: r.errors.len(),
            total: r.total,
            err: r.errors,
        }
    }
}
