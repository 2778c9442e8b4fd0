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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, RwLock};

/// Locks a mutex, ignoring poisoning: every critical section leaves its data consistent
/// before anything that can panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What one binary put on this device (or, before it is installed, found in its image).
struct LoadedBinary {
    key: usize,
    module: Option<ModuleId>,
    /// Where the loaded image lies in the program and its size, for tools
    /// (`ompt_callback_device_load`).
    image: Option<(usize, usize)>,
    /// The binary's kernels and globals (with their device addresses) in the kernel table and
    /// the mapping table.
    kernels: Vec<(OffloadEntry, Kernel)>,
    globals: Vec<(OffloadEntry, DevicePtr)>,
    dtors: Vec<KernelId>,
}

/// A kernel of a loaded image.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kernel {
    pub id: KernelId,
    /// The device symbol (valid while its binary is registered).
    pub name: &'static str,
    /// The oldest `KernelArgsTy` version whose calling convention the kernel has: 3 when it
    /// takes the launch environment first, 0 when the backend cannot tell.
    pub min_args_version: u32,
}

/// What loading a binary reads of it, copied while it is registered (see
/// [`Binary::while_registered`]).
struct ImageCopy {
    image: Option<OwnedImage>,
    /// The entries with their names copied (for symbol lookups).
    entries: Vec<(OffloadEntry, String)>,
}

struct OwnedImage {
    bytes: Vec<u8>,
    /// The address of the program's copy.
    host_addr: usize,
    triple: Option<String>,
    arch: Option<String>,
}

impl ImageCopy {
    /// Copies the first of `binary`'s images that `plugin` can run, and the entry names.
    fn of(binary: &Binary, plugin: &dyn Plugin) -> Self {
        let image = binary
            .images
            .iter()
            .find(|i| {
                plugin.is_compatible(&ImageInfo {
                    bytes: i.bytes,
                    triple: i.triple,
                    arch: i.arch,
                })
            })
            .map(|i| OwnedImage {
                bytes: i.bytes.to_vec(),
                host_addr: i.bytes.as_ptr() as usize,
                triple: i.triple.map(str::to_owned),
                arch: i.arch.map(str::to_owned),
            });
        let entries = match image {
            Some(_) => binary
                .entries
                .iter()
                .map(|e| (*e, e.name_str().to_owned()))
                .collect(),
            None => Vec::new(),
        };
        Self { image, entries }
    }
}

/// The image loads of a device: what is installed, and whether a thread is loading.
#[derive(Default)]
struct Loads {
    records: Vec<LoadedBinary>,
    busy: bool,
}

/// Ends a thread's turn at loading images on a device.
struct LoadingGuard<'a>(&'a Device);

impl Drop for LoadingGuard<'_> {
    fn drop(&mut self) {
        lock(&self.0.loads).busy = false;
        self.0.loads_done.notify_all();
    }
}

