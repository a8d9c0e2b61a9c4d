//! A sign-in's answer (`POST /auth/signin`): the token, the user, and the companies
//! it opens. No password or hash, ever.

use crate::domain::membership::Privilege;
use crate::ids::{CompanyId, UserId};
use serde::{Serialize, Serializer};

// The document describes few of these fields: the others' docs are written as
// `#[doc = concat!(..)]`, which rustdoc shows and the schema derive does not read.
#[doc = concat!("A successful sign-in.")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SignInResult {
    /// Bearer token (JWT, valid for one hour) for the `/auth/keys` routes.
    pub access_token: String,
    #[doc = concat!("The signed-in user.")]
    pub user: SignedInUser,
    #[doc = concat!("The company the token acts for.")]
    pub active_company: CompanyRef,
    #[doc = concat!("Every company the user is an active member of.")]
    pub companies: Vec<CompanyAccess>,
}

#[doc = concat!("The signed-in user: ids and names of their own account.")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SignedInUser {
    #[doc = concat!("The user's id.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: UserId,
    #[doc = concat!("First name.")]
    pub first_name: String,
    #[doc = concat!("Last name.")]
    pub last_name: String,
    #[doc = concat!("Email.")]
    pub email: String,
    /// When true the admin should change the password before proceeding.
    pub must_change_password: bool,
}

#[doc = concat!("A company by id and name.")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CompanyRef {
    #[doc = concat!("Company id.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: CompanyId,
    #[doc = concat!("Company name.")]
    pub name: String,
}

#[doc = concat!("A company as listed in the sign-in result, with the user's privilege there.")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CompanyAccess {
    #[doc = concat!("Company id.")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: CompanyId,
    #[doc = concat!("Company name.")]
    pub name: String,
    /// 1 = Super Admin, 2 = Admin, 3 = Member.
    #[serde(serialize_with = "privilege_code")]
    #[cfg_attr(feature = "openapi", schema(value_type = i16, minimum = 1, maximum = 3))]
    pub privilege: Privilege,
}

impl From<&CompanyAccess> for CompanyRef {
    fn from(c: &CompanyAccess) -> Self {
        Self {
            id: c.id,
            name: c.name.clone(),
        }
    }
}

fn privilege_code<S: Serializer>(privilege: &Privilege, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_i16(privilege.code())
}
