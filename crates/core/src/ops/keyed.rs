//! A construct's per-entry records (entries it created, marked or retires), found by key in
//! O(1) however many items the construct names.
//!
//! A construct usually touches a handful of entries: those are searched in place, inline, with
//! no allocation. One `target exit data` may name 10^6 (LLVM handles such lists in linear
//! time): past [`INDEX_FROM`] records an index from key to position is built once and kept up
//! to date, so every lookup, insertion and move stays O(1) and the construct linear.

use crate::mapping::EntryId;
use omptarget_plugin::addr_map::{AddrMap, addr_map};
use omptarget_plugin::words::Words;
use std::hash::Hash;

/// Records searched in place before an index is worth its allocation.
pub(crate) const INDEX_FROM: usize = 16;

/// A record found by a key of its own.
pub(crate) trait Record: Copy {
    type Key: Copy + Eq + Hash;
    fn key(&self) -> Self::Key;
    /// Whether the record still counts (a record moved to the back leaves a dead copy behind).
    fn live(&self) -> bool {
        true
    }
    /// One bit of 64 for `key` (a filter: a key whose bit no record set is not searched
    /// for); every bit by default, which searches always.
    fn key_bit(_key: Self::Key) -> u64 {
        u64::MAX
    }
}

/// One bit of 64 for a word (an entry's id, a base address), for the one-word filters of
/// a construct: Fibonacci hashing, so nearby words spread over the bits.
pub(super) fn filter_bit(word: usize) -> u64 {
    1 << ((word as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

/// Records in the order they were added, each key live at most once.
pub(crate) struct Records<T: Record, const N: usize> {
    items: Words<T, N>,
    /// Key → position of its live record; built once the list outgrows [`INDEX_FROM`].
    index: Option<Box<AddrMap<T::Key, usize>>>,
    /// The filter bits of every key pushed ([`Record::key_bit`]): most searches of a
    /// construct are for keys it has no record of (an entry marked or retired for the first
    /// time), and end here.
    bits: u64,
    /// Where the last search ended (or the last push): a construct visits its entries in
    /// item order, forward at entry and backward at exit and removal, so the next record
    /// searched for is mostly a neighbour of the last one (checked before the whole list).
    last: std::cell::Cell<usize>,
}

impl<T: Record, const N: usize> Default for Records<T, N> {
    fn default() -> Self {
        Self {
            items: Words::default(),
            index: None,
            bits: 0,
            last: std::cell::Cell::new(0),
        }
    }
}

impl<T: Record, const N: usize> Records<T, N> {
    /// The position of `key`'s live record.
    pub(crate) fn find(&self, key: T::Key) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(&key).copied(),
            None if self.bits & T::key_bit(key) == 0 => None,
            None => {
                let items = self.items.as_slice();
                let is = |at: usize| items.get(at).is_some_and(|r| r.live() && r.key() == key);
                let last = self.last.get();
                let at = [last.wrapping_sub(1), last, last + 1]
                    .into_iter()
                    .find(|&at| is(at))
                    .or_else(|| items.iter().position(|r| r.live() && r.key() == key))?;
                self.last.set(at);
                Some(at)
            }
        }
    }

    pub(crate) fn contains(&self, key: T::Key) -> bool {
        self.find(key).is_some()
    }

    /// Appends `r`, which becomes its key's live record (the caller made an earlier one dead).
    pub(crate) fn push(&mut self, r: T) -> usize {
        let at = self.items.as_slice().len();
        self.items.push(r);
        self.bits |= T::key_bit(r.key());
        self.last.set(at);
        match &mut self.index {
            Some(index) => {
                index.insert(r.key(), at);
            }
            None if at + 1 > INDEX_FROM => {
                let mut index = addr_map();
                index.reserve(2 * (at + 1));
                for (i, r) in self.items.as_slice().iter().enumerate() {
                    if r.live() {
                        index.insert(r.key(), i);
                    }
                }
                self.index = Some(Box::new(index));
            }
            None => {}
        }
        at
    }

    pub(crate) fn get_mut(&mut self, at: usize) -> &mut T {
        &mut self.items.as_mut_slice()[at]
    }

    /// The live record of `key`, if any.
    pub(crate) fn lookup_mut(&mut self, key: T::Key) -> Option<&mut T> {
        let at = self.find(key)?;
        Some(self.get_mut(at))
    }

    /// Every record in order, dead ones included (callers skip them with [`Record::live`]).
    pub(crate) fn as_slice(&self) -> &[T] {
        self.items.as_slice()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.as_slice().is_empty()
    }

    /// Forgets every record. Used instead of taking the records out (`std::mem::take`
    /// copies the whole inline part, however few are live).
    pub(crate) fn clear(&mut self) {
        self.items.clear();
        self.index = None;
        self.bits = 0;
        self.last.set(0);
    }
}

// The records of an AsyncInfo.

/// A construct's mark on one entry (see `AsyncInfo::marks`); the default undoes nothing.
#[derive(Clone, Copy, Default)]
pub(super) struct Mark {
    pub(super) id: EntryId,
    pub(super) alloc: usize,
    /// The construct marked the entry pending on its queue.
    pub(super) pending: bool,
    /// How often the construct counted itself among the entry's users.
    pub(super) uses: u32,
    /// The construct noted its release of the entry (`MappingTable::note_exit`).
    pub(super) exited: bool,
}

impl Record for Mark {
    type Key = (EntryId, usize);
    fn key(&self) -> Self::Key {
        (self.id, self.alloc)
    }
    fn key_bit(key: Self::Key) -> u64 {
        filter_bit(key.0)
    }
}

/// An entry the construct retires, with the size of the item that released its last
/// reference (LLVM traces that size); dead (size [`Removal::DEAD`], no item is that large)
/// once a later item retired it again. Two words: the inline records are copied whole.
#[derive(Clone, Copy)]
pub(super) struct Removal {
    pub(super) id: EntryId,
    pub(super) size: usize,
}

impl Removal {
    pub(super) const DEAD: usize = usize::MAX;
}

impl Record for Removal {
    type Key = EntryId;
    fn key(&self) -> EntryId {
        self.id
    }
    fn live(&self) -> bool {
        self.size != Self::DEAD
    }
    fn key_bit(key: EntryId) -> u64 {
        filter_bit(key)
    }
}

/// An entry the construct created, with its device allocation.
#[derive(Clone, Copy)]
pub(super) struct Created(pub(super) EntryId, pub(super) usize);

impl Record for Created {
    type Key = (EntryId, usize);
    fn key(&self) -> Self::Key {
        (self.0, self.1)
    }
    fn key_bit(key: Self::Key) -> u64 {
        filter_bit(key.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct R {
        key: usize,
        value: usize,
        live: bool,
    }

    impl Record for R {
        type Key = usize;
        fn key(&self) -> usize {
            self.key
        }
        fn live(&self) -> bool {
            self.live
        }
    }

    fn r(key: usize, value: usize) -> R {
        R {
            key,
            value,
            live: true,
        }
    }

    #[test]
    fn finds_live_records_below_and_above_the_index_threshold() {
        for n in [3, INDEX_FROM, INDEX_FROM + 1, 1000] {
            let mut rs: Records<R, 8> = Records::default();
            for k in 0..n {
                assert_eq!(rs.push(r(k * 8, k)), k);
            }
            for k in 0..n {
                assert_eq!(rs.find(k * 8), Some(k), "n={n}");
                assert_eq!(rs.lookup_mut(k * 8).map(|x| x.value), Some(k));
            }
            assert!(!rs.contains(3));
            // Move key 0 to the back: its old record dies, the new one is found.
            let at = rs.find(0).unwrap();
            rs.get_mut(at).live = false;
            let new = rs.push(r(0, 99));
            assert_eq!(rs.find(0), Some(new), "n={n}");
            assert_eq!(rs.as_slice().iter().filter(|x| x.live).count(), n);
            assert_eq!(rs.as_slice().last().unwrap().value, 99);
        }
    }

    #[test]
    fn cleared_records_are_gone_and_the_list_starts_over() {
        for n in [3, INDEX_FROM, INDEX_FROM + 1, 100] {
            let mut rs: Records<R, INDEX_FROM> = Records::default();
            for k in 0..n {
                rs.push(r(k, k));
            }
            rs.clear();
            assert!(rs.is_empty(), "n={n}");
            assert_eq!(rs.find(0), None);
            assert_eq!(rs.find(n - 1), None);
            // Filled again past the index threshold: every record found at its new place.
            for k in 0..2 * INDEX_FROM {
                assert_eq!(rs.push(r(k + 1000, k)), k);
            }
            for k in 0..2 * INDEX_FROM {
                assert_eq!(rs.find(k + 1000), Some(k), "n={n}");
            }
            assert_eq!(rs.find(1), None);
        }
    }

    /// Keys of 64 filter bits: a search passes the filter only where a pushed key set its bit.
    #[derive(Clone, Copy)]
    struct F(usize);

    impl Record for F {
        type Key = usize;
        fn key(&self) -> usize {
            self.0
        }
        fn key_bit(key: usize) -> u64 {
            filter_bit(key)
        }
    }

    #[test]
    fn the_filter_never_hides_a_pushed_key() {
        let mut rs: Records<F, INDEX_FROM> = Records::default();
        for k in 0..INDEX_FROM {
            rs.push(F(k * 7919));
            for j in 0..=k {
                assert_eq!(rs.find(j * 7919), Some(j));
            }
        }
        // Keys never pushed: not found, whether their bit is set or not.
        let absent = (1..10_000).filter(|k| k % 7919 != 0);
        assert!(absent.clone().all(|k| rs.find(k).is_none()));
        // Some of them end at the filter (the point of it).
        assert!(absent.filter(|&k| rs.bits & filter_bit(k) == 0).count() > 0);
        rs.clear();
        assert_eq!(rs.bits, 0);
    }

    #[test]
    fn searches_from_the_last_record_find_the_right_one_in_any_order() {
        let mut rs: Records<R, INDEX_FROM> = Records::default();
        let n = INDEX_FROM - 1;
        for k in 0..n {
            rs.push(r(k * 3, k));
        }
        // Backward (a construct's exit), forward, by twos, then scattered.
        let orders: [Vec<usize>; 4] = [
            (0..n).rev().collect(),
            (0..n).collect(),
            (0..n).step_by(2).chain((1..n).step_by(2)).collect(),
            vec![7, 0, 14, 1, 13, 2, 6, 8, 5],
        ];
        for order in orders {
            for k in order {
                assert_eq!(rs.find(k * 3).map(|at| rs.as_slice()[at].value), Some(k));
            }
        }
        // A dead neighbour of the last hit is not found; its key's live record is.
        assert_eq!(rs.find(5 * 3), Some(5));
        rs.get_mut(4).live = false;
        let moved = rs.push(r(4 * 3, 40));
        assert_eq!(rs.find(5 * 3), Some(5));
        assert_eq!(rs.find(4 * 3), Some(moved));
        assert_eq!(rs.as_slice()[moved].value, 40);
        assert_eq!(rs.find(1), None);
    }

    #[test]
    fn a_dead_record_is_not_found() {
        let mut rs: Records<R, 8> = Records::default();
        rs.push(r(1, 1));
        rs.get_mut(0).live = false;
        assert_eq!(rs.find(1), None);
        assert!(!rs.is_empty());
    }
}
