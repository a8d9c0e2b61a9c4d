//! The audit log (bearer-authenticated: the company's admins).

use super::Ctx;
use super::{Entry, Facts};
use crate::auth::Access;
use crate::body::{BodyError, ResponseBody};
use crate::dto::limits::Line;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{instant, query};
use crate::reply::Reply;
use body::*;
use bytes::Bytes;
use http::StatusCode;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use wfs_core::resource::audit::AuditLogPage;
use wfs_core::service::audit::{AuditLogEntry, AuditQuery, LIMIT_MAX};
use wfs_core::service::webhooks::Page;
use wfs_core::{CompanyId, Wfs};

pub(crate) static ROUTES: [Entry; 1] = [route!(
    list_audit_log,
    __path_list_audit_log,
    Facts::read(Access::Admin)
)];

/// The media type of the export: one JSON entry per line.
const NDJSON: &str = "application/x-ndjson";

/// List the audit log
///
/// Who did what, with which key or account, from where, and when: API keys
/// created, rotated, revoked and refused; sign-ins; webhook endpoint changes; and
/// every authenticated write that got an answer (`api.write`). Newest first, kept
/// 400 days. Reading the log is not logged. With `Accept: application/x-ndjson` the
/// answer is every matching entry, one JSON object per line, streamed (for a SIEM);
/// `limit` then only has to be valid.
#[utoipa::path(get, path = "/external/v1/auth/audit-log", tag = super::auth::TAG.name,
    params(AuditLogQuery),
    responses(
        (status = 200, description = "A page of entries, newest first; or, asked for `application/x-ndjson`, every matching entry",
            content(
                (AuditLogPage = "application/json"),
                (AuditLogEntry = "application/x-ndjson"),
            )),
        (status = 400, description = "A bad `from`, `to`, `action`, `limit` or `cursor` (the message names it)", body = ErrorBody),
    ))]
pub(crate) async fn list_audit_log(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let q: AuditLogQuery = query(ctx.query)?;
    let when =
        |field: &str, raw: Option<Line>| raw.as_deref().map(|s| instant(field, s)).transpose();
    let limit = super::page_limit(q.limit.as_ref())?;
    let mut request = AuditQuery {
        from: when("from", q.from)?,
        to: when("to", q.to)?,
        action: q
            .action
            .map(Into::into)
            .filter(|a: &String| !a.trim().is_empty()),
        actor: q.actor.map(Into::into).filter(|a: &String| !a.is_empty()),
        limit,
        cursor: q.cursor.map(String::from).filter(|c| !c.is_empty()),
    };
    let company = ctx.admin()?.company_id;
    if !accepts_ndjson(ctx.headers) {
        let page = ctx.wfs.list_audit_log(company, request).await?;
        return Reply::json(StatusCode::OK, &AuditLogPage::from(page));
    }
    // The first page (of `limit`) before the answer starts: a bad filter or limit is
    // still a 400. The export goes on with the largest pages.
    let first = ctx.wfs.list_audit_log(company, request.clone()).await?;
    request.limit = Some(LIMIT_MAX as i64);
    let export = Export {
        wfs: ctx.wfs.clone(),
        company,
        query: request,
        first: Some(first),
        done: false,
    };
    let lines = futures_util::stream::unfold(export, Export::next);
    let body = StreamBody::new(lines).boxed_unsync();
    Ok(Reply::streamed(NDJSON, ResponseBody::streamed(body)))
}

/// Whether the caller asked for NDJSON (`Accept` names it with a non-zero weight).
fn accepts_ndjson(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| {
            let mut parts = range.split(';').map(str::trim);
            let named = parts.next().is_some_and(|t| t.eq_ignore_ascii_case(NDJSON));
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            named && !refused
        })
}

/// The export's state between two pages.
struct Export {
    wfs: Wfs,
    company: CompanyId,
    query: AuditQuery,
    first: Option<Page<AuditLogEntry>>,
    done: bool,
}

