//! Interop (OpenMP 5.2 §14): `#pragma omp interop init/use/destroy` as clang 19 calls them
//! (`__tgt_interop_*`, the interop variable's address, clang's dependence array) and the
//! `omp_get_interop_*` routines.
//!
//! Where programs' calls land: a clang-19 program links `omp_get_interop_*`,
//! `omp_get_num_interop_properties` and `omp_get_interop_rc_desc` from libomp
//! (`@VERSION`); libomp's versions look each name up with `dlsym(RTLD_NEXT, ...)` and call
//! ours (LLVM 19's libomptarget has no `omp_get_num_interop_properties` or
//! `omp_get_interop_rc_desc`, so libomp returns 0 and NULL for those under it).

use super::*;
use omptarget_core::interop::{Interop, InteropKind, PropertyType, Rc, Value};

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
    let Some(obj) = rt.interop(handle) else {
        report(format_args!(
            "interop {what}: {:#x} is not an interop object (destroyed already?)",
            handle
        ));
        return None;
    };
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
        let rt = runtime();
        let r = if destroy {
            rt.interop_destroy(obj)
        } else {
            obj.complete_foreign_work()
        };
        if let Err(e) = r {
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
