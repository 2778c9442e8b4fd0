//! Kernel record and replay (LLVM's `LIBOMPTARGET_RECORD` and its replay tool): every device
//! allocation comes from one region, reserved at an address a replay in another process can
//! get back (the driver's virtual memory management), or else allocated as one block.

use super::CudaDevice;
use crate::driver::{CUdeviceptr, call};
use cudarc::driver::sys;
use omptarget_plugin::record::RecordRegion;
use omptarget_plugin::{Error, ErrorKind, Result};

impl CudaDevice {
    /// LLVM 19's way: virtual memory mapped at the recorded address (or anywhere, for a
    /// recording); failing that, one allocation of as much as the device gives (1 GiB less at
    /// a time), inside which the recorded address may still lie.
    pub(super) fn begin_record_region(
        &self,
        size: Option<usize>,
        at: Option<usize>,
    ) -> Result<(usize, usize)> {
        const GIB: usize = 1 << 30;
        self.current()?;
        if self.record.get().is_some() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "record/replay is active on CUDA device {} already",
                    self.index
                ),
            ));
        }
        // The pool's cached memory goes back first: its addresses may be where the recording
        // lay (every process's first large allocations come from the same place).
        self.give_back(0);
        let (mut free, mut total_mem) = (0usize, 0usize);
        // SAFETY: writes two sizes.
        call("cuMemGetInfo", || unsafe {
            sys::cuMemGetInfo_v2(&mut free, &mut total_mem)
        })?;
        let need = size.unwrap_or(0);
        let mut got = None;
        // A recording asks for `record_va` first, an address far from where the driver puts
        // its own reservations (0x48ea000000 for every process's first large one on an H200,
        // where a replaying process's memory pool may already be), so that a replay in
        // another process gets it back.
        // A replay maps at the recorded start only; a recording at `record_va`, else anywhere.
        let place = at.or((self.record_va != 0).then_some(self.record_va));
        let map = |n: usize| {
            self.map_at(n, place).or_else(|| {
                (at.is_none() && place.is_some())
                    .then(|| self.map_at(n, None))
                    .flatten()
            })
        };
        if let Some(n) = size {
            // A replay gets room for allocations of its own after the recorded memory.
            got = map(if at.is_some() { n + (32 << 20) } else { n });
        }
        if got.is_none() && at.is_none() {
            // A recording: as much as the device gives.
            let mut want = size.unwrap_or(free.saturating_sub(GIB));
            while got.is_none() && want >= GIB.min(need.max(1)) {
                got = map(want);
                want = want.saturating_sub(GIB);
                if want == 0 {
                    break;
                }
            }
        }
        let mut want = free.saturating_sub(GIB).max(need);
        while got.is_none() && want > 0 {
            let mut ptr: CUdeviceptr = 0;
            // SAFETY: writes the allocation's address.
            if call("cuMemAlloc", || unsafe {
                sys::cuMemAlloc_v2(&mut ptr, want)
            })
            .is_ok()
            {
                got = Some((ptr as usize, want));
            } else if want <= need {
                break;
            } else {
                want = want.saturating_sub(GIB).max(need);
            }
        }
        let Some((base, total)) = got else {
            return Err(Error::new(
                ErrorKind::OutOfMemory,
                format!(
                    "no device memory for record/replay on CUDA device {}",
                    self.index
                ),
            ));
        };
        let (start, offset) = omptarget_plugin::record::place(base, total, at, need);
        let _ = self
            .record
            .set(RecordRegion::new(start, total - (start - base)));
        Ok((start, offset))
    }

    /// Reserves `size` bytes (rounded up to the driver's granularity) of device memory at
    /// virtual address `at` (anywhere when `None`) with the driver's virtual memory
    /// management, as LLVM's `memoryVAMap`; `None` when the address is taken or the device
    /// has no memory for it.
    fn map_at(&self, size: usize, at: Option<usize>) -> Option<(usize, usize)> {
        let prop = sys::CUmemAllocationProp {
            type_: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            requestedHandleTypes: sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
            location: sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: self.dev,
            },
            win32HandleMetaData: std::ptr::null_mut(),
            allocFlags: sys::CUmemAllocationProp_st__bindgen_ty_1 {
                compressionType: 0,
                gpuDirectRDMACapable: 0,
                usage: 0,
                reserved: [0; 4],
            },
        };
        let mut gran = 0usize;
        // SAFETY: writes the granularity of allocations with `prop`.
        call("cuMemGetAllocationGranularity", || unsafe {
            sys::cuMemGetAllocationGranularity(
                &mut gran,
                &prop,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            )
        })
        .ok()?;
        let gran = gran.max(1);
        let base = at.map_or(0, |a| a - a % gran);
        let total = (size + at.map_or(0, |a| a - base))
            .max(1)
            .next_multiple_of(gran);
        // The driver honours a requested address only for large reservations: on an H200
        // (driver 580) a 2 MiB one at any address went to its small-allocation heap while
        // 64 GiB ones landed where asked (`omptarget-suite probe va`, 2026-12-01). So a placed
        // reservation grows until the address is granted; only `total` bytes get memory.
        let tries: &[usize] = if at.is_some() {
            &[0, 1 << 30, 8 << 30, 64 << 30]
        } else {
            &[0]
        };
        let mut ptr: CUdeviceptr = 0;
        let mut reserved = 0;
        for &t in tries {
            let r = t.max(total).next_multiple_of(gran);
            if r <= reserved {
                continue;
            }
            let mut p: CUdeviceptr = 0;
            // SAFETY: reserves address space (the address is a hint the driver may ignore).
            if call("cuMemAddressReserve", || unsafe {
                sys::cuMemAddressReserve(&mut p, r, 0, base as CUdeviceptr, 0)
            })
            .is_err()
            {
                continue;
            }
            if at.is_none() || p as usize == base {
                (ptr, reserved) = (p, r);
                break;
            }
            // SAFETY: frees the reservation just made (it is not where it was asked for).
            let _ = call("cuMemAddressFree", || unsafe {
                sys::cuMemAddressFree(p, r)
            });
            reserved = r;
        }
        if ptr == 0 {
            return None;
        }
        let unreserve = |p: CUdeviceptr| {
            // SAFETY: frees the reservation made above, once.
            let _ = call("cuMemAddressFree", || unsafe {
                sys::cuMemAddressFree(p, reserved)
            });
        };
        let mut handle: sys::CUmemGenericAllocationHandle = 0;
        // SAFETY: physical memory of `total` bytes on this device.
        if call("cuMemCreate", || unsafe {
            sys::cuMemCreate(&mut handle, total, &prop, 0)
        })
        .is_err()
        {
            unreserve(ptr);
            return None;
        }
        let access = sys::CUmemAccessDesc {
            location: prop.location,
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: maps the memory over the whole reservation and makes it readable and
        // writable by this device; the handle is released once mapped (the mapping keeps it).
        let mapped = call("cuMemMap", || unsafe {
            sys::cuMemMap(ptr, total, 0, handle, 0)
        })
        .and_then(|_| {
            call("cuMemSetAccess", || unsafe {
                sys::cuMemSetAccess(ptr, total, &access, 1)
            })
        });
        // SAFETY: the handle is ours; after a failed map nothing else holds it.
        let _ = call("cuMemRelease", || unsafe { sys::cuMemRelease(handle) });
        if mapped.is_err() {
            // SAFETY: undoes a mapping that may exist, then the reservation.
            let _ = call("cuMemUnmap", || unsafe { sys::cuMemUnmap(ptr, total) });
            unreserve(ptr);
            return None;
        }
        Some((ptr as usize, total))
    }
}
