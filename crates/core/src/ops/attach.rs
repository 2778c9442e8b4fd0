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
use crate::device::{Device, lock};
use crate::error::Result;
use crate::trace;
use std::cell::RefCell;

/// The host ranges that the constructs being entered on this thread mapped anew, recorded
/// only while an entered construct has ATTACH entries (LLVM's `AttachInfo::NewAllocations`).
/// A construct is mapped entirely on the thread that issues it, so a thread-local record needs
/// no lock, and its capacity is reused from construct to construct.
#[derive(Default)]
struct NewMappings {
    /// Constructs with ATTACH entries being entered (a mapper's components are entered inside
    /// the construct that names the mapper).
    open: u32,
    ranges: Vec<(usize, usize)>,
}

thread_local! {
    static NEW_MAPPINGS: RefCell<NewMappings> = RefCell::default();
}

/// Records that the construct being entered mapped `[begin, begin + size)` anew.
pub(super) fn note_new_mapping(begin: usize, size: usize) {
    NEW_MAPPINGS.with(|n| {
        let mut n = n.borrow_mut();
        if n.open > 0 {
            n.ranges.push((begin, size));
        }
    });
}

/// An open record of new mappings, for a construct that has ATTACH entries; closing it (on
/// drop, also on error paths) forgets what the outermost such construct recorded.
pub(super) struct Scope(());

impl Scope {
    /// Opens a record when `args` holds ATTACH entries (one pass over the map types).
    pub(super) fn open(args: &MapArgs<'_>) -> Option<Scope> {
        if !args.types.iter().any(|&t| t as u64 & mt::ATTACH != 0) {
            return None;
        }
        NEW_MAPPINGS.with(|n| n.borrow_mut().open += 1);
        Some(Scope(()))
    }

    /// Whether `addr` lies in a range the construct mapped anew.
    fn newly_mapped(&self, addr: usize) -> bool {
        NEW_MAPPINGS.with(|n| {
            n.borrow()
                .ranges
                .iter()
                .any(|&(begin, size)| addr >= begin && addr - begin < size)
        })
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        NEW_MAPPINGS.with(|n| {
            let mut n = n.borrow_mut();
            n.open = n.open.saturating_sub(1);
            if n.open == 0 {
                n.ranges.clear();
            }
        });
    }
}

impl Constructs<'_> {
    /// Performs the deferred ATTACH entries of a construct whose other items are all mapped.
    pub(super) fn attach_pending(
        &self,
        dev: &Device,
        args: &MapArgs<'_>,
        scope: &Scope,
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
            if !always && !scope.newly_mapped(pointee_begin) && !scope.newly_mapped(ptr_host) {
                continue;
            }
            // SAFETY: the base of an ATTACH entry is the address of a host pointer.
            let pointee_base = unsafe { std::ptr::read_unaligned(ptr_host as *const usize) };
            let (ptr_tgt, tgt_value) = {
                let table = lock(&dev.table);
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
        let table = lock(&dev.table);
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
