//! Pinned staging buffers for copies between the device and pageable host memory.
//!
//! The driver copies pageable memory through its own staging: ~11 GB/s on an H200 against
//! ~55 GB/s from pinned memory, and a copy from the device into pageable memory blocks the
//! calling thread until the stream reaches it, so `nowait` regions would not overlap. Instead:
//!
//! - host → device: the bytes are copied into pinned buffers and each buffer's DMA is queued
//!   as soon as it is filled. Large copies go in chunks of [`CHUNK`] bytes (smaller ones first,
//!   [`RAMP`]), filled by several threads, so the host copy of one chunk overlaps the DMA of
//!   the one before; their buffers
//!   come back when the event recorded after their DMA has completed (a bounded ring). The
//!   buffers of small copies come back when the stream completes.
//! - device → host: the DMA goes into pinned buffers asynchronously, and the bytes are copied
//!   home when the construct completes (`synchronize` or a successful `query`), before its
//!   completion is reported; for large copies chunk by chunk as each chunk's event completes,
//!   each chunk in pieces shared by several threads.
//!
//! Small copies of one construct are batched per stream and direction into one
//! `cuMemcpyBatchAsync` ([`Staging::flush`] runs before anything else is queued on the
//! stream). Copies over [`UNASKED`] are staged only when the host memory is pageable and once
//! the program has moved [`STAGE_AFTER`] bytes of such copies.
//!
//! Pinned memory is allocated on demand up to a limit (`OMPTARGET_RS_CUDA_STAGING_LIMIT`) and
//! kept for the process's life; past the limit a copy falls back to the driver's own path.
//!
//! A batch of several small copies goes to the device in one launch of a small copy kernel
//! instead (`copy_kernel.rs`; `OMPTARGET_RS_CUDA_COPY_KERNEL`, on by default).
//!
//! This file holds the copies and their chunking; `landing.rs` the copies home from the
//! device, `ahead.rs` the copies staged ahead of the caller's lock, `buffers.rs` the pinned
//! buffers (and the rule by which they grow), `batch.rs` the batches of small copies,
//! `copy_kernel.rs` the kernel that makes them, and `helpers.rs` the long-lived threads that
//! share the host copies of large ones.

mod ahead;
mod batch;
mod buffers;
mod bytes;
mod copy_kernel;
mod helpers;
mod landing;

use crate::driver::{CUcontext, CUdeviceptr, CUstream, call};
use batch::Batch;
use buffers::{Pool, Slot};
pub(crate) use bytes::STREAM_MIN;
use bytes::{copy_bytes, copy_streaming};
use cudarc::driver::sys;
use helpers::Helpers;
use landing::Landings;
use omptarget_plugin::addr_map::AddrMap;
use omptarget_plugin::contention::{Lock, Padded, Site};
use omptarget_plugin::{Error, Result};
use std::sync::Mutex;

/// The staging locks, counted when found held (`OMPTARGET_RS_PROFILE=1`).
static POOL: Site = Site::new("cuda: staging buffers");
static PENDING: Site = Site::new("cuda: staging records");
use std::sync::atomic::{AtomicUsize, Ordering};

/// Copies up to this size take one buffer and need no event.
pub const SMALL: usize = 1 << 20;
/// Larger copies go in chunks of this size (small enough that the pipeline fills and drains
/// quickly, large enough that the driver calls per chunk stay cheap).
pub const CHUNK: usize = 1 << 20;
/// Copies up to this size move in one piece: pipelining gains little there, and each driver
/// call costs more than its share when many threads submit at once (measured: 32 concurrent
/// `nowait` regions spent ~190 us per 1 MiB device-to-host call).
pub const WHOLE: usize = 4 << 20;
/// Copies up to this size are staged without asking the driver what the host memory is: the
/// extra host copy costs less than the question.
pub const UNASKED: usize = 64 << 10;
/// Large pageable copies are staged once this many bytes have gone that way.
pub const STAGE_AFTER: usize = 256 << 20;
/// Copies of at least this size are split between helper threads.
const PARALLEL_MIN: usize = 8 << 20;
/// A large host → device copy starts with these smaller chunks: no DMA can start before the
/// first chunk is filled (~110 us for 1 MiB at one thread's ~9 GB/s), and the helpers filling
/// the first few chunks side by side finish them in the order of their sizes, so the DMA has
/// work from the first ~15 us on.
const RAMP: [usize; 6] = [
    128 << 10,
    128 << 10,
    256 << 10,
    256 << 10,
    512 << 10,
    512 << 10,
];
const RAMP_BYTES: usize = {
    let (mut sum, mut i) = (0, 0);
    while i < RAMP.len() {
        sum += RAMP[i];
        i += 1;
    }
    sum
};

