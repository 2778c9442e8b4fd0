//! The hardware abstraction layer of omptarget-rs: the [`Plugin`] and [`Device`] traits every
//! backend implements, plus the pieces backends share (the memory manager, the pool policy,
//! the ELF checks, record/replay's region). It depends on no other crate of ours.
//!
//! `core` drives devices only through the traits, and a backend knows nothing about mapping
//! tables or OpenMP semantics. Device addresses are plain `usize` values: a backend gives them
//! out and takes them back, and the core never dereferences them.

pub mod addr_map;
pub mod contention;
pub mod elf;
mod error;
pub mod memory_manager;
pub mod pool_policy;
pub mod record;
pub mod words;

pub use error::{Error, ErrorKind, Result};

use std::ffi::CStr;

/// A device address handed out by a backend.
pub type DevicePtr = usize;

/// An opaque queue handle (a CUDA stream; a token on synchronous backends).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QueueId(pub usize);

/// An opaque event handle (a CUDA event).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventId(pub usize);

/// An opaque loaded-image handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModuleId(pub usize);

/// An opaque kernel handle inside a loaded image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelId(pub usize);

/// A point on a queue for device tracing: its device time is known at once on backends that
/// finish each operation before returning, or once the queue's earlier work has completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timestamp {
    /// Nanoseconds in the device's time base (see [`Device::device_time`]).
    At(u64),
    /// A backend token, given to [`Device::resolve_timestamp`] once the queue is done.
    Pending(usize),
}

/// The host's monotonic clock in nanoseconds: the time base of every backend's device time
/// (a backend with its own clock maps its times onto this one).
pub fn host_clock_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    // Instant is CLOCK_MONOTONIC on Linux; counted from a fixed origin so values fit a u64
    // and stay comparable across devices.
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let origin = *ORIGIN.get_or_init(Instant::now);
    // Never 0, so a device time of 0 can mean "none" to a tool.
    origin.elapsed().as_nanos() as u64 + 1
}

/// What kind of memory an allocation asks for (`omp_target_alloc` and the `llvm_omp_target_alloc_*`
/// family).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AllocKind {
    /// Ordinary device memory (mapped data, `omp_target_alloc`).
    Device,
    /// Page-locked host memory the device can reach.
    Host,
    /// Memory shared between host and device (managed).
    Shared,
}

/// The direction of a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyKind {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

/// What a device image is, as far as a plugin can tell before loading it.
#[derive(Clone, Copy, Debug)]
pub struct ImageInfo<'a> {
    /// The raw image bytes (an ELF object for every backend we have).
    pub bytes: &'a [u8],
    /// The `triple` string of an OffloadBinary wrapper, if there was one.
    pub triple: Option<&'a str>,
    /// The `arch` string of an OffloadBinary wrapper, if there was one.
    pub arch: Option<&'a str>,
}

/// What a device image may need to know about its place among the OpenMP devices (the
/// device runtime's `__omp_rtl_device_environment`).
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadEnv {
    /// The OpenMP device number of the device loading the image.
    pub device_num: u32,
    /// The number of OpenMP devices.
    pub num_devices: u32,
}

/// Launch parameters of one kernel, already decoded from clang's `KernelArgsTy`.
#[derive(Clone, Copy, Debug, Default)]
pub struct LaunchConfig {
    /// The `KernelArgsTy::Version` the compiler wrote (before any upgrade): version 3 and later
    /// kernels take a hidden launch-environment pointer as their first parameter.
    pub version: u32,
    pub num_teams: [u32; 3],
    pub thread_limit: [u32; 3],
    pub dyn_cgroup_mem: u32,
    pub tripcount: u64,
    /// `LIBOMPTARGET_INFO` bits in force, for lines a backend prints itself.
    pub info: u32,
    /// A kernel language's launch (CUDA or HIP through LLVM 22's `llvmLaunchKernel`): the
    /// kernel runs `num_teams` blocks (3-D) of `thread_limit` threads exactly as given, with
    /// these parameter bytes instead of argument words; `None` for OpenMP constructs.
    pub language: Option<LanguageArgs>,
}

/// The parameters of a kernel-language launch (LLVM's `KernelLaunchParamsTy`): `size` bytes
/// at `data`, laid out as the kernel declares its parameters (each at its own alignment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LanguageArgs {
    pub data: usize,
    pub size: usize,
}

