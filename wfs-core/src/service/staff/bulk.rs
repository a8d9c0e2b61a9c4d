//! Creating staff in bulk.
//!
//! [`Wfs::bulk_create_staff`] never fails as a whole for one member's problem: each
//! item is validated on its own, and an invalid item, a reference that is not the
//! caller's company's, or a duplicate email or userName (in the store, or in an
//! earlier valid item of the same request) is reported in [`BulkStaffReport::errors`]
//! while the others are created. References are checked before the store's users, and
//! a taken value is worded alike whoever holds it, so the report tells a caller
//! nothing about other companies' users that creating the member would not.
//!
//! Items are processed in batches of [`BULK_BATCH_SIZE`], one batch after the other,
//! all in the caller's transaction: a batch's fields are validated, its emails and
//! userNames are checked against the stored users in one statement, then its items
//! are resolved and inserted in request order. Each item's writes run in a savepoint of their
//! own, so a failing insert (a unique email taken by a concurrent request, say) is
//! undone alone and never aborts the transaction the other items share.
//!
//! A created member gets a user account without a password (it must set one before
//! signing in, so no password is hashed per item), an active membership with the
//! next workforce resource version, its skill sets (unverified), and a welcome email
//! in the transactional outbox, committed together.

use super::StaffMember;
use crate::Wfs;
use crate::domain::event::EventData;
use crate::domain::membership::{MembershipStatus, Privilege};
use crate::domain::validate::required_text;
use crate::error::{Error, Result};
use crate::ids::{
    CompanyId, JobRoleId, JobRoleRef, LocationId, MembershipId, Ref, SkillSetId, UserId,
};
use crate::persistence::WfsConn;
use crate::persistence::entity::{
    company, job_role, location, member_skill, membership, skill_set, user,
};
use crate::persistence::repo::owned_by;
use crate::service::accounts::normalize_email;
use crate::service::outbox::{Email, KIND_WELCOME_EMAIL};
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect, Set,
    SqlErr, TransactionSession, TransactionTrait,
};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Items processed together (one duplicate check against the store per batch),
/// one batch after the other.
pub const BULK_BATCH_SIZE: usize = 3;
/// Most items one bulk request may carry.
pub const BULK_MAX_ITEMS: usize = 1000;

/// A stored user holds the item's email. The same words whether that user is a
/// member of the caller's company or of another: the answer says the value cannot
/// be used, not whose it is.
const EMAIL_TAKEN: &str = "email is not available";
/// A stored user holds the item's userName (unique across the store: it is a
/// sign-in name), worded as [`EMAIL_TAKEN`].
const USER_NAME_TAKEN: &str = "userName is not available";

const NAME_MAX: usize = 100;
const USER_NAME_MAX: usize = 64;
const COUNTRY_MAX: usize = 100;

/// One member to create, as received; [`Wfs::bulk_create_staff`] validates it.
#[derive(Debug, Clone, Default)]
pub struct NewStaffMember {
    /// Required.
    pub first_name: String,
    /// Required.
    pub last_name: String,
    /// Required, unique regardless of case; letters, digits, `.`, `_`, `-`.
    pub user_name: String,
    /// Required, unique regardless of case.
    pub email: String,
    /// Required, with the country code (`+` and 7 to 15 digits).
    pub phone: String,
    /// `male` or `female`.
    pub gender: String,
    /// Required free text (ISO 3166 alpha-2 expected, not enforced).
    pub country_id: String,
    /// A location of the caller's company.
    pub assigned_branch_id: Ref<LocationId>,
    /// A job role of the caller's company, by id or by symbol.
    pub job_role_id: JobRoleRef,
    /// 1, 2 or 3.
    pub privilege: i64,
    /// Skill sets of the caller's company.
    pub skill_set_ids: Vec<Ref<SkillSetId>>,
}

/// A member that was not created, and why: one `err` entry of the bulk result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedStaff {
    /// First name as received (`""` if none).
    pub first_name: String,
    /// Last name as received (`""` if none).
    pub last_name: String,
    /// Email as received (`""` if none).
    pub email: String,
    /// What is wrong, naming the field.
    pub reason: String,
}

impl RejectedStaff {
    fn of(item: &NewStaffMember, reason: impl Into<String>) -> Self {
        Self {
            first_name: item.first_name.clone(),
            last_name: item.last_name.clone(),
            email: item.email.clone(),
            reason: reason.into(),
        }
    }
}