/// The number of chunks of a host → device copy of `size` bytes (above [`SMALL`]).
fn chunks_to_device(size: usize) -> usize {
    if size <= WHOLE {
        1
    } else {
        RAMP.len() + (size - RAMP_BYTES).div_ceil(CHUNK)
    }
}

/// Chunk `i` of a host → device copy of `size` bytes: (offset, length).
fn chunk_to_device(size: usize, i: usize) -> (usize, usize) {
    if size <= WHOLE {
        return (0, size);
    }
    let off = if i < RAMP.len() {
        RAMP[..i].iter().sum()
    } else {
        RAMP_BYTES + (i - RAMP.len()) * CHUNK
    };
    let len = if i < RAMP.len() { RAMP[i] } else { CHUNK };
    (off, len.min(size - off))
}

/// Copies up to this size are packed into their stream's arena ([`Staging::queue_packed`])
/// instead of taking a buffer each: a deep copy of 20,000 structs made 40,000 copies of 8 to 32
/// bytes in one construct, and a 4 KiB buffer each held 160 MiB of pinned memory (kept for the
/// process's life; 470 MB of resident memory at 20,000 structs against LLVM 19's 222 MB).
const PACKED: usize = 2048;
/// The size of an arena buffer, and the alignment of each copy in it (the copy kernel moves
/// 8-byte words where both ends allow).
const ARENA: usize = 64 << 10;
const PACK_ALIGN: usize = 64;

/// The buffer a stream's small copies are packed into, and how much of it they use.
struct Arena {
    slot: Slot,
    used: usize,
}

/// A stream's staged work until it completes. The entry stays in the map once made (streams
/// are pooled), so its vectors keep their capacity: queueing allocates nothing.
#[derive(Default)]
struct PerStream {
    landings: Landings,
    /// Buffers of small host → device copies, free once the stream completes.
    release: Vec<Slot>,
    /// The buffer small copies are packed into now (free, with `release`, at completion).
    arena: Option<Arena>,
    /// Small copies not queued yet, all in one direction: they go to the driver in one call
    /// before anything else is queued on the stream ([`Staging::flush`]).
    batch: Batch,
    /// A copy was queued straight from or to the program's host memory (not staged): the
    /// DMA reads or writes it until the stream completes ([`Staging::touches_host`]).
    direct: bool,
}

pub struct Staging {
    /// How waits for chunk events are made (the device's, wait.rs).
    waiter: std::sync::Arc<crate::wait::Waiter>,
    /// Copies up to this size are packed into their stream's arena ([`PACKED`], or 0:
    /// `OMPTARGET_RS_CUDA_PACK_COPIES` is off).
    packed_max: usize,
    /// The device's context (the copy kernel is loaded into it), as an address: a handle the
    /// driver accepts from any thread.
    ctx: usize,
    /// The device's ordinal (location hints of batched copies).
    device: i32,
    limit: usize,
    /// Threads (the caller included) for large copies ...
    helpers: usize,
    /// ... the others long-lived, started on the first large copy (helpers.rs).
    workers: Helpers,
    /// Small copies are batched (`OMPTARGET_RS_CUDA_BATCH_COPIES`, on by default) ...
    batching: bool,
    /// ... through `cuMemcpyBatchAsync`, until the driver refuses it once ...
    batch_api: std::sync::atomic::AtomicBool,
    /// ... or, for several small copies, one launch of the copy kernel.
    copy_kernel: copy_kernel::CopyKernel,
    /// Bytes of large copies to or from pageable memory so far (see [`Staging::worth_it`]).
    pageable_bytes: AtomicUsize,
    /// Copies of at least this many bytes store past the caches
    /// (`OMPTARGET_RS_CUDA_STREAMING_STORES`, on by default, from
    /// `OMPTARGET_RS_CUDA_STREAMING_MIN`, [`STREAM_MIN`] by default); `usize::MAX`: none.
    streaming: usize,
    /// Apart from the settings every copy reads.
    pool: Padded<Lock<Pool>>,
    /// Each stream's staged work, in the shard of its stream.
    shards: Box<[Shard]>,
}