/// How a foreign runtime reaches a device (OpenMP 5.2 §14, `interop` objects): the device's
/// own API and its handles. Ids and names follow the OpenMP Additional Definitions document
/// (foreign runtime `cuda_driver` = 2, vendor `nvidia` = 11).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignRuntime {
    /// `omp_ifr_*` id and name of the API whose handles these are.
    pub id: i64,
    pub name: &'static CStr,
    pub vendor: i64,
    pub vendor_name: &'static CStr,
    /// The platform handle, if the API has one.
    pub platform: Option<usize>,
    /// The device handle (an integer in the CUDA driver API: `CUdevice`).
    pub device: Option<i64>,
    /// The context handle (`CUcontext`).
    pub device_context: Option<usize>,
    /// C type names of the handles and of a queue (`omp_get_interop_type_desc`).
    pub platform_type: &'static CStr,
    pub device_type: &'static CStr,
    pub context_type: &'static CStr,
    pub queue_type: &'static CStr,
}

/// A description of one device, for `omptarget info` and `__tgt_print_device_info`.
#[derive(Clone, Debug, Default)]
pub struct DeviceInfo {
    pub name: String,
    /// Key/value lines, in the order they should be printed.
    pub properties: Vec<(String, String)>,
}

/// A device backend: one per kind of hardware.
pub trait Plugin: Send + Sync {
    /// A short name (`x86_64`, `cuda`, `mock`).
    fn name(&self) -> &'static str;
    /// How many devices this backend drives; 0 when its driver is absent.
    fn number_of_devices(&self) -> usize;
    /// Whether `image` can run on this backend's devices.
    fn is_compatible(&self, image: &ImageInfo<'_>) -> bool;
    /// Why an image this backend recognises cannot run on any of its devices (an image built
    /// for another GPU architecture), or `None`.
    fn incompatibility(&self, _image: &ImageInfo<'_>) -> Option<String> {
        None
    }
    /// Initialises device `index` (0-based within this plugin).
    fn init_device(&self, index: usize) -> Result<Box<dyn Device>>;
}

/// One device of a backend.
///
/// Operations that take `Option<QueueId>` run synchronously with `None`. A backend that really
/// queues work (CUDA) reports it through [`Device::is_asynchronous`]; a synchronous backend may
/// finish each operation before returning and treat queues and events as tokens.
pub trait Device: Send + Sync {
    /// A description of the device.
    fn info(&self) -> DeviceInfo;
    /// The vendor's unique identifier of the device (a GPU's UUID), the part after
    /// `<plugin>-` of its OpenMP 6.0 UID (`omp_get_uid_from_device`). Default: none, and the
    /// UID uses the device's index in its plugin, as LLVM 22 does.
    fn vendor_uid(&self) -> Option<String> {
        None
    }
    /// The kind of compute unit, as LLVM names it for tools (`ompt_callback_device_initialize`'s
    /// `type`): `sm_90` for an NVIDIA GPU; the default is the host device's `generic-64bit`.
    fn compute_unit_kind(&self) -> String {
        "generic-64bit".into()
    }

