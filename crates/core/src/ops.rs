//! Target data, update and kernel operations: OpenMP's map rules on top of the mapping table.

use crate::config::info;
use crate::device::{Device, lock};
use crate::error::{Error, Result};
use crate::mapping::{Entry, EntryId, RefCount};
use crate::message::{Addr, device_info, message, report, var_name};
use crate::runtime::Runtime;
use omptarget_plugin::{AllocKind, CopyKind, LaunchConfig, QueueId};
use std::ffi::CStr;

/// Map-type bits (`ArgTypes[i]`).
pub mod map_type {
    pub const TO: u64 = 0x01;
    pub const FROM: u64 = 0x02;
    pub const ALWAYS: u64 = 0x04;
    pub const DELETE: u64 = 0x08;
    pub const PTR_AND_OBJ: u64 = 0x10;
    pub const TARGET_PARAM: u64 = 0x20;
    pub const RETURN_PARAM: u64 = 0x40;
    pub const PRIVATE: u64 = 0x80;
    pub const LITERAL: u64 = 0x100;
    pub const IMPLICIT: u64 = 0x200;
    pub const CLOSE: u64 = 0x400;
    pub const PRESENT: u64 = 0x1000;
    pub const OMPX_HOLD: u64 = 0x2000;
    pub const NON_CONTIG: u64 = 1 << 44;
    pub const MEMBER_OF: u64 = 0xffff << 48;
}
use map_type as mt;

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
    fn name(&self, i: usize) -> Option<&'static CStr> {
        let p = self.names.and_then(|n| n.get(i).copied()).unwrap_or(0);
        if p == 0 {
            return None;
        }
        // SAFETY: clang emits map names as NUL-terminated constant strings that live as long
        // as the program (or the shared library that holds the construct).
        Some(unsafe { CStr::from_ptr(p as *const libc_char) })
    }
}

#[allow(non_camel_case_types)]
type libc_char = std::ffi::c_char;

/// The queue and the deferred work of one construct. A blocking construct calls
/// [`AsyncInfo::synchronize`] exactly once, at its end.
#[must_use = "an AsyncInfo must be synchronised"]
pub struct AsyncInfo<'d> {
    device: &'d Device,
    queue: Option<QueueId>,
    /// Device memory to free once the queue is synchronised.
    frees: Vec<(usize, AllocKind)>,
    /// Mapping entries to remove once the queue is synchronised (if still unreferenced).
    removals: Vec<EntryId>,
}

impl<'d> AsyncInfo<'d> {
    pub fn new(device: &'d Device) -> Self {
        Self {
            device,
            queue: None,
            frees: Vec::new(),
            removals: Vec::new(),
        }
    }

    /// The construct's queue, acquired on first use.
    pub fn queue(&mut self) -> Result<QueueId> {
        match self.queue {
            Some(q) => Ok(q),
            None => {
                let q = self.device.acquire_queue()?;
                self.queue = Some(q);
                Ok(q)
            }
        }
    }

    /// Waits for the construct's work, then runs what had to wait for it.
    pub fn synchronize(mut self) -> Result<()> {
        let mut result = Ok(());
        if let Some(q) = self.queue.take() {
            result = self.device.backend().and_then(|b| {
                b.synchronize(q).map_err(|source| Error::Device {
                    device: self.device.id,
                    what: "synchronising a queue",
                    source,
                })
            });
            self.device.release_queue(q);
        }
        self.finish();
        result
    }

    fn finish(&mut self) {
        for id in std::mem::take(&mut self.removals) {
            remove_if_unreferenced(self.device, id, None);
        }
        for (ptr, kind) in std::mem::take(&mut self.frees) {
            let _ = self.device.free(ptr, kind, None);
        }
    }
}

