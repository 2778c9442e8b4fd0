//! The settings the plugin takes from the runtime's configuration (environment variables
//! read once by the core).

/// Settings the plugin takes from the runtime's configuration.
#[derive(Clone, Debug)]
pub struct CudaConfig {
    /// `OMP_NUM_TEAMS` (0: unset).
    pub num_teams: u32,
    /// `OMP_TEAMS_THREAD_LIMIT` (0: unset).
    pub teams_thread_limit: u32,
    /// `LIBOMPTARGET_SHARED_MEMORY_SIZE`: bytes of dynamic shared memory every OpenMP kernel
    /// launch gets at least (0: what the launch asks).
    pub shared_memory_size: u32,
    /// `LIBOMPTARGET_DEVICE_RTL_DEBUG`: written into the device runtime's environment.
    pub device_rtl_debug: u32,
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
    /// again at device initialisation, then trimmed to `pool_idle_keep`, so that the pool's
    /// first growth is not paid inside the program's constructs: on an H200 a fresh pool's first
    /// 64 MiB took 8.7 ms, growing them back after a trim ~0.35 ms (docs/GPU.md).
    pub pool_preallocate: usize,
    /// `OMPTARGET_RS_CUDA_POOL_IDLE_KEEP`: bytes the pool keeps while idle, from initialisation
    /// on and after each idle trim (0: an idle pool holds nothing and its governor sleeps until
    /// the next allocation; see pool.rs).
    pub pool_idle_keep: u64,
    /// `OMPTARGET_RS_CUDA_RECORD_VA`: the address a recording's region is asked for first
    /// (0: anywhere). The driver's own choice is the same low address in every process, where
    /// a replaying process's memory pool may already lie; one far from those is free.
    pub record_va: usize,
    /// `OMPTARGET_RS_CUDA_STAGING_LIMIT`: pinned bytes kept for staging copies to and from
    /// pageable host memory (0: the driver's own path for every copy; see staging.rs).
    pub staging_limit: usize,
    /// `OMPTARGET_RS_CUDA_STAGING_THREADS`: threads sharing a large staged copy's host copies,
    /// the caller included (0: the cores, at most 8).
    pub staging_threads: usize,
    /// `LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD`: device blocks up to this size are cached,
    /// stream-aware, in front of the memory pool (0: off; see blocks.rs).
    pub small_block_threshold: usize,
    /// `OMPTARGET_RS_CUDA_BATCH_COPIES` (default on): a construct's small copies reach the
    /// driver in one `cuMemcpyBatchAsync` call per direction.
    pub batch_copies: bool,
    /// `OMPTARGET_RS_CUDA_COPY_KERNEL` (default on): a batch of several small copies is made
    /// by one launch of a small copy kernel instead (staging/copy_kernel.rs; 0: never).
    pub copy_kernel: bool,
    /// `OMPTARGET_RS_CUDA_BLOCKING_SYNC`: set an inactive primary context to
    /// `CU_CTX_SCHED_BLOCKING_SYNC`, as LLVM does. Off by default: a sleeping host thread
    /// wakes ~16 µs later than a spinning one after each synchronisation (measured on an H200,
    /// docs/PERFORMANCE.md), which is most of an empty region's cost.
    pub blocking_sync: bool,
    /// `OMPTARGET_RS_CUDA_SPIN_US`: the longest a wait polls before it sleeps, in µs (default
    /// 1000; 0: it sleeps at once; `None` (-1): waits are the driver's synchronisation; wait.rs).
    pub spin_us: Option<u64>,
    /// `OMPTARGET_RS_CUDA_PACK_COPIES` (default on): staged copies of at most 2 KiB share a
    /// pinned arena per stream instead of a 4 KiB buffer each (staging.rs).
    pub pack_copies: bool,
    /// `OMPTARGET_RS_CUDA_STREAMING_STORES` (default on): the host side of staged copies of
    /// 8 MiB and more stores past the caches (staging/bytes.rs).
    pub streaming_stores: bool,
    /// `OMPTARGET_RS_CUDA_STREAMING_MIN` (default 8 MiB): the smallest copy that does.
    pub streaming_min: usize,
    /// `LIBOMPTARGET_INFO` at start-up, for the lines the plugin prints while initialising.
    pub info: u32,
}

impl Default for CudaConfig {
    fn default() -> Self {
        Self {
            num_teams: 0,
            teams_thread_limit: 0,
            shared_memory_size: 0,
            device_rtl_debug: 0,
            stack_size: 0,
            heap_size: 0,
            pool_release_threshold: None,
            pool_idle_ms: 1000,
            pool_low_water: None,
            oom_wait_ms: 3000,
            use_memory_pool: true,
            blocking_sync: false,
            spin_us: Some(crate::wait::DEFAULT_SPIN_US),
            pack_copies: true,
            streaming_stores: true,
            streaming_min: crate::staging::STREAM_MIN,
            info: 0,
            pool_preallocate: 256 << 20,
            pool_idle_keep: 0,
            record_va: 0x6000_0000_0000,
            staging_limit: 512 << 20,
            staging_threads: 0,
            small_block_threshold: 8192,
            batch_copies: true,
            copy_kernel: true,
        }
    }
}
