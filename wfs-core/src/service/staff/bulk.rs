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

mod fields;
mod insert;
mod references;

use super::StaffMember;
use crate::Wfs;
use crate::WriteTx;
use crate::entity::company;
use crate::error::{Error, Result};
use crate::ids::{CompanyId, JobRoleRef, LocationId, Ref, SkillSetId};
use crate::persistence::WfsConn;
pub use crate::resource::bulk_staff::{BulkStaffReport, BulkStaffResult, Failed, RejectedStaff};
use fields::{Entry, ValidStaff};
use references::{ItemError, Lookups, Stored};
use sea_orm::{EntityTrait, QuerySelect, TransactionSession, TransactionTrait};

/// Items processed together (one duplicate check against the store per batch),
/// one batch after the other.
pub const BULK_BATCH_SIZE: usize = 3;
/// Most items one bulk request may carry.
pub const BULK_MAX_ITEMS: usize = 1000;

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

impl RejectedStaff {
    fn of(item: &NewStaffMember, reason: impl Into<String>) -> Self {
        Self {
            first_name: item.first_name.clone(),
            last_name: item.last_name.clone(),
            email: item.email.clone(),
            status: Failed,
            reason: reason.into(),
        }
    }
}

/// One item of a bulk request: a member to create, or one the transport already
/// found unreadable (wrong JSON types), which is reported as it is.
pub type BulkStaffItem = std::result::Result<NewStaffMember, RejectedStaff>;

impl Wfs {
    /// Creates members in bulk; see the module docs for the rules.
    ///
    /// Every item's savepoint is opened on `tx`, and nothing is visible before it
    /// commits.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty request or one over [`BULK_MAX_ITEMS`]; store
    /// failures other than a constraint violation of one item.
    #[tracing::instrument(name = "bulk_create_staff", skip_all, fields(company_id = %company, items = items.len()))]
    pub async fn bulk_create_staff(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        items: Vec<BulkStaffItem>,
    ) -> Result<BulkStaffReport> {
        let conn = &self.store().enter_write(tx)?;
        check_count(items.len())?;
        let mut request = Request {
            company,
            company_name: company_name(conn, company).await?,
            lookups: Lookups::default(),
        };
        let mut report = BulkStaffReport {
            total: items.len(),
            ..Default::default()
        };
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
                match self
                    .create_one(conn, &mut request, &stored, item, fields)
                    .await?
                {
                    Ok(member) => report.created.push(member),
                    Err(reason) => report.errors.push(RejectedStaff::of(item, reason)),
                }
            }
        }
        Ok(report)
    }

    /// Resolves a valid item and inserts it in a savepoint of its own: the member, or
    /// why the item is rejected (`Err` only for a failure of the whole request).
    async fn create_one<C>(
        &self,
        conn: &C,
        request: &mut Request,
        stored: &Stored,
        item: &NewStaffMember,
        fields: ValidStaff,
    ) -> Result<std::result::Result<StaffMember, String>>
    where
        C: WfsConn + TransactionTrait,
        C::Transaction: WfsConn,
    {
        let resolved = references::resolve(
            conn,
            request.company,
            fields,
            item,
            stored,
            &mut request.lookups,
        );
        let resolved = match resolved.await {
            Ok(resolved) => resolved,
            Err(ItemError::Rejected(reason)) => return Ok(Err(reason)),
            Err(ItemError::Failed(err)) => return Err(err),
        };
        let savepoint = conn.begin().await?;
        let inserted = self
            .insert_member(
                &savepoint,
                request.company,
                &request.company_name,
                &resolved,
            )
            .await;
        match inserted {
            Ok(member) => {
                savepoint.commit().await?;
                Ok(Ok(member))
            }
            Err(err) => {
                savepoint.rollback().await?;
                insert::rejection(err).map(|reason| Err(reason.to_owned()))
            }
        }
    }
}

/// What the items of one request share.
struct Request {
    company: CompanyId,
    company_name: String,
    lookups: Lookups,
}

/// An empty request, or one over [`BULK_MAX_ITEMS`], is refused as a whole.
fn check_count(items: usize) -> Result<()> {
    if items == 0 {
        return Err(Error::invalid(
            "the request must contain at least one staff member",
        ));
    }
    if items > BULK_MAX_ITEMS {
        return Err(Error::invalid(format!(
            "the request may contain at most {BULK_MAX_ITEMS} staff members (got {items})"
        )));
    }
    Ok(())
}

/// The company's name, for the welcome emails.
async fn company_name(conn: &impl WfsConn, company: CompanyId) -> Result<String> {
    company::Entity::find_by_id(company.0)
        .select_only()
        .column(company::Column::Name)
        .into_tuple::<String>()
        .one(conn)
        .await?
        .ok_or(Error::not_found("Company"))
}
