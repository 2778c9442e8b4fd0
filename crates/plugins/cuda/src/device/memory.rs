//! Device memory: allocation and release on the device's memory pool (stream-ordered, with
//! the small-block cache of blocks.rs in front and the sharing policy of pool.rs), plain
//! `cuMemAlloc` without a pool, pinned host and managed memory, and the out-of-memory report.

use super::CudaDevice;
use crate::driver::{CUdeviceptr, CUstream, call};
use crate::pool;
use cudarc::driver::sys;
use omptarget_plugin::pool_policy;
use omptarget_plugin::{AllocKind, DevicePtr, Error, ErrorKind, QueueId, Result};

impl CudaDevice {
    pub(super) fn mem_alloc(
        &self,
        size: usize,
        kind: AllocKind,
        queue: Option<QueueId>,
    ) -> Result<DevicePtr> {
        let size = size.max(1);
        match kind {
            // Makes the context current where it calls the driver (a block from the cache
            // needs no driver call).
            AllocKind::Device => self.alloc_device(size, queue),
            AllocKind::Host => {
                self.current()?;
                let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
                // SAFETY: pinned host allocation.
                call("cuMemAllocHost", || unsafe {
                    sys::cuMemAllocHost_v2(&mut p, size)
                })
                .map_err(|e| self.oom(size, e, None))?;
                Ok(p as usize)
            }
            AllocKind::Shared => {
                self.current()?;
                let mut p: CUdeviceptr = 0;
                // SAFETY: managed allocation visible to host and device.
                call("cuMemAllocManaged", || unsafe {
                    sys::cuMemAllocManaged(
                        &mut p,
                        size,
                        sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL as u32,
                    )
                })
                .map_err(|e| self.oom(size, e, None))?;
                Ok(p as usize)
            }
        }
    }

    pub(super) fn alloc_device(&self, size: usize, queue: Option<QueueId>) -> Result<DevicePtr> {
        if let Some(r) = self.record.get() {
            return r.alloc(size).ok_or_else(|| {
                Error::new(
                    ErrorKind::OutOfMemory,
                    format!(
                        "{size} bytes do not fit in the record/replay region ({} bytes) of CUDA device {}",
                        r.size(),
                        self.index
                    ),
                )
            });
        }
        let Some(pool) = &self.pool else {
            self.current()?;
            let mut ptr: CUdeviceptr = 0;
            // SAFETY: writes the allocation's address.
            call("cuMemAlloc", || unsafe {
                sys::cuMemAlloc_v2(&mut ptr, size)
            })
            .map_err(|e| self.oom(size, e, None))?;
            return Ok(ptr as usize);
        };
        pool.note_activity();
        // Small blocks come from the cache when one is free (blocks.rs).
        let (size, class) = match self.blocks.class_of(size) {
            Some((class, rounded)) => {
                if let Some(p) = self.blocks.take(class) {
                    return Ok(p);
                }
                (rounded, Some(class))
            }
            None => (size, None),
        };
        self.current()?;
        let attempt = |size: usize| -> Result<usize> {
            let mut ptr: CUdeviceptr = 0;
            let mut alloc = |s: CUstream| {
                // SAFETY: stream-ordered allocation on a live stream.
                call("cuMemAllocAsync", || unsafe {
                    sys::cuMemAllocAsync(&mut ptr, size, s)
                })
            };
            match queue {
                Some(q) => alloc(self.submit(q)?)?,
                None => self.on_internal_stream(alloc)?,
            }
            Ok(ptr as usize)
        };
        // One attempt; when the device is full, our own cache goes back and we wait for other
        // processes' memory; a request larger than the device fails without a driver call
        // (pool_policy.rs, pool.rs).
        let ops = pool::AllocOps {
            pool,
            attempt,
            give_back: |keep| self.give_back(keep),
        };
        let ptr = match pool_policy::alloc_with_patience(
            &ops,
            size as u64,
            &pool.policy,
            std::thread::sleep,
        )? {
            Ok(p) => p,
            Err(shortage) => {
                return Err(self.oom(
                    size,
                    Error::new(ErrorKind::OutOfMemory, "out of memory"),
                    Some(shortage),
                ));
            }
        };
        if let Some(class) = class {
            self.blocks.adopt(ptr, class);
        }
        Ok(ptr)
    }

    pub(super) fn mem_free(
        &self,
        ptr: DevicePtr,
        kind: AllocKind,
        queue: Option<QueueId>,
    ) -> Result<()> {
        if kind == AllocKind::Device
            && let Some(pool) = &self.pool
        {
            pool.note_activity();
        }
        // No driver call for a block of the record region or one the cache takes back.
        if kind == AllocKind::Device
            && (self.record.get().is_some_and(|r| r.contains(ptr))
                || self.blocks.give_back(ptr, queue.map(|q| q.0)))
        {
            return Ok(());
        }
        self.current()?;
        match kind {
            AllocKind::Device if self.pool.is_some() => match queue {
                Some(q) => {
                    let s = self.submit(q)?;
                    // SAFETY: frees pool memory after the work already on the stream.
                    call("cuMemFreeAsync", || unsafe {
                        sys::cuMemFreeAsync(ptr as CUdeviceptr, s)
                    })
                }
                None => self.on_internal_stream(|s| {
                    call("cuMemFreeAsync", || unsafe {
                        sys::cuMemFreeAsync(ptr as CUdeviceptr, s)
                    })
                }),
            },
            // SAFETY: frees memory from cuMemAlloc / cuMemAllocManaged, once.
            AllocKind::Device | AllocKind::Shared => call("cuMemFree", || unsafe {
                sys::cuMemFree_v2(ptr as CUdeviceptr)
            }),
            // SAFETY: frees memory from cuMemAllocHost, once.
            AllocKind::Host => call("cuMemFreeHost", || unsafe {
                sys::cuMemFreeHost(ptr as *mut std::ffi::c_void)
            }),
        }
    }

    /// Gives what the pool caches back to the device: the small blocks, then the pool's
    /// unused memory down to `keep` bytes.
    pub(super) fn give_back(&self, keep: u64) {
        if let Some(pool) = &self.pool {
            let _ = self.on_internal_stream(|s| {
                pool.give_back_on(s, keep);
                Ok(())
            });
        }
    }

    pub(super) fn oom(
        &self,
        size: usize,
        e: Error,
        shortage: Option<pool_policy::Shortage>,
    ) -> Error {
        if e.kind != ErrorKind::OutOfMemory {
            return e;
        }
        let mut text = format!(
            "out of memory allocating {size} bytes on CUDA device {} ({}, {} MiB total)",
            self.index,
            self.name,
            self.total_memory >> 20
        );
        if let Some(s) = shortage {
            text.push_str(&format!(
                ": {}; waited {} ms for memory to be released",
                pool_policy::describe_shortage(self.total_memory as u64, s.reading, size as u64),
                s.waited.as_millis()
            ));
        }
        Error::new(ErrorKind::OutOfMemory, text)
    }
}
