//! Interop (OpenMP 5.2 §14): `#pragma omp interop init/use/destroy` as clang 19 calls them
//! (`__tgt_interop_*`, the interop variable's address, clang's dependence array) and the
//! `omp_get_interop_*` routines.
//!
//! Where programs' calls land: a clang-19 program links `omp_get_interop_*`,
//! `omp_get_num_interop_properties` and `omp_get_interop_rc_desc` from libomp
//! (`@VERSION`); libomp's versions look each name up with `dlsym(RTLD_NEXT, ...)` and call
//! ours (LLVM 19's libomptarget has no `omp_get_num_interop_properties` or
//! `omp_get_interop_rc_desc`, so libomp returns 0 and NULL for those under it).
//!
//! LLVM 22's interface (`__tgt_interop_get`, `__tgt_interop_use60`, `__tgt_interop_release`,
//! `ompx_interop_add_completion_callback`; clang 22 itself still emits clang 19's calls) works
//! on the same objects: a `prefer_type` list chooses the foreign runtime, the `implicit` flag
//! gives a runtime-owned object per thread that `__tgt_target_sync` completes, and completion
//! callbacks run whenever an object's foreign work completes (`use` without `nowait`,
//! `destroy`/`release`, a synchronisation point), under either interface.

use super::*;
use omptarget_core::interop::{CompletionCallback, Interop, InteropKind, PropertyType, Rc, Value};

/// The program's interop variable (`omp_interop_t *`).
type Slot = *mut *mut c_void;

fn read_slot(slot: Slot) -> usize {
    if slot.is_null() {
        return 0;
    }
    // SAFETY: clang passes the address of the program's omp_interop_t variable.
    unsafe { *slot as usize }
}

fn write_slot(slot: Slot, value: usize) {
    if !slot.is_null() {
        // SAFETY: see read_slot.
        unsafe { *slot = value as *mut c_void };
    }
}

export! {
    fn __tgt_interop_init(loc: *const Ident, gtid: i32, interop: Slot, ty: i32, device: i32,
                          ndeps: i32, deps: *mut c_void, _nowait: i32) {
        if interop.is_null() {
            report(format_args!("interop init: no interop variable"));
            return;
        }
        write_slot(interop, 0);
        // The dependences are met before the object exists: the program may put work on its
        // queue as soon as we return.
        crate::host::wait_dependences(loc.cast(), gtid, ndeps, deps);
        let Some(kind) = InteropKind::from_clang(ty) else {
            report(format_args!("interop init: unknown interop type {ty}"));
            return;
        };
        let rt = runtime();
        match rt.interop_init(i64::from(device), kind) {
            Ok(obj) => write_slot(interop, Arc::into_raw(obj) as usize),
            Err(Error::NoForeignRuntime { device }) => {
                // LLVM 19's words for a plugin without interop support (the host device);
                // LLVM 22 says nothing there.
                if rt.abi_at(loc as usize) == Abi::Llvm22 {
                    return;
                }
                omptarget_core::message::plugin_error(format_args!(
                    "Failure to initialize device info at {} on device {device}: initDeviceInfoImpl not supported",
                    omptarget_core::message::Addr(interop as usize)
                ));
            }
            Err(e) => report(format_args!("interop init: {e}")),
        }
    }
}

/// The object in the program's variable for `use`/`destroy`, with the checks LLVM 19 only
/// asserts.
fn object_of(rt: &Runtime, what: &str, slot: Slot, device: i32) -> Option<Arc<Interop>> {
    let handle = read_slot(slot);
    if handle == 0 {
        report(format_args!(
            "interop {what}: the interop object is omp_interop_none"
        ));
        return None;
    }
    let obj = live_object(rt, &format!("interop {what}"), handle as *mut c_void)?;
    let device = if device == -1 {
        rt.default_device()
    } else {
        i64::from(device)
    };
    if device != obj.device_num() as i64 {
        report(format_args!(
            "interop {what}: device({device}) differs from the object's device {}; the object's is used",
            obj.device_num()
        ));
    }
    Some(obj)
}

/// Completes the object's foreign work (with `destroy`, the object too: its queue goes back to
/// the pool), then runs its completion callbacks.
fn finish(obj: Arc<Interop>, destroy: bool) -> Result<(), Error> {
    let handle = Arc::as_ptr(&obj) as usize;
    let callbacks = if destroy {
        runtime().interop_destroy(obj)
    } else {
        obj.complete()
    }?;
    run_callbacks(handle, callbacks);
    Ok(())
}

