//! Tool interfaces: interop and record/replay (OMPT is `ompt/`).

use super::*;

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