/// Shards of the per-stream records (a power of two). A stream's records always live in the
/// same shard, so everything done to one stream is still ordered by one lock (batches reach
/// the stream in the order they were closed), while host threads working on different streams
/// rarely meet. With one lock for every stream, each thread's batch was issued (a driver call)
/// under the lock all other threads' small copies needed, and a construct waiting for it held
/// the device's mapping table meanwhile.
const SHARDS: usize = 64;

/// One shard, on cache lines of its own.
#[repr(align(128))]
struct Shard {
    /// How many of this shard's streams have copies waiting in their batch (0: `flush`
    /// need not lock).
    batched: AtomicUsize,
    streams: Lock<AddrMap<usize, PerStream>>,
}

/// The shard of `stream` (a multiplicative hash of the handle: streams are driver pointers).
fn shard_of(stream: usize) -> usize {
    ((stream as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SHARDS.trailing_zeros())) as usize
}

/// A copy that found no staging buffer (the limit) and takes the driver's path: counted
/// under `OMPTARGET_RS_PROFILE=1`.
fn no_buffer(f: impl FnOnce() -> Result<()>) -> Result<()> {
    crate::driver::profile::timed("(copies without a staging buffer)", f)
}

/// How a device stages its copies.
pub struct Options {
    /// Pinned bytes at most.
    pub limit: usize,
    /// Threads (the caller included) for large copies.
    pub helpers: usize,
    /// Small copies are batched.
    pub batching: bool,
    /// Batches of small copies may go to the copy kernel (with `batching`).
    pub copy_kernel: bool,
    /// Small copies are packed into an arena per stream.
    pub pack: bool,
    /// Copies from this many bytes up store past the caches (`bytes::copy_streaming`); `None`:
    /// none.
    pub streaming: Option<usize>,
}

impl Staging {
    pub fn new(
        ctx: CUcontext,
        device: i32,
        o: Options,
        waiter: std::sync::Arc<crate::wait::Waiter>,
    ) -> Self {
        let Options {
            limit,
            helpers,
            batching,
            copy_kernel,
            pack,
            streaming,
        } = o;
        Self {
            waiter,
            packed_max: if pack { PACKED } else { 0 },
            ctx: ctx as usize,
            device,
            limit,
            helpers: helpers.max(1),
            workers: Helpers::new(ctx, helpers.max(1) - 1),
            batching,
            batch_api: std::sync::atomic::AtomicBool::new(true),
            copy_kernel: copy_kernel::CopyKernel::new(batching && copy_kernel),
            pageable_bytes: AtomicUsize::new(0),
            streaming: streaming.unwrap_or(usize::MAX),
            pool: Padded(Lock::with_default(&POOL)),
            shards: (0..SHARDS)
                .map(|_| Shard {
                    batched: AtomicUsize::new(0),
                    streams: Lock::with_default(&PENDING),
                })
                .collect(),
        }
    }

    /// A staging without a context or pinned memory, for tests that drive its bookkeeping
    /// (no CUDA call: the copy kernel is off, nothing is pinned).
    #[cfg(test)]
    pub(super) fn for_tests(helpers: usize) -> Self {
        Self::new(
            std::ptr::null_mut(),
            0,
            Options {
                limit: 0,
                helpers,
                batching: true,
                copy_kernel: false,
                pack: true,
                streaming: Some(STREAM_MIN),
            },
            std::sync::Arc::new(crate::wait::Waiter::new(None)),
        )
    }

    /// The shard holding `stream`'s records.
    fn shard(&self, stream: usize) -> &Shard {
        &self.shards[shard_of(stream)]
    }

    /// Copies `len` bytes of a copy of `whole` bytes between the program's memory and a
    /// staging buffer: past the caches when the whole copy is large (`streaming`).
    fn host_copy(&self, dst: usize, src: usize, len: usize, whole: usize) {
        if whole >= self.streaming {
            copy_streaming(dst, src, len);
        } else {
            copy_bytes(dst, src, len);
        }
    }

    pub fn enabled(&self) -> bool {
        self.limit > 0
    }

    /// Records that a copy on `stream` reads or writes the program's host memory directly
    /// (not through a staging buffer), until the stream completes.
    pub fn note_direct(&self, stream: usize) {
        self.shard(stream)
            .streams
            .lock()
            .entry(stream)
            .or_default()
            .direct = true;
    }

