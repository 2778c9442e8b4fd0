//! A cache of device allocations for backends without stream-ordered allocation (the host
//! device, CUDA without memory pools), with LLVM 19's rules (its `MemoryManagerTy`), so that
//! programs see the same device addresses come back as under LLVM's runtime:
//! - requests of 1 byte up to the threshold (`LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD`, 8 KiB by
//!   default; 0 disables the cache) go through it; larger ones go straight to the backend;
//! - a block is allocated with exactly the size asked for, and a freed block is kept for a
//!   later request of exactly that size (LLVM buckets its free lists by power of two, but a
//!   bucket's `multiset` is searched for an equal size);
//! - among free blocks of one size the one freed first is reused first (a `multiset` inserts
//!   an equal element after the others and `find` returns the first).
//!
//! The hot path of a small `map(tofrom: ...)` therefore costs neither a driver allocation nor a
//! device-wide free once a block of its size was freed.

use crate::DevicePtr;
use crate::addr_map::{AddrMap, addr_map};
use crate::contention::{Lock, Site};
use std::collections::VecDeque;

static STATE: Site = Site::new("plugin: memory manager");

/// LLVM's default threshold (8 KiB).
pub const DEFAULT_THRESHOLD: usize = 1 << 13;

/// Free blocks by exact size, for one device, and the sizes of the blocks it handed out (so a
/// free knows its size class), under one lock.
#[derive(Debug)]
pub struct MemoryManager {
    threshold: usize,
    state: Lock<State>,
}

#[derive(Debug, Default)]
struct State {
    free: AddrMap<usize, VecDeque<DevicePtr>>,
    in_use: AddrMap<DevicePtr, usize>,
}

impl MemoryManager {
    /// A manager that caches requests up to `threshold` bytes (0: caches nothing).
    pub fn new(threshold: usize) -> Self {
        Self {
            threshold,
            state: Lock::new(
                &STATE,
                State {
                    free: addr_map(),
                    in_use: addr_map(),
                },
            ),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Whether requests of `size` bytes go through the cache.
    pub fn caches(&self, size: usize) -> bool {
        size != 0 && size <= self.threshold
    }

    /// The free block of `size` bytes freed first, if there is one; it counts as in use.
    pub fn take(&self, size: usize) -> Option<DevicePtr> {
        if !self.caches(size) {
            return None;
        }
        let mut s = self.state();
        let ptr = s.free.get_mut(&size)?.pop_front()?;
        s.in_use.insert(ptr, size);
        Some(ptr)
    }

    /// A block of `size` bytes the backend allocated for a cacheable request: in use, and
    /// cached when it is released.
    pub fn adopt(&self, ptr: DevicePtr, size: usize) {
        if self.caches(size) {
            self.state().in_use.insert(ptr, size);
        }
    }

    /// Releases a block this manager handed out or adopted into the cache. `false`: it knows
    /// no such block, and the caller frees it on the backend.
    pub fn release(&self, ptr: DevicePtr) -> bool {
        let mut s = self.state();
        let Some(size) = s.in_use.remove(&ptr) else {
            return false;
        };
        s.free.entry(size).or_default().push_back(ptr);
        true
    }

    /// How many blocks are free.
    pub fn cached(&self) -> usize {
        self.state().free.values().map(VecDeque::len).sum()
    }

    /// Empties the cache, returning the blocks so the backend can release them (blocks in use
    /// stay known, so their release still finds them).
    pub fn drain(&self) -> Vec<DevicePtr> {
        self.state()
            .free
            .drain()
            .flat_map(|(_, blocks)| blocks)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block the backend allocated for `size` bytes, released into the cache at once (what
    /// a region's map and unmap do); `false` when it is not cacheable.
    fn keep(mm: &MemoryManager, ptr: DevicePtr, size: usize) -> bool {
        mm.adopt(ptr, size);
        mm.release(ptr)
    }

    #[test]
    fn reuses_a_freed_block_for_the_same_size_only() {
        let mm = MemoryManager::new(DEFAULT_THRESHOLD);
        assert_eq!(mm.take(64), None);
        assert!(keep(&mm, 0x1000, 64));
        assert_eq!(
            mm.take(63),
            None,
            "a 63-byte request never gets a 64-byte block"
        );
        assert_eq!(mm.take(65), None);
        assert_eq!(mm.take(64), Some(0x1000));
        assert_eq!(mm.take(64), None);
    }

    #[test]
    fn the_block_freed_first_comes_back_first() {
        let mm = MemoryManager::new(DEFAULT_THRESHOLD);
        keep(&mm, 0x1000, 100);
        keep(&mm, 0x2000, 100);
        keep(&mm, 0x3000, 100);
        assert_eq!(mm.take(100), Some(0x1000));
        keep(&mm, 0x1000, 100);
        assert_eq!(mm.take(100), Some(0x2000));
        assert_eq!(mm.take(100), Some(0x3000));
        assert_eq!(mm.take(100), Some(0x1000));
    }

    #[test]
    fn the_threshold_is_inclusive_and_zero_disables() {
        let mm = MemoryManager::new(DEFAULT_THRESHOLD);
        assert!(mm.caches(DEFAULT_THRESHOLD));
        assert!(!keep(&mm, 0x2000, DEFAULT_THRESHOLD + 1));
        assert!(!mm.caches(0));
        let off = MemoryManager::new(0);
        assert!(!off.caches(8));
        assert!(!keep(&off, 0x3000, 8));
    }

    #[test]
    fn released_blocks_are_found_by_address_alone() {
        let mm = MemoryManager::new(DEFAULT_THRESHOLD);
        mm.adopt(0x1000, 64);
        mm.adopt(0x9000, DEFAULT_THRESHOLD + 1); // not cacheable: not adopted
        assert!(mm.release(0x1000));
        assert!(!mm.release(0x1000), "a second release finds nothing");
        assert!(!mm.release(0x9000));
        assert!(!mm.release(0x5000), "never handed out");
        assert_eq!(mm.take(64), Some(0x1000));
        assert!(mm.release(0x1000), "a reused block is in use again");
        assert_eq!(mm.cached(), 1);
    }

    #[test]
    fn drain_returns_every_cached_block() {
        let mm = MemoryManager::new(DEFAULT_THRESHOLD);
        keep(&mm, 1 << 12, 8);
        keep(&mm, 2 << 12, 4000);
        keep(&mm, 3 << 12, 4000);
        assert_eq!(mm.cached(), 3);
        let mut all = mm.drain();
        all.sort();
        assert_eq!(all, vec![1 << 12, 2 << 12, 3 << 12]);
        assert!(mm.drain().is_empty());
    }
}
