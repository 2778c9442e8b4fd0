//! Constructs: target data, enter/exit data, update, target regions, `nowait` completion.

use super::*;

#[derive(Clone, Copy)]
enum DataOp {
    Begin,
    End,
    Update,
}

impl DataOp {
    /// The entry point's name, for messages.
    fn entry_point(self, nowait: bool) -> &'static str {
        match (self, nowait) {
            (DataOp::Begin, false) => "__tgt_target_data_begin_mapper",
            (DataOp::Begin, true) => "__tgt_target_data_begin_nowait_mapper",
            (DataOp::End, false) => "__tgt_target_data_end_mapper",
            (DataOp::End, true) => "__tgt_target_data_end_nowait_mapper",
            (DataOp::Update, false) => "__tgt_target_data_update_mapper",
            (DataOp::Update, true) => "__tgt_target_data_update_nowait_mapper",
        }
    }
}

/// A data construct; an internal error inside it is a failure of the construct (see
/// [`construct_guard`]).
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
    construct_guard(op.entry_point(nowait), loc, |rt, _| {
        let Some(dev) = construct_device(rt, device_id, loc) else {
            return;
        };
        if n < 0 {
            // LLVM 19 loops over no item; so do we, but say so.
            report(format_args!(
                "{}: {n} map items (a negative count): nothing done",
                op.entry_point(nowait)
            ));
            return;
        }
        // SAFETY: clang passes n-element arrays that live for the call.
        let Some(mut args) = (unsafe { map_args(n, bases, begins, sizes, types, names, mappers) })
        else {
            outcome(rt, false, loc);
            return;
        };
        let src = source_of(loc);
        let region = match (op, nowait) {
            (DataOp::Begin, false) => Region::DataBegin,
            (DataOp::End, false) => Region::DataEnd,
            (DataOp::Update, false) => Region::DataUpdate,
            (DataOp::Begin, true) => Region::DataBeginNowait,
            (DataOp::End, true) => Region::DataEndNowait,
            (DataOp::Update, true) => Region::DataUpdateNowait,
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
        let kind = match op {
            DataOp::Begin => ConstructKind::EnterData,
            DataOp::End => ConstructKind::ExitData,
            DataOp::Update => ConstructKind::Update,
        };
        let region = ompt::begin(rt, &mut ai, kind, nowait, loc);
        let r = match op {
            DataOp::Begin => rt.data_begin(&dev, &mut args, &mut ai),
            DataOp::End => rt.data_end(&dev, &args, &mut ai),
            DataOp::Update => rt.data_update(&dev, &args, &mut ai),
        };
        let r = end_async(rt, ai, slot, r);
        if r.is_ok() {
            // A failure dumps the tables once, in `outcome` (LLVM's handleTargetOutcome).
            rt.dump_tables_after(&src);
        }
        outcome(rt, r.is_ok(), loc);
        rt.end_construct(region);
    })
}

