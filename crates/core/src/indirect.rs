//! `declare target indirect` (OpenMP 5.1 §2.14.7, 5.2 §7.8.2): a host function pointer used
//! in a target region reaches the device version of its function.
//!
//! For each indirect function clang 19 emits a host entry `{addr: the host function, name:
//! __omp_offloading_<id>_<function>_l<line>, size: 8, flags: INDIRECT}`, and the device image
//! holds a global of that name initialised with the device function's address. As LLVM 19
//! does, loading an image
//! - maps `[host function, host function + 8)` to the device function itself, the value of
//!   that global, not to the global: a function pointer passed to a region (clang passes it
//!   as a zero-length map) is then translated like any mapped pointer;
//! - gives the backend the image's table of `(host, device)` pairs sorted by host address,
//!   which LLVM 19's GPU device runtime searches (`__llvm_omp_indirect_call_lookup`) when
//!   device code translates a pointer itself.

use crate::error::{DeviceContext, Result};
use crate::trace;
use omptarget_plugin::{CopyKind, Device as Backend, ModuleId};
use std::ffi::CStr;

const WORD: usize = std::mem::size_of::<usize>();

/// The `(host, device)` function address pairs of one image, built while it loads.
#[derive(Debug, Default)]
pub(crate) struct IndirectCallTable {
    pairs: Vec<(u64, u64)>,
}

impl IndirectCallTable {
    pub(crate) fn push(&mut self, host: usize, device: usize) {
        self.pairs.push((host as u64, device as u64));
    }

    /// The pairs sorted by host address, as the device runtime's binary search needs them.
    pub(crate) fn into_sorted(mut self) -> Vec<(u64, u64)> {
        self.pairs.sort_unstable();
        self.pairs
    }
}

/// The most slots a vtable entry may have: a C++ class with a million virtual functions is
/// not a program but a corrupt entry, whose table would otherwise take all host memory.
pub(crate) const MAX_VTABLE_SLOTS: usize = 1 << 20;

/// Refuses a vtable entry (LLVM 22) that cannot be a host vtable: a size that is not a whole
/// number of function pointers, past [`MAX_VTABLE_SLOTS`], or a table that wraps the address
/// space.
pub(crate) fn check_vtable(addr: usize, size: usize, name: &str) -> Result<()> {
    if !size.is_multiple_of(WORD)
        || size / WORD > MAX_VTABLE_SLOTS
        || addr.checked_add(size).is_none()
    {
        return Err(crate::error::Error::InvalidImage(format!(
            "the indirect vtable entry '{name}' at {addr:#x} has size {size}, which is not a \
             table of at most {MAX_VTABLE_SLOTS} function pointers"
        )));
    }
    Ok(())
}

/// Reads the device function address the device global `name` of an indirect entry holds.
///
/// `info` and `trace_name` only serve the `LIBOMPTARGET_INFO` 0x20 line LLVM 19 prints for
/// this read (its `Name` is that of the table entry LLVM's lookup of the destination word
/// lands on, as LLVM's `retrieveData` reports it: `trace_name(begin, size)`).
pub(crate) fn device_function(
    backend: &dyn Backend,
    device: usize,
    module: ModuleId,
    name: &str,
    trace_name: &dyn Fn(usize, usize) -> Option<&'static CStr>,
    info: u32,
) -> Result<usize> {
    let (global, _) = backend
        .global(module, name)
        .on(device, "looking up an indirect function")?;
    let mut word = [0u8; WORD];
    let host = word.as_mut_ptr() as usize;
    if info & crate::config::info::DATA_TRANSFER != 0 {
        trace::transfer(
            info,
            device,
            false,
            host,
            global,
            WORD,
            trace_name(host, WORD),
        );
    }
    backend
        .copy(CopyKind::DeviceToHost, host, global, WORD, None)
        .on(device, "reading an indirect function's device address")?;
    Ok(usize::from_ne_bytes(word))
}

/// The name of the entry LLVM's `lookupMapping` returns for `[begin, begin + size)`, mapped or
/// not, among `entries` (`(host begin, host end, name)`, sorted by begin): the last entry
/// starting at or before `begin` when the interval reaches into it, else the first one after
/// `begin`, else the last one before.
pub(crate) fn nearest_name(
    entries: &[(usize, usize, Option<&'static CStr>)],
    begin: usize,
    size: usize,
) -> Option<&'static CStr> {
    let mut left = None;
    let mut right = None;
    for e in entries {
        if e.0 <= begin {
            left = Some(e);
        } else {
            right = Some(e);
            break;
        }
    }
    match (left, right) {
        (Some(l), _) if begin < l.1 => l.2,
        (_, Some(r)) => r.2,
        (Some(l), None) => l.2,
        (None, None) => None,
    }
    .filter(|_| size > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_sorted_by_host_address() {
        let mut t = IndirectCallTable::default();
        t.push(0x3000, 0xc);
        t.push(0x1000, 0xa);
        t.push(0x2000, 0xb);
        assert_eq!(
            t.into_sorted(),
            vec![(0x1000, 0xa), (0x2000, 0xb), (0x3000, 0xc)]
        );
    }
}
