//! One GPU: the device and its primary context (opened with the limits and memory pool the
//! configuration asks for), what it reports about itself, and omptarget-plugin's `Device`
//! trait, whose operations are done by the rooms below: `module` (images, kernels, globals),
//! `memory` (allocation), `record` (record and replay), `copy` (copies and fills), `launch`
//! (kernel launches) and `queue` (streams and events).

mod copy;
pub(crate) mod launch;
mod memory;
mod module;
mod queue;
mod record;

use crate::config::CudaConfig;
use crate::driver::{
    self, CUcontext, CUdevice, CUdeviceptr, CUstream, attribute, call, make_current,
};
use crate::kernel::{self, KernelInfo};
use crate::{blocks, pool, staging, timing, wait};
use cudarc::driver::sys;
use module::Module;
use omptarget_plugin::contention::{Lock, Padded, Site};
use omptarget_plugin::pool_policy::PoolPolicy;
use omptarget_plugin::record::RecordRegion;
use omptarget_plugin::{
    AllocKind, CopyKind, Device, DeviceInfo, DevicePtr, EventId, ForeignRuntime, ImageInfo,
    KernelId, LaunchConfig, LoadEnv, ModuleId, QueueId, Result, Timestamp,
};
use std::sync::{Arc, Mutex, RwLock};

/// Internal streams (operations without a queue), counted when found held.
static INTERNAL: Site = Site::new("cuda: internal streams");

/// One GPU: its primary context, with what the plugin keeps for it.
pub(crate) struct CudaDevice {
    index: usize,
    arch: u32,
    dev: CUdevice,
    ctx: CUcontext,
    /// The default memory pool when stream-ordered allocation is on, with its sharing policy.
    pool: Option<Arc<pool::Pool>>,
    /// Streams for allocations and copies that come without a queue.
    internal: Lock<Vec<CUstream>>,
    modules: Mutex<Vec<Option<Module>>>,
    /// Read-locked by every launch (readers write the lock's state word): on lines of its own,
    /// away from the fields launches only read.
    kernels: Padded<RwLock<Vec<KernelInfo>>>,
    staging: staging::Staging,
    /// How the host waits for the device: poll, then sleep (wait.rs).
    waiter: Arc<wait::Waiter>,
    blocks: Arc<blocks::BlockCache>,
    limits: kernel::LimitsWithEnv,
    /// `LIBOMPTARGET_SHARED_MEMORY_SIZE`: dynamic shared memory every OpenMP kernel gets at
    /// least, which the device runtime hands out (`llvm_omp_target_dynamic_shared_alloc`).
    shared_memory_size: u32,
    /// `LIBOMPTARGET_DEVICE_RTL_DEBUG`, for the device runtime's environment.
    device_rtl_debug: u32,
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
    /// Whether a loaded image may print (device `printf`, a failed `assert`): the driver
    /// writes what kernels print only at synchronising calls, so a wait that found the work
    /// complete by polling then synchronises the stream too (device/queue.rs).
    prints: std::sync::atomic::AtomicBool,
}

// SAFETY: CUDA driver handles may be used from any thread once the context is current (each
// operation makes it current first); the Vecs of handles are behind locks.
unsafe impl Send for CudaDevice {}
unsafe impl Sync for CudaDevice {}

