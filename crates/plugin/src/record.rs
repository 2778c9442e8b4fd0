//! The device memory of record and replay (LLVM's `RecordReplayTy`): while a device records
//! kernels or replays one, every device allocation comes from one region, handed out in order
//! (16-byte steps, as LLVM's bump allocator) and never given back, so that a snapshot of the
//! region's used part holds everything a kernel can reach, and a replay that maps the region
//! at the same address finds every pointer inside it valid.

use std::sync::atomic::{AtomicUsize, Ordering};

/// LLVM's alignment of bump allocations.
pub const ALIGNMENT: usize = 16;

/// A region of device memory and how much of it was handed out.
#[derive(Debug)]
pub struct RecordRegion {
    /// Where the first allocation goes (the address recordings name `BumpAllocVAStart`).
    start: usize,
    /// Bytes from `start` to the end of the reservation.
    size: usize,
    next: AtomicUsize,
}

impl RecordRegion {
    pub fn new(start: usize, size: usize) -> Self {
        Self {
            start,
            size,
            next: AtomicUsize::new(0),
        }
    }

    /// `size` bytes (at least one step), or `None` when the region is full.
    pub fn alloc(&self, size: usize) -> Option<usize> {
        let step = size.max(1).checked_next_multiple_of(ALIGNMENT)?;
        let mut at = self.next.load(Ordering::Relaxed);
        loop {
            let end = at.checked_add(step).filter(|&e| e <= self.size)?;
            match self
                .next
                .compare_exchange_weak(at, end, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return Some(self.start + at),
                Err(now) => at = now,
            }
        }
    }

    /// Whether `ptr` lies in the region (its blocks are never freed).
    pub fn contains(&self, ptr: usize) -> bool {
        ptr >= self.start && ptr - self.start < self.size
    }

    /// The start and the bytes handed out so far (LLVM's `MemoryStart` and `MemorySize`).
    pub fn used(&self) -> (usize, usize) {
        (self.start, self.next.load(Ordering::Acquire))
    }

    /// Bytes from the start to the end of the reservation.
    pub fn size(&self) -> usize {
        self.size
    }
}

/// Where a region for a recorded start address `want` (of `need` bytes) goes inside a
/// reservation `[got, got + total)`: `(start, offset)` with the start at `want` when the
/// reservation covers it (LLVM skips the bytes before it), else at `got` with the offset the
/// replay tool subtracts from pointer arguments (LLVM's `ReqPtrArgOffset`).
pub fn place(got: usize, total: usize, want: Option<usize>, need: usize) -> (usize, usize) {
    match want {
        Some(w) if w >= got && w - got <= total.saturating_sub(need) => (w, 0),
        Some(w) if w != got => (got, w.wrapping_sub(got)),
        _ => (got, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bump_allocation_in_sixteen_byte_steps() {
        let r = RecordRegion::new(0x1000, 64);
        assert_eq!(r.alloc(1), Some(0x1000));
        assert_eq!(r.alloc(16), Some(0x1010));
        assert_eq!(r.alloc(17), Some(0x1020));
        assert_eq!(r.used(), (0x1000, 64), "17 bytes take two steps");
        assert_eq!(r.alloc(1), None, "full");
        assert!(r.contains(0x103f) && !r.contains(0x1040) && !r.contains(0xfff));
        assert_eq!(r.alloc(usize::MAX), None);
    }

    #[test]
    fn placing_a_recorded_start() {
        assert_eq!(place(0x1000, 0x1000, None, 0), (0x1000, 0));
        assert_eq!(place(0x1000, 0x1000, Some(0x1000), 0x100), (0x1000, 0));
        assert_eq!(place(0x1000, 0x1000, Some(0x1800), 0x100), (0x1800, 0));
        // Not inside (or not room enough): the offset from where the region really starts.
        assert_eq!(place(0x1000, 0x1000, Some(0x1f80), 0x100), (0x1000, 0xf80));
        assert_eq!(
            place(0x2000, 0x1000, Some(0x1000), 0x100),
            (0x2000, 0usize.wrapping_sub(0x1000))
        );
    }
}
