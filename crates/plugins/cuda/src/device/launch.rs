//! Kernel launches: OpenMP kernels (argument words, LLVM 19's geometry rules of kernel.rs,
//! the launch environment for cross-team reductions) and kernel languages' launches
//! (`llvmLaunchKernel`), with the driver facts about parameter buffers the CLI probes too.

use super::{CudaDevice, plugin_info};
use crate::driver::{CUdeviceptr, CUstream, call};
use crate::kernel::KernelInfo;
use cudarc::driver::sys;
use omptarget_plugin::words::Words;
use omptarget_plugin::{AllocKind, Error, ErrorKind, KernelId, LaunchConfig, QueueId, Result};

/// The size of a kernel's parameters as the driver lays them out: the last parameter's offset
/// plus its size (`cuFuncGetParamInfo`, CUDA 12.4), `None` where the driver cannot say.
///
/// # Safety
/// `func` is a live function of a loaded module.
pub unsafe fn param_bytes(func: sys::CUfunction) -> Option<usize> {
    let mut end = None;
    for i in 0..4096 {
        let (mut off, mut size) = (0usize, 0usize);
        // SAFETY: asks about parameter `i` of a live function; an index past the last one
        // is an error, not undefined behaviour.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
            sys::cuFuncGetParamInfo(func, i, &mut off, &mut size)
        }));
        match r {
            Ok(sys::CUresult::CUDA_SUCCESS) => end = Some(off + size),
            Ok(sys::CUresult::CUDA_ERROR_INVALID_VALUE) => return Some(end.unwrap_or(0)),
            _ => return None,
        }
    }
    end
}

/// `cuLaunchKernel`'s `extra` array for a parameter buffer at `data` of `*size` bytes:
/// `CU_LAUNCH_PARAM_BUFFER_POINTER`, `CU_LAUNCH_PARAM_BUFFER_SIZE`, `CU_LAUNCH_PARAM_END` (the
/// driver's macros are these integers cast to pointers).
pub fn launch_param_buffer(data: usize, size: &mut usize) -> [*mut std::ffi::c_void; 5] {
    let tag = |v: u32| std::ptr::without_provenance_mut(v as usize);
    [
        tag(sys::CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT),
        data as *mut std::ffi::c_void,
        tag(sys::CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT),
        (size as *mut usize).cast(),
        tag(sys::CU_LAUNCH_PARAM_END_AS_INT),
    ]
}

/// A kernel language's launch (`llvmLaunchKernel`, LLVM 22's `IsCUDA` flag): the grid and
/// blocks exactly as given (3-D), and the parameter buffer handed to the driver as it is
/// (`CU_LAUNCH_PARAM_BUFFER_POINTER`/`_SIZE`, as LLVM 22's CUDA plugin passes it); the driver
/// copies it before the call returns. The size given is the kernel's own parameter size where
/// the driver reports it: clang pads the buffer to its alignment (a kernel of 58 bytes of
/// parameters gets a 64-byte buffer), and the driver refuses a buffer larger than the kernel's
/// parameters (see `omptarget-suite probe param-buffer`).
fn launch_language(
    k: &KernelInfo,
    lang: omptarget_plugin::LanguageArgs,
    config: &LaunchConfig,
    s: CUstream,
) -> Result<()> {
    let func = k.func;
    let dim = |v: u32| v.max(1);
    let [gx, gy, gz] = config.num_teams.map(dim);
    let [bx, by, bz] = config.thread_limit.map(dim);
    // SAFETY: `func` is a function of a loaded module (the kernel table holds live ones).
    let known = *k.param_bytes.get_or_init(|| unsafe { param_bytes(func) });
    let mut size = match known {
        Some(p) if p < lang.size => p,
        _ => lang.size,
    };
    let mut extra = launch_param_buffer(lang.data, &mut size);
    let extra_ptr = if lang.size > 0 {
        extra.as_mut_ptr()
    } else {
        std::ptr::null_mut()
    };
    // SAFETY: the buffer holds the kernel's parameters as it declares them (clang's launch
    // stub built it); `extra` lives for the call.
    call("cuLaunchKernel", || unsafe {
        sys::cuLaunchKernel(
            func,
            gx,
            gy,
            gz,
            bx,
            by,
            bz,
            config.dyn_cgroup_mem,
            s,
            std::ptr::null_mut(),
            extra_ptr,
        )
    })
}