    /// Whether work queued on `stream` may still read or write the program's host memory: a
    /// direct copy ([`Staging::note_direct`]) or a staged copy from the device that lands at
    /// completion.
    pub fn touches_host(&self, stream: usize) -> bool {
        self.shard(stream)
            .streams
            .lock()
            .get(&stream)
            .is_some_and(|ps| ps.direct || !ps.landings.is_empty())
    }

    /// Whether a large copy of `size` bytes to or from pageable memory should be staged.
    /// Pinning the buffers costs more than one copy gains (~1.3 ms per MiB of fresh memory on
    /// the H200 machines, against ~0.09 ms per MiB for the driver's pageable path), so a
    /// program stages only once it has moved [`STAGE_AFTER`] bytes that way: programs that
    /// move data once keep the driver's path, programs that move it again and again pay
    /// the buffers once.
    pub fn worth_it(&self, size: usize) -> bool {
        let before = self.pageable_bytes.fetch_add(size, Ordering::Relaxed);
        before.saturating_add(size) > STAGE_AFTER
    }

    /// [`Staging::worth_it`] without counting the copy (asked ahead of it).
    fn would_stage(&self, size: usize) -> bool {
        self.pageable_bytes
            .load(Ordering::Relaxed)
            .saturating_add(size)
            > STAGE_AFTER
    }

    /// Runs `f(i)` for `i` in `0..n`, on up to `self.helpers` threads when `bytes` is large.
    fn parallel(
        &self,
        n: usize,
        bytes: usize,
        f: impl Fn(usize) -> Result<()> + Sync,
    ) -> Result<()> {
        let threads = if bytes >= PARALLEL_MIN {
            self.helpers.min(n)
        } else {
            1
        };
        let next = AtomicUsize::new(0);
        let failed: Mutex<Option<Error>> = Mutex::new(None);
        let work = || {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                if let Err(e) = f(i) {
                    failed
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(e);
                }
            }
        };
        // Helper threads that cannot be had leave their share to the others and the caller.
        let helped = self.workers.scope(threads.saturating_sub(1), &work, work);
        let failed = failed.into_inner().unwrap_or_else(|e| e.into_inner());
        helped?;
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// A small copy (at most [`PACKED`] bytes) between `device` and the program's `host`
    /// memory through `stream`'s arena, in one visit to the stream's shard: room in the arena
    /// (a new arena, taken from the pool without the shard's lock, when it has none left),
    /// the program's bytes copied in (to the device), the copy batched, its landing recorded
    /// (to the host). The arena stays the stream's until the stream completes. `false`
    /// (nothing done) when no pinned memory can be had. A region of 16 small arrays visited
    /// the shard twice per copy.
    fn queue_packed(
        &self,
        stream: usize,
        to_device: bool,
        device: usize,
        host: usize,
        size: usize,
    ) -> Result<bool> {
        let need = size.next_multiple_of(PACK_ALIGN);
        // Loaded (once) before the lock, as in `queue_small`.
        self.copy_kernel.prepare(self.ctx as CUcontext);
        let shard = self.shard(stream);
        let mut fresh: Option<Slot> = None;
        loop {
            let mut pending = shard.streams.lock();
            let ps = pending.entry(stream).or_default();
            if ps.arena.as_ref().is_none_or(|a| a.used + need > ARENA) {
                let Some(slot) = fresh.take() else {
                    drop(pending);
                    // A new arena, taken without the shard's lock (the pool has its own).
                    match self.take(ARENA, size, false)? {
                        Some(slot) => fresh = Some(slot),
                        None => return Ok(false),
                    }
                    continue;
                };
                if let Some(full) = ps.arena.replace(Arena { slot, used: 0 }) {
                    ps.release.push(full.slot);
                }
            }
            let a = ps.arena.as_mut().expect("an arena with room");
            let buf = a.slot.buf + a.used;
            a.used += need;
            let queued = if to_device {
                // 2 KiB at most, under the shard's lock (one stream's in 64).
                copy_bytes(buf, host, size);
                self.batch_small(shard, ps, stream, true, device, buf, size)
            } else {
                ps.landings.push([(host, size, Slot::packed(buf))], false);
                self.batch_small(shard, ps, stream, false, buf, device, size)
            };
            drop(pending);
            // Another thread of the stream installed an arena meanwhile: ours goes back
            // (after the shard's lock: the pool's is never taken under it).
            if let Some(slot) = fresh {
                self.give_back([slot]);
            }
            return queued.map(|()| true);
        }
    }

