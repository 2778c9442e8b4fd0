//! The mapping table's keys (entries' host begin addresses) in order, for the interval
//! questions: the last key before an address and the first after it.
//!
//! A sorted vector while the table is small: a binary search over a few cache lines and a
//! short move per insertion or removal, no allocation once it has grown (16 items per region:
//! ~9,200 host instructions per region in a B-tree set, which also allocated and freed nodes
//! as the region's entries came and went). A B-tree set once the table is large, where a
//! vector's moves would make a construct of 10^6 items quadratic; back to a vector when it
//! shrinks well below that (hysteresis, so a table near the bound does not convert back and
//! forth).

use std::collections::BTreeSet;

/// Past this many keys the vector becomes a B-tree set ...
const GROW_AT: usize = 1024;
/// ... and below this many a B-tree set becomes a vector again.
const SHRINK_AT: usize = 256;

#[derive(Debug)]
pub(crate) enum Keys {
    Small(Vec<usize>),
    Large(BTreeSet<usize>),
}

impl Default for Keys {
    fn default() -> Self {
        Keys::Small(Vec::new())
    }
}

/// The keys in ascending order.
pub(crate) enum Iter<'a> {
    Small(std::slice::Iter<'a, usize>),
    Large(std::collections::btree_set::Iter<'a, usize>),
}

impl Iterator for Iter<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        match self {
            Iter::Small(i) => i.next().copied(),
            Iter::Large(i) => i.next().copied(),
        }
    }
}

impl Keys {
    pub(crate) fn len(&self) -> usize {
        match self {
            Keys::Small(v) => v.len(),
            Keys::Large(s) => s.len(),
        }
    }

    pub(crate) fn iter(&self) -> Iter<'_> {
        match self {
            Keys::Small(v) => Iter::Small(v.iter()),
            Keys::Large(s) => Iter::Large(s.iter()),
        }
    }

    /// Adds `k` (not present yet).
    pub(crate) fn insert(&mut self, k: usize) {
        match self {
            Keys::Small(v) => {
                let at = v.partition_point(|&x| x < k);
                debug_assert!(v.get(at) != Some(&k), "key {k:#x} present");
                v.insert(at, k);
                if v.len() > GROW_AT {
                    *self = Keys::Large(v.iter().copied().collect());
                }
            }
            Keys::Large(s) => {
                s.insert(k);
            }
        }
    }

    /// Removes `k` if present.
    pub(crate) fn remove(&mut self, k: usize) {
        match self {
            Keys::Small(v) => {
                if let Ok(at) = v.binary_search(&k) {
                    v.remove(at);
                }
            }
            Keys::Large(s) => {
                s.remove(&k);
                if s.len() < SHRINK_AT {
                    *self = Keys::Small(s.iter().copied().collect());
                }
            }
        }
    }

    /// The last key below `k`.
    pub(crate) fn before(&self, k: usize) -> Option<usize> {
        match self {
            Keys::Small(v) => v[..v.partition_point(|&x| x < k)].last().copied(),
            Keys::Large(s) => s.range(..k).next_back().copied(),
        }
    }

    /// The first key above `k`.
    pub(crate) fn after(&self, k: usize) -> Option<usize> {
        match self {
            Keys::Small(v) => v.get(v.partition_point(|&x| x <= k)).copied(),
            Keys::Large(s) => s
                .range((std::ops::Bound::Excluded(k), std::ops::Bound::Unbounded))
                .next()
                .copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random insertions and removals across both bounds, checked against a B-tree set after
    /// every step: the representation changes, the answers do not.
    #[test]
    fn agrees_with_a_btree_set_as_it_grows_and_shrinks() {
        let mut keys = Keys::default();
        let mut model = BTreeSet::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let (mut grew, mut shrank) = (false, false);
        let check = |keys: &Keys, model: &BTreeSet<usize>, probe: usize| {
            assert_eq!(keys.len(), model.len());
            assert_eq!(
                keys.before(probe),
                model.range(..probe).next_back().copied()
            );
            assert_eq!(
                keys.after(probe),
                model
                    .range((std::ops::Bound::Excluded(probe), std::ops::Bound::Unbounded))
                    .next()
                    .copied()
            );
        };
        // Up past GROW_AT, down below SHRINK_AT, up again.
        for phase in [3000usize, 100, 2000, 0] {
            while model.len() != phase {
                let k = 16 * rand(8192) as usize;
                if model.len() < phase {
                    if model.insert(k) {
                        keys.insert(k);
                    }
                } else if model.remove(&k) {
                    keys.remove(k);
                }
                check(&keys, &model, 16 * rand(8192) as usize + rand(3) as usize);
                grew |= matches!(keys, Keys::Large(_));
                shrank |= grew && matches!(keys, Keys::Small(_));
            }
            assert!(keys.iter().eq(model.iter().copied()), "phase {phase}");
        }
        assert!(grew && shrank, "both representations were used");
        // Removing an absent key changes nothing.
        keys.remove(12345);
        assert_eq!(keys.len(), 0);
    }
}