/// Completes the program's foreign work with `then` after it: at once, or with `nowait` in a
/// deferred task carrying the construct's dependences (so that later constructs depending on
/// them start after the work).
fn complete(
    loc: *const Ident,
    gtid: i32,
    ndeps: i32,
    deps: *mut c_void,
    nowait: bool,
    obj: Arc<Interop>,
    destroy: bool,
) {
    let work = move || {
        if let Err(e) = finish(obj, destroy) {
            report(format_args!(
                "interop {}: {e}",
                if destroy { "destroy" } else { "use" }
            ));
        }
    };
    if nowait {
        match crate::host::defer(loc.cast(), gtid, ndeps, deps, Box::new(work)) {
            Ok(()) => {}
            Err(work) => work(),
        }
    } else {
        work();
    }
}

export! {
    fn __tgt_interop_use(loc: *const Ident, gtid: i32, interop: Slot, device: i32, ndeps: i32,
                         deps: *mut c_void, nowait: i32) {
        let rt = runtime();
        let Some(obj) = object_of(rt, "use", interop, device) else { return };
        crate::host::wait_dependences(loc.cast(), gtid, ndeps, deps);
        complete(loc, gtid, ndeps, deps, nowait != 0, obj, false);
    }
}

export! {
    fn __tgt_interop_destroy(loc: *const Ident, gtid: i32, interop: Slot, device: i32,
                             ndeps: i32, deps: *mut c_void, nowait: i32) {
        if read_slot(interop) == 0 {
            // Destroying omp_interop_none does nothing (as in LLVM 19).
            return;
        }
        let rt = runtime();
        let Some(obj) = object_of(rt, "destroy", interop, device) else { return };
        crate::host::wait_dependences(loc.cast(), gtid, ndeps, deps);
        // The program's reference goes; `obj` keeps the object until its work is complete.
        drop(rt.interop_release(read_slot(interop)));
        write_slot(interop, 0);
        complete(loc, gtid, ndeps, deps, nowait != 0, obj, true);
    }
}

/// Calls the completion callbacks of the object at `handle` (LLVM 22's
/// `void (*)(omp_interop_val_t *, void *)`), in the order they were added.
fn run_callbacks(handle: usize, callbacks: Vec<CompletionCallback>) {
    for cb in callbacks {
        // SAFETY: the program registered a function of this type with
        // ompx_interop_add_completion_callback (null functions are refused there).
        let f: unsafe extern "C" fn(*mut c_void, *mut c_void) =
            unsafe { std::mem::transmute(cb.function) };
        // SAFETY: the program's function with the object and the data it gave.
        unsafe { f(handle as *mut c_void, cb.data as *mut c_void) };
    }
}

/// `__tgt_target_sync` (tools.rs): completes the thread's implicit objects.
pub(super) fn target_sync(rt: &Runtime, gtid: i32) {
    for (handle, r) in rt.interop_target_sync(gtid) {
        match r {
            Ok(callbacks) => run_callbacks(handle, callbacks),
            Err(e) => report(format_args!("interop synchronisation: {e}")),
        }
    }
}

/// LLVM 22's `interop_spec_t`: a `prefer_type` entry.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct InteropSpec {
    pub fr_id: i32,
    /// `interop_attrs_t`: bit 0 `inorder`.
    pub attrs: u32,
    pub impl_attrs: i64,
}

/// LLVM 22's `interop_ctx_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct InteropCtx {
    pub version: u32,
    /// `interop_flags_t`: bit 0 `implicit` (`dispatch`), bit 1 `nowait`.
    pub flags: u32,
    pub gtid: i32,
}

const CTX_IMPLICIT: u32 = 1;
const CTX_NOWAIT: u32 = 2;

/// LLVM 22's `dep_pack_t` (as `libomptarget.so.22.1` lays it out: the two counts first).
#[repr(C)]
pub struct DepPack {
    pub ndeps: i32,
    pub ndeps_noalias: i32,
    pub deplist: *mut c_void,
    pub noalias_deplist: *mut c_void,
}

/// The context's flags and thread (LLVM dereferences a null context; here it means none).
fn context(ctx: *const InteropCtx) -> (u32, i32) {
    if ctx.is_null() {
        return (0, crate::host::current_gtid());
    }
    // SAFETY: the caller passes an interop_ctx_t.
    let c = unsafe { *ctx };
    (c.flags, c.gtid)
}

fn wait_pack(loc: *const Ident, gtid: i32, deps: *const DepPack) {
    if deps.is_null() {
        return;
    }
    // SAFETY: the caller passes a dep_pack_t.
    let d = unsafe { &*deps };
    crate::host::wait_dependence_lists(
        loc.cast(),
        gtid,
        (d.ndeps, d.deplist),
        (d.ndeps_noalias, d.noalias_deplist),
    );
}

