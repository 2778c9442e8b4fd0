//! LLVM 22's entry points for kernel languages (CUDA and HIP compiled with
//! `--offload-via-llvm`) on the OpenMP runtime: the call configuration a `<<<grid, block>>>`
//! launch pushes and pops, and `llvmLaunchKernel`, which LLVM 22 turns into a
//! `__tgt_target_kernel` call on device 0.

use super::*;

/// CUDA's `dim3`, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// One thread's pushed launch configuration.
#[derive(Clone, Copy)]
struct CallConfiguration {
    grid: Dim3,
    block: Dim3,
    shared_memory: usize,
    stream: *mut c_void,
}

thread_local! {
    static CALL_CONFIGURATION: Cell<CallConfiguration> = const {
        Cell::new(CallConfiguration {
            grid: Dim3 { x: 0, y: 0, z: 0 },
            block: Dim3 { x: 0, y: 0, z: 0 },
            shared_memory: 0,
            stream: std::ptr::null_mut(),
        })
    };
}

/// LLVM's `KernelLaunchParamsTy`: what `llvmLaunchKernel`'s argument pointer points at.
#[repr(C)]
struct KernelLaunchParams {
    size: usize,
    data: *mut c_void,
    ptrs: *mut *mut c_void,
}

/// `KernelArgsTy::Flags` bit 1: the kernel was launched by a kernel language.
pub(super) const FLAG_IS_CUDA: u64 = 2;

/// The parameter bytes of a kernel-language launch: what the `KernelLaunchParamsTy` that
/// `KernelArgsTy::ArgPtrs` points at describes (none for a null pointer or a null buffer).
#[cold]
pub(super) fn launch_params(params: *const c_void) -> LanguageArgs {
    if params.is_null() {
        return LanguageArgs::default();
    }
    // SAFETY: llvmLaunchKernel's caller (clang's launch stub) passes a KernelLaunchParamsTy.
    let p = unsafe { &*params.cast::<KernelLaunchParams>() };
    if p.data.is_null() {
        return LanguageArgs::default();
    }
    LanguageArgs {
        data: p.data as usize,
        size: p.size,
    }
}

export! {
    /// Saves this thread's configuration for the next launch; returns 0 (success).
    fn __llvmPushCallConfiguration(grid: Dim3, block: Dim3, shared_memory: usize,
                                   stream: *mut c_void) -> u32 = 1; {
        CALL_CONFIGURATION.with(|c| {
            c.set(CallConfiguration { grid, block, shared_memory, stream })
        });
        0
    }
}

export! {
    /// Hands back this thread's pushed configuration (`stream` points at a `void *`); returns
    /// 0 (success).
    fn __llvmPopCallConfiguration(grid: *mut Dim3, block: *mut Dim3, shared_memory: *mut usize,
                                  stream: *mut c_void) -> u32 = 1; {
        if grid.is_null() || block.is_null() || shared_memory.is_null() || stream.is_null() {
            report(format_args!("__llvmPopCallConfiguration called with a null pointer"));
            return 1;
        }
        let c = CALL_CONFIGURATION.with(Cell::get);
        // SAFETY: the caller passes four valid out-pointers (clang's launch code).
        unsafe {
            *grid = c.grid;
            *block = c.block;
            *shared_memory = c.shared_memory;
            *stream.cast::<*mut c_void>() = c.stream;
        }
        0
    }
}

export! {
    /// Launches the kernel whose host stub is `func` on device 0 with `grid` blocks of `block`
    /// threads and the parameter buffer `args` describes (a `KernelLaunchParamsTy`), as LLVM
    /// 22 does: through `__tgt_target_kernel` with no map arguments, complete when it returns.
    /// The stream is not used (LLVM 22 ignores it too).
    fn llvmLaunchKernel(func: *const c_void, grid: Dim3, block: Dim3, args: *mut c_void,
                        shared_memory: usize, _stream: *mut c_void) -> u32 = OFFLOAD_FAIL as u32; {
        let mut ka = KernelArgs {
            version: 0,
            num_args: 0,
            arg_base_ptrs: std::ptr::null_mut(),
            arg_ptrs: args.cast(),
            arg_sizes: std::ptr::null_mut(),
            arg_types: std::ptr::null_mut(),
            arg_names: std::ptr::null_mut(),
            arg_mappers: std::ptr::null_mut(),
            tripcount: 0,
            flags: FLAG_IS_CUDA,
            num_teams: [grid.x, grid.y, grid.z],
            thread_limit: [block.x, block.y, block.z],
            dyn_cgroup_mem: u32::try_from(shared_memory).unwrap_or(u32::MAX),
        };
        // SAFETY: a plain Rust call of our own export with a KernelArgs we own.
        let rc = unsafe {
            __tgt_target_kernel(std::ptr::null(), 0, grid.x as i32, block.x as i32,
                                func as *mut c_void, &mut ka)
        };
        rc as u32
    }
}
