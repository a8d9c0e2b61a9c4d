//! Portal sign-in and the bearer tokens that guard key management.

use crate::Wfs;
use crate::domain::membership::{MembershipStatus, Privilege};
use crate::domain::signed::{Pseudonyms, SealKey};
use crate::entity::{company, membership, user};
use crate::error::{AuthFailure, Error, Result};
use crate::ids::CompanyId;
use crate::persistence::repo::owned_by;
use crate::principal::AdminPrincipal;
use crate::service::audit::{Actor, AuditAction, AuditScope};
use crate::service::throttle::{CONSECUTIVE_FAILURES_MAX, LOGIN_WINDOW, refused};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use sea_orm::sea_query::{Expr, ExprTrait, Func};
use sea_orm::{ColumnTrait, EntityTrait, JoinType, QueryFilter, QueryOrder, QuerySelect};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::IpAddr;

/// The outbox kind of the email that tells a user its sign-in reached
/// [`CONSECUTIVE_FAILURES_MAX`].
pub const KIND_SIGN_IN_LOCKED_EMAIL: &str = "sign_in_locked_email";

/// Lifetime of a sign-in token.
pub const TOKEN_TTL: chrono::Duration = chrono::Duration::hours(1);

/// Shortest accepted signing secret.
pub const MIN_SECRET_LEN: usize = 32;

/// The server's keys, all from the one configured secret: HS256 for sign-in tokens,
/// a derived key that seals page cursors, and one that names logins and addresses in
/// a shared store.
pub struct TokenKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    pub(crate) cursors: SealKey,
    pub(crate) pseudonyms: Pseudonyms,
}

impl fmt::Debug for TokenKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenKeys(<redacted>)")
    }
}

