//! Registration of a program's (or a shared library's) offload descriptor.

use super::*;

/// Decodes a host entry table of either layout (`omptarget_core::image::decode_entry_table`).
///
/// # Safety
/// `begin..end` must be the entry table clang emitted.
unsafe fn decode_entries(
    begin: *mut c_void,
    end: *mut c_void,
) -> Result<Vec<OffloadEntry>, String> {
    if begin.is_null() || end.is_null() || begin == end {
        return Ok(Vec::new());
    }
    let bytes = (end as usize)
        .checked_sub(begin as usize)
        .ok_or("host entries end before they begin")?;
    // SAFETY: the table is clang's array of entries between the two symbols.
    let table = unsafe { std::slice::from_raw_parts(begin as *const u8, bytes) };
    omptarget_core::image::decode_entry_table(table, |p| {
        if p == 0 {
            return Err("an offload entry has no name".into());
        }
        // SAFETY: entry names are NUL-terminated constant strings of the program.
        Ok(unsafe { CStr::from_ptr(p as *const c_char) })
    })
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
        let entries = match unsafe { decode_entries(d.host_entries_begin, d.host_entries_end) } {
            Ok(e) => e,
            Err(why) => {
                report(format_args!("__tgt_register_lib: {why}; nothing registered"));
                return;
            }
        };
        runtime().register(desc as usize, &images, entries);
    }
}

export! {
    fn __tgt_unregister_lib(desc: *mut BinDesc) {
        if desc.is_null() {
            return;
        }
        if let Some(rt) = RUNTIME.get() {
            rt.unregister(desc as usize);
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
