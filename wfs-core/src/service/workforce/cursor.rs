//! The feed's cursor and the query a page resolves to.
//!
//! The cursor is opaque (base64url JSON sealed with an HMAC-SHA-256 tag, so a client
//! cannot edit it) and carries the resolved window, limit and `updated_since` it came
//! from (a later request that sends other values is a 400) and the last version
//! served.

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
        if req.from.is_some_and(|f| f != cursor.f) {
            return Err(differs("from"));
        }
        if req.to.is_some_and(|t| t != cursor.t) {
            return Err(differs("to"));
        }
        if req.limit.is_some_and(|l| l != cursor.l) {
            return Err(differs("limit"));
        }
        if req.updated_since.is_some() && req.updated_since != cursor.s {
            return Err(differs("updated_since"));
        }
        return Ok(Resolved {
            from: cursor.f,
            to: cursor.t,
            limit: cursor.l,
            since: cursor.s,
            after: Some(cursor.a),
        });
    }
    let limit = req.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(Error::invalid_field(
            "limit",
            format!("must be between 1 and {MAX_LIMIT}"),
        ));
    }
    let from = req.from.unwrap_or(now);
    let to = match req.to {
        Some(to) => to,
        None => time::within_years("from", from + DEFAULT_WINDOW)?,
    };
    if to <= from {
        return Err(Error::invalid_field("to", "must be after from"));
    }
    if to - from > MAX_WINDOW {
        return Err(Error::invalid("the window from..to may not exceed 90 days"));
    }
    Ok(Resolved {
        from,
        to,
        limit,
        since: req.updated_since,
        after: None,
    })
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
