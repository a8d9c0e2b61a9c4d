//! Staff (API key authenticated).

use super::Ctx;
use super::{Audit, Entry, Facts, Tag};
use crate::auth::Access;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{path_id, query};
use crate::reply::Message;
use crate::reply::Reply;
use body::*;
use http::StatusCode;
use wfs_core::domain::membership::MembershipStatus;
use wfs_core::domain::scope::Scope;
use wfs_core::service::staff::BULK_MAX_ITEMS;
use wfs_core::service::staff::{BulkStaffResult, StaffFilter};
use wfs_core::{IdFilter, MembershipId};

const READ: Access = Access::Key(Scope::WorkforceRead);
const WRITE: Access = Access::Key(Scope::WorkforceWrite);

/// This module's operations in the document.
pub(crate) const TAG: Tag = Tag {
    name: "Staff",
    description: "Staff members: listing, bulk creation, deactivation",
};

pub(crate) static ROUTES: [Entry; 3] = [
    route!(list_staff, __path_list_staff, Facts::read(READ)),
    route!(
        deactivate_staff,
        __path_deactivate_staff,
        Facts::write(WRITE, Audit::Id("staff_member"))
            .if_match()
            .tagged()
    ),
    // A bulk write names no one member.
    route!(
        bulk_create_staff,
        __path_bulk_create_staff,
        Facts::write(WRITE, Audit::Nothing).bulk(BULK_MAX_ITEMS)
    ),
];

/// List staff
///
/// Identifiers only: names, emails and phones are never in a read response. A
/// filter id that matches nothing gives an empty array.
#[utoipa::path(get, path = "/external/v1/staff", tag = TAG.name,
    params(StaffQuery),
    responses(
        (status = 200, description = "The staff members", body = [StaffMember]),
        (status = 400, description = "`status` is not 0 or 1", body = ErrorBody),
    ))]
pub(crate) async fn list_staff(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let q: StaffQuery = query(ctx.query)?;
    let status = q
        .status
        .as_deref()
        .map(MembershipStatus::parse)
        .transpose()?
        .unwrap_or_default();
    let filter = StaffFilter {
        branch_id: IdFilter::parse(q.branch_id.as_deref()),
        job_role_id: IdFilter::parse(q.job_role_id.as_deref()),
        status,
    };
    let staff = ctx.wfs.list_staff(ctx.key()?.company_id, filter).await?;
    Reply::json(StatusCode::OK, &staff)
}

/// Deactivate a staff member
///
/// Sets `status` to 0; the user account is kept, and so are the member's shifts.
/// Deactivating a deactivated member answers 200 again and changes nothing.
#[utoipa::path(delete, path = "/external/v1/staff/{membershipId}", tag = TAG.name,
    params(("membershipId" = String, Path, description = "Membership ID")),
    responses(
        (status = 200, description = "`{\"message\": \"Staff member deactivated\"}`", body = Message),
        (status = 404, description = "`Staff member not found`", body = ErrorBody),
    ))]
pub(crate) async fn deactivate_staff(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let id: MembershipId = path_id(ctx.id(), "Staff member")?;
    let (tx, company) = (ctx.tx()?, ctx.key()?.company_id);
    if let Some(listed) = crate::conditional::if_match(ctx.headers) {
        let current = ctx.wfs.staff_tag(tx, company, id).await?;
        crate::conditional::check(&listed, &current, ctx.may(Scope::AvailabilityRead))?;
    }
    ctx.wfs.deactivate_staff(tx, company, id).await?;
    // The member's resource as it is now, as writes to one resource answer.
    let tag = ctx.wfs.staff_tag(tx, company, id).await?;
    Ok(Reply::message("Staff member deactivated")?.tagged(&tag))
}

