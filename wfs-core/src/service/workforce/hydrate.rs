//! A page's resources built around their embedded rows, in a handful of batched
//! queries (never per membership).

use super::weight::Embedded;
use crate::domain::membership::MembershipStatus;
use crate::domain::supply::SupplyStatus;
use crate::entity::{job_role, location, member_skill, membership, skill_set};
use crate::error::Result;
use crate::ids::CompanyId;
use crate::persistence::WfsConn;
use crate::persistence::repo::names_by_id;
use crate::resource::workforce::{NamedRef, Qualification, WorkforceResource};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QuerySelect};
use std::collections::HashMap;
use uuid::Uuid;

/// Builds the representations of the given memberships of `company`, with the
/// supply status at `from`, around their embedded rows.
pub(super) async fn hydrate(
    tx: &impl WfsConn,
    company: CompanyId,
    ids: &[Uuid],
    from: DateTime<Utc>,
    mut embedded: Embedded,
) -> Result<HashMap<Uuid, WorkforceResource>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let members = members(tx, company, ids).await?;
    let roles =
        names_by_id::<job_role::Entity>(tx, members.iter().filter_map(|m| m.job_role_id)).await?;
    let locations =
        names_by_id::<location::Entity>(tx, members.iter().filter_map(|m| m.branch_id)).await?;
    let mut qualifications = qualifications(tx, ids).await?;
    Ok(members
        .into_iter()
        .map(|m| {
            let shifts = embedded.shifts.remove(&m.id).unwrap_or_default();
            let intervals = embedded.intervals.remove(&m.id).unwrap_or_default();
            let supply_status = SupplyStatus::at(
                from,
                MembershipStatus::from_code(m.status),
                intervals.iter().map(|i| (i.start, i.end)),
                shifts.iter().map(|s| (s.start, s.end)),
            );
            let resource = WorkforceResource {
                staff_resource_id: m.id.into(),
                role: m.job_role_id.map(|id| NamedRef {
                    id: id.into(),
                    name: roles.get(&id).cloned().unwrap_or_default(),
                }),
                location: m.branch_id.map(|id| NamedRef {
                    id: id.into(),
                    name: locations.get(&id).cloned().unwrap_or_default(),
                }),
                qualifications: qualifications.remove(&m.id).unwrap_or_default(),
                supply_status,
                supply_status_as_of: from,
                shifts,
                unavailable_intervals: intervals,
                resource_version: m.resource_version,
                updated_at: m.updated_at,
            };
            (m.id, resource)
        })
        .collect())
}

/// The memberships with these ids that are `company`'s.
///
/// By primary key only, the company checked here: with a company condition in the
/// SQL, SQLite's planner prefers the company index for long id lists and scans
/// every membership of the company, so page cost would grow with the company.
async fn members(
    tx: &impl WfsConn,
    company: CompanyId,
    ids: &[Uuid],
) -> Result<Vec<membership::Model>> {
    Ok(membership::Entity::find()
        .filter(membership::Column::Id.is_in(ids.iter().copied()))
        .all(tx)
        .await?
        .into_iter()
        .filter(|m| m.company_id == company.0)
        .collect())
}

/// The verified qualifications of these memberships, each list by code then id.
async fn qualifications(
    tx: &impl WfsConn,
    ids: &[Uuid],
) -> Result<HashMap<Uuid, Vec<Qualification>>> {
    let held: Vec<(Uuid, Uuid)> = member_skill::Entity::find()
        .select_only()
        .columns([
            member_skill::Column::MembershipId,
            member_skill::Column::SkillSetId,
        ])
        .filter(member_skill::Column::MembershipId.is_in(ids.iter().copied()))
        .filter(member_skill::Column::VerifiedAt.is_not_null())
        .into_tuple()
        .all(tx)
        .await?;
    let skills: HashMap<Uuid, skill_set::Model> = skill_set::Entity::find()
        .filter(skill_set::Column::Id.is_in(held.iter().map(|(_, s)| *s)))
        .all(tx)
        .await?
        .into_iter()
        .map(|s| (s.id, s))
        .collect();
    let mut qualifications: HashMap<Uuid, Vec<Qualification>> = HashMap::new();
    for (member, skill) in held {
        if let Some(s) = skills.get(&skill) {
            qualifications
                .entry(member)
                .or_default()
                .push(Qualification {
                    id: s.id.into(),
                    code: s.code.clone(),
                    name: s.name.clone(),
                });
        }
    }
    for list in qualifications.values_mut() {
        list.sort_by(|a, b| a.code.cmp(&b.code).then(a.id.cmp(&b.id)));
    }
    Ok(qualifications)
}