/// The live object a program passes to LLVM 22's entry points.
fn live_object(rt: &Runtime, what: &str, interop: *mut c_void) -> Option<Arc<Interop>> {
    if interop.is_null() {
        return None;
    }
    let obj = rt.interop(interop as usize);
    if obj.is_none() {
        report(format_args!(
            "{what}: {:#x} is not an interop object (destroyed already?)",
            interop as usize
        ));
    }
    obj
}

export! {
    /// LLVM 22: an interop object of `ty` (0 `target`, 1 `targetsync`) for `device` (−1: the
    /// default device), with the foreign runtime the first of the `num_prefers` preferences
    /// the device supports; `omp_interop_none` (null) where the device has none or offloading
    /// is disabled. A `targetsync` object is made once `deps` are met.
    fn __tgt_interop_get(loc: *const Ident, ty: i32, device: i64, num_prefers: i32,
                         prefers: *const InteropSpec, ctx: *const InteropCtx,
                         deps: *const DepPack) -> *mut c_void = std::ptr::null_mut(); {
        let rt = runtime();
        let (flags, gtid) = context(ctx);
        let Some(kind) = InteropKind::from_llvm22(ty) else {
            report(format_args!("__tgt_interop_get: unknown interop type {ty}"));
            return std::ptr::null_mut();
        };
        if kind == InteropKind::TargetSync {
            wait_pack(loc, gtid, deps);
        }
        let prefers: Vec<i64> = match usize::try_from(num_prefers) {
            Ok(n) if n > 0 && !prefers.is_null() => {
                // SAFETY: the caller passes `num_prefers` interop_spec_t values.
                let specs = unsafe { std::slice::from_raw_parts(prefers, n) };
                specs.iter().map(|s| i64::from(s.fr_id)).collect()
            }
            _ => Vec::new(),
        };
        let r = if flags & CTX_IMPLICIT != 0 {
            rt.interop_implicit(gtid, device, kind, &prefers)
        } else {
            rt.interop_init_preferring(device, kind, &prefers)
                .map(|obj| Arc::into_raw(obj) as usize)
        };
        match r {
            Ok(handle) => handle as *mut c_void,
            // A device without a foreign runtime (the host device): none, silently, as LLVM 22.
            Err(Error::NoForeignRuntime { .. }) => std::ptr::null_mut(),
            Err(e) => {
                report(format_args!("__tgt_interop_get: {e}"));
                std::ptr::null_mut()
            }
        }
    }
}

export! {
    /// LLVM 22's `interop use`: the object's foreign work completes (its callbacks run) before
    /// this returns; with `nowait` (and no dependences, which make it wait as in LLVM 22) in a
    /// deferred task instead, which the next `taskwait` waits for.
    fn __tgt_interop_use60(loc: *const Ident, interop: *mut c_void, ctx: *const InteropCtx,
                           deps: *const DepPack) -> c_int = OFFLOAD_FAIL; {
        let rt = runtime();
        let Some(obj) = live_object(rt, "__tgt_interop_use60", interop) else {
            return OFFLOAD_FAIL;
        };
        let (flags, gtid) = context(ctx);
        let nowait = flags & CTX_NOWAIT != 0 && deps.is_null();
        wait_pack(loc, gtid, deps);
        complete(loc, gtid, 0, std::ptr::null_mut(), nowait, obj, false);
        OFFLOAD_SUCCESS
    }
}

export! {
    /// LLVM 22's `interop destroy`: once `deps` are met, the object's foreign work completes
    /// (its callbacks run) and the object is gone (its queue back in the pool).
    fn __tgt_interop_release(loc: *const Ident, interop: *mut c_void, ctx: *const InteropCtx,
                             deps: *const DepPack) -> c_int = OFFLOAD_FAIL; {
        let rt = runtime();
        let Some(obj) = live_object(rt, "__tgt_interop_release", interop) else {
            return OFFLOAD_FAIL;
        };
        let (_, gtid) = context(ctx);
        wait_pack(loc, gtid, deps);
        // The program's reference goes; `obj` keeps the object until it is complete.
        drop(rt.interop_release(interop as usize));
        match finish(obj, true) {
            Ok(()) => OFFLOAD_SUCCESS,
            Err(e) => {
                report(format_args!("__tgt_interop_release: {e}"));
                OFFLOAD_FAIL
            }
        }
    }
}

