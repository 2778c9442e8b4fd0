//! Every symbol LLVM 19's `libomptarget.so.19.1` exports, versioned `VERS1.0` by
//! `libomptarget.map`.

use crate::ffi::{
    BinDesc, Ident, KernelArgs, OffloadEntry32, OffloadEntryV20, export, unsupported,
};
use omptarget_core::image::OffloadEntry;
use omptarget_core::message::{fatal, report};
use omptarget_core::ops::MapperComponents;
use omptarget_core::ops::trace::{self, Region, SourceLoc};
use omptarget_core::plugin::{AllocKind, LaunchConfig};
use omptarget_core::runtime::default_plugins;
use omptarget_core::{AsyncInfo, Config, Device, Error, MapArgs, Runtime};
use std::cell::Cell;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::{Arc, OnceLock};

const OFFLOAD_SUCCESS: c_int = 0;
const OFFLOAD_FAIL: c_int = !0;

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The process's runtime, created on first use.
pub fn runtime() -> &'static Runtime {
    RUNTIME.get_or_init(|| {
        let config = Config::from_env();
        let plugins = default_plugins(&config);
        Runtime::new(config, plugins, Box::new(crate::host::Libomp::new()))
    })
}

thread_local! {
    /// `__kmpc_push_target_tripcount`: the trip count for this thread's next kernel.
    static TRIPCOUNT: Cell<u64> = const { Cell::new(0) };
}

/// `file:line:col` of an `ident_t` (`psource` = `;file;function;line;col;;`).
fn source_of(loc: *const Ident) -> SourceLoc {
    let mut out = SourceLoc::default();
    if loc.is_null() {
        return out;
    }
    // SAFETY: a non-null ident_t comes from clang and lives as long as the program.
    let psource = unsafe { (*loc).psource };
    if psource.is_null() {
        return out;
    }
    // SAFETY: psource is a NUL-terminated constant string.
    let Ok(s) = unsafe { CStr::from_ptr(psource) }.to_str() else {
        return out;
    };
    let mut parts = s.split(';').skip(1);
    out.file = parts.next().filter(|f| !f.is_empty());
    let _function = parts.next();
    out.line = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
    out.col = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
    out
}

fn outcome(rt: &Runtime, ok: bool, loc: *const Ident) {
    if ok {
        return;
    }
    let src = source_of(loc);
    let known = src.line != 0 || src.col != 0;
    rt.handle_outcome(
        false,
        known.then(|| (src.file.unwrap_or("unknown"), src.line, src.col)),
    );
}

/// LLVM's fatal error for a device number that names no device.
fn invalid_device(id: i64, count: usize) -> ! {
    fatal(
        id as i32,
        &format!("Device number '{id}' out of range, only {count} devices available"),
    )
}

/// Resolves the device of a construct; `None` means "run on the host" (offload disabled, or
/// the initial device), after LLVM's policy checks.
fn construct_device(rt: &Runtime, device_id: i64, loc: *const Ident) -> Option<Arc<Device>> {
    match rt.device_for_construct(device_id) {
        Ok(d) => d,
        Err(Error::InvalidDevice { id, count }) if count > 0 => invalid_device(id, count),
        Err(e) => {
            if !matches!(e, Error::InvalidDevice { .. }) {
                report(format_args!("{e}"));
            }
            outcome(rt, false, loc);
            None
        }
    }
}

/// The AsyncInfo of a construct: for a `nowait` construct inside a libomp target task, the
/// one the task already holds (a task may issue several constructs) or a new one.
fn begin_async(rt: &Runtime, dev: &Arc<Device>, slot: Option<*mut *mut c_void>) -> AsyncInfo {
    if let Some(slot) = slot {
        // SAFETY: libomp's slot holds null or an AsyncInfo we boxed in `end_async`.
        let held = unsafe { std::mem::replace(&mut *slot, std::ptr::null_mut()) };
        if !held.is_null() {
            // SAFETY: see above; the pointer is taken out of the slot, so it is owned once.
            let ai = unsafe { Box::from_raw(held.cast::<AsyncInfo>()) };
            if ai.device_id() == dev.id {
                return *ai;
            }
            let _ = ai.synchronize();
        }
    }
    rt.async_info(dev)
}