/// Create staff in bulk
///
/// Items are checked one by one and processed in batches of 3, one batch after the
/// other. Invalid items, emails that already exist (in the store or earlier in the
/// request) and taken userNames are reported in `err`; the rest are created, each
/// with a user account, an assignment to company, branch and job role, and a welcome
/// email.
#[utoipa::path(post, path = "/external/v1/staff/bulk", tag = TAG.name,
    request_body(content = Vec<BulkStaffItem>, description = "1 to 1000 staff members", content_type = "application/json"),
    responses(
        (status = 200, description = "The report, also when every item failed", body = BulkStaffResult),
        (status = 400, description = "The body is not a JSON array, is empty, or has more than 1000 items", body = ErrorBody),
    ))]
pub(crate) async fn bulk_create_staff(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let items = bulk_items(ctx.body)?.into_iter().map(bulk_item).collect();
    let report = ctx
        .wfs
        .bulk_create_staff(ctx.tx()?, ctx.key()?.company_id, items)
        .await?;
    Reply::json(StatusCode::OK, &BulkStaffResult::from(report))
}

pub(crate) mod body {
    //! Staff wire types. Reads carry identifiers only: no names, emails or phones.

    use crate::dto::limits::{Bounded, LINE_MAX, Line, Whole};
    use crate::error::ApiError;
    use crate::extract::at_path;
    use serde::Deserialize;
    use serde::de::IgnoredAny;
    use serde_json::value::RawValue;
    use utoipa::{IntoParams, ToSchema};
    use wfs_core::service::staff::{BULK_MAX_ITEMS, NewStaffMember, RejectedStaff};
    use wfs_core::{JobRoleRef, Ref};

    /// A staff member as listed: the core's wire form (identifiers only), its schema
    /// derived where it lives.
    pub(crate) use wfs_core::resource::StaffMember;

