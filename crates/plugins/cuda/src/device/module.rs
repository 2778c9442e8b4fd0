//! Images on the device: loading a module (and telling the device runtime its environment),
//! unloading it, looking kernels and globals up in it, and the indirect-call table.

use super::CudaDevice;
use crate::driver::{CUdeviceptr, CUmodule, call};
use crate::image::{self, ImageKind};
use crate::kernel::KernelInfo;
use cudarc::driver::sys;
use omptarget_plugin::{
    DevicePtr, Error, ErrorKind, ImageInfo, KernelId, LoadEnv, ModuleId, Result,
};
use std::collections::HashSet;
use std::sync::Arc;

/// A loaded image.
pub(super) struct Module {
    code: Code,
    /// The image's indirect-call table in device memory (0: none), freed with the module.
    indirect_calls: CUdeviceptr,
}

/// A loaded module and what its image says it holds.
#[derive(Clone)]
pub(super) struct Code {
    module: CUmodule,
    /// The names of a cubin's symbol table; `None` for PTX and fatbinaries (or a cubin without
    /// one), whose globals only the driver knows. A symbol the image lacks is not asked of the
    /// driver: optional globals (a bare kernel has no `_kernel_environment`) are looked up at
    /// every load, and a failed `cuModuleGetGlobal` is an error to compute-sanitizer (LLVM 19
    /// reads them from the image).
    symbols: Option<Arc<HashSet<Box<str>>>>,
}

impl Code {
    /// A global's address and size, or `None` if the module has no such symbol.
    fn global(&self, name: &str) -> Result<Option<(CUdeviceptr, usize)>> {
        if self.symbols.as_ref().is_some_and(|s| !s.contains(name)) {
            return Ok(None);
        }
        let cname = std::ffi::CString::new(name)
            .map_err(|_| Error::new(ErrorKind::SymbolNotFound, format!("bad symbol {name:?}")))?;
        let mut ptr: CUdeviceptr = 0;
        let mut size = 0usize;
        // SAFETY: looks a symbol up in a loaded module.
        let r = call("cuModuleGetGlobal", || unsafe {
            sys::cuModuleGetGlobal_v2(&mut ptr, &mut size, self.module, cname.as_ptr())
        });
        Ok(r.ok().map(|_| (ptr, size)))
    }

    /// Whether the module has a global of that name: the image's answer where it has a
    /// symbol table, else the driver's.
    fn has(&self, name: &str) -> Result<bool> {
        match &self.symbols {
            Some(s) => Ok(s.contains(name)),
            None => Ok(self.global(name)?.is_some()),
        }
    }

    /// A global's bytes, read synchronously (load-time metadata), or `None` without it.
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let Some((ptr, size)) = self.global(name)? else {
            return Ok(None);
        };
        let mut buf = vec![0u8; size];
        // SAFETY: copies `size` bytes from the global into a buffer of that size.
        call("cuMemcpyDtoH", || unsafe {
            sys::cuMemcpyDtoH_v2(buf.as_mut_ptr().cast(), ptr, size)
        })?;
        Ok(Some(buf))
    }
}

/// The driver's calls through which a kernel prints: device `printf` and CUDA's `assert`
/// (the OpenMP device runtime's `assert` prints through `printf`).
const PRINT_CALLS: [&str; 2] = ["vprintf", "__assertfail"];

/// Whether `name` occurs in `bytes` (PTX text, or a fatbinary's uncompressed parts).
fn mentions(bytes: &[u8], name: &str) -> bool {
    bytes.windows(name.len()).any(|w| w == name.as_bytes())
}

/// Whether kernels of an image may print: a cubin's symbol table names one of
/// [`PRINT_CALLS`] (undefined: the driver provides them), PTX text mentions one; a fatbinary,
/// or a cubin without a symbol table, may.
fn may_print(symbols: Option<&HashSet<Box<str>>>, bytes: &[u8], kind: ImageKind) -> bool {
    match (symbols, kind) {
        (Some(s), _) => PRINT_CALLS.iter().any(|n| s.contains(*n)),
        (None, ImageKind::Ptx) => PRINT_CALLS.iter().any(|n| mentions(bytes, n)),
        (None, _) => true,
    }
}

/// The symbol through which code linked with LLVM's GPU C library (`libcgpu`: its device
/// `printf`, `fopen`, `malloc`, ...) calls a server on the host. LLVM's plugins start that
/// server for an image that has it; this runtime runs none, so such an image is refused at
/// load: its kernels would wait for answers that never come.
pub(super) const GPU_LIBC_CLIENT: &str = "__llvm_libc_rpc_client";