impl CudaDevice {
    pub(super) fn launch_kernel(
        &self,
        kernel: KernelId,
        args: &[usize],
        config: &LaunchConfig,
        queue: QueueId,
    ) -> Result<()> {
        self.current()?;
        let kernels = self.kernels.read().unwrap_or_else(|e| e.into_inner());
        let k = kernels
            .get(kernel.0)
            .ok_or_else(|| Error::new(ErrorKind::InvalidArgument, "unknown CUDA kernel"))?;
        if let Some(lang) = config.language {
            let s = self.submit(queue)?;
            return launch_language(k, lang, config, s);
        }
        let (blocks, threads) = k.geometry(&self.limits, config);
        // Only a bare kernel is launched in more than one dimension, as LLVM 22 launches it.
        let (grid_yz, block_yz) = if k.is_bare() {
            let d = |v: u32| v.max(1);
            (
                [d(config.num_teams[1]), d(config.num_teams[2])],
                [d(config.thread_limit[1]), d(config.thread_limit[2])],
            )
        } else {
            ([1, 1], [1, 1])
        };
        let s = self.submit(queue)?;
        // The hidden launch environment (version 3+; the core upgrades older launches of
        // kernels that take it): ~0 unless the kernel reduces across teams.
        let with_env = config.version >= 3;
        let (launch_env, env_alloc) = if with_env {
            self.prepare_launch_env(k.reduction_bytes(), config, queue)?
        } else {
            (usize::MAX, None)
        };
        // The argument words and the pointers to them, inline for up to 32 arguments, so a
        // launch allocates nothing.
        let mut words: Words<usize> = Words::default();
        if with_env {
            words.push(launch_env);
        }
        for &a in args {
            words.push(a);
        }
        let mut params: Words<usize> = Words::default();
        for w in words.as_mut_slice() {
            params.push((w as *mut usize) as usize);
        }
        // SAFETY: one pointer-sized parameter per kernel argument, as clang's kernels take them.
        let r = call("cuLaunchKernel", || unsafe {
            sys::cuLaunchKernel(
                k.func,
                blocks,
                grid_yz[0],
                grid_yz[1],
                threads,
                block_yz[0],
                block_yz[1],
                config.dyn_cgroup_mem.max(self.shared_memory_size),
                s,
                params.as_mut_slice().as_mut_ptr().cast(),
                std::ptr::null_mut(),
            )
        });
        if let Some((buffer, env_ptr)) = env_alloc {
            let _ = self.mem_free(buffer, AllocKind::Device, Some(queue));
            let _ = self.mem_free(env_ptr, AllocKind::Device, Some(queue));
        }
        r
    }

    pub(super) fn kernel_launch_environment(
        &self,
        kernel: KernelId,
        config: &LaunchConfig,
        queue: QueueId,
    ) -> Result<usize> {
        self.current()?;
        let reduction = {
            let kernels = self.kernels.read().unwrap_or_else(|e| e.into_inner());
            kernels
                .get(kernel.0)
                .ok_or_else(|| Error::new(ErrorKind::InvalidArgument, "unknown CUDA kernel"))?
                .reduction_bytes()
        };
        Ok(self.prepare_launch_env(reduction, config, queue)?.0)
    }

    /// The launch environment of a kernel with `reduction` bytes of cross-team reduction
    /// data (LLVM 19's `KernelLaunchEnvironmentTy {ReductionCnt, ReductionIterCnt,
    /// ReductionBuffer}`), written on `queue`: `usize::MAX` and nothing allocated without
    /// reductions; else its address and the two blocks to free after the launch.
    fn prepare_launch_env(
        &self,
        reduction: usize,
        config: &LaunchConfig,
        queue: QueueId,
    ) -> Result<(usize, Option<(usize, usize)>)> {
        if reduction == 0 {
            return Ok((usize::MAX, None));
        }
        let s = self.submit(queue)?;
        let buffer = self.alloc_device(reduction, Some(queue))?;
        let env_ptr = self.alloc_device(16, Some(queue))?;
        let le: [u64; 2] = [0, buffer as u64];
        if config.info & 0x20 != 0 {
            plugin_info(
                0x20,
                "\"PluginInterface\"",
                self.index,
                &format!(
                    "Copying data from host to device, HstPtr=0x{:016x}, TgtPtr=0x{:016x}, Size=16, Name=KernelLaunchEnv",
                    le.as_ptr() as usize,
                    env_ptr
                ),
            );
        }
        // SAFETY: a 16-byte copy from a local; pageable host-to-device copies are staged
        // before the call returns.
        call("cuMemcpyHtoDAsync", || unsafe {
            sys::cuMemcpyHtoDAsync_v2(env_ptr as CUdeviceptr, le.as_ptr().cast(), 16, s)
        })?;
        Ok((env_ptr, Some((buffer, env_ptr))))
    }

    pub(super) fn launch_geometry(
        &self,
        kernel: KernelId,
        config: &LaunchConfig,
    ) -> (u32, u32, &'static str) {
        let kernels = self.kernels.read().unwrap_or_else(|e| e.into_inner());
        match kernels.get(kernel.0) {
            Some(k) => {
                let (b, t) = k.geometry(&self.limits, config);
                (b, t, k.mode_name())
            }
            None => (0, 0, "unknown"),
        }
    }
}
