//! NVIDIA GPUs through the CUDA driver API, loaded at run time (cudarc `driver::sys`).
//!
//! Without `libcuda` the plugin reports 0 devices, quietly. With memory-pool support
//! (`CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED`), device memory is allocated and freed
//! stream-ordered (`cuMemAllocAsync` / `cuMemFreeAsync`) from the device's default pool, whose
//! release threshold is raised so freed memory stays cached for reuse.

mod blocks;
mod driver;
pub mod image;

pub use driver::compute_sanitizer_attached;
mod kernel;
mod pool;
mod staging;
mod timing;

use cudarc::driver::sys;
use driver::{CUcontext, CUdevice, CUdeviceptr, CUmodule, CUstream, attribute, call, make_current};
use image::ImageKind;
use kernel::KernelInfo;
use omptarget_plugin::pool_policy::{self, PoolPolicy};
use omptarget_plugin::record::RecordRegion;
use omptarget_plugin::words::Words;
use omptarget_plugin::{
    AllocKind, CopyKind, Device, DeviceInfo, DevicePtr, Error, ErrorKind, EventId, ForeignRuntime,
    ImageInfo, KernelId, LaunchConfig, LoadEnv, ModuleId, Plugin, QueueId, Result, Timestamp,
};
use std::sync::{Arc, Mutex, RwLock};

/// Settings the plugin takes from the runtime's configuration.
#[derive(Clone, Debug)]
pub struct CudaConfig {
    /// `OMP_NUM_TEAMS` (0: unset).
    pub num_teams: u32,
    /// `OMP_TEAMS_THREAD_LIMIT` (0: unset).
    pub teams_thread_limit: u32,
    /// `OMP_TEAM_LIMIT` (0: unset).
    pub team_limit: u32,
    /// `LIBOMPTARGET_STACK_SIZE` (0: driver default).
    pub stack_size: usize,
    /// `LIBOMPTARGET_HEAP_SIZE` (0: driver default).
    pub heap_size: usize,
    /// `OMPTARGET_RS_CUDA_POOL_RELEASE_THRESHOLD`: bytes the memory pool keeps cached across
    /// synchronisations (default `None`: a quarter of the device's memory; see pool.rs).
    pub pool_release_threshold: Option<u64>,
    /// `OMPTARGET_RS_CUDA_POOL_IDLE_MS`: after this long without allocations or frees the
    /// pool gives its cached memory back to the device (0: never).
    pub pool_idle_ms: u64,
    /// `OMPTARGET_RS_CUDA_POOL_LOW_WATER`: while the device has less free memory than this,
    /// the pool gives back what no allocation uses (default `None`: 1/32 of the device, at
    /// least 1 GiB; 0: never).
    pub pool_low_water: Option<u64>,
    /// `OMPTARGET_RS_CUDA_OOM_WAIT_MS`: how long an allocation that found the device full
    /// waits for memory other processes give back (0: fail at once).
    pub oom_wait_ms: u64,
    /// `OMPTARGET_RS_CUDA_MEMORY_POOL=0` turns stream-ordered allocation off (for comparison).
    pub use_memory_pool: bool,
    /// `OMPTARGET_RS_CUDA_POOL_PREALLOCATE`: bytes allocated from the memory pool and freed
    /// again at device initialisation, so that the pool's first growth (its physical mapping,
    /// measured at ~0.3 ms per MiB on an H200) is not paid inside the program's constructs.
    pub pool_preallocate: usize,
    /// `OMPTARGET_RS_CUDA_RECORD_VA`: the address a recording's region is asked for first
    /// (0: anywhere). The driver's own choice is the same low address in every process, where
    /// a replaying process's memory pool may already lie; one far from those is free.
    pub record_va: usize,
    /// `OMPTARGET_RS_CUDA_STAGING_LIMIT`: pinned bytes kept for staging copies to and from
    /// pageable host memory (0: the driver's own path for every copy; see staging.rs).
    pub staging_limit: usize,
    /// `LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD`: device blocks up to this size are cached,
    /// stream-aware, in front of the memory pool (0: off; see blocks.rs).
    pub small_block_threshold: usize,
    /// `OMPTARGET_RS_CUDA_BATCH_COPIES` (default on): a construct's small copies reach the
    /// driver in one `cuMemcpyBatchAsync` call per direction.
    pub batch_copies: bool,
    /// `OMPTARGET_RS_CUDA_BLOCKING_SYNC`: set an inactive primary context to
    /// `CU_CTX_SCHED_BLOCKING_SYNC`, as LLVM does. Off by default: a sleeping host thread
    /// wakes ~16 µs later than a spinning one after each synchronisation (measured on an H200,
    /// docs/PERFORMANCE.md), which is most of an empty region's cost.
    pub blocking_sync: bool,
    /// `LIBOMPTARGET_INFO` at start-up, for the lines the plugin prints while initialising.
    pub info: u32,
}

