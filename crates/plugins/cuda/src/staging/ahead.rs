//! Copies to the device staged ahead of the caller's lock: the core asks for an item's copy
//! before it locks the mapping table (`Device::prestage`), this thread fills a pinned buffer
//! now, and its next copy of exactly that range to the device ([`Staging::to_device`]) only
//! queues the DMA. One buffer per thread at most; an unused one goes back with `unstage`.

use super::{SMALL, Staging, WHOLE, buffers::Slot};
use omptarget_plugin::Result;

/// A prestaged copy: which staging (its address), the program's range (begin, bytes), the
/// filled buffer.
type Prestaged = (usize, usize, usize, Slot);

thread_local! {
    /// The copy this thread staged ahead of its lock ([`Staging::prestage`]).
    static PRESTAGED: std::cell::Cell<Option<Prestaged>> =
        const { std::cell::Cell::new(None) };
}

impl Staging {
    /// The copies worth staging ahead of the caller's lock ([`Staging::prestage`]): those of
    /// one buffer (larger ones are pipelined, their fill overlapping their DMA; smaller ones
    /// cost little to fill).
    pub fn prestage_sizes(&self) -> (usize, usize) {
        if self.enabled() {
            (SMALL + 1, WHOLE)
        } else {
            (usize::MAX, 0)
        }
    }

    /// Fills a buffer with `[src, src + size)` now, for this thread's next copy of that range
    /// to the device ([`Staging::to_device`] takes it), when that copy would be staged.
    pub fn prestage(&self, src: usize, size: usize) -> Result<bool> {
        if !self.stages_ahead(size) || !self.would_stage(size) || !crate::driver::is_pageable(src) {
            return Ok(false);
        }
        self.unstage();
        let Some(slot) = self.take(size, size, true)? else {
            return Ok(false);
        };
        self.host_copy(slot.buf, src, size, size);
        PRESTAGED.set(Some((self.key(), src, size, slot)));
        Ok(true)
    }

    /// Gives back this thread's prestaged buffer of this staging, if no copy took it.
    pub fn unstage(&self) {
        if let Some(slot) = self.with_prestaged(|p| p.take_if(|p| p.0 == self.key())) {
            self.give_back([slot.3]);
        }
    }

    /// This thread's prestaged buffer for exactly `[src, src + size)`, taken.
    pub(super) fn prestaged(&self, src: usize, size: usize) -> Option<Slot> {
        self.with_prestaged(|p| p.take_if(|p| self.is(p, src, size)))
            .map(|p| p.3)
    }

    /// Whether this thread staged `[src, src + size)` ahead (then it is pageable memory and
    /// the copy is staged: the caller need not ask the driver again).
    pub fn is_prestaged(&self, src: usize, size: usize) -> bool {
        self.stages_ahead(size)
            && self.with_prestaged(|p| p.as_ref().is_some_and(|p| self.is(p, src, size)))
    }

    /// Whether copies of `size` bytes are ever staged ahead ([`Staging::prestage_sizes`]).
    fn stages_ahead(&self, size: usize) -> bool {
        let (lo, hi) = self.prestage_sizes();
        (lo..=hi).contains(&size)
    }

    /// `f` on this thread's prestaged copy (the slot stays unless `f` takes it).
    fn with_prestaged<R>(&self, f: impl FnOnce(&mut Option<Prestaged>) -> R) -> R {
        let mut p = PRESTAGED.take();
        let r = f(&mut p);
        PRESTAGED.set(p);
        r
    }

    /// Whether `p` is this staging's copy of exactly `[src, src + size)`.
    fn is(&self, p: &Prestaged, src: usize, size: usize) -> bool {
        p.0 == self.key() && p.1 == src && p.2 == size
    }

    /// Which staging a prestaged buffer belongs to (one per device).
    fn key(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }
}
