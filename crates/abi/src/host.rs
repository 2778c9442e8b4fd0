//! The link to libomp: `omp_get_default_device` and `__kmpc_get_target_offload`, looked up by
//! name at run time (libomp is loaded before us; a program without it gets the defaults).

use omptarget_core::HostRuntime;
use std::ffi::CStr;

type IntFn = unsafe extern "C" fn() -> i32;

pub struct Libomp {
    default_device: Option<IntFn>,
    target_offload: Option<IntFn>,
}

fn lookup(name: &CStr) -> Option<IntFn> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name; a non-null result is the
    // address of libomp's function of type `int(void)`.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    // SAFETY: see above: both are `int(void)` C functions.
    (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut libc::c_void, IntFn>(p) })
}

impl Libomp {
    pub fn new() -> Self {
        Self {
            default_device: lookup(c"omp_get_default_device"),
            target_offload: lookup(c"__kmpc_get_target_offload"),
        }
    }
}

impl HostRuntime for Libomp {
    fn default_device(&self) -> i32 {
        // SAFETY: libomp's omp_get_default_device takes no arguments.
        self.default_device.map_or(0, |f| unsafe { f() })
    }

    fn target_offload(&self) -> i32 {
        // SAFETY: libomp's __kmpc_get_target_offload takes no arguments.
        self.target_offload.map_or(1, |f| unsafe { f() })
    }
}
