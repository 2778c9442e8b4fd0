//! Tool interfaces: record/replay (OMPT is `ompt/`, interop `interop.rs`), as LLVM 19's
//! `llvm-omp-kernel-replay` calls them (`omptarget_core::record` has the formats).
//!
//! LLVM 22's interop interface (`__tgt_interop_get/use60/release`) is in `interop.rs`.

use super::*;

export! {
    /// Begins recording (`record`) or replaying on `device`, with `size` bytes of device memory
    /// at `vaddr` (the recording's `BumpAllocVAStart`); `offset` receives how far the memory
    /// lies from `vaddr` when it could not be placed there (LLVM's `ReqPtrArgOffset`, a
    /// `uint64_t &` in its declaration).
    fn __tgt_activate_record_replay(device: i64, size: u64, vaddr: *mut c_void, record: bool,
                                    save: bool, offset: *mut u64) -> c_int = OFFLOAD_FAIL; {
        let rt = runtime();
        match rt.activate_record_replay(device, size, vaddr as usize, record, save) {
            Ok(off) => {
                if !offset.is_null() {
                    // SAFETY: the caller passes the address of its uint64_t.
                    unsafe { *offset = off };
                }
                OFFLOAD_SUCCESS
            }
            Err(Error::InvalidDevice { id, count }) => invalid_device(rt.process_abi(), id, count),
            Err(e) => {
                report(format_args!("__tgt_activate_record_replay: {e}"));
                OFFLOAD_FAIL
            }
        }
    }
}

export! {
    /// Replays a recorded kernel: `memory` (`memory_size` bytes) goes to the device's first
    /// record/replay allocation and the kernel of host region `host_ptr` runs with the `n`
    /// words `args[i] + offsets[i]` as they are, `teams` blocks of `threads` threads.
    fn __tgt_target_kernel_replay(loc: *const Ident, device: i64, host_ptr: *mut c_void,
                                  memory: *mut c_void, memory_size: i64, args: *mut *mut c_void,
                                  offsets: *mut isize, n: i32, teams: i32, threads: i32,
                                  tripcount: u64) -> c_int = OFFLOAD_FAIL; {
        let rt = runtime();
        let n = usize::try_from(n).unwrap_or(0);
        if (n > 0 && args.is_null()) || (memory_size > 0 && memory.is_null()) {
            report(format_args!("__tgt_target_kernel_replay: null argument or memory array"));
            outcome(rt, false, loc);
            return OFFLOAD_FAIL;
        }
        let words: Vec<usize> = (0..n)
            .map(|i| {
                // SAFETY: the caller passes `n` arguments and, when not null, `n` offsets.
                unsafe {
                    let a = *args.add(i) as usize;
                    let o = if offsets.is_null() { 0 } else { *offsets.add(i) };
                    a.wrapping_add(o as usize)
                }
            })
            .collect();
        let memory: &[u8] = match usize::try_from(memory_size) {
            // SAFETY: the caller passes `memory_size` readable bytes.
            Ok(len) if len > 0 => unsafe { std::slice::from_raw_parts(memory.cast::<u8>(), len) },
            _ => &[],
        };
        let r = rt.replay_kernel(
            device,
            host_ptr as usize,
            memory,
            &words,
            teams.max(0) as u32,
            threads.max(0) as u32,
            tripcount,
        );
        match r {
            Ok(()) => OFFLOAD_SUCCESS,
            Err(Error::InvalidDevice { id, count }) => invalid_device(rt.process_abi(), id, count),
            Err(e) => {
                report(format_args!("{e}"));
                outcome(rt, false, loc);
                OFFLOAD_FAIL
            }
        }
    }
}

export! {
    /// LLVM 22: libomp calls this at its synchronisation points (taskwait, barrier) so that the
    /// runtime completes the interop objects created implicitly for the thread (`dispatch`,
    /// `__tgt_interop_get` with the `implicit` flag) that were used since the last one; their
    /// completion callbacks run.
    fn __tgt_target_sync(_loc: *const Ident, gtid: c_int, _task: *mut c_void, _event: *mut c_void) {
        // Nothing to do before the runtime exists (no object can).
        let Some(rt) = RUNTIME.get() else { return };
        super::interop::target_sync(rt, gtid);
    }
}
