//! Key management for the signed-in admin (and a host, or the CLI, on a company's
//! behalf): list, create, rotate, revoke, each recorded in the audit log.

use super::*;

impl Wfs {
    /// Lists the admin's company's keys, oldest first, revoked ones included.
    pub async fn list_api_keys(&self, admin: AdminPrincipal) -> Result<Vec<ApiKey>> {
        let now = self.now();
        Ok(owned_by::<api_key::Entity>(admin.company_id)
            .order_by_asc(api_key::Column::CreatedAt)
            .order_by_asc(api_key::Column::Id)
            .all(self.store().conn())
            .await?
            .into_iter()
            .map(|k| info(k, now))
            .collect())
    }

    /// Creates a key for the admin's company and returns its secret, once.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a blank name, an unknown scope, a CIDR or malformed
    /// address, or an expiry that is not in the future.
    pub async fn create_api_key(
        &self,
        tx: &WriteTx,
        admin: AdminPrincipal,
        input: NewApiKey,
    ) -> Result<IssuedApiKey> {
        let conn = &self.store().enter_write(tx)?;
        self.issue_api_key(conn, admin.company_id, Some(admin.user_id), input)
            .await
    }

    /// Creates a key for `company` with no signed-in admin behind it (an operator's
    /// command line, a host provisioning its tenants) and returns its secret, once.
    /// The input is validated exactly as [`Wfs::create_api_key`] validates it.
    ///
    /// # Errors
    /// [`Error::NotFound`] (`Company`) for an unknown company; otherwise as
    /// [`Wfs::create_api_key`].
    pub async fn create_company_api_key(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        input: NewApiKey,
    ) -> Result<IssuedApiKey> {
        let conn = &self.store().enter_write(tx)?;
        company::Entity::find_by_id(company.0)
            .one(conn)
            .await?
            .ok_or(Error::not_found("Company"))?;
        self.issue_api_key(conn, company, None, input).await
    }

    async fn issue_api_key(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        created_by: Option<crate::ids::UserId>,
        input: NewApiKey,
    ) -> Result<IssuedApiKey> {
        let name = required_text("name", &input.name, 200)?;
        let scopes = ScopeSet::from_request(input.scopes.as_deref())?;
        let allowed_ips = IpAllowlist::parse(&input.allowed_ips)?;
        if input.expires_at.is_some_and(|at| at <= self.now()) {
            return Err(Error::invalid_field("expiresAt", "must be in the future"));
        }
        let new = KeyRow {
            company,
            created_by,
            name,
            scopes: Some(scopes),
        };
        self.insert_api_key(conn, new, &allowed_ips, input.expires_at)
            .await
    }

    /// Creates a key with no stored scopes, as keys made before scopes existed were.
    /// Such a key is limited to workforce read and write. For hosts migrating old keys.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a blank name.
    pub async fn create_legacy_api_key(
        &self,
        tx: &WriteTx,
        company: CompanyId,
        name: &str,
    ) -> Result<IssuedApiKey> {
        let conn = &self.store().enter_write(tx)?;
        let new = KeyRow {
            company,
            created_by: None,
            name: required_text("name", name, 200)?,
            scopes: None,
        };
        self.insert_api_key(conn, new, &IpAllowlist::default(), None)
            .await
    }