/// Ends a construct: a blocking one synchronises; a `nowait` one that is still running is
/// left in the task's slot for `__tgt_target_nowait_query`.
fn end_async(
    mut ai: AsyncInfo,
    slot: Option<*mut *mut c_void>,
    r: Result<(), Error>,
) -> Result<(), Error> {
    let Some(slot) = slot else {
        return r.and_then(|_| ai.synchronize());
    };
    if r.is_err() {
        let _ = ai.synchronize();
        return r;
    }
    if ai.is_done()? {
        return Ok(());
    }
    // SAFETY: the slot belongs to the current target task; libomp passes it back to
    // __tgt_target_nowait_query until we reset it.
    unsafe { *slot = Box::into_raw(Box::new(ai)).cast() };
    Ok(())
}

/// Borrows clang's argument arrays. Null arrays with a non-zero count are rejected.
///
/// # Safety
/// Non-null arrays must hold `n` elements each and stay valid for `'a`.
unsafe fn map_args<'a>(
    n: i32,
    bases: *mut *mut c_void,
    begins: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    names: *mut *mut c_void,
    mappers: *mut *mut c_void,
) -> Option<MapArgs<'a>> {
    let n = usize::try_from(n).ok()?;
    if n == 0 {
        return Some(MapArgs {
            bases: &mut [],
            begins: &[],
            sizes: &[],
            types: &[],
            names: None,
            mappers: None,
        });
    }
    if bases.is_null() || begins.is_null() || sizes.is_null() || types.is_null() {
        report(format_args!(
            "invalid argument arrays: a base, pointer, size or type array is null for {n} arguments"
        ));
        return None;
    }
    // SAFETY: the caller guarantees n elements per non-null array; pointers and usize have the
    // same layout.
    unsafe {
        Some(MapArgs {
            bases: std::slice::from_raw_parts_mut(bases.cast::<usize>(), n),
            begins: std::slice::from_raw_parts(begins.cast::<usize>(), n),
            sizes: std::slice::from_raw_parts(sizes, n),
            types: std::slice::from_raw_parts(types, n),
            names: (!names.is_null()).then(|| std::slice::from_raw_parts(names.cast::<usize>(), n)),
            mappers: (!mappers.is_null())
                .then(|| std::slice::from_raw_parts(mappers.cast::<usize>(), n)),
        })
    }
}

#[derive(Clone, Copy)]
enum DataOp {
    Begin,
    End,
    Update,
}

#[allow(clippy::too_many_arguments)]
fn data_op(
    op: DataOp,
    nowait: bool,
    loc: *const Ident,
    device_id: i64,
    n: i32,
    bases: *mut *mut c_void,
    begins: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    names: *mut *mut c_void,
    mappers: *mut *mut c_void,
) {
    let rt = runtime();
    let Some(dev) = construct_device(rt, device_id, loc) else {
        return;
    };
    // SAFETY: clang passes n-element arrays that live for the call.
    let Some(mut args) = (unsafe { map_args(n, bases, begins, sizes, types, names, mappers) })
    else {
        outcome(rt, false, loc);
        return;
    };
    let src = source_of(loc);
    let region = match op {
        DataOp::Begin => Region::DataBegin,
        DataOp::End => Region::DataEnd,
        DataOp::Update => Region::DataUpdate,
    };
    trace::arguments(
        rt.info_level(),
        dev.id,
        region,
        &src,
        args.sizes,
        args.types,
        args.names,
    );
    let slot = if nowait {
        crate::host::target_async_handle()
    } else {
        None
    };
    let mut ai = begin_async(rt, &dev, slot);
    let r = match op {
        DataOp::Begin => rt.data_begin(&dev, &mut args, &mut ai),
        DataOp::End => rt.data_end(&dev, &args, &mut ai),
        DataOp::Update => rt.data_update(&dev, &args, &mut ai),
    };
    let r = end_async(ai, slot, r);
    rt.dump_tables_after(&src);
    outcome(rt, r.is_ok(), loc);
}

