//! A size-class cache of device allocations for backends without stream-ordered allocation.
//!
//! Requests up to a threshold are rounded up to a power-of-two class and served from a free
//! list of that class; freed blocks go back to their list instead of to the driver, so the hot
//! path of a small `map(tofrom: ...)` costs neither a driver allocation nor a device-wide free.
//! Larger requests go straight to the backend. `LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD`
//! sets the threshold (0 disables the cache).

use crate::DevicePtr;
use std::sync::Mutex;

/// The smallest class, in bytes.
const MIN_CLASS: usize = 32;
/// LLVM's default threshold (8 KiB).
pub const DEFAULT_THRESHOLD: usize = 1 << 13;

/// Free lists by size class, for one device.
#[derive(Debug)]
pub struct MemoryManager {
    threshold: usize,
    /// `classes[i]` holds free blocks of `MIN_CLASS << i` bytes.
    classes: Mutex<Vec<Vec<DevicePtr>>>,
}

impl MemoryManager {
    /// A manager that caches requests up to `threshold` bytes (0: caches nothing).
    pub fn new(threshold: usize) -> Self {
        let count = if threshold == 0 {
            0
        } else {
            class_index(threshold.max(MIN_CLASS)) + 1
        };
        Self {
            threshold,
            classes: Mutex::new(vec![Vec::new(); count]),
        }
    }

    /// Whether requests of `size` bytes go through the cache.
    pub fn caches(&self, size: usize) -> bool {
        size != 0 && size <= self.threshold
    }

    /// The number of bytes the backend must allocate for a cached request of `size`.
    pub fn class_size(size: usize) -> usize {
        MIN_CLASS << class_index(size)
    }

    /// A cached block for `size` bytes, if one is free.
    pub fn take(&self, size: usize) -> Option<DevicePtr> {
        if !self.caches(size) {
            return None;
        }
        let mut classes = self.classes.lock().unwrap_or_else(|e| e.into_inner());
        classes[class_index(size)].pop()
    }

    /// Returns a block of `size` bytes (the size originally asked for) to its class.
    /// Returns `false` when the block is not cacheable and must go back to the backend.
    pub fn give_back(&self, ptr: DevicePtr, size: usize) -> bool {
        if !self.caches(size) {
            return false;
        }
        let mut classes = self.classes.lock().unwrap_or_else(|e| e.into_inner());
        classes[class_index(size)].push(ptr);
        true
    }

    /// How many blocks the free lists hold.
    pub fn cached(&self) -> usize {
        let classes = self.classes.lock().unwrap_or_else(|e| e.into_inner());
        classes.iter().map(Vec::len).sum()
    }

    /// Empties every free list, returning the blocks so the backend can release them.
    pub fn drain(&self) -> Vec<DevicePtr> {
        let mut classes = self.classes.lock().unwrap_or_else(|e| e.into_inner());
        classes.iter_mut().flat_map(std::mem::take).collect()
    }
}

fn class_index(size: usize) -> usize {
    let rounded = size.max(MIN_CLASS).next_power_of_two();
    (rounded.trailing_zeros() - MIN_CLASS.trailing_zeros()) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_up_to_powers_of_two() {
        assert_eq!(MemoryManager::class_size(1), 32);
        assert_eq!(MemoryManager::class_size(32), 32);
        assert_eq!(MemoryManager::class_size(33), 64);
        assert_eq!(MemoryManager::class_size(8192), 8192);
    }

    #[test]
    fn reuses_freed_blocks_of_the_same_class_only() {
        let mm = MemoryManager::new(DEFAULT_THRESHOLD);
        assert_eq!(mm.take(64), None);
        assert!(mm.give_back(0x1000, 64));
        assert_eq!(
            mm.take(100),
            None,
            "a 128-byte class must not get a 64-byte block"
        );
        assert_eq!(mm.take(40), Some(0x1000));
        assert_eq!(mm.take(40), None);
    }

    #[test]
    fn large_and_empty_requests_bypass_the_cache() {
        let mm = MemoryManager::new(DEFAULT_THRESHOLD);
        assert!(!mm.give_back(0x2000, DEFAULT_THRESHOLD + 1));
        assert!(!mm.caches(0));
        let off = MemoryManager::new(0);
        assert!(!off.caches(8));
        assert!(!off.give_back(0x3000, 8));
    }

    #[test]
    fn drain_returns_every_cached_block() {
        let mm = MemoryManager::new(DEFAULT_THRESHOLD);
        mm.give_back(1 << 12, 8);
        mm.give_back(2 << 12, 4000);
        let mut all = mm.drain();
        all.sort();
        assert_eq!(all, vec![1 << 12, 2 << 12]);
        assert!(mm.drain().is_empty());
    }
}
