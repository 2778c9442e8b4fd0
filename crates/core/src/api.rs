//! The device memory routines of OpenMP 5.2 §18.8 (`omp_target_alloc` and friends).

use crate::error::{Error, Result};
use crate::runtime::Runtime;
use crate::tools::DataOpKind;
use crate::trace;
use omptarget_plugin::{AllocKind, CopyKind};

impl Runtime {
    /// `omp_target_alloc` and `llvm_omp_target_alloc_*`. `Ok(0)` for size 0; a device that
    /// refuses the size says so (`"PluginInterface" error: Failure to allocate device memory:
    /// ...`, as LLVM 19 does; the initial device, as LLVM's, silently returns null).
    pub fn target_alloc(&self, size: usize, device: i64, kind: AllocKind) -> Result<usize> {
        if size == 0 {
            return Ok(0);
        }
        if device == self.initial_device() {
            // SAFETY: plain malloc; the caller frees with omp_target_free on the host device.
            let p = unsafe { libc_malloc(size) } as usize;
            if p != 0 {
                crate::device::lock(&self.host_blocks).insert(p);
            }
            return Ok(p);
        }
        let dev = self.device_for_api(device)?;
        let mut ptr = 0;
        self.api_op(&dev, DataOpKind::Alloc, (0, 0, size), &mut ptr, || {
            dev.alloc(size, kind, None)
        })?;
        crate::device::lock(&dev.api_blocks).insert(ptr);
        Ok(ptr)
    }

    /// `omp_target_free` and `llvm_omp_target_free_*`. Only a block `omp_target_alloc` gave
    /// out and that is not freed yet is freed: anything else (a second free) is refused with
    /// an error, where LLVM 19 frees it again (glibc aborts, or its memory manager hands the
    /// block out twice).
    pub fn target_free(&self, ptr: usize, device: i64, kind: AllocKind) -> Result<()> {
        if ptr == 0 {
            return Ok(());
        }
        let not_ours = |device: i64| {
            let on = if device == self.initial_device() {
                format!("the initial device ({device})")
            } else {
                format!("device {device}")
            };
            Error::InvalidArgument(format!(
                "omp_target_free: {} is not a block omp_target_alloc gave out on {on}, or it was freed already: not freed",
                crate::message::Addr(ptr)
            ))
        };
        if device == self.initial_device() {
            if !crate::device::lock(&self.host_blocks).remove(&ptr) {
                return Err(not_ours(device));
            }
            // SAFETY: host-device memory came from malloc in target_alloc, freed once.
            unsafe { libc_free(ptr as *mut u8) };
            return Ok(());
        }
        let dev = self.device_by_address(device)?;
        if !crate::device::lock(&dev.api_blocks).remove(&ptr) {
            return Err(not_ours(device));
        }
        self.api_op(&dev, DataOpKind::Delete, (ptr, 0, 0), &mut 0, || {
            dev.free(ptr, kind, None).map(|_| 0)
        })
    }

    /// `omp_target_is_present`.
    pub fn target_is_present(&self, ptr: usize, device: i64) -> bool {
        if device == self.initial_device() {
            return true;
        }
        match self.device_for_api(device) {
            Ok(dev) => self.is_present(&dev, ptr),
            Err(_) => false,
        }
    }

    /// `omp_target_is_accessible` (OpenMP 5.1): whether device `device` can access the host
    /// memory `[ptr, ptr + size)` directly. The host device always can; an invalid device
    /// number or a null pointer gives false.
    pub fn target_is_accessible(&self, ptr: usize, size: usize, device: i64) -> bool {
        if device == self.initial_device() {
            return true;
        }
        if ptr == 0 {
            return false;
        }
        match self.device_for_api(device) {
            Ok(dev) => dev
                .backend()
                .is_ok_and(|b| b.host_memory_accessible(ptr, size)),
            Err(_) => false,
        }
    }

