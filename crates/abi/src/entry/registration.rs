//! Registration of a program's (or a shared library's) offload descriptor.

use super::*;

/// Decodes a host entry table of either layout (`omptarget_core::image::decode_entry_table`),
/// and says which ABI the layout belongs to (`None` for an empty table).
///
/// # Safety
/// `begin..end` must be the entry table clang emitted.
unsafe fn decode_entries(
    begin: *mut c_void,
    end: *mut c_void,
) -> Result<(Vec<OffloadEntry>, Option<Abi>), String> {
    if begin.is_null() || end.is_null() || begin == end {
        return Ok((Vec::new(), None));
    }
    let bytes = (end as usize)
        .checked_sub(begin as usize)
        .ok_or("host entries end before they begin")?;
    // SAFETY: the table is clang's array of entries between the two symbols.
    let table = unsafe { std::slice::from_raw_parts(begin as *const u8, bytes) };
    let entries = omptarget_core::image::decode_entry_table(table, |p| {
        if p == 0 {
            return Err("an offload entry has no name".into());
        }
        // SAFETY: entry names are NUL-terminated constant strings of the program.
        Ok(unsafe { CStr::from_ptr(p as *const c_char) })
    })?;
    Ok((entries, omptarget_core::image::entry_table_abi(table)))
}

/// The address range of the loaded program or library whose segments hold `addr` (from the
/// dynamic loader's list of objects; empty if none does).
pub(crate) fn object_containing(addr: usize) -> std::ops::Range<usize> {
    struct Search {
        addr: usize,
        found: std::ops::Range<usize>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> libc::c_int {
        // SAFETY: the dynamic loader passes a valid record; `data` is our Search.
        let (info, search) = unsafe { (&*info, &mut *data.cast::<Search>()) };
        if info.dlpi_phdr.is_null() {
            return 0;
        }
        // SAFETY: dlpi_phdr points at dlpi_phnum program headers.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
        let base = info.dlpi_addr as usize;
        let segments = headers
            .iter()
            .filter(|h| h.p_type == libc::PT_LOAD)
            .map(|h| base + h.p_vaddr as usize..base + (h.p_vaddr + h.p_memsz) as usize);
        let (mut lo, mut hi, mut holds) = (usize::MAX, 0, false);
        for seg in segments {
            holds |= seg.contains(&search.addr);
            lo = lo.min(seg.start);
            hi = hi.max(seg.end);
        }
        if holds {
            search.found = lo..hi;
            return 1;
        }
        0
    }
    let mut search = Search { addr, found: 0..0 };
    // SAFETY: the callback only reads the records it is given and writes our Search.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut search).cast()) };
    search.found
}

/// The ABI of the process's own calls: our library was first loaded under the name the
/// program (or the first library) needs, `libomptarget.so.22.1` for clang 22.
pub(crate) fn process_abi() -> Abi {
    // SAFETY: Dl_info is four plain pointers, for which all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr reads the loader's tables for an address inside our own library.
    let found = unsafe { libc::dladdr(process_abi as *const c_void, &mut info) } != 0;
    if found && !info.dli_fname.is_null() {
        // SAFETY: dli_fname is the NUL-terminated path the object was opened under.
        let name = unsafe { CStr::from_ptr(info.dli_fname) };
        if name.to_bytes().ends_with(b"libomptarget.so.22.1") {
            return Abi::Llvm22;
        }
    }
    Abi::Llvm19
}

export! {
    fn __tgt_register_lib(desc: *mut BinDesc) {
        if desc.is_null() {
            report(format_args!("__tgt_register_lib called with a null descriptor; nothing registered"));
            return;
        }
        // SAFETY: clang's registration code passes its static descriptor.
        let d = unsafe { &*desc };
        let count = usize::try_from(d.num_device_images).unwrap_or(0);
        if count > 0 && d.device_images.is_null() {
            report(format_args!("__tgt_register_lib: descriptor lists {count} images but no image array"));
            return;
        }
        let mut images: Vec<&'static [u8]> = Vec::with_capacity(count);
        for i in 0..count {
            // SAFETY: the descriptor holds `count` images.
            let img = unsafe { &*d.device_images.add(i) };
            let (start, end) = (img.image_start as usize, img.image_end as usize);
            if start == 0 || end < start {
                report(format_args!("__tgt_register_lib: device image {i} has an invalid range"));
                continue;
            }
            // SAFETY: the image bytes are part of the program and live until it unregisters.
            images.push(unsafe { std::slice::from_raw_parts(start as *const u8, end - start) });
        }
        // SAFETY: the host entry table comes from the same descriptor.
        let (entries, abi) = match unsafe { decode_entries(d.host_entries_begin, d.host_entries_end) } {
            Ok(e) => e,
            Err(why) => {
                report(format_args!("__tgt_register_lib: {why}; nothing registered"));
                return;
            }
        };
        let rt = runtime();
        let abi = abi.unwrap_or_else(|| rt.process_abi());
        rt.register_binary(desc as usize, &images, entries, abi, object_containing(desc as usize));
    }
}

export! {
    fn __tgt_unregister_lib(desc: *mut BinDesc) {
        if desc.is_null() {
            return;
        }
        if let Some(rt) = RUNTIME.get() {
            if in_main_program(desc as usize) {
                // Only exit unregisters the program's own binary (it is never dlclosed):
                // constructs still running on other threads finish before anything unloads,
                // and those they begin meanwhile wait until it is unloaded. First the tasks
                // `main` generated (`target nowait` regions of this image) complete.
                crate::host::wait_for_initial_tasks();
                rt.begin_exit(EXIT_WAIT);
                rt.unregister_at_exit(desc as usize);
                rt.end_exit();
            } else {
                rt.unregister(desc as usize);
            }
        }
    }
}

export! {
    fn __tgt_register_requires(_flags: i64) {
        // LLVM 19 takes requirements from the 0x10 host entry only; clang ≤ 18's call is
        // answered as LLVM 19 answers it, and changes nothing.
        omptarget_core::message::message(format_args!(
            "The void __tgt_register_requires(int64_t) function has been removed. Old OpenMP requirements will not be handled"
        ));
    }
}

export! {
    fn __tgt_init_all_rtls() {
        let _ = runtime();
    }
}
export! {
    fn __tgt_rtl_init() {}
}
export! {
    fn __tgt_rtl_deinit() {}
}

/// How long the program's exit waits for constructs running on other threads.
const EXIT_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether `addr` lies in the main program (not in a shared library).
fn in_main_program(addr: usize) -> bool {
    // SAFETY: getauxval has no preconditions; dladdr only reads the loader's tables and
    // writes the Dl_info we pass (zeroed, plain data).
    unsafe {
        let phdr = libc::getauxval(libc::AT_PHDR) as usize;
        if phdr == 0 {
            return false;
        }
        let mut main: libc::Dl_info = std::mem::zeroed();
        let mut it: libc::Dl_info = std::mem::zeroed();
        libc::dladdr(phdr as *const c_void, &mut main) != 0
            && libc::dladdr(addr as *const c_void, &mut it) != 0
            && !main.dli_fbase.is_null()
            && main.dli_fbase == it.dli_fbase
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_object_of_a_registered_address_is_found() {
        static MARKER: u8 = 0;
        let range = object_containing(&raw const MARKER as usize);
        assert!(range.contains(&(&raw const MARKER as usize)));
        assert!(object_containing(8).is_empty());
    }
}