impl Export {
    /// The next page's lines; `None` after the last. A failing read ends the body
    /// with an error: the transfer is cut, never made to look complete.
    async fn next(mut self) -> Option<(Result<Frame<Bytes>, BodyError>, Self)> {
        if self.done {
            return None;
        }
        let page = match self.first.take() {
            Some(page) => page,
            None => match self
                .wfs
                .list_audit_log(self.company, self.query.clone())
                .await
            {
                Ok(page) => page,
                Err(err) => {
                    tracing::error!(error = %err, "the audit log export failed mid-way");
                    self.done = true;
                    return Some((Err(Box::new(err)), self));
                }
            },
        };
        self.done = page.next_cursor.is_none();
        self.query.cursor = page.next_cursor;
        let mut buf = Vec::with_capacity(page.data.len() * 320);
        for entry in page.data {
            if let Err(err) = serde_json::to_writer(&mut buf, &entry) {
                self.done = true;
                return Some((Err(Box::new(err)), self));
            }
            buf.push(b'\n');
        }
        Some((Ok(Frame::data(Bytes::from(buf))), self))
    }
}

pub(crate) mod body {
    //! The audit log's query; its page is the core's own `AuditLogPage`, serialised as it
    //! is (issue 23's contract: snake_case, as `pagination` is).

    use crate::dto::limits::{CursorText, Line};
    use serde::Deserialize;
    use utoipa::IntoParams;

    /// `GET /auth/audit-log` query.
    #[derive(Debug, Deserialize, IntoParams)]
    #[into_params(parameter_in = Query)]
    pub(crate) struct AuditLogQuery {
        /// ISO-8601; only entries at or after this instant.
        #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
        pub(crate) from: Option<Line>,
        /// ISO-8601; only entries before this instant.
        #[param(value_type = Option<DateTime<Utc>>, max_length = 256)]
        pub(crate) to: Option<Line>,
        /// Only these actions, comma-separated (e.g. `api_key.revoked,api_key.refused`);
        /// empty: every action.
        #[param(value_type = Option<String>, max_length = 256, pattern = r"^((api_key\.created|api_key\.rotated|api_key\.revoked|api_key\.refused|api_key\.address_refused|sign_in\.succeeded|sign_in\.failed|admin\.restored|webhook_endpoint\.created|webhook_endpoint\.updated|webhook_endpoint\.deleted|webhook_endpoint\.secret_rotated|api\.write|audit\.dropped)(,(api_key\.created|api_key\.rotated|api_key\.revoked|api_key\.refused|api_key\.address_refused|sign_in\.succeeded|sign_in\.failed|admin\.restored|webhook_endpoint\.created|webhook_endpoint\.updated|webhook_endpoint\.deleted|webhook_endpoint\.secret_rotated|api\.write|audit\.dropped))*)?$")]
        pub(crate) action: Option<Line>,
        /// Only entries by this actor: an API key's `id` or an admin's user id.
        #[param(value_type = Option<String>, max_length = 256)]
        pub(crate) actor: Option<Line>,
        /// 1 to 200; default 100.
        #[param(value_type = Option<i64>, minimum = 1, maximum = 200)]
        pub(crate) limit: Option<Line>,
        /// From `pagination.next_cursor`; must be sent with the same filters.
        #[param(value_type = Option<String>, max_length = 1024)]
        pub(crate) cursor: Option<CursorText>,
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use utoipa::IntoParams;
        use wfs_core::service::audit::AuditAction;

        /// The `action` pattern in the document is written out (an attribute takes a
        /// literal): it must name exactly the core's actions, in its order.
        #[test]
        fn the_action_pattern_names_every_action_and_no_other() {
            let names: Vec<String> = AuditAction::ALL
                .iter()
                .map(|a| a.as_str().replace('.', "\\."))
                .collect();
            let one = format!("({})", names.join("|"));
            let expected = format!("^({one}(,{one})*)?$");
            let params = AuditLogQuery::into_params(|| None);
            let action = params.iter().find(|p| p.name == "action").unwrap();
            let schema = serde_json::to_value(&action.schema).unwrap();
            assert_eq!(schema["pattern"], expected.as_str());
        }
    }
}
