//! `target data` and `target enter/exit data` (and a target region's entry and exit): the map
//! rules of OpenMP 5.2 §5.8.3 as LLVM 19 implements them (LLVM's `targetDataBegin`,
//! `targetDataEnd`); `target update` is in `update.rs`.

mod waits;

use super::attach;
use super::keyed::filter_bit;
use super::map_type as mt;
use super::mapper::with_components;
use super::{AsyncInfo, Constructs, MapArgs};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::mapping::{Entry, EntryId, RefCount, ShadowPointer};
use crate::message::{Addr, message, report, var_name};
use crate::trace::{self, RefAction};
use omptarget_plugin::CopyKind;
use std::ffi::CStr;
use waits::{after_released, after_retired, unreferenced};

const WORD: usize = std::mem::size_of::<usize>();

/// The references a construct's entry half took (entry, hold reference), so that a failure
/// later in the construct can give them back: a failed construct leaves the table as it found
/// it. Inline for up to 32 items, so the hot path allocates nothing.
pub(crate) type Taken = omptarget_plugin::words::Words<(EntryId, bool)>;

/// The device address each item of a construct was entered at (by index; 0 for an item
/// that found or created no mapping, or that is not entered), so that a region's launch
/// does not look each of its arguments up in the table again. Inline for up to 32 items.
pub(crate) type ItemTargets = omptarget_plugin::words::Words<usize>;

/// How one item of a map clause is to be entered.
#[derive(Clone, Copy)]
struct Item {
    base: usize,
    begin: usize,
    size: usize,
    ty: u64,
    update_ref: bool,
    name: Option<&'static CStr>,
}

impl Item {
    /// The end of the host range it covers (a zero-length item covers its first byte).
    fn end(&self) -> usize {
        self.begin + self.size.max(1)
    }
}