impl Drop for AsyncInfo<'_> {
    fn drop(&mut self) {
        // An error path dropped us before synchronising: still wait and release, so no
        // memory leaks and no entry stays half-removed.
        if let Some(q) = self.queue.take() {
            if let Ok(b) = self.device.backend() {
                let _ = b.synchronize(q);
            }
            self.device.release_queue(q);
        }
        self.finish();
    }
}

/// Removes entry `id` if nothing references it any more, and frees its memory (on `queue`
/// when the backend orders frees, otherwise right away: the caller synchronised).
fn remove_if_unreferenced(device: &Device, id: EntryId, queue: Option<QueueId>) {
    let removed = {
        let mut table = lock(&device.table);
        match table.get(id) {
            Some(e) if e.total_refs() == Some(0) => table.remove(id),
            _ => None,
        }
    };
    if let Some(e) = removed {
        if e.owns_allocation {
            let _ = device.free(e.tgt_alloc, AllocKind::Device, queue);
        }
    }
}

/// The outcome of looking up or creating the mapping of one map-clause item.
struct TargetPointer {
    /// The device address of the item's first byte (0: none).
    tgt: usize,
}

fn info_on(rt: &Runtime, bit: u32) -> bool {
    rt.config.info & bit != 0
}

fn refs_str(r: RefCount) -> String {
    r.to_string()
}

impl Runtime {
    /// Finds or creates the mapping of one item on entry to a construct (LLVM's
    /// `getTargetPointer`), copying data in when the rules say so.
    #[allow(clippy::too_many_arguments)]
    fn target_pointer(
        &self,
        dev: &Device,
        base: usize,
        begin: usize,
        size: usize,
        ty: u64,
        update_ref: bool,
        name: Option<&'static CStr>,
        ai: &mut AsyncInfo<'_>,
    ) -> Result<TargetPointer> {
        let implicit = ty & mt::IMPLICIT != 0;
        let present = ty & mt::PRESENT != 0;
        let hold = ty & mt::OMPX_HOLD != 0;
        let mut table = lock(&dev.table);
        let l = table.lookup(begin, size);
        let mut is_new = false;
        let tgt;
        if let (true, Some(id)) = (l.contained || (l.is_extension() && implicit), l.entry) {
            let e = table.get_mut(id).expect("lookup returned a live entry");
            if update_ref {
                e.add_ref(hold);
            }
            tgt = e.tgt_ptr(begin);
            if info_on(self, info::MAPPING_EXISTS) {
                device_info(
                    dev.id,
                    format_args!(
                        "Mapping exists{} with HstPtrBegin={}, TgtPtrBegin={}, Size={}, DynRefCount={}{}, HoldRefCount={}{}, Name={}",
                        if implicit { " (implicit)" } else { "" },
                        Addr(begin),
                        Addr(tgt),
                        size,
                        refs_str(e.dyn_refs),
                        if update_ref && !hold {
                            " (incremented)"
                        } else {
                            ""
                        },
                        e.hold_refs,
                        if update_ref && hold {
                            " (incremented)"
                        } else {
                            ""
                        },
                        var_name(name)
                    ),
                );
            }
        } else if l.is_extension() {
            let e = table
                .get(l.entry.expect("extension names an entry"))
                .expect("live");
            message(format_args!(
                "explicit extension not allowed: host address specified is {} ({} bytes), but device allocation maps to host at {} ({} bytes)",
                Addr(begin),
                size,
                Addr(e.host_begin),
                e.size()
            ));
            if present {
                message(format_args!(
                    "device mapping required by 'present' map type modifier does not exist for host address {} ({} bytes)",
                    Addr(begin),
                    size
                ));
            }
            return Err(Error::Extension { host: begin, size });
        } else if present {
            message(format_args!(
                "device mapping required by 'present' map type modifier does not exist for host address {} ({} bytes)",
                Addr(begin),
                size
            ));
            return Err(Error::NotPresent { host: begin, size });
        } else if size > 0 {
            let queue = ai.queue()?;
            let alloc = dev.alloc(size, AllocKind::Device, Some(queue))?;
            let (dyn_refs, hold_refs) = if hold {
                (RefCount::Finite(0), 1)
            } else {
                (RefCount::Finite(1), 0)
            };
            table.insert(Entry {
                host_base: base,
                host_begin: begin,
                host_end: begin + size,
                tgt_alloc: alloc,
                tgt_begin: alloc,
                dyn_refs,
                hold_refs,
                owns_allocation: true,
                name,
            });
            if info_on(self, info::MAPPING_CHANGED) {
                device_info(
                    dev.id,
                    format_args!(
                        "Creating new map entry with HstPtrBase={}, HstPtrBegin={}, TgtAllocBegin={}, TgtPtrBegin={}, Size={}, DynRefCount={}, HoldRefCount={}, Name={}",
                        Addr(base),
                        Addr(begin),
                        Addr(alloc),
                        Addr(alloc),
                        size,
                        refs_str(dyn_refs),
                        hold_refs,
                        var_name(name)
                    ),
                );
            }
            tgt = alloc;
            is_new = true;
        } else {
            // A zero-length section of unmapped data: nothing to map, not an error.
            return Ok(TargetPointer { tgt: 0 });
        }
        let always = ty & mt::ALWAYS != 0;
        if ty & mt::TO != 0 && (is_new || always) && size != 0 {
            if info_on(self, info::DATA_TRANSFER) {
                device_info(
                    dev.id,
                    format_args!(
                        "Copying data from host to device, HstPtr={}, TgtPtr={}, Size={}, Name={}",
                        Addr(begin),
                        Addr(tgt),
                        size,
                        var_name(name)
                    ),
                );
            }
            let queue = ai.queue()?;
            // The copy is issued with the table locked so that no other thread can use the
            // entry before its data is on the device.
            if let Err(e) = dev.copy(CopyKind::HostToDevice, tgt, begin, size, Some(queue)) {
                if is_new {
                    if let Some(entry) = table.remove(begin) {
                        drop(table);
                        let _ = dev.free(entry.tgt_alloc, AllocKind::Device, None);
                    }
                }
                return Err(e);
            }
        }
        Ok(TargetPointer { tgt })
    }

