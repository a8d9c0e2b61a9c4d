//! Companies, users and memberships as the host creates them.

use crate::Wfs;
use crate::WriteTx;
use crate::domain::membership::{MembershipStatus, Privilege};
// A rule on a value, in `domain` where the staff import uses it too (a service
// module using another's rule made the cycle accounts <-> staff); here for the API.
pub use crate::domain::validate::normalize_email;
use crate::entity::{company, membership, user};
use crate::error::{Error, OnConstraint, Result};
use crate::ids::{CompanyId, MembershipId, UserId};
use sea_orm::{ActiveModelTrait, Set};

/// Input of [`Wfs::create_company_with_admin`].
#[derive(Debug, Clone)]
pub struct NewCompanyAdmin {
    /// Company name.
    pub company_name: String,
    /// The admin's email (sign-in name).
    pub email: String,
    /// The admin's password (hashed with argon2id, never stored).
    pub password: String,
    /// First name.
    pub first_name: String,
    /// Last name.
    pub last_name: String,
}

/// What [`Wfs::create_company_with_admin`] created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreatedCompany {
    /// The new company.
    pub company_id: CompanyId,
    /// The admin's user account.
    pub user_id: UserId,
    /// The admin's membership (privilege 1).
    pub membership_id: MembershipId,
}

/// Input of [`Wfs::restore_admin`]: the operator's way back into a company.
#[derive(Debug, Clone)]
pub struct RestoredAdminInput {
    /// The admin's email (sign-in name). An existing user keeps its account.
    pub email: String,
    /// The new password (hashed with argon2id off the async workers, never stored).
    pub password: String,
    /// First name, for a user made here (an existing user keeps its names).
    pub first_name: String,
    /// Last name, likewise.
    pub last_name: String,
}

/// Who the audit log says restored an admin ([`Wfs::restore_admin`]).
pub const RESTORE_ADMIN_ACTOR: crate::service::audit::Actor =
    crate::service::audit::Actor::System("restore-admin");

/// What [`Wfs::restore_admin`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoredAdmin {
    /// The admin's user account.
    pub user_id: UserId,
    /// The admin's membership of the company (active, privilege 1).
    pub membership_id: MembershipId,
    /// Whether the user account was made here (else an existing one got the password).
    pub created_user: bool,
}

// The hashing itself, with the bound on how much runs at once, lives in
// `password_work`; re-exported here, where hosts and tests have always found it.
pub use super::password_work::{hash_password, verify_password};

/// The operator's password rule (also `create-admin`'s).
fn check_password(password: &str) -> Result<()> {
    if password.chars().count() < 8 {
        return Err(Error::invalid_field(
            "password",
            "must be at least 8 characters",
        ));
    }
    Ok(())
}

/// A company admin's user account: signs in with `password_hash`, no staff fields.
fn admin_user(
    id: UserId,
    email: String,
    first_name: String,
    last_name: String,
    password_hash: String,
    now: chrono::DateTime<chrono::Utc>,
) -> user::ActiveModel {
    user::ActiveModel {
        id: Set(id.0),
        email: Set(email),
        user_name: Set(None),
        first_name: Set(first_name),
        last_name: Set(last_name),
        phone: Set(None),
        gender: Set(None),
        country_id: Set(None),
        password_hash: Set(Some(password_hash)),
        must_change_password: Set(false),
        sign_in_failures: Set(0),
        created_at: Set(now),
        updated_at: Set(now),
    }
}

/// An active super admin membership (no branch or job role) at `version`.
fn admin_membership(
    id: MembershipId,
    company: CompanyId,
    user: UserId,
    version: crate::service::versions::ResourceVersion,
    now: chrono::DateTime<chrono::Utc>,
) -> membership::ActiveModel {
    membership::ActiveModel {
        id: Set(id.0),
        company_id: Set(company.0),
        user_id: Set(user.0),
        branch_id: Set(None),
        job_role_id: Set(None),
        privilege: Set(Privilege::SuperAdmin.code()),
        status: Set(MembershipStatus::Active.code()),
        resource_version: Set(version.version),
        updated_at: Set(version.updated_at),
        created_at: Set(now),
    }
}