impl Default for CudaConfig {
    fn default() -> Self {
        Self {
            num_teams: 0,
            teams_thread_limit: 0,
            team_limit: 0,
            stack_size: 0,
            heap_size: 0,
            pool_release_threshold: None,
            pool_idle_ms: 1000,
            pool_low_water: None,
            oom_wait_ms: 3000,
            use_memory_pool: true,
            blocking_sync: false,
            info: 0,
            pool_preallocate: 256 << 20,
            record_va: 0x6000_0000_0000,
            staging_limit: 512 << 20,
            small_block_threshold: 8192,
            batch_copies: true,
        }
    }
}

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
    let mut size = match k.param_bytes {
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

/// The CUDA plugin: one device per visible GPU.
pub struct CudaPlugin {
    config: CudaConfig,
    /// Compute capability (`major * 10 + minor`) of each device.
    archs: Vec<u32>,
}

impl CudaPlugin {
    /// Probes the driver; any failure means 0 devices, without output.
    pub fn new(config: CudaConfig) -> Self {
        let archs = probe().unwrap_or_default();
        Self { config, archs }
    }
}

fn probe() -> Result<Vec<u32>> {
    if !driver::driver_present() {
        return Ok(Vec::new());
    }
    // SAFETY: plain driver calls writing to locals.
    call("cuInit", || unsafe { sys::cuInit(0) })?;
    let mut count = 0;
    call("cuDeviceGetCount", || unsafe {
        sys::cuDeviceGetCount(&mut count)
    })?;
    let mut archs = Vec::new();
    for i in 0..count {
        let mut dev: CUdevice = 0;
        call("cuDeviceGet", || unsafe { sys::cuDeviceGet(&mut dev, i) })?;
        let major = attribute(
            dev,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        )?;
        let minor = attribute(
            dev,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        )?;
        archs.push((major * 10 + minor) as u32);
    }
    Ok(archs)
}

impl Plugin for CudaPlugin {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn number_of_devices(&self) -> usize {
        self.archs.len()
    }

    fn is_compatible(&self, image: &ImageInfo<'_>) -> bool {
        if image.triple.is_some_and(|t| !t.starts_with("nvptx")) {
            return false;
        }
        match image::classify(image.bytes) {
            Some(ImageKind::Cubin { sm, .. }) => self.archs.iter().any(|&d| image::runs_on(sm, d)),
            Some(ImageKind::Ptx | ImageKind::Fatbin) => !self.archs.is_empty(),
            None => false,
        }
    }

    fn incompatibility(&self, image: &ImageInfo<'_>) -> Option<String> {
        match image::classify(image.bytes) {
            Some(ImageKind::Cubin { sm, .. })
                if !self.archs.is_empty() && !self.archs.iter().any(|&d| image::runs_on(sm, d)) =>
            {
                let devices: Vec<String> = self.archs.iter().map(|a| format!("sm_{a}")).collect();
                Some(format!(
                    "the CUDA image is built for sm_{sm}, which cannot run on this machine's GPUs ({}); the program's target regions run on the host unless offloading is mandatory",
                    devices.join(", ")
                ))
            }
            _ => None,
        }
    }

    fn init_device(&self, index: usize) -> Result<Box<dyn Device>> {
        let arch = *self.archs.get(index).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidArgument,
                format!("no CUDA device {index}"),
            )
        })?;
        CudaDevice::new(index, arch, &self.config).map(|d| Box::new(d) as Box<dyn Device>)
    }
}

struct Module {
    module: CUmodule,
    /// The image's indirect-call table in device memory (0: none), freed with the module.
    indirect_calls: CUdeviceptr,
}

struct CudaDevice {
    index: usize,
    arch: u32,
    dev: CUdevice,
    ctx: CUcontext,
    /// The default memory pool when stream-ordered allocation is on, with its sharing policy.
    pool: Option<Arc<pool::Pool>>,
    /// Streams for allocations and copies that come without a queue.
    internal: Mutex<Vec<CUstream>>,
    modules: Mutex<Vec<Option<Module>>>,
    kernels: RwLock<Vec<KernelInfo>>,
    staging: staging::Staging,
    blocks: Arc<blocks::BlockCache>,
    limits: kernel::LimitsWithEnv,
    name: String,
    total_memory: usize,
    driver_version: i32,
    sm_count: i32,
    /// `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS`: the device reads pageable host memory.
    pageable_access: bool,
    /// Other GPUs this one copies to directly: device ordinal → its primary context, or
    /// `None` when the hardware has no peer path (copies are staged through the host then).
    peers: Mutex<std::collections::HashMap<CUdevice, Option<CUcontext>>>,
    /// Timing events of traced operations (device tracing only).
    timing: timing::Timing,
    /// Record and replay: the region every device allocation comes from (never freed).
    record: std::sync::OnceLock<RecordRegion>,
    /// Where a recording's region is asked for first (`CudaConfig::record_va`; 0: anywhere).
    record_va: usize,
    /// The device's UUID in lower-case hex (LLVM 22's vendor UID of a CUDA device).
    uuid: Option<String>,
}

// SAFETY: CUDA driver handles may be used from any thread once the context is current (each
// operation makes it current first); the Vecs of handles are behind locks.
unsafe impl Send for CudaDevice {}
unsafe impl Sync for CudaDevice {}

fn stream(q: QueueId) -> CUstream {
    q.0 as CUstream
}

