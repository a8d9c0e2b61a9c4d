//! The limits every request string and array obeys, enforced while the body is
//! parsed (before any work is done) and declared in the OpenAPI document with the
//! same constants (`maxLength`, `maxItems`), so generated clients and fuzzers know
//! them.
//!
//! * [`Line`]: a single-line string (names, titles, symbols, emails, phones, ids,
//!   codes): at most [`LINE_MAX`] characters, no control character at all.
//! * [`Text`]: free text (`desc`, `writeUp`, `address`): at most [`TEXT_MAX`]
//!   characters; tab, CR and LF are the only control characters allowed.
//! * [`Bounded`]: an array of at most `N` items, refused at item `N + 1` without
//!   reading the rest, so a hostile array is never materialised.
//!
//! A refusal is a serde error, so the 400 names the field through its JSON path.

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

/// Longest single-line string, in characters.
pub(crate) const LINE_MAX: usize = 256;
/// Longest free-text string, in characters.
pub(crate) const TEXT_MAX: usize = 4096;
/// Longest comma-separated id list (a query parameter), in characters.
pub(crate) const LIST_MAX: usize = 4096;
/// Longest page cursor, in characters.
pub(crate) const CURSOR_MAX: usize = 1024;
/// Longest URL (webhook endpoints), as the contract allows.
pub(crate) const URL_MAX: usize = wfs_core::domain::webhook::URL_MAX;

/// Checks `s` against a length and the control-character rule.
pub(crate) fn check(s: &str, max: usize, multi_line: bool) -> Result<(), String> {
    let mut count = 0usize;
    for c in s.chars() {
        count += 1;
        if count > max {
            return Err(format!("must be at most {max} characters"));
        }
        if refused(c, multi_line) {
            return Err(if multi_line {
                "must not contain control or invisible formatting characters other than tab, CR and LF".to_owned()
            } else {
                "must not contain control or invisible formatting characters".to_owned()
            });
        }
    }
    Ok(())
}

/// The control-character rule. One line refuses every control, invisible format
/// character, separator and default-ignorable character (the core's
/// [`refused_in_line`](wfs_core::domain::validate::refused_in_line)): each makes a name
/// or an email that looks like another (`user\u{200b}@a.test`). Free text keeps tab,
/// CR and LF, the zero-width (non-)joiner that Persian, Indic scripts and emoji
/// sequences need, and the variation selectors of emoji; bidi controls stay refused
/// there too (text that reads differently from how it is stored).
pub(crate) fn refused(c: char, multi_line: bool) -> bool {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    if multi_line {
        return match c.general_category() {
            GeneralCategory::Control => !matches!(c, '\t' | '\r' | '\n'),
            GeneralCategory::Format => !matches!(c, '\u{200c}' | '\u{200d}'),
            _ => false,
        };
    }
    wfs_core::domain::validate::refused_in_line(c)
}

macro_rules! checked_string {
    ($(#[$doc:meta])* $name:ident, $max:expr, $multi_line:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub(crate) struct $name(String);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
                let s = String::deserialize(de)?;
                check(&s, $max, $multi_line).map_err(de::Error::custom)?;
                Ok(Self(s))
            }
        }

        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.0
            }
        }
    };
}

checked_string!(
    /// A single-line string: at most [`LINE_MAX`] characters, no control characters.
    Line,
    LINE_MAX,
    false
);
checked_string!(
    /// Free text: at most [`TEXT_MAX`] characters; tab, CR and LF allowed.
    Text,
    TEXT_MAX,
    true
);

checked_string!(
    /// A URL: at most [`URL_MAX`] characters, one line.
    UrlText,
    URL_MAX,
    false
);

checked_string!(
    /// A comma-separated list of ids: at most [`LIST_MAX`] characters, one line.
    IdList,
    LIST_MAX,
    false
);
checked_string!(
    /// A page cursor as sent back: at most [`CURSOR_MAX`] characters, one line.
    CursorText,
    CURSOR_MAX,
    false
);