    /// `__tgt_target_data_begin_mapper` on a resolved device.
    pub fn data_begin(
        &self,
        dev: &Device,
        args: &mut MapArgs<'_>,
        ai: &mut AsyncInfo<'_>,
    ) -> Result<()> {
        for i in 0..args.len() {
            let ty = args.ty(i);
            if ty & (mt::LITERAL | mt::PRIVATE) != 0 {
                continue;
            }
            let (base, begin, size) = (args.bases[i], args.begins[i], args.size(i));
            let update_ref = ty & mt::MEMBER_OF == 0;
            let tp =
                match self.target_pointer(dev, base, begin, size, ty, update_ref, args.name(i), ai)
                {
                    Ok(tp) => tp,
                    Err(e) => {
                        let why = if ty & mt::PRESENT != 0 {
                            "'present' map type modifier"
                        } else {
                            "device failure or illegal mapping"
                        };
                        report(format_args!(
                            "Call to getTargetPointer returned null pointer ({why})."
                        ));
                        return Err(e);
                    }
                };
            if ty & mt::RETURN_PARAM != 0 {
                args.bases[i] = tp.tgt.wrapping_sub(begin.wrapping_sub(base));
            }
            if ty & mt::PTR_AND_OBJ != 0 && tp.tgt != 0 {
                self.attach_pointer(dev, base, tp.tgt, begin, ai)?;
            }
        }
        Ok(())
    }

