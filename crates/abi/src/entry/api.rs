//! The OpenMP device-memory routines (`omp_target_*`), LLVM's `llvm_omp_*` extensions and
//! debugging aids (`ompx_dump_mapping_tables`, `__tgt_set_info_flag`, `__tgt_print_device_info`).

use super::*;

export! {
    fn omp_get_num_devices() -> c_int = 0; {
        runtime().num_devices() as c_int
    }
}
export! {
    fn omp_get_initial_device() -> c_int = -1; {
        runtime().initial_device() as c_int
    }
}
export! {
    /// On the host the device number is the initial device's.
    fn omp_get_device_num() -> c_int = -1; {
        runtime().initial_device() as c_int
    }
}

fn checked_device(rt: &Runtime, device: c_int) -> i64 {
    let id = i64::from(device);
    if id != rt.initial_device() && (id < 0 || id >= rt.num_devices() as i64) {
        invalid_device(rt.process_abi(), id, rt.num_devices());
    }
    id
}

fn alloc(size: usize, device: c_int, kind: AllocKind) -> *mut c_void {
    let rt = runtime();
    let _tools = super::ompt::api_call();
    if size == 0 {
        return std::ptr::null_mut();
    }
    let id = checked_device(rt, device);
    match rt.target_alloc(size, id, kind) {
        Ok(p) => p as *mut c_void,
        // The device's refusal was reported where it happened, in LLVM's words.
        Err(Error::Device {
            what: "allocating device memory",
            ..
        }) => std::ptr::null_mut(),
        Err(e) => {
            report(format_args!("{e}"));
            std::ptr::null_mut()
        }
    }
}

fn free(ptr: *mut c_void, device: c_int, kind: AllocKind) {
    if ptr.is_null() {
        return;
    }
    let rt = runtime();
    let _tools = super::ompt::api_call();
    let id = checked_device(rt, device);
    if let Err(e) = rt.target_free(ptr as usize, id, kind) {
        report(format_args!("{e}"));
    }
}

export_ra! {
    fn omp_target_alloc(size: usize, device: c_int) -> *mut c_void = std::ptr::null_mut(); {
        alloc(size, device, AllocKind::Device)
    }
}
export_ra! {
    fn llvm_omp_target_alloc_device(size: usize, device: c_int) -> *mut c_void = std::ptr::null_mut(); {
        alloc(size, device, AllocKind::Device)
    }
}
export_ra! {
    fn llvm_omp_target_alloc_host(size: usize, device: c_int) -> *mut c_void = std::ptr::null_mut(); {
        alloc(size, device, AllocKind::Host)
    }
}
export_ra! {
    fn llvm_omp_target_alloc_shared(size: usize, device: c_int) -> *mut c_void = std::ptr::null_mut(); {
        alloc(size, device, AllocKind::Shared)
    }
}
export_ra! {
    fn omp_target_free(ptr: *mut c_void, device: c_int) {
        free(ptr, device, AllocKind::Device)
    }
}
export_ra! {
    fn llvm_omp_target_free_device(ptr: *mut c_void, device: c_int) {
        free(ptr, device, AllocKind::Device)
    }
}
export_ra! {
    fn llvm_omp_target_free_host(ptr: *mut c_void, device: c_int) {
        free(ptr, device, AllocKind::Host)
    }
}
export_ra! {
    fn llvm_omp_target_free_shared(ptr: *mut c_void, device: c_int) {
        free(ptr, device, AllocKind::Shared)
    }
}
export! {
    /// Device-side only: on the host there is no dynamic shared memory.
    fn llvm_omp_target_dynamic_shared_alloc() -> *mut c_void = std::ptr::null_mut(); {
        std::ptr::null_mut()
    }
}

export! {
    /// A null pointer is answered 0 before the device number is looked at, whatever it is
    /// (LLVM 19 and 22; `tests/c/api_bad_args.h`).
    fn omp_target_is_present(ptr: *const c_void, device: c_int) -> c_int = 0; {
        if ptr.is_null() {
            return 0;
        }
        let rt = runtime();
        let id = checked_device(rt, device);
        if id == rt.initial_device() {
            return 1;
        }
        c_int::from(rt.target_is_present(ptr as usize, id))
    }
}

export! {
    /// OpenMP 5.1; LLVM 19 lacks it (docs/DIVERGENCES.md). `omp_initial_device` (-1) names the
    /// host (OpenMP 5.2). A device number that names no device gives 0 in a clang-19 process
    /// (the question has an answer) and LLVM 22's fatal error in a clang-22 one.
    fn omp_target_is_accessible(ptr: *const c_void, size: usize, device: c_int) -> c_int = 0; {
        let rt = runtime();
        if ptr.is_null() {
            return 0;
        }
        if device == -1 {
            return 1;
        }
        if rt.process_abi() == Abi::Llvm22 {
            checked_device(rt, device);
        }
        c_int::from(rt.target_is_accessible(ptr as usize, size, i64::from(device)))
    }
}