    /// Loads an image; the handle stays valid until [`Device::unload`].
    fn load(&self, image: &ImageInfo<'_>, env: &LoadEnv) -> Result<ModuleId>;
    /// Unloads an image loaded with [`Device::load`].
    fn unload(&self, module: ModuleId) -> Result<()>;
    /// Finds a kernel by its symbol name.
    fn kernel(&self, module: ModuleId, name: &str) -> Result<KernelId>;
    /// Whether the kernel `name` of `module` takes the launch-environment pointer as its first
    /// parameter (images of clang 18 and later, launched with `KernelArgsTy` version 3): a
    /// launch with an older version would hand it its arguments one place off. `None`: the
    /// backend cannot tell.
    fn takes_launch_environment(&self, _module: ModuleId, _name: &str) -> Option<bool> {
        None
    }
    /// Finds a global by its symbol name: its device address and size in bytes.
    fn global(&self, module: ModuleId, name: &str) -> Result<(DevicePtr, usize)>;

    /// Allocates `size` bytes. With a queue and [`Device::orders_alloc_on_queue`], the memory is
    /// usable by work queued after this call on that queue.
    fn alloc(&self, size: usize, kind: AllocKind, queue: Option<QueueId>) -> Result<DevicePtr>;
    /// Frees memory from [`Device::alloc`]. With a queue and [`Device::orders_alloc_on_queue`],
    /// the free takes effect after the work already queued on that queue.
    fn free(&self, ptr: DevicePtr, kind: AllocKind, queue: Option<QueueId>) -> Result<()>;
    /// Gives memory the backend keeps cached for reuse back to the device (the last binary
    /// went away). Default: nothing cached.
    fn release_cached_memory(&self) {}

    /// Whether allocation and free are ordered on a queue (stream-ordered allocation).
    fn orders_alloc_on_queue(&self) -> bool {
        false
    }
    /// Whether queued work may still be running when a call returns.
    fn is_asynchronous(&self) -> bool {
        false
    }

    /// The foreign runtime through which programs may use this device's handles and queues
    /// (`#pragma omp interop`), or `None` when the device has none (the host device, as in
    /// LLVM 19). A queue given to a program is a [`QueueId`] of [`Device::create_queue`].
    fn foreign_runtime(&self) -> Option<ForeignRuntime> {
        None
    }

    /// Whether the device can access host memory `[ptr, ptr + size)` directly
    /// (`omp_target_is_accessible`). Default: no.
    fn host_memory_accessible(&self, _ptr: usize, _size: usize) -> bool {
        false
    }

    /// Whether kernels can use any host address of the program as it is (stack, heap,
    /// globals), as `#pragma omp requires unified_shared_memory` needs; `Err` says why not.
    /// Default: no.
    fn unified_shared_memory(&self) -> std::result::Result<(), String> {
        Err("the backend cannot use host addresses in kernels".into())
    }

    /// Publishes an image's indirect-call table: `(host function, device function)` address
    /// pairs of its `declare target indirect` functions, sorted by host address, for device
    /// code that translates a host function pointer itself (LLVM's device runtime searches it
    /// in `__llvm_omp_indirect_call_lookup`). Called once after [`Device::load`], with an
    /// empty table when the image has no indirect functions. Default: nothing to publish
    /// (kernels on the host device call host functions directly).
    fn publish_indirect_calls(&self, _module: ModuleId, _table: &[(u64, u64)]) -> Result<()> {
        Ok(())
    }

    /// Whether device code looks host addresses up in the indirect-call table (a GPU device
    /// runtime), so that entries only that table needs (LLVM 22's vtables) are worth reading.
    /// Default: no (kernels on the host device use host addresses directly).
    fn uses_indirect_call_table(&self) -> bool {
        false
    }

    /// Makes `size` bytes of host memory at `ptr` fast to copy to and from the device
    /// (`llvm_omp_target_lock_mem`); returns the address to use. By default (as LLVM 19's host
    /// and CUDA plugins) nothing needs doing and the pointer itself is returned.
    fn lock_host_memory(&self, ptr: usize, _size: usize) -> Result<usize> {
        Ok(ptr)
    }
    /// Undoes [`Device::lock_host_memory`].
    fn unlock_host_memory(&self, _ptr: usize) -> Result<()> {
        Ok(())
    }

    /// Record and replay (LLVM's `RecordReplayTy`): reserves a region of device memory, of
    /// `size` bytes when given (else as much as the device can give), at address `at` when
    /// given and possible, and serves every later device allocation from it (frees of its
    /// blocks do nothing; see [`record::RecordRegion`]). Returns `(start, offset)`: where
    /// allocations begin (`at` when the reservation covers it) and, when it could not, how
    /// far `at` lies from it (LLVM's `ReqPtrArgOffset`). Default: not supported.
    fn begin_record_replay(
        &self,
        _size: Option<usize>,
        _at: Option<usize>,
    ) -> Result<(usize, usize)> {
        Err(Error::new(
            ErrorKind::Unsupported,
            "record and replay is not supported by this device",
        ))
    }
    /// The region of [`Device::begin_record_replay`]: its start and the bytes handed out.
    fn record_region(&self) -> Option<(usize, usize)> {
        None
    }
    /// The hidden first argument a version ≥ 3 kernel receives (LLVM's
    /// `KernelLaunchEnvironmentTy *`), prepared on `queue` for a launch with `config`:
    /// `usize::MAX` when the kernel needs none (the default). A launch with `config.version`
    /// 0 and this word first runs the kernel as [`Device::launch`] would; record and replay
    /// use that to know, and to pass, every word a kernel receives.
    fn launch_environment(
        &self,
        _kernel: KernelId,
        _config: &LaunchConfig,
        _queue: QueueId,
    ) -> Result<usize> {
        Ok(usize::MAX)
    }

    /// Host → device copies of this many bytes (inclusive range) are worth a
    /// [`Device::prestage`] hint; the default `(usize::MAX, 0)`: none.
    fn prestage_sizes(&self) -> (usize, usize) {
        (usize::MAX, 0)
    }
    /// A hint that this thread will soon copy `[src, src + size)` to the device, from inside
    /// the mapping table's lock: the backend may do the copy's host-side work now, outside
    /// it (the CUDA plugin fills a pinned staging buffer, ~0.7 ms for 4 MiB of pageable
    /// memory, during which other threads' constructs would wait for the table). The next
    /// host → device [`Device::copy`] of exactly this range by this thread uses it. Returns
    /// whether anything was staged; then [`Device::unstage`] must follow the copy (or its
    /// absence).
    fn prestage(&self, _src: usize, _size: usize) -> bool {
        false
    }
    /// Gives back what [`Device::prestage`] staged on this thread and no copy used.
    fn unstage(&self) {}

    /// Copies `size` bytes. Host pointers are plain host addresses.
    fn copy(
        &self,
        kind: CopyKind,
        dst: usize,
        src: usize,
        size: usize,
        queue: Option<QueueId>,
    ) -> Result<()>;
    /// A handle by which other devices of the same backend reach this one directly (a CUDA
    /// context), or `None` when the backend has no direct device-to-device path.
    fn peer_id(&self) -> Option<usize> {
        None
    }
    /// Copies `size` bytes from `src` on this device to `dst` on the device whose
    /// [`Device::peer_id`] is `peer`, directly (not through host memory), on `queue`.
    /// `Ok(false)`: no direct path between these two devices; the caller stages the copy.
    fn copy_to_peer(
        &self,
        _dst: DevicePtr,
        _peer: usize,
        _src: DevicePtr,
        _size: usize,
        _queue: QueueId,
    ) -> Result<bool> {
        Ok(false)
    }
    /// Fills `size` bytes of device memory with `value`.
    fn memset(&self, dst: DevicePtr, value: u8, size: usize, queue: Option<QueueId>) -> Result<()>;

    /// Launches a kernel with one word per argument (device address or literal bits).
    fn launch(
        &self,
        kernel: KernelId,
        args: &[usize],
        config: &LaunchConfig,
        queue: QueueId,
    ) -> Result<()>;

    /// The launch geometry a launch with `config` gets, for `LIBOMPTARGET_INFO` (blocks,
    /// threads per block, `Generic` or `SPMD`).
    fn describe_launch(
        &self,
        _kernel: KernelId,
        _config: &LaunchConfig,
    ) -> (u32, u32, &'static str) {
        (1, 1, "Generic")
    }

    /// Creates a queue.
    fn create_queue(&self) -> Result<QueueId>;
    /// Destroys a queue created by [`Device::create_queue`].
    fn destroy_queue(&self, queue: QueueId) -> Result<()>;
    /// Waits until everything queued on `queue` has finished.
    fn synchronize(&self, queue: QueueId) -> Result<()>;
    /// Whether everything queued on `queue` has finished, without blocking.
    fn query(&self, queue: QueueId) -> Result<bool>;
    /// Hands the work the backend holds back on `queue` (small copies it gathers into one
    /// device operation until a later operation of the queue needs them) to the device now,
    /// so that it runs while the host goes on: called where nothing more will join it soon
    /// (a target region's copies back, before the region's host-side clean-up). The
    /// default does nothing: nothing is held back.
    fn issue(&self, _queue: QueueId) -> Result<()> {
        Ok(())
    }

    /// Whether work queued on `queue` may still read or write the program's host memory: a
    /// DMA from or to host memory that was not staged, or a staged copy from the device that
    /// lands in host memory when the queue completes. A construct whose queue does not may
    /// return before its device work completes (the core's deferred completion,
    /// docs/ARCHITECTURE.md). The default, `true`, never lets one.
    fn queue_touches_host(&self, _queue: QueueId) -> bool {
        true
    }

    /// Whether waiting for a queue now would give device memory back to the device (a memory
    /// pool holding more than it keeps cached between synchronisations): a construct that
    /// freed memory on its queue then waits before returning, so that the memory is released
    /// when the program goes on (other processes may be waiting for it).
    fn completion_releases_memory(&self) -> bool {
        false
    }

    /// Marks the current end of `queue` (or now, without a queue) for device tracing: the
    /// time when everything queued before it has run. Called only while a tool traces the
    /// device. The default, the host clock now, is right for backends that finish each
    /// operation before returning.
    fn timestamp(&self, _queue: Option<QueueId>) -> Result<Timestamp> {
        Ok(Timestamp::At(host_clock_ns()))
    }
    /// The device time of `ts` (see [`Device::device_time`]) once the work queued before it
    /// has completed (its queue was synchronised or found done); releases what it held.
    fn resolve_timestamp(&self, ts: Timestamp) -> Result<u64> {
        match ts {
            Timestamp::At(t) => Ok(t),
            Timestamp::Pending(_) => Err(Error::new(
                ErrorKind::InvalidArgument,
                "this backend has no pending timestamps",
            )),
        }
    }
    /// The device's clock now, in nanoseconds of the host's monotonic clock
    /// ([`host_clock_ns`]): device times of every backend share that base.
    fn device_time(&self) -> u64 {
        host_clock_ns()
    }

    /// Creates an event.
    fn create_event(&self) -> Result<EventId>;
    /// Destroys an event.
    fn destroy_event(&self, event: EventId) -> Result<()>;
    /// Records `event` at the current end of `queue`.
    fn record_event(&self, event: EventId, queue: QueueId) -> Result<()>;
    /// Makes later work on `queue` wait for `event`, without blocking the host.
    fn wait_event(&self, event: EventId, queue: QueueId) -> Result<()>;
}
