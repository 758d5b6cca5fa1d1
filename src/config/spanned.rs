//! `Spanned<T>`: a profile value and where it is in the text (a byte
//! range), for errors found after parsing (`validate`). The same API and
//! trait behaviour as `toml::Spanned` (comparisons, hashing and Display
//! see the value only; Debug shows both), deserialized more cheaply:
//! `toml::Spanned` reads its span and value as a map of three private
//! keys, which put that map's visitor, with its key comparisons and
//! errors, into the binary once per spanned type. Here the deserializer
//! (`de::ValueDe::deserialize_newtype_struct`) hands over a sequence of
//! the span's start and end and then the value: per type that is two
//! reads of a `usize`, shared by all, and the value's own deserialization.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};

/// The name `Spanned` asks `deserialize_newtype_struct` for.
pub(super) const NAME: &str = "$nasboot::Spanned";

#[derive(Clone, Debug)]
pub struct Spanned<T> {
    span: Range<usize>,
    value: T,
}

impl<T> Spanned<T> {
    pub fn new(span: Range<usize>, value: T) -> Self {
        Spanned { span, value }
    }

    /// The byte range of the value in the profile's text.
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    pub fn into_inner(self) -> T {
        self.value
    }

    pub fn get_ref(&self) -> &T {
        &self.value
    }

    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T: fmt::Display> fmt::Display for Spanned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

impl<T> AsRef<T> for Spanned<T> {
    fn as_ref(&self) -> &T {
        &self.value
    }
}

impl<T: PartialEq> PartialEq for Spanned<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value.eq(&other.value)
    }
}

impl<T: Eq> Eq for Spanned<T> {}

impl<T: Hash> Hash for Spanned<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value.hash(state);
    }
}

impl<T: PartialOrd> PartialOrd for Spanned<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.value.partial_cmp(&other.value)
    }
}

impl<T: Ord> Ord for Spanned<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.value.cmp(&other.value)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Spanned<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a spanned value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Spanned<T>, A::Error> {
                let start: usize = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(0, &self))?;
                let end: usize = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(1, &self))?;
                let value: T = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(2, &self))?;
                Ok(Spanned { span: start..end, value })
            }
        }
        d.deserialize_newtype_struct(NAME, V(std::marker::PhantomData))
    }
}