    /// `omp_target_memcpy`: `length` bytes from `src + src_offset` on `src_device` to
    /// `dst + dst_offset` on `dst_device`.
    #[allow(clippy::too_many_arguments)]
    pub fn target_memcpy(
        &self,
        dst: usize,
        src: usize,
        length: usize,
        dst_offset: usize,
        src_offset: usize,
        dst_device: i64,
        src_device: i64,
    ) -> Result<()> {
        if dst == 0 {
            return Err(Error::NullPointer("the destination"));
        }
        if src == 0 {
            return Err(Error::NullPointer("the source"));
        }
        let host = self.initial_device();
        let (dst, src) = (dst.wrapping_add(dst_offset), src.wrapping_add(src_offset));
        if length == 0 {
            return Ok(());
        }
        match (dst_device == host, src_device == host) {
            (true, true) => {
                // SAFETY: the caller owns both host ranges (OpenMP's contract).
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, length) };
                Ok(())
            }
            (false, true) => {
                let dev = self.device_by_address(dst_device)?;
                let mut ai = self.async_info(&dev);
                dev.trace_transfer(self.info_level(), true, src, dst, length);
                ai.copy(&dev, CopyKind::HostToDevice, dst, src, length)?;
                ai.synchronize()
            }
            (true, false) => {
                let dev = self.device_by_address(src_device)?;
                let mut ai = self.async_info(&dev);
                dev.trace_transfer(self.info_level(), false, dst, src, length);
                ai.copy(&dev, CopyKind::DeviceToHost, dst, src, length)?;
                ai.synchronize()
            }
            (false, false) => {
                let sdev = self.device_by_address(src_device)?;
                let ddev = self.device_by_address(dst_device)?;
                // Within one device: a direct copy where the backend has a device-to-device
                // path; otherwise through host memory, as LLVM 19's host plugin does (and
                // traces).
                if src_device == dst_device && sdev.backend()?.peer_id().is_some() {
                    let mut ai = self.async_info(&sdev);
                    ai.copy(&sdev, CopyKind::DeviceToDevice, dst, src, length)?;
                    return ai.synchronize();
                }
                // Between devices of one backend with a direct path (CUDA peer copies).
                if src_device != dst_device
                    && sdev.plugin_name() == ddev.plugin_name()
                    && let Some(peer) = ddev.backend()?.peer_id()
                {
                    let mut ai = self.async_info(&sdev);
                    if ai.copy_to_peer(dst, ddev.id, peer, src, length)? {
                        return ai.synchronize();
                    }
                }
                // Otherwise: stage through host memory.
                let mut staging = vec![0u8; length];
                let stage = staging.as_mut_ptr() as usize;
                let mut ai = self.async_info(&sdev);
                sdev.trace_transfer(self.info_level(), false, stage, src, length);
                ai.copy(&sdev, CopyKind::DeviceToHost, stage, src, length)?;
                ai.synchronize()?;
                let mut ai = self.async_info(&ddev);
                ddev.trace_transfer(self.info_level(), true, stage, dst, length);
                ai.copy(&ddev, CopyKind::HostToDevice, dst, stage, length)?;
                ai.synchronize()
            }
        }
    }
}

unsafe extern "C" {
    #[link_name = "malloc"]
    fn libc_malloc(size: usize) -> *mut u8;
    #[link_name = "free"]
    fn libc_free(ptr: *mut u8);
}

impl Runtime {
    /// Whether `ptr` lies in a mapping of `dev` (`omp_target_is_present`: one byte at `ptr`).
    pub fn is_present(&self, dev: &crate::device::Device, ptr: usize) -> bool {
        self.mapped_ptr(dev, ptr).is_some()
    }

    /// `omp_get_mapped_ptr` on a device: the device address of `ptr`, if mapped.
    /// Both look one byte up as LLVM 19 does, which reports the lookup (`LIBOMPTARGET_INFO`
    /// 0x02, "update suppressed").
    pub fn mapped_ptr(&self, dev: &crate::device::Device, ptr: usize) -> Option<usize> {
        let table = dev.table.lock();
        let e = table.containing(ptr, 1).and_then(|id| table.get(id))?;
        trace::mapping_looked_up(self.info_level(), dev.id, e, ptr, 1);
        Some(e.tgt_ptr(ptr))
    }

