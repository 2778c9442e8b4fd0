//! Batching: a construct's small staged copies wait in their stream's batch, one direction at
//! a time, and reach the driver in one `cuMemcpyBatchAsync` call ([`Staging::flush`], before
//! anything else is queued on the stream), or one by one where the driver has no batches.
//! Batches of several small copies go to the copy kernel instead (`copy_kernel.rs`).

use super::{PerStream, Shard, Staging};
use crate::driver::{CUcontext, CUdeviceptr, CUstream, call};
use cudarc::driver::sys;
use omptarget_plugin::Result;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Default)]
pub(super) struct Batch {
    to_device: bool,
    dsts: Vec<CUdeviceptr>,
    pub(super) srcs: Vec<CUdeviceptr>,
    pub(super) sizes: Vec<usize>,
    /// The lowest destination byte of the batch and one past the highest (`lo == hi`:
    /// empty).
    lo: usize,
    hi: usize,
}

impl Batch {
    /// Whether a copy to device range `[dst, dst + size)` overlaps one in the batch (copies
    /// in one batch may run in any order). A range outside the batch's span overlaps
    /// nothing and is not compared with each copy: a construct's copies, to blocks or
    /// arena buffers allocated one after another, mostly lie above the span, and the check
    /// made a batch of n copies cost n^2 / 2 comparisons.
    fn overlaps(&self, dst: usize, size: usize) -> bool {
        if dst >= self.hi || dst + size <= self.lo {
            return false;
        }
        self.dsts
            .iter()
            .zip(&self.sizes)
            .any(|(&d, &n)| (d as usize) < dst + size && dst < d as usize + n)
    }

    fn push(&mut self, dst: usize, src: usize, size: usize) {
        if self.sizes.is_empty() {
            (self.lo, self.hi) = (dst, dst + size);
        } else {
            self.lo = self.lo.min(dst);
            self.hi = self.hi.max(dst + size);
        }
        self.dsts.push(dst as CUdeviceptr);
        self.srcs.push(src as CUdeviceptr);
        self.sizes.push(size);
    }

    pub(super) fn clear(&mut self) {
        self.dsts.clear();
        self.srcs.clear();
        self.sizes.clear();
        (self.lo, self.hi) = (0, 0);
    }
}

impl Staging {
    /// Queues a small copy between a pinned buffer and the device: into the stream's batch,
    /// or at once without batching. `keep` records the buffer's fate with the stream.
    pub(super) fn queue_small(
        &self,
        stream: usize,
        to_device: bool,
        dst: usize,
        src: usize,
        size: usize,
        keep: impl FnOnce(&mut PerStream),
    ) -> Result<()> {
        // The copy kernel is loaded (once) before any lock is taken: the driver compiles it.
        self.copy_kernel.prepare(self.ctx as CUcontext);
        // Batches are issued with the lock held: another thread may flush this stream (an
        // event recorded on it for a cross-queue wait) while its owner queues more work, and
        // the stream must see the batches in the order they were closed.
        let shard = self.shard(stream);
        let mut pending = shard.streams.lock();
        let ps = pending.entry(stream).or_default();
        keep(ps);
        self.batch_small(shard, ps, stream, to_device, dst, src, size)
    }