impl CudaDevice {
    pub(crate) fn new(index: usize, arch: u32, config: &CudaConfig) -> Result<Self> {
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
                // Grow the pool now, then give back all but what an idle pool keeps: a fresh
                // pool's first 64 MiB took 8.7 ms on an H200, growing them back after a trim
                // ~0.35 ms, and a process that has not allocated yet holds nothing another may
                // need. Failure only means no head start.
                if let Ok(s) = driver::create_stream() {
                    let mut p: CUdeviceptr = 0;
                    let _ = call("cuMemAllocAsync", || unsafe {
                        sys::cuMemAllocAsync(&mut p, config.pool_preallocate, s)
                    })
                    .and_then(|_| call("cuMemFreeAsync", || unsafe { sys::cuMemFreeAsync(p, s) }))
                    .and_then(|_| {
                        call("cuStreamSynchronize", || unsafe {
                            sys::cuStreamSynchronize(s)
                        })
                    })
                    .and_then(|_| {
                        call("cuMemPoolTrimTo", || unsafe {
                            sys::cuMemPoolTrimTo(pool, config.pool_idle_keep as usize)
                        })
                    });
                    let _ = call("cuStreamDestroy", || unsafe { sys::cuStreamDestroy_v2(s) });
                }
            }
            Some((pool, threshold))
        } else {
            None
        };
        let blocks = Arc::new(blocks::BlockCache::new(if pool.is_some() {
            config.small_block_threshold
        } else {
            0
        }));
        // How the host waits for the device (wait.rs); the pool's settles borrow its events.
        let waiter = Arc::new(wait::Waiter::new(config.spin_us));
        let pool = pool.map(|(handle, release_threshold)| {
            let mut policy = PoolPolicy::for_device(total_memory as u64, config.pool_idle_keep);
            policy.idle = std::time::Duration::from_millis(config.pool_idle_ms);
            policy.oom_wait = std::time::Duration::from_millis(config.oom_wait_ms);
            if let Some(w) = config.pool_low_water {
                policy.low_water = w;
            }
            pool::Pool::new(
                handle,
                ctx,
                total_memory as u64,
                release_threshold,
                policy,
                blocks.clone(),
                waiter.clone(),
            )
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
            max_threads: attribute(dev, A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)? as u32,
            max_blocks: attribute(dev, A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)? as u32,
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
            internal: Lock::with_default(&INTERNAL),
            modules: Mutex::new(Vec::new()),
            kernels: Padded(RwLock::new(Vec::new())),
            blocks,
            staging: staging::Staging::new(
                ctx,
                index as i32,
                staging::Options {
                    limit: config.staging_limit,
                    helpers: match config.staging_threads {
                        0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
                        n => n,
                    },
                    batching: batch_copies,
                    copy_kernel: config.copy_kernel,
                    pack: config.pack_copies,
                    streaming: config.streaming_stores.then_some(config.streaming_min),
                },
                waiter.clone(),
            ),
            waiter,
            limits,
            shared_memory_size: config.shared_memory_size,
            device_rtl_debug: config.device_rtl_debug,
            name,
            total_memory,
            driver_version,
            sm_count,
            pageable_access,
            peers: Mutex::new(std::collections::HashMap::new()),
            prints: std::sync::atomic::AtomicBool::new(false),
            timing: timing::Timing::default(),
            record: std::sync::OnceLock::new(),
            record_va: config.record_va,
            uuid,
        })
    }

    fn current(&self) -> Result<()> {
        make_current(self.ctx)
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

    /// With `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS` (HMM or ATS) every host address;
    /// otherwise memory the driver maps for the device: pinned (`cuMemAllocHost`,
    /// registered) or managed, checked at both ends of the range.
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

    fn peer_id(&self) -> Option<usize> {
        Some(self.dev as usize)
    }

    fn is_asynchronous(&self) -> bool {
        true
    }

    // Images, kernels and globals (module.rs).

    fn load(&self, image: &ImageInfo<'_>, env: &LoadEnv) -> Result<ModuleId> {
        self.module_load(image, env)
    }

    fn unload(&self, m: ModuleId) -> Result<()> {
        self.module_unload(m)
    }

    fn kernel(&self, m: ModuleId, name: &str) -> Result<KernelId> {
        self.module_get_function(m, name)
    }

    fn takes_launch_environment(&self, m: ModuleId, name: &str) -> Option<bool> {
        self.has_kernel_environment(m, name)
    }

    fn global(&self, m: ModuleId, name: &str) -> Result<(DevicePtr, usize)> {
        self.module_get_global(m, name)
    }

    fn uses_indirect_call_table(&self) -> bool {
        true
    }

    fn publish_indirect_calls(&self, m: ModuleId, table: &[(u64, u64)]) -> Result<()> {
        self.publish_indirect_call_table(m, table)
    }

    // Memory (memory.rs) and record and replay (record.rs).

    fn alloc(&self, size: usize, kind: AllocKind, queue: Option<QueueId>) -> Result<DevicePtr> {
        self.mem_alloc(size, kind, queue)
    }

    fn free(&self, ptr: DevicePtr, kind: AllocKind, queue: Option<QueueId>) -> Result<()> {
        self.mem_free(ptr, kind, queue)
    }

    fn orders_alloc_on_queue(&self) -> bool {
        self.pool.is_some()
    }

    fn release_cached_memory(&self) {
        if let Some(pool) = &self.pool {
            pool.stop_governor();
        }
        if self.current().is_ok() {
            self.give_back(0);
        }
    }

    fn begin_record_replay(
        &self,
        size: Option<usize>,
        at: Option<usize>,
    ) -> Result<(usize, usize)> {
        self.begin_record_region(size, at)
    }

    fn record_region(&self) -> Option<(usize, usize)> {
        self.record.get().map(RecordRegion::used)
    }

    // Copies (copy.rs).

    fn prestage_sizes(&self) -> (usize, usize) {
        self.staging.prestage_sizes()
    }

    fn prestage(&self, src: usize, size: usize) -> bool {
        self.current().is_ok() && self.staging.prestage(src, size).unwrap_or(false)
    }

    fn unstage(&self) {
        self.staging.unstage();
    }

    fn copy(
        &self,
        kind: CopyKind,
        dst: usize,
        src: usize,
        size: usize,
        queue: Option<QueueId>,
    ) -> Result<()> {
        self.memcpy(kind, dst, src, size, queue)
    }

    fn copy_to_peer(
        &self,
        dst: DevicePtr,
        peer: usize,
        src: DevicePtr,
        size: usize,
        queue: QueueId,
    ) -> Result<bool> {
        self.memcpy_peer(dst, peer, src, size, queue)
    }

    fn memset(&self, dst: DevicePtr, value: u8, size: usize, queue: Option<QueueId>) -> Result<()> {
        self.memset_d8(dst, value, size, queue)
    }

    // Launches (launch.rs).

    fn launch(
        &self,
        kernel: KernelId,
        args: &[usize],
        config: &LaunchConfig,
        queue: QueueId,
    ) -> Result<()> {
        self.launch_kernel(kernel, args, config, queue)
    }

    fn launch_environment(
        &self,
        kernel: KernelId,
        config: &LaunchConfig,
        queue: QueueId,
    ) -> Result<usize> {
        self.kernel_launch_environment(kernel, config, queue)
    }

    fn describe_launch(&self, kernel: KernelId, config: &LaunchConfig) -> (u32, u32, &'static str) {
        self.launch_geometry(kernel, config)
    }

    // Streams and events (queue.rs).

    fn create_queue(&self) -> Result<QueueId> {
        self.stream_create()
    }

    fn destroy_queue(&self, queue: QueueId) -> Result<()> {
        self.stream_destroy(queue)
    }

    fn synchronize(&self, queue: QueueId) -> Result<()> {
        self.stream_synchronize(queue)
    }

    fn query(&self, queue: QueueId) -> Result<bool> {
        self.stream_query(queue)
    }

    fn issue(&self, queue: QueueId) -> Result<()> {
        self.current()?;
        self.submit(queue).map(|_| ())
    }

    fn queue_touches_host(&self, queue: QueueId) -> bool {
        self.staging.touches_host(queue.0)
    }

    fn completion_releases_memory(&self) -> bool {
        self.pool
            .as_ref()
            .is_some_and(|p| p.over_release_threshold())
    }

    fn timestamp(&self, queue: Option<QueueId>) -> Result<Timestamp> {
        self.stream_timestamp(queue)
    }

    fn resolve_timestamp(&self, ts: Timestamp) -> Result<u64> {
        self.timestamp_resolve(ts)
    }

    fn create_event(&self) -> Result<EventId> {
        self.event_create()
    }

    fn destroy_event(&self, event: EventId) -> Result<()> {
        self.event_destroy(event)
    }

    fn record_event(&self, event: EventId, queue: QueueId) -> Result<()> {
        self.event_record(event, queue)
    }

    fn wait_event(&self, event: EventId, queue: QueueId) -> Result<()> {
        self.stream_wait_event(event, queue)
    }
}