impl Constructs<'_> {
    /// Finds or creates the mapping of one item on entry to a construct (LLVM's
    /// `getTargetPointer`) and copies data in when the rules say so. Returns the device address
    /// of the item's first byte, or 0 for an unmapped zero-length item.
    fn enter_item(
        &self,
        dev: &Device,
        it: Item,
        ai: &mut AsyncInfo,
        taken: &mut Taken,
    ) -> Result<usize> {
        let implicit = it.ty & mt::IMPLICIT != 0;
        let present = it.ty & mt::PRESENT != 0;
        let hold = it.ty & mt::OMPX_HOLD != 0;
        let info = self.info_level();
        // Declared before the table's guard, so it gives back what it staged after the lock.
        let _staged = self.stage_ahead(dev, &it);
        let mut table = dev.table.lock();
        let mut l = table.lookup(it.begin, it.size);
        if super::held::any() && l.entry.is_some_and(|id| unreferenced(&table, id)) {
            (table, l) = after_released(dev, &it, ai, table);
        }
        if table.has_in_flight()
            && l.entry.is_none()
            && table.in_flight_overlaps(it.begin, it.end(), ai.queue_id(), true)
        {
            (table, l) = after_retired(dev, &it, ai, table);
        }
        let mut is_new = false;
        // A struct member (which holds no reference of its own) found in a mapping that this
        // construct created is new too: its `to` data must reach the device. Decided from the
        // construct's own record, not from the count, which other items of the construct may
        // already have raised (LLVM 19 infers it from a count of 1).
        let mut new_here = false;
        let id;
        if let (true, Some(found)) = (l.contained || (l.is_extension() && implicit), l.entry) {
            id = found;
            let e = table.get_mut(id).expect("lookup returned a live entry");
            if it.update_ref {
                e.add_ref(hold);
                taken.push((id, hold));
            } else {
                new_here = ai.created_here(id, e.tgt_alloc);
            }
            ai.order_after(e.pending)?;
            let action = if it.update_ref {
                RefAction::Incremented
            } else {
                RefAction::Suppressed
            };
            trace::mapping_exists(
                info,
                dev.id,
                e,
                it.begin,
                it.size,
                implicit,
                hold,
                action,
                false,
                Some(it.name),
            );
        } else if l.is_extension() {
            let e = table
                .get(l.entry.expect("an extension names an entry"))
                .expect("live");
            message(format_args!(
                "explicit extension not allowed: host address specified is {} ({} bytes), but device allocation maps to host at {} ({} bytes)",
                Addr(it.begin),
                it.size,
                Addr(e.host_begin),
                e.size()
            ));
            if present {
                not_present("map type", it.begin, it.size);
            }
            return Err(Error::Extension {
                host: it.begin,
                size: it.size,
            });
        } else if it.ty & mt::CLOSE == 0 && self.requirements.unified_shared_memory() {
            // Unified shared memory: the device uses the host data in place (requires.rs).
            if it.size == 0 {
                return Ok(0);
            }
            crate::requires::trace_host_pointer(info, dev.id, it.begin, it.size);
            return Ok(it.begin);
        } else if present {
            return Err(not_present("map type", it.begin, it.size));
        } else if it.size > 0 {
            let alloc = ai.alloc(dev, it.size, it.begin)?;
            let (dyn_refs, hold_refs) = if hold {
                (RefCount::Finite(0), 1)
            } else {
                (RefCount::Finite(1), 0)
            };
            let entry = Entry {
                host_base: it.base,
                host_begin: it.begin,
                host_end: it.begin + it.size,
                tgt_alloc: alloc,
                tgt_begin: alloc,
                dyn_refs,
                hold_refs,
                owns_allocation: true,
                name: it.name,
                shadows: Default::default(),
                pending: None,
                users: 0,
            };
            trace::creating(info, dev.id, &entry);
            id = table.insert(entry);
            ai.record_created(id, alloc);
            taken.push((id, hold));
            is_new = true;
            attach::note_new_mapping(ai, it.begin, it.size);
        } else {
            // A zero-length section of unmapped data: nothing to map, and not an error.
            return Ok(0);
        }
        let e = table.get(id).expect("live entry");
        let tgt = e.tgt_ptr(it.begin);
        if tgt == 0 && it.size != 0 {
            // Only an association can map data to address 0 (`omp_target_associate_ptr` whose
            // device_ptr + device_offset wrapped around): the caller reports it as LLVM does
            // and gives the reference back.
            return Err(Error::NullPointer("the device address of a mapped item"));
        }
        let always = it.ty & mt::ALWAYS != 0;
        let copy_in = it.ty & mt::TO != 0 && (is_new || new_here || always) && it.size != 0;
        if copy_in {
            // LLVM names a copy after the mapping it goes to (a struct member's copy after
            // its struct), not after the list item.
            trace::transfer(info, dev.id, true, it.begin, tgt, it.size, e.name);
            let shadows: Vec<ShadowPointer> = e.shadows.copied_within(it.begin, it.size);
            // The copy is issued with the table locked, so no other thread uses the entry
            // before its data is on its way.
            let copied = ai
                .copy(dev, CopyKind::HostToDevice, tgt, it.begin, it.size)
                .and_then(|_| reattach(dev, &table, &shadows, ai));
            // A new entry is retired by the caller's rollback, after the queue's work.
            copied?;
        }
        let e = table.get_mut(id).expect("live entry");
        // Other queues that use the entry before this construct synchronises wait for its
        // allocation and copy (pending); the construct's queued work uses it.
        ai.mark_used(e, id, copy_in || is_new)?;
        Ok(tgt)
    }

    /// Lets the device do the host-side work of an item's copy to the device before the
    /// table is locked ([`omptarget_plugin::Device::prestage`]), when the copy is likely: the
    /// item has `to` and is not mapped yet (or is `always`). The copy itself is still
    /// decided and queued under the lock, so no other thread sees the entry before its data
    /// is on its way; a copy that does not happen leaves the staged buffer to the guard.
    fn stage_ahead<'d>(&self, dev: &'d Device, it: &Item) -> Option<Unstage<'d>> {
        if it.ty & mt::TO == 0 || it.size == 0 {
            return None;
        }
        let backend = dev.backend().ok()?;
        let (lo, hi) = backend.prestage_sizes();
        if it.size < lo || it.size > hi {
            return None;
        }
        let in_place = it.ty & mt::CLOSE == 0 && self.requirements.unified_shared_memory();
        let likely = !in_place
            && (it.ty & mt::ALWAYS != 0 || !dev.table.lock().lookup(it.begin, it.size).contained);
        (likely && backend.prestage(it.begin, it.size)).then_some(Unstage(backend))
    }

    /// `__tgt_target_data_begin_mapper` (and the entry half of a target region): the items,
    /// then the ATTACH entries they leave for the end. A failure gives back the references
    /// the construct took so far.
    pub fn data_begin(
        &self,
        dev: &Device,
        args: &mut MapArgs<'_>,
        ai: &mut AsyncInfo,
    ) -> Result<()> {
        let mut taken = Taken::default();
        let r = self.enter_construct(dev, args, ai, &mut taken, None);
        if r.is_err() {
            self.give_back(dev, &taken, ai);
        }
        r
    }

    /// Releases the references `taken` recorded, last first; an entry left without any is
    /// retired (removed and freed once the construct's work is done, as by an exit).
    pub(crate) fn give_back(&self, dev: &Device, taken: &Taken, ai: &mut AsyncInfo) {
        for &(id, hold) in taken.as_slice().iter().rev() {
            let mut table = dev.table.lock();
            let Some(e) = table.get_mut(id) else { continue };
            if e.release(hold, false) {
                let size = e.size();
                drop(table);
                let _ = ai.retire(id, size);
            }
        }
    }

    /// The entry of a construct without the rollback: its items, then the ATTACH entries
    /// they leave for the end (clang 22, see `attach.rs`); records each reference it takes,
    /// and in `tgts` (when given) the device address each item was entered at.
    pub(crate) fn enter_construct(
        &self,
        dev: &Device,
        args: &mut MapArgs<'_>,
        ai: &mut AsyncInfo,
        taken: &mut Taken,
        tgts: Option<&mut ItemTargets>,
    ) -> Result<()> {
        if !attach::open(args, ai) {
            return self.data_begin_items(dev, args, ai, taken, tgts);
        }
        let r = self
            .data_begin_items(dev, args, ai, taken, tgts)
            .and_then(|()| self.attach_pending(dev, args, ai));
        attach::close(ai);
        r
    }

    /// [`Constructs::data_begin`] without the rollback and the ATTACH entries (also a mapper's
    /// components); records each reference it takes, and in `tgts` (when given) the device
    /// address of each item's first byte (0 where none was found or the item was skipped).
    pub(crate) fn data_begin_items(
        &self,
        dev: &Device,
        args: &mut MapArgs<'_>,
        ai: &mut AsyncInfo,
        taken: &mut Taken,
        mut tgts: Option<&mut ItemTargets>,
    ) -> Result<()> {
        if self.config.debug > 0 {
            debug_args(dev, args, "begin");
        }
        if let Err(e) = args.check_items(dev.id) {
            // LLVM's line for an item it cannot map, after ours saying why.
            report(format_args!(
                "Call to getTargetPointer returned null pointer ({}).",
                null_reason(0)
            ));
            return Err(e);
        }
        if let Some(t) = tgts.as_deref_mut() {
            for _ in 0..args.len() {
                t.push(0);
            }
        }
        // `nowait` constructs still running whose copies back land in memory this construct
        // copies in complete first (ops/held.rs).
        super::held::before_reading(ai.cell(), |f| copied_in(args, f));
        // A target region's plain items by base (a one-word filter): items that share one
        // are checked against each other (`separate_sibling`).
        let mut bases_seen = 0u64;
        for i in 0..args.len() {
            let ty = args.ty(i);
            if args.mapper(i) != 0 {
                if let Err(e) = with_components(args, i, |sub| {
                    self.data_begin_items(dev, sub, ai, taken, None)
                }) {
                    report(format_args!(
                        "Call to targetDataBegin via targetDataMapper for custom mapper failed."
                    ));
                    return Err(e);
                }
                continue;
            }
            // ATTACH entries wait for the end of the construct.
            if ty & (mt::LITERAL | mt::PRIVATE | mt::ATTACH) != 0 {
                continue;
            }
            let (mut base, begin, size) = (args.bases[i], args.begins[i], args.size(i));
            // LLVM 19 also skips the reference of a mapper's first component (the struct itself),
            // which leaks the struct's mapping and loses later device writes: the specification
            // counts every construct's reference (docs/DIVERGENCES.md).
            let mut update_ref = ty & mt::MEMBER_OF == 0;
            // The pointer of a PTR_AND_OBJ item is mapped (usually found inside its struct)
            // before the pointee.
            let mut pointer = None;
            if ty & mt::PTR_AND_OBJ != 0 {
                let ptr_item = Item {
                    base,
                    begin: base,
                    size: WORD,
                    ty: ty & (mt::IMPLICIT | mt::CLOSE | mt::PRESENT | mt::OMPX_HOLD),
                    update_ref,
                    name: None,
                };
                match self.enter_item(dev, ptr_item, ai, taken) {
                    Ok(p) if p != 0 => pointer = Some((base, p)),
                    Ok(_) | Err(_) => {
                        report(format_args!(
                            "Call to getTargetPointer returned null pointer ({}).",
                            null_reason(ty)
                        ));
                        return Err(Error::NotPresent {
                            host: base,
                            size: WORD,
                        });
                    }
                }
                // SAFETY: the base of a PTR_AND_OBJ item is the address of a host pointer.
                base = unsafe { std::ptr::read_unaligned(base as *const usize) };
                update_ref = true;
            }
            let item = Item {
                base,
                begin,
                size,
                ty,
                update_ref,
                name: args.name(i),
            };
            let tgt = match self.enter_item(dev, item, ai, taken) {
                Ok(t) => t,
                Err(e) => {
                    report(format_args!(
                        "Call to getTargetPointer returned null pointer ({}).",
                        null_reason(ty)
                    ));
                    return Err(e);
                }
            };
            if tgts.is_some() && size > 0 && ty & (mt::MEMBER_OF | mt::PTR_AND_OBJ) == 0 {
                let bit = filter_bit(base);
                if bases_seen & bit != 0
                    && let Some(j) = self.separate_sibling(dev, args, i, ai)
                {
                    report_separate_siblings(args, j, i);
                    return Err(Error::InvalidArgument(format!(
                        "map items {j} and {i} share their base but not their storage"
                    )));
                }
                bases_seen |= bit;
            }
            if tgt == 0 && ty != 0 && ty & (mt::MEMBER_OF | mt::IMPLICIT) == 0 {
                // Nothing mapped and nothing created (a zero-length item, such as the pointer
                // of `use_device_ptr`, on unmapped data).
                trace::empty_mapping(self.info_level(), dev.id, args.name(i));
            }
            if let Some(t) = tgts.as_deref_mut() {
                t.as_mut_slice()[i] = tgt;
            }
            // use_device_ptr / use_device_addr: the device address of the base. A lookup that
            // finds no mapping keeps the host address, which the program asserts is valid on
            // the device (OpenMP 5.2 §5.4.8, §5.4.10), as LLVM 22 does; LLVM 19 gives null
            // (docs/DIVERGENCES.md).
            if ty & mt::RETURN_PARAM != 0 && tgt != 0 {
                args.bases[i] = tgt.wrapping_sub(begin.wrapping_sub(base));
            }
            // A pointee used in place under unified shared memory needs no attachment.
            let in_place = tgt == begin && self.requirements.unified_shared_memory();
            if let (Some((ptr_host, ptr_tgt)), true, false) = (pointer, tgt != 0, in_place) {
                let tgt_value = tgt.wrapping_sub(begin.wrapping_sub(base));
                self.attach(dev, ptr_host, ptr_tgt, base, tgt_value, ai)?;
            }
        }
        Ok(())
    }

    /// An earlier item of a target region that shares item `i`'s base but not its storage:
    /// both plain sections (no struct member, no pointer-and-object), `i` no kernel argument
    /// of its own, in two mappings, at least one of them made by this construct. The kernel
    /// receives one pointer for the base (clang passes the first such item as the argument)
    /// and reaches the other item's elements through it, past the end of its device copy:
    /// OpenMP 5.2 §5.8.3 requires list items with one containing array or base pointer,
    /// unless present already, to refer to the same elements. (LLVM 19 maps the two apart: the kernel writes outside its copy,
    /// results are lost or the program crashes.) Called only when the filter of bases says
    /// an earlier item may share `i`'s.
    fn separate_sibling(
        &self,
        dev: &Device,
        args: &MapArgs<'_>,
        i: usize,
        ai: &AsyncInfo,
    ) -> Option<usize> {
        let plain = |k: usize| {
            let ty = args.ty(k);
            args.size(k) > 0
                && args.mapper(k) == 0
                && ty
                    & (mt::MEMBER_OF
                        | mt::PTR_AND_OBJ
                        | mt::LITERAL
                        | mt::PRIVATE
                        | mt::ATTACH
                        | mt::RETURN_PARAM)
                    == 0
        };
        // An item that is a kernel argument has a pointer of its own (`map(p[0:2])
        // map(q[4:4])` with `q == p` passes both). The filter's bit may be another base's:
        // the bases are compared first, without the table.
        if !plain(i)
            || args.ty(i) & mt::TARGET_PARAM != 0
            || !(0..i).any(|k| args.bases[k] == args.bases[i] && plain(k))
        {
            return None;
        }
        let table = dev.table.lock();
        let made_here = |id: Option<EntryId>| {
            id.and_then(|id| table.get(id).map(|e| ai.created_here(id, e.tgt_alloc)))
                .unwrap_or(false)
        };
        let mine = table.containing(args.begins[i], args.size(i));
        (0..i).find(|&k| {
            if !plain(k) || args.bases[k] != args.bases[i] {
                return false;
            }
            let theirs = table.containing(args.begins[k], args.size(k));
            theirs != mine && (made_here(theirs) || made_here(mine))
        })
    }

    /// Points the device copy of the pointer at `ptr_host` (device address `ptr_tgt`) at
    /// `tgt_value`, and records the shadow so copies back to the host keep `host_value`
    /// (nothing is written when it already holds that value).
    pub(super) fn attach(
        &self,
        dev: &Device,
        ptr_host: usize,
        ptr_tgt: usize,
        host_value: usize,
        tgt_value: usize,
        ai: &mut AsyncInfo,
    ) -> Result<()> {
        let name = {
            let mut table = dev.table.lock();
            let Some(e) = table
                .containing(ptr_host, WORD)
                .and_then(|id| table.get_mut(id))
            else {
                return Ok(());
            };
            let shadow = ShadowPointer {
                host_addr: ptr_host,
                host_value,
                tgt_value,
            };
            if !e.shadows.set(shadow) {
                return Ok(());
            }
            e.name
        };
        // Traced as LLVM traces it: from the staged word, named after the pointer's mapping.
        ai.write_word(dev, ptr_tgt, tgt_value, Some(name))
    }

    /// `__tgt_target_data_end_mapper` (and the exit half of a target region).
    pub fn data_end(&self, dev: &Device, args: &MapArgs<'_>, ai: &mut AsyncInfo) -> Result<()> {
        let r = self.data_end_items(dev, args, ai);
        // Entries the construct retired leave the table once all its items are processed
        // (a later item may still name one), not earlier.
        let retired = ai.retire_issued();
        r.and(retired)
    }

    /// Every item, last to first. A device failure on one item does not stop the others
    /// from releasing their references (so a failed exit leaves no entry half-released); the
    /// first error is returned. A `present` violation stops the construct where LLVM does.
    fn data_end_items(&self, dev: &Device, args: &MapArgs<'_>, ai: &mut AsyncInfo) -> Result<()> {
        args.check_items(dev.id)?;
        let mut result = Ok(());
        for i in (0..args.len()).rev() {
            match self.end_item(dev, args, i, ai) {
                Ok(()) => {}
                Err(e @ Error::NotPresent { .. }) => return result.and(Err(e)),
                Err(e) => {
                    if result.is_ok() {
                        result = Err(e);
                    }
                }
            }
        }
        result
    }

    /// The exit of item `i`: release its reference, copy back when the rules say so, and
    /// retire the entry when that was its last reference (also when the copy failed: the
    /// entry goes, as it would have, and the construct reports the failure).
    fn end_item(
        &self,
        dev: &Device,
        args: &MapArgs<'_>,
        i: usize,
        ai: &mut AsyncInfo,
    ) -> Result<()> {
        let info = self.info_level();
        let ty = args.ty(i);
        if args.mapper(i) != 0 {
            let r = with_components(args, i, |sub| self.data_end_items(dev, sub, ai));
            if r.is_err() {
                report(format_args!(
                    "Call to targetDataEnd via targetDataMapper for custom mapper failed."
                ));
            }
            return r;
        }
        // ATTACH entries are ignored at exit.
        if ty & (mt::LITERAL | mt::PRIVATE | mt::ATTACH) != 0 {
            return Ok(());
        }
        let (begin, size) = (args.begins[i], args.size(i));
        let implicit = ty & mt::IMPLICIT != 0;
        let update_ref = ty & mt::MEMBER_OF == 0 || ty & mt::PTR_AND_OBJ != 0;
        let delete = ty & mt::DELETE != 0;
        let hold = ty & mt::OMPX_HOLD != 0;
        let mut table = dev.table.lock();
        let l = table.lookup(begin, size);
        // An implicit item may extend its mapping; an explicit one must lie inside it.
        let found = l
            .entry
            .filter(|_| l.contained || (implicit && l.is_extension()));
        let Some(id) = found else {
            // Under unified shared memory unmapped data was used in place: nothing is missing.
            if ty & mt::PRESENT != 0 && !self.requirements.unified_shared_memory() {
                return Err(not_present("map type", begin, size));
            }
            return Ok(());
        };
        // Constructs still running that released a reference here (rarely any).
        let exits = table.exit_queues(id);
        let e = table.get_mut(id).expect("live entry");
        // Unordered after the entry's pending transfer, a copy back could read stale data:
        // then nothing is copied, but the reference is still released.
        let mut result = ai.order_after(e.pending);
        ai.mark_use(e, id);
        // As LLVM 19: whether this item releases the last reference is decided from the
        // count before it (so an item that finds the count already zeroed by an earlier
        // `delete` of the same construct copies nothing back). A member of a mapped struct
        // holds no reference of its own: it changes no count, except that its `delete` leaves
        // at most one reference, which the struct's own item, processed after its members,
        // releases (`exit data map(delete: s.b[1:2])` removes `s` whatever its count).
        let is_last = e.release_would_remove(hold, delete);
        let mut exit_note = None;
        if update_ref {
            e.release(hold, delete);
            // Constructs that released theirs before us may still be running: under OpenMP
            // their regions ended before their release, so our copy back follows their work.
            if !is_last {
                exit_note = ai.exit_note(e, id);
            } else if result.is_ok() {
                result = ai.after_exits(&exits);
            }
        } else if delete {
            e.reset_for_member_delete(hold);
        }
        let action = if !update_ref {
            RefAction::Suppressed
        } else if delete && is_last {
            // LLVM says "reset" only for a `delete` that removes the entry; one that cannot
            // (an infinite count, hold references) reads "decremented".
            RefAction::Reset
        } else {
            RefAction::Decremented
        };
        trace::mapping_exists(
            info, dev.id, e, begin, size, false, hold, action, is_last, None,
        );
        let tgt = e.tgt_ptr(begin);
        let always = ty & mt::ALWAYS != 0;
        let copy_back = result.is_ok() && ty & mt::FROM != 0 && (always || is_last) && size != 0;
        // Pointers inside the copied range keep their host values (taken back if the copy
        // fails).
        let restores = ai.restores.len();
        if copy_back {
            trace::transfer(info, dev.id, false, begin, tgt, size, e.name);
            // Only the pointers the copy overwrites.
            e.shadows.restores_within(begin, size, &mut ai.restores);
        }
        if copy_back && is_last {
            ai.note_in_flight(&mut table, begin, size);
        }
        let retire = update_ref && (is_last || ai.retiring(id));
        if let Some((alloc, queue)) = exit_note {
            table.note_exit(id, alloc, queue);
        }
        // Marked used above: the copy may go after the lock (`guard_for_copy_back`).
        let held = ai.guard_for_copy_back(table);
        if copy_back {
            result = ai.copy(dev, CopyKind::DeviceToHost, begin, tgt, size);
            if result.is_err() {
                ai.restores.truncate(restores);
            }
        }
        drop(held);
        // A struct member, which holds no reference, never removes its struct's entry (the item
        // that releases the last reference does, and LLVM's "Removing map entry" line gives
        // that item's size).
        if retire {
            ai.retire(id, size)?;
        }
        result
    }
}

