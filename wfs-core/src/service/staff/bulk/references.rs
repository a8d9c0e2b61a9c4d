//! Resolving a valid item: duplicates within the request and in the store, and the
//! caller's own references (location, job role, skill sets), looked up once per
//! request where items share them.

use super::NewStaffMember;
use super::fields::ValidStaff;
use crate::entity::{job_role, location, skill_set, user};
use crate::error::{Error, Result};
use crate::ids::{CompanyId, JobRoleId, JobRoleRef, LocationId, Ref, SkillSetId};
use crate::persistence::WfsConn;
use crate::persistence::repo::owned_by;
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QuerySelect};
use std::collections::{BTreeSet, HashMap, HashSet};

/// A stored user holds the item's email. The same words whether that user is a
/// member of the caller's company or of another: the answer says the value cannot
/// be used, not whose it is.
pub(super) const EMAIL_TAKEN: &str = "email is not available";
/// A stored user holds the item's userName (unique across the store: it is a
/// sign-in name), worded as [`EMAIL_TAKEN`].
pub(super) const USER_NAME_TAKEN: &str = "userName is not available";

/// An item ready to insert: valid fields and resolved references.
pub(super) struct Resolved {
    pub(super) fields: ValidStaff,
    pub(super) branch: LocationId,
    pub(super) job_role: JobRoleId,
    pub(super) skill_sets: BTreeSet<uuid::Uuid>,
}

/// Lookups shared by the items of one request.
#[derive(Default)]
pub(super) struct Lookups {
    branches: HashMap<LocationId, bool>,
    job_roles: HashMap<JobRoleRef, std::result::Result<JobRoleId, String>>,
    emails: HashSet<String>,
    user_names: HashSet<String>,
}

/// Why resolving an item stopped: the item is rejected (the reason goes to `err`),
/// or the request fails as a whole (a store error).
#[derive(Debug)]
pub(super) enum ItemError {
    Rejected(String),
    Failed(Error),
}

impl ItemError {
    pub(super) fn rejected(reason: impl Into<String>) -> Self {
        Self::Rejected(reason.into())
    }
}

impl From<Error> for ItemError {
    fn from(e: Error) -> Self {
        Self::Failed(e)
    }
}

impl From<sea_orm::DbErr> for ItemError {
    fn from(e: sea_orm::DbErr) -> Self {
        Self::Failed(e.into())
    }
}

/// An item's check: its value, or why it stops.
pub(super) type Checked<T> = std::result::Result<T, ItemError>;

/// The emails and (lowercased) userNames of a batch that stored users already hold.
#[derive(Default)]
pub(super) struct Stored {
    emails: HashSet<String>,
    user_names: HashSet<String>,
}

impl Stored {
    /// Reads, in one statement, which of the batch's unique values are taken.
    pub(super) async fn clashing<'a>(
        conn: &impl WfsConn,
        batch: impl Iterator<Item = &'a ValidStaff>,
    ) -> Result<Self> {
        let (emails, user_names): (Vec<&str>, Vec<String>) = batch
            .map(|f| (f.email.as_str(), f.user_name.to_lowercase()))
            .unzip();
        if emails.is_empty() {
            return Ok(Self::default());
        }
        let clashes: Vec<(String, Option<String>)> =
            user::Entity::find()
                .select_only()
                .columns([user::Column::Email, user::Column::UserName])
                .filter(user::Column::Email.is_in(emails).or(
                    Expr::expr(Func::lower(Expr::col(user::Column::UserName))).is_in(user_names),
                ))
                .into_tuple()
                .all(conn)
                .await?;
        let mut stored = Self::default();
        for (email, user_name) in clashes {
            stored.emails.insert(email);
            if let Some(name) = user_name {
                stored.user_names.insert(name.to_lowercase());
            }
        }
        Ok(stored)
    }

    /// Why the item's values are taken, if they are (the email is named first).
    fn clash(&self, f: &ValidStaff) -> Option<&'static str> {
        if self.emails.contains(&f.email) {
            Some(EMAIL_TAKEN)
        } else if self.user_names.contains(&f.user_name.to_lowercase()) {
            Some(USER_NAME_TAKEN)
        } else {
            None
        }
    }
}