    /// Queues a copy of `size` bytes from pageable `src` to `dst` on the device.
    pub fn to_device(&self, dst: usize, src: usize, size: usize, s: CUstream) -> Result<()> {
        // The handle as an address, so the helpers' closure may be shared between threads.
        let stream = s as usize;
        let s = || stream as CUstream;
        let dma = |d: usize, from: usize, len: usize| {
            // SAFETY: `from` is a pinned buffer (or the program's memory, on the fallback
            // path) of `len` bytes; `d` a range of a live device allocation.
            call("cuMemcpyHtoDAsync", || unsafe {
                sys::cuMemcpyHtoDAsync_v2(d as CUdeviceptr, from as *const _, len, s())
            })
        };
        if (1..=self.packed_max).contains(&size)
            && self.queue_packed(stream, true, dst, src, size)?
        {
            return Ok(());
        }
        if size <= SMALL
            && let Some(slot) = self.take(size, size, false)?
        {
            copy_bytes(slot.buf, src, size);
            return self.queue_small(stream, true, dst, slot.buf, size, |ps| {
                ps.release.push(slot)
            });
        }
        self.flush(stream)?;
        if size <= SMALL {
            self.note_direct(stream);
            return no_buffer(|| dma(dst, src, size));
        }
        let n = chunks_to_device(size);
        let chunk = |i: usize| chunk_to_device(size, i);
        // Queues chunk `i` from `slot` (or straight from the program's memory without one).
        let issue = |i: usize, slot: Option<Slot>| -> Result<()> {
            let (off, len) = chunk(i);
            let Some(slot) = slot else {
                self.note_direct(stream);
                return no_buffer(|| dma(dst + off, src + off, len));
            };
            let r = dma(dst + off, slot.buf, len).and_then(|_| {
                // SAFETY: records a live event on a live stream.
                call("cuEventRecord", || unsafe {
                    sys::cuEventRecord(slot.event as sys::CUevent, s())
                })
            });
            if r.is_err() {
                // Maybe queued, maybe not: the buffer is free again only after the stream.
                self.shard(stream)
                    .streams
                    .lock()
                    .entry(stream)
                    .or_default()
                    .release
                    .push(slot);
            } else {
                self.pool.lock().in_flight.push(slot);
            }
            r
        };
        // Filled already, outside the caller's lock: only the DMA is left.
        if let Some(slot) = self.prestaged(src, size) {
            debug_assert_eq!(n, 1, "only single-buffer copies are staged ahead");
            return issue(0, Some(slot));
        }
        let fill = |i: usize| -> Result<Option<Slot>> {
            let (off, len) = chunk(i);
            let slot = self.take(len, size, true)?;
            if let Some(slot) = &slot {
                self.host_copy(slot.buf, src + off, len, size);
            }
            Ok(slot)
        };
        if size < PARALLEL_MIN || self.helpers <= 1 {
            for i in 0..n {
                issue(i, fill(i)?)?;
            }
            return Ok(());
        }
        // Helper threads fill the buffers; this thread queues each chunk, in order, as soon
        // as it is filled (one thread talking to the stream: the driver serialises per-stream
        // submissions, and concurrent ones were measured 100x slower per call). Buffers
        // filled but never queued (after a failure) go back free.
        self.workers
            .pipeline(self.helpers - 1, n, fill, issue, |slot| {
                if let Some(slot) = slot {
                    self.give_back([slot]);
                }
            })
    }