/// A JSON integer. JSON Schema counts `1.0` as the integer 1, and so do we: a
/// number with no fraction is accepted, anything else is a type error naming the
/// field (serde alone would refuse `1.0` for an `i64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Whole(pub(crate) i64);

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Whole;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Whole, E> {
                Ok(Whole(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Whole, E> {
                i64::try_from(v)
                    .map(Whole)
                    .map_err(|_| E::custom("must be an integer between -2^63 and 2^63-1"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Whole, E> {
                // 2^63 is exact in f64; every whole f64 below it converts exactly.
                if v.fract() == 0.0
                    && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&v)
                {
                    Ok(Whole(v as i64))
                } else {
                    Err(E::invalid_type(de::Unexpected::Float(v), &self))
                }
            }
        }
        de.deserialize_any(V)
    }
}

impl From<Whole> for i64 {
    fn from(v: Whole) -> i64 {
        v.0
    }
}

/// An array of at most `N` items, refused at item `N + 1`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bounded<T, const N: usize>(pub(crate) Vec<T>);

impl<T, const N: usize> Bounded<T, N> {
    pub(crate) fn into_vec(self) -> Vec<T> {
        self.0
    }

    /// The items of an optional array; none when it was absent or null.
    pub(crate) fn items(list: Option<Self>) -> Vec<T> {
        list.map(Self::into_vec).unwrap_or_default()
    }
}

impl<const N: usize> Bounded<Line, N> {
    pub(crate) fn into_strings(self) -> Vec<String> {
        self.0.into_iter().map(String::from).collect()
    }
}

impl<'de, T: Deserialize<'de>, const N: usize> Deserialize<'de> for Bounded<T, N> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct Items<T, const N: usize>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for Items<T, N> {
            type Value = Vec<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an array of at most {N} items")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(N));
                while let Some(item) = seq.next_element()? {
                    if items.len() == N {
                        return Err(de::Error::custom(format!("must have at most {N} items")));
                    }
                    items.push(item);
                }
                Ok(items)
            }
        }

        de.deserialize_seq(Items::<T, N>(PhantomData)).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lines_refuse_control_characters_and_long_values() {
        assert!(check("Registered Nurse", LINE_MAX, false).is_ok());
        assert!(
            check(&"é".repeat(256), LINE_MAX, false).is_ok(),
            "characters, not bytes"
        );
        assert!(check(&"é".repeat(257), LINE_MAX, false).is_err());
        for bad in ["a\u{0}b", "tab\there", "new\nline", "\u{7f}", "\u{85}"] {
            assert!(check(bad, LINE_MAX, false).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn lines_refuse_invisible_and_separator_characters() {
        for bad in [
            "user\u{200b}@a.test", // zero-width space
            "a\u{200d}b",          // zero-width joiner
            "\u{202e}evil",        // right-to-left override
            "x\u{2066}y",          // left-to-right isolate
            "\u{feff}bom",         // byte order mark
            "soft\u{ad}hyphen",    // soft hyphen
            "tag\u{e0041}",        // tag character (outside the BMP)
            "line\u{2028}sep",     // line separator
            "para\u{2029}sep",     // paragraph separator
        ] {
            assert!(check(bad, LINE_MAX, false).is_err(), "{bad:?}");
        }
        for good in ["Zoë Saldaña", "محمد", "李小龍", "nurse 👩‍⚕", "a b"] {
            let good = good.replace('\u{200d}', "");
            assert!(check(&good, LINE_MAX, false).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn text_keeps_joiners_but_not_bidi_controls() {
        assert!(check("می\u{200c}خواهم", TEXT_MAX, true).is_ok());
        assert!(check("nurse 👩\u{200d}⚕️", TEXT_MAX, true).is_ok());
        assert!(check("\u{202e}evil", TEXT_MAX, true).is_err());
        assert!(check("\u{200b}", TEXT_MAX, true).is_err());
    }

    #[test]
    fn text_allows_tab_cr_lf_only() {
        assert!(check("line 1\r\nline 2\tend", TEXT_MAX, true).is_ok());
        assert!(check("bell\u{7}", TEXT_MAX, true).is_err());
        assert!(check(&"x".repeat(4097), TEXT_MAX, true).is_err());
    }

    #[test]
    fn arrays_stop_at_the_item_over_the_bound() {
        let ok: Bounded<u8, 3> = serde_json::from_str("[1,2,3]").unwrap();
        assert_eq!(ok.into_vec(), vec![1, 2, 3]);
        let err = serde_json::from_str::<Bounded<u8, 3>>("[1,2,3,4]").unwrap_err();
        assert!(err.to_string().contains("at most 3 items"), "{err}");
        // The refusal comes at item 4: the malformed tail is never read.
        let err = serde_json::from_str::<Bounded<u8, 3>>("[1,2,3,4,oops").unwrap_err();
        assert!(err.to_string().contains("at most 3 items"), "{err}");
    }

    #[test]
    fn whole_numbers_may_be_written_with_a_zero_fraction() {
        let read = |s: &str| serde_json::from_str::<Whole>(s).map(i64::from);
        assert_eq!(read("3").unwrap(), 3);
        assert_eq!(read("-3.0").unwrap(), -3);
        assert_eq!(read("1e3").unwrap(), 1000);
        for bad in ["1.5", "1e300", "\"1\"", "true", "9223372036854775808"] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn whole_numbers_round_trip(n in any::<i64>()) {
            prop_assert_eq!(serde_json::from_str::<Whole>(&n.to_string()).unwrap().0, n);
        }

        #[test]
        fn lines_accept_exactly_the_printable_short_strings(
            chars in proptest::collection::vec(any::<char>(), 0..300)
        ) {
            let s: String = chars.into_iter().collect();
            let expected = s.chars().count() <= LINE_MAX && !s.chars().any(|c| refused(c, false));
            let json = serde_json::to_string(&s).unwrap();
            prop_assert_eq!(serde_json::from_str::<Line>(&json).is_ok(), expected);
        }

        #[test]
        fn any_string_is_checked_without_panicking(s in any::<String>()) {
            let _ = check(&s, LINE_MAX, false);
            let _ = check(&s, TEXT_MAX, true);
        }
    }
}
