//! `#pragma omp requires` (OpenMP 5.2 §8.2) as LLVM 19 handles it, and what
//! `unified_shared_memory` changes.
//!
//! clang 19 records a requirement only for `unified_shared_memory`: a host entry with flags
//! exactly 0x10 and `data` 0x8 in each translation unit that has the directive and offloads
//! something (`unified_address`, `dynamic_allocators` and `atomic_default_mem_order` produce
//! no record; `reverse_offload` is rejected by the compiler). LLVM 19 keeps the first flags it
//! is given and checks every later record against them (`'#pragma omp requires X' not used
//! consistently!`, fatal error 2); `__tgt_register_requires` (clang ≤ 18) only prints that it
//! was removed.
//!
//! Under `unified_shared_memory`, as in LLVM 19:
//! - a map of host data that is not mapped yet uses the host address on the device: nothing is
//!   allocated or copied, no mapping is made (`LIBOMPTARGET_INFO` 0x08 says `Return
//!   HstPtrBegin ... for unified shared memory`), and a `present` modifier finds nothing
//!   missing; `close` asks for a device copy, mapped by the ordinary rules; data already
//!   mapped stays mapped;
//! - at exit, and for `omp_target_is_present` / `omp_get_mapped_ptr`, such data is not
//!   present (it has no mapping); `target update` of it does nothing, and with `present` is
//!   an error;
//! - loading an image writes each global entry's host bytes over its device global (clang
//!   turns every `declare target` variable into a reference pointer that must hold the host
//!   variable's address). LLVM 19 does this for indirect functions' entries too, overwriting
//!   the device function's address with the host function's first code bytes, so a call
//!   through a function pointer crashes; we skip those entries (DIVERGENCES.md).
//!
//! Every device must be able to use host addresses as they are ([`Device::unified_shared_memory`]
//! of the backend): one that cannot makes registration fail (LLVM 19 says nothing and lets the
//! first kernel fault on its host pointers).
//!
//! [`Device::unified_shared_memory`]: omptarget_plugin::Device::unified_shared_memory

use crate::device::Device;
use crate::message::{device_info, fatal};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The requires flags (`OpenMPOffloadingRequiresDirFlags`).
pub mod flags {
    /// Nothing registered yet.
    pub const UNDEFINED: u64 = 0x0;
    /// A translation unit without requirements.
    pub const NONE: u64 = 0x1;
    pub const REVERSE_OFFLOAD: u64 = 0x2;
    pub const UNIFIED_ADDRESS: u64 = 0x4;
    pub const UNIFIED_SHARED_MEMORY: u64 = 0x8;
    pub const DYNAMIC_ALLOCATORS: u64 = 0x10;
}

/// The requirements in force: the first flags registered (LLVM's `RequirementCollection`).
#[derive(Debug, Default)]
pub struct Requirements {
    flags: AtomicU64,
}

impl Requirements {
    /// The flags in force ([`flags::UNDEFINED`] until a record is registered).
    pub fn get(&self) -> u64 {
        self.flags.load(Ordering::Acquire)
    }

    /// Whether `unified_shared_memory` is required (one atomic load, on the mapping path).
    pub fn unified_shared_memory(&self) -> bool {
        self.flags.load(Ordering::Relaxed) & flags::UNIFIED_SHARED_MEMORY != 0
    }

    /// Adds a requires record: the first one sets the flags, each later one must agree on
    /// every clause that changes the memory model, or it is `'#pragma omp requires X' not used
    /// consistently!` (LLVM 19's fatal error 2), checked in LLVM's clause order.
    pub fn add(&self, new: u64) {
        if let Err(clause) = self.try_add(new) {
            fatal(
                2,
                &format!("'#pragma omp requires {clause}' not used consistently!"),
            );
        }
    }

    /// [`Requirements::add`] without the fatal error: the clause used inconsistently.
    pub fn try_add(&self, new: u64) -> Result<(), &'static str> {
        if new == flags::UNDEFINED {
            return Ok(());
        }
        let set = match self.flags.compare_exchange(
            flags::UNDEFINED,
            new,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => return Ok(()),
            Err(set) => set,
        };
        for (bit, clause) in [
            (flags::REVERSE_OFFLOAD, "reverse_offload"),
            (flags::UNIFIED_ADDRESS, "unified_address"),
            (flags::UNIFIED_SHARED_MEMORY, "unified_shared_memory"),
            (flags::DYNAMIC_ALLOCATORS, "dynamic_allocators"),
        ] {
            if (set ^ new) & bit != 0 {
                return Err(clause);
            }
        }
        Ok(())
    }
}

impl Requirements {
    /// Under `unified_shared_memory`, every device must use host addresses as they are:
    /// the first of `devices` that cannot, with the backend's reason.
    pub fn unmet(&self, devices: &[Arc<Device>]) -> Option<(usize, String)> {
        if !self.unified_shared_memory() {
            return None;
        }
        devices.iter().find_map(|d| {
            // A device that failed to initialise reports that when it is used.
            let backend = d.backend().ok()?;
            backend.unified_shared_memory().err().map(|why| (d.id, why))
        })
    }

    /// Registration ends here when one of `devices` cannot meet `unified_shared_memory`:
    /// kernels would otherwise be handed host addresses they cannot use.
    pub(crate) fn enforce(&self, devices: &[Arc<Device>]) {
        if let Some((device, why)) = self.unmet(devices) {
            fatal(
                2,
                &format!(
                    "'#pragma omp requires unified_shared_memory' cannot be met by device {device}: {why}"
                ),
            );
        }
    }
}

/// LLVM 19's `LIBOMPTARGET_INFO` 0x08 line for data used in place under unified shared memory.
pub(crate) fn trace_host_pointer(info: u32, device: usize, begin: usize, size: usize) {
    if info & crate::config::info::MAPPING_CHANGED != 0 {
        device_info(
            device,
            format_args!(
                "Return HstPtrBegin {} Size={size} for unified shared memory",
                crate::message::Addr(begin)
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_record_sets_the_flags_and_later_ones_must_agree() {
        let r = Requirements::default();
        assert_eq!(r.get(), flags::UNDEFINED);
        assert!(!r.unified_shared_memory());
        r.try_add(flags::UNIFIED_SHARED_MEMORY).unwrap();
        assert!(r.unified_shared_memory());
        assert_eq!(r.try_add(flags::UNIFIED_SHARED_MEMORY), Ok(()));
        // A translation unit without the clause disagrees about it (LLVM's NONE record).
        assert_eq!(r.try_add(flags::NONE), Err("unified_shared_memory"));
        // LLVM's clause order decides which one is reported.
        assert_eq!(
            r.try_add(flags::UNIFIED_ADDRESS | flags::DYNAMIC_ALLOCATORS),
            Err("unified_address")
        );
        assert_eq!(
            r.try_add(flags::UNIFIED_SHARED_MEMORY | flags::DYNAMIC_ALLOCATORS),
            Err("dynamic_allocators")
        );
        assert_eq!(
            r.try_add(flags::UNIFIED_SHARED_MEMORY | flags::REVERSE_OFFLOAD),
            Err("reverse_offload")
        );
        // The flags stay the first ones.
        assert_eq!(r.get(), flags::UNIFIED_SHARED_MEMORY);
    }

    #[test]
    fn dynamic_allocators_and_unified_address_change_no_mapping() {
        let r = Requirements::default();
        r.try_add(flags::UNIFIED_ADDRESS | flags::DYNAMIC_ALLOCATORS)
            .unwrap();
        assert!(!r.unified_shared_memory());
    }
}