    /// Queues a copy of `size` bytes from the device to pageable `dst`; the bytes land when
    /// the stream is found complete ([`Staging::finish`]).
    pub fn to_host(&self, dst: usize, src: usize, size: usize, s: CUstream) -> Result<()> {
        let dma = |to: usize, from: usize, len: usize| {
            // SAFETY: `to` is a pinned buffer of at least `len` bytes (or the program's
            // memory, on the fallback path); `from` a range of a live device allocation.
            call("cuMemcpyDtoHAsync", || unsafe {
                sys::cuMemcpyDtoHAsync_v2(to as *mut _, from as CUdeviceptr, len, s)
            })
        };
        if (1..=self.packed_max).contains(&size)
            && self.queue_packed(s as usize, false, src, dst, size)?
        {
            return Ok(());
        }
        if size <= SMALL
            && let Some(slot) = self.take(size, size, false)?
        {
            let buf = slot.buf;
            return self.queue_small(s as usize, false, buf, src, size, |ps| {
                ps.landings.push([(dst, size, slot)], false)
            });
        }
        self.flush(s as usize)?;
        let evented = size > SMALL;
        let piece = if size <= WHOLE { size } else { CHUNK };
        let mut chunks = Vec::with_capacity(size.div_ceil(piece));
        let mut result = Ok(());
        let mut off = 0;
        while off < size {
            let len = piece.min(size - off);
            match self.take(len, size, evented) {
                Ok(Some(slot)) => {
                    result = dma(slot.buf, src + off, len);
                    if evented && result.is_ok() {
                        // SAFETY: records a live event on a live stream.
                        result = call("cuEventRecord", || unsafe {
                            sys::cuEventRecord(slot.event as sys::CUevent, s)
                        });
                    }
                    chunks.push((dst + off, len, slot));
                }
                // Past the limit: the driver's own (blocking) path, still stream-ordered.
                Ok(None) => {
                    self.note_direct(s as usize);
                    result = no_buffer(|| dma(dst + off, src + off, len))
                }
                Err(e) => result = Err(e),
            }
            if result.is_err() {
                break;
            }
            off += len;
        }
        if !chunks.is_empty() {
            self.shard(s as usize)
                .streams
                .lock()
                .entry(s as usize)
                .or_default()
                .landings
                .push(chunks, evented);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_to_the_device_cover_the_copy_once_in_order() {
        const { assert!(RAMP_BYTES == 1792 << 10 && RAMP_BYTES < WHOLE) };
        for size in [
            SMALL + 1,
            WHOLE,
            WHOLE + 1,
            64 << 20,
            (64 << 20) + 4097,
            1 << 30,
        ] {
            let n = chunks_to_device(size);
            let mut end = 0;
            for i in 0..n {
                let (off, len) = chunk_to_device(size, i);
                assert_eq!(off, end, "size {size} chunk {i}");
                assert!(len > 0 && len <= WHOLE, "size {size} chunk {i}: {len}");
                end += len;
            }
            assert_eq!(end, size);
        }
        assert_eq!(chunk_to_device(64 << 20, 0), (0, 128 << 10));
        assert_eq!(chunks_to_device(64 << 20), 6 + 63);
        assert_eq!(chunks_to_device(WHOLE), 1);
    }

    /// Streams are driver pointers, a few dozen bytes to kilobytes apart: 128 of them (the
    /// queues of 128 threads) must not pile into a few shards, and a stream keeps its shard.
    #[test]
    fn streams_spread_over_the_shards() {
        for stride in [0x40usize, 0x100, 0x1000, 0x10_0000] {
            let streams: Vec<usize> = (0..128).map(|k| 0x5555_5000_0000 + k * stride).collect();
            let mut per = [0usize; SHARDS];
            for &s in &streams {
                per[shard_of(s)] += 1;
                assert_eq!(shard_of(s), shard_of(s));
            }
            let used = per.iter().filter(|&&n| n > 0).count();
            let most = per.iter().max().copied().unwrap_or(0);
            assert!(used >= SHARDS / 2, "stride {stride:#x}: {used} shards used");
            assert!(most <= 8, "stride {stride:#x}: {most} streams in one shard");
        }
    }

    #[test]
    fn parallel_runs_every_index_once_and_reports_an_error() {
        let s = Staging::for_tests(4);
        let seen: Vec<AtomicUsize> = (0..37).map(|_| AtomicUsize::new(0)).collect();
        // Below PARALLEL_MIN: on the caller's thread only.
        s.parallel(37, 1, |i| {
            seen[i].fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
        assert!(seen.iter().all(|c| c.load(Ordering::Relaxed) == 1));
        let e = s.parallel(5, 0, |i| {
            if i == 3 {
                Err(Error::new(omptarget_plugin::ErrorKind::Backend, "x"))
            } else {
                Ok(())
            }
        });
        assert!(e.is_err());
        // Large: on the long-lived helpers and the caller, started once for every copy.
        for round in 0..3 {
            let seen: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
            let e = s.parallel(64, PARALLEL_MIN, |i| {
                std::thread::sleep(std::time::Duration::from_micros(50));
                seen[i].fetch_add(1, Ordering::Relaxed);
                if i == 5 {
                    Err(Error::new(omptarget_plugin::ErrorKind::Backend, "x"))
                } else {
                    Ok(())
                }
            });
            assert!(e.is_err(), "round {round}");
            assert!(seen.iter().all(|c| c.load(Ordering::Relaxed) == 1));
        }
        assert_eq!(s.workers.threads(), 3);
    }
}
