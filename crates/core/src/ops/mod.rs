//! Target data, update and kernel operations: OpenMP's map rules on top of the mapping table.

mod async_info;
mod attach;
mod data;
pub mod held;
mod kernel;
mod keyed;
mod mapper;
mod update;

pub use crate::mapping::map_type;
pub use async_info::AsyncInfo;
pub use mapper::{HandleError, MapperComponent, num_components, push_component};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::image::Abi;
use crate::requires::Requirements;
use std::ffi::CStr;
use std::sync::atomic::{AtomicU32, Ordering};

/// The constructs (`target data`, `enter`/`exit data`, `update`, `target`) as they run for a
/// runtime: what they read of it, passed down by the runtime, which sits a floor above
/// (`Runtime::constructs`). Four references, made per construct; nothing is allocated.
#[derive(Clone, Copy)]
pub struct Constructs<'a> {
    pub config: &'a Config,
    pub requirements: &'a Requirements,
    /// `LIBOMPTARGET_INFO`, changeable while the program runs.
    info: &'a AtomicU32,
    registry: &'a dyn Registry,
}

/// What a construct asks of the registry of binaries above it (for messages only).
pub trait Registry: Sync {
    /// The ABI of the code at `addr` (a kernel's host region id).
    fn abi_at(&self, addr: usize) -> Abi;
}

impl<'a> Constructs<'a> {
    pub fn new(
        config: &'a Config,
        requirements: &'a Requirements,
        info: &'a AtomicU32,
        registry: &'a dyn Registry,
    ) -> Self {
        Self {
            config,
            requirements,
            info,
            registry,
        }
    }

    /// `LIBOMPTARGET_INFO` as it is now.
    #[inline]
    pub fn info_level(&self) -> u32 {
        self.info.load(Ordering::Relaxed)
    }

    fn abi_at(&self, addr: usize) -> Abi {
        self.registry.abi_at(addr)
    }
}

/// The argument arrays of one construct, as clang passes them. `bases` is mutable because a
/// `RETURN_PARAM` entry (`use_device_ptr`) gets the device address written back into it.
pub struct MapArgs<'a> {
    pub bases: &'a mut [usize],
    pub begins: &'a [usize],
    pub sizes: &'a [i64],
    pub types: &'a [i64],
    /// Map-name strings (`;name;file;line;col;;`), or null.
    pub names: Option<&'a [usize]>,
    /// User-defined mapper functions, or null.
    pub mappers: Option<&'a [usize]>,
}

impl MapArgs<'_> {
    pub fn len(&self) -> usize {
        self.begins.len()
    }
    pub fn is_empty(&self) -> bool {
        self.begins.is_empty()
    }
    fn ty(&self, i: usize) -> u64 {
        self.types[i] as u64
    }
    fn size(&self, i: usize) -> usize {
        self.sizes[i].max(0) as usize
    }
    fn mapper(&self, i: usize) -> usize {
        self.mappers.and_then(|m| m.get(i).copied()).unwrap_or(0)
    }
    fn name_ptr(&self, i: usize) -> usize {
        self.names.and_then(|n| n.get(i).copied()).unwrap_or(0)
    }
    fn name(&self, i: usize) -> Option<&'static CStr> {
        crate::message::name_from_ptr(self.name_ptr(i))
    }

    /// Refuses items no construct can map, before anything is done: a negative size (a
    /// section `a[0:n]` with `n < 0`, or a bad size through `__tgt_*`: LLVM 19 tries to
    /// allocate or copy 2^64 - |n| bytes), a section that wraps around the address space, and
    /// a PTR_AND_OBJ item whose pointer lies at address 0 (the runtime reads the pointer
    /// there: LLVM 19 and we used to crash).
    pub(crate) fn check_items(&self, device: usize) -> Result<()> {
        for i in 0..self.len() {
            let ty = self.ty(i);
            if ty & map_type::LITERAL != 0 || self.mapper(i) != 0 {
                continue;
            }
            let size = self.sizes[i];
            let what = if size < 0 {
                format!("has a negative size ({size} bytes)")
            } else if ty & map_type::NON_CONTIG == 0
                && self.begins[i].checked_add(size as usize).is_none()
            {
                format!("of {size} bytes wraps around the address space")
            } else if ty & map_type::PTR_AND_OBJ != 0 && self.bases[i] == 0 {
                "is a pointer-and-object item whose pointer lies at address 0 (a NULL base)"
                    .to_owned()
            } else {
                continue;
            };
            let name = match crate::message::var_name(self.name(i)).as_str() {
                "unknown" => String::new(),
                n => format!(" ({n})"),
            };
            crate::message::report(format_args!(
                "map item {i}{name} at host address {} {what}: nothing is mapped on device {device}",
                crate::message::Addr(self.begins[i])
            ));
            return Err(Error::InvalidArgument(format!("map item {i} {what}")));
        }
        Ok(())
    }
}