/// One item of a bulk request: a member to create, or one the transport already
/// found unreadable (wrong JSON types), which is reported as it is.
pub type BulkStaffItem = std::result::Result<NewStaffMember, RejectedStaff>;

/// The outcome of [`Wfs::bulk_create_staff`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkStaffReport {
    /// The members created, in request order.
    pub created: Vec<StaffMember>,
    /// The items not created, in request order.
    pub errors: Vec<RejectedStaff>,
    /// Items processed.
    pub total: usize,
}

/// An item whose own fields are valid, normalised for storage.
struct ValidStaff {
    first_name: String,
    last_name: String,
    user_name: String,
    email: String,
    phone: String,
    gender: String,
    country_id: String,
    privilege: Privilege,
}

/// An item ready to insert: valid fields and resolved references.
struct Resolved {
    fields: ValidStaff,
    branch: LocationId,
    job_role: JobRoleId,
    skill_sets: BTreeSet<uuid::Uuid>,
}

/// Lookups shared by the items of one request.
#[derive(Default)]
struct Lookups {
    branches: HashMap<LocationId, bool>,
    job_roles: HashMap<JobRoleRef, std::result::Result<JobRoleId, String>>,
    emails: HashSet<String>,
    user_names: HashSet<String>,
}

impl Wfs {
    /// Creates members in bulk; see the module docs for the rules.
    ///
    /// `conn` is normally the request's transaction: every item's savepoint is
    /// opened on it, and nothing is visible before it commits.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty request or one over [`BULK_MAX_ITEMS`]; store
    /// failures other than a constraint violation of one item.
    #[tracing::instrument(name = "bulk_create_staff", skip_all, fields(company_id = %company, items = items.len()))]
    pub async fn bulk_create_staff<C>(
        &self,
        conn: &C,
        company: CompanyId,
        items: Vec<BulkStaffItem>,
    ) -> Result<BulkStaffReport>
    where
        C: ConnectionTrait + TransactionTrait,
    {
        let conn = &self.store().enter(conn);
        if items.is_empty() {
            return Err(Error::invalid(
                "the request must contain at least one staff member",
            ));
        }
        if items.len() > BULK_MAX_ITEMS {
            return Err(Error::invalid(format!(
                "the request may contain at most {BULK_MAX_ITEMS} staff members (got {})",
                items.len()
            )));
        }
        let company_name = company::Entity::find_by_id(company.0)
            .select_only()
            .column(company::Column::Name)
            .into_tuple::<String>()
            .one(conn)
            .await?
            .ok_or(Error::not_found("Company"))?;

        let mut report = BulkStaffReport {
            total: items.len(),
            ..Default::default()
        };
        let mut lookups = Lookups::default();
        for batch in items.chunks(BULK_BATCH_SIZE) {
            // A batch's own fields are checked first, then its emails and userNames
            // against the stored users in one statement.
            let batch: Vec<Entry> = batch.iter().map(Entry::check).collect();
            let stored = Stored::clashing(conn, batch.iter().filter_map(Entry::fields)).await?;
            for entry in batch {
                let (item, fields) = match entry {
                    Entry::Valid(item, fields) => (item, fields),
                    Entry::Invalid(item, reason) => {
                        report.errors.push(RejectedStaff::of(item, reason));
                        continue;
                    }
                    Entry::Unreadable(rejected) => {
                        report.errors.push(rejected.clone());
                        continue;
                    }
                };
                let resolved = match self
                    .resolve(conn, company, fields, item, &stored, &mut lookups)
                    .await
                {
                    Ok(resolved) => resolved,
                    Err(ItemError::Rejected(reason)) => {
                        report.errors.push(RejectedStaff::of(item, reason));
                        continue;
                    }
                    Err(ItemError::Failed(err)) => return Err(err),
                };
                let savepoint = conn.begin().await?;
                match self
                    .insert_member(&savepoint, company, &company_name, &resolved)
                    .await
                {
                    Ok(member) => {
                        savepoint.commit().await?;
                        report.created.push(member);
                    }
                    Err(err) => {
                        savepoint.rollback().await?;
                        match err.sql_err() {
                            Some(SqlErr::UniqueConstraintViolation(what)) => {
                                let reason = if what.contains("user_name") {
                                    USER_NAME_TAKEN
                                } else {
                                    EMAIL_TAKEN
                                };
                                report.errors.push(RejectedStaff::of(item, reason));
                            }
                            Some(SqlErr::ForeignKeyConstraintViolation(_)) => {
                                report.errors.push(RejectedStaff::of(
                                    item,
                                    "a referenced location, job role or skill set no longer exists",
                                ));
                            }
                            _ => return Err(err.into()),
                        }
                    }
                }
            }
        }
        Ok(report)
    }