macro_rules! data_entry_points {
    ($op:expr, $plain:ident, $nowait:ident, $mapper:ident, $nowait_mapper:ident) => {
        export! {
            fn $plain(device_id: i64, n: i32, bases: *mut *mut c_void, begins: *mut *mut c_void,
                      sizes: *mut i64, types: *mut i64) {
                data_op($op, false, std::ptr::null(), device_id, n, bases, begins, sizes, types,
                        std::ptr::null_mut(), std::ptr::null_mut())
            }
        }
        export! {
            fn $nowait(device_id: i64, n: i32, bases: *mut *mut c_void, begins: *mut *mut c_void,
                       sizes: *mut i64, types: *mut i64, _dep_num: i32, _deps: *mut c_void,
                       _noalias_num: i32, _noalias: *mut c_void) {
                data_op($op, true, std::ptr::null(), device_id, n, bases, begins, sizes, types,
                        std::ptr::null_mut(), std::ptr::null_mut())
            }
        }
        export! {
            fn $mapper(loc: *const Ident, device_id: i64, n: i32, bases: *mut *mut c_void,
                       begins: *mut *mut c_void, sizes: *mut i64, types: *mut i64,
                       names: *mut *mut c_void, mappers: *mut *mut c_void) {
                data_op($op, false, loc, device_id, n, bases, begins, sizes, types, names, mappers)
            }
        }
        export! {
            fn $nowait_mapper(loc: *const Ident, device_id: i64, n: i32, bases: *mut *mut c_void,
                              begins: *mut *mut c_void, sizes: *mut i64, types: *mut i64,
                              names: *mut *mut c_void, mappers: *mut *mut c_void, _dep_num: i32,
                              _deps: *mut c_void, _noalias_num: i32, _noalias: *mut c_void) {
                data_op($op, true, loc, device_id, n, bases, begins, sizes, types, names, mappers)
            }
        }
    };
}

data_entry_points!(
    DataOp::Begin,
    __tgt_target_data_begin,
    __tgt_target_data_begin_nowait,
    __tgt_target_data_begin_mapper,
    __tgt_target_data_begin_nowait_mapper
);
data_entry_points!(
    DataOp::End,
    __tgt_target_data_end,
    __tgt_target_data_end_nowait,
    __tgt_target_data_end_mapper,
    __tgt_target_data_end_nowait_mapper
);
data_entry_points!(
    DataOp::Update,
    __tgt_target_data_update,
    __tgt_target_data_update_nowait,
    __tgt_target_data_update_mapper,
    __tgt_target_data_update_nowait_mapper
);

/// `__tgt_target_kernel` after decoding: 0 when the region ran on the device, non-zero to
/// make the program run it on the host.
fn target_kernel(
    nowait: bool,
    loc: *const Ident,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    kargs: *mut KernelArgs,
) -> c_int {
    let rt = runtime();
    let Some(dev) = construct_device(rt, device_id, loc) else {
        return OFFLOAD_FAIL;
    };
    if kargs.is_null() {
        report(format_args!(
            "__tgt_target_kernel called without kernel arguments"
        ));
        outcome(rt, false, loc);
        return OFFLOAD_FAIL;
    }
    // SAFETY: clang passes a KernelArgsTy of at least the size its version implies.
    let ka = unsafe { &*kargs };
    let version = ka.version;
    let (teams, threads, dyn_mem) = if version >= 2 {
        (ka.num_teams, ka.thread_limit, ka.dyn_cgroup_mem)
    } else {
        // Version 1 ends after the trip count: take the launch bounds from the call.
        (
            [num_teams.max(0) as u32, 0, 0],
            [thread_limit.max(0) as u32, 0, 0],
            0,
        )
    };
    let pushed = TRIPCOUNT.with(|t| t.replace(0));
    let config = LaunchConfig {
        version,
        num_teams: teams,
        thread_limit: threads,
        dyn_cgroup_mem: dyn_mem,
        tripcount: if ka.tripcount != 0 {
            ka.tripcount
        } else {
            pushed
        },
        info: 0,
    };
    // SAFETY: clang passes num_args-element arrays that live for the call.
    let Some(mut args) = (unsafe {
        map_args(
            ka.num_args as i32,
            ka.arg_base_ptrs,
            ka.arg_ptrs,
            ka.arg_sizes,
            ka.arg_types,
            ka.arg_names,
            ka.arg_mappers,
        )
    }) else {
        outcome(rt, false, loc);
        return OFFLOAD_FAIL;
    };
    let src = source_of(loc);
    // KernelArgs flag bit 0: nowait (the region runs inside a libomp target task).
    let nowait = nowait || (version >= 2 && ka.flags & 1 != 0);
    let slot = if nowait {
        crate::host::target_async_handle()
    } else {
        None
    };
    let mut ai = begin_async(rt, &dev, slot);
    let r = rt.target(&dev, host_ptr as usize, &mut args, &config, &src, &mut ai);
    let r = end_async(ai, slot, r);
    rt.dump_tables_after(&src);
    outcome(rt, r.is_ok(), loc);
    if r.is_ok() {
        OFFLOAD_SUCCESS
    } else {
        OFFLOAD_FAIL
    }
}