export! {
    /// LLVM 22: `callback(interop, data)` runs when the object's foreign work next completes.
    /// `omp_irc_success`, or `omp_irc_other` for `omp_interop_none`, a dead object or a null
    /// callback.
    fn ompx_interop_add_completion_callback(interop: *mut c_void, callback: *mut c_void,
                                            data: *mut c_void) -> c_int = OMP_IRC_OTHER; {
        let Some(rt) = RUNTIME.get() else { return OMP_IRC_OTHER };
        if callback.is_null() {
            report(format_args!("ompx_interop_add_completion_callback: null callback"));
            return OMP_IRC_OTHER;
        }
        let Some(obj) = live_object(rt, "ompx_interop_add_completion_callback", interop) else {
            return OMP_IRC_OTHER;
        };
        obj.add_completion_callback(CompletionCallback {
            function: callback as usize,
            data: data as usize,
        });
        Rc::Success as c_int
    }
}

/// `omp_irc_other`.
const OMP_IRC_OTHER: c_int = -6;

/// A property query: the value (if the object has one of that type) and its `rc`.
fn query(
    interop: *mut c_void,
    property: c_int,
    want: PropertyType,
    rc: *mut c_int,
) -> Option<Value> {
    let (value, code) = match RUNTIME.get().and_then(|rt| rt.interop(interop as usize)) {
        Some(obj) => obj.get(property, want),
        None if interop.is_null() => (None, Rc::Empty),
        None => (None, Rc::Other),
    };
    if !rc.is_null() {
        // SAFETY: the program passes the address of an int (or null, checked).
        unsafe { *rc = code as c_int };
    }
    value
}

export! {
    fn omp_get_interop_int(interop: *mut c_void, property: c_int, rc: *mut c_int) -> isize = 0; {
        match query(interop, property, PropertyType::Int, rc) {
            Some(Value::Int(v)) => v as isize,
            _ => 0,
        }
    }
}

export! {
    fn omp_get_interop_ptr(interop: *mut c_void, property: c_int, rc: *mut c_int) -> *mut c_void = std::ptr::null_mut(); {
        match query(interop, property, PropertyType::Ptr, rc) {
            Some(Value::Ptr(p)) => p as *mut c_void,
            _ => std::ptr::null_mut(),
        }
    }
}

export! {
    fn omp_get_interop_str(interop: *mut c_void, property: c_int, rc: *mut c_int) -> *const c_char = std::ptr::null(); {
        match query(interop, property, PropertyType::Str, rc) {
            Some(Value::Str(s)) => s.as_ptr(),
            _ => std::ptr::null(),
        }
    }
}

export! {
    /// The property's name, for any object (`omp_interop_none` included); NULL only for a
    /// property id out of range.
    fn omp_get_interop_name(_interop: *mut c_void, property: c_int) -> *const c_char = std::ptr::null(); {
        omptarget_core::interop::Property::from_id(property)
            .map_or(std::ptr::null(), |p| p.name().as_ptr())
    }
}

export! {
    /// The C type of the property's value in the object's foreign runtime (a generic one for
    /// `omp_interop_none`); NULL only for a property id out of range.
    fn omp_get_interop_type_desc(interop: *mut c_void, property: c_int) -> *const c_char = std::ptr::null(); {
        let obj = RUNTIME.get().and_then(|rt| rt.interop(interop as usize));
        Interop::type_desc(obj.as_deref(), property).map_or(std::ptr::null(), |s| s.as_ptr())
    }
}

export! {
    /// OpenMP 5.1's description of a return code (LLVM 19 has none: libomp returns NULL).
    fn omp_get_interop_rc_desc(_interop: *mut c_void, rc: c_int) -> *const c_char = std::ptr::null(); {
        Rc::description(rc).map_or(std::ptr::null(), |s| s.as_ptr())
    }
}

export! {
    /// What libomp 19's `omp_get_interop_rc_desc` looks up (a typo in its `dlsym` name, read
    /// off `libomp.so.5`'s strings): without this name programs get NULL from it.
    fn omp_get_interop_rec_desc(interop: *mut c_void, rc: c_int) -> *const c_char = std::ptr::null(); {
        // SAFETY: the same routine, same arguments.
        unsafe { omp_get_interop_rc_desc(interop, rc) }
    }
}

export! {
    /// Implementation-defined properties (ids 0 and up): none (LLVM 19 has no such routine:
    /// libomp returns 0 under it).
    fn omp_get_num_interop_properties(_interop: *mut c_void) -> c_int = 0; {
        omptarget_core::interop::NUM_IMPLEMENTATION_PROPERTIES
    }
}
