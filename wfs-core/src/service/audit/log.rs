//! Reading the log: a company's entries, newest first, filtered, in pages behind
//! sealed cursors.

use super::{Actor, AuditAction, Recorded, RequestFacts};
use crate::Wfs;
use crate::entity::audit_entry;
use crate::error::{Error, Result};
use crate::ids::CompanyId;
use crate::persistence::repo::owned_by;
use crate::resource::audit::AuditLogEntry;
use crate::service::page::Page;
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, Condition, QueryFilter, QueryOrder, QuerySelect, Set};
use uuid::Uuid;

/// Entries per page unless `limit` says otherwise.
pub const LIMIT_DEFAULT: u64 = 100;
/// The largest `limit`.
pub const LIMIT_MAX: u64 = 200;
/// Actions one `action` filter may name.
const ACTIONS_MAX: usize = 16;

/// Filters of [`Wfs::list_audit_log`], as received.
#[derive(Debug, Clone, Default)]
pub struct AuditQuery {
    /// Only entries at or after this instant.
    pub from: Option<DateTime<Utc>>,
    /// Only entries before this instant.
    pub to: Option<DateTime<Utc>>,
    /// Only these actions, comma-separated.
    pub action: Option<String>,
    /// Only entries made by this actor (an API key id or a user id).
    pub actor: Option<String>,
    /// 1 to 200 (default 100).
    pub limit: Option<i64>,
    /// The previous page's `next_cursor`.
    pub cursor: Option<String>,
}

/// An [`AuditQuery`] checked.
struct Filter {
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
    actions: Vec<AuditAction>,
    actor: Option<String>,
    limit: u64,
}

impl Filter {
    fn of(query: &AuditQuery) -> Result<Self> {
        // A window that ends before it starts holds nothing: an empty page, as any
        // other window without entries.
        let (from, to) = (query.from, query.to);
        let actions = match query.action.as_deref() {
            None => Vec::new(),
            Some(list) => parse_actions(list)?,
        };
        let actor = query.actor.as_deref().map(str::trim).map(|actor| {
            // An id is compared as ids are stored: lower-case hyphenated.
            actor
                .parse::<Uuid>()
                .map_or_else(|_| actor.to_owned(), |id| id.to_string())
        });
        let limit = match query.limit {
            None => LIMIT_DEFAULT,
            Some(n) if (1..=LIMIT_MAX as i64).contains(&n) => n as u64,
            Some(_) => {
                return Err(Error::invalid_field(
                    "limit",
                    format!("must be between 1 and {LIMIT_MAX}"),
                ));
            }
        };
        Ok(Self {
            from,
            to,
            actions,
            actor,
            limit,
        })
    }

    /// What a cursor is bound to: the company and every filter (not the page size:
    /// a position reads the same with any `limit`, and the NDJSON export continues a
    /// page's cursor with its own).
    fn scope(&self, company: CompanyId) -> String {
        let micros = |t: Option<DateTime<Utc>>| t.map(|t| t.timestamp_micros().to_string());
        let actions: Vec<&str> = self.actions.iter().map(|a| a.as_str()).collect();
        format!(
            "audit:{company}:{}:{}:{}:{}|",
            micros(self.from).unwrap_or_default(),
            micros(self.to).unwrap_or_default(),
            actions.join(","),
            self.actor.as_deref().unwrap_or(""),
        )
    }
}

fn parse_actions(list: &str) -> Result<Vec<AuditAction>> {
    let names: Vec<&str> = list.split(',').map(str::trim).collect();
    if names.len() > ACTIONS_MAX {
        return Err(Error::invalid_field(
            "action",
            format!("may name at most {ACTIONS_MAX} actions"),
        ));
    }
    let mut actions = Vec::with_capacity(names.len());
    for name in names {
        let action = AuditAction::parse(name).ok_or_else(|| {
            Error::invalid_field(
                "action",
                format!("is not an audit action ('{}')", name.escape_debug()),
            )
        })?;
        if !actions.contains(&action) {
            actions.push(action);
        }
    }
    Ok(actions)
}