/// Checks an item's valid fields for duplicates and resolves its references.
pub(super) async fn resolve(
    conn: &impl WfsConn,
    company: CompanyId,
    fields: ValidStaff,
    item: &NewStaffMember,
    stored: &Stored,
    lookups: &mut Lookups,
) -> Checked<Resolved> {
    // Within the request, an email or userName an earlier valid item used is a
    // duplicate, whatever became of that item.
    if !lookups.emails.insert(fields.email.clone()) {
        return Err(ItemError::rejected(
            "email appears in an earlier item of this request",
        ));
    }
    if !lookups.user_names.insert(fields.user_name.to_lowercase()) {
        return Err(ItemError::rejected(
            "userName appears in an earlier item of this request",
        ));
    }
    // The caller's own references first: an item that could never be created
    // answers the same whatever the store holds, so a made-up branch does not
    // turn the request into a silent probe of other companies' users.
    let branch = find_branch(conn, company, &item.assigned_branch_id, lookups)
        .await?
        .ok_or_else(|| ItemError::rejected("assignedBranchId: Location not found"))?;
    let job_role = find_job_role(conn, company, &item.job_role_id, lookups).await?;
    let skill_sets = find_skill_sets(conn, company, &item.skill_set_ids).await?;
    // In the store: the unique indexes decide at insert time; the batch's read
    // only gives the usual case a clear answer without a failed insert.
    if let Some(reason) = stored.clash(&fields) {
        return Err(ItemError::rejected(reason));
    }
    Ok(Resolved {
        fields,
        branch,
        job_role,
        skill_sets,
    })
}

async fn find_branch(
    conn: &impl WfsConn,
    company: CompanyId,
    branch: &Ref<LocationId>,
    lookups: &mut Lookups,
) -> Result<Option<LocationId>> {
    let Ref::Id(id) = *branch else {
        return Ok(None);
    };
    if let Some(&known) = lookups.branches.get(&id) {
        return Ok(known.then_some(id));
    }
    let exists = owned_by::<location::Entity>(company)
        .select_only()
        .column(location::Column::Id)
        .filter(location::Column::Id.eq(id))
        .into_tuple::<uuid::Uuid>()
        .one(conn)
        .await?
        .is_some();
    lookups.branches.insert(id, exists);
    Ok(exists.then_some(id))
}

/// A live job role of the company by id, or by symbol (case-insensitive; a symbol
/// several roles share is ambiguous).
async fn find_job_role(
    conn: &impl WfsConn,
    company: CompanyId,
    role: &JobRoleRef,
    lookups: &mut Lookups,
) -> Checked<JobRoleId> {
    if let Some(known) = lookups.job_roles.get(role) {
        return known.clone().map_err(ItemError::Rejected);
    }
    let live = owned_by::<job_role::Entity>(company)
        .select_only()
        .column(job_role::Column::Id)
        .filter(job_role::Column::DeletedAt.is_null());
    let found: Vec<uuid::Uuid> = match role {
        JobRoleRef::Id(id) => live.filter(job_role::Column::Id.eq(*id)),
        JobRoleRef::Symbol(symbol) if symbol.is_empty() => {
            return Err(ItemError::rejected("jobRoleId must not be empty"));
        }
        JobRoleRef::Symbol(symbol) => live.filter(
            Expr::expr(Func::lower(Expr::col(job_role::Column::Symbol))).eq(symbol.to_lowercase()),
        ),
    }
    .limit(2)
    .into_tuple()
    .all(conn)
    .await?;
    let answer = match found.as_slice() {
        [id] => Ok((*id).into()),
        [] => Err("jobRoleId: Job role not found".to_owned()),
        _ => Err(format!(
            "jobRoleId: symbol '{}' matches several job roles; use the job role id",
            match role {
                JobRoleRef::Symbol(symbol) => symbol.as_str(),
                JobRoleRef::Id(_) => "",
            }
        )),
    };
    lookups.job_roles.insert(role.clone(), answer.clone());
    answer.map_err(ItemError::Rejected)
}

/// The company's skill sets among `refs` (duplicates collapse).
async fn find_skill_sets(
    conn: &impl WfsConn,
    company: CompanyId,
    refs: &[Ref<SkillSetId>],
) -> Checked<BTreeSet<uuid::Uuid>> {
    let mut wanted = BTreeSet::new();
    for skill_set in refs {
        match skill_set {
            Ref::Id(id) => {
                wanted.insert(id.0);
            }
            Ref::Malformed(raw) => {
                return Err(ItemError::Rejected(format!(
                    "skillSetIds: Skill set not found: {raw}"
                )));
            }
        }
    }
    if wanted.is_empty() {
        return Ok(wanted);
    }
    let found: HashSet<uuid::Uuid> = owned_by::<skill_set::Entity>(company)
        .select_only()
        .column(skill_set::Column::Id)
        .filter(skill_set::Column::Id.is_in(wanted.iter().copied()))
        .into_tuple::<uuid::Uuid>()
        .all(conn)
        .await?
        .into_iter()
        .collect();
    match wanted.iter().find(|id| !found.contains(id)) {
        Some(missing) => Err(ItemError::Rejected(format!(
            "skillSetIds: Skill set not found: {missing}"
        ))),
        None => Ok(wanted),
    }
}
