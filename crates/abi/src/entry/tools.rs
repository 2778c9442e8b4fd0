//! Tool interfaces: record/replay (OMPT is `ompt/`, interop `interop.rs`).

use super::*;

unsupported! {
    fn __tgt_activate_record_replay(device: i64, size: u64, vaddr: *mut c_void, record: bool,
                                    save: bool, offset: *mut u64) -> c_int = OFFLOAD_FAIL;
    fn __tgt_target_kernel_replay(loc: *const Ident, device: i64, host_ptr: *mut c_void,
                                  memory: *mut c_void, memory_size: i64, args: *mut *mut c_void,
                                  offsets: *mut isize, n: i32, teams: i32, threads: i32,
                                  tripcount: u64) -> c_int = OFFLOAD_FAIL;
}
