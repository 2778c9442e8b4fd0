//! The one `Runtime` value: plugins, registered binaries, devices, offload policy.

mod constructs;
mod exit;
pub use exit::{ConstructScope, current_construct, push_tripcount};
mod hooks;
mod interop;
mod parked;
mod record;

use crate::config::Config;
use crate::device::{Device, lock};
use crate::error::{Error, Result};
use crate::image::{Abi, Binary, DeviceImage, OffloadEntry, entry_flags};
use crate::message::{fatal, report};
use crate::requires::Requirements;
use omptarget_plugin::{ImageInfo, Plugin};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// What the runtime needs from the host OpenMP runtime (libomp). The C boundary implements it
/// with libomp's symbols; tests supply their own.
pub trait HostRuntime: Send + Sync {
    /// `omp_get_default_device()`.
    fn default_device(&self) -> i32;
    /// `__kmpc_get_target_offload()`: 0 disabled, 1 default, 2 mandatory.
    fn target_offload(&self) -> i32;
}

/// A host runtime without libomp: default device 0, default offload policy.
#[derive(Debug, Default)]
pub struct NoHostRuntime;

impl HostRuntime for NoHostRuntime {
    fn default_device(&self) -> i32 {
        0
    }
    fn target_offload(&self) -> i32 {
        1
    }
}

/// `OMP_TARGET_OFFLOAD`, resolved: LLVM treats `DEFAULT` as mandatory once any device exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Disabled,
    Mandatory,
}

/// Registered binaries; every change bumps the generation so devices load what is new.
#[derive(Default)]
struct Registry {
    binaries: Vec<Arc<Binary>>,
}

pub struct Runtime {
    pub config: Config,
    host: Box<dyn HostRuntime>,
    plugins: Vec<Arc<dyn Plugin>>,
    /// Whether each plugin has contributed its devices (a compatible image was registered).
    plugin_used: Mutex<Vec<bool>>,
    registry: RwLock<Registry>,
    generation: AtomicU64,
    /// Read-locked by every construct (readers write the lock's state word): on lines of its
    /// own, away from the configuration and generation every construct reads.
    devices: omptarget_plugin::contention::Padded<RwLock<Vec<Arc<Device>>>>,
    policy: OnceLock<Policy>,
    pub(crate) requirements: Requirements,
    /// `LIBOMPTARGET_INFO`, changeable by `__tgt_set_info_flag`.
    info: AtomicU32,
    /// Tool subscribers (OMPT) and their events.
    pub tools: Arc<crate::tools::Tools>,
    /// Host memory `omp_target_alloc` gave out for the initial device (see `target_free`).
    pub(crate) host_blocks: Mutex<std::collections::HashSet<usize>>,
    /// Interop objects the program holds (their `Arc` addresses; see `interop.rs`).
    pub(crate) interops: Mutex<std::collections::HashSet<usize>>,
    /// Runtime-owned interop objects (LLVM 22's implicit ones, `crate::interop`).
    pub(crate) implicit_interops: Mutex<Vec<crate::interop::ImplicitInterop>>,
    /// The ABI of code that registered nothing the runtime can attribute it to (the process's
    /// own `omp_*` calls): the one of the library name the program loaded us under.
    process_abi: Abi,
    /// Whether a binary of LLVM 22's ABI was ever registered (one load on paths that differ).
    llvm22_registered: AtomicBool,
    /// libomp's `OMP_TARGET_OFFLOAD` said DISABLED when the first plugin was used.
    offload_disabled: OnceLock<bool>,
    /// Constructs running now, and whether the program is exiting (`exit.rs`).
    in_flight: exit::InFlight,
    /// Constructs that returned before their work completed (`parked.rs`).
    parked: parked::Parked,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field(
                "plugins",
                &self.plugins.iter().map(|p| p.name()).collect::<Vec<_>>(),
            )
            .field("devices", &self.num_devices())
            .finish()
    }
}