    /// Checks an item's valid fields for duplicates and resolves its references.
    async fn resolve(
        &self,
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

    /// Inserts one member's rows; runs inside the item's savepoint.
    async fn insert_member(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        company_name: &str,
        member: &Resolved,
    ) -> std::result::Result<StaffMember, MemberInsertError> {
        let f = &member.fields;
        let now = self.now();
        let user_id = UserId::new();
        user::ActiveModel {
            id: Set(user_id.0),
            email: Set(f.email.clone()),
            user_name: Set(Some(f.user_name.clone())),
            first_name: Set(f.first_name.clone()),
            last_name: Set(f.last_name.clone()),
            phone: Set(Some(f.phone.clone())),
            gender: Set(Some(f.gender.clone())),
            country_id: Set(Some(f.country_id.clone())),
            password_hash: Set(None),
            must_change_password: Set(true),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(conn)
        .await?;

        let membership_id = MembershipId::new();
        let v = self.next_resource_version(conn, company).await?;
        let created = membership::ActiveModel {
            id: Set(membership_id.0),
            company_id: Set(company.0),
            user_id: Set(user_id.0),
            branch_id: Set(Some(member.branch.0)),
            job_role_id: Set(Some(member.job_role.0)),
            privilege: Set(f.privilege.code()),
            status: Set(MembershipStatus::Active.code()),
            resource_version: Set(v.version),
            updated_at: Set(v.updated_at),
            created_at: Set(now),
        }
        .insert(conn)
        .await?;

        if !member.skill_sets.is_empty() {
            member_skill::Entity::insert_many(member.skill_sets.iter().map(|id| {
                member_skill::ActiveModel {
                    membership_id: Set(membership_id.0),
                    skill_set_id: Set(*id),
                    verified_at: Set(None),
                    created_at: Set(now),
                }
            }))
            .exec(conn)
            .await?;
        }

        self.enqueue_email(
            conn,
            Some(company),
            KIND_WELCOME_EMAIL,
            &welcome_email(company_name, f),
        )
        .await?;
        let created = StaffMember::from(created);
        self.resource_changed(conn, company, membership_id, v)
            .await?;
        self.emit(conn, company, EventData::StaffCreated(created))
            .await?;
        Ok(created)
    }
}

/// Why resolving an item stopped: the item is rejected (the reason goes to `err`),
/// or the request fails as a whole (a store error).
#[derive(Debug)]
enum ItemError {
    Rejected(String),
    Failed(Error),
}

impl ItemError {
    fn rejected(reason: impl Into<String>) -> Self {
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
type Checked<T> = std::result::Result<T, ItemError>;

/// A failure inside an item's savepoint: a constraint violation rejects the item,
/// anything else fails the request.
#[derive(Debug)]
enum MemberInsertError {
    Db(sea_orm::DbErr),
    Other(Error),
}

impl MemberInsertError {
    fn sql_err(&self) -> Option<SqlErr> {
        match self {
            Self::Db(e) => e.sql_err(),
            Self::Other(_) => None,
        }
    }
}

impl From<sea_orm::DbErr> for MemberInsertError {
    fn from(e: sea_orm::DbErr) -> Self {
        Self::Db(e)
    }
}

impl From<Error> for MemberInsertError {
    fn from(e: Error) -> Self {
        Self::Other(e)
    }
}

impl From<MemberInsertError> for Error {
    fn from(e: MemberInsertError) -> Self {
        match e {
            MemberInsertError::Db(e) => e.into(),
            MemberInsertError::Other(e) => e,
        }
    }
}

/// The item's own fields, validated and normalised; the error names the field.
fn validate(item: &NewStaffMember) -> Result<ValidStaff> {
    let first_name = required_text("firstName", &item.first_name, NAME_MAX)?;
    let last_name = required_text("lastName", &item.last_name, NAME_MAX)?;
    let user_name = user_name(&item.user_name)?;
    let email = normalize_email("email", &item.email)?;
    let phone = phone(&item.phone)?;
    let gender = match item.gender.as_str() {
        g @ ("male" | "female") => g.to_owned(),
        other => {
            return Err(Error::invalid_field(
                "gender",
                format!("must be 'male' or 'female' (got '{other}')"),
            ));
        }
    };
    let country_id = required_text("countryId", &item.country_id, COUNTRY_MAX)?;
    let privilege = Privilege::parse(item.privilege)?;
    Ok(ValidStaff {
        first_name,
        last_name,
        user_name,
        email,
        phone,
        gender,
        country_id,
        privilege,
    })
}

/// 1 to 64 characters: ASCII letters, digits, `.`, `_`, `-` (so it can never be
/// mistaken for an email at sign-in).
fn user_name(raw: &str) -> Result<String> {
    let v = raw.trim();
    let ok = !v.is_empty()
        && v.len() <= USER_NAME_MAX
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(v.to_owned())
    } else {
        Err(Error::invalid_field(
            "userName",
            format!("must be 1 to {USER_NAME_MAX} letters, digits, '.', '_' or '-'"),
        ))
    }
}

/// `+` and 7 to 15 digits once spaces, dashes, dots and parentheses are removed;
/// stored in that compact form.
fn phone(raw: &str) -> Result<String> {
    let compact: String = raw
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')'))
        .collect();
    let digits = compact.strip_prefix('+').unwrap_or("");
    if (7..=15).contains(&digits.len()) && digits.chars().all(|c| c.is_ascii_digit()) {
        Ok(compact)
    } else {
        Err(Error::invalid_field(
            "phone",
            "must include the country code, such as +14155550123",
        ))
    }
}

/// An item of a batch once its own fields are checked.
enum Entry<'a> {
    /// The transport could not read it; reported as it is.
    Unreadable(&'a RejectedStaff),
    /// A field is wrong: the reason names it.
    Invalid(&'a NewStaffMember, String),
    Valid(&'a NewStaffMember, ValidStaff),
}

impl<'a> Entry<'a> {
    fn check(item: &'a BulkStaffItem) -> Self {
        match item {
            Ok(item) => match validate(item) {
                Ok(fields) => Self::Valid(item, fields),
                Err(err) => Self::Invalid(item, err.to_string()),
            },
            Err(rejected) => Self::Unreadable(rejected),
        }
    }

    fn fields(&self) -> Option<&ValidStaff> {
        match self {
            Self::Valid(_, fields) => Some(fields),
            _ => None,
        }
    }
}

/// The emails and (lowercased) userNames of a batch that stored users already hold.
#[derive(Default)]
struct Stored {
    emails: HashSet<String>,
    user_names: HashSet<String>,
}

impl Stored {
    /// Reads, in one statement, which of the batch's unique values are taken.
    async fn clashing<'a>(
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
        .filter(location::Column::Id.eq(id.0))
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
        JobRoleRef::Id(id) => live.filter(job_role::Column::Id.eq(id.0)),
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

fn welcome_email(company_name: &str, f: &ValidStaff) -> Email {
    Email {
        to: f.email.clone(),
        subject: format!("Welcome to {company_name}"),
        text: format!(
            "Hello {first},\n\n\
             An account has been created for you at {company_name}.\n\
             Your username is {user} and your sign-in email is {email}.\n\
             You will set your password before you first sign in; your administrator \
             will tell you how.\n",
            first = f.first_name,
            user = f.user_name,
            email = f.email,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phones_need_the_country_code() {
        assert_eq!(phone("+1 (415) 555-0123").unwrap(), "+14155550123");
        assert_eq!(phone("+44.20.7946.0958").unwrap(), "+442079460958");
        for bad in [
            "4155550123",
            "+",
            "+12",
            "+1415555012345678",
            "+1 415 CALL NOW",
            "",
        ] {
            assert!(phone(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn user_names_are_plain_words() {
        assert_eq!(user_name(" ada.l_1-x ").unwrap(), "ada.l_1-x");
        for bad in ["", "ada lovelace", "ada@x.io", &"a".repeat(65)] {
            assert!(user_name(bad).is_err(), "{bad}");
        }
    }
}
