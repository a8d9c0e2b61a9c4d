//! The feed's cursor and the query a page resolves to.
//!
//! The cursor is opaque (base64url JSON sealed with an HMAC-SHA-256 tag, so a client
//! cannot edit it) and carries the resolved window, limit and `updated_since` it came
//! from (a later request that sends other values is a 400) and the last version
//! served.
//!
//! A resume cursor (`pagination.resume_cursor`) is a position to come back to later,
//! maybe much later: it carries the window as the first page's query gave it, and a
//! window that query left to its default (from now, for 30 days) is resolved afresh at
//! each use, so a consumer resuming next week sees next week's shifts and statuses. A
//! `next_cursor` keeps the resolved window, so the pages of one pass agree.

use super::{DEFAULT_LIMIT, DEFAULT_WINDOW, FeedRequest, MAX_CURSOR_LEN, MAX_LIMIT, MAX_WINDOW};
use crate::domain::signed::SealKey;
use crate::domain::time;
use crate::error::{Error, Result};
use crate::ids::CompanyId;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What a cursor binds: the resolved query and the position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Cursor {
    pub(super) v: u8,
    pub(super) c: Uuid,
    pub(super) f: DateTime<Utc>,
    pub(super) t: DateTime<Utc>,
    pub(super) l: i64,
    pub(super) s: Option<DateTime<Utc>>,
    /// The last version served.
    pub(super) a: i64,
    /// `from` and `to` as the first page's query gave them (`None`: the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) qf: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) qt: Option<DateTime<Utc>>,
    /// A resume cursor: its window is resolved afresh from `qf` and `qt`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) r: bool,
}

impl Cursor {
    pub(super) fn encode(&self, key: &SealKey) -> Result<String> {
        Ok(key.seal(&serde_json::to_vec(self).map_err(Error::internal)?))
    }

    fn decode(raw: &str, company: CompanyId, key: &SealKey) -> Result<Self> {
        let invalid =
            || Error::invalid_field("cursor", "is not a cursor this API issued for this company");
        if raw.len() > MAX_CURSOR_LEN {
            return Err(invalid());
        }
        let bytes = key.open(raw.trim()).ok_or_else(invalid)?;
        let cursor: Cursor = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
        if cursor.v != 1 || cursor.c != company.0 || !(1..=MAX_LIMIT).contains(&cursor.l) {
            return Err(invalid());
        }
        Ok(cursor)
    }
}

/// The resolved query of a page.
pub(super) struct Resolved {
    pub(super) from: DateTime<Utc>,
    pub(super) to: DateTime<Utc>,
    pub(super) limit: i64,
    pub(super) since: Option<DateTime<Utc>>,
    /// Serve versions above this; `None` until `updated_since` is turned into a floor.
    pub(super) after: Option<i64>,
    /// `start=now` (without a cursor): an empty page positioned at the head.
    pub(super) from_head: bool,
    /// `from` and `to` as the first page's query gave them, for the page's cursors.
    pub(super) asked_from: Option<DateTime<Utc>>,
    pub(super) asked_to: Option<DateTime<Utc>>,
}

impl Resolved {
    /// The cursor of a page of this query positioned after version `after`: a
    /// `next_cursor` (the resolved window), or a resume cursor.
    pub(super) fn cursor(&self, company: CompanyId, after: i64, resume: bool) -> Cursor {
        // A resume cursor resolves its window from `qf` and `qt` and never reads `f`
        // and `t`: they hold the asked values (or the epoch), so that the cursor of a
        // position is the same string whenever it is issued (a page's entity tag
        // includes it).
        let (f, t) = if resume {
            let unused = DateTime::<Utc>::UNIX_EPOCH;
            (
                self.asked_from.unwrap_or(unused),
                self.asked_to.unwrap_or(unused),
            )
        } else {
            (self.from, self.to)
        };
        Cursor {
            v: 1,
            c: company.0,
            f,
            t,
            l: self.limit,
            s: self.since,
            a: after,
            qf: self.asked_from,
            qt: self.asked_to,
            r: resume,
        }
    }
}

pub(super) fn resolve(
    req: &FeedRequest,
    company: CompanyId,
    now: DateTime<Utc>,
    key: &SealKey,
) -> Result<Resolved> {
    if let Some(raw) = &req.cursor {
        let cursor = Cursor::decode(raw, company, key)?;
        let differs = |name: &str| {
            Error::invalid_field(
                "cursor",
                format!("was issued for another query: {name} differs"),
            )
        };
        // A resume cursor is bound to the window as asked; a next cursor to the
        // window it resolved (which a first page that asked for none also shows).
        let (bound_from, bound_to) = if cursor.r {
            (cursor.qf, cursor.qt)
        } else {
            (Some(cursor.f), Some(cursor.t))
        };
        if req.from.is_some() && req.from != bound_from {
            return Err(differs("from"));
        }
        if req.to.is_some() && req.to != bound_to {
            return Err(differs("to"));
        }
        if req.limit.is_some_and(|l| l != cursor.l) {
            return Err(differs("limit"));
        }
        if req.updated_since.is_some() && req.updated_since != cursor.s {
            return Err(differs("updated_since"));
        }
        let (from, to) = if cursor.r {
            window(cursor.qf, cursor.qt, now).map_err(|_| {
                Error::invalid_field(
                    "cursor",
                    "is a position in a window that has ended: start again without it",
                )
            })?
        } else {
            (cursor.f, cursor.t)
        };
        return Ok(Resolved {
            from,
            to,
            limit: cursor.l,
            since: cursor.s,
            after: Some(cursor.a),
            from_head: false,
            asked_from: cursor.qf,
            asked_to: cursor.qt,
        });
    }
    if req.start.is_some() && req.updated_since.is_some() {
        return Err(Error::invalid_field(
            "start",
            "cannot be combined with updated_since",
        ));
    }
    let limit = req.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(Error::invalid_field(
            "limit",
            format!("must be between 1 and {MAX_LIMIT}"),
        ));
    }
    let (from, to) = window(req.from, req.to, now)?;
    Ok(Resolved {
        from,
        to,
        limit,
        since: req.updated_since,
        after: None,
        from_head: req.start.is_some(),
        asked_from: req.from,
        asked_to: req.to,
    })
}

