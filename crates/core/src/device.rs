//! A device: a backend device (initialised on first use), the images loaded on it, its
//! mapping table, its queue pool and its allocation policy.

mod images;

pub(crate) use images::Kernel;

use crate::config::{Config, info};
use crate::error::{DeviceContext, Error, Result};
use crate::mapping::{Entry, MappingTable};
use crate::message::{Addr, report};
use crate::trace::{self, SourceLoc};
use images::Loads;
use omptarget_plugin::contention::{Lock, Padded, Site};
use omptarget_plugin::memory_manager::MemoryManager;
use omptarget_plugin::{
    AllocKind, CopyKind, Device as Backend, DevicePtr, EventId, Plugin, QueueId,
};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, RwLock};

/// Locks a mutex, ignoring poisoning: every critical section leaves its data consistent
/// before anything that can panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The locks of a construct's path, counted when found held (`OMPTARGET_RS_PROFILE=1`).
static TABLE: Site = Site::new("core: mapping table");
static ZOMBIES: Site = Site::new("core: retired allocations");
static QUEUES: Site = Site::new("core: queue pool");
static EVENTS: Site = Site::new("core: event pool");

/// What a device does with its kernels under record and replay (`record.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Record,
    Replay,
}

/// A device's record/replay state (set once, when it begins).
#[derive(Debug)]
pub struct RecordReplay {
    pub mode: Mode,
    /// Save the device memory after each kernel (`.original.output` / `.replay.output`).
    pub save_output: bool,
}

/// One OpenMP device.
pub struct Device {
    /// The OpenMP device number.
    pub id: usize,
    plugin: Arc<dyn Plugin>,
    local_index: usize,
    backend: OnceLock<std::result::Result<Box<dyn Backend>, omptarget_plugin::Error>>,
    /// The registry generation whose binaries are all loaded here.
    loaded_generation: AtomicU64,
    loads: Mutex<Loads>,
    loads_done: Condvar,
    // The locks every construct takes (and the kernel table's lock, whose readers write its
    // state word) each on lines of their own: every thread writes them, while the fields
    // beside them (the backend, the loaded generation) are only read on a construct's path.
    kernels: Padded<RwLock<omptarget_plugin::addr_map::AddrMap<usize, Kernel>>>,
    pub(crate) table: Padded<Lock<MappingTable>>,
    /// Device allocations of entries that left the table while other constructs' queued work
    /// still used them: (allocation, constructs still to synchronise). The last of those
    /// frees it (see `AsyncInfo::end_marks`).
    pub(crate) zombies: Lock<Vec<(usize, u32)>>,
    queues: Padded<Lock<Vec<QueueId>>>,
    events: Padded<Lock<Vec<EventId>>>,
    /// Size-class cache for backends that cannot order allocation on a queue.
    memory_manager: OnceLock<Option<MemoryManager>>,
    mm_threshold: usize,
    /// Blocks `omp_target_alloc` handed out and not yet freed: a free of anything else (a
    /// second free, above all) is refused instead of corrupting the allocator.
    pub(crate) api_blocks: Mutex<std::collections::HashSet<DevicePtr>>,
    /// Record and replay (`record.rs`), once begun.
    pub(crate) record: OnceLock<RecordReplay>,
    /// The device's OpenMP 6.0 unique identifier, made on first request.
    uid: OnceLock<std::ffi::CString>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("id", &self.id)
            .field("plugin", &self.plugin.name())
            .finish()
    }
}

impl Device {
    pub(crate) fn new(
        id: usize,
        plugin: Arc<dyn Plugin>,
        local_index: usize,
        config: &Config,
    ) -> Self {
        Self {
            id,
            plugin,
            local_index,
            backend: OnceLock::new(),
            loaded_generation: AtomicU64::new(0),
            loads: Mutex::new(Loads::default()),
            loads_done: Condvar::new(),
            kernels: Padded(RwLock::new(omptarget_plugin::addr_map::addr_map())),
            table: Padded(Lock::new(&TABLE, MappingTable::new())),
            zombies: Lock::new(&ZOMBIES, Vec::new()),
            queues: Padded(Lock::new(&QUEUES, Vec::new())),
            events: Padded(Lock::new(&EVENTS, Vec::new())),
            memory_manager: OnceLock::new(),
            mm_threshold: config.memory_manager_threshold,
            api_blocks: Mutex::new(std::collections::HashSet::new()),
            record: OnceLock::new(),
            uid: OnceLock::new(),
        }
    }

    pub(crate) fn loaded_generation(&self) -> u64 {
        self.loaded_generation.load(Ordering::Acquire)
    }

