//! The mapping table's entries, in order of their host begin address (their key).
//!
//! A sorted vector while the table is small: a binary search over a few cache lines finds an
//! entry by key or the neighbours of an address, an insertion or removal moves a few
//! entries, and nothing is allocated once the vector has grown. A target region of 16 arrays
//! spent ~21,700 host instructions per region in the B-tree's descents (each item's entry is
//! found several times a construct) and in moves of its ~130-byte values within a node, and
//! allocated and freed nodes as the region's entries came and went (callgrind, host device).
//! A B-tree map once the table is large, where a vector's moves would make a construct of
//! 10^6 items quadratic (and which, filled in address order, stays cache-friendly: 10^6
//! items enter in 1.3 s against LLVM 19's 1.6 s, where a hash map of entries took 2.4 s). Back
//! to a vector when it shrinks well below the bound (hysteresis: a table near the bound does
//! not convert back and forth).

use super::table::Entry;
use std::collections::BTreeMap;

/// Past this many entries the vector becomes a B-tree map ...
const GROW_AT: usize = 64;
/// ... and below this many a B-tree map becomes a vector again.
const SHRINK_AT: usize = 16;

#[derive(Debug)]
pub(crate) enum Entries {
    Small(Vec<Entry>),
    Large(BTreeMap<usize, Entry>),
}

impl Default for Entries {
    fn default() -> Self {
        Entries::Small(Vec::new())
    }
}

/// The entries in address order.
pub(crate) enum Iter<'a> {
    Small(std::slice::Iter<'a, Entry>),
    Large(std::collections::btree_map::Iter<'a, usize, Entry>),
}

impl<'a> Iterator for Iter<'a> {
    /// (key, entry)
    type Item = (usize, &'a Entry);
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Small(i) => i.next().map(|e| (e.host_begin, e)),
            Iter::Large(i) => i.next().map(|(&k, e)| (k, e)),
        }
    }
}

/// The position in `v` of the first entry beginning above `k`.
fn above(v: &[Entry], k: usize) -> usize {
    v.partition_point(|e| e.host_begin <= k)
}

impl Entries {
    pub(crate) fn len(&self) -> usize {
        match self {
            Entries::Small(v) => v.len(),
            Entries::Large(m) => m.len(),
        }
    }

