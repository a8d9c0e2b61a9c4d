//! A list as a read cache holds it, with the answer it makes.
//!
//! The hottest read (`GET /job-roles`) answers the same bytes for as long as the
//! company's roles stay cached: [`Listed`] makes its JSON and entity tag once, on the
//! first answer, and keeps them with the items, so they live and die with the cache's
//! entry (a change, or the entry's expiry, makes a new list) and no other memo has to
//! guess whether they still match.

use super::EntityTag;
use bytes::Bytes;
use serde::Serialize;
use std::sync::OnceLock;

/// The items of a cached list, and their representation made on first use.
#[derive(Debug)]
pub struct Listed<T> {
    items: Box<[T]>,
    answer: OnceLock<Representation>,
}

/// A list's JSON and its strong entity tag.
#[derive(Debug, Clone)]
pub struct Representation {
    /// The JSON array of the items, as sent.
    pub body: Bytes,
    /// Its strong entity tag.
    pub tag: EntityTag,
    /// The tag as an `ETag` field writes it (`"..."`), ready to be shared by answers.
    pub tag_text: Bytes,
}

impl<T: Serialize> Listed<T> {
    /// The items' JSON and tag, made the first time they are asked for.
    ///
    /// # Errors
    /// [`Error::Internal`](crate::Error::Internal) should an item not serialise (none
    /// of wfs's can fail).
    pub fn representation(&self) -> crate::Result<&Representation> {
        if let Some(made) = self.answer.get() {
            return Ok(made);
        }
        let body = Bytes::from(serde_json::to_vec(&self.items).map_err(crate::Error::internal)?);
        let tag = EntityTag::strong_of_bytes(&body);
        let tag_text = Bytes::from(tag.to_string());
        // Two first answers at once make the same bytes: whichever is kept is right.
        Ok(self.answer.get_or_init(|| Representation {
            body,
            tag,
            tag_text,
        }))
    }
}

impl<T> From<Vec<T>> for Listed<T> {
    fn from(items: Vec<T>) -> Self {
        Self {
            items: items.into_boxed_slice(),
            answer: OnceLock::new(),
        }
    }
}

impl<T> Default for Listed<T> {
    fn default() -> Self {
        Vec::new().into()
    }
}

impl<T> std::ops::Deref for Listed<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_the_items_json_tagged_by_its_bytes_and_made_once() {
        let listed = Listed::from(vec!["Nurse", "Porter"]);
        let first = listed.representation().unwrap();
        assert_eq!(&first.body[..], br#"["Nurse","Porter"]"#);
        assert_eq!(first.tag, EntityTag::strong_of_bytes(&first.body));
        assert_eq!(first.tag_text, first.tag.to_string());
        let again = listed.representation().unwrap();
        assert!(std::ptr::eq(first, again));
        assert_eq!(listed.len(), 2);
    }
}