    /// PTR_AND_OBJ: the device copy of the pointer at host address `ptr_addr` must point at
    /// the device copy of the pointee.
    fn attach_pointer(
        &self,
        dev: &Device,
        ptr_addr: usize,
        pointee_tgt: usize,
        pointee_begin: usize,
        ai: &mut AsyncInfo<'_>,
    ) -> Result<()> {
        let word = std::mem::size_of::<usize>();
        let ptr_tgt = {
            let table = lock(&dev.table);
            let l = table.lookup(ptr_addr, word);
            match (l.contained, l.entry) {
                (true, Some(id)) => table.get(id).expect("live").tgt_ptr(ptr_addr),
                _ => return Ok(()),
            }
        };
        // SAFETY: the pointer's host storage is mapped (so it is live host memory of at least
        // a word) and clang guarantees the base of a PTR_AND_OBJ item is a pointer.
        let host_value = unsafe { std::ptr::read_unaligned(ptr_addr as *const usize) };
        let value = pointee_tgt.wrapping_sub(pointee_begin.wrapping_sub(host_value));
        let staged = Box::new(value);
        let queue = ai.queue()?;
        dev.copy(
            CopyKind::HostToDevice,
            ptr_tgt,
            &*staged as *const usize as usize,
            word,
            Some(queue),
        )?;
        // The staged word must outlive the copy: synchronise before dropping it when the
        // backend is asynchronous.
        if dev.backend()?.is_asynchronous() {
            dev.backend()?
                .synchronize(queue)
                .map_err(|source| Error::Device {
                    device: dev.id,
                    what: "synchronising a queue",
                    source,
                })?;
        }
        Ok(())
    }

    /// `__tgt_target_data_end_mapper` on a resolved device.
    pub fn data_end(&self, dev: &Device, args: &MapArgs<'_>, ai: &mut AsyncInfo<'_>) -> Result<()> {
        for i in (0..args.len()).rev() {
            let ty = args.ty(i);
            if ty & (mt::LITERAL | mt::PRIVATE) != 0 {
                continue;
            }
            let (begin, size) = (args.begins[i], args.size(i));
            let implicit = ty & mt::IMPLICIT != 0;
            let update_ref = ty & mt::MEMBER_OF == 0 || ty & mt::PTR_AND_OBJ != 0;
            let delete = ty & mt::DELETE != 0;
            let present = ty & mt::PRESENT != 0;
            let hold = ty & mt::OMPX_HOLD != 0;
            let name = args.name(i);
            let mut table = lock(&dev.table);
            let l = table.lookup(begin, size);
            // An implicit item may extend its mapping; an explicit one must lie inside it.
            let found = if l.contained || (implicit && l.is_extension()) {
                l.entry
            } else {
                None
            };
            let Some(id) = found else {
                if present {
                    message(format_args!(
                        "device mapping required by 'present' map type modifier does not exist for host address {} ({} bytes)",
                        Addr(begin),
                        size
                    ));
                    return Err(Error::NotPresent { host: begin, size });
                }
                continue;
            };
            let e = table.get_mut(id).expect("live entry");
            let is_last = e.release_would_remove(hold, delete);
            if delete || update_ref {
                e.release(hold, delete);
            }
            let tgt = e.tgt_ptr(begin);
            if info_on(self, info::MAPPING_EXISTS) && !is_last {
                device_info(
                    dev.id,
                    format_args!(
                        "Mapping exists with HstPtrBegin={}, TgtPtrBegin={}, Size={}, DynRefCount={}{}, HoldRefCount={}{}",
                        Addr(begin),
                        Addr(tgt),
                        size,
                        refs_str(e.dyn_refs),
                        if update_ref && !hold {
                            " (decremented)"
                        } else {
                            ""
                        },
                        e.hold_refs,
                        if update_ref && hold {
                            " (decremented)"
                        } else {
                            ""
                        },
                    ),
                );
            }
            let always = ty & mt::ALWAYS != 0;
            if ty & mt::FROM != 0 && (always || is_last) && size != 0 {
                if info_on(self, info::DATA_TRANSFER) {
                    device_info(
                        dev.id,
                        format_args!(
                            "Copying data from device to host, TgtPtr={}, HstPtr={}, Size={}, Name={}",
                            Addr(tgt),
                            Addr(begin),
                            size,
                            var_name(name)
                        ),
                    );
                }
                let queue = ai.queue()?;
                dev.copy(CopyKind::DeviceToHost, begin, tgt, size, Some(queue))?;
            }
            if is_last {
                if info_on(self, info::MAPPING_CHANGED) {
                    let e = table.get(id).expect("live");
                    device_info(
                        dev.id,
                        format_args!(
                            "Removing map entry with HstPtrBegin={}, TgtPtrBegin={}, Size={}, Name={}",
                            Addr(e.host_begin),
                            Addr(e.tgt_begin),
                            e.size(),
                            var_name(e.name)
                        ),
                    );
                }
                drop(table);
                if dev.orders_free_on_queue() {
                    // Stream-ordered (or synchronous) backend: the free can be queued now,
                    // behind the copy-out.
                    let queue = ai.queue()?;
                    remove_if_unreferenced(dev, id, Some(queue));
                } else {
                    ai.removals.push(id);
                }
            }
        }
        Ok(())
    }