export! {
    fn omp_get_mapped_ptr(ptr: *const c_void, device: c_int) -> *mut c_void = std::ptr::null_mut(); {
        let rt = runtime();
        let id = i64::from(device);
        if ptr.is_null() {
            report(format_args!("Call to omp_get_mapped_ptr with nullptr."));
            return std::ptr::null_mut();
        }
        if id == rt.initial_device() {
            return ptr as *mut c_void;
        }
        // As LLVM 19 and 22: a number past the devices is answered null, a negative one
        // (`omp_initial_device` and `omp_invalid_device` included) is fatal.
        if id > rt.initial_device() {
            return std::ptr::null_mut();
        }
        checked_device(rt, device);
        // The address leaves the runtime (the program may hand it to code the mapping table
        // does not see): a routine that works by address.
        match rt.device_by_address(id) {
            Ok(dev) => rt.mapped_ptr(&dev, ptr as usize).unwrap_or(0) as *mut c_void,
            Err(_) => std::ptr::null_mut(),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn memcpy(
    dst: *mut c_void,
    src: *const c_void,
    length: usize,
    dst_offset: usize,
    src_offset: usize,
    dst_device: c_int,
    src_device: c_int,
) -> c_int {
    if length == 0 {
        return OFFLOAD_SUCCESS;
    }
    if dst.is_null() || src.is_null() {
        report(format_args!(
            "Call to omp_target_memcpy with invalid arguments"
        ));
        return OFFLOAD_FAIL;
    }
    let rt = runtime();
    let _tools = super::ompt::api_call();
    let dst_id = checked_device(rt, dst_device);
    let src_id = checked_device(rt, src_device);
    match rt.target_memcpy(
        dst as usize,
        src as usize,
        length,
        dst_offset,
        src_offset,
        dst_id,
        src_id,
    ) {
        Ok(()) => OFFLOAD_SUCCESS,
        Err(e) => {
            report(format_args!("{e}"));
            OFFLOAD_FAIL
        }
    }
}

export_ra! {
    fn omp_target_memcpy(dst: *mut c_void, src: *const c_void, length: usize, dst_offset: usize,
                         src_offset: usize, dst_device: c_int, src_device: c_int) -> c_int = OFFLOAD_FAIL; {
        memcpy(dst, src, length, dst_offset, src_offset, dst_device, src_device)
    }
}

/// One dimension of `omp_target_memcpy_rect` at a time, down to contiguous rows.
///
/// # Safety
/// The arrays hold `dims` elements each.
#[allow(clippy::too_many_arguments)]
unsafe fn memcpy_rect(
    dst: *mut c_void,
    src: *const c_void,
    elem: usize,
    dims: usize,
    volume: *const usize,
    dst_offsets: *const usize,
    src_offsets: *const usize,
    dst_dims: *const usize,
    src_dims: *const usize,
    dst_device: c_int,
    src_device: c_int,
) -> c_int {
    // SAFETY: each array has `dims` elements (the caller's contract).
    unsafe {
        if dims == 1 {
            return memcpy(
                dst,
                src,
                elem * *volume,
                elem * *dst_offsets,
                elem * *src_offsets,
                dst_device,
                src_device,
            );
        }
        let dst_slice: usize = elem * (1..dims).map(|i| *dst_dims.add(i)).product::<usize>();
        let src_slice: usize = elem * (1..dims).map(|i| *src_dims.add(i)).product::<usize>();
        let dst_base = (dst as usize) + *dst_offsets * dst_slice;
        let src_base = (src as usize) + *src_offsets * src_slice;
        for i in 0..*volume {
            let rc = memcpy_rect(
                (dst_base + i * dst_slice) as *mut c_void,
                (src_base + i * src_slice) as *const c_void,
                elem,
                dims - 1,
                volume.add(1),
                dst_offsets.add(1),
                src_offsets.add(1),
                dst_dims.add(1),
                src_dims.add(1),
                dst_device,
                src_device,
            );
            if rc != OFFLOAD_SUCCESS {
                return rc;
            }
        }
        OFFLOAD_SUCCESS
    }
}

export_ra! {
    fn omp_target_memcpy_rect(dst: *mut c_void, src: *const c_void, elem: usize, dims: c_int,
                              volume: *const usize, dst_offsets: *const usize,
                              src_offsets: *const usize, dst_dims: *const usize,
                              src_dims: *const usize, dst_device: c_int,
                              src_device: c_int) -> c_int = OFFLOAD_FAIL; {
        // Both null: the caller asks for the number of dimensions supported.
        if dst.is_null() && src.is_null() {
            return c_int::MAX;
        }
        if dst.is_null() || src.is_null() || elem < 1 || dims < 1 || volume.is_null()
            || dst_offsets.is_null() || src_offsets.is_null() || dst_dims.is_null()
            || src_dims.is_null()
        {
            report(format_args!("Call to omp_target_memcpy_rect with invalid arguments"));
            return OFFLOAD_FAIL;
        }
        // SAFETY: every array is non-null and has `dims` elements (OpenMP's contract).
        unsafe {
            memcpy_rect(dst, src, elem, dims as usize, volume, dst_offsets, src_offsets,
                        dst_dims, src_dims, dst_device, src_device)
        }
    }
}

export! {
    fn ompx_dump_mapping_tables() {
        for d in runtime().devices() {
            d.dump_table(&SourceLoc::RUNTIME, true);
        }
    }
}

export! {
    fn __tgt_set_info_flag(flags: u32) {
        runtime().set_info_level(flags);
    }
}

export! {
    fn __tgt_print_device_info(device: i64) -> c_int = 0; {
        let rt = runtime();
        match rt.device_unloaded(device).and_then(|d| d.backend().map(|b| b.info())) {
            Ok(info) => {
                println!("Device {device}: {}", info.name);
                for (k, v) in info.properties {
                    println!("    {k:<40} {v}");
                }
                1
            }
            Err(e) => {
                report(format_args!("{e}"));
                0
            }
        }
    }
}

fn memset(ptr: *mut c_void, value: c_int, size: usize, device: c_int) -> *mut c_void {
    // A null pointer or an empty range is a no-op, as in LLVM.
    if ptr.is_null() || size == 0 {
        return ptr;
    }
    let rt = runtime();
    let id = checked_device(rt, device);
    if id == rt.initial_device() {
        // SAFETY: the caller owns `size` bytes at ptr on the host.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), value as u8, size) };
    } else if let Err(e) = rt.target_memset(ptr as usize, value as u8, size, id) {
        report(format_args!("{e}"));
    }
    ptr
}

export_ra! {
    fn omp_target_memset(ptr: *mut c_void, value: c_int, size: usize, device: c_int) -> *mut c_void = ptr; {
        memset(ptr, value, size, device)
    }
}

export_ra! {
    fn omp_target_associate_ptr(host: *const c_void, device_ptr: *const c_void, size: usize,
                                offset: usize, device: c_int) -> c_int = OFFLOAD_FAIL; {
        if host.is_null() || device_ptr.is_null() || size == 0 {
            report(format_args!("Call to omp_target_associate_ptr with invalid arguments"));
            return OFFLOAD_FAIL;
        }
        let rt = runtime();
        let id = checked_device(rt, device);
        if id == rt.initial_device() {
            report(format_args!("omp_target_associate_ptr: no association possible on the host"));
            return OFFLOAD_FAIL;
        }
        let _tools = super::ompt::api_call();
        // The device address may wrap around (to 0, even): it is checked where it is used, as
        // LLVM 19 does, so a region that maps it fails with LLVM's words.
        match rt.associate_ptr(host as usize, (device_ptr as usize).wrapping_add(offset), size, id) {
            Ok(()) => OFFLOAD_SUCCESS,
            Err(e) => {
                report(format_args!("{e}"));
                OFFLOAD_FAIL
            }
        }
    }
}

export_ra! {
    fn omp_target_disassociate_ptr(host: *const c_void, device: c_int) -> c_int = OFFLOAD_FAIL; {
        if host.is_null() {
            report(format_args!("Call to omp_target_disassociate_ptr with invalid host_ptr"));
            return OFFLOAD_FAIL;
        }
        let rt = runtime();
        let id = checked_device(rt, device);
        if id == rt.initial_device() {
            report(format_args!("omp_target_disassociate_ptr: no association possible on the host"));
            return OFFLOAD_FAIL;
        }
        let _tools = super::ompt::api_call();
        match rt.disassociate_ptr(host as usize, id) {
            Ok(()) => OFFLOAD_SUCCESS,
            Err(e) => {
                report(format_args!("{e}"));
                OFFLOAD_FAIL
            }
        }
    }
}

export_ra! {
    /// Waits for the depend objects (through libomp), then copies. Completing before
    /// returning is a valid schedule of the asynchronous routine.
    fn omp_target_memcpy_async(dst: *mut c_void, src: *const c_void, length: usize,
                               dst_offset: usize, src_offset: usize, dst_device: c_int,
                               src_device: c_int, ndeps: c_int, deps: *mut c_void) -> c_int = OFFLOAD_FAIL; {
        if length == 0 {
            return OFFLOAD_SUCCESS;
        }
        if dst.is_null() || src.is_null() {
            report(format_args!("Call to omp_target_memcpy_async with invalid arguments"));
            return OFFLOAD_FAIL;
        }
        crate::host::wait_depend_objects(ndeps, deps);
        memcpy(dst, src, length, dst_offset, src_offset, dst_device, src_device)
    }
}

export_ra! {
    fn omp_target_memcpy_rect_async(dst: *mut c_void, src: *const c_void, elem: usize,
                                    dims: c_int, volume: *const usize, dst_offsets: *const usize,
                                    src_offsets: *const usize, dst_dims: *const usize,
                                    src_dims: *const usize, dst_device: c_int, src_device: c_int,
                                    ndeps: c_int, deps: *mut c_void) -> c_int = OFFLOAD_FAIL; {
        if dst.is_null() && src.is_null() {
            return c_int::MAX;
        }
        crate::host::wait_depend_objects(ndeps, deps);
        // SAFETY: forwarded unchanged; omp_target_memcpy_rect validates them.
        unsafe {
            omp_target_memcpy_rect(dst, src, elem, dims, volume, dst_offsets, src_offsets,
                                   dst_dims, src_dims, dst_device, src_device)
        }
    }
}

export_ra! {
    fn omp_target_memset_async(ptr: *mut c_void, value: c_int, size: usize, device: c_int,
                               ndeps: c_int, deps: *mut c_void) -> *mut c_void = ptr; {
        crate::host::wait_depend_objects(ndeps, deps);
        memset(ptr, value, size, device)
    }
}

export! {
    fn llvm_omp_target_lock_mem(ptr: *mut c_void, size: usize, device: c_int) -> *mut c_void = std::ptr::null_mut(); {
        let rt = runtime();
        let id = checked_device(rt, device);
        if ptr.is_null() || id == rt.initial_device() {
            return ptr;
        }
        match rt.lock_host_memory(ptr as usize, size, id) {
            Ok(p) => p as *mut c_void,
            Err(e) => {
                report(format_args!("{e}"));
                std::ptr::null_mut()
            }
        }
    }
}

export! {
    fn llvm_omp_target_unlock_mem(ptr: *mut c_void, device: c_int) {
        let rt = runtime();
        let id = checked_device(rt, device);
        if ptr.is_null() || id == rt.initial_device() {
            return;
        }
        if let Err(e) = rt.unlock_host_memory(ptr as usize, id) {
            report(format_args!("{e}"));
        }
    }
}

/// OpenMP 6.0's UID of the host device (LLVM 22's spelling).
const HOST_UID: &CStr = c"HOST";

/// `omp_invalid_device` (OpenMP 5.2).
const INVALID_DEVICE: c_int = -2;

export! {
    /// OpenMP 6.0: the device whose unique identifier is `uid` (`"HOST"` for the initial
    /// device), or `omp_invalid_device` when no device has it.
    fn omp_get_device_from_uid(uid: *const c_char) -> c_int = INVALID_DEVICE; {
        if uid.is_null() {
            return INVALID_DEVICE;
        }
        // SAFETY: the caller passes a NUL-terminated string (OpenMP's contract).
        let uid = unsafe { CStr::from_ptr(uid) };
        let rt = runtime();
        if uid == HOST_UID {
            return rt.initial_device() as c_int;
        }
        rt.devices()
            .iter()
            .find(|d| d.uid() == uid)
            .map_or(INVALID_DEVICE, |d| d.id as c_int)
    }
}

export! {
    /// OpenMP 6.0: the unique identifier of device `device` (`<plugin>-<vendor uid>`, `"HOST"`
    /// for the initial device); null for `omp_invalid_device`; a device number that names no
    /// device is LLVM's fatal error.
    fn omp_get_uid_from_device(device: c_int) -> *const c_char = std::ptr::null(); {
        if device == INVALID_DEVICE {
            return std::ptr::null();
        }
        let rt = runtime();
        let id = checked_device(rt, device);
        if id == rt.initial_device() {
            return HOST_UID.as_ptr();
        }
        match rt.device_for_api(id) {
            // The identifier lives as long as the device, that is as long as the process.
            Ok(dev) => dev.uid().as_ptr(),
            Err(e) => {
                report(format_args!("{e}"));
                std::ptr::null()
            }
        }
    }
}
