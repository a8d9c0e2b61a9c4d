//! Conditional requests (RFC 9110, section 13): every read of a resource or list
//! answers with an `ETag`, `If-None-Match` naming it answers `304 Not Modified` without
//! a body (counted against the key's rate limit as a 200: it was computed as one), and
//! `If-Match` on a write
//! to one resource answers `412 Precondition Failed` unless it names the resource's
//! current tag (or is `*`).

use crate::error::ApiError;
use crate::reply::{Reply, etag_value};
use bytes::Bytes;
use http::{HeaderMap, HeaderName, StatusCode, header};
use wfs_core::resource::EntityTag;

/// An `If-Match` or `If-None-Match` field: `*`, or the tags it lists (a malformed
/// member matches nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Listed {
    Any,
    Tags(Vec<EntityTag>),
}

impl Listed {
    /// The field `name` of a request (its lines together), if sent.
    pub(crate) fn of(headers: &HeaderMap, name: HeaderName) -> Option<Listed> {
        let mut tags = Vec::new();
        let mut sent = false;
        for line in headers.get_all(name) {
            sent = true;
            let Ok(line) = line.to_str() else { continue };
            if line.trim() == "*" {
                return Some(Listed::Any);
            }
            tags.extend(parse_list(line));
        }
        sent.then_some(Listed::Tags(tags))
    }

    /// `If-Match`: strong comparison.
    fn names_strongly(&self, tag: &EntityTag) -> bool {
        match self {
            Listed::Any => true,
            Listed::Tags(tags) => tags.iter().any(|t| t.strong_eq(tag)),
        }
    }
}

/// `entity-tag *( OWS "," OWS entity-tag )`; members that are not entity tags are
/// skipped (they can match nothing).
fn parse_list(line: &str) -> Vec<EntityTag> {
    tags_in(line)
        .map(|(weak, opaque)| EntityTag::from_parts(weak, opaque))
        .collect()
}

/// The entity tags of one list line, `(weak, opaque)`, in order, read in place: the
/// one reading of a list, for `If-Match` and `If-None-Match` alike (an opaque part may
/// hold a `,`, so a list is never split on commas).
fn tags_in(line: &str) -> impl Iterator<Item = (bool, &str)> {
    let mut rest = line;
    std::iter::from_fn(move || {
        loop {
            rest = rest.trim_start_matches([' ', '\t', ',']);
            if rest.is_empty() {
                return None;
            }
            let (weak, quoted) = match rest.strip_prefix("W/") {
                Some(quoted) => (true, quoted),
                None => (false, rest),
            };
            let Some(inner) = quoted.strip_prefix('"') else {
                // Not a tag: skip to the next comma.
                rest = rest.split_once(',').map_or("", |(_, after)| after);
                continue;
            };
            let Some((opaque, after)) = inner.split_once('"') else {
                rest = "";
                return None;
            };
            rest = after;
            if opaque
                .bytes()
                .all(|b| b == 0x21 || (0x23..=0x7e).contains(&b) || b >= 0x80)
            {
                return Some((weak, opaque));
            }
        }
    })
}

/// A successful read's answer with its `ETag` (the handler's own, or the strong tag of
/// its body), or `304 Not Modified` with that `ETag` when `If-None-Match` names it.
pub(crate) fn read(mut reply: Reply, headers: &HeaderMap) -> Reply {
    // A streamed answer is not in hand to be tagged.
    if reply.status != StatusCode::OK || reply.stream.is_some() {
        return reply;
    }
    if !reply.headers.iter().any(|(n, _)| n == header::ETAG)
        && let Some(value) = etag_value(&EntityTag::strong_of_bytes(&reply.body))
    {
        reply.headers.push((header::ETAG, value));
    }
    let named = headers.contains_key(header::IF_NONE_MATCH)
        && reply
            .headers
            .iter()
            .find(|(n, _)| n == header::ETAG)
            .and_then(|(_, value)| value.to_str().ok())
            .and_then(opaque)
            .is_some_and(|tag| names_weakly(headers, tag));
    if !named {
        return reply;
    }
    let mut not_modified = Reply::file(StatusCode::NOT_MODIFIED, None, Bytes::new());
    not_modified
        .headers
        .extend(reply.headers.into_iter().filter(|(n, _)| n == header::ETAG));
    not_modified
}

/// The opaque part of one entity tag (`"x"` or `W/"x"`).
fn opaque(tag: &str) -> Option<&str> {
    let tag = tag.trim();
    tag.strip_prefix("W/")
        .unwrap_or(tag)
        .strip_prefix('"')?
        .strip_suffix('"')
}