    /// `__tgt_target_data_update_mapper` on a resolved device.
    pub fn data_update(
        &self,
        dev: &Device,
        args: &MapArgs<'_>,
        ai: &mut AsyncInfo<'_>,
    ) -> Result<()> {
        for i in 0..args.len() {
            let ty = args.ty(i);
            if ty & (mt::LITERAL | mt::PRIVATE) != 0 {
                continue;
            }
            let (begin, size) = (args.begins[i], args.size(i));
            let table = lock(&dev.table);
            let l = table.lookup(begin, size);
            let Some(id) = l.entry.filter(|_| l.contained) else {
                if ty & mt::PRESENT != 0 {
                    message(format_args!(
                        "device mapping required by 'present' motion modifier does not exist for host address {} ({} bytes)",
                        Addr(begin),
                        size
                    ));
                    return Err(Error::NotPresent { host: begin, size });
                }
                continue;
            };
            let tgt = table.get(id).expect("live").tgt_ptr(begin);
            drop(table);
            if size == 0 {
                continue;
            }
            let queue = ai.queue()?;
            if ty & mt::TO != 0 {
                if info_on(self, info::DATA_TRANSFER) {
                    device_info(
                        dev.id,
                        format_args!(
                            "Copying data from host to device, HstPtr={}, TgtPtr={}, Size={}, Name={}",
                            Addr(begin),
                            Addr(tgt),
                            size,
                            var_name(args.name(i))
                        ),
                    );
                }
                dev.copy(CopyKind::HostToDevice, tgt, begin, size, Some(queue))?;
            }
            if ty & mt::FROM != 0 {
                if info_on(self, info::DATA_TRANSFER) {
                    device_info(
                        dev.id,
                        format_args!(
                            "Copying data from device to host, TgtPtr={}, HstPtr={}, Size={}, Name={}",
                            Addr(tgt),
                            Addr(begin),
                            size,
                            var_name(args.name(i))
                        ),
                    );
                }
                dev.copy(CopyKind::DeviceToHost, begin, tgt, size, Some(queue))?;
            }
        }
        Ok(())
    }

