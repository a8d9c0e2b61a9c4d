//! A leaked secret dies in one step: found by its hash, revoked, its company's
//! admins told by email, and the revocation recorded in the audit log as the
//! system's. What an operator runs when a secret scanner reports a wfs secret in a
//! public place (`wfs-server revoke-leaked`).

use crate::Wfs;
use crate::domain::credentials::{SecretHash, SecretShape};
use crate::domain::membership::{MembershipStatus, Privilege};
use crate::entity::{api_key, company, membership, user};
use crate::error::{Error, Result};
use crate::ids::{ApiKeyId, CompanyId};
use crate::persistence::changes::Topic;
use crate::persistence::repo::{locked, owned_by};
use crate::service::audit::{Actor, AuditAction};
use crate::service::outbox::Email;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, JoinType, QueryFilter, QuerySelect};
use sea_orm::{RelationDef, Set};

/// The outbox `kind` of the email that tells admins a leaked key was revoked.
pub const KIND_LEAKED_KEY_EMAIL: &str = "leaked_key_revoked_email";

/// The audit log's name for the one who revokes a leaked key.
pub const LEAKED_KEY_ACTOR: Actor = Actor::System("revoke-leaked");

/// The key a leaked secret belonged to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakedKey {
    /// The key's record id.
    pub key_id: ApiKeyId,
    /// Its company.
    pub company_id: CompanyId,
    /// `false` when the key was already revoked: nothing was changed.
    pub revoked_now: bool,
    /// Admins the email was queued to.
    pub notified: usize,
}

impl Wfs {
    /// Revokes the key whose secret is `secret`, queues an email to its company's
    /// admins (active admins and super admins) and records `api_key.revoked` by the
    /// system, in one transaction. A key already revoked is answered as it is,
    /// unchanged.
    ///
    /// # Errors
    /// [`Error::Invalid`] (`secret`) for a string that is no wfs secret (wrong shape
    /// or checksum); [`Error::NotFound`] (`API key`) for a secret no key has.
    pub async fn revoke_leaked_secret(&self, secret: &str) -> Result<LeakedKey> {
        let secret = secret.trim();
        if !SecretShape::of(secret).may_exist() {
            return Err(Error::invalid_field(
                "secret",
                "is not a wfs client secret (sec_ followed by 49 letters and digits whose last 6 are its checksum)",
            ));
        }
        let hash = SecretHash::of(secret).to_hex();
        let tx = self.store().begin().await?;
        let conn = tx.qualified();
        let key = locked(
            conn,
            api_key::Entity::find().filter(api_key::Column::SecretHash.eq(hash)),
        )
        .one(conn)
        .await?
        .ok_or(Error::not_found("API key"))?;
        let (key_id, company_id) = (ApiKeyId::from(key.id), CompanyId::from(key.company_id));
        if key.revoked_at.is_some() {
            tx.rollback().await?;
            return Ok(LeakedKey {
                key_id,
                company_id,
                revoked_now: false,
                notified: 0,
            });
        }
        let now = self.now();
        let (name, client_id) = (key.name.clone(), key.client_id.clone());
        let mut active: api_key::ActiveModel = key.into();
        active.revoked_at = Set(Some(now));
        active.updated_at = Set(now);
        active.update(conn).await?;
        self.record_key(
            conn,
            company_id,
            AuditAction::ApiKeyRevoked,
            Some(LEAKED_KEY_ACTOR),
            key_id,
        )
        .await?;
        let company_name = company::Entity::find_by_id(company_id.0)
            .one(conn)
            .await?
            .map(|c| c.name)
            .unwrap_or_default();
        let admins = admin_emails(conn, company_id).await?;
        for to in &admins {
            let email = leaked_key_email(to, &company_name, &name, &client_id, key_id);
            self.enqueue_email(conn, Some(company_id), KIND_LEAKED_KEY_EMAIL, &email)
                .await?;
        }
        self.store().changes().changed(Topic::Key(client_id));
        tx.commit().await?;
        Ok(LeakedKey {
            key_id,
            company_id,
            revoked_now: true,
            notified: admins.len(),
        })
    }
}

/// The addresses of the company's active admins and super admins.
async fn admin_emails(
    conn: &impl crate::persistence::WfsConn,
    company: CompanyId,
) -> Result<Vec<String>> {
    Ok(owned_by::<membership::Entity>(company)
        .select_only()
        .column(user::Column::Email)
        .join(JoinType::InnerJoin, membership_user())
        .filter(membership::Column::Status.eq(MembershipStatus::Active.code()))
        .filter(
            membership::Column::Privilege
                .is_in([Privilege::SuperAdmin.code(), Privilege::Admin.code()]),
        )
        .into_tuple::<String>()
        .all(conn)
        .await?)
}

fn membership_user() -> RelationDef {
    membership::Entity::belongs_to(user::Entity)
        .from(membership::Column::UserId)
        .to(user::Column::Id)
        .into()
}

fn leaked_key_email(
    to: &str,
    company: &str,
    key_name: &str,
    client_id: &str,
    key_id: ApiKeyId,
) -> Email {
    Email {
        to: to.to_owned(),
        subject: format!("{company}: API key \"{key_name}\" was revoked"),
        text: format!(
            "The API key \"{key_name}\" of {company} (client id {client_id}, key id {key_id}) \
             was revoked because its secret was reported leaked: it was found where it \
             should never be, such as a public repository.\n\n\
             Every request made with it is refused from now on. If it is still in use, \
             create a new key in the developer portal, deploy its secret, and look through \
             the audit log (GET /external/v1/auth/audit-log) for what was done with the \
             revoked key.\n"
        ),
    }
}
