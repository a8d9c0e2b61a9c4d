//! What an audit entry says happened, by whom, to what.

use crate::ids::{ApiKeyId, UserId};

macro_rules! actions {
    ($($(#[$doc:meta])* $variant:ident => $wire:literal,)*) => {
        /// What happened. The wire names are a contract (issue 23).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum AuditAction {
            $($(#[$doc])* $variant,)*
        }

        impl AuditAction {
            /// Every action, in catalogue order.
            pub const ALL: &'static [AuditAction] = &[$(Self::$variant,)*];

            /// The wire name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $wire,)*
                }
            }

            /// A wire name back into its action.
            pub fn parse(name: &str) -> Option<Self> {
                match name {
                    $($wire => Some(Self::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

actions! {
    /// An admin (or a host, for its tenant) created an API key.
    ApiKeyCreated => "api_key.created",
    /// A key's secret was replaced.
    ApiKeyRotated => "api_key.rotated",
    /// A key was revoked (by an admin, or by the system for a leaked secret).
    ApiKeyRevoked => "api_key.revoked",
    /// A revoked or expired key was presented with its right secret and refused.
    ApiKeyRefused => "api_key.refused",
    /// A live key was presented with its right secret from an address outside its
    /// `allowedIps`, and refused: the leaked-key-used-elsewhere case.
    ApiKeyAddressRefused => "api_key.address_refused",
    /// A user of the company signed in.
    SignInSucceeded => "sign_in.succeeded",
    /// Someone tried to sign in as a user of the company with a wrong password.
    SignInFailed => "sign_in.failed",
    /// The operator restored a company's admin (`wfs-server restore-admin`): the
    /// user got a new password and an active super admin membership.
    AdminRestored => "admin.restored",
    /// A webhook endpoint was created.
    WebhookEndpointCreated => "webhook_endpoint.created",
    /// A webhook endpoint was changed.
    WebhookEndpointUpdated => "webhook_endpoint.updated",
    /// A webhook endpoint was deleted.
    WebhookEndpointDeleted => "webhook_endpoint.deleted",
    /// A webhook endpoint's signing secret was replaced.
    WebhookEndpointSecretRotated => "webhook_endpoint.secret_rotated",
    /// An authenticated write got an answer (success or refusal).
    ApiWrite => "api.write",
    /// Refused writes of the company past what its log takes in a minute
    /// (`service::audit::tally`), counted in one entry.
    AuditDropped => "audit.dropped",
}

/// Who did it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// An API key, by its record id (as `GET /auth/keys` lists it, not its client id).
    ApiKey(ApiKeyId),
    /// A signed-in admin, by user id.
    Admin(UserId),
    /// wfs itself or its operator's tools, by name (e.g. `revoke-leaked`).
    System(&'static str),
}

impl Actor {
    /// The actor of an operation run with no request and no signed-in admin: a
    /// host's own code.
    pub const HOST: Actor = Actor::System("host");

    /// `(type, id)` as stored and answered.
    pub fn parts(&self) -> (&'static str, String) {
        match self {
            Self::ApiKey(id) => ("api_key", id.to_string()),
            Self::Admin(id) => ("admin", id.to_string()),
            Self::System(name) => ("system", (*name).to_owned()),
        }
    }
}

/// What it was done to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// e.g. `api_key`, `webhook_endpoint`, `job_role`.
    pub kind: &'static str,
    /// The resource's id.
    pub id: String,
}

impl Target {
    /// A target of `kind` with id `id`.
    pub fn new(kind: &'static str, id: impl ToString) -> Self {
        Self {
            kind,
            id: id.to_string(),
        }
    }
}
