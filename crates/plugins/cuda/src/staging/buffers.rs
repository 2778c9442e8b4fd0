//! The pinned buffers: size classes of powers of two from `MIN_CLASS` to [`WHOLE`],
//! allocated on demand up to the limit (and, for copies over [`UNASKED`], the growth
//! allowance, [`allowance`]), kept for the process's life, and reused once the event after
//! their DMA completes.

use super::{Staging, UNASKED, WHOLE};
use crate::driver::{call, create_event, query};
use cudarc::driver::sys;
use omptarget_plugin::Result;
use std::sync::atomic::Ordering;

const MIN_CLASS: usize = 4096;
const CLASSES: usize = (WHOLE / MIN_CLASS).trailing_zeros() as usize + 1;
/// New pinned memory for copies over [`UNASKED`] is allocated only while the pinned bytes stay
/// within this fraction of the bytes the program has moved that way: pinning costs ~0.6 ms
/// per MiB on an H200, which one copy never pays back (one rank of `mpi_stencil` spent 164 ms
/// in 259 `cuMemAllocHost` calls for a single 256 MiB copy back, 0.47 s against LLVM 19's
/// 0.28 s, 2026-12-01), so buffers are added as the volume that reuses them grows.
const GROWTH_DIVISOR: usize = 32;
/// ... but a program that has moved [`REPEATS`] times a copy's size may pin this much for it
/// at once.
const MIN_ALLOWANCE: usize = 256 << 20;
/// See [`allowance`].
const REPEATS: usize = 8;

/// The pinned bytes (at most `limit`) that a copy of `copy` bytes may grow the buffers of its
/// chunks' size to (each size counts its own buffers; all sizes together stay within
/// `limit`), once `moved` bytes of large pageable copies (this one included) have gone to or
/// from the device.
///
/// The ratio alone ([`GROWTH_DIVISOR`]) grows the buffers too slowly for programs that move
/// the same data again and again: `tofrom64MiB_pageable` needs ~128 MiB (a 64 MiB copy back
/// holds all its chunks until it lands) and reached it only after 4 GiB, 32 regions (482
/// chunks of its 34-region run took the driver's path, 136 us per MiB); 32 concurrent
/// `nowait` regions of 4 MiB each way need ~256 MiB in flight and had ~56 MiB after 1.75 GiB
/// (7 rounds), the rest blocking in the driver's pageable path.
///
/// So up to [`MIN_ALLOWANCE`] is allowed for a copy once the program has moved [`REPEATS`]
/// times its size that way: a ski-rental rule per copy. Pinning costs ~0.6-0.95 ms per MiB
/// (`cuMemAllocHost`: 965 us per MiB in 1 MiB buffers, 2.4 ms per 4 MiB buffer) and saves
/// ~0.1 ms per MiB each time the buffer is used instead of the driver's path, so buffers for a
/// copy pay back after ~8 uses; a program that has already moved 8 times the copy's size has
/// paid about the buffers' price in slow copies, and pays at most about as much again if it
/// then stops. The single large copy the ratio was made for (`mpi_stencil`: 256 MiB to the
/// device and back once; 164 ms in `cuMemAllocHost` when it was staged in full) is not
/// helped: 512 MiB moved is 2, not 8, times the copy. Repeated small and medium copies are:
/// 4 MiB copies qualify as soon as they are staged at all ([`STAGE_AFTER`](super::STAGE_AFTER)), 64 MiB copies
/// after 512 MiB (the 4th region).
pub(super) fn allowance(limit: usize, copy: usize, moved: usize) -> usize {
    if copy <= UNASKED {
        return limit;
    }
    let mut allowed = moved / GROWTH_DIVISOR;
    if moved >= copy.saturating_mul(REPEATS) {
        allowed = allowed.max(MIN_ALLOWANCE);
    }
    allowed.min(limit)
}

pub(super) fn class_of(size: usize) -> usize {
    (size.max(MIN_CLASS).next_power_of_two() / MIN_CLASS).trailing_zeros() as usize
}

fn class_size(class: usize) -> usize {
    MIN_CLASS << class
}

/// A pinned buffer of `class_size(class)` bytes and, once needed, its event.
pub(super) struct Slot {
    pub(super) buf: usize,
    pub(super) class: usize,
    pub(super) event: usize,
}

impl Slot {
    /// A place in a stream's arena (staging.rs, `Staging::queue_packed`): not a buffer of its own,
    /// so never given back (its arena is, when the stream completes).
    pub(super) fn packed(buf: usize) -> Self {
        Slot {
            buf,
            class: PACKED,
            event: 0,
        }
    }
}

/// The class of a [`Slot::packed`].
const PACKED: usize = usize::MAX;