    /// Queues a small copy into `ps`'s batch (or at once without batching), with the lock of
    /// `shard` (which holds `ps`) held.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn batch_small(
        &self,
        shard: &Shard,
        ps: &mut PerStream,
        stream: usize,
        to_device: bool,
        dst: usize,
        src: usize,
        size: usize,
    ) -> Result<()> {
        let s = stream as CUstream;
        if !self.batching {
            return issue_one(to_device, dst as CUdeviceptr, src as CUdeviceptr, size, s);
        }
        let b = &mut ps.batch;
        if !b.sizes.is_empty() && (b.to_device != to_device || b.overlaps(dst, size)) {
            // Another direction, or a range an earlier copy writes: that batch first.
            self.issue_batch(&shard.batched, b, s)?;
        }
        if b.sizes.is_empty() {
            // One atomic per batch, not per copy: a construct's copies share one.
            shard.batched.fetch_add(1, Ordering::Relaxed);
        }
        b.to_device = to_device;
        b.push(dst, src, size);
        Ok(())
    }

    /// Queues `stream`'s batched copies: called before anything else is queued on it.
    pub fn flush(&self, stream: usize) -> Result<()> {
        let shard = self.shard(stream);
        if shard.batched.load(Ordering::Relaxed) == 0 {
            return Ok(());
        }
        // Issued with the lock held (see `queue_small`): a concurrent flush of the same stream
        // must not queue anything between taking this batch and issuing it.
        let mut pending = shard.streams.lock();
        match pending.get_mut(&stream) {
            Some(ps) if !ps.batch.sizes.is_empty() => {
                self.issue_batch(&shard.batched, &mut ps.batch, stream as CUstream)
            }
            _ => Ok(()),
        }
    }

    /// Queues the copies of `b` on `s` and empties it (keeping its capacity); `batched`
    /// counts the non-empty batches of `s`'s shard.
    fn issue_batch(&self, batched: &AtomicUsize, b: &mut Batch, s: CUstream) -> Result<()> {
        if b.sizes.is_empty() {
            return Ok(());
        }
        batched.fetch_sub(1, Ordering::Relaxed);
        let r = self.issue_copies(b, s);
        b.clear();
        r
    }

    fn issue_copies(&self, b: &mut Batch, s: CUstream) -> Result<()> {
        // The copy kernel first (where it takes this batch); whatever it did not queue goes
        // to the driver's copies.
        let done = self.copy_kernel.issue(&b.srcs, &b.dsts, &b.sizes, s);
        let n = b.sizes.len();
        if n - done > 1 && self.batch_api.load(Ordering::Relaxed) {
            let host = sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
                id: 0,
            };
            let device = sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: self.device,
            };
            let (src_hint, dst_hint) = if b.to_device {
                (host, device)
            } else {
                (device, host)
            };
            let mut attrs = sys::CUmemcpyAttributes {
                srcAccessOrder: sys::CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
                srcLocHint: src_hint,
                dstLocHint: dst_hint,
                flags: 0,
            };
            let mut first = 0usize;
            let mut failed_at = 0usize;
            // SAFETY: n - done copies between pinned buffers of ours and live device ranges,
            // one attribute set for all of them (index 0).
            let r = call("cuMemcpyBatchAsync", || unsafe {
                sys::cuMemcpyBatchAsync(
                    b.dsts[done..].as_mut_ptr(),
                    b.srcs[done..].as_mut_ptr(),
                    b.sizes[done..].as_mut_ptr(),
                    n - done,
                    &mut attrs,
                    &mut first,
                    1,
                    &mut failed_at,
                    s,
                )
            });
            if r.is_ok() {
                return Ok(());
            }
            // Not available (an older driver) or refused: one by one from now on. Copies the
            // driver queued already are queued again, which is harmless: the same bytes.
            self.batch_api.store(false, Ordering::Relaxed);
        }
        for i in done..n {
            issue_one(b.to_device, b.dsts[i], b.srcs[i], b.sizes[i], s)?;
        }
        Ok(())
    }
}

/// Queues one copy between a pinned buffer of ours and a live device range.
fn issue_one(
    to_device: bool,
    dst: CUdeviceptr,
    src: CUdeviceptr,
    len: usize,
    s: CUstream,
) -> Result<()> {
    if to_device {
        // SAFETY: from a pinned buffer of ours into a live device range.
        call("cuMemcpyHtoDAsync", || unsafe {
            sys::cuMemcpyHtoDAsync_v2(dst, src as *const _, len, s)
        })
    } else {
        // SAFETY: from a live device range into a pinned buffer of ours.
        call("cuMemcpyDtoHAsync", || unsafe {
            sys::cuMemcpyDtoHAsync_v2(dst as *mut _, src, len, s)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Batch;

    #[test]
    fn overlaps_compares_inside_the_span_and_answers_outside_it() {
        let mut b = Batch::default();
        assert!(!b.overlaps(0x1000, 64), "an empty batch overlaps nothing");
        b.push(0x2000, 0xa000, 0x100);
        b.push(0x2400, 0xa100, 0x100);
        assert!(b.overlaps(0x2000, 1), "the first byte");
        assert!(b.overlaps(0x24ff, 0x10), "the last byte");
        assert!(b.overlaps(0x1f00, 0x101), "reaching into the first copy");
        assert!(!b.overlaps(0x2100, 0x300), "the gap between the copies");
        assert!(!b.overlaps(0x2500, 0x100), "just above the span");
        assert!(!b.overlaps(0x1f00, 0x100), "just below the span");
        b.push(0x1000, 0xa200, 0x10);
        assert!(
            !b.overlaps(0x1010, 0xff0),
            "between a copy pushed below and the span"
        );
        assert!(b.overlaps(0x100f, 1));
        b.clear();
        assert!(!b.overlaps(0x2000, 0x100), "cleared");
        b.push(0x3000, 0xa000, 8);
        assert!(!b.overlaps(0x2000, 0x100), "a new span after the clear");
        assert!(b.overlaps(0x3004, 8));
    }
}