    /// `omp_target_associate_ptr`: maps `[host, host + size)` to caller-owned device memory
    /// with an infinite reference count. Re-associating the same pair is a no-op.
    pub fn associate_ptr(&self, host: usize, tgt: usize, size: usize, device: i64) -> Result<()> {
        if host.checked_add(size).is_none() {
            return Err(Error::InvalidArgument(format!(
                "omp_target_associate_ptr: the host range at {} ({size} bytes) wraps around the address space",
                crate::message::Addr(host)
            )));
        }
        let dev = self.device_by_address(device)?;
        let what = (host, tgt, size);
        self.api_op(&dev, DataOpKind::Associate, what, &mut 0, || {
            self.associate(&dev, host, tgt, size).map(|_| 0)
        })
    }

    fn associate(
        &self,
        dev: &crate::device::Device,
        host: usize,
        tgt: usize,
        size: usize,
    ) -> Result<()> {
        let mut table = dev.table.lock();
        if let Some(e) = table.get(host) {
            if e.host_end == host + size && e.tgt_begin == tgt {
                return Ok(());
            }
            return Err(Error::InvalidArgument(
                "Not allowed to re-associate a different device ptr+offset with the same host ptr"
                    .into(),
            ));
        }
        let l = table.lookup(host, size);
        if l.entry.is_some() {
            return Err(Error::Extension { host, size });
        }
        table.insert(crate::mapping::Entry {
            host_base: host,
            host_begin: host,
            host_end: host + size,
            tgt_alloc: tgt,
            tgt_begin: tgt,
            dyn_refs: crate::mapping::RefCount::Infinite,
            hold_refs: 0,
            owns_allocation: false,
            name: None,
            shadows: Default::default(),
            pending: None,
            users: 0,
        });
        Ok(())
    }

    /// `omp_target_disassociate_ptr`.
    pub fn disassociate_ptr(&self, host: usize, device: i64) -> Result<()> {
        let dev = self.device_by_address(device)?;
        self.api_op(&dev, DataOpKind::Disassociate, (host, 0, 0), &mut 0, || {
            self.disassociate(&dev, host).map(|_| 0)
        })
    }

    fn disassociate(&self, dev: &crate::device::Device, host: usize) -> Result<()> {
        let mut table = dev.table.lock();
        let Some(e) = table.get(host) else {
            return Err(Error::InvalidArgument("Association not found".into()));
        };
        if e.hold_refs > 0 {
            return Err(Error::InvalidArgument(
                "Trying to disassociate a pointer with a non-zero hold reference count".into(),
            ));
        }
        if e.dyn_refs != crate::mapping::RefCount::Infinite || e.owns_allocation {
            return Err(Error::InvalidArgument(
                "Trying to disassociate a pointer which was not mapped via omp_target_associate_ptr"
                    .into(),
            ));
        }
        table.remove(host);
        Ok(())
    }

    /// `omp_target_memset` on a device (the host case is the caller's).
    pub fn target_memset(&self, ptr: usize, value: u8, size: usize, device: i64) -> Result<()> {
        let dev = self.device_by_address(device)?;
        let mut ai = self.async_info(&dev);
        let q = ai.queue()?;
        dev.backend()?
            .memset(ptr, value, size, Some(q))
            .map_err(|source| Error::Device {
                device: dev.id,
                what: "filling device memory",
                source,
            })?;
        ai.synchronize()
    }
}

impl Runtime {
    /// `llvm_omp_target_lock_mem`.
    pub fn lock_host_memory(&self, ptr: usize, size: usize, device: i64) -> Result<usize> {
        let dev = self.device_for_api(device)?;
        dev.backend()?
            .lock_host_memory(ptr, size)
            .map_err(|source| Error::Device {
                device: dev.id,
                what: "locking host memory",
                source,
            })
    }

    /// `llvm_omp_target_unlock_mem`.
    pub fn unlock_host_memory(&self, ptr: usize, device: i64) -> Result<()> {
        let dev = self.device_for_api(device)?;
        dev.backend()?
            .unlock_host_memory(ptr)
            .map_err(|source| Error::Device {
                device: dev.id,
                what: "unlocking host memory",
                source,
            })
    }
}
