//! The device memory routines of OpenMP 5.2 §18.8 (`omp_target_alloc` and friends).

use crate::error::{Error, Result};
use crate::ops::AsyncInfo;
use crate::runtime::Runtime;
use omptarget_plugin::{AllocKind, CopyKind};

impl Runtime {
    /// `omp_target_alloc` and `llvm_omp_target_alloc_*`. `Ok(0)` for a non-positive size.
    pub fn target_alloc(&self, size: i64, device: i64, kind: AllocKind) -> Result<usize> {
        if size <= 0 {
            return Ok(0);
        }
        if device == self.initial_device() {
            // SAFETY: plain malloc; the caller frees with omp_target_free on the host device.
            return Ok(unsafe { libc_malloc(size as usize) } as usize);
        }
        let dev = self.device_unloaded(device)?;
        dev.alloc(size as usize, kind, None)
    }

    /// `omp_target_free` and `llvm_omp_target_free_*`.
    pub fn target_free(&self, ptr: usize, device: i64, kind: AllocKind) -> Result<()> {
        if ptr == 0 {
            return Ok(());
        }
        if device == self.initial_device() {
            // SAFETY: host-device memory came from malloc in target_alloc.
            unsafe { libc_free(ptr as *mut u8) };
            return Ok(());
        }
        let dev = self.device_unloaded(device)?;
        dev.free(ptr, kind, None)
    }

    /// `omp_target_is_present`.
    pub fn target_is_present(&self, ptr: usize, device: i64) -> bool {
        if device == self.initial_device() {
            return true;
        }
        match self.device_unloaded(device) {
            Ok(dev) => self.is_present(&dev, ptr),
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
                let dev = self.device_unloaded(dst_device)?;
                let mut ai = AsyncInfo::new(&dev);
                let q = ai.queue()?;
                dev.copy(CopyKind::HostToDevice, dst, src, length, Some(q))?;
                ai.synchronize()
            }
            (true, false) => {
                let dev = self.device_unloaded(src_device)?;
                let mut ai = AsyncInfo::new(&dev);
                let q = ai.queue()?;
                dev.copy(CopyKind::DeviceToHost, dst, src, length, Some(q))?;
                ai.synchronize()
            }
            (false, false) => {
                let sdev = self.device_unloaded(src_device)?;
                let ddev = self.device_unloaded(dst_device)?;
                if src_device == dst_device {
                    let mut ai = AsyncInfo::new(&sdev);
                    let q = ai.queue()?;
                    sdev.copy(CopyKind::DeviceToDevice, dst, src, length, Some(q))?;
                    return ai.synchronize();
                }
                // Between devices: stage through host memory.
                let mut staging = vec![0u8; length];
                let stage = staging.as_mut_ptr() as usize;
                let mut ai = AsyncInfo::new(&sdev);
                let q = ai.queue()?;
                sdev.copy(CopyKind::DeviceToHost, stage, src, length, Some(q))?;
                ai.synchronize()?;
                let mut ai = AsyncInfo::new(&ddev);
                let q = ai.queue()?;
                ddev.copy(CopyKind::HostToDevice, dst, stage, length, Some(q))?;
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