impl Runtime {
    pub fn new(config: Config, plugins: Vec<Arc<dyn Plugin>>, host: Box<dyn HostRuntime>) -> Self {
        let n = plugins.len();
        // OMPTARGET_RS_PROFILE=1: read now, so that the table of locks found held is printed at
        // exit whatever the backend (omptarget_plugin::contention).
        omptarget_plugin::contention::profile::enabled();
        let tools: Arc<crate::tools::Tools> = Arc::default();
        if let Some(path) = &config.profile {
            // LIBOMPTARGET_PROFILE: the profiler listens from the start (devices included).
            tools.subscribe(Arc::new(crate::tools::profile::Profiler::new(
                path.clone(),
                config.profile_summary.clone(),
                config.profile_granularity_us,
            )));
        }
        Self {
            host,
            plugins,
            plugin_used: Mutex::new(vec![false; n]),
            registry: RwLock::new(Registry::default()),
            generation: AtomicU64::new(1),
            devices: omptarget_plugin::contention::Padded(RwLock::new(Vec::new())),
            policy: OnceLock::new(),
            requirements: Requirements::default(),
            info: AtomicU32::new(config.info),
            tools,
            host_blocks: Mutex::new(std::collections::HashSet::new()),
            interops: Mutex::new(std::collections::HashSet::new()),
            implicit_interops: Mutex::new(Vec::new()),
            process_abi: Abi::Llvm19,
            llvm22_registered: AtomicBool::new(false),
            offload_disabled: OnceLock::new(),
            in_flight: exit::InFlight::default(),
            parked: parked::Parked::default(),
            config,
        }
    }

    /// Sets the ABI of calls no registered binary accounts for (see [`Runtime::abi_at`]).
    pub fn with_process_abi(mut self, abi: Abi) -> Self {
        self.process_abi = abi;
        self
    }

    /// The ABI of the code at `addr` (an `ident_t`, a kernel's host region id): that of the
    /// registered binary whose program or library holds it, else the process's. Cold paths
    /// only (messages, traces): it reads the registry.
    pub fn abi_at(&self, addr: usize) -> Abi {
        if addr != 0 {
            let registry = self.registry.read().unwrap_or_else(|e| e.into_inner());
            if let Some(b) = registry
                .binaries
                .iter()
                .find(|b| b.object.contains(&addr) || b.entries.iter().any(|e| e.addr == addr))
            {
                return b.abi;
            }
        }
        self.process_abi
    }

    /// The ABI of calls made outside any construct (`omp_*` routines).
    pub fn process_abi(&self) -> Abi {
        self.process_abi
    }

    /// The `LIBOMPTARGET_INFO` bits in force.
    pub fn info_level(&self) -> u32 {
        self.info.load(Ordering::Relaxed)
    }

    /// `__tgt_set_info_flag`.
    pub fn set_info_level(&self, level: u32) {
        self.info.store(level, Ordering::Relaxed);
    }

    /// The AsyncInfo of a construct on `dev`.
    pub fn async_info(&self, dev: &Arc<Device>) -> crate::ops::AsyncInfo {
        let tool = if self.tools.active() {
            self.tool_ctx(dev)
        } else {
            None
        };
        if self.has_parked() {
            return self.async_info_adopting(dev, tool);
        }
        // Built in place, as the tail expression (an AsyncInfo is large: the hot path does
        // not move it).
        crate::ops::AsyncInfo::with_tool(dev, self.info_level(), self.config.map_force_atomic, tool)
    }

    /// [`Runtime::async_info`] while constructs are parked (`parked.rs`): this thread's on
    /// `dev` is taken over, other threads' there are completed first.
    #[cold]
    #[inline(never)]
    fn async_info_adopting(
        &self,
        dev: &Arc<Device>,
        tool: Option<Box<crate::tools::ToolCtx>>,
    ) -> crate::ops::AsyncInfo {
        let mut ai = crate::ops::AsyncInfo::with_tool(
            dev,
            self.info_level(),
            self.config.map_force_atomic,
            tool,
        );
        if let Some(parked) = self.parked_for_construct(dev.id) {
            ai.adopt(parked);
        }
        ai
    }

    /// 0x04: every device's table after a construct.
    pub fn dump_tables_after(&self, loc: &crate::trace::SourceLoc) {
        if self.info_level() & crate::config::info::DUMP_TABLE == 0 {
            return;
        }
        for d in self.devices() {
            d.dump_table(loc, false);
        }
    }

    pub fn plugins(&self) -> &[Arc<dyn Plugin>] {
        &self.plugins
    }

