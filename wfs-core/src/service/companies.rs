//! Companies as a host provisions them for its own tenants.
//!
//! A host that embeds wfs already has tenants and its own sign-in. It makes one
//! company per tenant with [`Wfs::create_company`], carrying the tenant's id as
//! `external_ref`, and finds it again by that id: no wfs user is made, so the company
//! has no portal login, no member in `/staff` and no event until the host adds
//! something. Its API keys come from [`Wfs::create_company_api_key`]; a portal admin
//! can be given later with [`Wfs::restore_admin`] should the host want one.
//! `wfs-server create-admin` still makes a company together with its first admin
//! ([`Wfs::create_company_with_admin`]).

use crate::Wfs;
use crate::WriteTx;
use crate::domain::validate::required_text;
use crate::entity::company;
use crate::error::{Error, OnConstraint, Result};
use crate::ids::CompanyId;
use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};

/// The longest `external_ref`, in characters.
pub const EXTERNAL_REF_MAX: usize = 256;

/// Input of [`Wfs::create_company`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCompany {
    /// The company's name (1 to 200 characters, trimmed).
    pub name: String,
    /// The host's own id for the tenant (1 to 256 characters, no control characters,
    /// no surrounding spaces); unique among companies. `None`: no reference.
    pub external_ref: Option<String>,
}

/// A company.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Company {
    /// The company's id (what API keys and tokens are scoped to).
    pub id: CompanyId,
    /// Its name.
    pub name: String,
    /// The host's reference, when it gave one.
    pub external_ref: Option<String>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

impl From<company::Model> for Company {
    fn from(m: company::Model) -> Self {
        Self {
            id: CompanyId(m.id),
            name: m.name,
            external_ref: m.external_ref,
            created_at: m.created_at,
        }
    }
}

/// `external_ref` as given, or why it cannot be one: it is an identifier, compared
/// exactly, so it is never trimmed or case-folded.
fn external_ref(value: &str) -> Result<&str> {
    let problem = if value.is_empty() {
        Some("must not be empty".to_owned())
    } else if value.chars().count() > EXTERNAL_REF_MAX {
        Some(format!("must be at most {EXTERNAL_REF_MAX} characters"))
    } else if value.chars().any(char::is_control) {
        Some("must not contain control characters".to_owned())
    } else if value.trim() != value {
        Some("must not start or end with whitespace".to_owned())
    } else {
        None
    };
    match problem {
        Some(problem) => Err(Error::invalid_field("externalRef", problem)),
        None => Ok(value),
    }
}

impl Wfs {
    /// Creates a company for one of the host's tenants, without any user: it has no
    /// portal login and no member until the host adds them.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `name` or `externalRef`; [`Error::Conflict`] when
    /// another company already has this `external_ref` (find it with
    /// [`Wfs::company_by_external_ref`]).
    pub async fn create_company(&self, tx: &WriteTx, input: NewCompany) -> Result<Company> {
        let conn = &self.store().enter_write(tx)?;
        let name = required_text("name", &input.name, 200)?;
        let external = input
            .external_ref
            .as_deref()
            .map(external_ref)
            .transpose()?;
        let created = company::ActiveModel {
            id: Set(CompanyId::new().0),
            name: Set(name),
            resource_version: Set(0),
            resource_updated_at: Set(None),
            created_at: Set(self.now()),
            external_ref: Set(external.map(str::to_owned)),
        }
        .insert(conn)
        .await
        .on_unique_violation(|| {
            format!(
                "A company with externalRef {} already exists",
                external.unwrap_or_default()
            )
        })?;
        Ok(created.into())
    }

    /// The company the host created with `external_ref`, if any.
    ///
    /// # Errors
    /// [`Error::Unavailable`] when the database does not answer.
    pub async fn company_by_external_ref(&self, external_ref: &str) -> Result<Option<Company>> {
        Ok(company::Entity::find()
            .filter(company::Column::ExternalRef.eq(external_ref))
            .one(self.store().conn())
            .await?
            .map(Company::from))
    }

    /// The company with `id`, if any.
    ///
    /// # Errors
    /// [`Error::Unavailable`] when the database does not answer.
    pub async fn company(&self, id: CompanyId) -> Result<Option<Company>> {
        Ok(company::Entity::find_by_id(id.0)
            .one(self.store().conn())
            .await?
            .map(Company::from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_external_ref_is_an_exact_identifier() {
        assert_eq!(external_ref("tenant-42").unwrap(), "tenant-42");
        assert_eq!(external_ref("Tenant 42 ü").unwrap(), "Tenant 42 ü");
        let x = "x".repeat(EXTERNAL_REF_MAX);
        assert!(external_ref(&x).is_ok());
        for bad in [
            "",
            " t",
            "t ",
            "a\u{0}b",
            "a\nb",
            &"x".repeat(EXTERNAL_REF_MAX + 1),
        ] {
            let err = external_ref(bad).unwrap_err();
            assert!(err.to_string().contains("externalRef"), "{bad:?}: {err}");
        }
    }
}