/// Items `first` and `second` of a target region share their base but not their storage
/// (`Constructs::separate_sibling`).
fn report_separate_siblings(args: &MapArgs<'_>, first: usize, second: usize) {
    let item = |k: usize| {
        format!(
            "{} ({} bytes at {})",
            var_name(args.name(k)),
            args.size(k),
            Addr(args.begins[k])
        )
    };
    report(format_args!(
        "map items {first} and {second} of a target region share the base {} but map separate storage: {} is not within the mapping of {}, which the kernel reaches both through; OpenMP requires such items, unless present already, to refer to the same elements (map the whole range in one item)",
        Addr(args.bases[second]),
        item(second),
        item(first)
    ));
}

/// Calls `f` with the host range of each item of `args` whose data may be copied to the
/// device (`to`, not a literal or private value).
pub(super) fn copied_in(args: &MapArgs<'_>, f: &mut dyn FnMut(usize, usize)) {
    for i in 0..args.len() {
        let ty = args.ty(i);
        if ty & mt::TO != 0 && ty & (mt::LITERAL | mt::PRIVATE | mt::NON_CONTIG) == 0 {
            let begin = args.begins[i];
            f(begin, begin + args.size(i));
        }
    }
}

/// LLVM's message when data a `present` modifier requires is not mapped; `what` is
/// `map type` or `motion`.
pub(super) fn not_present(what: &str, host: usize, size: usize) -> Error {
    message(format_args!(
        "device mapping required by 'present' {what} modifier does not exist for host address {} ({size} bytes)",
        Addr(host)
    ));
    Error::NotPresent { host, size }
}