    /// `GET /staff` query: raw, so a malformed id can match nothing instead of failing.
    #[derive(Debug, Deserialize, IntoParams)]
    #[into_params(parameter_in = Query)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct StaffQuery {
        /// Only members of this location.
        #[param(value_type = Option<String>, max_length = 256)]
        pub(crate) branch_id: Option<Line>,
        /// Only members with this job role.
        #[param(value_type = Option<String>, max_length = 256)]
        pub(crate) job_role_id: Option<Line>,
        /// 1 = active (default), 0 = deactivated; anything else is 400.
        #[param(value_type = Option<i32>, minimum = 0, maximum = 1)]
        pub(crate) status: Option<Line>,
    }

    /// One bulk item with the JSON types the spec gives; the core checks the values.
    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct BulkStaffItem {
        #[schema(value_type = String, min_length = 1, max_length = 100)]
        first_name: Line,
        #[schema(value_type = String, min_length = 1, max_length = 100)]
        last_name: Line,
        /// Unique.
        #[schema(value_type = String, min_length = 1, max_length = 64)]
        user_name: Line,
        #[schema(value_type = String, max_length = 256)]
        email: Line,
        /// With country code.
        #[schema(value_type = String, max_length = 256, example = "+14155550100")]
        phone: Line,
        /// `male` or `female`.
        #[schema(value_type = String, max_length = 256, example = "female")]
        gender: Line,
        /// ISO 3166 alpha-2 expected (not enforced).
        #[schema(value_type = String, max_length = 100, example = "US")]
        country_id: Line,
        /// A location ID (see `GET /locations`).
        #[schema(value_type = String, max_length = 256)]
        assigned_branch_id: Line,
        /// Job role UUID or symbol.
        #[schema(value_type = String, max_length = 256)]
        job_role_id: Line,
        /// 1 = Super Admin, 2 = Admin, 3 = Member.
        #[schema(value_type = i64, minimum = 1, maximum = 3)]
        privilege: Whole,
        /// Skill set IDs to assign (at most 50; more sends the item to `err`).
        #[serde(default)]
        #[schema(value_type = Option<Vec<String>>, max_items = 50)]
        skill_set_ids: Option<Bounded<Line, 50>>,
    }

    /// The names an `err` entry echoes, read leniently from an item of any shape: a
    /// non-string value is skipped without being materialised.
    #[derive(Debug, Default, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct EchoedNames {
        #[serde(default)]
        first_name: Echo,
        #[serde(default)]
        last_name: Echo,
        #[serde(default)]
        email: Echo,
    }

    /// A string as received, cut to [`LINE_MAX`] characters; `""` for anything else.
    #[derive(Debug, Default)]
    struct Echo(String);

    impl<'de> Deserialize<'de> for Echo {
        fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Echo;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_str<E>(self, v: &str) -> Result<Echo, E> {
                    Ok(Echo(v.chars().take(LINE_MAX).collect()))
                }
                fn visit_bool<E>(self, _: bool) -> Result<Echo, E> {
                    Ok(Echo::default())
                }
                fn visit_i64<E>(self, _: i64) -> Result<Echo, E> {
                    Ok(Echo::default())
                }
                fn visit_u64<E>(self, _: u64) -> Result<Echo, E> {
                    Ok(Echo::default())
                }
                fn visit_f64<E>(self, _: f64) -> Result<Echo, E> {
                    Ok(Echo::default())
                }
                fn visit_unit<E>(self) -> Result<Echo, E> {
                    Ok(Echo::default())
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<Echo, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Echo::default())
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Echo, A::Error> {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(Echo::default())
                }
            }
            de.deserialize_any(V)
        }
    }

    /// The bulk body: a JSON array of at most [`BULK_MAX_ITEMS`] items, each kept as a
    /// borrowed slice of the body. Counted while parsing: item 1001 is refused before
    /// the rest of the array is read, so a hostile array never costs more than the
    /// (4 MiB) body itself.
    pub(crate) fn bulk_items(body: &[u8]) -> Result<Vec<&RawValue>, ApiError> {
        let first = body.iter().find(|b| !b.is_ascii_whitespace());
        if first != Some(&b'[') {
            return Err(ApiError::bad_request(
                "Request body must be a JSON array of staff members",
            ));
        }
        match serde_json::from_slice::<Bounded<&RawValue, BULK_MAX_ITEMS>>(body) {
            Ok(items) => Ok(items.into_vec()),
            Err(err) if err.is_data() => Err(ApiError::bad_request(format!(
                "Request body may contain at most {BULK_MAX_ITEMS} staff members"
            ))),
            Err(err) => Err(ApiError::bad_request(format!(
                "Malformed JSON in request body: {err}"
            ))
            .not_an_act()),
        }
    }

    /// Reads one item; an item of the wrong shape becomes a rejection naming the field,
    /// so it is reported in `err` like any other invalid item.
    pub(crate) fn bulk_item(item: &RawValue) -> wfs_core::service::staff::BulkStaffItem {
        let reject = |reason: String| {
            let names: EchoedNames = serde_json::from_str(item.get()).unwrap_or_default();
            RejectedStaff {
                first_name: names.first_name.0,
                last_name: names.last_name.0,
                email: names.email.0,
                status: wfs_core::service::staff::Failed,
                reason,
            }
        };
        if !item.get().starts_with('{') {
            return Err(reject("each staff member must be a JSON object".into()));
        }
        let de = &mut serde_json::Deserializer::from_str(item.get());
        match serde_path_to_error::deserialize::<_, BulkStaffItem>(de) {
            Ok(r) => Ok(NewStaffMember {
                first_name: r.first_name.into(),
                last_name: r.last_name.into(),
                user_name: r.user_name.into(),
                email: r.email.into(),
                phone: r.phone.into(),
                gender: r.gender.into(),
                country_id: r.country_id.into(),
                assigned_branch_id: Ref::parse(&r.assigned_branch_id),
                job_role_id: JobRoleRef::parse(&r.job_role_id),
                privilege: r.privilege.into(),
                skill_set_ids: Bounded::items(r.skill_set_ids)
                    .iter()
                    .map(|id| Ref::parse(id))
                    .collect(),
            }),
            Err(err) => {
                let path = err.path().to_string();
                Err(reject(at_path(&path, &err.into_inner().to_string())))
            }
        }
    }
}
