//! A staff member (a membership): its wire form and the row it is read from.
//!
//! The `staff.*` webhooks carry the staff member as the list shows it (the spec's
//! "the staff member": ids and codes only), so one type serves both.

use crate::domain::membership::{MembershipStatus, Privilege};
use crate::entity::membership;
use crate::ids::{JobRoleId, LocationId, MembershipId, UserId};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A staff member as listed.
///
/// Identifiers only: no names, emails or phones, in the list as in the `staff.*`
/// webhooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(description = "A staff member as listed."))]
#[serde(rename_all = "camelCase")]
pub struct StaffMember {
    /// Membership ID; also the `staff_resource_id` of the workforce feed.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub membership_id: MembershipId,
    // The OpenAPI document describes none of the three ids: their docs are written as
    // `#[doc = concat!(..)]`, which rustdoc shows and the schema derive does not read.
    #[doc = concat!("The member's user account.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub user_id: UserId,
    #[doc = concat!("Assigned location.")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub branch_id: Option<LocationId>,
    #[doc = concat!("Assigned job role.")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub job_role_id: Option<JobRoleId>,
    /// 1 = Super Admin, 2 = Admin, 3 = Member.
    #[serde(with = "privilege_code")]
    #[cfg_attr(feature = "openapi", schema(value_type = i16, minimum = 1, maximum = 3))]
    pub privilege: Privilege,
    /// 1 = active; 0 = deactivated.
    #[serde(with = "status_code")]
    #[cfg_attr(feature = "openapi", schema(value_type = i16, minimum = 0, maximum = 1))]
    pub status: MembershipStatus,
}

/// The columns a [`StaffMember`] is read from, in the order of its fields.
pub(crate) const COLUMNS: [membership::Column; 6] = [
    membership::Column::Id,
    membership::Column::UserId,
    membership::Column::BranchId,
    membership::Column::JobRoleId,
    membership::Column::Privilege,
    membership::Column::Status,
];

/// A row of [`COLUMNS`].
pub(crate) type Row = (
    uuid::Uuid,
    uuid::Uuid,
    Option<uuid::Uuid>,
    Option<uuid::Uuid>,
    i16,
    i16,
);

impl From<Row> for StaffMember {
    fn from((id, user, branch, role, privilege, status): Row) -> Self {
        Self {
            membership_id: id.into(),
            user_id: user.into(),
            branch_id: branch.map(Into::into),
            job_role_id: role.map(Into::into),
            privilege: Privilege::from_code(privilege),
            status: MembershipStatus::from_code(status),
        }
    }
}

impl From<membership::Model> for StaffMember {
    fn from(m: membership::Model) -> Self {
        Self::from((
            m.id,
            m.user_id,
            m.branch_id,
            m.job_role_id,
            m.privilege,
            m.status,
        ))
    }
}

/// [`Privilege`] on the wire: its code.
mod privilege_code {
    use super::*;

    pub(super) fn serialize<S: Serializer>(p: &Privilege, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i16(p.code())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Privilege, D::Error> {
        i16::deserialize(d).map(Privilege::from_code)
    }
}

/// [`MembershipStatus`] on the wire: its code.
mod status_code {
    use super::*;

    pub(super) fn serialize<S: Serializer>(v: &MembershipStatus, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i16(v.code())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<MembershipStatus, D::Error> {
        i16::deserialize(d).map(MembershipStatus::from_code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn privilege_and_status_travel_as_their_codes() {
        let member = StaffMember {
            membership_id: MembershipId::new(),
            user_id: UserId::new(),
            branch_id: None,
            job_role_id: Some(JobRoleId::new()),
            privilege: Privilege::Admin,
            status: MembershipStatus::Deactivated,
        };
        let json = serde_json::to_value(member).unwrap();
        assert_eq!(json["privilege"], 2);
        assert_eq!(json["status"], 0);
        assert_eq!(json["branchId"], serde_json::Value::Null);
        assert_eq!(serde_json::from_value::<StaffMember>(json).unwrap(), member);
    }
}