export! {
    fn __tgt_target_kernel(loc: *const Ident, device_id: i64, num_teams: i32, thread_limit: i32,
                           host_ptr: *mut c_void, kargs: *mut KernelArgs) -> c_int = OFFLOAD_FAIL; {
        target_kernel(false, loc, device_id, num_teams, thread_limit, host_ptr, kargs)
    }
}

export! {
    /// Inside a libomp target task the region's work is left running in the task's async
    /// handle and completed through `__tgt_target_nowait_query`; elsewhere it completes here.
    fn __tgt_target_kernel_nowait(loc: *const Ident, device_id: i64, num_teams: i32,
                                  thread_limit: i32, host_ptr: *mut c_void, kargs: *mut KernelArgs,
                                  _dep_num: i32, _deps: *mut c_void, _noalias_num: i32,
                                  _noalias: *mut c_void) -> c_int = OFFLOAD_FAIL; {
        target_kernel(true, loc, device_id, num_teams, thread_limit, host_ptr, kargs)
    }
}

thread_local! {
    /// How many pending `nowait` constructs this thread found still running lately: above the
    /// threshold it blocks on the next one instead of polling (LLVM's exponential back-off).
    static QUERY_COUNT: Cell<i64> = const { Cell::new(0) };
}

export! {
    /// libomp polls a target task's construct through its async handle until it is reset.
    fn __tgt_target_nowait_query(handle: *mut *mut c_void) -> c_int = OFFLOAD_FAIL; {
        // SAFETY: libomp passes the address of the task's handle slot.
        if handle.is_null() || unsafe { (*handle).is_null() } {
            fatal(1, "Receive an invalid async handle from the current OpenMP task. Is this a target nowait region?");
        }
        let rt = runtime();
        // SAFETY: libomp passes the task's slot, which holds an AsyncInfo boxed by end_async.
        let slot = unsafe { &mut *handle };
        // Takes the construct out of the slot (resetting it): the caller owns it then.
        // SAFETY: see above; the pointer leaves the slot, so it is owned once.
        let take = |slot: &mut *mut c_void| unsafe {
            *Box::from_raw(std::mem::replace(slot, std::ptr::null_mut()).cast::<AsyncInfo>())
        };
        let count = QUERY_COUNT.with(|c| c.get());
        let done = if count >= rt.config.query_count_threshold {
            take(slot).synchronize().map(|_| true)
        } else {
            // Polled in place: a construct still running stays boxed in its slot.
            // SAFETY: see above; the slot keeps owning it during this call.
            let ai = unsafe { &mut *(*slot).cast::<AsyncInfo>() };
            let done = ai.is_done();
            if !matches!(done, Ok(false)) {
                // Complete (or failed, then dropping it waits and releases): out of the slot.
                drop(take(slot));
            }
            done
        };
        match done {
            Ok(true) => {
                let factor = rt.config.query_count_backoff_factor;
                QUERY_COUNT.with(|c| c.set((c.get() as f64 * factor) as i64));
            }
            Ok(false) => {
                QUERY_COUNT.with(|c| c.set((c.get() + 1).min(rt.config.query_count_max)));
            }
            Err(e) => {
                report(format_args!("{e}"));
                fatal(1, "Error while querying the async queue for completion.");
            }
        }
        OFFLOAD_SUCCESS
    }
}

