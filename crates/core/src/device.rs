//! A device: a backend device (initialised on first use), the images loaded on it, its
//! mapping table, its queue pool and its allocation policy.

use crate::config::Config;
use crate::error::{DeviceContext, Error, Result};
use crate::image::{Binary, OffloadEntry, entry_flags};
use crate::indirect::{self, IndirectCallTable};
use crate::mapping::{Entry, MappingTable, RefCount};
use crate::message::{Addr, report};
use omptarget_plugin::memory_manager::MemoryManager;
use omptarget_plugin::{
    AllocKind, CopyKind, Device as Backend, DevicePtr, EventId, ImageInfo, KernelId, LaunchConfig,
    LoadEnv, ModuleId, Plugin, QueueId,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};

/// Locks a mutex, ignoring poisoning: every critical section leaves its data consistent
/// before anything that can panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What one binary put on this device.
struct LoadedBinary {
    key: usize,
    module: Option<ModuleId>,
    /// Host entry addresses this binary added to the kernel table or the mapping table.
    kernels: Vec<usize>,
    globals: Vec<usize>,
    dtors: Vec<KernelId>,
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
    loaded: Mutex<Vec<LoadedBinary>>,
    kernels: RwLock<HashMap<usize, (KernelId, &'static str)>>,
    pub(crate) table: Mutex<MappingTable>,
    /// Device allocations of entries that left the table while other constructs' queued work
    /// still used them: (allocation, constructs still to synchronise). The last of those
    /// frees it (see `AsyncInfo::end_marks`).
    pub(crate) zombies: Mutex<Vec<(usize, u32)>>,
    queues: Mutex<Vec<QueueId>>,
    events: Mutex<Vec<EventId>>,
    /// Size-class cache for backends that cannot order allocation on a queue.
    memory_manager: OnceLock<Option<MemoryManager>>,
    /// Sizes of blocks served by the memory manager, so a free knows its class.
    cached_sizes: Mutex<HashMap<DevicePtr, usize>>,
    mm_threshold: usize,
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
            loaded: Mutex::new(Vec::new()),
            kernels: RwLock::new(HashMap::new()),
            table: Mutex::new(MappingTable::new()),
            zombies: Mutex::new(Vec::new()),
            queues: Mutex::new(Vec::new()),
            events: Mutex::new(Vec::new()),
            memory_manager: OnceLock::new(),
            cached_sizes: Mutex::new(HashMap::new()),
            mm_threshold: config.memory_manager_threshold,
        }
    }

    pub(crate) fn loaded_generation(&self) -> u64 {
        self.loaded_generation.load(Ordering::Acquire)
    }

    pub fn plugin_name(&self) -> &'static str {
        self.plugin.name()
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
                // Stream-ordered allocation needs no cache; a synchronous host device gains
                // nothing from one either.
                (!backend.orders_alloc_on_queue()
                    && backend.is_asynchronous()
                    && self.mm_threshold > 0)
                    .then(|| MemoryManager::new(self.mm_threshold))
            })
            .as_ref()
    }

    /// Loads the binaries of `binaries` that are not loaded here yet (generation `generation`).
    pub(crate) fn ensure_loaded(
        &self,
        binaries: &[Binary],
        generation: u64,
        num_devices: usize,
        info: u32,
    ) -> Result<()> {
        if self.loaded_generation.load(Ordering::Acquire) == generation {
            return Ok(());
        }
        let backend = self.backend()?;
        let mut loaded = lock(&self.loaded);
        if self.loaded_generation.load(Ordering::Acquire) == generation {
            return Ok(());
        }
        for binary in binaries {
            if loaded.iter().any(|l| l.key == binary.key) {
                continue;
            }
            let record = self.load_binary(backend, binary, num_devices, info)?;
            loaded.push(record);
        }
        self.loaded_generation.store(generation, Ordering::Release);
        Ok(())
    }

    fn load_binary(
        &self,
        backend: &dyn Backend,
        binary: &Binary,
        num_devices: usize,
        info: u32,
    ) -> Result<LoadedBinary> {
        let mut record = LoadedBinary {
            key: binary.key,
            module: None,
            kernels: Vec::new(),
            globals: Vec::new(),
            dtors: Vec::new(),
        };
        let Some(image) = binary.images.iter().find(|i| {
            self.plugin.is_compatible(&ImageInfo {
                bytes: i.bytes,
                triple: i.triple,
                arch: i.arch,
            })
        }) else {
            return Ok(record);
        };
        let module = backend
            .load(
                &ImageInfo {
                    bytes: image.bytes,
                    triple: image.triple,
                    arch: image.arch,
                },
                &LoadEnv {
                    device_num: self.id as u32,
                    num_devices: num_devices as u32,
                },
            )
            .on(self.id, "loading the device image")?;
        record.module = Some(module);
        let mut ctors = Vec::new();
        let mut indirect_calls = IndirectCallTable::default();
        let mut kernels = self.kernels.write().unwrap_or_else(|e| e.into_inner());
        let mut table = lock(&self.table);
        for entry in &binary.entries {
            if entry.flags & entry_flags::REQUIRES != 0 {
                continue;
            }
            if entry.is_kernel() {
                let kernel = backend
                    .kernel(module, entry.name_str())
                    .on(self.id, "looking up a kernel")?;
                if entry.flags & entry_flags::CTOR != 0 {
                    ctors.push(kernel);
                } else if entry.flags & entry_flags::DTOR != 0 {
                    record.dtors.push(kernel);
                }
                kernels.insert(entry.addr, (kernel, entry.name_str()));
                record.kernels.push(entry.addr);
            } else if entry.flags & entry_flags::INDIRECT != 0 {
                // An indirect function: its host address maps to the device function.
                let function =
                    indirect::device_function(backend, self.id, module, entry, &table, info)?;
                indirect_calls.push(entry.addr, function);
                if self.map_global_to(entry, function, &mut table) {
                    record.globals.push(entry.addr);
                }
            } else if entry.size > 0 {
                // A global, or a `declare target link` reference pointer (the device copy of
                // the pointer is attached when the variable is mapped, like any PTR_AND_OBJ).
                if !table.lookup(entry.addr, entry.size).contained {
                    let (addr, _) = backend
                        .global(module, entry.name_str())
                        .on(self.id, "looking up a global")?;
                    self.map_global_to(entry, addr, &mut table);
                    record.globals.push(entry.addr);
                }
            }
        }
        drop(table);
        drop(kernels);
        backend
            .publish_indirect_calls(module, &indirect_calls.into_sorted())
            .on(self.id, "publishing the indirect-call table")?;
        for ctor in ctors {
            self.run_constructor(backend, ctor)?;
        }
        Ok(record)
    }

    /// A `declare target` global (or indirect function): its host address maps to device
    /// address `addr` forever. The same global in several images (weak symbols) keeps its
    /// first mapping; returns whether this one was added.
    fn map_global_to(&self, entry: &OffloadEntry, addr: usize, table: &mut MappingTable) -> bool {
        if table.lookup(entry.addr, entry.size).contained {
            return false;
        }
        table.insert(Entry {
            host_base: entry.addr,
            host_begin: entry.addr,
            host_end: entry.addr + entry.size,
            tgt_alloc: addr,
            tgt_begin: addr,
            dyn_refs: RefCount::Infinite,
            hold_refs: 0,
            owns_allocation: false,
            name: Some(entry.name),
            shadows: Vec::new(),
            pending: None,
            users: 0,
        });
        true
    }

    fn run_constructor(&self, backend: &dyn Backend, kernel: KernelId) -> Result<()> {
        let queue = self.acquire_queue()?;
        let config = LaunchConfig {
            version: 0,
            num_teams: [1, 0, 0],
            thread_limit: [1, 0, 0],
            ..LaunchConfig::default()
        };
        let r = backend
            .launch(kernel, &[], &config, queue)
            .and_then(|_| backend.synchronize(queue))
            .on(self.id, "running a global constructor");
        self.release_queue(queue);
        r
    }

    /// Removes what binary `key` put here: its kernels, its globals' mappings, its image.
    pub(crate) fn unload_binary(&self, key: usize) {
        let Some(record) = ({
            let mut loaded = lock(&self.loaded);
            loaded
                .iter()
                .position(|l| l.key == key)
                .map(|i| loaded.remove(i))
        }) else {
            return;
        };
        let Ok(backend) = self.backend() else { return };
        for dtor in &record.dtors {
            let _ = self.run_constructor(backend, *dtor);
        }
        {
            let mut kernels = self.kernels.write().unwrap_or_else(|e| e.into_inner());
            for addr in &record.kernels {
                kernels.remove(addr);
            }
        }
        {
            let mut table = lock(&self.table);
            for addr in &record.globals {
                table.remove(*addr);
            }
        }
        if let Some(module) = record.module {
            let _ = backend.unload(module);
        }
    }

    /// Frees every remaining mapping and cached block (the last binary went away).
    pub(crate) fn release_all_memory(&self) {
        let Some(Ok(backend)) = self.backend.get() else {
            return;
        };
        let entries = lock(&self.table).drain();
        for e in entries {
            if e.owns_allocation {
                let _ = self.free_raw(backend.as_ref(), e.tgt_alloc, AllocKind::Device, None);
            }
        }
        for (alloc, _) in std::mem::take(&mut *lock(&self.zombies)) {
            let _ = self.free_raw(backend.as_ref(), alloc, AllocKind::Device, None);
        }
        if let Some(mm) = self.memory_manager.get().and_then(Option::as_ref) {
            for p in mm.drain() {
                let _ = backend.free(p, AllocKind::Device, None);
            }
        }
        backend.release_cached_memory();
        for q in std::mem::take(&mut *lock(&self.queues)) {
            let _ = backend.destroy_queue(q);
        }
        for e in std::mem::take(&mut *lock(&self.events)) {
            let _ = backend.destroy_event(e);
        }
    }

    /// The device kernel of host region id `host_ptr`.
    pub(crate) fn kernel(&self, host_ptr: usize) -> Option<(KernelId, &'static str)> {
        self.kernels
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&host_ptr)
            .copied()
    }

    pub(crate) fn acquire_queue(&self) -> Result<QueueId> {
        if let Some(q) = lock(&self.queues).pop() {
            return Ok(q);
        }
        self.backend()?
            .create_queue()
            .on(self.id, "creating a queue")
    }

    pub(crate) fn release_queue(&self, queue: QueueId) {
        lock(&self.queues).push(queue);
    }

    /// Creates `n` queues up front (`LIBOMPTARGET_NUM_INITIAL_STREAMS`).
    pub(crate) fn prefill_queues(&self, n: usize) {
        let Ok(backend) = self.backend() else { return };
        let mut queues = lock(&self.queues);
        while queues.len() < n {
            match backend.create_queue() {
                Ok(q) => queues.push(q),
                Err(_) => break,
            }
        }
    }

    pub(crate) fn acquire_event(&self) -> Result<EventId> {
        if let Some(e) = lock(&self.events).pop() {
            return Ok(e);
        }
        self.backend()?
            .create_event()
            .on(self.id, "creating an event")
    }

    pub(crate) fn release_event(&self, event: EventId) {
        lock(&self.events).push(event);
    }

    /// Allocates device memory for a mapping or an API call.
    pub(crate) fn alloc(
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
                None => self.backend_alloc(backend, MemoryManager::class_size(size), queue)?,
            };
            lock(&self.cached_sizes).insert(ptr, size);
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
        // Only devices with a size-class cache pay for the size lookup (a lock) on free.
        if kind == AllocKind::Device
            && let Some(mm) = self.memory_manager()
            && let Some(size) = lock(&self.cached_sizes).remove(&ptr)
            && mm.give_back(ptr, size)
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