impl CudaDevice {
    fn new(index: usize, arch: u32, config: &CudaConfig) -> Result<Self> {
        let mut dev: CUdevice = 0;
        // SAFETY: plain driver calls writing to locals.
        call("cuDeviceGet", || unsafe {
            sys::cuDeviceGet(&mut dev, index as i32)
        })?;
        // Like LLVM: an inactive primary context gets blocking synchronisation (the host thread
        // sleeps instead of spinning while it waits); an active one keeps its flags.
        let (mut flags, mut active) = (0u32, 0i32);
        call("cuDevicePrimaryCtxGetState", || unsafe {
            sys::cuDevicePrimaryCtxGetState(dev, &mut flags, &mut active)
        })?;
        let sched_blocking = sys::CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC as u32;
        let info = config.info & 0x10;
        if active != 0 {
            plugin_info(
                info,
                "CUDA",
                index,
                "The primary context is active, no change to its flags",
            );
            if flags & 0x7 != sched_blocking {
                plugin_info(
                    info,
                    "CUDA",
                    index,
                    "Warning: The current flags are not CU_CTX_SCHED_BLOCKING_SYNC",
                );
            }
        } else if config.blocking_sync {
            plugin_info(
                info,
                "CUDA",
                index,
                "The primary context is inactive, set its flags to CU_CTX_SCHED_BLOCKING_SYNC",
            );
            call("cuDevicePrimaryCtxSetFlags", || unsafe {
                sys::cuDevicePrimaryCtxSetFlags_v2(dev, sched_blocking)
            })?;
        } else {
            plugin_info(
                info,
                "CUDA",
                index,
                "The primary context is inactive, kept the driver's default scheduling (OMPTARGET_RS_CUDA_BLOCKING_SYNC=0)",
            );
        }
        let mut ctx: CUcontext = std::ptr::null_mut();
        call("cuDevicePrimaryCtxRetain", || unsafe {
            sys::cuDevicePrimaryCtxRetain(&mut ctx, dev)
        })?;
        make_current(ctx)?;
        use sys::CUdevice_attribute as A;
        let mut total_memory = 0usize;
        call("cuDeviceTotalMem", || unsafe {
            sys::cuDeviceTotalMem_v2(&mut total_memory, dev)
        })?;
        let pools = attribute(dev, A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)? != 0;
        let pool = if pools && config.use_memory_pool {
            let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
            call("cuDeviceGetDefaultMemPool", || unsafe {
                sys::cuDeviceGetDefaultMemPool(&mut pool, dev)
            })?;
            let mut threshold = config
                .pool_release_threshold
                .unwrap_or(PoolPolicy::default_release_threshold(total_memory as u64));
            call("cuMemPoolSetAttribute(RELEASE_THRESHOLD)", || unsafe {
                sys::cuMemPoolSetAttribute(
                    pool,
                    sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                    (&raw mut threshold).cast(),
                )
            })?;
            if config.pool_preallocate > 0 {
                // Grow the pool now; with the raised release threshold the memory stays mapped
                // for the program's allocations. Failure only means no head start.
                let mut s: CUstream = std::ptr::null_mut();
                let mut p: CUdeviceptr = 0;
                let _ = call("cuStreamCreate", || unsafe {
                    sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)
                })
                .and_then(|_| {
                    call("cuMemAllocAsync", || unsafe {
                        sys::cuMemAllocAsync(&mut p, config.pool_preallocate, s)
                    })
                })
                .and_then(|_| call("cuMemFreeAsync", || unsafe { sys::cuMemFreeAsync(p, s) }))
                .and_then(|_| {
                    call("cuStreamSynchronize", || unsafe {
                        sys::cuStreamSynchronize(s)
                    })
                });
                if !s.is_null() {
                    let _ = call("cuStreamDestroy", || unsafe { sys::cuStreamDestroy_v2(s) });
                }
            }
            Some(pool)
        } else {
            None
        };
        let blocks = Arc::new(blocks::BlockCache::new(if pool.is_some() {
            config.small_block_threshold
        } else {
            0
        }));
        let pool = pool.map(|handle| {
            let mut policy =
                PoolPolicy::for_device(total_memory as u64, config.pool_preallocate as u64);
            policy.idle = std::time::Duration::from_millis(config.pool_idle_ms);
            policy.oom_wait = std::time::Duration::from_millis(config.oom_wait_ms);
            if let Some(w) = config.pool_low_water {
                policy.low_water = w;
            }
            pool::Pool::new(handle, ctx, total_memory as u64, policy, blocks.clone())
        });
        if config.stack_size > 0 {
            call("cuCtxSetLimit(STACK_SIZE)", || unsafe {
                sys::cuCtxSetLimit(sys::CUlimit::CU_LIMIT_STACK_SIZE, config.stack_size)
            })?;
        }
        if config.heap_size > 0 {
            call("cuCtxSetLimit(MALLOC_HEAP_SIZE)", || unsafe {
                sys::cuCtxSetLimit(sys::CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE, config.heap_size)
            })?;
        }
        let mut uuid = sys::CUuuid_st { bytes: [0; 16] };
        // SAFETY: the driver writes the 16 bytes of the device's UUID.
        let uuid = call("cuDeviceGetUuid", || unsafe {
            sys::cuDeviceGetUuid_v2(&mut uuid, dev)
        })
        .ok()
        .map(|_| {
            uuid.bytes
                .iter()
                .map(|b| format!("{:02x}", *b as u8))
                .collect::<String>()
        });
        let mut name_buf = [0 as std::ffi::c_char; 256];
        call("cuDeviceGetName", || unsafe {
            sys::cuDeviceGetName(name_buf.as_mut_ptr(), 256, dev)
        })?;
        // SAFETY: the driver wrote a NUL-terminated name.
        let name = unsafe { std::ffi::CStr::from_ptr(name_buf.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let mut driver_version = 0;
        call("cuDriverGetVersion", || unsafe {
            sys::cuDriverGetVersion(&mut driver_version)
        })?;
        let sm_count = attribute(dev, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let pageable_access =
            attribute(dev, A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS).unwrap_or(0) != 0;
        let limits = kernel::DeviceLimits {
            warp_size: attribute(dev, A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)? as u32,
            max_threads: attribute(dev, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32,
            max_blocks: attribute(dev, A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)? as u32,
            clock_khz: attribute(dev, A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? as u64,
            hardware_parallelism: sm_count as u64
                * (attribute(dev, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)? as u64
                    / 32),
        }
        .with_environment(config);
        // compute-sanitizer does not see batched copies: plain ones while it watches.
        let batch_copies = config.batch_copies && !driver::compute_sanitizer_attached();
        if config.batch_copies && !batch_copies {
            plugin_info(
                info,
                "CUDA",
                index,
                "compute-sanitizer is attached: small copies are issued one by one, not batched",
            );
        }
        Ok(Self {
            index,
            arch,
            dev,
            ctx,
            pool,
            internal: Mutex::new(Vec::new()),
            modules: Mutex::new(Vec::new()),
            kernels: RwLock::new(Vec::new()),
            blocks,
            staging: staging::Staging::new(
                ctx,
                index as i32,
                config.staging_limit,
                std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
                batch_copies,
            ),
            limits,
            name,
            total_memory,
            driver_version,
            sm_count,
            pageable_access,
            peers: Mutex::new(std::collections::HashMap::new()),
            timing: timing::Timing::default(),
            record: std::sync::OnceLock::new(),
            record_va: config.record_va,
            uuid,
        })
    }

    /// The stream of `q`, to queue work on it: the stream's batched small copies were issued
    /// earlier, so they go to the driver first (staging.rs).
    fn submit(&self, q: QueueId) -> Result<CUstream> {
        self.staging.flush(q.0)?;
        Ok(stream(q))
    }

    fn current(&self) -> Result<()> {
        make_current(self.ctx)
    }

    /// Runs `f` on an internal stream and waits for it (operations that come without a queue).
    fn on_internal_stream(&self, f: impl FnOnce(CUstream) -> Result<()>) -> Result<()> {
        let s = match self
            .internal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
        {
            Some(s) => s,
            None => self.create_queue().map(stream)?,
        };
        let r = f(s).and_then(|_| {
            call("cuStreamSynchronize", || unsafe {
                sys::cuStreamSynchronize(s)
            })
        });
        self.internal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(s);
        r
    }

    fn module(&self, m: ModuleId) -> Result<CUmodule> {
        self.modules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(m.0)
            .and_then(|x| x.as_ref().map(|x| x.module))
            .ok_or_else(|| Error::new(ErrorKind::InvalidArgument, "unknown CUDA module"))
    }

    /// Reads `size` bytes of a device global synchronously (load-time metadata).
    fn read_global(&self, module: CUmodule, name: &str) -> Result<Option<Vec<u8>>> {
        let Some((ptr, size)) = global_of(module, name)? else {
            return Ok(None);
        };
        let mut buf = vec![0u8; size];
        // SAFETY: copies `size` bytes from the global into a buffer of that size.
        call("cuMemcpyDtoH", || unsafe {
            sys::cuMemcpyDtoH_v2(buf.as_mut_ptr().cast(), ptr, size)
        })?;
        Ok(Some(buf))
    }

    fn alloc_device(&self, size: usize, queue: Option<QueueId>) -> Result<DevicePtr> {
        if let Some(r) = self.record.get() {
            return r.alloc(size).ok_or_else(|| {
                Error::new(
                    ErrorKind::OutOfMemory,
                    format!(
                        "{size} bytes do not fit in the record/replay region ({} bytes) of CUDA device {}",
                        r.size(),
                        self.index
                    ),
                )
            });
        }
        let Some(pool) = &self.pool else {
            let mut ptr: CUdeviceptr = 0;
            // SAFETY: writes the allocation's address.
            call("cuMemAlloc", || unsafe {
                sys::cuMemAlloc_v2(&mut ptr, size)
            })
            .map_err(|e| self.oom(size, e, None))?;
            return Ok(ptr as usize);
        };
        pool.note_activity();
        // Small blocks come from the cache when one is free (blocks.rs).
        let (size, class) = match self.blocks.class_of(size) {
            Some((class, rounded)) => {
                if let Some(p) = self.blocks.take(class) {
                    return Ok(p);
                }
                (rounded, Some(class))
            }
            None => (size, None),
        };
        let attempt = |size: usize| -> Result<usize> {
            let mut ptr: CUdeviceptr = 0;
            let mut alloc = |s: CUstream| {
                // SAFETY: stream-ordered allocation on a live stream.
                call("cuMemAllocAsync", || unsafe {
                    sys::cuMemAllocAsync(&mut ptr, size, s)
                })
            };
            match queue {
                Some(q) => alloc(self.submit(q)?)?,
                None => self.on_internal_stream(alloc)?,
            }
            Ok(ptr as usize)
        };
        // One attempt; when the device is full, our own cache goes back and we wait for other
        // processes' memory; a request larger than the device fails without a driver call
        // (pool_policy.rs, pool.rs).
        let ops = pool::AllocOps {
            pool,
            attempt,
            give_back: |keep| self.give_back(keep),
        };
        let ptr = match pool_policy::alloc_with_patience(
            &ops,
            size as u64,
            &pool.policy,
            std::thread::sleep,
        )? {
            Ok(p) => p,
            Err(shortage) => {
                return Err(self.oom(
                    size,
                    Error::new(ErrorKind::OutOfMemory, "out of memory"),
                    Some(shortage),
                ));
            }
        };
        if let Some(class) = class {
            self.blocks.adopt(ptr, class);
        }
        Ok(ptr)
    }

    /// Gives what the pool caches back to the device: the small blocks, then the pool's
    /// unused memory down to `keep` bytes.
    /// Reserves `size` bytes (rounded up to the driver's granularity) of device memory at
    /// virtual address `at` (anywhere when `None`) with the driver's virtual memory
    /// management, as LLVM's `memoryVAMap`; `None` when the address is taken or the device
    /// has no memory for it.
    fn map_at(&self, size: usize, at: Option<usize>) -> Option<(usize, usize)> {
        let prop = sys::CUmemAllocationProp {
            type_: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            requestedHandleTypes: sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
            location: sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: self.dev,
            },
            win32HandleMetaData: std::ptr::null_mut(),
            allocFlags: sys::CUmemAllocationProp_st__bindgen_ty_1 {
                compressionType: 0,
                gpuDirectRDMACapable: 0,
                usage: 0,
                reserved: [0; 4],
            },
        };
        let mut gran = 0usize;
        // SAFETY: writes the granularity of allocations with `prop`.
        call("cuMemGetAllocationGranularity", || unsafe {
            sys::cuMemGetAllocationGranularity(
                &mut gran,
                &prop,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            )
        })
        .ok()?;
        let gran = gran.max(1);
        let base = at.map_or(0, |a| a - a % gran);
        let total = (size + at.map_or(0, |a| a - base))
            .max(1)
            .next_multiple_of(gran);
        // The driver honours a requested address only for large reservations: on an H200
        // (driver 580) a 2 MiB one at any address went to its small-allocation heap while
        // 64 GiB ones landed where asked (`omptarget-suite probe va`, 2026-12-01). So a placed
        // reservation grows until the address is granted; only `total` bytes get memory.
        let tries: &[usize] = if at.is_some() {
            &[0, 1 << 30, 8 << 30, 64 << 30]
        } else {
            &[0]
        };
        let mut ptr: CUdeviceptr = 0;
        let mut reserved = 0;
        for &t in tries {
            let r = t.max(total).next_multiple_of(gran);
            if r <= reserved {
                continue;
            }
            let mut p: CUdeviceptr = 0;
            // SAFETY: reserves address space (the address is a hint the driver may ignore).
            if call("cuMemAddressReserve", || unsafe {
                sys::cuMemAddressReserve(&mut p, r, 0, base as CUdeviceptr, 0)
            })
            .is_err()
            {
                continue;
            }
            if at.is_none() || p as usize == base {
                (ptr, reserved) = (p, r);
                break;
            }
            // SAFETY: frees the reservation just made (it is not where it was asked for).
            let _ = call("cuMemAddressFree", || unsafe {
                sys::cuMemAddressFree(p, r)
            });
            reserved = r;
        }
        if ptr == 0 {
            return None;
        }
        let unreserve = |p: CUdeviceptr| {
            // SAFETY: frees the reservation made above, once.
            let _ = call("cuMemAddressFree", || unsafe {
                sys::cuMemAddressFree(p, reserved)
            });
        };
        let mut handle: sys::CUmemGenericAllocationHandle = 0;
        // SAFETY: physical memory of `total` bytes on this device.
        if call("cuMemCreate", || unsafe {
            sys::cuMemCreate(&mut handle, total, &prop, 0)
        })
        .is_err()
        {
            unreserve(ptr);
            return None;
        }
        let access = sys::CUmemAccessDesc {
            location: prop.location,
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: maps the memory over the whole reservation and makes it readable and
        // writable by this device; the handle is released once mapped (the mapping keeps it).
        let mapped = call("cuMemMap", || unsafe {
            sys::cuMemMap(ptr, total, 0, handle, 0)
        })
        .and_then(|_| {
            call("cuMemSetAccess", || unsafe {
                sys::cuMemSetAccess(ptr, total, &access, 1)
            })
        });
        // SAFETY: the handle is ours; after a failed map nothing else holds it.
        let _ = call("cuMemRelease", || unsafe { sys::cuMemRelease(handle) });
        if mapped.is_err() {
            // SAFETY: undoes a mapping that may exist, then the reservation.
            let _ = call("cuMemUnmap", || unsafe { sys::cuMemUnmap(ptr, total) });
            unreserve(ptr);
            return None;
        }
        Some((ptr as usize, total))
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

    fn give_back(&self, keep: u64) {
        if let Some(pool) = &self.pool {
            let _ = self.on_internal_stream(|s| {
                pool.give_back_on(s, keep);
                Ok(())
            });
        }
    }

    fn oom(&self, size: usize, e: Error, shortage: Option<pool_policy::Shortage>) -> Error {
        if e.kind != ErrorKind::OutOfMemory {
            return e;
        }
        let mut text = format!(
            "out of memory allocating {size} bytes on CUDA device {} ({}, {} MiB total)",
            self.index,
            self.name,
            self.total_memory >> 20
        );
        if let Some(s) = shortage {
            text.push_str(&format!(
                ": {}; waited {} ms for memory to be released",
                pool_policy::describe_shortage(self.total_memory as u64, s.reading, size as u64),
                s.waited.as_millis()
            ));
        }
        Error::new(ErrorKind::OutOfMemory, text)
    }
}

/// A plugin's `LIBOMPTARGET_INFO` line (`<who> device N info: ...`), LLVM's format.
fn plugin_info(level: u32, who: &str, device: usize, text: &str) {
    use std::io::Write;
    // LLVM prints its plugins' lines under OMP_INFOTYPE_PLUGIN_KERNEL (0x10), copies under 0x20.
    if level & 0x30 == 0 {
        return;
    }
    let line = format!("{who} device {device} info: {text}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// A module global's address and size, or `None` if the module has no such symbol.
fn global_of(module: CUmodule, name: &str) -> Result<Option<(CUdeviceptr, usize)>> {
    let cname = std::ffi::CString::new(name)
        .map_err(|_| Error::new(ErrorKind::SymbolNotFound, format!("bad symbol {name:?}")))?;
    let mut ptr: CUdeviceptr = 0;
    let mut size = 0usize;
    // SAFETY: looks a symbol up in a loaded module.
    let r = call("cuModuleGetGlobal", || unsafe {
        sys::cuModuleGetGlobal_v2(&mut ptr, &mut size, module, cname.as_ptr())
    });
    Ok(r.ok().map(|_| (ptr, size)))
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

impl Device for CudaDevice {
    fn vendor_uid(&self) -> Option<String> {
        self.uuid.clone()
    }

    fn compute_unit_kind(&self) -> String {
        format!("sm_{}", self.arch)
    }
    fn info(&self) -> DeviceInfo {
        let (major, minor) = (self.arch / 10, self.arch % 10);
        DeviceInfo {
            name: self.name.clone(),
            properties: vec![
                (
                    "Compute capability".into(),
                    format!("{major}.{minor} (sm_{})", self.arch),
                ),
                (
                    "Global memory".into(),
                    format!("{} MiB", self.total_memory >> 20),
                ),
                ("Multiprocessors".into(), self.sm_count.to_string()),
                (
                    "Stream-ordered allocation (memory pool)".into(),
                    if self.pool.is_some() { "yes" } else { "no" }.into(),
                ),
                (
                    "Driver version".into(),
                    format!(
                        "{}.{}",
                        self.driver_version / 1000,
                        (self.driver_version % 1000) / 10
                    ),
                ),
                ("CUDA device".into(), self.dev.to_string()),
                (
                    "Pageable host memory access (unified_shared_memory)".into(),
                    if self.pageable_access { "yes" } else { "no" }.into(),
                ),
            ],
        }
    }

    fn load(&self, image: &ImageInfo<'_>, env: &LoadEnv) -> Result<ModuleId> {
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
        // The device runtime reads its environment from this global.
        if let Some((ptr, size)) = global_of(module, "__omp_rtl_device_environment")? {
            let de = DeviceEnvironment {
                debug_kind: 0,
                num_devices: env.num_devices,
                device_num: env.device_num,
                dynamic_mem_size: 0,
                clock_frequency: self.limits.clock_khz * 1000,
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
            module,
            indirect_calls: 0,
        }));
        Ok(ModuleId(modules.len() - 1))
    }

    fn unload(&self, m: ModuleId) -> Result<()> {
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
                sys::cuModuleUnload(module.module)
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

    /// Copies the table to device memory and points the device runtime's environment at it
    /// (`IndirectCallTable`, `IndirectCallTableSize`), as LLVM 19's plugins do at load: an
    /// array of `{void *HstPtr; void *DevPtr;}` sorted by host address, and its length.
    fn uses_indirect_call_table(&self) -> bool {
        true
    }

    fn publish_indirect_calls(&self, m: ModuleId, table: &[(u64, u64)]) -> Result<()> {
        if table.is_empty() {
            return Ok(());
        }
        self.current()?;
        let module = self.module(m)?;
        let fields_at = std::mem::offset_of!(DeviceEnvironment, indirect_call_table);
        let Some((env, env_size)) = global_of(module, "__omp_rtl_device_environment")? else {
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

    fn kernel(&self, m: ModuleId, name: &str) -> Result<KernelId> {
        self.current()?;
        let module = self.module(m)?;
        let cname = std::ffi::CString::new(name).map_err(|_| {
            Error::new(
                ErrorKind::SymbolNotFound,
                format!("bad kernel name {name:?}"),
            )
        })?;
        let mut func: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: looks a kernel up in a loaded module.
        call("cuModuleGetFunction", || unsafe {
            sys::cuModuleGetFunction(&mut func, module, cname.as_ptr())
        })
        .map_err(|e| Error::new(ErrorKind::SymbolNotFound, format!("kernel '{name}': {e}")))?;
        let env = self.read_global(module, &format!("{name}_kernel_environment"))?;
        let mut max_block = 0;
        // SAFETY: reads one attribute of a live function.
        call("cuFuncGetAttribute", || unsafe {
            sys::cuFuncGetAttribute(
                &mut max_block,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                func,
            )
        })?;
        let mut info = KernelInfo::new(func, env.as_deref(), max_block as u32);
        // SAFETY: the function was just looked up in a live module.
        info.param_bytes = unsafe { param_bytes(func) };
        let mut kernels = self.kernels.write().unwrap_or_else(|e| e.into_inner());
        kernels.push(info);
        Ok(KernelId(kernels.len() - 1))
    }

    /// A kernel with a kernel environment (`<name>_kernel_environment`, clang 18 and later)
    /// takes the launch environment first.
    fn takes_launch_environment(&self, m: ModuleId, name: &str) -> Option<bool> {
        self.current().ok()?;
        let module = self.module(m).ok()?;
        match global_of(module, &format!("{name}_kernel_environment")) {
            Ok(Some(_)) => Some(true),
            _ => None,
        }
    }

    fn global(&self, m: ModuleId, name: &str) -> Result<(DevicePtr, usize)> {
        self.current()?;
        let module = self.module(m)?;
        global_of(module, name)?
            .map(|(p, s)| (p as usize, s))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::SymbolNotFound,
                    format!("global '{name}' not found"),
                )
            })
    }

    fn alloc(&self, size: usize, kind: AllocKind, queue: Option<QueueId>) -> Result<DevicePtr> {
        self.current()?;
        let size = size.max(1);
        match kind {
            AllocKind::Device => self.alloc_device(size, queue),
            AllocKind::Host => {
                let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
                // SAFETY: pinned host allocation.
                call("cuMemAllocHost", || unsafe {
                    sys::cuMemAllocHost_v2(&mut p, size)
                })
                .map_err(|e| self.oom(size, e, None))?;
                Ok(p as usize)
            }
            AllocKind::Shared => {
                let mut p: CUdeviceptr = 0;
                // SAFETY: managed allocation visible to host and device.
                call("cuMemAllocManaged", || unsafe {
                    sys::cuMemAllocManaged(
                        &mut p,
                        size,
                        sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL as u32,
                    )
                })
                .map_err(|e| self.oom(size, e, None))?;
                Ok(p as usize)
            }
        }
    }

    fn free(&self, ptr: DevicePtr, kind: AllocKind, queue: Option<QueueId>) -> Result<()> {
        self.current()?;
        if kind == AllocKind::Device
            && let Some(pool) = &self.pool
        {
            pool.note_activity();
        }
        match kind {
            AllocKind::Device if self.record.get().is_some_and(|r| r.contains(ptr)) => Ok(()),
            AllocKind::Device if self.blocks.give_back(ptr, queue.map(|q| q.0)) => Ok(()),
            AllocKind::Device if self.pool.is_some() => match queue {
                Some(q) => {
                    let s = self.submit(q)?;
                    // SAFETY: frees pool memory after the work already on the stream.
                    call("cuMemFreeAsync", || unsafe {
                        sys::cuMemFreeAsync(ptr as CUdeviceptr, s)
                    })
                }
                None => self.on_internal_stream(|s| {
                    call("cuMemFreeAsync", || unsafe {
                        sys::cuMemFreeAsync(ptr as CUdeviceptr, s)
                    })
                }),
            },
            // SAFETY: frees memory from cuMemAlloc / cuMemAllocManaged, once.
            AllocKind::Device | AllocKind::Shared => call("cuMemFree", || unsafe {
                sys::cuMemFree_v2(ptr as CUdeviceptr)
            }),
            // SAFETY: frees memory from cuMemAllocHost, once.
            AllocKind::Host => call("cuMemFreeHost", || unsafe {
                sys::cuMemFreeHost(ptr as *mut std::ffi::c_void)
            }),
        }
    }

    fn orders_alloc_on_queue(&self) -> bool {
        self.pool.is_some()
    }

    /// LLVM 19's way: virtual memory mapped at the recorded address (or anywhere, for a
    /// recording); failing that, one allocation of as much as the device gives (1 GiB less at
    /// a time), inside which the recorded address may still lie.
    fn begin_record_replay(
        &self,
        size: Option<usize>,
        at: Option<usize>,
    ) -> Result<(usize, usize)> {
        const GIB: usize = 1 << 30;
        self.current()?;
        if self.record.get().is_some() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "record/replay is active on CUDA device {} already",
                    self.index
                ),
            ));
        }
        // The pool's cached memory goes back first: its addresses may be where the recording
        // lay (every process's first large allocations come from the same place).
        self.give_back(0);
        let (mut free, mut total_mem) = (0usize, 0usize);
        // SAFETY: writes two sizes.
        call("cuMemGetInfo", || unsafe {
            sys::cuMemGetInfo_v2(&mut free, &mut total_mem)
        })?;
        let need = size.unwrap_or(0);
        let mut got = None;
        // A recording asks for `record_va` first, an address far from where the driver puts
        // its own reservations (0x48ea000000 for every process's first large one on an H200,
        // where a replaying process's memory pool may already be), so that a replay in
        // another process gets it back.
        // A replay maps at the recorded start only; a recording at `record_va`, else anywhere.
        let place = at.or((self.record_va != 0).then_some(self.record_va));
        let map = |n: usize| {
            self.map_at(n, place).or_else(|| {
                (at.is_none() && place.is_some())
                    .then(|| self.map_at(n, None))
                    .flatten()
            })
        };
        if let Some(n) = size {
            // A replay gets room for allocations of its own after the recorded memory.
            got = map(if at.is_some() { n + (32 << 20) } else { n });
        }
        if got.is_none() && at.is_none() {
            // A recording: as much as the device gives.
            let mut want = size.unwrap_or(free.saturating_sub(GIB));
            while got.is_none() && want >= GIB.min(need.max(1)) {
                got = map(want);
                want = want.saturating_sub(GIB);
                if want == 0 {
                    break;
                }
            }
        }
        let mut want = free.saturating_sub(GIB).max(need);
        while got.is_none() && want > 0 {
            let mut ptr: CUdeviceptr = 0;
            // SAFETY: writes the allocation's address.
            if call("cuMemAlloc", || unsafe {
                sys::cuMemAlloc_v2(&mut ptr, want)
            })
            .is_ok()
            {
                got = Some((ptr as usize, want));
            } else if want <= need {
                break;
            } else {
                want = want.saturating_sub(GIB).max(need);
            }
        }
        let Some((base, total)) = got else {
            return Err(Error::new(
                ErrorKind::OutOfMemory,
                format!(
                    "no device memory for record/replay on CUDA device {}",
                    self.index
                ),
            ));
        };
        let (start, offset) = omptarget_plugin::record::place(base, total, at, need);
        let _ = self
            .record
            .set(RecordRegion::new(start, total - (start - base)));
        Ok((start, offset))
    }

    fn record_region(&self) -> Option<(usize, usize)> {
        self.record.get().map(RecordRegion::used)
    }

    fn launch_environment(
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

    /// The CUDA driver API's handles (OpenMP Additional Definitions, `cuda_driver`): the
    /// device ordinal, its primary context, and streams of that context, which the CUDA
    /// runtime API also accepts as `cudaStream_t`.
    fn foreign_runtime(&self) -> Option<ForeignRuntime> {
        Some(ForeignRuntime {
            id: 2,
            name: c"cuda_driver",
            vendor: 11,
            vendor_name: c"nvidia",
            platform: None,
            device: Some(i64::from(self.dev)),
            device_context: Some(self.ctx as usize),
            platform_type: c"N/A (the CUDA driver API has no platform handle)",
            device_type: c"CUdevice",
            context_type: c"CUcontext",
            queue_type: c"CUstream",
        })
    }

    /// With `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS` (HMM or ATS) every host address;
    /// otherwise memory the driver maps for the device: pinned (`cuMemAllocHost`,
    /// registered) or managed, checked at both ends of the range.
    /// Only a device that reaches pageable host memory (HMM or ATS: the driver reports
    /// `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS`) can use the program's stack, heap and
    /// globals as they are; managed or pinned memory would cover only what the runtime
    /// allocates itself.
    fn unified_shared_memory(&self) -> std::result::Result<(), String> {
        if self.pageable_access {
            Ok(())
        } else {
            Err(format!(
                "CUDA device {} ({}) cannot access pageable host memory (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS is 0: the driver offers neither HMM nor ATS)",
                self.index, self.name
            ))
        }
    }

    fn host_memory_accessible(&self, ptr: usize, size: usize) -> bool {
        if self.pageable_access {
            return true;
        }
        if self.current().is_err() {
            return false;
        }
        let last = ptr.saturating_add(size.max(1) - 1);
        driver::mapped_for_device(ptr) && driver::mapped_for_device(last)
    }

    fn release_cached_memory(&self) {
        if let Some(pool) = &self.pool {
            pool.stop_governor();
        }
        if self.current().is_ok() {
            self.give_back(0);
        }
    }

    fn is_asynchronous(&self) -> bool {
        true
    }

    fn copy(
        &self,
        kind: CopyKind,
        dst: usize,
        src: usize,
        size: usize,
        queue: Option<QueueId>,
    ) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        self.current()?;
        let issue = |s: CUstream| -> Result<()> {
            // SAFETY: the core passes ranges inside live allocations (device) and live host
            // memory; an asynchronous copy's host side stays alive until the construct's
            // synchronisation.
            match kind {
                CopyKind::HostToDevice => call("cuMemcpyHtoDAsync", || unsafe {
                    sys::cuMemcpyHtoDAsync_v2(
                        dst as CUdeviceptr,
                        src as *const std::ffi::c_void,
                        size,
                        s,
                    )
                }),
                CopyKind::DeviceToHost => call("cuMemcpyDtoHAsync", || unsafe {
                    sys::cuMemcpyDtoHAsync_v2(
                        dst as *mut std::ffi::c_void,
                        src as CUdeviceptr,
                        size,
                        s,
                    )
                }),
                CopyKind::DeviceToDevice => call("cuMemcpyDtoDAsync", || unsafe {
                    sys::cuMemcpyDtoDAsync_v2(dst as CUdeviceptr, src as CUdeviceptr, size, s)
                }),
            }
        };
        // Copies that do not go through staging.rs go behind the stream's batched copies
        // (staging.rs flushes them itself before anything it does not batch).
        match queue {
            Some(q) if kind != CopyKind::DeviceToDevice && self.staging.enabled() => {
                // Pageable host memory goes through pinned staging buffers (staging.rs).
                let host = if kind == CopyKind::HostToDevice {
                    src
                } else {
                    dst
                };
                if size > staging::UNASKED
                    && (!driver::is_pageable(host) || !self.staging.worth_it(size))
                {
                    issue(self.submit(q)?)
                } else if kind == CopyKind::HostToDevice {
                    self.staging.to_device(dst, src, size, stream(q))
                } else {
                    self.staging.to_host(dst, src, size, stream(q))
                }
            }
            Some(q) => issue(self.submit(q)?),
            None => self.on_internal_stream(issue),
        }
    }

    fn peer_id(&self) -> Option<usize> {
        Some(self.dev as usize)
    }

    /// `cuMemcpyPeerAsync` when `cuDeviceCanAccessPeer` says the two GPUs reach each other
    /// (peer access enabled once per pair); otherwise `Ok(false)` and the core stages the copy.
    fn copy_to_peer(
        &self,
        dst: DevicePtr,
        peer: usize,
        src: DevicePtr,
        size: usize,
        queue: QueueId,
    ) -> Result<bool> {
        let peer = peer as CUdevice;
        if peer == self.dev {
            return Ok(false);
        }
        self.current()?;
        let peer_ctx = {
            let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
            match peers.get(&peer) {
                Some(known) => *known,
                None => {
                    let mut can = 0;
                    // SAFETY: writes one int.
                    call("cuDeviceCanAccessPeer", || unsafe {
                        sys::cuDeviceCanAccessPeer(&mut can, self.dev, peer)
                    })?;
                    let ctx = if can != 0 {
                        let mut ctx: CUcontext = std::ptr::null_mut();
                        // SAFETY: retains the peer's primary context (kept for the process).
                        call("cuDevicePrimaryCtxRetain", || unsafe {
                            sys::cuDevicePrimaryCtxRetain(&mut ctx, peer)
                        })?;
                        // SAFETY: our context is current; enabling twice is reported, not harmful.
                        let enabled = call("cuCtxEnablePeerAccess", || unsafe {
                            sys::cuCtxEnablePeerAccess(ctx, 0)
                        });
                        if let Err(e) = enabled
                            && !e.message.contains("PEER_ACCESS_ALREADY_ENABLED")
                        {
                            return Err(e);
                        }
                        Some(ctx)
                    } else {
                        None
                    };
                    peers.insert(peer, ctx);
                    ctx
                }
            }
        };
        let Some(peer_ctx) = peer_ctx else {
            return Ok(false);
        };
        let s = self.submit(queue)?;
        // SAFETY: both ranges are live device allocations of their contexts; ordered on `s`.
        call("cuMemcpyPeerAsync", || unsafe {
            sys::cuMemcpyPeerAsync(
                dst as CUdeviceptr,
                peer_ctx,
                src as CUdeviceptr,
                self.ctx,
                size,
                s,
            )
        })?;
        Ok(true)
    }

    fn memset(&self, dst: DevicePtr, value: u8, size: usize, queue: Option<QueueId>) -> Result<()> {
        self.current()?;
        // SAFETY: fills a range of a live allocation on a stream.
        let issue = |s: CUstream| {
            call("cuMemsetD8Async", || unsafe {
                sys::cuMemsetD8Async(dst as CUdeviceptr, value, size, s)
            })
        };
        match queue {
            Some(q) => issue(self.submit(q)?),
            None => self.on_internal_stream(issue),
        }
    }

    fn launch(
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
                1,
                1,
                threads,
                1,
                1,
                config.dyn_cgroup_mem,
                s,
                params.as_mut_slice().as_mut_ptr().cast(),
                std::ptr::null_mut(),
            )
        });
        if let Some((buffer, env_ptr)) = env_alloc {
            let _ = self.free(buffer, AllocKind::Device, Some(queue));
            let _ = self.free(env_ptr, AllocKind::Device, Some(queue));
        }
        r
    }