impl TokenKeys {
    /// Keys from a secret of at least [`MIN_SECRET_LEN`] bytes.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the secret is too short to resist brute force.
    pub fn new(secret: &[u8]) -> Result<Self> {
        if secret.len() < MIN_SECRET_LEN {
            return Err(Error::invalid(format!(
                "the JWT secret must be at least {MIN_SECRET_LEN} bytes"
            )));
        }
        crate::crypto::install_defaults();
        Ok(Self {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            cursors: SealKey::derive(secret, "wfs page cursor v1"),
            pseudonyms: Pseudonyms::derive(secret, "wfs pseudonym v1"),
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: uuid::Uuid,
    /// The active company.
    cid: uuid::Uuid,
    iat: i64,
    exp: i64,
}

pub use crate::resource::sign_in::{CompanyAccess, CompanyRef, SignInResult, SignedInUser};

impl Wfs {
    /// The companies where the user is an active member, by name, with their
    /// privilege there.
    async fn companies_of(&self, user: uuid::Uuid) -> Result<Vec<CompanyAccess>> {
        Ok(membership::Entity::find()
            .select_only()
            .column(company::Column::Id)
            .column(company::Column::Name)
            .column(membership::Column::Privilege)
            .join(JoinType::InnerJoin, membership_company())
            .filter(membership::Column::UserId.eq(user))
            .filter(membership::Column::Status.eq(MembershipStatus::Active.code()))
            .order_by_asc(company::Column::Name)
            .order_by_asc(company::Column::Id)
            .into_tuple::<(uuid::Uuid, String, i16)>()
            .all(self.store().conn())
            .await?
            .into_iter()
            .map(|(id, name, privilege)| CompanyAccess {
                id: id.into(),
                name,
                privilege: Privilege::from_code(privilege),
            })
            .collect())
    }

    /// Signs in with an email or username and a password, from `client` (the caller's
    /// address, for the sign-in throttle; `None` when unknown).
    ///
    /// Only a super admin (privilege 1) of at least one company may sign in; the
    /// active company is the first such company by name.
    ///
    /// The password is checked on the blocking pool, at most so many at once and so
    /// many waiting ([`PasswordWork`](crate::service::password_work::PasswordWork)),
    /// so a flood of sign-ins cannot take the cores from other requests; an
    /// unknown login and a login without a password cost the same hashing work as a
    /// wrong password, so timing tells nothing about which logins exist.
    ///
    /// # Errors
    /// [`AuthFailure::InvalidLogin`] (same answer for unknown user and wrong password);
    /// [`Error::Throttled`] past the limits of [`crate::service::throttle`], wherever
    /// the facade counts them ([`Wfs::with_sign_in_limits`]), when more than
    /// [`TURNS_WAITING`](crate::service::throttle::TURNS_WAITING) attempts of a slowed
    /// login wait for their turn, and for a user past [`CONSECUTIVE_FAILURES_MAX`]
    /// wrong passwords from an address they came from;
    /// [`Error::Forbidden`] for a user who is no company's super admin;
    /// [`Error::Busy`] when as many password checks as may are running and waiting.
    pub async fn sign_in(
        &self,
        login: &str,
        password: &str,
        client: Option<IpAddr>,
    ) -> Result<SignInResult> {
        self.sign_in_recorded(None, login, password, client).await
    }

    /// [`Wfs::sign_in`] for a request whose audit context is `audit`: its entries
    /// (`sign_in.succeeded`, `sign_in.failed`) wait there, for the transport to write
    /// with the request's facts, instead of being written at once without them.
    ///
    /// # Errors
    /// As [`Wfs::sign_in`].
    pub async fn sign_in_within(
        &self,
        audit: &AuditScope,
        login: &str,
        password: &str,
        client: Option<IpAddr>,
    ) -> Result<SignInResult> {
        self.sign_in_recorded(Some(audit), login, password, client)
            .await
    }

    async fn sign_in_recorded(
        &self,
        audit: Option<&AuditScope>,
        login: &str,
        password: &str,
        client: Option<IpAddr>,
    ) -> Result<SignInResult> {
        let typed = login.trim().to_lowercase();
        // Every per-address limit counts an IPv6 client by its /64.
        let origin = client.map(crate::domain::origin::origin);
        let found = self.user_by_login(&typed).await?;
        // A login that names a user counts under the user, whichever of its names
        // was typed; one that names none, under what was typed.
        let counted = found
            .as_ref()
            .map_or_else(|| format!("login:{typed}"), |u| format!("user:{}", u.id));
        let limits = self.sign_in_limits();
        let _turn = self.admit_sign_in(&counted, origin, found.as_ref()).await?;
        let stored = found.as_ref().and_then(|u| u.password_hash.clone());
        let verified = self.password_work.verify(password, stored).await?;
        let user = match found {
            Some(u) if verified => u,
            known => return Err(self.sign_in_failed(audit, &counted, origin, known).await?),
        };
        limits.succeeded(&counted, origin).await;
        if user.sign_in_failures > 0 {
            user::Entity::update_many()
                .col_expr(user::Column::SignInFailures, Expr::value(0))
                .filter(user::Column::Id.eq(user.id))
                .exec(self.store().conn())
                .await?;
        }

        let companies = self.companies_of(user.id).await?;
        let Some(active) = companies
            .iter()
            .find(|c| c.privilege == Privilege::SuperAdmin)
            .cloned()
        else {
            return Err(Error::Forbidden(
                "Only a company super admin can sign in to the developer portal".into(),
            ));
        };

        let access_token = self.access_token(user.id, active.id)?;
        self.record_sign_in(audit, active.id, AuditAction::SignInSucceeded, user.id)
            .await?;
        Ok(SignInResult {
            access_token,
            user: SignedInUser {
                id: user.id.into(),
                first_name: user.first_name,
                last_name: user.last_name,
                email: user.email,
                must_change_password: user.must_change_password,
            },
            active_company: CompanyRef::from(&active),
            companies,
        })
    }

    /// Counts a failed sign-in (for the limits, and for a known user its consecutive
    /// failures), records it in the audit log of every company the login would have
    /// opened, and answers the error to give: the same for an unknown login and a
    /// wrong password.
    async fn sign_in_failed(
        &self,
        audit: Option<&AuditScope>,
        counted: &str,
        origin: Option<IpAddr>,
        known: Option<user::Model>,
    ) -> Result<Error> {
        self.sign_in_limits().failed(counted, origin).await;
        if let Some(user) = known {
            self.count_sign_in_failure(&user).await?;
            let companies = self.companies_of(user.id).await?;
            let admin_of = companies
                .iter()
                .filter(|c| c.privilege == Privilege::SuperAdmin);
            for company in admin_of {
                self.record_sign_in(audit, company.id, AuditAction::SignInFailed, user.id)
                    .await?;
            }
        }
        Ok(Error::Unauthenticated(AuthFailure::InvalidLogin))
    }

    /// A signed access token for `user` in `company`, valid for [`TOKEN_TTL`].
    fn access_token(&self, user: uuid::Uuid, company: CompanyId) -> Result<String> {
        let now = self.now();
        let claims = Claims {
            sub: user,
            cid: company.0,
            iat: now.timestamp(),
            exp: (now + TOKEN_TTL).timestamp(),
        };
        jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &self.tokens().encoding,
        )
        .map_err(Error::internal)
    }

    /// Checks a bearer token and that its user is still an active super admin of the
    /// token's company, so demotion or deactivation takes effect at once.
    ///
    /// # Errors
    /// [`AuthFailure::InvalidToken`] for a bad, expired or no longer entitled token.
    pub async fn authenticate_admin(&self, token: &str) -> Result<AdminPrincipal> {
        let invalid = || Error::Unauthenticated(AuthFailure::InvalidToken);
        let mut validation = Validation::new(Algorithm::HS256);
        // Expiry is checked against our own clock below, so tests can move time.
        validation.validate_exp = false;
        validation.set_required_spec_claims(&["exp", "sub"]);
        let claims = jsonwebtoken::decode::<Claims>(token, &self.tokens().decoding, &validation)
            .map_err(|_| invalid())?
            .claims;
        if claims.exp <= self.now().timestamp() {
            return Err(invalid());
        }
        let entitled = owned_by::<membership::Entity>(claims.cid.into())
            .filter(membership::Column::UserId.eq(claims.sub))
            .filter(membership::Column::Privilege.eq(Privilege::SuperAdmin.code()))
            .filter(membership::Column::Status.eq(MembershipStatus::Active.code()))
            .one(self.store().conn())
            .await?
            .is_some();
        if !entitled {
            return Err(invalid());
        }
        Ok(AdminPrincipal {
            user_id: claims.sub.into(),
            company_id: claims.cid.into(),
        })
    }
}

impl Wfs {
    /// The user a typed login (trimmed, lowercased) names: by email, or by user name
    /// whatever its case.
    async fn user_by_login(&self, typed: &str) -> Result<Option<user::Model>> {
        Ok(user::Entity::find()
            .filter(
                sea_orm::Condition::any()
                    .add(user::Column::Email.eq(typed))
                    .add(ExprTrait::eq(
                        Expr::expr(Func::lower(Expr::col(user::Column::UserName))),
                        typed,
                    )),
            )
            .one(self.store().conn())
            .await?)
    }

    /// Admits an attempt at the login counted as `counted` from `origin`, or refuses
    /// it ([`crate::service::throttle`]): past the ceiling of wrong passwords, only
    /// from an address the guesses did not come from; past the login's budget, after
    /// its turn and its slow-down (a login guessed from many addresses: slowed, never
    /// shut, and checked one attempt at a time). The turn is held until the password
    /// is checked.
    async fn admit_sign_in(
        &self,
        counted: &str,
        origin: Option<IpAddr>,
        found: Option<&user::Model>,
    ) -> Result<Option<crate::service::throttle::Turn<'_>>> {
        let limits = self.sign_in_limits();
        let throttled = |retry_after| Error::Throttled { retry_after };
        if found.is_some_and(|user| user.sign_in_failures >= CONSECUTIVE_FAILURES_MAX)
            && limits.failed_from(counted, origin).await
        {
            return Err(throttled(LOGIN_WINDOW));
        }
        let slow_down = limits.admit(counted, origin).await.map_err(throttled)?;
        if slow_down.is_zero() {
            return Ok(None);
        }
        let turn = self.guess_turns().take(counted).await;
        let turn = turn.ok_or_else(|| throttled(refused(slow_down)))?;
        tokio::time::sleep(slow_down).await;
        Ok(Some(turn))
    }

    /// Counts a wrong password of `user` in the store, where every server sees it;
    /// the one that reaches [`CONSECUTIVE_FAILURES_MAX`] also emails the user, in the
    /// same transaction, that sign-in is now refused but from elsewhere.
    async fn count_sign_in_failure(&self, user: &user::Model) -> Result<()> {
        let tx = self.store().begin().await?;
        let conn = tx.qualified();
        user::Entity::update_many()
            .col_expr(
                user::Column::SignInFailures,
                Expr::col(user::Column::SignInFailures).add(1),
            )
            .filter(user::Column::Id.eq(user.id))
            .exec(conn)
            .await?;
        let now: Option<i32> = user::Entity::find_by_id(user.id)
            .select_only()
            .column(user::Column::SignInFailures)
            .into_tuple()
            .one(conn)
            .await?;
        if now == Some(CONSECUTIVE_FAILURES_MAX) {
            let email = crate::service::outbox::Email {
                to: user.email.clone(),
                subject: "Sign-in to your workforce scheduling account is locked".to_owned(),
                text: format!(
                    "Hello,\n\nSomeone has entered a wrong password for {} {} times in a \
                     row. To protect the account, sign-in is now refused from every address \
                     those attempts came from. You can still sign in from another network \
                     (for example your office or a mobile connection); your operator can \
                     also set a new password with `wfs-server restore-admin`.\n\nIf this \
                     was not you, change your password once you are in.\n",
                    user.email, CONSECUTIVE_FAILURES_MAX
                ),
            };
            self.enqueue_email(conn, None, KIND_SIGN_IN_LOCKED_EMAIL, &email)
                .await?;
        }
        tx.commit().await
    }

    /// Records a sign-in of `user` for `company`: kept for the request's transport to
    /// write with the answer, or, with no request, written at once.
    async fn record_sign_in(
        &self,
        audit: Option<&AuditScope>,
        company: CompanyId,
        action: AuditAction,
        user: uuid::Uuid,
    ) -> Result<()> {
        let actor = Some(Actor::Admin(user.into()));
        self.record_audit_alone(audit, company, action, actor, None)
            .await
    }
}

fn membership_company() -> sea_orm::RelationDef {
    membership::Entity::belongs_to(company::Entity)
        .from(membership::Column::CompanyId)
        .to(company::Column::Id)
        .into()
}
