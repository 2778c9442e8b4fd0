//! A cache of small device blocks in front of the memory pool, aware of streams.
//!
//! `cuMemAllocAsync` costs 3–6 µs of host time for a small block on an H200 (more than the rest
//! of a 64-byte region), and a pool that serves thousands of small allocations and frees a
//! second gets slower with time (measured: 16 × 1 KiB per region went from 130 to 430 µs
//! between 200 and 1000 regions, in a driver-only loop too). Blocks up to the memory-manager
//! threshold (`LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD`, 8 KiB by default as in LLVM; 0 turns
//! the cache off) are therefore rounded up to a power of two and kept: a block freed on a
//! stream waits on that stream's list until the stream is found complete, then any stream may
//! take it, so reuse never races with work still queued.

use omptarget_plugin::addr_map::AddrMap;
use omptarget_plugin::contention::{Lock, Padded, Site};

static CACHE: Site = Site::new("cuda: small-block cache");

const MIN: usize = 256;
/// Cached bytes at most (beyond this, frees go to the pool).
const MAX_CACHED: usize = 64 << 20;

#[derive(Default)]
struct Inner {
    free: Vec<Vec<usize>>,
    /// Blocks this cache hands out, with their class.
    owned: AddrMap<usize, u8>,
    /// Blocks freed on a stream (by address), usable once it completes.
    pending: AddrMap<usize, Vec<usize>>,
    cached_bytes: usize,
}

pub struct BlockCache {
    threshold: usize,
    /// Apart from `threshold`, which every allocation reads.
    inner: Padded<Lock<Inner>>,
}

fn class_size(class: usize) -> usize {
    MIN << class
}

impl BlockCache {
    pub fn new(threshold: usize) -> Self {
        Self {
            threshold,
            inner: Padded(Lock::with_default(&CACHE)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    /// The class and rounded size for an allocation of `size` bytes, or `None` if the cache
    /// does not serve it.
    pub fn class_of(&self, size: usize) -> Option<(usize, usize)> {
        if size == 0 || size > self.threshold {
            return None;
        }
        let rounded = size.max(MIN).next_power_of_two();
        Some(((rounded / MIN).trailing_zeros() as usize, rounded))
    }

    /// A cached block of class `class`, if one is free.
    pub fn take(&self, class: usize) -> Option<usize> {
        let mut inner = self.lock();
        let p = inner.free.get_mut(class)?.pop()?;
        inner.cached_bytes -= class_size(class);
        Some(p)
    }

    /// Records a new block of class `class` obtained from the pool.
    pub fn adopt(&self, ptr: usize, class: usize) {
        self.lock().owned.insert(ptr, class as u8);
    }

    /// Takes back `ptr` if it is a cached block, freed after the work queued on `stream`
    /// (`None`: no work uses it). `false`: not ours, or the cache is full: the caller frees it
    /// (and it is forgotten here).
    pub fn give_back(&self, ptr: usize, stream: Option<usize>) -> bool {
        let mut inner = self.lock();
        let Some(&class) = inner.owned.get(&ptr) else {
            return false;
        };
        let size = class_size(class as usize);
        if inner.cached_bytes + size > MAX_CACHED {
            inner.owned.remove(&ptr);
            return false;
        }
        inner.cached_bytes += size;
        match stream {
            Some(s) => inner.pending.entry(s).or_default().push(ptr),
            None => {
                let class = class as usize;
                if inner.free.len() <= class {
                    inner.free.resize_with(class + 1, Vec::new);
                }
                inner.free[class].push(ptr);
            }
        }
        true
    }

    /// `stream` has completed: the blocks freed on it may be reused anywhere. (The stream's
    /// list stays, empty, for its next construct: nothing is allocated per construct.)
    pub fn completed(&self, stream: usize) {
        let mut inner = self.lock();
        let Inner {
            free,
            owned,
            pending,
            ..
        } = &mut *inner;
        let Some(blocks) = pending.get_mut(&stream) else {
            return;
        };
        for p in blocks.drain(..) {
            let class = owned[&p] as usize;
            if free.len() <= class {
                free.resize_with(class + 1, Vec::new);
            }
            free[class].push(p);
        }
    }

    /// Removes and returns every free block (to be freed to the pool: device teardown, or
    /// an allocation that found the device out of memory). Blocks still pending stay.
    pub fn drain(&self) -> Vec<usize> {
        let mut inner = self.lock();
        let blocks: Vec<usize> = inner.free.iter_mut().flat_map(std::mem::take).collect();
        for p in &blocks {
            let class = inner.owned.remove(p).map_or(0, |c| c as usize);
            inner.cached_bytes -= class_size(class);
        }
        blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_threshold() {
        let c = BlockCache::new(8192);
        assert_eq!(c.class_of(1), Some((0, 256)));
        assert_eq!(c.class_of(257), Some((1, 512)));
        assert_eq!(c.class_of(8192), Some((5, 8192)));
        assert_eq!(c.class_of(8193), None);
        assert_eq!(c.class_of(0), None);
        assert_eq!(BlockCache::new(0).class_of(1), None, "threshold 0: off");
    }

    #[test]
    fn a_block_freed_on_a_stream_is_reused_only_after_the_stream_completed() {
        let c = BlockCache::new(8192);
        let (class, _) = c.class_of(64).unwrap();
        assert_eq!(c.take(class), None);
        c.adopt(0x1000, class);
        assert!(c.give_back(0x1000, Some(7)));
        assert_eq!(c.take(class), None, "stream 7 may still use it");
        c.completed(8);
        assert_eq!(
            c.take(class),
            None,
            "another stream's completion says nothing"
        );
        c.completed(7);
        assert_eq!(c.take(class), Some(0x1000));
        assert!(c.give_back(0x1000, None));
        assert_eq!(
            c.take(class),
            Some(0x1000),
            "a free without a stream is ready at once"
        );
        assert!(!c.give_back(0x2000, None), "not a cached block");
    }

    #[test]
    fn drain_returns_free_blocks_and_forgets_them() {
        let c = BlockCache::new(8192);
        c.adopt(0x1000, 0);
        c.adopt(0x2000, 1);
        c.adopt(0x3000, 1);
        assert!(c.give_back(0x1000, None));
        assert!(c.give_back(0x2000, None));
        assert!(c.give_back(0x3000, Some(1)));
        let mut d = c.drain();
        d.sort();
        assert_eq!(d, vec![0x1000, 0x2000]);
        assert!(!c.give_back(0x1000, None), "forgotten after the drain");
        c.completed(1);
        assert_eq!(
            c.take(1),
            Some(0x3000),
            "the pending block survived the drain"
        );
    }
}