/// Whether `If-None-Match` names the tag whose opaque part is `tag` (weak comparison,
/// or `*`), read in place: this runs on every revalidated read, and a 304 must cost no
/// more than the 200.
fn names_weakly(headers: &HeaderMap, tag: &str) -> bool {
    headers.get_all(header::IF_NONE_MATCH).iter().any(|line| {
        let Ok(line) = line.to_str() else {
            return false;
        };
        line.trim() == "*" || tags_in(line).any(|(_, opaque)| opaque == tag)
    })
}

/// The longest `If-Match` or `If-None-Match` taken (all its lines together): a list of
/// over a hundred tags. Longer is a 400, as the document declares.
pub(crate) const MAX_FIELD: usize = 4096;

/// Refuses an `If-Match` or `If-None-Match` longer than [`MAX_FIELD`].
///
/// # Errors
/// 400 `If-None-Match must be at most 4096 characters` (or `If-Match`).
pub(crate) fn check_sizes(headers: &HeaderMap) -> Result<(), ApiError> {
    for (name, shown) in [
        (header::IF_NONE_MATCH, "If-None-Match"),
        (header::IF_MATCH, "If-Match"),
    ] {
        let size: usize = headers
            .get_all(name)
            .iter()
            .map(http::HeaderValue::len)
            .sum();
        if size > MAX_FIELD {
            return Err(ApiError::bad_request(format!(
                "{shown} must be at most {MAX_FIELD} characters"
            )));
        }
    }
    Ok(())
}

/// `If-Match` of a write to one resource, if sent.
pub(crate) fn if_match(headers: &HeaderMap) -> Option<Listed> {
    Listed::of(headers, header::IF_MATCH)
}

/// Whether a write may go on: `If-Match` names `current`, the resource's tag now.
///
/// # Errors
/// 412 `Precondition Failed: the resource has changed (its ETag is now ...)`.
/// The 412 names the current tag only when `readable`: the caller's key may read the
/// resource (a write-only key learns nothing of what it cannot read).
pub(crate) fn check(listed: &Listed, current: &EntityTag, readable: bool) -> Result<(), ApiError> {
    if listed.names_strongly(current) {
        return Ok(());
    }
    let message = if readable {
        format!(
            "Precondition failed: If-Match does not name the resource's current ETag ({current}); read it again, then retry"
        )
    } else {
        "Precondition failed: If-Match does not name the resource's current ETag (not shown: this API key may not read the resource)".to_owned()
    };
    Err(ApiError::new(StatusCode::PRECONDITION_FAILED, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn lists_parse_strong_weak_and_star_and_skip_what_is_not_a_tag() {
        let mut headers = HeaderMap::new();
        headers.append(
            header::IF_NONE_MATCH,
            HeaderValue::from_static("\"a\", W/\"b\""),
        );
        headers.append(
            header::IF_NONE_MATCH,
            HeaderValue::from_static("nonsense, \"c\""),
        );
        let Some(Listed::Tags(tags)) = Listed::of(&headers, header::IF_NONE_MATCH) else {
            panic!("a list");
        };
        let shown: Vec<String> = tags.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["\"a\"", "W/\"b\"", "\"c\""]);
        let mut star = HeaderMap::new();
        star.insert(header::IF_MATCH, HeaderValue::from_static("*"));
        assert_eq!(Listed::of(&star, header::IF_MATCH), Some(Listed::Any));
        assert_eq!(Listed::of(&HeaderMap::new(), header::IF_MATCH), None);
    }

    #[test]
    fn both_conditions_read_a_list_alike_whatever_commas_the_tags_hold() {
        // `"a,"` is one tag, then `b"` is not one, then `"c"`: no `b` in this list.
        let mut headers = HeaderMap::new();
        headers.append(
            header::IF_NONE_MATCH,
            HeaderValue::from_static("\"a,\"b\",\"c\""),
        );
        assert!(!names_weakly(&headers, "b"));
        assert!(names_weakly(&headers, "a,"));
        assert!(names_weakly(&headers, "c"));
        let listed = Listed::of(&headers, header::IF_NONE_MATCH).unwrap();
        let Listed::Tags(tags) = listed else {
            panic!("a list")
        };
        let opaques: Vec<&str> = tags.iter().map(EntityTag::opaque).collect();
        assert_eq!(opaques, ["a,", "c"]);
    }

    #[test]
    fn if_match_needs_a_strong_match_and_star_matches_any() {
        let current = EntityTag::from_parts(false, "abc");
        let weak = Listed::Tags(vec![EntityTag::from_parts(true, "abc")]);
        assert_eq!(
            check(&weak, &current, true).unwrap_err().status(),
            StatusCode::PRECONDITION_FAILED
        );
        assert!(check(&Listed::Tags(vec![current.clone()]), &current, true).is_ok());
        assert!(check(&Listed::Any, &current, true).is_ok());
        assert!(check(&Listed::Tags(Vec::new()), &current, true).is_err());
    }
}