    pub fn plugin_name(&self) -> &'static str {
        self.plugin.name()
    }

    /// The device's unique identifier (`omp_get_uid_from_device`), as LLVM 22 forms it:
    /// `<plugin>-<vendor uid>`, the vendor uid being a GPU's UUID, or the device's index in
    /// its plugin where the hardware has none (`x86_64-0`).
    pub fn uid(&self) -> &std::ffi::CStr {
        self.uid.get_or_init(|| {
            let vendor = self
                .backend()
                .ok()
                .and_then(|b| b.vendor_uid())
                .unwrap_or_else(|| self.local_index.to_string());
            std::ffi::CString::new(format!("{}-{vendor}", self.plugin.name())).unwrap_or_default()
        })
    }

    /// The device's record/replay state, if any (one atomic load).
    #[inline]
    pub fn record_replay(&self) -> Option<&RecordReplay> {
        self.record.get()
    }

    /// The backend device, initialised on first use.
    pub fn backend(&self) -> Result<&dyn Backend> {
        match self
            .backend
            .get_or_init(|| self.plugin.init_device(self.local_index))
        {
            Ok(b) => Ok(b.as_ref()),
            Err(e) => Err(Error::Device {
                device: self.id,
                what: "device initialisation",
                source: e.clone(),
            }),
        }
    }

    fn memory_manager(&self) -> Option<&MemoryManager> {
        self.memory_manager
            .get_or_init(|| {
                let backend = self.backend().ok()?;
                // Stream-ordered allocation needs no cache. Every other device has one, the
                // host device included, as in LLVM 19 (which device addresses come back after
                // a free is visible to programs: `omp_get_mapped_ptr`, printed addresses).
                (!backend.orders_alloc_on_queue() && self.mm_threshold > 0)
                    .then(|| MemoryManager::new(self.mm_threshold))
            })
            .as_ref()
    }

    /// Frees every remaining mapping and cached block (the last binary went away).
    pub(crate) fn release_all_memory(&self) {
        let Some(Ok(backend)) = self.backend.get() else {
            return;
        };
        let entries = self.table.lock().drain();
        for e in entries {
            if e.owns_allocation {
                let _ = self.free_raw(backend.as_ref(), e.tgt_alloc, AllocKind::Device, None);
            }
        }
        for (alloc, _) in std::mem::take(&mut *self.zombies.lock()) {
            let _ = self.free_raw(backend.as_ref(), alloc, AllocKind::Device, None);
        }
        if let Some(mm) = self.memory_manager.get().and_then(Option::as_ref) {
            for p in mm.drain() {
                let _ = backend.free(p, AllocKind::Device, None);
            }
        }
        backend.release_cached_memory();
        for q in std::mem::take(&mut *self.queues.lock()) {
            let _ = backend.destroy_queue(q);
        }
        for e in std::mem::take(&mut *self.events.lock()) {
            let _ = backend.destroy_event(e);
        }
    }

    pub(crate) fn acquire_queue(&self) -> Result<QueueId> {
        if let Some(q) = self.queues.lock().pop() {
            return Ok(q);
        }
        self.backend()?
            .create_queue()
            .on(self.id, "creating a queue")
    }

    pub(crate) fn release_queue(&self, queue: QueueId) {
        self.queues.lock().push(queue);
    }

    /// Creates `n` queues up front (`LIBOMPTARGET_NUM_INITIAL_STREAMS`).
    pub(crate) fn prefill_queues(&self, n: usize) {
        let Ok(backend) = self.backend() else { return };
        let mut queues = self.queues.lock();
        while queues.len() < n {
            match backend.create_queue() {
                Ok(q) => queues.push(q),
                Err(_) => break,
            }
        }
    }

    pub(crate) fn acquire_event(&self) -> Result<EventId> {
        if let Some(e) = self.events.lock().pop() {
            return Ok(e);
        }
        self.backend()?
            .create_event()
            .on(self.id, "creating an event")
    }

    pub(crate) fn release_event(&self, event: EventId) {
        self.events.lock().push(event);
    }

    /// Allocates device memory for a mapping or an API call.
    pub(crate) fn alloc(
        &self,
        size: usize,
        kind: AllocKind,
        queue: Option<QueueId>,
    ) -> Result<DevicePtr> {
        let r = self.alloc_unreported(size, kind, queue);
        if let Err(Error::Device {
            what: "allocating device memory",
            source,
            ..
        }) = &r
        {
            // LLVM's line, with the backend's reason (size and device) in place of its own.
            crate::message::plugin_error(format_args!(
                "Failure to allocate device memory: {source}"
            ));
        }
        r
    }

    fn alloc_unreported(
        &self,
        size: usize,
        kind: AllocKind,
        queue: Option<QueueId>,
    ) -> Result<DevicePtr> {
        let backend = self.backend()?;
        if kind == AllocKind::Device
            && let Some(mm) = self.memory_manager().filter(|mm| mm.caches(size))
        {
            let ptr = match mm.take(size) {
                Some(p) => p,
                None => {
                    let p = self.backend_alloc(backend, size, queue)?;
                    mm.adopt(p, size);
                    p
                }
            };
            return Ok(ptr);
        }
        backend
            .alloc(size, kind, queue)
            .on(self.id, "allocating device memory")
    }

    fn backend_alloc(
        &self,
        backend: &dyn Backend,
        size: usize,
        queue: Option<QueueId>,
    ) -> Result<DevicePtr> {
        match backend.alloc(size, AllocKind::Device, queue) {
            Ok(p) => Ok(p),
            Err(_) => {
                // Give the cached blocks back and try once more.
                if let Some(mm) = self.memory_manager() {
                    for p in mm.drain() {
                        let _ = backend.free(p, AllocKind::Device, None);
                    }
                }
                backend
                    .alloc(size, AllocKind::Device, queue)
                    .on(self.id, "allocating device memory")
            }
        }
    }

    /// Frees device memory; `queue` orders the free after queued work where the backend can.
    pub(crate) fn free(
        &self,
        ptr: DevicePtr,
        kind: AllocKind,
        queue: Option<QueueId>,
    ) -> Result<()> {
        let backend = self.backend()?;
        self.free_raw(backend, ptr, kind, queue)
    }

    fn free_raw(
        &self,
        backend: &dyn Backend,
        ptr: DevicePtr,
        kind: AllocKind,
        queue: Option<QueueId>,
    ) -> Result<()> {
        // Only devices with a size-class cache pay for its lookup (one lock) on free.
        if kind == AllocKind::Device
            && let Some(mm) = self.memory_manager()
            && mm.release(ptr)
        {
            return Ok(());
        }
        backend
            .free(ptr, kind, queue)
            .on(self.id, "freeing device memory")
    }

    pub(crate) fn copy(
        &self,
        kind: CopyKind,
        dst: usize,
        src: usize,
        size: usize,
        queue: Option<QueueId>,
    ) -> Result<()> {
        let what = match kind {
            CopyKind::HostToDevice => "copying data from host to device",
            CopyKind::DeviceToHost => "copying data from device to host",
            CopyKind::DeviceToDevice => "copying data between devices",
        };
        self.backend()?
            .copy(kind, dst, src, size, queue)
            .map_err(|e| {
                report(format_args!(
                    "{what} failed: {e} (dst {}, src {}, {size} bytes)",
                    Addr(dst),
                    Addr(src)
                ));
                e
            })
            .on(self.id, what)
    }
}