/// The clang ≤ 16 launch entry points: same arrays, passed one by one.
#[allow(clippy::too_many_arguments)]
fn legacy_target(
    nowait: bool,
    loc: *const Ident,
    device_id: i64,
    host_ptr: *mut c_void,
    n: i32,
    bases: *mut *mut c_void,
    begins: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    names: *mut *mut c_void,
    mappers: *mut *mut c_void,
    num_teams: i32,
    thread_limit: i32,
) -> c_int {
    let mut ka = KernelArgs {
        version: 1,
        num_args: n.max(0) as u32,
        arg_base_ptrs: bases,
        arg_ptrs: begins,
        arg_sizes: sizes,
        arg_types: types,
        arg_names: names,
        arg_mappers: mappers,
        tripcount: 0,
        flags: 0,
        num_teams: [0; 3],
        thread_limit: [0; 3],
        dyn_cgroup_mem: 0,
    };
    target_kernel(
        nowait,
        loc,
        device_id,
        num_teams,
        thread_limit,
        host_ptr,
        &mut ka,
    )
}

export! {
    fn __tgt_target(device_id: i64, host_ptr: *mut c_void, n: i32, bases: *mut *mut c_void,
                    begins: *mut *mut c_void, sizes: *mut i64, types: *mut i64) -> c_int = OFFLOAD_FAIL; {
        legacy_target(false, std::ptr::null(), device_id, host_ptr, n, bases, begins, sizes, types,
                      std::ptr::null_mut(), std::ptr::null_mut(), -1, 0)
    }
}
export! {
    fn __tgt_target_nowait(device_id: i64, host_ptr: *mut c_void, n: i32, bases: *mut *mut c_void,
                           begins: *mut *mut c_void, sizes: *mut i64, types: *mut i64, _dep_num: i32,
                           _deps: *mut c_void, _noalias_num: i32, _noalias: *mut c_void) -> c_int = OFFLOAD_FAIL; {
        legacy_target(true, std::ptr::null(), device_id, host_ptr, n, bases, begins, sizes, types,
                      std::ptr::null_mut(), std::ptr::null_mut(), -1, 0)
    }
}
export! {
    fn __tgt_target_mapper(loc: *const Ident, device_id: i64, host_ptr: *mut c_void, n: i32,
                           bases: *mut *mut c_void, begins: *mut *mut c_void, sizes: *mut i64,
                           types: *mut i64, names: *mut *mut c_void, mappers: *mut *mut c_void) -> c_int = OFFLOAD_FAIL; {
        legacy_target(false, loc, device_id, host_ptr, n, bases, begins, sizes, types, names, mappers, -1, 0)
    }
}
export! {
    fn __tgt_target_nowait_mapper(loc: *const Ident, device_id: i64, host_ptr: *mut c_void, n: i32,
                                  bases: *mut *mut c_void, begins: *mut *mut c_void, sizes: *mut i64,
                                  types: *mut i64, names: *mut *mut c_void, mappers: *mut *mut c_void,
                                  _dep_num: i32, _deps: *mut c_void, _noalias_num: i32,
                                  _noalias: *mut c_void) -> c_int = OFFLOAD_FAIL; {
        legacy_target(true, loc, device_id, host_ptr, n, bases, begins, sizes, types, names, mappers, -1, 0)
    }
}
export! {
    fn __tgt_target_teams(device_id: i64, host_ptr: *mut c_void, n: i32, bases: *mut *mut c_void,
                          begins: *mut *mut c_void, sizes: *mut i64, types: *mut i64,
                          num_teams: i32, thread_limit: i32) -> c_int = OFFLOAD_FAIL; {
        legacy_target(false, std::ptr::null(), device_id, host_ptr, n, bases, begins, sizes, types,
                      std::ptr::null_mut(), std::ptr::null_mut(), num_teams, thread_limit)
    }
}
export! {
    fn __tgt_target_teams_nowait(device_id: i64, host_ptr: *mut c_void, n: i32,
                                 bases: *mut *mut c_void, begins: *mut *mut c_void, sizes: *mut i64,
                                 types: *mut i64, num_teams: i32, thread_limit: i32, _dep_num: i32,
                                 _deps: *mut c_void, _noalias_num: i32, _noalias: *mut c_void) -> c_int = OFFLOAD_FAIL; {
        legacy_target(true, std::ptr::null(), device_id, host_ptr, n, bases, begins, sizes, types,
                      std::ptr::null_mut(), std::ptr::null_mut(), num_teams, thread_limit)
    }
}
export! {
    fn __tgt_target_teams_mapper(loc: *const Ident, device_id: i64, host_ptr: *mut c_void, n: i32,
                                 bases: *mut *mut c_void, begins: *mut *mut c_void, sizes: *mut i64,
                                 types: *mut i64, names: *mut *mut c_void, mappers: *mut *mut c_void,
                                 num_teams: i32, thread_limit: i32) -> c_int = OFFLOAD_FAIL; {
        legacy_target(false, loc, device_id, host_ptr, n, bases, begins, sizes, types, names, mappers,
                      num_teams, thread_limit)
    }
}
export! {
    fn __tgt_target_teams_nowait_mapper(loc: *const Ident, device_id: i64, host_ptr: *mut c_void,
                                        n: i32, bases: *mut *mut c_void, begins: *mut *mut c_void,
                                        sizes: *mut i64, types: *mut i64, names: *mut *mut c_void,
                                        mappers: *mut *mut c_void, num_teams: i32,
                                        thread_limit: i32, _dep_num: i32, _deps: *mut c_void,
                                        _noalias_num: i32, _noalias: *mut c_void) -> c_int = OFFLOAD_FAIL; {
        legacy_target(true, loc, device_id, host_ptr, n, bases, begins, sizes, types, names, mappers,
                      num_teams, thread_limit)
    }
}