/// The stored row of `entry`.
pub(super) fn row(
    entry: &Recorded,
    facts: Option<&RequestFacts>,
    now: DateTime<Utc>,
) -> audit_entry::ActiveModel {
    let (actor_type, actor_id) = entry.actor.as_ref().unwrap_or(&Actor::HOST).parts();
    audit_entry::ActiveModel {
        id: Set(Uuid::now_v7()),
        company_id: Set(entry.company.0),
        occurred_at: Set(now),
        action: Set(entry.action.as_str().to_owned()),
        actor_type: Set(actor_type.to_owned()),
        actor_id: Set(actor_id),
        target_type: Set(entry.target.as_ref().map(|t| t.kind.to_owned())),
        target_id: Set(entry.target.as_ref().map(|t| t.id.clone())),
        method: Set(facts.map(|f| f.method.clone())),
        route: Set(facts.map(|f| f.route.clone())),
        status: Set(facts.and_then(|f| f.status).map(i32::from)),
        request_id: Set(facts.and_then(|f| f.request_id.clone())),
        client_request_id: Set(facts.and_then(|f| f.client_request_id.clone())),
        idempotency_key: Set(facts.and_then(|f| f.idempotency_key.clone())),
        ip: Set(facts.and_then(|f| f.ip).map(|ip| ip.to_string())),
        count: Set(1),
    }
}

impl Wfs {
    /// The company's audit log, newest first, one page. Reading it is not logged.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `from`, `to`, `action`, `limit` or `cursor`.
    pub async fn list_audit_log(
        &self,
        company: CompanyId,
        query: AuditQuery,
    ) -> Result<Page<AuditLogEntry>> {
        let filter = Filter::of(&query)?;
        let scope = filter.scope(company);
        let after = self.open_cursor(&scope, query.cursor.as_deref(), |position| {
            let (micros, id) = position.split_once('/')?;
            let at = DateTime::from_timestamp_micros(micros.parse().ok()?)?;
            Some((at, id.parse::<Uuid>().ok()?))
        })?;
        let mut find = owned_by::<audit_entry::Entity>(company)
            .order_by_desc(audit_entry::Column::OccurredAt)
            .order_by_desc(audit_entry::Column::Id)
            .limit(filter.limit + 1);
        if let Some(from) = filter.from {
            find = find.filter(audit_entry::Column::OccurredAt.gte(from));
        }
        if let Some(to) = filter.to {
            find = find.filter(audit_entry::Column::OccurredAt.lt(to));
        }
        if !filter.actions.is_empty() {
            let names = filter.actions.iter().map(|a| a.as_str());
            find = find.filter(audit_entry::Column::Action.is_in(names));
        }
        if let Some(actor) = &filter.actor {
            find = find.filter(audit_entry::Column::ActorId.eq(actor.as_str()));
        }
        if let Some((at, id)) = after {
            // Strictly after the last entry of the previous page, newest first.
            find = find.filter(
                Condition::any()
                    .add(audit_entry::Column::OccurredAt.lt(at))
                    .add(
                        Condition::all()
                            .add(audit_entry::Column::OccurredAt.eq(at))
                            .add(audit_entry::Column::Id.lt(id)),
                    ),
            );
        }
        let mut rows = find.all(self.store().conn()).await?;
        let next_cursor = (rows.len() as u64 > filter.limit).then(|| {
            rows.truncate(filter.limit as usize);
            let last = rows
                .last()
                .map(|r| (r.occurred_at, r.id))
                .unwrap_or_default();
            let position = format!("{}/{}", last.0.timestamp_micros(), last.1);
            self.seal_cursor(&scope, &position)
        });
        Ok(Page {
            data: rows.into_iter().map(AuditLogEntry::from).collect(),
            limit: filter.limit,
            next_cursor,
        })
    }
}