macro_rules! data_entry_points {
    ($op:expr, $plain:ident, $nowait:ident, $mapper:ident, $nowait_mapper:ident) => {
        export_ra! {
            unwind fn $plain(device_id: i64, n: i32, bases: *mut *mut c_void, begins: *mut *mut c_void,
                      sizes: *mut i64, types: *mut i64) {
                data_op($op, false, std::ptr::null(), device_id, n, bases, begins, sizes, types,
                        std::ptr::null_mut(), std::ptr::null_mut())
            }
        }
        export_ra! {
            unwind fn $nowait(device_id: i64, n: i32, bases: *mut *mut c_void, begins: *mut *mut c_void,
                       sizes: *mut i64, types: *mut i64, _dep_num: i32, _deps: *mut c_void,
                       _noalias_num: i32, _noalias: *mut c_void) {
                // LLVM 19 runs the pre-mapper nowait forms as the blocking mapper form (and
                // traces them so).
                data_op($op, false, std::ptr::null(), device_id, n, bases, begins, sizes, types,
                        std::ptr::null_mut(), std::ptr::null_mut())
            }
        }
        export_ra! {
            unwind fn $mapper(loc: *const Ident, device_id: i64, n: i32, bases: *mut *mut c_void,
                       begins: *mut *mut c_void, sizes: *mut i64, types: *mut i64,
                       names: *mut *mut c_void, mappers: *mut *mut c_void) {
                data_op($op, false, loc, device_id, n, bases, begins, sizes, types, names, mappers)
            }
        }
        export_ra! {
            unwind fn $nowait_mapper(loc: *const Ident, device_id: i64, n: i32, bases: *mut *mut c_void,
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
/// make the program run it on the host. An internal error inside it is a failure of the
/// construct (see [`construct_guard`]).
fn target_kernel(
    nowait: bool,
    loc: *const Ident,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    kargs: *mut KernelArgs,
) -> c_int {
    let name = if nowait {
        "__tgt_target_kernel_nowait"
    } else {
        "__tgt_target_kernel"
    };
    construct_guard(name, loc, |rt, running| {
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
        // A kernel language's launch (llvmLaunchKernel: version 0 with the IsCUDA flag) fills the
        // version 2 fields too: its 3-D grid, blocks and dynamic shared memory.
        let language = ka.flags & super::language::FLAG_IS_CUDA != 0;
        let (teams, threads, dyn_mem) = if version >= 2 || language {
            (ka.num_teams, ka.thread_limit, ka.dyn_cgroup_mem)
        } else {
            // Version 1 ends after the trip count: take the launch bounds from the call. A region
            // without `teams` passes -1, one team (u32::MAX, as a version 2+ region says it).
            let teams = if num_teams < 0 {
                u32::MAX
            } else {
                num_teams as u32
            };
            ([teams, 0, 0], [thread_limit.max(0) as u32, 0, 0], 0)
        };
        if version == 0 && ka.flags & super::language::FLAG_IS_CUDA == 0 {
            // No compiler emits version 0 (clang 15 and 16 emit 1, 17 emits 2, 18 and later 3);
            // LLVM 22's llvmLaunchKernel launches with version 0 and the IsCUDA flag.
            report(format_args!(
                "KernelArgs Version is 0, which no compiler emits (1 to 3): the region is not launched"
            ));
            outcome(rt, false, loc);
            return OFFLOAD_FAIL;
        }
        if ka.num_args > i32::MAX as u32 {
            // LLVM 19 stops with "LLVM ERROR: SmallVector unable to grow" here.
            report(format_args!(
                "KernelArgs NumArgs is {}, more arguments than a construct can pass (at most {}): the region is not launched",
                ka.num_args,
                i32::MAX
            ));
            outcome(rt, false, loc);
            return OFFLOAD_FAIL;
        }
        let pushed = running.take_tripcount();
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
            language: language.then(|| super::language::launch_params(ka.arg_ptrs.cast())),
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
        let region = ompt::begin(rt, &mut ai, ConstructKind::Target, nowait, loc);
        let r = rt.target(&dev, host_ptr as usize, &mut args, &config, &src, &mut ai);
        let r = match slot {
            None => end_in_place(&mut ai, r),
            Some(_) => end_async(rt, ai, slot, r),
        };
        if r.is_ok() {
            // A failure dumps the tables once, in `outcome` (LLVM's handleTargetOutcome).
            rt.dump_tables_after(&src);
        }
        outcome(rt, r.is_ok(), loc);
        rt.end_construct(region);
        if r.is_ok() {
            OFFLOAD_SUCCESS
        } else {
            OFFLOAD_FAIL
        }
    })
}

export_ra! {
    unwind fn __tgt_target_kernel(loc: *const Ident, device_id: i64, num_teams: i32, thread_limit: i32,
                           host_ptr: *mut c_void, kargs: *mut KernelArgs) -> c_int {
        target_kernel(false, loc, device_id, num_teams, thread_limit, host_ptr, kargs)
    }
}

export_ra! {
    /// Inside a libomp target task the region's work is left running in the task's async
    /// handle and completed through `__tgt_target_nowait_query`; elsewhere it completes here.
    unwind fn __tgt_target_kernel_nowait(loc: *const Ident, device_id: i64, num_teams: i32,
                                  thread_limit: i32, host_ptr: *mut c_void, kargs: *mut KernelArgs,
                                  _dep_num: i32, _deps: *mut c_void, _noalias_num: i32,
                                  _noalias: *mut c_void) -> c_int {
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
        // SAFETY: libomp passes the task's slot, which holds what end_async left there.
        let slot = unsafe { &mut *handle };
        let count = QUERY_COUNT.with(|c| c.get());
        let block = count >= rt.config.query_count_threshold;
        // SAFETY: the slot's value came from `held::hold`; once complete (or failed) it is
        // released, and the slot is reset here.
        let done = unsafe { held::poll(*slot, block) };
        if !matches!(done, Ok(false)) {
            *slot = std::ptr::null_mut();
            // Once the construct is complete and released, the exit no longer waits for it.
            rt.note_held(-1);
        }
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
        // A negative count becomes a huge one, refused with a message like any other.
        num_args: n as u32,
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

export_ra! {
    unwind fn __tgt_target(device_id: i64, host_ptr: *mut c_void, n: i32, bases: *mut *mut c_void,
                    begins: *mut *mut c_void, sizes: *mut i64, types: *mut i64) -> c_int {
        legacy_target(false, std::ptr::null(), device_id, host_ptr, n, bases, begins, sizes, types,
                      std::ptr::null_mut(), std::ptr::null_mut(), -1, 0)
    }
}
export_ra! {
    unwind fn __tgt_target_nowait(device_id: i64, host_ptr: *mut c_void, n: i32, bases: *mut *mut c_void,
                           begins: *mut *mut c_void, sizes: *mut i64, types: *mut i64, _dep_num: i32,
                           _deps: *mut c_void, _noalias_num: i32, _noalias: *mut c_void) -> c_int {
        legacy_target(true, std::ptr::null(), device_id, host_ptr, n, bases, begins, sizes, types,
                      std::ptr::null_mut(), std::ptr::null_mut(), -1, 0)
    }
}
export_ra! {
    unwind fn __tgt_target_mapper(loc: *const Ident, device_id: i64, host_ptr: *mut c_void, n: i32,
                           bases: *mut *mut c_void, begins: *mut *mut c_void, sizes: *mut i64,
                           types: *mut i64, names: *mut *mut c_void, mappers: *mut *mut c_void) -> c_int {
        legacy_target(false, loc, device_id, host_ptr, n, bases, begins, sizes, types, names, mappers, -1, 0)
    }
}
export_ra! {
    unwind fn __tgt_target_nowait_mapper(loc: *const Ident, device_id: i64, host_ptr: *mut c_void, n: i32,
                                  bases: *mut *mut c_void, begins: *mut *mut c_void, sizes: *mut i64,
                                  types: *mut i64, names: *mut *mut c_void, mappers: *mut *mut c_void,
                                  _dep_num: i32, _deps: *mut c_void, _noalias_num: i32,
                                  _noalias: *mut c_void) -> c_int {
        legacy_target(true, loc, device_id, host_ptr, n, bases, begins, sizes, types, names, mappers, -1, 0)
    }
}
export_ra! {
    unwind fn __tgt_target_teams(device_id: i64, host_ptr: *mut c_void, n: i32, bases: *mut *mut c_void,
                          begins: *mut *mut c_void, sizes: *mut i64, types: *mut i64,
                          num_teams: i32, thread_limit: i32) -> c_int {
        legacy_target(false, std::ptr::null(), device_id, host_ptr, n, bases, begins, sizes, types,
                      std::ptr::null_mut(), std::ptr::null_mut(), num_teams, thread_limit)
    }
}
export_ra! {
    unwind fn __tgt_target_teams_nowait(device_id: i64, host_ptr: *mut c_void, n: i32,
                                 bases: *mut *mut c_void, begins: *mut *mut c_void, sizes: *mut i64,
                                 types: *mut i64, num_teams: i32, thread_limit: i32, _dep_num: i32,
                                 _deps: *mut c_void, _noalias_num: i32, _noalias: *mut c_void) -> c_int {
        legacy_target(true, std::ptr::null(), device_id, host_ptr, n, bases, begins, sizes, types,
                      std::ptr::null_mut(), std::ptr::null_mut(), num_teams, thread_limit)
    }
}
export_ra! {
    unwind fn __tgt_target_teams_mapper(loc: *const Ident, device_id: i64, host_ptr: *mut c_void, n: i32,
                                 bases: *mut *mut c_void, begins: *mut *mut c_void, sizes: *mut i64,
                                 types: *mut i64, names: *mut *mut c_void, mappers: *mut *mut c_void,
                                 num_teams: i32, thread_limit: i32) -> c_int {
        legacy_target(false, loc, device_id, host_ptr, n, bases, begins, sizes, types, names, mappers,
                      num_teams, thread_limit)
    }
}
export_ra! {
    unwind fn __tgt_target_teams_nowait_mapper(loc: *const Ident, device_id: i64, host_ptr: *mut c_void,
                                        n: i32, bases: *mut *mut c_void, begins: *mut *mut c_void,
                                        sizes: *mut i64, types: *mut i64, names: *mut *mut c_void,
                                        mappers: *mut *mut c_void, num_teams: i32,
                                        thread_limit: i32, _dep_num: i32, _deps: *mut c_void,
                                        _noalias_num: i32, _noalias: *mut c_void) -> c_int {
        legacy_target(true, loc, device_id, host_ptr, n, bases, begins, sizes, types, names, mappers,
                      num_teams, thread_limit)
    }
}

export! {
    fn __kmpc_push_target_tripcount(_device_id: i64, tripcount: u64) {
        omptarget_core::runtime::push_tripcount(tripcount);
    }
}
export! {
    fn __kmpc_push_target_tripcount_mapper(_loc: *const Ident, _device_id: i64, tripcount: u64) {
        omptarget_core::runtime::push_tripcount(tripcount);
    }
}