    async fn insert_api_key(
        &self,
        conn: &impl WfsConn,
        new: KeyRow,
        allowed_ips: &IpAllowlist,
        expires_at: Option<DateTime<Utc>>,
    ) -> Result<IssuedApiKey> {
        let now = self.now();
        let secret = ClientSecret::generate();
        let id = ApiKeyId::new();
        let client_id = generate_client_id();
        api_key::ActiveModel {
            id: Set(id.0),
            company_id: Set(new.company.0),
            created_by: Set(new.created_by.map(|u| u.0)),
            name: Set(new.name),
            client_id: Set(client_id.clone()),
            secret_hash: Set(secret.hash().to_hex()),
            scopes: Set(new.scopes.map(ScopeSet::to_stored)),
            allowed_ips: Set(allowed_ips.to_stored()),
            expires_at: Set(expires_at),
            revoked_at: Set(None),
            last_used_at: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(conn)
        .await?;
        // Announced like any change to a key: every server's filter of existing client
        // ids (`cache::known_ids`) takes it, so it is read whatever its caller's address
        // has spent on made-up ids.
        self.store()
            .changes()
            .changed(Topic::Key(client_id.clone()));
        let actor = new.created_by.map(Actor::Admin);
        self.record_key(conn, new.company, AuditAction::ApiKeyCreated, actor, id)
            .await?;
        let scopes = new.scopes.unwrap_or(ScopeSet::LEGACY);
        Ok(IssuedApiKey {
            id,
            client_id,
            client_secret: Some(secret),
            scopes,
        })
    }

    async fn find_company_key(
        &self,
        conn: &impl WfsConn,
        admin: AdminPrincipal,
        id: ApiKeyId,
    ) -> Result<api_key::Model> {
        let key = find_owned::<api_key::Entity>(conn, admin.company_id, id.0, "API key").await?;
        if key.revoked_at.is_some() {
            return Err(Error::conflict("API key is revoked"));
        }
        Ok(key)
    }

    /// Replaces a key's secret; the client id stays and the old secret stops working
    /// at once.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown or other company's key; [`Error::Conflict`]
    /// for a revoked key, and for an expired one (`API key expired`): a new secret
    /// for it could never authenticate.
    pub async fn rotate_api_key(
        &self,
        tx: &WriteTx,
        admin: AdminPrincipal,
        id: ApiKeyId,
    ) -> Result<IssuedApiKey> {
        let conn = &self.store().enter_write(tx)?;
        let key = self.find_company_key(conn, admin, id).await?;
        if key.expires_at.is_some_and(|at| at <= self.now()) {
            return Err(Error::conflict(crate::AuthFailure::KeyExpired.message()));
        }
        let secret = ClientSecret::generate();
        let scopes = ScopeSet::from_stored(key.scopes.as_deref());
        let client_id = key.client_id.clone();
        let mut active: api_key::ActiveModel = key.into();
        active.secret_hash = Set(secret.hash().to_hex());
        active.updated_at = Set(self.now());
        active.update(conn).await?;
        let actor = Some(Actor::Admin(admin.user_id));
        self.record_key(
            conn,
            admin.company_id,
            AuditAction::ApiKeyRotated,
            actor,
            id,
        )
        .await?;
        self.store()
            .changes()
            .changed(Topic::Key(client_id.clone()));
        Ok(IssuedApiKey {
            id,
            client_id,
            client_secret: Some(secret),
            scopes,
        })
    }

    /// Revokes a key permanently; every later request with it answers 401.
    ///
    /// # Errors
    /// As [`Wfs::rotate_api_key`].
    pub async fn revoke_api_key(
        &self,
        tx: &WriteTx,
        admin: AdminPrincipal,
        id: ApiKeyId,
    ) -> Result<ApiKey> {
        let conn = &self.store().enter_write(tx)?;
        let key = self.find_company_key(conn, admin, id).await?;
        let now = self.now();
        let mut active: api_key::ActiveModel = key.into();
        active.revoked_at = Set(Some(now));
        active.updated_at = Set(now);
        let revoked = active.update(conn).await?;
        let actor = Some(Actor::Admin(admin.user_id));
        self.record_key(
            conn,
            admin.company_id,
            AuditAction::ApiKeyRevoked,
            actor,
            id,
        )
        .await?;
        self.store()
            .changes()
            .changed(Topic::Key(revoked.client_id.clone()));
        Ok(info(revoked, now))
    }

    /// Records `action` on key `id` in the audit log.
    pub(crate) async fn record_key(
        &self,
        conn: &impl WfsConn,
        company: CompanyId,
        action: AuditAction,
        actor: Option<Actor>,
        id: ApiKeyId,
    ) -> Result<()> {
        let target = Some(Target::new("api_key", id));
        self.record_audit(conn, company, action, actor, target)
            .await
    }
}