    /// A target region: map, launch, unmap (LLVM's `target`). The caller synchronises.
    pub fn target(
        &self,
        dev: &Device,
        host_ptr: usize,
        args: &mut MapArgs<'_>,
        config: &LaunchConfig,
        ai: &mut AsyncInfo<'_>,
    ) -> Result<()> {
        let Some(kernel) = dev.kernel(host_ptr) else {
            report(format_args!(
                "Host ptr {} does not have a matching target pointer.",
                Addr(host_ptr)
            ));
            return Err(Error::NoKernel { host_ptr });
        };
        if let Err(e) = self.data_begin(dev, args, ai) {
            report(format_args!(
                "Call to targetDataBegin failed, abort target."
            ));
            report(format_args!(
                "Failed to process data before launching the kernel."
            ));
            return Err(e);
        }
        let mut words: Vec<usize> = Vec::with_capacity(args.len());
        for i in 0..args.len() {
            let ty = args.ty(i);
            if ty & mt::TARGET_PARAM == 0 {
                continue;
            }
            let (base, begin, size) = (args.bases[i], args.begins[i], args.size(i));
            if ty & mt::LITERAL != 0 {
                words.push(base);
            } else if ty & mt::PRIVATE != 0 {
                let offset = base.wrapping_sub(begin);
                let queue = ai.queue()?;
                let ptr = dev.alloc(size.max(1), AllocKind::Device, Some(queue))?;
                ai.frees.push((ptr, AllocKind::Device));
                if ty & mt::TO != 0 && size != 0 {
                    dev.copy(CopyKind::HostToDevice, ptr, begin, size, Some(queue))?;
                }
                words.push(ptr.wrapping_add(offset));
            } else {
                let mut base = base;
                if ty & mt::PTR_AND_OBJ != 0 {
                    // SAFETY: for PTR_AND_OBJ the base is the address of a host pointer.
                    base = unsafe { std::ptr::read_unaligned(base as *const usize) };
                }
                let table = lock(&dev.table);
                let l = table.lookup(begin, size);
                let tgt = match (l.contained, l.entry) {
                    (true, Some(id)) => table.get(id).expect("live").tgt_ptr(begin),
                    _ => 0,
                };
                words.push(tgt.wrapping_add(base.wrapping_sub(begin)));
            }
        }
        let queue = ai.queue()?;
        let launched = dev
            .backend()?
            .launch(kernel, &words, config, queue)
            .map_err(|source| Error::Device {
                device: dev.id,
                what: "launching a kernel",
                source,
            });
        if let Err(e) = launched {
            report(format_args!("Executing target region abort target."));
            return Err(e);
        }
        if let Err(e) = self.data_end(dev, args, ai) {
            report(format_args!("Call to targetDataEnd failed, abort target."));
            report(format_args!(
                "Failed to process data after launching the kernel."
            ));
            return Err(e);
        }
        Ok(())
    }
}

/// `ompx_dump_mapping_tables` and the `LIBOMPTARGET_INFO` 0x04 dump.
pub fn dump_table(dev: &Device, source: Option<&str>) {
    let table = lock(&dev.table);
    device_info(
        dev.id,
        format_args!(
            "OpenMP Host-Device pointer mappings after block at {}:",
            source.unwrap_or("unknown:0:0")
        ),
    );
    device_info(
        dev.id,
        format_args!(
            "Host Ptr           Target Ptr         Size (B) DynRefCount HoldRefCount Declaration"
        ),
    );
    for e in table.iter() {
        device_info(
            dev.id,
            format_args!(
                "{} {} {:<8} {:<11} {:<12} {}",
                Addr(e.host_begin),
                Addr(e.tgt_begin),
                e.size(),
                refs_str(e.dyn_refs),
                e.hold_refs,
                var_name(e.name)
            ),
        );
    }
}

impl Runtime {
    /// `omp_target_is_present` on a real device.
    pub fn is_present(&self, dev: &Device, ptr: usize) -> bool {
        let table = lock(&dev.table);
        table.lookup(ptr, 0).contained
    }

    /// `omp_get_mapped_ptr` on a real device.
    pub fn mapped_ptr(&self, dev: &Device, ptr: usize) -> Option<usize> {
        let table = lock(&dev.table);
        let l = table.lookup(ptr, 1);
        match (l.contained, l.entry) {
            (true, Some(id)) => Some(table.get(id).expect("live").tgt_ptr(ptr)),
            _ => None,
        }
    }
}