export! {
    fn __kmpc_push_target_tripcount(_device_id: i64, tripcount: u64) {
        TRIPCOUNT.with(|t| t.set(tripcount));
    }
}
export! {
    fn __kmpc_push_target_tripcount_mapper(_loc: *const Ident, _device_id: i64, tripcount: u64) {
        TRIPCOUNT.with(|t| t.set(tripcount));
    }
}

// ---------------------------------------------------------------------------------------
// Registration

/// Decodes a host entry table of either layout.
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
    // SAFETY: the table is non-empty, so its first word is readable.
    let first_word = unsafe { *(begin as *const u64) };
    let name = |p: *const c_char| -> Result<&'static CStr, String> {
        if p.is_null() {
            return Err("an offload entry has no name".into());
        }
        // SAFETY: entry names are NUL-terminated constant strings of the program.
        Ok(unsafe { CStr::from_ptr(p) })
    };
    let mut out = Vec::new();
    if first_word == 0 {
        if bytes % 56 != 0 {
            return Err(format!(
                "host entry table of {bytes} bytes is not a multiple of 56"
            ));
        }
        // SAFETY: bytes / 56 entries of the LLVM 20 layout.
        let entries =
            unsafe { std::slice::from_raw_parts(begin as *const OffloadEntryV20, bytes / 56) };
        for e in entries {
            out.push(OffloadEntry {
                addr: e.address as usize,
                name: name(e.symbol_name)?,
                size: e.size as usize,
                flags: e.flags,
                data: e.data,
            });
        }
    } else {
        if bytes % 32 != 0 {
            return Err(format!(
                "host entry table of {bytes} bytes is not a multiple of 32"
            ));
        }
        // SAFETY: bytes / 32 entries of the 32-byte layout.
        let entries =
            unsafe { std::slice::from_raw_parts(begin as *const OffloadEntry32, bytes / 32) };
        for e in entries {
            out.push(OffloadEntry {
                addr: e.addr as usize,
                name: name(e.name)?,
                size: e.size,
                flags: e.flags as u32,
                data: e.data as u32 as u64,
            });
        }
    }
    Ok(out)
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
    fn __tgt_register_requires(flags: i64) {
        runtime().register_requires(flags as u64);
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

// ---------------------------------------------------------------------------------------
// OpenMP device routines

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
        invalid_device(id, rt.num_devices());
    }
    id
}