/// Whether an image is linked with LLVM's GPU C library: its symbol table (a cubin) or its
/// bytes (PTX, a fatbinary: a compressed one is not seen) name [`GPU_LIBC_CLIENT`].
fn uses_gpu_libc(symbols: Option<&HashSet<Box<str>>>, bytes: &[u8]) -> bool {
    match symbols {
        Some(s) => s.contains(GPU_LIBC_CLIENT),
        None => mentions(bytes, GPU_LIBC_CLIENT),
    }
}

/// The device runtime's `DeviceEnvironmentTy` (LLVM 19).
#[repr(C)]
struct DeviceEnvironment {
    debug_kind: u32,
    num_devices: u32,
    device_num: u32,
    dynamic_mem_size: u32,
    clock_frequency: u64,
    indirect_call_table: u64,
    indirect_call_table_size: u64,
    hardware_parallelism: u64,
}

impl CudaDevice {
    pub(super) fn module_load(&self, image: &ImageInfo<'_>, env: &LoadEnv) -> Result<ModuleId> {
        self.current()?;
        let kind = image::classify(image.bytes).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidImage,
                "not an NVIDIA image (cubin, PTX or fatbinary)",
            )
        })?;
        image::check_structure(image.bytes, kind)
            .map_err(|why| Error::new(ErrorKind::InvalidImage, why))?;
        if let ImageKind::Cubin { sm, .. } = kind
            && !image::runs_on(sm, self.arch)
        {
            return Err(Error::new(
                ErrorKind::InvalidImage,
                format!(
                    "the image is built for sm_{sm}, device {} is sm_{}",
                    self.index, self.arch
                ),
            ));
        }
        let symbols = match kind {
            ImageKind::Cubin { .. } => {
                omptarget_plugin::elf::symbol_names(image.bytes).map(Arc::new)
            }
            _ => None,
        };
        if uses_gpu_libc(symbols.as_deref(), image.bytes) {
            return Err(Error::new(
                ErrorKind::InvalidImage,
                format!(
                    "the image is linked with LLVM's GPU C library (it has \
                     {GPU_LIBC_CLIENT}), whose RPC server this runtime does not run: its \
                     device printf, file and allocation calls would never be answered"
                ),
            ));
        }
        // PTX must be NUL-terminated for the JIT.
        let owned;
        let data: *const std::ffi::c_void = if kind == ImageKind::Ptx {
            let mut v = image.bytes.to_vec();
            v.push(0);
            owned = v;
            owned.as_ptr().cast()
        } else {
            image.bytes.as_ptr().cast()
        };
        let mut module: CUmodule = std::ptr::null_mut();
        // SAFETY: the image bytes outlive the call; no JIT options.
        call("cuModuleLoadDataEx", || unsafe {
            sys::cuModuleLoadDataEx(
                &mut module,
                data,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        })?;
        let code = Code { module, symbols };
        if may_print(code.symbols.as_deref(), image.bytes, kind) {
            self.prints
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        // The device runtime reads its environment from this global.
        if let Some((ptr, size)) = code.global("__omp_rtl_device_environment")? {
            let de = DeviceEnvironment {
                debug_kind: self.device_rtl_debug,
                num_devices: env.num_devices,
                device_num: env.device_num,
                dynamic_mem_size: self.shared_memory_size,
                // LLVM 19's CUDA plugin says 1 GHz, the resolution of the global timer the
                // device runtime reads for `omp_get_wtime`.
                clock_frequency: 1_000_000_000,
                indirect_call_table: 0,
                indirect_call_table_size: 0,
                hardware_parallelism: self.limits.hardware_parallelism,
            };
            let n = size.min(std::mem::size_of::<DeviceEnvironment>());
            // SAFETY: copies at most the global's size from a live struct.
            call("cuMemcpyHtoD", || unsafe {
                sys::cuMemcpyHtoD_v2(ptr, (&raw const de).cast(), n)
            })?;
        }
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        modules.push(Some(Module {
            code,
            indirect_calls: 0,
        }));
        Ok(ModuleId(modules.len() - 1))
    }

    pub(super) fn module_unload(&self, m: ModuleId) -> Result<()> {
        self.current()?;
        let module = self
            .modules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(m.0)
            .and_then(Option::take);
        if let Some(module) = module {
            // SAFETY: unloads a module we loaded, once.
            call("cuModuleUnload", || unsafe {
                sys::cuModuleUnload(module.code.module)
            })?;
            if module.indirect_calls != 0 {
                // SAFETY: frees the table allocated for this module, once.
                call("cuMemFree", || unsafe {
                    sys::cuMemFree_v2(module.indirect_calls)
                })?;
            }
        }
        Ok(())
    }

    pub(super) fn module(&self, m: ModuleId) -> Result<Code> {
        self.modules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(m.0)
            .and_then(|x| x.as_ref().map(|x| x.code.clone()))
            .ok_or_else(|| Error::new(ErrorKind::InvalidArgument, "unknown CUDA module"))
    }

    pub(super) fn module_get_function(&self, m: ModuleId, name: &str) -> Result<KernelId> {
        self.current()?;
        let code = self.module(m)?;
        let cname = std::ffi::CString::new(name).map_err(|_| {
            Error::new(
                ErrorKind::SymbolNotFound,
                format!("bad kernel name {name:?}"),
            )
        })?;
        let mut func: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: looks a kernel up in a loaded module.
        call("cuModuleGetFunction", || unsafe {
            sys::cuModuleGetFunction(&mut func, code.module, cname.as_ptr())
        })
        .map_err(|e| Error::new(ErrorKind::SymbolNotFound, format!("kernel '{name}': {e}")))?;
        let env = code.read(&format!("{name}_kernel_environment"))?;
        let mut max_block = 0;
        // SAFETY: reads one attribute of a live function.
        call("cuFuncGetAttribute", || unsafe {
            sys::cuFuncGetAttribute(
                &mut max_block,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                func,
            )
        })?;
        let info = KernelInfo::new(func, env.as_deref(), max_block as u32);
        let mut kernels = self.kernels.write().unwrap_or_else(|e| e.into_inner());
        kernels.push(info);
        Ok(KernelId(kernels.len() - 1))
    }

    /// A kernel with a kernel environment (`<name>_kernel_environment`, clang 18 and later)
    /// takes the launch environment first.
    pub(super) fn has_kernel_environment(&self, m: ModuleId, name: &str) -> Option<bool> {
        self.current().ok()?;
        let code = self.module(m).ok()?;
        match code.has(&format!("{name}_kernel_environment")) {
            Ok(true) => Some(true),
            _ => None,
        }
    }

    pub(super) fn module_get_global(&self, m: ModuleId, name: &str) -> Result<(DevicePtr, usize)> {
        self.current()?;
        self.module(m)?
            .global(name)?
            .map(|(p, s)| (p as usize, s))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::SymbolNotFound,
                    format!("global '{name}' not found"),
                )
            })
    }

    /// Copies the table to device memory and points the device runtime's environment at it
    /// (`IndirectCallTable`, `IndirectCallTableSize`), as LLVM 19's plugins do at load: an
    /// array of `{void *HstPtr; void *DevPtr;}` sorted by host address, and its length.
    pub(super) fn publish_indirect_call_table(
        &self,
        m: ModuleId,
        table: &[(u64, u64)],
    ) -> Result<()> {
        if table.is_empty() {
            return Ok(());
        }
        self.current()?;
        let code = self.module(m)?;
        let fields_at = std::mem::offset_of!(DeviceEnvironment, indirect_call_table);
        let Some((env, env_size)) = code.global("__omp_rtl_device_environment")? else {
            // No device runtime in the image: nothing looks the table up.
            return Ok(());
        };
        if env_size < fields_at + 16 {
            return Err(Error::new(
                ErrorKind::InvalidImage,
                format!(
                    "__omp_rtl_device_environment has {env_size} bytes, too few for an indirect-call table"
                ),
            ));
        }
        let flat: Vec<u64> = table.iter().flat_map(|&(h, d)| [h, d]).collect();
        let bytes = flat.len() * 8;
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: a plain device allocation written to a local.
        call("cuMemAlloc", || unsafe {
            sys::cuMemAlloc_v2(&mut ptr, bytes)
        })
        .map_err(|e| self.oom(bytes, e, None))?;
        let fields = [ptr, table.len() as u64];
        // SAFETY: `bytes` bytes from a live Vec into the allocation of that size; then 16
        // bytes from a local into the two fields of the environment global (size checked).
        let written = call("cuMemcpyHtoD", || unsafe {
            sys::cuMemcpyHtoD_v2(ptr, flat.as_ptr().cast(), bytes)
        })
        .and_then(|_| {
            call("cuMemcpyHtoD", || unsafe {
                sys::cuMemcpyHtoD_v2(env + fields_at as CUdeviceptr, fields.as_ptr().cast(), 16)
            })
        });
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        match (written, modules.get_mut(m.0).and_then(Option::as_mut)) {
            (Ok(()), Some(record)) => {
                record.indirect_calls = ptr;
                Ok(())
            }
            (r, _) => {
                drop(modules);
                // SAFETY: frees the allocation made above, which nothing else refers to.
                let _ = call("cuMemFree", || unsafe { sys::cuMemFree_v2(ptr) });
                r.and(Err(Error::new(
                    ErrorKind::InvalidArgument,
                    "unknown CUDA module",
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The image of `tests/c/api_is_present.c` (clang 19, nvlink, ELF ABI 7): one kernel with
    /// its environments, and the device runtime's environment.
    fn api_is_present() -> Code {
        let cubin = include_bytes!("../../tests/data/api_is_present.sm_90.abi7.cubin");
        Code {
            module: std::ptr::null_mut(),
            symbols: omptarget_plugin::elf::symbol_names(cubin).map(Arc::new),
        }
    }

    #[test]
    fn an_image_linked_with_llvms_gpu_libc_is_recognised() {
        let printf: &[u8] = include_bytes!("../../tests/data/device_printf.sm_90.abi7.cubin");
        let plain: &[u8] = include_bytes!("../../tests/data/api_is_present.sm_90.abi7.cubin");
        for cubin in [printf, plain] {
            let mut symbols = omptarget_plugin::elf::symbol_names(cubin).unwrap();
            assert!(!uses_gpu_libc(Some(&symbols), cubin));
            // The library defines the client (`crates/abi/tests/kernels_cuda_fake.rs` loads a
            // cubin so renamed).
            symbols.insert(GPU_LIBC_CLIENT.into());
            assert!(uses_gpu_libc(Some(&symbols), cubin));
        }
        // PTX (and a fatbinary) has no symbol table here: its text is searched.
        let ptx =
            b".version 8.0\n.target sm_90\n.visible .global .align 8 .u64 __llvm_libc_rpc_client;";
        assert!(uses_gpu_libc(None, ptx));
        assert!(!uses_gpu_libc(None, &ptx[..40]));
    }

    #[test]
    fn whether_an_image_may_print_is_read_from_its_symbols_or_text() {
        let printf: &[u8] = include_bytes!("../../tests/data/device_printf.sm_90.abi7.cubin");
        let plain: &[u8] = include_bytes!("../../tests/data/api_is_present.sm_90.abi7.cubin");
        let cubin = |b: &[u8]| image::classify(b).unwrap();
        let symbols = |b: &[u8]| omptarget_plugin::elf::symbol_names(b).unwrap();
        assert!(may_print(Some(&symbols(printf)), printf, cubin(printf)));
        assert!(!may_print(Some(&symbols(plain)), plain, cubin(plain)));
        assert!(may_print(None, b"call.uni vprintf,", ImageKind::Ptx));
        assert!(!may_print(None, b"ret;", ImageKind::Ptx));
    }

    #[test]
    fn a_cubins_symbol_table_is_read_at_load() {
        let code = api_is_present();
        let symbols = code.symbols.as_deref().expect("a cubin has a symbol table");
        for name in [
            "__omp_rtl_device_environment",
            "__omp_offloading_fe00_510096_main_l45",
            "__omp_offloading_fe00_510096_main_l45_kernel_environment",
        ] {
            assert!(symbols.contains(name), "{name}");
        }
    }

    #[test]
    fn a_symbol_the_image_lacks_is_not_asked_of_the_driver() {
        // The module is null and there is no driver here: only an answer from the image can
        // come back (a bare kernel has no `_kernel_environment`).
        let code = api_is_present();
        assert_eq!(
            code.global("__omp_offloading_fe00_510096_main_l99_kernel_environment")
                .unwrap(),
            None
        );
        assert_eq!(code.read("no_such_global").unwrap(), None);
    }

    #[test]
    fn whether_a_kernel_has_its_environment_is_the_images_answer() {
        // Null module, no driver: both answers come from the symbol table (the load already
        // read the environment; asking the driver again cost a second lookup per kernel).
        let code = api_is_present();
        assert!(
            code.has("__omp_offloading_fe00_510096_main_l45_kernel_environment")
                .unwrap()
        );
        assert!(
            !code
                .has("__omp_offloading_fe00_510096_main_l99_kernel_environment")
                .unwrap()
        );
    }
}