    fn describe_launch(&self, kernel: KernelId, config: &LaunchConfig) -> (u32, u32, &'static str) {
        let kernels = self.kernels.read().unwrap_or_else(|e| e.into_inner());
        match kernels.get(kernel.0) {
            Some(k) => {
                let (b, t) = k.geometry(&self.limits, config);
                (b, t, k.mode_name())
            }
            None => (0, 0, "unknown"),
        }
    }

    fn create_queue(&self) -> Result<QueueId> {
        self.current()?;
        let mut s: CUstream = std::ptr::null_mut();
        // SAFETY: creates a stream in the current context.
        call("cuStreamCreate", || unsafe {
            sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)
        })?;
        Ok(QueueId(s as usize))
    }

    fn destroy_queue(&self, queue: QueueId) -> Result<()> {
        self.current()?;
        let s = self.submit(queue)?;
        // SAFETY: destroys a stream we created, once.
        call("cuStreamDestroy", || unsafe { sys::cuStreamDestroy_v2(s) })
    }

    fn synchronize(&self, queue: QueueId) -> Result<()> {
        self.current()?;
        let s = stream(queue);
        // SAFETY: waits for a live stream.
        let mut wait = || {
            call("cuStreamSynchronize", || unsafe {
                sys::cuStreamSynchronize(s)
            })
        };
        // Staged copies land as their chunks complete, then the stream is waited for.
        self.staging.finish(queue.0, Some(&mut wait))?;
        self.blocks.completed(queue.0);
        Ok(())
    }

    fn query(&self, queue: QueueId) -> Result<bool> {
        self.current()?;
        let s = self.submit(queue)?;
        // SAFETY: non-blocking query of a live stream.
        let done = driver::query("cuStreamQuery", || unsafe { sys::cuStreamQuery(s) })?;
        if done {
            self.staging.finish(queue.0, None)?;
            self.blocks.completed(queue.0);
        }
        Ok(done)
    }

    /// A timing event on the queue's stream, after the stream's batched copies (which are
    /// issued first, so the event follows every operation queued before it).
    fn timestamp(&self, queue: Option<QueueId>) -> Result<Timestamp> {
        let Some(q) = queue else {
            return Ok(Timestamp::At(omptarget_plugin::host_clock_ns()));
        };
        self.current()?;
        let s = self.submit(q)?;
        let token = self
            .timing
            .mark(s, |record| self.on_internal_stream(record))?;
        Ok(Timestamp::Pending(token))
    }

    fn resolve_timestamp(&self, ts: Timestamp) -> Result<u64> {
        match ts {
            Timestamp::At(t) => Ok(t),
            Timestamp::Pending(token) => {
                self.current()?;
                self.timing.resolve(token)
            }
        }
    }

    fn create_event(&self) -> Result<EventId> {
        self.current()?;
        let mut e: sys::CUevent = std::ptr::null_mut();
        // SAFETY: creates an event without timing.
        call("cuEventCreate", || unsafe {
            sys::cuEventCreate(&mut e, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)
        })?;
        Ok(EventId(e as usize))
    }

    fn destroy_event(&self, event: EventId) -> Result<()> {
        self.current()?;
        // SAFETY: destroys an event we created, once.
        call("cuEventDestroy", || unsafe {
            sys::cuEventDestroy_v2(event.0 as sys::CUevent)
        })
    }

    fn record_event(&self, event: EventId, queue: QueueId) -> Result<()> {
        self.current()?;
        let s = self.submit(queue)?;
        // SAFETY: records a live event on a live stream.
        call("cuEventRecord", || unsafe {
            sys::cuEventRecord(event.0 as sys::CUevent, s)
        })
    }

    fn wait_event(&self, event: EventId, queue: QueueId) -> Result<()> {
        self.current()?;
        let s = self.submit(queue)?;
        // SAFETY: makes a live stream wait for a live event.
        call("cuStreamWaitEvent", || unsafe {
            sys::cuStreamWaitEvent(s, event.0 as sys::CUevent, 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cubin(sm: u32) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[8] = 7;
        b[18] = 190;
        b[48..52].copy_from_slice(&(sm | (sm << 16)).to_le_bytes());
        b
    }

    fn info(b: &[u8]) -> ImageInfo<'_> {
        ImageInfo {
            bytes: b,
            triple: Some("nvptx64-nvidia-cuda"),
            arch: None,
        }
    }

    #[test]
    fn images_for_another_architecture_are_explained() {
        let plugin = CudaPlugin {
            config: CudaConfig::default(),
            archs: vec![90],
        };
        assert!(plugin.is_compatible(&info(&cubin(90))));
        assert!(plugin.incompatibility(&info(&cubin(90))).is_none());
        let sm80 = cubin(80);
        assert!(!plugin.is_compatible(&info(&sm80)));
        let why = plugin
            .incompatibility(&info(&sm80))
            .expect("an explanation");
        assert!(why.contains("sm_80") && why.contains("sm_90"), "{why}");
        // Without a GPU the plugin says nothing and accepts nothing.
        let none = CudaPlugin {
            config: CudaConfig::default(),
            archs: Vec::new(),
        };
        assert!(!none.is_compatible(&info(&sm80)));
        assert!(none.incompatibility(&info(&sm80)).is_none());
        assert_eq!(none.number_of_devices(), 0);
    }

    #[test]
    fn without_a_driver_there_are_no_devices_and_no_output() {
        // On machines without libcuda (CI) this is the real probe; with a GPU it finds it.
        let plugin = CudaPlugin::new(CudaConfig::default());
        if !driver::driver_present() {
            assert_eq!(plugin.number_of_devices(), 0);
        }
    }
}
