//! The answers made from cached lists, kept per thread, so that a read served from the
//! cache writes nothing that other cores write too (issue 35).
//!
//! A cached list is one `Arc` in the shared cache, and its answer (the JSON body and
//! the ETag) two shared `Bytes`. Handing them to every request took and dropped three
//! reference counts per read, on cache lines that every core serving the company
//! wrote. Instead, each thread keeps its own copy of the answer, with the list it was
//! made from; a read borrows the cached list (`Wfs::with_cached_job_roles`), and when
//! it is the very list a copy was made from (the same allocation: a change makes a new
//! list, and a kept list cannot be freed and its address reused), it answers with the
//! thread's copy, whose counts only this thread writes.

use crate::error::ApiError;
use bytes::Bytes;
use http::HeaderValue;
use serde::Serialize;
use std::any::Any;
use std::cell::RefCell;
use std::sync::Arc;
use wfs_core::resource::Listed;
use wfs_core::resource::listed::Representation;

/// Answers a thread keeps; a new one replaces the oldest.
const KEPT: usize = 16;

/// Answers larger than this are shared, not copied: sending them costs far more than
/// the counts, and each thread's copy would cost memory.
const MAX_COPIED: usize = 16 * 1024;

struct Kept {
    /// Held, so that while it is kept no other list can have its address.
    list: Arc<dyn Any + Send + Sync>,
    body: Bytes,
    tag: HeaderValue,
}

thread_local! {
    static KEPT_ANSWERS: RefCell<Vec<Kept>> = const { RefCell::new(Vec::new()) };
}

/// The answer (body and `ETag` value) to `list`, a list the cache holds: this thread's
/// copy when it has made one from that list.
pub(crate) fn answer_cached<T>(list: &Arc<Listed<T>>) -> Result<(Bytes, HeaderValue), ApiError>
where
    T: Serialize + Send + Sync + 'static,
{
    let at = Arc::as_ptr(list).cast::<()>();
    let kept = KEPT_ANSWERS.with_borrow(|kept| {
        kept.iter()
            .find(|k| Arc::as_ptr(&k.list).cast::<()>() == at)
            .map(|k| (k.body.clone(), k.tag.clone()))
    });
    if let Some(answer) = kept {
        return Ok(answer);
    }
    let made = list.representation()?;
    if made.body.len() > MAX_COPIED {
        return shared(made);
    }
    let body = Bytes::copy_from_slice(&made.body);
    let tag = tag_value(Bytes::copy_from_slice(&made.tag_text))?;
    let list: Arc<dyn Any + Send + Sync> = list.clone();
    KEPT_ANSWERS.with_borrow_mut(|kept| {
        if kept.len() == KEPT {
            kept.remove(0);
        }
        kept.push(Kept {
            list,
            body: body.clone(),
            tag: tag.clone(),
        });
    });
    Ok((body, tag))
}

/// The answer to `list`, shared with every other answer to it (a list read from the
/// database, which no later read will see again).
pub(crate) fn answer<T: Serialize>(list: &Listed<T>) -> Result<(Bytes, HeaderValue), ApiError> {
    shared(list.representation()?)
}

/// The answer `made`, sharing its bytes.
fn shared(made: &Representation) -> Result<(Bytes, HeaderValue), ApiError> {
    Ok((made.body.clone(), tag_value(made.tag_text.clone())?))
}

fn tag_value(text: Bytes) -> Result<HeaderValue, ApiError> {
    HeaderValue::from_maybe_shared(text)
        .map_err(|_| ApiError::internal("an entity tag is a header value"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(titles: &[&str]) -> Arc<Listed<String>> {
        Arc::new(Listed::from(
            titles.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>(),
        ))
    }

    #[test]
    fn a_kept_answer_is_the_lists_and_a_new_list_gets_its_own() {
        let first = list(&["Barista"]);
        let (body, tag) = answer_cached(&first).unwrap();
        assert_eq!(&body[..], br#"["Barista"]"#);
        let again = answer_cached(&first).unwrap();
        assert_eq!(
            again,
            (body.clone(), tag.clone()),
            "the same list, the same answer"
        );

        // A list with the same items is another list: its own answer, equal in content.
        let changed = list(&["Barista", "Cook"]);
        let (changed_body, changed_tag) = answer_cached(&changed).unwrap();
        assert_eq!(&changed_body[..], br#"["Barista","Cook"]"#);
        assert_ne!(changed_tag, tag);
        assert_eq!(answer(&changed).unwrap(), (changed_body, changed_tag));
    }

    #[test]
    fn a_thread_keeps_a_bounded_number_of_answers() {
        let lists: Vec<_> = (0..KEPT + 4).map(|n| list(&[&n.to_string()])).collect();
        for list in &lists {
            answer_cached(list).unwrap();
        }
        KEPT_ANSWERS.with_borrow(|kept| assert_eq!(kept.len(), KEPT));
        assert_eq!(Arc::strong_count(&lists[0]), 1, "the oldest was let go");
        assert_eq!(Arc::strong_count(&lists[KEPT + 3]), 2, "the newest is kept");
    }
}
