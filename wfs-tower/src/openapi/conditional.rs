//! Conditional requests in the document (see `crate::conditional`): `If-None-Match`,
//! the `ETag` and the `304` of every authenticated read; `If-Match` and the `412` of
//! the writes to one resource that honour it; the `ETag` of the answers about one
//! resource. Which writes do is their route's [`Facts`](crate::handlers::Facts).

use super::answers::{error, with_header};
use super::headers::HEADER_ETAG;
use crate::auth::Access;
use crate::handlers::Route;
use http::Method;
use utoipa::openapi::RefOr;
use utoipa::openapi::Required;
use utoipa::openapi::path::{Operation, ParameterBuilder, ParameterIn};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Type};

pub(super) fn describe_conditional(op: &mut Operation, route: &Route) {
    if route.method == Method::GET && route.facts.access != Access::Public {
        parameter(
            op,
            "If-None-Match",
            "An `ETag` this operation answered before (or several, comma-separated, or `*`): \
             while the representation still has it, the answer is `304 Not Modified` without \
             a body. It counts against the rate limit as a 200 does.",
        );
        with_header(op, "200", "ETag", HEADER_ETAG);
        op.responses.responses.insert(
            "304".to_owned(),
            RefOr::T(
                ResponseBuilder::new()
                    .description(
                        "Not modified: the representation still has the `ETag` that \
                         `If-None-Match` named. No body; counted against the rate limit as a 200",
                    )
                    .build(),
            ),
        );
        with_header(op, "304", "ETag", HEADER_ETAG);
        error(op, 400, "An `If-None-Match` over 4096 characters");
    }
    if route.facts.if_match {
        parameter(
            op,
            "If-Match",
            "The resource's `ETag` (or several, or `*` for any current resource): the write \
             happens only while the resource still has it, else `412` and nothing is written. \
             A job role's or a location's is on the answers that create or update it; a \
             shift's on its read (`GET /shifts?shiftId=`) and its cancellation; a staff \
             member's is its workforce resource's (`GET /workforce/resources/{id}`), also on \
             its deactivation.",
        );
        error(op, 400, "An `If-Match` over 4096 characters");
        error(
            op,
            412,
            "`If-Match` does not name the resource's current `ETag`: it has changed since it \
             was read; nothing was written. The message names the current tag when the key \
             may read the resource",
        );
    }
    if route.facts.tagged {
        for status in ["200", "201"] {
            with_header(op, status, "ETag", HEADER_ETAG);
        }
    }
}

fn parameter(op: &mut Operation, name: &str, description: &str) {
    op.parameters.get_or_insert_with(Vec::new).push(
        ParameterBuilder::new()
            .name(name)
            .parameter_in(ParameterIn::Header)
            .required(Required::False)
            .description(Some(description))
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .max_length(Some(crate::conditional::MAX_FIELD)),
            ))
            .build()
            .into(),
    );
}