impl Wfs {
    /// Creates a company and its first super admin (privilege 1, active member).
    ///
    /// This is what `wfs-server create-admin` runs. The email must not belong to an
    /// existing user (409).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a blank name, a bad email or a password shorter than 8
    /// characters; [`Error::Conflict`] when the email is taken.
    pub async fn create_company_with_admin(
        &self,
        tx: &WriteTx,
        input: NewCompanyAdmin,
    ) -> Result<CreatedCompany> {
        let conn = &self.store().enter_write(tx)?;
        use crate::domain::validate::required_text;
        let company_name = required_text("company", &input.company_name, 200)?;
        let email = normalize_email("email", &input.email)?;
        check_password(&input.password)?;
        let first_name =
            crate::domain::validate::optional_text("firstName", &input.first_name, 100)?;
        let last_name = crate::domain::validate::optional_text("lastName", &input.last_name, 100)?;
        let password_hash = self.password_work.hash(&input.password).await?;
        let now = self.now();

        let company_id = CompanyId::new();
        company::ActiveModel {
            id: Set(company_id.0),
            name: Set(company_name),
            resource_version: Set(0),
            resource_updated_at: Set(None),
            created_at: Set(now),
            external_ref: Set(None),
        }
        .insert(conn)
        .await?;

        let user_id = UserId::new();
        admin_user(
            user_id,
            email.clone(),
            first_name,
            last_name,
            password_hash,
            now,
        )
        .insert(conn)
        .await
        .on_unique_violation(|| format!("A user with email {email} already exists"))?;

        let membership_id = MembershipId::new();
        let version = self.next_resource_version(conn, company_id).await?;
        admin_membership(membership_id, company_id, user_id, version, now)
            .insert(conn)
            .await?;
        self.resource_changed(conn, company_id, membership_id, version)
            .await?;

        Ok(CreatedCompany {
            company_id,
            user_id,
            membership_id,
        })
    }

    /// Restores a company's way in: the user with `email` becomes an active super
    /// admin of `company` who can sign in with `password`, whatever API calls were
    /// made before (a member deactivated, demoted, or a super admin without a
    /// password). A new email gets a new user account and membership. This is what
    /// `wfs-server restore-admin` runs; it is an operator's tool, not an API route.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown company; [`Error::Invalid`] for a bad email,
    /// a password shorter than 8 characters, or names that are too long.
    pub async fn restore_admin(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        input: RestoredAdminInput,
    ) -> Result<RestoredAdmin> {
        let conn = &self.store().enter_write(tx)?;
        use crate::domain::validate::optional_text;
        use crate::event::EventData;
        use crate::persistence::repo::owned_by;
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

        let email = normalize_email("email", &input.email)?;
        check_password(&input.password)?;
        let first_name = optional_text("firstName", &input.first_name, 100)?;
        let last_name = optional_text("lastName", &input.last_name, 100)?;
        company::Entity::find_by_id(company.0)
            .one(conn)
            .await?
            .ok_or(Error::not_found("Company"))?;
        let password_hash = self.password_work.hash(&input.password).await?;
        let now = self.now();

        let existing = user::Entity::find()
            .filter(user::Column::Email.eq(email.as_str()))
            .one(conn)
            .await?;
        let (user_id, created_user) = match existing {
            Some(found) => {
                let mut user: user::ActiveModel = found.into();
                user.password_hash = Set(Some(password_hash));
                user.must_change_password = Set(false);
                // The way back past the ceiling of wrong passwords (`service::throttle`).
                user.sign_in_failures = Set(0);
                user.updated_at = Set(now);
                (UserId(user.update(conn).await?.id), false)
            }
            None => {
                let user_id = UserId::new();
                admin_user(user_id, email, first_name, last_name, password_hash, now)
                    .insert(conn)
                    .await?;
                (user_id, true)
            }
        };

        let version = self.next_resource_version(conn, company).await?;
        let member = owned_by::<membership::Entity>(company)
            .filter(membership::Column::UserId.eq(user_id))
            .one(conn)
            .await?;
        let (membership_id, created_member) = match member {
            Some(found) => {
                let mut member: membership::ActiveModel = found.into();
                member.privilege = Set(Privilege::SuperAdmin.code());
                member.status = Set(MembershipStatus::Active.code());
                member.resource_version = Set(version.version);
                member.updated_at = Set(version.updated_at);
                (MembershipId(member.update(conn).await?.id), None)
            }
            None => {
                let membership_id = MembershipId::new();
                let created = admin_membership(membership_id, company, user_id, version, now)
                    .insert(conn)
                    .await?;
                (membership_id, Some(created))
            }
        };
        self.resource_changed(conn, company, membership_id, version)
            .await?;
        // A new password and the keys to the company: a security review must see it.
        self.record_audit(
            conn,
            company,
            crate::service::audit::AuditAction::AdminRestored,
            Some(RESTORE_ADMIN_ACTOR),
            Some(crate::service::audit::Target::new("user", user_id)),
        )
        .await?;
        if let Some(created) = created_member {
            let member = crate::service::staff::StaffMember::from(created);
            self.emit(conn, company, EventData::StaffCreated(member))
                .await?;
        }
        Ok(RestoredAdmin {
            user_id,
            membership_id,
            created_user,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_lower_cased_and_checked() {
        assert_eq!(
            normalize_email("e", " Ada@Example.COM ").unwrap(),
            "ada@example.com"
        );
        for bad in [
            "",
            "ada",
            "ada@",
            "@x.io",
            "a b@x.io",
            "ada@localhost",
            "a@x.io.",
        ] {
            assert!(normalize_email("e", bad).is_err(), "{bad}");
        }
    }
}
