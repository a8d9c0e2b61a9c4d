//! What a route's access decides in the document: its security requirement, the
//! scope it needs, the `Idempotency-Key` of writing routes, and their answers.

use super::answers::{error, with_header};
use super::components::{API_KEY, API_SECRET, BEARER, IDEMPOTENCY_KEY};
use super::headers::HEADER_IDEMPOTENT_REPLAYED;
use crate::auth::Access;
use crate::handlers::Route;
use utoipa::openapi::path::{Operation, ParameterBuilder, ParameterIn};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{Ref, Required};

/// Security requirement, the scope in the description, and the 401/403/429 answers.
pub(super) fn describe_access(op: &mut Operation, route: &Route) {
    match route.facts.access {
        // Said outright, so a reader (and a linter) knows it is not an omission.
        Access::Public => op.security = Some(Vec::new()),
        Access::Admin => {
            op.security = Some(vec![SecurityRequirement::new::<_, [&str; 0], &str>(
                BEARER,
                [],
            )]);
            error(
                op,
                401,
                "The bearer token is missing, malformed, invalid or expired",
            );
        }
        Access::Key(scope) => {
            op.security = Some(vec![
                SecurityRequirement::new::<_, [&str; 0], &str>(API_KEY, [])
                    .add::<_, [&str; 0], &str>(API_SECRET, []),
            ]);
            let note = format!("Requires an API key with scope `{}`.", scope.as_str());
            op.description = Some(match op.description.take() {
                Some(d) if !d.is_empty() => format!("{d}\n\n{note}"),
                _ => note,
            });
            error(
                op,
                401,
                "`Missing API credentials` (`x-api-key` or `x-api-secret` absent), \
                 `Invalid API credentials` (unknown key, wrong secret or revoked key), \
                 or `API key expired`",
            );
            error(
                op,
                403,
                &format!(
                    "`Missing required scope: {}`, or `Address not allowed for this API key`",
                    scope.as_str()
                ),
            );
            error(
                op,
                429,
                "The key's rate limit is exceeded (when the operator sets one)",
            );
        }
    }
}

/// The `Idempotency-Key` header, its replay header and its 400/409 answers.
pub(super) fn describe_idempotency(op: &mut Operation, access: Access) {
    let required = matches!(access, Access::Key(_));
    let description = if required {
        "A new value for each logical operation, 8 to 128 URL-safe characters \
         (`A-Z a-z 0-9 - _`); reuse it only to retry the identical method, path and body. \
         A completed retry answers the original response with `Idempotent-Replayed: true`. \
         Kept 24 hours per API key."
    } else {
        "Optional here; when sent it is honoured with the same rules as on resource \
         routes, scoped to the signed-in admin."
    };
    op.parameters.get_or_insert_with(Vec::new).push(
        ParameterBuilder::new()
            .name("Idempotency-Key")
            .parameter_in(ParameterIn::Header)
            .required(if required {
                Required::True
            } else {
                Required::False
            })
            .description(Some(description))
            .schema(Some(Ref::from_schema_name(IDEMPOTENCY_KEY)))
            .build()
            .into(),
    );
    let successes: Vec<String> = op
        .responses
        .responses
        .keys()
        .filter(|status| status.starts_with('2'))
        .cloned()
        .collect();
    for status in successes {
        with_header(
            op,
            &status,
            "Idempotent-Replayed",
            HEADER_IDEMPOTENT_REPLAYED,
        );
    }
    let missing = if required {
        "A missing or malformed `Idempotency-Key`"
    } else {
        "A malformed `Idempotency-Key`"
    };
    error(op, 400, missing);
    error(
        op,
        409,
        "The `Idempotency-Key` was used for a different request, or its original is still in progress",
    );
}
