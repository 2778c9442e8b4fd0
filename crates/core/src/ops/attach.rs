//! `ATTACH` map entries (map-type bit 0x4000), which clang 22 emits for pointer-based list
//! items (struct pointer members, pointers to pointers, pointer sections) instead of LLVM 19's
//! PTR_AND_OBJ / MEMBER_OF chains. The semantics are LLVM 22's (`processAttachEntries`):
//!
//! - an entry `{base: &ptr, begin: &pointee[k], size: sizeof ptr}` is deferred until every
//!   other item of the construct is mapped;
//! - it attaches (writes the device address of the pointee's base into the device copy of the
//!   pointer) only when both the pointer and the pointee are present, and either of them was
//!   newly mapped by this construct, or the entry carries `always` (or
//!   `LIBOMPTARGET_TREAT_ATTACH_AUTO_AS_ALWAYS` is set);
//! - it never changes a reference count, and is ignored at exit;
//! - `PRIVATE | ATTACH` on a kernel argument is the "corresponding pointer initialisation" of a
//!   firstprivate pointer: its private copy starts as the device address of the pointee's base
//!   (or the host value when the pointee is not mapped).
//!
//! User-defined mappers keep the PTR_AND_OBJ scheme; both coexist in one construct.

use super::map_type as mt;
use super::{AsyncInfo, Constructs, MapArgs};
use crate::device::Device;
use crate::error::Result;
use crate::trace;
use std::collections::BTreeMap;

/// The host ranges that the construct being entered mapped anew, recorded only while it has
/// ATTACH entries (LLVM's `AttachInfo::NewAllocations`). It lives in the construct's
/// [`AsyncInfo`], not in a thread-local: a thread's first thread-local with a destructor
/// registers it with the C library under the dynamic loader's lock, which a mapping made
/// under the table lock must never wait for (a `dlclose` in another thread may hold the
/// loader lock and wait for the table), and thread-locals are gone when a construct runs from
/// an `atexit` handler.
#[derive(Default)]
pub(super) struct NewMappings {
    /// Constructs with ATTACH entries being entered (a mapper's components are entered inside
    /// the construct that names the mapper).
    open: u32,
    /// begin → size: new mappings never overlap, so the one that may hold an address is the
    /// last beginning at or below it (O(log n) for constructs with many ATTACH entries).
    ranges: BTreeMap<usize, usize>,
}

impl NewMappings {
    /// Whether `addr` lies in a range the construct mapped anew.
    fn holds(&self, addr: usize) -> bool {
        self.ranges
            .range(..=addr)
            .next_back()
            .is_some_and(|(&begin, &size)| addr - begin < size)
    }
}

/// Records that the construct being entered mapped `[begin, begin + size)` anew.
pub(super) fn note_new_mapping(ai: &mut AsyncInfo, begin: usize, size: usize) {
    if let Some(n) = ai.new_mappings.as_deref_mut()
        && n.open > 0
    {
        n.ranges.insert(begin, size);
    }
}

/// Opens a record of new mappings when `args` holds ATTACH entries (one pass over the map
/// types); the caller closes it with [`close`] on every path.
pub(super) fn open(args: &MapArgs<'_>, ai: &mut AsyncInfo) -> bool {
    if !args.types.iter().any(|&t| t as u64 & mt::ATTACH != 0) {
        return false;
    }
    ai.new_mappings.get_or_insert_default().open += 1;
    true
}

/// Closes a record [`open`] opened; the outermost forgets what was recorded.
pub(super) fn close(ai: &mut AsyncInfo) {
    if let Some(n) = ai.new_mappings.as_deref_mut() {
        n.open = n.open.saturating_sub(1);
        if n.open == 0 {
            n.ranges.clear();
        }
    }
}

impl Constructs<'_> {
    /// Performs the deferred ATTACH entries of a construct whose other items are all mapped.
    pub(super) fn attach_pending(
        &self,
        dev: &Device,
        args: &MapArgs<'_>,
        ai: &mut AsyncInfo,
    ) -> Result<()> {
        let info = self.info_level();
        for i in 0..args.len() {
            let ty = args.ty(i);
            if ty & mt::ATTACH == 0 || ty & (mt::PRIVATE | mt::LITERAL) != 0 {
                continue;
            }
            let (ptr_host, pointee_begin, ptr_size) = (args.bases[i], args.begins[i], args.size(i));
            let always = ty & mt::ALWAYS != 0 || self.config.treat_attach_auto_as_always;
            let new = ai.new_mappings.as_deref();
            let newly = |addr| new.is_some_and(|n| n.holds(addr));
            if !always && !newly(pointee_begin) && !newly(ptr_host) {
                continue;
            }
            // SAFETY: the base of an ATTACH entry is the address of a host pointer.
            let pointee_base = unsafe { std::ptr::read_unaligned(ptr_host as *const usize) };
            let (ptr_tgt, tgt_value) = {
                let table = dev.table.lock();
                // Lookups only: no count changes, no allocation.
                let l = table.lookup(pointee_begin, 0);
                let Some(pointee) = l.entry.filter(|_| l.contained).and_then(|id| table.get(id))
                else {
                    continue;
                };
                trace::mapping_looked_up(info, dev.id, pointee, pointee_begin, 0);
                let tgt_pointee_begin = pointee.tgt_ptr(pointee_begin);
                let l = table.lookup(ptr_host, ptr_size);
                let Some(pointer) = l.entry.filter(|_| l.contained).and_then(|id| table.get(id))
                else {
                    continue;
                };
                trace::mapping_looked_up(info, dev.id, pointer, ptr_host, ptr_size);
                (
                    pointer.tgt_ptr(ptr_host),
                    tgt_pointee_begin.wrapping_sub(pointee_begin.wrapping_sub(pointee_base)),
                )
            };
            // The pointer's word is written on the construct's queue, behind every copy the
            // construct issued (LLVM 22 inserts a data fence before its first attachment for
            // the same reason: a copy of the struct holding the pointer must not overwrite it),
            // and traced as LLVM 22 traces it, named after the pointer's mapping.
            self.attach(dev, ptr_host, ptr_tgt, pointee_base, tgt_value, ai)?;
        }
        Ok(())
    }

    /// The initial value of the private copy of a firstprivate pointer passed as a
    /// `PRIVATE | ATTACH` kernel argument (`base`: the host pointer's address, `begin`: its
    /// pointee's first mapped byte): the device address of the pointee's base when the pointee
    /// is mapped, else the host pointer's own value (OpenMP 6.0's corresponding pointer
    /// initialisation, as LLVM 22 implements it).
    pub(super) fn corresponding_pointer(&self, dev: &Device, base: usize, begin: usize) -> usize {
        // SAFETY: the base of a PRIVATE | ATTACH entry is the address of a host pointer.
        let pointee_base = unsafe { std::ptr::read_unaligned(base as *const usize) };
        if begin == 0 {
            return pointee_base;
        }
        let table = dev.table.lock();
        let l = table.lookup(begin, 0);
        match l
            .entry
            .filter(|_| l.contained || l.is_extension())
            .and_then(|id| table.get(id))
        {
            Some(e) => {
                trace::mapping_looked_up(self.info_level(), dev.id, e, begin, 0);
                e.tgt_ptr(begin)
                    .wrapping_sub(begin.wrapping_sub(pointee_base))
            }
            None => pointee_base,
        }
    }
}
