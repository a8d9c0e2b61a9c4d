//! Authentication of a key pair on every request: the hot path (see the module
//! docs of `service::api_keys`).

use super::*;

/// What [`Wfs::authenticate_key_with`] may spend on reading ids it does not know.
pub trait KeyReadBudget {
    /// Whether the database may be read for an id neither cache knows.
    fn may_read(&self) -> bool;
    /// Such a read found no usable key.
    fn found_nothing(&self) {}
    /// The request presenting the key, for the audit log's `api_key.refused` entry
    /// when the key is revoked or expired; asked only then, so a caller pays for
    /// describing its request only when it is recorded.
    fn request(&self) -> Option<RequestFacts> {
        None
    }
}

/// No budget: every id neither cache knows is read.
impl KeyReadBudget for () {
    fn may_read(&self) -> bool {
        true
    }
}

impl Wfs {
    /// Authenticates an API key pair. This is the per-request hot path.
    ///
    /// # Errors
    /// [`AuthFailure::InvalidCredentials`] for an unknown id, a wrong secret or a revoked
    /// key; [`AuthFailure::KeyExpired`] once `expiresAt` has passed.
    pub async fn authenticate_key(&self, client_id: &str, secret: &str) -> Result<KeyPrincipal> {
        self.authenticate_key_with(client_id, secret, &()).await
    }

    /// [`Wfs::authenticate_key`], asking `budget` before it reads the database for an
    /// id neither cache knows (`false` answers the id as unknown without the read),
    /// and telling it when such a read found nothing. A host passes a per-address
    /// budget, so a flood of made-up ids from one address stays off the database.
    ///
    /// An id the database did not know is remembered as unknown (until a key takes
    /// it), so asking again costs what a known key with a wrong secret costs: the
    /// secret's hash and one constant-time comparison, never a read. Timing tells
    /// nothing about which ids exist.
    ///
    /// # Errors
    /// As [`Wfs::authenticate_key`].
    pub async fn authenticate_key_with(
        &self,
        client_id: &str,
        secret: &str,
        budget: &impl KeyReadBudget,
    ) -> Result<KeyPrincipal> {
        let invalid = Error::Unauthenticated(AuthFailure::InvalidCredentials);
        // A secret no key can have (a checksum that does not check out) costs
        // nothing: it is told apart offline, as a secret scanner tells it.
        if !SecretShape::of(secret).may_exist() {
            return Err(invalid);
        }
        // Hash before the lookup so unknown ids and wrong secrets cost the same.
        let presented = SecretHash::of(secret);
        if !client_id.starts_with(crate::domain::credentials::CLIENT_ID_PREFIX)
            || client_id.len() > 128
        {
            return Err(presented.refuse(invalid));
        }
        let changes = self.store().changes();
        let caches = changes.caches();
        let topic = || Topic::Key(client_id.to_owned());
        // Remembered as unknown: what a known key's wrong secret costs, no read.
        let remembered = changes.cacheable(topic);
        if remembered && caches.unknown_keys.get(client_id).is_some() {
            return Err(presented.refuse(invalid));
        }
        let unknown_ticket = caches.unknown_keys.ticket();
        let read = std::sync::atomic::AtomicBool::new(false);
        let cached = changes.read_through(&caches.keys, topic, client_id, || {
            // Only on a miss. A key this process verified before (its entry only aged
            // out), or one the filter of existing client ids holds (loaded by the first
            // miss; trusted while the caches are), is read whatever the budget: a flood
            // of made-up ids from an address never refuses a real key from there.
            let verified_before = caches.keys.holds(client_id);
            let (read, budget) = (&read, budget);
            async move {
                // A key this process is writing (made, rotated or revoked, its change
                // still pending): an id it knows to be real, whatever its budget, while
                // the caches may not answer for it.
                let exists = !verified_before
                    && (remembered && self.known_client_ids(client_id).await == Some(true)
                        || changes.is_pending(topic));
                let allowed = verified_before || exists || budget.may_read();
                read.store(allowed, std::sync::atomic::Ordering::Relaxed);
                if allowed {
                    self.load_key(client_id).await
                } else {
                    Ok(None)
                }
            }
        });
        let Some(key) = cached.await? else {
            if read.load(std::sync::atomic::Ordering::Relaxed) {
                budget.found_nothing();
                if remembered {
                    caches
                        .unknown_keys
                        .fill(unknown_ticket, client_id.to_owned(), ());
                }
            }
            return Err(presented.refuse(invalid));
        };
        if !presented.matches(&key.secret) {
            return Err(invalid);
        }
        if key.revoked {
            self.record_key_refused(&key.principal, || budget.request())
                .await;
            return Err(invalid);
        }
        if key.expires_at.is_some_and(|at| at <= self.now()) {
            self.record_key_refused(&key.principal, || budget.request())
                .await;
            return Err(Error::Unauthenticated(AuthFailure::KeyExpired));
        }
        Ok(key.principal)
    }

    /// A well-formed key by client id, revoked or not: one indexed lookup,
    /// reading only what authentication needs.
    async fn load_key(&self, client_id: &str) -> Result<Option<CachedKey>> {
        let Some((
            id,
            company_id,
            secret_hash,
            scopes,
            allowed_ips,
            expires_at,
            revoked_at,
            last_used_at,
        )) = api_key::Entity::find()
            .select_only()
            .columns([
                api_key::Column::Id,
                api_key::Column::CompanyId,
                api_key::Column::SecretHash,
                api_key::Column::Scopes,
                api_key::Column::AllowedIps,
                api_key::Column::ExpiresAt,
                api_key::Column::RevokedAt,
                api_key::Column::LastUsedAt,
            ])
            .filter(api_key::Column::ClientId.eq(client_id))
            .into_tuple::<AuthRow>()
            .one(self.store().conn())
            .await?
        else {
            return Ok(None);
        };
        let Some(secret) = SecretHash::from_stored(&secret_hash) else {
            return Ok(None);
        };
        Ok(Some(CachedKey {
            secret,
            principal: KeyPrincipal {
                key_id: id.into(),
                company_id: company_id.into(),
                scopes: ScopeSet::from_stored(scopes.as_deref()),
                allowed_ips: IpAllowlist::from_stored(&allowed_ips),
                last_used_at,
            },
            expires_at,
            revoked: revoked_at.is_some(),
        }))
    }

    /// Whether `principal`'s `lastUsedAt` is due for a refresh.
    pub fn api_key_use_is_stale(&self, principal: &KeyPrincipal) -> bool {
        principal
            .last_used_at
            .is_none_or(|at| self.now() - at >= LAST_USED_GRANULARITY)
    }

    /// Records a use of the key, at most once per [`LAST_USED_GRANULARITY`]: the
    /// conditional update makes concurrent callers (in any process) write once.
    pub async fn touch_api_key(&self, key: ApiKeyId) -> Result<()> {
        let now = self.now();
        let tx = self.store().begin().await?;
        api_key::Entity::update_many()
            .col_expr(api_key::Column::LastUsedAt, Expr::value(now))
            .filter(api_key::Column::Id.eq(key))
            .filter(
                sea_orm::Condition::any()
                    .add(api_key::Column::LastUsedAt.is_null())
                    .add(api_key::Column::LastUsedAt.lte(now - LAST_USED_GRANULARITY)),
            )
            .exec(tx.qualified())
            .await?;
        tx.commit().await
    }
}
