//! `List<T, N>`: an array of the profile, at most `N` items (the decoder
//! refuses more), held in one heap block of exactly its length.
//!
//! The profile's lists of large items (interfaces, their routes and
//! addresses, exports, shares) are `List`s because a capacity held inline
//! (`heapless::Vec`) is mostly never written, yet every page of it the
//! decoder touches is a page fault, and a page fault is slow on a slow
//! board (scripts/bench-boot). A `List` costs what its items take. Lists
//! of small items keep `heapless::Vec`.

use std::ops::Deref;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct List<T, const N: usize>(Vec<T>);

impl<T, const N: usize> List<T, N> {
    /// The list of `items`, which the caller has checked holds at most `N`.
    pub(super) fn new(items: Vec<T>) -> Self {
        debug_assert!(items.len() <= N);
        List(items)
    }

    /// Empty the list, giving its block back.
    pub fn clear(&mut self) {
        self.0 = Vec::new();
    }
}

impl<T, const N: usize> Default for List<T, N> {
    fn default() -> Self {
        List(Vec::new())
    }
}

impl<T, const N: usize> Deref for List<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a List<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}