/// A `declare target` global: its host copy maps to the image's copy (device address
/// `addr`) forever. `false` when the same global is already mapped (weak symbols in several
/// images: the first mapping wins).
fn map_global(table: &mut MappingTable, entry: &OffloadEntry, addr: DevicePtr) -> bool {
    let l = table.lookup(entry.addr, entry.size);
    if l.contained {
        return false;
    }
    let Some(end) = entry
        .addr
        .checked_add(entry.size)
        .filter(|_| l.entry.is_none())
    else {
        // A corrupt entry table: a global that wraps around the address space or overlaps
        // another one cannot be mapped.
        report(format_args!(
            "the global '{}' at {} ({} bytes) overlaps another mapping or the end of memory; not mapped",
            entry.name_str(),
            Addr(entry.addr),
            entry.size
        ));
        return false;
    };
    table.insert(Entry {
        host_base: entry.addr,
        host_begin: entry.addr,
        host_end: end,
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
    kernels: RwLock<omptarget_plugin::addr_map::AddrMap<usize, Kernel>>,
    pub(crate) table: Mutex<MappingTable>,
    /// Device allocations of entries that left the table while other constructs' queued work
    /// still used them: (allocation, constructs still to synchronise). The last of those
    /// frees it (see `AsyncInfo::end_marks`).
    pub(crate) zombies: Mutex<Vec<(usize, u32)>>,
    queues: Mutex<Vec<QueueId>>,
    events: Mutex<Vec<EventId>>,
    /// Size-class cache for backends that cannot order allocation on a queue.
    memory_manager: OnceLock<Option<MemoryManager>>,
    mm_threshold: usize,
    /// Blocks `omp_target_alloc` handed out and not yet freed: a free of anything else (a
    /// second free, above all) is refused instead of corrupting the allocator.
    pub(crate) api_blocks: Mutex<std::collections::HashSet<DevicePtr>>,
    /// Record and replay (`record.rs`), once begun.
    pub(crate) record: OnceLock<crate::record::RecordReplay>,
    /// The device's OpenMP 6.0 unique identifier, made on first request.
    uid: OnceLock<std::ffi::CString>,
}

/// What record/replay saves of the image a kernel came from.
pub(crate) struct KernelImage {
    pub bytes: Vec<u8>,
    /// The image's globals: symbol name, device address, size.
    pub globals: Vec<(String, DevicePtr, usize)>,
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
            kernels: RwLock::new(omptarget_plugin::addr_map::addr_map()),
            table: Mutex::new(MappingTable::new()),
            zombies: Mutex::new(Vec::new()),
            queues: Mutex::new(Vec::new()),
            events: Mutex::new(Vec::new()),
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

    /// Loads the binaries of `binaries` (the registry at `generation`) that are not loaded
    /// here yet.
    ///
    /// No lock is held while an image is loaded, its symbols looked up or its constructors
    /// run (`dlopen`, `dlsym` and constructors take the dynamic loader's lock, which a thread
    /// registering a library holds while it waits for the registry): one thread loads at a
    /// time, and other threads that need this device wait for it on a condition variable
    /// holding nothing.
    pub(crate) fn ensure_loaded(
        &self,
        binaries: &[Arc<Binary>],
        generation: u64,
        num_devices: usize,
        info: u32,
        unified_shared_memory: bool,
    ) -> Result<Vec<(usize, usize, usize)>> {
        if self.loaded_generation() >= generation {
            return Ok(Vec::new());
        }
        self.load_missing(
            binaries,
            Some(generation),
            num_devices,
            info,
            unified_shared_memory,
        )
    }

    /// Loads those of `binaries` (some of the registry's) that are not loaded here yet,
    /// leaving the loaded generation alone: others may still be pending. Returns what
    /// [`Device::ensure_loaded`] returns.
    pub(crate) fn load_some(
        &self,
        binaries: &[Arc<Binary>],
        num_devices: usize,
        info: u32,
        unified_shared_memory: bool,
    ) -> Result<Vec<(usize, usize, usize)>> {
        self.load_missing(binaries, None, num_devices, info, unified_shared_memory)
    }

    /// The loading of [`Device::ensure_loaded`]; with `generation`, it is skipped when that
    /// generation is loaded already, and recorded as loaded at the end.
    fn load_missing(
        &self,
        binaries: &[Arc<Binary>],
        generation: Option<u64>,
        num_devices: usize,
        info: u32,
        unified_shared_memory: bool,
    ) -> Result<Vec<(usize, usize, usize)>> {
        let mut images = Vec::new();
        let backend = self.backend()?;
        let todo: Vec<Arc<Binary>> = {
            let mut loads = lock(&self.loads);
            while loads.busy {
                loads = self
                    .loads_done
                    .wait(loads)
                    .unwrap_or_else(|e| e.into_inner());
            }
            if generation.is_some_and(|g| self.loaded_generation() >= g) {
                return Ok(images);
            }
            loads.busy = true;
            binaries
                .iter()
                .filter(|b| !loads.records.iter().any(|r| r.key == b.key))
                .cloned()
                .collect()
        };
        // Clears `busy` and wakes the waiters however this ends.
        let _loading = LoadingGuard(self);
        for binary in todo {
            let Some(loaded) =
                self.load_binary(backend, &binary, num_devices, info, unified_shared_memory)?
            else {
                continue;
            };
            let image = loaded.image;
            if self.install(backend, &binary, loaded) {
                images.extend(image.map(|(addr, len)| (binary.key, addr, len)));
            }
        }
        if let Some(generation) = generation {
            self.loaded_generation
                .fetch_max(generation, Ordering::AcqRel);
        }
        Ok(images)
    }

    /// Loads `binary` on the backend, looks up its symbols and runs its constructors, with no
    /// lock held. `None`: it was unregistered before we could read it.
    fn load_binary(
        &self,
        backend: &dyn Backend,
        binary: &Binary,
        num_devices: usize,
        info: u32,
        unified_shared_memory: bool,
    ) -> Result<Option<LoadedBinary>> {
        // What the load reads of the binary is copied while it is registered: a library's
        // bytes go away as soon as its unregistration returns.
        let Some(copy) = binary.while_registered(|b| ImageCopy::of(b, self.plugin.as_ref())) else {
            return Ok(None);
        };
        let mut loaded = LoadedBinary {
            key: binary.key,
            module: None,
            image: None,
            kernels: Vec::new(),
            globals: Vec::new(),
            dtors: Vec::new(),
        };
        let Some(image) = &copy.image else {
            return Ok(Some(loaded));
        };
        let module = backend
            .load(
                &ImageInfo {
                    bytes: &image.bytes,
                    triple: image.triple.as_deref(),
                    arch: image.arch.as_deref(),
                },
                &LoadEnv {
                    device_num: self.id as u32,
                    num_devices: num_devices as u32,
                },
            )
            .on(self.id, "loading the device image")?;
        loaded.module = Some(module);
        loaded.image = Some((image.host_addr, image.bytes.len()));
        let mut ctors = Vec::new();
        let mut indirect_calls = IndirectCallTable::default();
        let looked_up = (|| {
            for (entry, name) in &copy.entries {
                if entry.flags & entry_flags::REQUIRES != 0 {
                    continue;
                }
                if entry.is_kernel() {
                    let kernel = backend
                        .kernel(module, name)
                        .on(self.id, "looking up a kernel")?;
                    if entry.flags & entry_flags::CTOR != 0 {
                        ctors.push(kernel);
                    } else if entry.flags & entry_flags::DTOR != 0 {
                        loaded.dtors.push(kernel);
                    }
                    // The oldest KernelArgs version whose calling convention it has.
                    let min_args_version = match backend.takes_launch_environment(module, name) {
                        Some(true) => 3,
                        _ => 0,
                    };
                    loaded.kernels.push((
                        *entry,
                        Kernel {
                            id: kernel,
                            // Named at installation: the binary's own names may be read
                            // only while it is registered.
                            name: "",
                            min_args_version,
                        },
                    ));
                } else if entry.flags & entry_flags::INDIRECT_VTABLE != 0 {
                    indirect::check_vtable(entry.addr, entry.size, name)?;
                    // A vtable (LLVM 22): every slot of the host vtable translates to the same
                    // slot of the device vtable, whose address the device symbol holds, for
                    // device code that looks the table up (a GPU's). As LLVM 22 does, the host
                    // vtable's mapping is the host vtable itself: device code translates
                    // through the table, not through the mapping.
                    if backend.uses_indirect_call_table() {
                        let device_vtable = indirect::device_function(
                            backend,
                            self.id,
                            module,
                            name,
                            &|host, size| self.nearest_name(&loaded.globals, host, size),
                            info,
                        )?;
                        for slot in (0..entry.size).step_by(std::mem::size_of::<usize>()) {
                            indirect_calls.push(entry.addr + slot, device_vtable + slot);
                        }
                    }
                    loaded.globals.push((*entry, entry.addr));
                } else if entry.flags & entry_flags::INDIRECT != 0 {
                    // An indirect function: its host address maps to the device function.
                    let function = indirect::device_function(
                        backend,
                        self.id,
                        module,
                        name,
                        &|host, size| self.nearest_name(&loaded.globals, host, size),
                        info,
                    )?;
                    indirect_calls.push(entry.addr, function);
                    loaded.globals.push((*entry, function));
                } else if entry.size > 0 {
                    // A global, or a `declare target link` reference pointer (the device copy
                    // of the pointer is attached when the variable is mapped, like any
                    // PTR_AND_OBJ).
                    match backend.global(module, name) {
                        Ok((addr, _)) => {
                            if unified_shared_memory {
                                // Under unified shared memory clang makes every
                                // declare-target variable a reference pointer: the device's
                                // must hold the host variable's address, which the host's
                                // holds (requires.rs).
                                backend
                                    .copy(
                                        CopyKind::HostToDevice,
                                        addr,
                                        entry.addr,
                                        entry.size,
                                        None,
                                    )
                                    .on(self.id, "writing a global for unified shared memory")?;
                            }
                            loaded.globals.push((*entry, addr))
                        }
                        // Mapped already by another image (weak symbols): the first wins.
                        Err(_) if lock(&self.table).lookup(entry.addr, entry.size).contained => {}
                        Err(e) => return Err(e).on(self.id, "looking up a global"),
                    }
                }
            }
            backend
                .publish_indirect_calls(module, &std::mem::take(&mut indirect_calls).into_sorted())
                .on(self.id, "publishing the indirect-call table")?;
            // Constructors run before anyone can use the image (waiters wait for us).
            for &ctor in &ctors {
                self.run_constructor(backend, ctor)?;
            }
            Ok(())
        })();
        if let Err(e) = looked_up {
            // Nothing of the image stays: its module (and the globals inside it) goes.
            let _ = backend.unload(module);
            return Err(e);
        }
        Ok(Some(loaded))
    }

    /// Makes a loaded binary's kernels and globals visible, unless it was unregistered while
    /// it loaded: then its image is unloaded again. Unregistration marks the binary before it
    /// looks for it here, and we check under the same lock it looks under, so the binary is
    /// either found and removed by it or never installed.
    fn install(&self, backend: &dyn Backend, binary: &Binary, loaded: LoadedBinary) -> bool {
        let mut loads = lock(&self.loads);
        if !binary.is_registered() {
            drop(loads);
            self.discard(backend, loaded);
            return false;
        }
        let mut record = LoadedBinary {
            key: loaded.key,
            module: loaded.module,
            image: loaded.image,
            kernels: Vec::new(),
            globals: Vec::new(),
            dtors: loaded.dtors,
        };
        {
            let mut kernels = self.kernels.write().unwrap_or_else(|e| e.into_inner());
            for (entry, mut kernel) in loaded.kernels {
                kernel.name = entry.name_str();
                kernels.insert(entry.addr, kernel);
                record.kernels.push((entry, kernel));
            }
        }
        {
            let mut table = lock(&self.table);
            for (entry, addr) in loaded.globals {
                if map_global(&mut table, &entry, addr) {
                    record.globals.push((entry, addr));
                }
            }
        }
        loads.records.push(record);
        true
    }

    /// The name LLVM's `INFO` line gives a transfer at `[host, host + size)` while an image
    /// loads: the table's entry nearest to it, counting the image's globals found so far (LLVM
    /// inserts them as it goes; we install them at the end).
    fn nearest_name(
        &self,
        found: &[(OffloadEntry, DevicePtr)],
        host: usize,
        size: usize,
    ) -> Option<&'static std::ffi::CStr> {
        let table = lock(&self.table);
        let mut intervals: Vec<(usize, usize, Option<&'static std::ffi::CStr>)> = table
            .iter()
            .map(|e| (e.host_begin, e.host_end, e.name))
            .collect();
        drop(table);
        intervals.extend(
            found
                .iter()
                .map(|(e, _)| (e.addr, e.addr + e.size, Some(e.name))),
        );
        intervals.sort_by_key(|i| i.0);
        indirect::nearest_name(&intervals, host, size)
    }

    /// Runs a loaded binary's destructors and unloads its image (no lock held).
    fn discard(&self, backend: &dyn Backend, loaded: LoadedBinary) {
        for dtor in &loaded.dtors {
            let _ = self.run_constructor(backend, *dtor);
        }
        if let Some(module) = loaded.module {
            let _ = backend.unload(module);
        }
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

    /// Removes what binary `key` put here: its kernels, its globals' mappings, then runs its
    /// destructors and unloads its image with no lock held.
    /// Returns whether an image was unloaded.
    pub(crate) fn unload_binary(&self, key: usize) -> bool {
        let Some(record) = ({
            let mut loads = lock(&self.loads);
            loads
                .records
                .iter()
                .position(|l| l.key == key)
                .map(|i| loads.records.remove(i))
        }) else {
            return false;
        };
        let Ok(backend) = self.backend() else {
            return false;
        };
        {
            let mut kernels = self.kernels.write().unwrap_or_else(|e| e.into_inner());
            for (entry, _) in &record.kernels {
                kernels.remove(&entry.addr);
            }
        }
        {
            let mut table = lock(&self.table);
            for (entry, _) in &record.globals {
                table.remove(entry.addr);
            }
        }
        let had_image = record.module.is_some();
        self.discard(backend, record);
        had_image
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

    /// The image (its bytes, copied from the program) and the globals of the binary whose
    /// kernel has host region id `host_ptr`, for record/replay.
    pub(crate) fn kernel_image(&self, host_ptr: usize) -> Option<KernelImage> {
        let loads = lock(&self.loads);
        let record = loads
            .records
            .iter()
            .find(|r| r.kernels.iter().any(|(e, _)| e.addr == host_ptr))?;
        let (addr, len) = record.image?;
        // SAFETY: the image lies in the program's memory while its binary is registered,
        // which it is while one of its kernels runs (unregistration removes the record under
        // this lock first).
        let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) }.to_vec();
        let globals = record
            .globals
            .iter()
            .filter(|(e, _)| e.size > 0 && e.flags & entry_flags::INDIRECT == 0)
            .map(|(e, a)| (e.name_str().to_owned(), *a, e.size))
            .collect();
        Some(KernelImage { bytes, globals })
    }

    /// The device kernel of host region id `host_ptr`.
    pub(crate) fn kernel(&self, host_ptr: usize) -> Option<Kernel> {
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

/// Inspection for tests, fuzzing and fault injection (cheap, never on a construct's path).
impl Device {
    /// A copy of every mapping entry, in host address order.
    pub fn mappings(&self) -> Vec<Entry> {
        lock(&self.table).iter().cloned().collect()
    }

    /// Checks the mapping table's invariants ([`MappingTable::check_invariants`]).
    pub fn check_table(&self) -> std::result::Result<(), String> {
        lock(&self.table).check_invariants()
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
        lock(&self.zombies).len()
    }
}