    pub(crate) fn iter(&self) -> Iter<'_> {
        match self {
            Entries::Small(v) => Iter::Small(v.iter()),
            Entries::Large(m) => Iter::Large(m.iter()),
        }
    }

    pub(crate) fn get(&self, k: usize) -> Option<&Entry> {
        match self {
            Entries::Small(v) => v
                .binary_search_by_key(&k, |e| e.host_begin)
                .ok()
                .map(|i| &v[i]),
            Entries::Large(m) => m.get(&k),
        }
    }

    pub(crate) fn get_mut(&mut self, k: usize) -> Option<&mut Entry> {
        match self {
            Entries::Small(v) => match v.binary_search_by_key(&k, |e| e.host_begin) {
                Ok(i) => Some(&mut v[i]),
                Err(_) => None,
            },
            Entries::Large(m) => m.get_mut(&k),
        }
    }

    /// The last entry beginning at or before `k`.
    pub(crate) fn at_or_before(&self, k: usize) -> Option<&Entry> {
        match self {
            Entries::Small(v) => v[..above(v, k)].last(),
            Entries::Large(m) => m.range(..=k).next_back().map(|(_, e)| e),
        }
    }

    /// The first entry beginning after `k`.
    pub(crate) fn after(&self, k: usize) -> Option<&Entry> {
        match self {
            Entries::Small(v) => v.get(above(v, k)),
            Entries::Large(m) => m
                .range((std::ops::Bound::Excluded(k), std::ops::Bound::Unbounded))
                .next()
                .map(|(_, e)| e),
        }
    }

    /// Adds `e` under its begin address; `false` (and nothing changed) when an entry begins
    /// there already.
    pub(crate) fn insert(&mut self, e: Entry) -> bool {
        match self {
            Entries::Small(v) => {
                let at = v.partition_point(|x| x.host_begin < e.host_begin);
                if v.get(at).is_some_and(|x| x.host_begin == e.host_begin) {
                    return false;
                }
                v.insert(at, e);
                if v.len() > GROW_AT {
                    let m = std::mem::take(v).into_iter().map(|e| (e.host_begin, e));
                    *self = Entries::Large(m.collect());
                }
                true
            }
            Entries::Large(m) => match m.entry(e.host_begin) {
                std::collections::btree_map::Entry::Occupied(_) => false,
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(e);
                    true
                }
            },
        }
    }

    pub(crate) fn remove(&mut self, k: usize) -> Option<Entry> {
        match self {
            Entries::Small(v) => {
                let i = v.binary_search_by_key(&k, |e| e.host_begin).ok()?;
                Some(v.remove(i))
            }
            Entries::Large(m) => {
                let e = m.remove(&k)?;
                if m.len() < SHRINK_AT {
                    *self = Entries::Small(std::mem::take(m).into_values().collect());
                }
                Some(e)
            }
        }
    }

    /// Every entry, in address order; the table is empty afterwards.
    pub(crate) fn drain(&mut self) -> Vec<Entry> {
        match std::mem::take(self) {
            Entries::Small(v) => v,
            Entries::Large(m) => m.into_values().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(begin: usize) -> Entry {
        Entry::for_tests(begin, 8)
    }

    /// Random insertions and removals across both bounds, checked against a B-tree map after
    /// every step: the representation changes, the answers do not.
    #[test]
    fn agrees_with_a_btree_map_as_it_grows_and_shrinks() {
        let mut entries = Entries::default();
        let mut model = BTreeMap::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let (mut grew, mut shrank) = (false, false);
        let check = |entries: &mut Entries, model: &BTreeMap<usize, Entry>, probe: usize| {
            assert_eq!(entries.len(), model.len());
            let key = |e: Option<&Entry>| e.map(|e| e.host_begin);
            assert_eq!(
                key(entries.at_or_before(probe)),
                model.range(..=probe).next_back().map(|(&k, _)| k)
            );
            assert_eq!(
                key(entries.after(probe)),
                model
                    .range((std::ops::Bound::Excluded(probe), std::ops::Bound::Unbounded))
                    .next()
                    .map(|(&k, _)| k)
            );
            assert_eq!(
                key(entries.get(probe)),
                model.get(&probe).map(|e| e.host_begin)
            );
            if let Some(e) = entries.get_mut(probe) {
                e.users += 1;
                assert_eq!(e.users, 1);
                e.users -= 1;
            }
        };
        for phase in [500usize, 10, 200, 0] {
            while model.len() != phase {
                let k = 16 * rand(1024) as usize;
                if model.len() < phase {
                    let fresh = !model.contains_key(&k);
                    if fresh {
                        model.insert(k, entry(k));
                    }
                    assert_eq!(entries.insert(entry(k)), fresh);
                } else {
                    assert_eq!(
                        entries.remove(k).map(|e| e.host_begin),
                        model.remove(&k).map(|e| e.host_begin)
                    );
                }
                let probe = 16 * rand(1024) as usize + rand(3) as usize;
                check(&mut entries, &model, probe);
                check(&mut entries, &model, k);
                grew |= matches!(entries, Entries::Large(_));
                shrank |= grew && matches!(entries, Entries::Small(_));
            }
            assert!(
                entries
                    .iter()
                    .map(|(k, e)| (k, e.host_begin))
                    .eq(model.keys().map(|&k| (k, k))),
                "phase {phase}"
            );
        }
        assert!(grew && shrank, "both representations were used");
        assert!(entries.drain().is_empty());
    }
}