fn null_reason(ty: u64) -> &'static str {
    if ty & mt::PRESENT != 0 {
        "'present' map type modifier"
    } else {
        "device failure or illegal mapping"
    }
}

/// After host data was copied over a range holding attached pointers, writes the device
/// pointer values back.
pub(super) fn reattach(
    dev: &Device,
    table: &crate::mapping::MappingTable,
    shadows: &[ShadowPointer],
    ai: &mut AsyncInfo,
) -> Result<()> {
    for s in shadows {
        let Some(e) = table
            .containing(s.host_addr, WORD)
            .and_then(|id| table.get(id))
        else {
            continue;
        };
        // Not traced: LLVM 19 deadlocks tracing this copy (its printCopyInfo takes the table
        // lock its caller holds), so there is no line to match.
        ai.write_word(dev, e.tgt_ptr(s.host_addr), s.tgt_value, None)?;
    }
    Ok(())
}

fn debug_args(dev: &Device, args: &MapArgs<'_>, what: &str) {
    for i in 0..args.len() {
        eprintln!(
            "omptarget-rs debug: device {} {what} arg {i}: base={} begin={} size={} type={:#x} mapper={:#x} name={}",
            dev.id,
            Addr(args.bases[i]),
            Addr(args.begins[i]),
            args.sizes[i],
            args.ty(i),
            args.mapper(i),
            var_name(args.name(i))
        );
    }
}

/// Gives back, when dropped, what [`Constructs::stage_ahead`] staged and no copy used.
struct Unstage<'d>(&'d dyn omptarget_plugin::Device);

impl Drop for Unstage<'_> {
    fn drop(&mut self) {
        self.0.unstage();
    }
}