#[derive(Default)]
pub(super) struct Pool {
    /// Free buffers of each class.
    pub(super) free: [Vec<Slot>; CLASSES],
    /// Buffers whose DMA was followed by an event, oldest first.
    pub(super) in_flight: Vec<Slot>,
    /// Pinned bytes in each class.
    bytes: [usize; CLASSES],
}

impl Staging {
    /// A buffer of at least `size` bytes for (a chunk of) a copy of `copy` bytes, or `None`
    /// past the limit (or, for a copy over [`UNASKED`], with its size's buffers past the
    /// growth [`allowance`]: counted per size, so that buffers of one size, kept from earlier
    /// copies, do not keep copies of another size from growing theirs). With
    /// `evented`, one whose event exists, reusing buffers in flight once their event completed.
    pub(super) fn take(&self, size: usize, copy: usize, evented: bool) -> Result<Option<Slot>> {
        let class = class_of(size);
        let allowed = allowance(
            self.limit,
            copy,
            self.pageable_bytes.load(Ordering::Relaxed),
        );
        let mut slot = {
            let mut pool = self.pool.lock();
            if let Some(s) = pool.free[class].pop() {
                Some(s)
            } else if let Some(i) = pool.in_flight.iter().position(|s| {
                s.class == class
                    // SAFETY: queries a live event.
                    && query("cuEventQuery", || unsafe { sys::cuEventQuery(s.event as sys::CUevent) })
                        .unwrap_or(false)
            }) {
                Some(pool.in_flight.remove(i))
            } else if pool.bytes.iter().sum::<usize>() + class_size(class) <= self.limit
                && pool.bytes[class] + class_size(class) <= allowed
            {
                pool.bytes[class] += class_size(class);
                None
            } else if let Some(i) = pool.in_flight.iter().position(|s| s.class == class) {
                // At the limit: wait for the oldest buffer of this size in flight.
                let s = pool.in_flight.remove(i);
                drop(pool);
                self.waiter.event(s.event)?;
                Some(s)
            } else {
                return Ok(None);
            }
        };
        if slot.is_none() {
            let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
            // SAFETY: a pinned host allocation, kept in the pool for the process's life.
            let r = call("cuMemAllocHost", || unsafe {
                sys::cuMemAllocHost_v2(&mut p, class_size(class))
            });
            if r.is_err() {
                self.pool.lock().bytes[class] -= class_size(class);
                return Ok(None);
            }
            slot = Some(Slot {
                buf: p as usize,
                class,
                event: 0,
            });
        }
        let mut slot = slot.expect("set above");
        if evented && slot.event == 0 {
            slot.event = create_event(self.waiter.polls())? as usize;
        }
        Ok(Some(slot))
    }

    pub(super) fn give_back(&self, slots: impl IntoIterator<Item = Slot>) {
        let mut pool = self.pool.lock();
        for s in slots.into_iter().filter(|s| s.class != PACKED) {
            let class = s.class;
            pool.free[class].push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::staging::{CHUNK, SMALL, STAGE_AFTER};

    #[test]
    fn classes() {
        assert_eq!(class_of(1), 0);
        assert_eq!(class_of(4096), 0);
        assert_eq!(class_of(4097), 1);
        assert_eq!(class_of(SMALL), 8);
        assert_eq!(class_of(WHOLE), CLASSES - 1);
        const { assert!(UNASKED <= SMALL && SMALL <= CHUNK && CHUNK <= WHOLE) };
        assert_eq!(class_size(CLASSES - 1), WHOLE);
    }

    #[test]
    fn growth_allowance() {
        const MIB: usize = 1 << 20;
        let limit = 512 * MIB;
        // Small copies: the limit.
        assert_eq!(allowance(limit, UNASKED, 0), limit);
        // One large copy each way (mpi_stencil): the ratio only.
        assert_eq!(allowance(limit, 256 * MIB, 512 * MIB), 16 * MIB);
        // 4 MiB copies, once staged at all: the minimum allowance.
        const { assert!(STAGE_AFTER >= 4 * MIB * REPEATS) };
        assert_eq!(
            allowance(limit, 4 * MIB, STAGE_AFTER + 4 * MIB),
            MIN_ALLOWANCE
        );
        // 64 MiB copies: the ratio until 512 MiB moved, then the minimum allowance.
        assert_eq!(allowance(limit, 64 * MIB, 448 * MIB), 14 * MIB);
        assert_eq!(allowance(limit, 64 * MIB, 512 * MIB), MIN_ALLOWANCE);
        // The ratio beyond it, and the limit over both.
        assert_eq!(allowance(limit, 64 * MIB, 12 << 30), 384 * MIB);
        assert_eq!(allowance(limit, 64 * MIB, 64 << 30), limit);
        assert_eq!(allowance(128 * MIB, 4 * MIB, 1 << 30), 128 * MIB);
        assert_eq!(allowance(limit, usize::MAX, usize::MAX), limit);
    }
}