fn alloc(size: usize, device: c_int, kind: AllocKind) -> *mut c_void {
    let rt = runtime();
    if size == 0 || size > i64::MAX as usize {
        return std::ptr::null_mut();
    }
    let id = checked_device(rt, device);
    match rt.target_alloc(size as i64, id, kind) {
        Ok(p) => p as *mut c_void,
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
    let id = checked_device(rt, device);
    if let Err(e) = rt.target_free(ptr as usize, id, kind) {
        report(format_args!("{e}"));
    }
}

export! {
    fn omp_target_alloc(size: usize, device: c_int) -> *mut c_void = std::ptr::null_mut(); {
        alloc(size, device, AllocKind::Device)
    }
}
export! {
    fn llvm_omp_target_alloc_device(size: usize, device: c_int) -> *mut c_void = std::ptr::null_mut(); {
        alloc(size, device, AllocKind::Device)
    }
}
export! {
    fn llvm_omp_target_alloc_host(size: usize, device: c_int) -> *mut c_void = std::ptr::null_mut(); {
        alloc(size, device, AllocKind::Host)
    }
}
export! {
    fn llvm_omp_target_alloc_shared(size: usize, device: c_int) -> *mut c_void = std::ptr::null_mut(); {
        alloc(size, device, AllocKind::Shared)
    }
}
export! {
    fn omp_target_free(ptr: *mut c_void, device: c_int) {
        free(ptr, device, AllocKind::Device)
    }
}
export! {
    fn llvm_omp_target_free_device(ptr: *mut c_void, device: c_int) {
        free(ptr, device, AllocKind::Device)
    }
}
export! {
    fn llvm_omp_target_free_host(ptr: *mut c_void, device: c_int) {
        free(ptr, device, AllocKind::Host)
    }
}
export! {
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
    fn omp_target_is_present(ptr: *const c_void, device: c_int) -> c_int = 0; {
        let rt = runtime();
        let id = checked_device(rt, device);
        if id == rt.initial_device() {
            return 1;
        }
        c_int::from(rt.target_is_present(ptr as usize, id))
    }
}

export! {
    /// OpenMP 5.1; LLVM 19 lacks it (docs/DIVERGENCES.md). An invalid device number gives 0
    /// rather than LLVM's fatal error for the other routines: the question has an answer.
    fn omp_target_is_accessible(ptr: *const c_void, size: usize, device: c_int) -> c_int = 0; {
        c_int::from(runtime().target_is_accessible(ptr as usize, size, i64::from(device)))
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
        match rt.device_unloaded(id) {
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

export! {
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

export! {
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
            omptarget_core::ops::dump_table(&d, &SourceLoc::default(), true);
        }
    }
}

export! {
    /// OMPT is not offered: libomp's connect call finds no tool here.
    fn ompt_libomptarget_connect(_result: *mut c_void) {}
}

unsupported! {
    fn __tgt_activate_record_replay(device: i64, size: u64, vaddr: *mut c_void, record: bool,
                                    save: bool, offset: *mut u64) -> c_int = OFFLOAD_FAIL;
    fn __tgt_target_kernel_replay(loc: *const Ident, device: i64, host_ptr: *mut c_void,
                                  memory: *mut c_void, memory_size: i64, args: *mut *mut c_void,
                                  offsets: *mut isize, n: i32, teams: i32, threads: i32,
                                  tripcount: u64) -> c_int = OFFLOAD_FAIL;
    fn __tgt_interop_init(loc: *const Ident, gtid: i32, interop: *mut *mut c_void, ty: i32,
                          device: i32, ndeps: i32, deps: *mut c_void, nowait: i32) -> () = ();
    fn __tgt_interop_use(loc: *const Ident, gtid: i32, interop: *mut c_void, device: i32,
                         ndeps: i32, deps: *mut c_void, nowait: i32) -> () = ();
    fn __tgt_interop_destroy(loc: *const Ident, gtid: i32, interop: *mut c_void, device: i32,
                             ndeps: i32, deps: *mut c_void, nowait: i32) -> () = ();
    fn omp_get_interop_int(interop: *mut c_void, property: c_int, rc: *mut c_int) -> isize = 0;
    fn omp_get_interop_ptr(interop: *mut c_void, property: c_int, rc: *mut c_int) -> *mut c_void = std::ptr::null_mut();
    fn omp_get_interop_str(interop: *mut c_void, property: c_int, rc: *mut c_int) -> *const c_char = std::ptr::null();
    fn omp_get_interop_name(interop: *mut c_void, property: c_int) -> *const c_char = std::ptr::null();
    fn omp_get_interop_type_desc(interop: *mut c_void, property: c_int) -> *const c_char = std::ptr::null();
}

// ---------------------------------------------------------------------------------------
// Mappers, info, memset, association, asynchronous copies

export! {
    fn __tgt_mapper_num_components(handle: *mut c_void) -> i64 = 0; {
        if handle.is_null() {
            return 0;
        }
        // SAFETY: the handle is the MapperComponents the runtime passed to the mapper.
        unsafe { (*(handle as *const MapperComponents)).0.len() as i64 }
    }
}

export! {
    fn __tgt_push_mapper_component(handle: *mut c_void, base: *mut c_void, begin: *mut c_void,
                                   size: i64, ty: i64, name: *mut c_void) {
        if handle.is_null() {
            report(format_args!("__tgt_push_mapper_component called without a mapper handle"));
            return;
        }
        // SAFETY: as in __tgt_mapper_num_components; the mapper runs on this thread.
        let components = unsafe { &mut *(handle as *mut MapperComponents) };
        components.0.push(omptarget_core::ops::MapperComponent {
            base: base as usize,
            begin: begin as usize,
            size,
            ty,
            name: name as usize,
        });
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

export! {
    fn omp_target_memset(ptr: *mut c_void, value: c_int, size: usize, device: c_int) -> *mut c_void = ptr; {
        memset(ptr, value, size, device)
    }
}

export! {
    fn omp_target_associate_ptr(host: *const c_void, device_ptr: *const c_void, size: usize,
                                offset: usize, device: c_int) -> c_int = OFFLOAD_FAIL; {
        if host.is_null() || device_ptr.is_null() || size == 0 {
            report(format_args!("Call to omp_target_associate_ptr with invalid arguments"));
            return OFFLOAD_FAIL;
        }
        let rt = runtime();
        let id = checked_device(rt, device);
        if id == rt.initial_device() {
            report(format_args!("omp_target_associate_ptr: no associating with host"));
            return OFFLOAD_FAIL;
        }
        match rt.associate_ptr(host as usize, device_ptr as usize + offset, size, id) {
            Ok(()) => OFFLOAD_SUCCESS,
            Err(e) => {
                report(format_args!("{e}"));
                OFFLOAD_FAIL
            }
        }
    }
}

export! {
    fn omp_target_disassociate_ptr(host: *const c_void, device: c_int) -> c_int = OFFLOAD_FAIL; {
        if host.is_null() {
            report(format_args!("Call to omp_target_disassociate_ptr with invalid host_ptr"));
            return OFFLOAD_FAIL;
        }
        let rt = runtime();
        let id = checked_device(rt, device);
        if id == rt.initial_device() {
            report(format_args!("omp_target_disassociate_ptr: no associating with host"));
            return OFFLOAD_FAIL;
        }
        match rt.disassociate_ptr(host as usize, id) {
            Ok(()) => OFFLOAD_SUCCESS,
            Err(e) => {
                report(format_args!("{e}"));
                OFFLOAD_FAIL
            }
        }
    }
}

export! {
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

export! {
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

export! {
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
