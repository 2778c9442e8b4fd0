//! The device's image table: loading a registry's binaries onto the device (one thread at a
//! time, no lock held across the loader), the kernels and globals they install, and their
//! unloading.

use super::{Device, lock};
use crate::error::{DeviceContext, Result};
use crate::image::{Binary, OffloadEntry, entry_flags};
use crate::indirect::{self, IndirectCallTable};
use crate::mapping::{Entry, MappingTable, RefCount};
use crate::message::{Addr, report};
use omptarget_plugin::{
    CopyKind, Device as Backend, DevicePtr, ImageInfo, KernelId, LaunchConfig, LoadEnv, ModuleId,
    Plugin,
};
use std::sync::Arc;
use std::sync::atomic::Ordering;

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
pub(super) struct Loads {
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
        shadows: Default::default(),
        pending: None,
        users: 0,
    });
    true
}

/// What record/replay saves of the image a kernel came from.
pub(crate) struct KernelImage {
    pub bytes: Vec<u8>,
    /// The image's globals: symbol name, device address, size.
    pub globals: Vec<(String, DevicePtr, usize)>,
}

impl Device {
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
                        let device_vtable =
                            self.indirect_target(backend, module, name, &loaded.globals, info)?;
                        for slot in (0..entry.size).step_by(std::mem::size_of::<usize>()) {
                            indirect_calls.push(entry.addr + slot, device_vtable + slot);
                        }
                    }
                    loaded.globals.push((*entry, entry.addr));
                } else if entry.flags & entry_flags::INDIRECT != 0 {
                    // An indirect function: its host address maps to the device function.
                    let function =
                        self.indirect_target(backend, module, name, &loaded.globals, info)?;
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
                        Err(_) if self.table.lock().lookup(entry.addr, entry.size).contained => {}
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
            let mut table = self.table.lock();
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
        let table = self.table.lock();
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

    /// The device address the device global `name` of an indirect entry holds, read with
    /// LLVM's INFO line named after the table entry nearest to it (`found`: the image's
    /// globals so far).
    fn indirect_target(
        &self,
        backend: &dyn Backend,
        module: ModuleId,
        name: &str,
        found: &[(OffloadEntry, DevicePtr)],
        info: u32,
    ) -> Result<usize> {
        indirect::device_function(
            backend,
            self.id,
            module,
            name,
            &|host, size| self.nearest_name(found, host, size),
            info,
        )
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
    /// destructors and unloads its image with no lock held. With `keep_code` (the program's
    /// own binary at exit) its kernels stay and its image stays loaded: a `target nowait`
    /// task the program issued before it exited may start only now, on a helper thread, and
    /// it runs on the device as issued; the process ends soon after.
    /// Returns whether an image was unloaded.
    pub(crate) fn unload_binary(&self, key: usize, keep_code: bool) -> bool {
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
        if !keep_code {
            let mut kernels = self.kernels.write().unwrap_or_else(|e| e.into_inner());
            for (entry, _) in &record.kernels {
                kernels.remove(&entry.addr);
            }
        }
        {
            let mut table = self.table.lock();
            for (entry, _) in &record.globals {
                table.remove(entry.addr);
            }
        }
        let had_image = record.module.is_some();
        if keep_code {
            for dtor in &record.dtors {
                let _ = self.run_constructor(backend, *dtor);
            }
            // The module stays loaded for the rest of the process (see above).
            std::mem::forget(record);
        } else {
            self.discard(backend, record);
        }
        had_image
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
}