/// LLVM's `LIBOMPTARGET_INFO` lines that read the device's mapping table.
impl Device {
    /// 0x20: a copy LLVM makes without naming a mapping (first-private data, `omp_target_memcpy`):
    /// its `Name` is that of the entry LLVM's lookup of the host range settles on, mapped or not
    /// (`MappingTable::lookup_for_trace`). Locks the device's table, so only when the bit is set.
    pub fn trace_transfer(
        &self,
        level: u32,
        to_device: bool,
        host: usize,
        tgt: usize,
        size: usize,
    ) {
        if level & info::DATA_TRANSFER == 0 {
            return;
        }
        let name = self
            .table
            .lock()
            .lookup_for_trace(host, size)
            .and_then(|e| e.name);
        trace::transfer(level, self.id, to_device, host, tgt, size, name);
    }

    /// `ompx_dump_mapping_tables` (to stdout) and the 0x04 dump after each construct (stderr).
    pub fn dump_table(&self, loc: &SourceLoc, to_stdout: bool) {
        let mut text = String::new();
        let prefix = format!("omptarget device {} info: ", self.id);
        {
            let table = self.table.lock();
            if table.is_empty() {
                text.push_str(&format!(
                    "{prefix}OpenMP Host-Device pointer mappings table empty\n"
                ));
            } else {
                text.push_str(&format!(
                    "{prefix}OpenMP Host-Device pointer mappings after block at {loc}:\n"
                ));
                text.push_str(&format!(
                    "{prefix}{:<18} {:<18} {} {} {} {}\n",
                    "Host Ptr",
                    "Target Ptr",
                    "Size (B)",
                    "DynRefCount",
                    "HoldRefCount",
                    "Declaration"
                ));
                for e in table.iter() {
                    let (name, file, line, col) = trace::declaration(e.name);
                    text.push_str(&format!(
                        "{prefix}{} {} {:<8} {:<11} {:<12} {name} at {file}:{line}:{col}\n",
                        Addr(e.host_begin),
                        Addr(e.tgt_begin),
                        e.size(),
                        trace::refs(e.dyn_refs),
                        e.hold_refs,
                    ));
                }
            }
        }
        if to_stdout {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
        } else {
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
    }
}

/// Inspection for tests, fuzzing and fault injection (cheap, never on a construct's path).
impl Device {
    /// A copy of every mapping entry, in host address order.
    pub fn mappings(&self) -> Vec<Entry> {
        self.table.lock().iter().cloned().collect()
    }

    /// Checks the mapping table's invariants ([`MappingTable::check_invariants`]).
    pub fn check_table(&self) -> std::result::Result<(), String> {
        self.table.lock().check_invariants()
    }

    /// Device blocks the size-class cache keeps for reuse (owned by no mapping).
    pub fn cached_blocks(&self) -> usize {
        self.memory_manager
            .get()
            .and_then(Option::as_ref)
            .map_or(0, |mm| mm.cached())
    }

    /// Allocations of entries that left the table while other constructs' queued work still
    /// used them (freed when the last of those completes; 0 when no construct is in flight).
    pub fn deferred_frees(&self) -> usize {
        self.zombies.lock().len()
    }
}