    /// Registers a binary of LLVM 19's ABI from no known object (tests).
    pub fn register(&self, key: usize, raw_images: &[&'static [u8]], entries: Vec<OffloadEntry>) {
        self.register_binary(key, raw_images, entries, Abi::Llvm19, 0..0);
    }

    /// Registers a binary (`__tgt_register_lib`) of ABI `abi`, from the program or library
    /// loaded at `object`. Images that no plugin accepts, and corrupt OffloadBinaries, are
    /// reported and skipped; the binary's other images still count.
    pub fn register_binary(
        &self,
        key: usize,
        raw_images: &[&'static [u8]],
        entries: Vec<OffloadEntry>,
        abi: Abi,
        object: std::ops::Range<usize>,
    ) {
        let mut images: Vec<DeviceImage<'static>> = Vec::new();
        for (i, raw) in raw_images.iter().enumerate() {
            match crate::image::unwrap_image(raw) {
                Ok(found) => images.extend(found),
                Err(e) => report(format_args!("skipping device image {i}: {e}")),
            }
        }
        // As LLVM 19: a requires record is an entry whose flags are exactly 0x10.
        for e in &entries {
            if e.flags == entry_flags::REQUIRES {
                self.requirements.add(e.data);
            }
        }
        // Registration runs in a library's constructor, under the dynamic loader's lock, while
        // other threads may be loading images (dlopen) or running constructs: it holds the
        // registry lock only to record the binary, and never waits for device work.
        if self.is_registered(key) {
            return;
        }
        // No device compiles bitcode (a program built with -fopenmp-target-jit): say so, where
        // LLVM 19 would try its JIT, instead of silently having no device.
        images.retain(|i| {
            if crate::image::is_bitcode(i.bytes) {
                crate::message::message(format_args!(
                    "a device image of this program is LLVM bitcode (built with -fopenmp-target-jit?); this runtime compiles no bitcode, so no device runs it: its target regions run on the host unless offloading is mandatory"
                ));
                return false;
            }
            true
        });
        // An image some plugin recognises but cannot run deserves a word (another GPU arch).
        for i in &images {
            let info = ImageInfo {
                bytes: i.bytes,
                triple: i.triple,
                arch: i.arch,
            };
            if !self.plugins.iter().any(|p| p.is_compatible(&info)) {
                for why in self.plugins.iter().filter_map(|p| p.incompatibility(&info)) {
                    crate::message::message(format_args!("{why}"));
                }
            }
        }
        // Plugins with a compatible image contribute their devices, in registration order;
        // none do when offloading is disabled (see `offload_disabled`).
        let mut new_devices = Vec::new();
        for (p, plugin) in self
            .plugins
            .iter()
            .enumerate()
            .filter(|_| !self.offload_disabled())
        {
            let compatible = images.iter().any(|i| {
                plugin.is_compatible(&ImageInfo {
                    bytes: i.bytes,
                    triple: i.triple,
                    arch: i.arch,
                })
            });
            if compatible {
                new_devices.extend(self.use_plugin(p));
            }
        }
        let mut registry = self.registry.write().unwrap_or_else(|e| e.into_inner());
        if registry.binaries.iter().any(|b| b.key == key) {
            return;
        }
        registry.binaries.push(Arc::new(
            Binary::new(key, images, entries).from_object(abi, object),
        ));
        if abi == Abi::Llvm22 {
            self.llvm22_registered.store(true, Ordering::Release);
        }
        self.generation.fetch_add(1, Ordering::AcqRel);
        drop(registry);
        self.requirements.enforce(&self.devices());
        // Tools hear of new devices with no runtime lock held (a tool may call back into us).
        self.tools_devices_registered(&new_devices);
    }

    /// `OMP_TARGET_OFFLOAD=DISABLED` (read through libomp once, at the first registration).
    /// OpenMP 5.2 §21.2.8: the behaviour is then "as if the only device is the host device",
    /// so no plugin contributes devices and `omp_get_num_devices()` is 0, as LLVM 22 does. LLVM
    /// 19 still counted the plugins' devices (docs/DIVERGENCES.md).
    fn offload_disabled(&self) -> bool {
        *self
            .offload_disabled
            .get_or_init(|| self.host.target_offload() == 0)
    }

    fn is_registered(&self, key: usize) -> bool {
        let registry = self.registry.read().unwrap_or_else(|e| e.into_inner());
        registry.binaries.iter().any(|b| b.key == key)
    }

    /// Adds plugin `p`'s devices (once); returns the devices added.
    fn use_plugin(&self, p: usize) -> Vec<Arc<Device>> {
        {
            let mut used = lock(&self.plugin_used);
            if used[p] {
                return Vec::new();
            }
            used[p] = true;
        }
        // The devices are initialised with no lock held (driver calls may block or load
        // libraries), then numbered under the device list's lock.
        let plugin = &self.plugins[p];
        let mut ready = Vec::new();
        for local in 0..plugin.number_of_devices() {
            let device = Device::new(0, plugin.clone(), local, &self.config);
            // Initialise now, as LLVM does at registration: context creation stays out of
            // the program's first construct. A failure is reported when the device is used.
            if device.backend().is_ok() {
                device.prefill_queues(self.config.num_initial_streams);
                if self.config.record {
                    device.start_recording(&self.config, self.info_level());
                }
            }
            ready.push(device);
        }
        let mut devices = self.devices.write().unwrap_or_else(|e| e.into_inner());
        let first = devices.len();
        for mut device in ready {
            device.id = devices.len();
            devices.push(Arc::new(device));
        }
        devices[first..].to_vec()
    }

    /// Unregisters a binary (`__tgt_unregister_lib`): its images leave every device, and when
    /// it was the last binary every device's remaining memory is released.
    ///
    /// It runs from a library's `dlclose`, under the dynamic loader's lock: it waits for no
    /// device work. A device loading this binary right now finds it unregistered when it
    /// would install it, and unloads its copy itself.
    pub fn unregister(&self, key: usize) {
        self.unregister_binary(key, false);
    }

    /// [`Runtime::unregister`] of the program's own binary at exit (after
    /// [`Runtime::begin_exit`]): as any other, except that its kernels stay loaded, so that a
    /// `target nowait` region the program issued before it exited, which libomp's helper
    /// threads may start only now, still runs on the device.
    pub fn unregister_at_exit(&self, key: usize) {
        self.unregister_binary(key, true);
    }

    fn unregister_binary(&self, key: usize, keep_code: bool) {
        let mut registry = self.registry.write().unwrap_or_else(|e| e.into_inner());
        let Some(pos) = registry.binaries.iter().position(|b| b.key == key) else {
            return;
        };
        let binary = registry.binaries.remove(pos);
        let last = registry.binaries.is_empty();
        self.generation.fetch_add(1, Ordering::AcqRel);
        drop(registry);
        if last {
            // Parked constructs' work completes before the memory it uses is released.
            let _ = self.complete_parked(None);
        }
        // After this, no loader reads the binary's bytes (the library may be unmapped once
        // we return), and none installs it on a device.
        binary.retire();
        if last && self.info_level() & crate::config::info::DUMP_TABLE != 0 {
            // LLVM dumps each device's table as it tears the devices down, last first.
            for device in self.devices().iter().rev() {
                device.dump_table(&crate::trace::SourceLoc::RUNTIME, false);
            }
        }
        for device in self.devices() {
            if device.unload_binary(key, keep_code) {
                self.tools_image_unloaded(&device, key);
            }
            if last {
                device.release_all_memory();
            }
        }
        if last {
            self.tools_devices_finalized();
        }
    }

    /// The requires flags in force (`#pragma omp requires`, see `requires.rs`).
    pub fn requires(&self) -> u64 {
        self.requirements.get()
    }

    /// The requirements registered so far.
    pub fn requirements(&self) -> &Requirements {
        &self.requirements
    }

    /// Under `unified_shared_memory`, the first device that cannot use host addresses as
    /// they are, with the backend's reason ([`Requirements::unmet`]).
    pub fn unified_shared_memory_unmet(&self) -> Option<(usize, String)> {
        self.requirements.unmet(&self.devices())
    }

    /// Every device (a snapshot).
    pub fn devices(&self) -> Vec<Arc<Device>> {
        self.devices
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// `omp_get_num_devices()`.
    pub fn num_devices(&self) -> usize {
        self.devices.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// `omp_get_initial_device()`: the host, numbered after every device.
    pub fn initial_device(&self) -> i64 {
        self.num_devices() as i64
    }

    /// `omp_get_default_device()` from libomp.
    pub fn default_device(&self) -> i64 {
        i64::from(self.host.default_device())
    }

    /// The offload policy, fixed on first use (as LLVM does).
    pub fn policy(&self) -> Policy {
        if let Some(p) = self.policy.get() {
            return *p;
        }
        // libomp is asked with no lock held (a OnceLock initialiser would make other threads
        // wait on libomp); if two threads ask at once, the first answer stays.
        let p = match self.host.target_offload() {
            0 => Policy::Disabled,
            2 => Policy::Mandatory,
            _ if self.num_devices() > 0 => Policy::Mandatory,
            _ => Policy::Disabled,
        };
        *self.policy.get_or_init(|| p)
    }

    /// Resolves `device_id` (−1 = default) to a device whose images are loaded, or says the
    /// construct must run on the host (`Ok(None)`).
    pub fn device_for_construct(&self, device_id: i64) -> Result<Option<Arc<Device>>> {
        let id = if device_id == -1 {
            self.default_device()
        } else {
            device_id
        };
        if self.policy() == Policy::Disabled {
            return Ok(None);
        }
        // One look at the device list: the initial device (numbered after the last device)
        // means the host; any other unknown number is an error.
        match self.device_unloaded(id) {
            Ok(device) => {
                self.load_images(&device)?;
                Ok(Some(device))
            }
            Err(Error::InvalidDevice { count, .. }) if count > 0 && id == count as i64 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Device `id` with every registered binary loaded on it.
    pub fn device(&self, id: i64) -> Result<Arc<Device>> {
        let device = self.device_unloaded(id)?;
        self.load_images(&device)?;
        Ok(device)
    }

    /// Loads the binaries registered since `device` last loaded (one atomic load when none).
    /// The registry lock is held only to take a snapshot: loading calls `dlopen` (or the
    /// driver), and registration, under the dynamic loader's lock, needs the registry.
    fn load_images(&self, device: &Device) -> Result<()> {
        if device.loaded_generation_is(self.generation.load(Ordering::Acquire)) {
            return Ok(());
        }
        let (binaries, generation) = {
            let registry = self.registry.read().unwrap_or_else(|e| e.into_inner());
            (
                registry.binaries.clone(),
                self.generation.load(Ordering::Acquire),
            )
        };
        let loaded = device.ensure_loaded(
            &binaries,
            generation,
            self.num_devices(),
            self.info_level(),
            self.requirements.unified_shared_memory(),
        )?;
        self.tools_images_loaded(device, &loaded);
        Ok(())
    }

    /// [`Runtime::device_for_api`] for the routines that work on device memory by address
    /// (`omp_target_memcpy`, `omp_target_free`, ...): what constructs parked on the device
    /// queued completes first (`parked.rs`).
    pub fn device_by_address(&self, id: i64) -> Result<Arc<Device>> {
        let device = self.device_for_api(id)?;
        let _ = self.complete_parked(Some(device.id));
        Ok(device)
    }

    /// The device of an `omp_*` routine. LLVM 22's runtime loads a device's pending images
    /// whenever anything uses the device (its `getDevice`), LLVM 19's only for constructs: so
    /// binaries of LLVM 22's ABI are loaded here, LLVM 19's stay pending (one atomic load when
    /// no LLVM 22 binary was ever registered). As for constructs, the registry lock is held
    /// only to take a snapshot.
    pub fn device_for_api(&self, id: i64) -> Result<Arc<Device>> {
        let device = self.device_unloaded(id)?;
        if self.llvm22_registered.load(Ordering::Acquire)
            && !device.loaded_generation_is(self.generation.load(Ordering::Acquire))
        {
            let binaries: Vec<Arc<Binary>> = {
                let registry = self.registry.read().unwrap_or_else(|e| e.into_inner());
                registry
                    .binaries
                    .iter()
                    .filter(|b| b.abi == Abi::Llvm22)
                    .cloned()
                    .collect()
            };
            let loaded = device.load_some(
                &binaries,
                self.num_devices(),
                self.info_level(),
                self.requirements.unified_shared_memory(),
            )?;
            self.tools_images_loaded(&device, &loaded);
        }
        Ok(device)
    }

    /// The device without loading images.
    pub fn device_unloaded(&self, id: i64) -> Result<Arc<Device>> {
        let devices = self.devices.read().unwrap_or_else(|e| e.into_inner());
        usize::try_from(id)
            .ok()
            .and_then(|i| devices.get(i).cloned())
            .ok_or(Error::InvalidDevice {
                id,
                count: devices.len(),
            })
    }

    /// Reports a construct's failure the way LLVM does (its `handleTargetOutcome`): fatal under
    /// a mandatory policy, after the tables of every device (`LIBOMPTARGET_INFO` 0x04, at the
    /// construct's location) or a pointer to the debugging options.
    pub fn handle_outcome(&self, ok: bool, loc: &crate::trace::SourceLoc) {
        if ok || self.policy() != Policy::Mandatory {
            return;
        }
        if self.info_level() & crate::config::info::DUMP_TABLE != 0 {
            for d in self.devices() {
                d.dump_table(loc, false);
            }
        } else {
            report(format_args!(
                "Consult https://openmp.llvm.org/design/Runtimes.html for debugging options."
            ));
        }
        if loc.is_known() {
            eprint!("{}: ", loc);
        } else {
            report(format_args!(
                "Source location information not present. Compile with -g or -gline-tables-only."
            ));
        }
        fatal(
            1,
            "failure of target construct while offloading is mandatory",
        );
    }
}

impl Device {
    pub(crate) fn loaded_generation_is(&self, generation: u64) -> bool {
        self.loaded_generation() == generation
    }
}
