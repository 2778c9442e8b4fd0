//! The pinned buffers: size classes of powers of two from `MIN_CLASS` to [`WHOLE`],
//! allocated on demand up to the limit (and, for copies over [`UNASKED`], the growth
//! allowance), kept for the process's life, and reused once the event after their DMA completes.

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

fn class_of(size: usize) -> usize {
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

#[derive(Default)]
pub(super) struct Pool {
    pub(super) free: Vec<Vec<Slot>>,
    /// Buffers whose DMA was followed by an event, oldest first.
    pub(super) in_flight: Vec<Slot>,
    bytes: usize,
}

impl Staging {
    /// A buffer of at least `size` bytes, or `None` past the limit (or, for a copy over
    /// [`UNASKED`], past the growth allowance, [`GROWTH_DIVISOR`]). With `evented`, one whose
    /// event exists, reusing buffers in flight once their event completed.
    pub(super) fn take(&self, size: usize, evented: bool) -> Result<Option<Slot>> {
        let class = class_of(size);
        let limit = if size > UNASKED {
            self.limit
                .min(self.pageable_bytes.load(Ordering::Relaxed) / GROWTH_DIVISOR)
        } else {
            self.limit
        };
        let mut slot = {
            let mut pool = self.pool.lock();
            if pool.free.len() < CLASSES {
                pool.free.resize_with(CLASSES, Vec::new);
            }
            if let Some(s) = pool.free[class].pop() {
                Some(s)
            } else if let Some(i) = pool.in_flight.iter().position(|s| {
                s.class == class
                    // SAFETY: queries a live event.
                    && query("cuEventQuery", || unsafe { sys::cuEventQuery(s.event as sys::CUevent) })
                        .unwrap_or(false)
            }) {
                Some(pool.in_flight.remove(i))
            } else if pool.bytes + class_size(class) <= limit {
                pool.bytes += class_size(class);
                None
            } else if let Some(i) = pool.in_flight.iter().position(|s| s.class == class) {
                // At the limit: wait for the oldest buffer of this size in flight.
                let s = pool.in_flight.remove(i);
                drop(pool);
                // SAFETY: waits for a live event.
                call("cuEventSynchronize", || unsafe {
                    sys::cuEventSynchronize(s.event as sys::CUevent)
                })?;
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
                self.pool.lock().bytes -= class_size(class);
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
            slot.event = create_event()? as usize;
        }
        Ok(Some(slot))
    }

    pub(super) fn give_back(&self, slots: impl IntoIterator<Item = Slot>) {
        let mut pool = self.pool.lock();
        if pool.free.len() < CLASSES {
            pool.free.resize_with(CLASSES, Vec::new);
        }
        for s in slots {
            let class = s.class;
            pool.free[class].push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::staging::{CHUNK, SMALL};

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
}