/// The window `[from, to)` a query asks for, its defaults resolved at `now`.
fn window(
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<(DateTime<Utc>, DateTime<Utc>)> {
    let from = from.unwrap_or(now);
    let to = match to {
        Some(to) => to,
        None => time::within_years("from", from + DEFAULT_WINDOW)?,
    };
    if to <= from {
        return Err(Error::invalid_field("to", "must be after from"));
    }
    if to - from > MAX_WINDOW {
        return Err(Error::invalid("the window from..to may not exceed 90 days"));
    }
    Ok((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use chrono::Duration;

    fn key() -> SealKey {
        SealKey::derive(&[7; 32], "test cursors")
    }

    #[test]
    fn cursors_round_trip_and_reject_tampering() {
        let company = CompanyId::new();
        let now: DateTime<Utc> = "2026-11-18T09:30:00Z".parse().unwrap();
        let cursor = Cursor {
            v: 1,
            c: company.0,
            f: now,
            t: now + Duration::days(1),
            l: 50,
            s: None,
            a: 42,
            qf: None,
            qt: None,
            r: false,
        };
        let key = key();
        let raw = cursor.encode(&key).unwrap();
        assert_eq!(Cursor::decode(&raw, company, &key).unwrap(), cursor);
        assert!(
            Cursor::decode(&raw, CompanyId::new(), &key).is_err(),
            "another company's cursor"
        );
        assert!(Cursor::decode("not-a-cursor", company, &key).is_err());
        assert!(Cursor::decode(&"A".repeat(2000), company, &key).is_err());
        let forged = Cursor {
            l: 5000,
            ..cursor.clone()
        };
        assert!(Cursor::decode(&forged.encode(&key).unwrap(), company, &key).is_err());
        // The payload is readable, but an edited one (a wider window) no longer opens.
        let (payload, tag) = raw.split_once('.').unwrap();
        let json = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        let widened = json.replace("\"l\":50", "\"l\":60");
        assert_ne!(widened, json);
        let edited = format!("{}.{tag}", URL_SAFE_NO_PAD.encode(widened));
        assert!(
            Cursor::decode(&edited, company, &key).is_err(),
            "an edited cursor"
        );
    }

    /// A resume cursor of a query that left its window to the default resolves it at
    /// each use; a next cursor keeps the first page's; both stay bound to the query.
    #[test]
    fn a_resume_cursor_resolves_a_default_window_afresh_and_a_next_cursor_keeps_its_own() {
        let company = CompanyId::new();
        let then: DateTime<Utc> = "2026-11-18T09:30:00Z".parse().unwrap();
        let later = then + Duration::days(7);
        let first = resolve(&FeedRequest::default(), company, then, &key()).unwrap();
        let use_at = |cursor: &Cursor, req: FeedRequest, now| {
            let req = FeedRequest {
                cursor: Some(cursor.encode(&key()).unwrap()),
                ..req
            };
            resolve(&req, company, now, &key())
        };

        let resumed = use_at(
            &first.cursor(company, 9, true),
            FeedRequest::default(),
            later,
        )
        .unwrap();
        assert_eq!(
            (resumed.from, resumed.to),
            (later, later + Duration::days(30))
        );
        assert_eq!(resumed.after, Some(9));
        let next = use_at(
            &first.cursor(company, 9, false),
            FeedRequest::default(),
            later,
        )
        .unwrap();
        assert_eq!((next.from, next.to), (then, then + Duration::days(30)));

        // Bound: a resume cursor of a defaulted window refuses an explicit one.
        let explicit = FeedRequest {
            from: Some(then),
            ..Default::default()
        };
        let refused = use_at(&first.cursor(company, 9, true), explicit.clone(), later);
        assert!(refused.is_err());
        // An explicit window stays as asked.
        let asked = resolve(&explicit, company, then, &key()).unwrap();
        let kept = use_at(&asked.cursor(company, 9, true), explicit, later).unwrap();
        assert_eq!(kept.from, then);
    }

    #[test]
    fn windows_default_to_thirty_days_and_stop_at_ninety() {
        let company = CompanyId::new();
        let now: DateTime<Utc> = "2026-11-18T09:30:00Z".parse().unwrap();
        let q = resolve(&FeedRequest::default(), company, now, &key()).unwrap();
        assert_eq!(
            (q.from, q.to, q.limit),
            (now, now + Duration::days(30), 100)
        );
        let ninety = FeedRequest {
            to: Some(now + Duration::days(90)),
            ..Default::default()
        };
        assert!(resolve(&ninety, company, now, &key()).is_ok());
        let over = FeedRequest {
            to: Some(now + Duration::days(90) + Duration::seconds(1)),
            ..Default::default()
        };
        assert!(resolve(&over, company, now, &key()).is_err());
        for limit in [0, 201] {
            assert!(
                resolve(
                    &FeedRequest {
                        limit: Some(limit),
                        ..Default::default()
                    },
                    company,
                    now,
                    &key()
                )
                .is_err()
            );
        }
    }
}
