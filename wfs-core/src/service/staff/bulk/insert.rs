//! Writing one resolved member: its user, membership, skill sets, welcome email and
//! event, inside the item's own savepoint.

use super::StaffMember;
use super::fields::ValidStaff;
use super::references::{EMAIL_TAKEN, Resolved, USER_NAME_TAKEN};
use crate::Wfs;
use crate::domain::membership::MembershipStatus;
use crate::entity::{member_skill, membership, user};
use crate::error::{Error, Result};
use crate::event::EventData;
use crate::ids::{CompanyId, MembershipId, UserId};
use crate::persistence::WfsConn;
use crate::service::outbox::{Email, KIND_WELCOME_EMAIL};
use sea_orm::{ActiveModelTrait, EntityTrait, Set, SqlErr};

impl Wfs {
    /// Inserts one member's rows; runs inside the item's savepoint.
    pub(super) async fn insert_member(
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
            sign_in_failures: Set(0),
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

/// A failure inside an item's savepoint: a constraint violation rejects the item,
/// anything else fails the request.
#[derive(Debug)]
pub(super) enum MemberInsertError {
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

/// The `err` reason of an insert that failed on a constraint (the store changed
/// since the item was resolved); any other failure fails the request.
pub(super) fn rejection(err: MemberInsertError) -> Result<&'static str> {
    match err.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(what)) if what.contains("user_name") => {
            Ok(USER_NAME_TAKEN)
        }
        Some(SqlErr::UniqueConstraintViolation(_)) => Ok(EMAIL_TAKEN),
        Some(SqlErr::ForeignKeyConstraintViolation(_)) => {
            Ok("a referenced location, job role or skill set no longer exists")
        }
        _ => Err(err.into()),
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
