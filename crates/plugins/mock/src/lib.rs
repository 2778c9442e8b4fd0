//! A scriptable device backend for tests. It keeps device memory in host buffers at fake
//! device addresses (so data really moves and a stray address is caught), records every
//! operation in order with its queue, runs kernels registered as Rust closures, can order
//! allocation on queues like a CUDA memory pool, and fails the n-th operation of a kind, or
//! the k-th faultable call of any kind, on request (fault injection at every position).

use omptarget_plugin::{
    AllocKind, CopyKind, Device, DeviceInfo, DevicePtr, Error, ErrorKind, EventId, ForeignRuntime,
    ImageInfo, KernelId, LaunchConfig, LoadEnv, ModuleId, Plugin, QueueId, Result, Timestamp,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The first bytes of an image this backend accepts.
pub const MAGIC: &[u8; 8] = b"MOCKIMG\0";

/// One recorded operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Load {
        device: usize,
    },
    Unload {
        device: usize,
    },
    Alloc {
        device: usize,
        ptr: DevicePtr,
        size: usize,
        queue: Option<QueueId>,
    },
    Free {
        device: usize,
        ptr: DevicePtr,
        queue: Option<QueueId>,
    },
    Copy {
        device: usize,
        kind: CopyKind,
        dst: usize,
        src: usize,
        size: usize,
        queue: Option<QueueId>,
    },
    /// A direct copy to another mock device (`Device::copy_to_peer`).
    CopyPeer {
        device: usize,
        peer: usize,
        dst: usize,
        src: usize,
        size: usize,
        queue: QueueId,
    },
    Memset {
        device: usize,
        dst: DevicePtr,
        size: usize,
    },
    Launch {
        device: usize,
        kernel: String,
        args: Vec<usize>,
        queue: QueueId,
    },
    /// A kernel language's launch (`LaunchConfig::language`): the parameter bytes and the
    /// grid and blocks as the backend received them.
    LanguageLaunch {
        device: usize,
        kernel: String,
        params: Vec<u8>,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        queue: QueueId,
    },
    CreateQueue {
        device: usize,
        queue: QueueId,
    },
    Synchronize {
        device: usize,
        queue: QueueId,
    },
    /// A query that found the queue's work complete (as `Synchronize` for ordering).
    Completed {
        device: usize,
        queue: QueueId,
    },
    RecordEvent {
        device: usize,
        event: EventId,
        queue: QueueId,
    },
    /// A tracing timestamp taken on a queue (resolved only after the queue is synchronised).
    Timestamp {
        device: usize,
        queue: QueueId,
        at: u64,
    },
    WaitEvent {
        device: usize,
        event: EventId,
        queue: QueueId,
    },
    /// An image's indirect-call table, as the core handed it over.
    IndirectCalls {
        device: usize,
        table: Vec<(u64, u64)>,
    },
}

/// The kinds of operation a fault can target. `Copy` counts copies of every direction; the
/// three direction kinds count only their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Load,
    Alloc,
    Copy,
    Launch,
    Synchronize,
    CopyToDevice,
    CopyFromDevice,
    CopyDeviceToDevice,
    Free,
    Memset,
    Query,
    CreateEvent,
    RecordEvent,
    WaitEvent,
    CreateQueue,
    /// Kernel and global lookups in a loaded image.
    Symbol,
    /// `lock_host_memory` (`llvm_omp_target_lock_mem`).
    Lock,
}

/// A kernel: gets the device memory and its argument words.
pub type KernelFn = Arc<dyn Fn(&Memory, &[usize]) + Send + Sync>;

/// Device memory of every mock device: allocation base → bytes.
#[derive(Default)]
pub struct Memory {
    blocks: Mutex<BTreeMap<usize, Vec<u8>>>,
}

impl Memory {
    fn blocks(&self) -> MutexGuard<'_, BTreeMap<usize, Vec<u8>>> {
        self.blocks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the `size` bytes at device address `addr`, which must lie in one live
    /// allocation.
    pub fn with_bytes<R>(
        &self,
        addr: usize,
        size: usize,
        f: impl FnOnce(&mut [u8]) -> R,
    ) -> Result<R> {
        let mut blocks = self.blocks();
        let (&base, block) = blocks
            .range_mut(..=addr)
            .next_back()
            .ok_or_else(|| bad_addr(addr, size))?;
        let off = addr - base;
        if off + size > block.len() {
            return Err(bad_addr(addr, size));
        }
        Ok(f(&mut block[off..off + size]))
    }

    /// Reads a little-endian `i32` at a device address.
    pub fn read_i32(&self, addr: usize) -> Result<i32> {
        self.with_bytes(addr, 4, |b| {
            i32::from_le_bytes(b.try_into().expect("4 bytes"))
        })
    }

    /// Writes a little-endian `i32` at a device address.
    pub fn write_i32(&self, addr: usize, v: i32) -> Result<()> {
        self.with_bytes(addr, 4, |b| b.copy_from_slice(&v.to_le_bytes()))
    }

    /// Live allocations.
    pub fn live(&self) -> usize {
        self.blocks().len()
    }
}

fn bad_addr(addr: usize, size: usize) -> Error {
    Error::new(
        ErrorKind::InvalidArgument,
        format!("mock: {size} bytes at {addr:#x} are not inside a live device allocation"),
    )
}

#[derive(Default)]
struct CallFaults {
    seen: usize,
    fail_at: usize,
    failed: Vec<OpKind>,
}

/// Shared state of a mock plugin: tests keep an `Arc` to inspect and script it.
pub struct MockState {
    pub memory: Memory,
    log: Mutex<Vec<Op>>,
    faults: Mutex<HashMap<OpKind, usize>>,
    counts: Mutex<HashMap<OpKind, usize>>,
    /// Faultable calls of any kind since `fail_call`, the position to fail (0: none), and the
    /// kinds of the calls that were failed that way.
    calls: Mutex<CallFaults>,
    /// Blocks whose free was refused by an injected fault: still allocated, by design.
    refused: Mutex<Vec<usize>>,
    kernels: Mutex<HashMap<String, KernelFn>>,
    kernel_names: Mutex<Vec<String>>,
    /// Blocks of each loaded module's globals, freed when it is unloaded.
    module_globals: Mutex<HashMap<usize, Vec<usize>>>,
    /// Initial bytes of globals, by symbol name (as an image's data section would hold).
    global_init: Mutex<HashMap<String, Vec<u8>>>,
    next_addr: AtomicUsize,
    next_token: AtomicUsize,
    /// Allocation and free are ordered on queues (like CUDA memory pools).
    pub stream_ordered: bool,
    /// Work may still be running when a call returns (so the core must synchronise).
    pub asynchronous: bool,
    /// While set, `query` reports every queue as still busy (models in-flight work).
    pub busy: std::sync::atomic::AtomicBool,
    /// Whether the mock devices copy to each other directly (like CUDA peer access); when
    /// not, copies between devices are staged through host memory by the core.
    pub peer_access: std::sync::atomic::AtomicBool,
    /// Whether kernels may use host addresses as they are (`unified_shared_memory`).
    pub unified_memory: std::sync::atomic::AtomicBool,
    /// Whether the devices offer a foreign runtime (`#pragma omp interop`): the mock's is
    /// named `mock`, its device handle is the device index plus 100 and its context 0xC0.
    pub foreign: std::sync::atomic::AtomicBool,
    /// Whether its kernels take the launch environment first (as clang 18 and later's do;
    /// `Device::takes_launch_environment`).
    pub kernels_take_launch_env: std::sync::atomic::AtomicBool,
    /// The `KernelArgsTy` version of the last launch, as the backend received it.
    pub last_launch_version: std::sync::atomic::AtomicU32,
    /// The mock's device clock (ns): every operation advances it by a fixed cost (see
    /// [`cost`]), so traced durations are exact and tests can check them.
    pub clock: AtomicU64,
    /// Pending timestamps: token → (queue, its synchronisation count when taken, time).
    stamps: Mutex<HashMap<usize, (QueueId, u64, u64)>>,
    /// How often each queue was synchronised (or found done).
    syncs: Mutex<HashMap<QueueId, u64>>,
}

/// What each operation costs on the mock's device clock, in nanoseconds.
pub mod cost {
    pub const ALLOC: u64 = 50;
    pub const FREE: u64 = 20;
    /// Plus one nanosecond per byte.
    pub const COPY: u64 = 100;
    pub const LAUNCH: u64 = 1000;
}

impl MockState {
    pub fn log(&self) -> Vec<Op> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
    pub fn clear_log(&self) {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
    fn record(&self, op: Op) {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).push(op);
    }
    fn tick(&self, ns: u64) {
        self.clock.fetch_add(ns, Ordering::Relaxed);
    }
    fn synchronized(&self, queue: QueueId) {
        *self
            .syncs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(queue)
            .or_insert(0) += 1;
    }
    /// Timestamps taken and not resolved yet.
    pub fn pending_timestamps(&self) -> usize {
        self.stamps.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
    /// Makes the `nth` (1-based, counted from now) operation of `kind` fail.
    pub fn fail_nth(&self, kind: OpKind, nth: usize) {
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(kind, 0);
        self.faults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(kind, nth);
    }
    /// Makes the `k`-th (1-based, counted from now) faultable call of any kind fail once;
    /// `k = 0` only restarts the count. Faultable: load, symbol lookup, alloc, free, copies,
    /// memset, launch, queue creation, synchronize, query, event create/record/wait, lock.
    pub fn fail_call(&self, k: usize) {
        *self.calls.lock().unwrap_or_else(|e| e.into_inner()) = CallFaults {
            seen: 0,
            fail_at: k,
            failed: Vec::new(),
        };
    }
    /// Faultable calls made since the last [`MockState::fail_call`].
    pub fn calls(&self) -> usize {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).seen
    }
    /// The kinds of the calls failed through [`MockState::fail_call`] since it was set.
    pub fn failed_calls(&self) -> Vec<OpKind> {
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .failed
            .clone()
    }
    /// Blocks still allocated because an injected fault refused their free.
    pub fn refused_frees(&self) -> usize {
        self.refused.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
    fn injected(kind: OpKind) -> Error {
        Error::new(ErrorKind::Injected, format!("injected {kind:?} failure"))
    }
    fn check_fault(&self, kind: OpKind) -> Result<()> {
        {
            let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
            calls.seen += 1;
            if calls.seen == calls.fail_at {
                calls.failed.push(kind);
                return Err(Self::injected(kind));
            }
        }
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let faults = self.faults.lock().unwrap_or_else(|e| e.into_inner());
        // A copy also counts as `Copy`, so scripts written before the direction kinds keep
        // their positions.
        let kinds: &[OpKind] = match kind {
            OpKind::CopyToDevice | OpKind::CopyFromDevice | OpKind::CopyDeviceToDevice => {
                &[OpKind::Copy, kind]
            }
            _ => std::slice::from_ref(&kind),
        };
        let mut fail = None;
        for &k in kinds {
            let n = counts.entry(k).or_insert(0);
            *n += 1;
            if faults.get(&k) == Some(n) {
                fail = Some(k);
            }
        }
        match fail {
            Some(k) => Err(Self::injected(k)),
            None => Ok(()),
        }
    }
    /// Gives the global called `name` these initial bytes in every image loaded from now on.
    pub fn set_global(&self, name: &str, bytes: &[u8]) {
        self.global_init
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_owned(), bytes.to_vec());
    }
    /// Registers the kernel called `name` in every mock image.
    pub fn add_kernel(&self, name: &str, f: impl Fn(&Memory, &[usize]) + Send + Sync + 'static) {
        self.kernels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_owned(), Arc::new(f));
    }
}

/// The mock plugin.
pub struct MockPlugin {
    devices: usize,
    pub state: Arc<MockState>,
}

impl MockPlugin {
    pub fn new(devices: usize, stream_ordered: bool, asynchronous: bool) -> Self {
        Self {
            devices,
            state: Arc::new(MockState {
                memory: Memory::default(),
                log: Mutex::new(Vec::new()),
                faults: Mutex::new(HashMap::new()),
                counts: Mutex::new(HashMap::new()),
                calls: Mutex::new(CallFaults::default()),
                refused: Mutex::new(Vec::new()),
                kernels: Mutex::new(HashMap::new()),
                kernel_names: Mutex::new(Vec::new()),
                module_globals: Mutex::new(HashMap::new()),
                global_init: Mutex::new(HashMap::new()),
                next_addr: AtomicUsize::new(0x7e00_0000_0000),
                next_token: AtomicUsize::new(1),
                stream_ordered,
                asynchronous,
                busy: std::sync::atomic::AtomicBool::new(false),
                peer_access: std::sync::atomic::AtomicBool::new(false),
                unified_memory: std::sync::atomic::AtomicBool::new(false),
                foreign: std::sync::atomic::AtomicBool::new(false),
                kernels_take_launch_env: std::sync::atomic::AtomicBool::new(false),
                last_launch_version: std::sync::atomic::AtomicU32::new(0),
                clock: AtomicU64::new(1_000_000),
                stamps: Mutex::new(HashMap::new()),
                syncs: Mutex::new(HashMap::new()),
            }),
        }
    }
}

impl Plugin for MockPlugin {
    fn name(&self) -> &'static str {
        "mock"
    }
    fn number_of_devices(&self) -> usize {
        self.devices
    }
    fn is_compatible(&self, image: &ImageInfo<'_>) -> bool {
        image.bytes.starts_with(MAGIC)
    }
    fn init_device(&self, index: usize) -> Result<Box<dyn Device>> {
        if index >= self.devices {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "no such mock device",
            ));
        }
        Ok(Box::new(MockDevice {
            index,
            state: self.state.clone(),
            record: std::sync::OnceLock::new(),
        }))
    }
}

struct MockDevice {
    index: usize,
    state: Arc<MockState>,
    /// Record and replay: one block of mock memory every allocation comes from.
    record: std::sync::OnceLock<omptarget_plugin::record::RecordRegion>,
}

impl MockDevice {
    fn token(&self) -> usize {
        self.state.next_token.fetch_add(1, Ordering::Relaxed)
    }
    fn host_bytes<'a>(addr: usize, size: usize) -> &'a mut [u8] {
        // SAFETY: the core only passes host ranges it owns or that the caller vouched for.
        unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, size) }
    }
}

impl Device for MockDevice {
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: format!("mock device {}", self.index),
            properties: vec![(
                "Stream-ordered allocation".into(),
                self.state.stream_ordered.to_string(),
            )],
        }
    }
    fn load(&self, image: &ImageInfo<'_>, _env: &LoadEnv) -> Result<ModuleId> {
        self.state.check_fault(OpKind::Load)?;
        if !image.bytes.starts_with(MAGIC) {
            return Err(Error::new(ErrorKind::InvalidImage, "not a mock image"));
        }
        self.state.record(Op::Load { device: self.index });
        Ok(ModuleId(self.token()))
    }
    fn unload(&self, module: ModuleId) -> Result<()> {
        let globals = self
            .state
            .module_globals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&module.0)
            .unwrap_or_default();
        for g in globals {
            self.state.memory.blocks().remove(&g);
        }
        self.state.record(Op::Unload { device: self.index });
        Ok(())
    }
    fn kernel(&self, _module: ModuleId, name: &str) -> Result<KernelId> {
        self.state.check_fault(OpKind::Symbol)?;
        let mut names = self
            .state
            .kernel_names
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let id = match names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                names.push(name.to_owned());
                names.len() - 1
            }
        };
        Ok(KernelId(id))
    }
    fn global(&self, module: ModuleId, name: &str) -> Result<(DevicePtr, usize)> {
        self.state.check_fault(OpKind::Symbol)?;
        // Each global of each loaded image gets its own 64-byte block, owned by the image.
        let p = self.state.next_addr.fetch_add(256, Ordering::Relaxed);
        let mut block = vec![0; 64];
        if let Some(init) = self
            .state
            .global_init
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
        {
            block[..init.len().min(64)].copy_from_slice(&init[..init.len().min(64)]);
        }
        self.state.memory.blocks().insert(p, block);
        self.state
            .module_globals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(module.0)
            .or_default()
            .push(p);
        Ok((p, 64))
    }
    fn alloc(&self, size: usize, _kind: AllocKind, queue: Option<QueueId>) -> Result<DevicePtr> {
        self.state.check_fault(OpKind::Alloc)?;
        let size = size.max(1);
        let ptr = if let Some(r) = self.record.get() {
            r.alloc(size)
                .ok_or_else(|| Error::new(ErrorKind::OutOfMemory, "mock: record region full"))?
        } else {
            let ptr = self
                .state
                .next_addr
                .fetch_add(size.next_multiple_of(256), Ordering::Relaxed);
            self.state.memory.blocks().insert(ptr, vec![0xAB; size]);
            ptr
        };
        self.state.tick(cost::ALLOC);
        self.state.record(Op::Alloc {
            device: self.index,
            ptr,
            size,
            queue,
        });
        Ok(ptr)
    }
    fn free(&self, ptr: DevicePtr, _kind: AllocKind, queue: Option<QueueId>) -> Result<()> {
        if let Err(e) = self.state.check_fault(OpKind::Free) {
            // The device refused: the block stays allocated (a real driver's failed free).
            if self.state.memory.blocks().contains_key(&ptr) {
                self.state
                    .refused
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(ptr);
            }
            return Err(e);
        }
        let in_region = self.record.get().is_some_and(|r| r.contains(ptr));
        if !in_region && self.state.memory.blocks().remove(&ptr).is_none() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("mock: double or invalid free of {ptr:#x}"),
            ));
        }
        self.state.tick(cost::FREE);
        self.state.record(Op::Free {
            device: self.index,
            ptr,
            queue,
        });
        Ok(())
    }
    /// One block of mock memory (1 MiB unless told), at `at` when no block is there.
    fn begin_record_replay(
        &self,
        size: Option<usize>,
        at: Option<usize>,
    ) -> Result<(usize, usize)> {
        let size = size.unwrap_or(1 << 20).max(1).next_multiple_of(256);
        let mut blocks = self.state.memory.blocks();
        let free = |a: usize| {
            blocks
                .range(..a.saturating_add(size))
                .next_back()
                .is_none_or(|(&b, v)| b + v.len() <= a)
        };
        let base = match at {
            Some(a) if a != 0 && free(a) => a,
            _ => self
                .state
                .next_addr
                .fetch_add(size.next_multiple_of(256), Ordering::Relaxed),
        };
        blocks.insert(base, vec![0; size]);
        drop(blocks);
        let (start, offset) = omptarget_plugin::record::place(base, size, at, 0);
        self.record
            .set(omptarget_plugin::record::RecordRegion::new(
                start,
                size - (start - base),
            ))
            .map_err(|_| {
                Error::new(
                    ErrorKind::InvalidArgument,
                    "mock: record/replay active already",
                )
            })?;
        Ok((start, offset))
    }
    fn record_region(&self) -> Option<(usize, usize)> {
        self.record.get().map(|r| r.used())
    }
    fn lock_host_memory(&self, ptr: usize, _size: usize) -> Result<usize> {
        self.state.check_fault(OpKind::Lock)?;
        Ok(ptr)
    }
    fn orders_alloc_on_queue(&self) -> bool {
        self.state.stream_ordered
    }
    fn unified_shared_memory(&self) -> std::result::Result<(), String> {
        if self.state.unified_memory.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err(format!(
                "mock device {} keeps its memory apart from the host's",
                self.index
            ))
        }
    }
    fn takes_launch_environment(&self, _module: ModuleId, _name: &str) -> Option<bool> {
        Some(self.state.kernels_take_launch_env.load(Ordering::SeqCst))
    }
    fn foreign_runtime(&self) -> Option<ForeignRuntime> {
        self.state
            .foreign
            .load(Ordering::SeqCst)
            .then(|| ForeignRuntime {
                id: 1000,
                name: c"mock",
                vendor: 9,
                vendor_name: c"llvm",
                platform: None,
                device: Some(self.index as i64 + 100),
                device_context: Some(0xC0),
                platform_type: c"N/A",
                device_type: c"int",
                context_type: c"void *",
                queue_type: c"mock queue",
            })
    }
    /// The mock stands for a GPU: device code looks host addresses up in the table.
    fn uses_indirect_call_table(&self) -> bool {
        true
    }
    fn publish_indirect_calls(&self, _module: ModuleId, table: &[(u64, u64)]) -> Result<()> {
        // Part of loading an image (CUDA writes the table into the image's globals).
        self.state.check_fault(OpKind::Load)?;
        self.state.record(Op::IndirectCalls {
            device: self.index,
            table: table.to_vec(),
        });
        Ok(())
    }
    fn is_asynchronous(&self) -> bool {
        self.state.asynchronous
    }
    fn copy(
        &self,
        kind: CopyKind,
        dst: usize,
        src: usize,
        size: usize,
        queue: Option<QueueId>,
    ) -> Result<()> {
        self.state.check_fault(match kind {
            CopyKind::HostToDevice => OpKind::CopyToDevice,
            CopyKind::DeviceToHost => OpKind::CopyFromDevice,
            CopyKind::DeviceToDevice => OpKind::CopyDeviceToDevice,
        })?;
        let mem = &self.state.memory;
        match kind {
            CopyKind::HostToDevice => {
                let from = Self::host_bytes(src, size).to_vec();
                mem.with_bytes(dst, size, |d| d.copy_from_slice(&from))?;
            }
            CopyKind::DeviceToHost => {
                let bytes = mem.with_bytes(src, size, |s| s.to_vec())?;
                Self::host_bytes(dst, size).copy_from_slice(&bytes);
            }
            CopyKind::DeviceToDevice => {
                let bytes = mem.with_bytes(src, size, |s| s.to_vec())?;
                mem.with_bytes(dst, size, |d| d.copy_from_slice(&bytes))?;
            }
        }
        self.state.tick(cost::COPY + size as u64);
        self.state.record(Op::Copy {
            device: self.index,
            kind,
            dst,
            src,
            size,
            queue,
        });
        Ok(())
    }
    fn peer_id(&self) -> Option<usize> {
        Some(self.index)
    }

    fn copy_to_peer(
        &self,
        dst: DevicePtr,
        peer: usize,
        src: DevicePtr,
        size: usize,
        queue: QueueId,
    ) -> Result<bool> {
        if !self.state.peer_access.load(Ordering::Relaxed) || peer == self.index {
            return Ok(false);
        }
        self.state.check_fault(OpKind::Copy)?;
        // Every mock device's memory lives in one map: read the source, write the target.
        let bytes = self.state.memory.with_bytes(src, size, |b| b.to_vec())?;
        self.state
            .memory
            .with_bytes(dst, size, |b| b.copy_from_slice(&bytes))?;
        self.state.record(Op::CopyPeer {
            device: self.index,
            peer,
            dst,
            src,
            size,
            queue,
        });
        Ok(true)
    }

    fn memset(
        &self,
        dst: DevicePtr,
        value: u8,
        size: usize,
        _queue: Option<QueueId>,
    ) -> Result<()> {
        self.state.check_fault(OpKind::Memset)?;
        self.state.memory.with_bytes(dst, size, |d| d.fill(value))?;
        self.state.record(Op::Memset {
            device: self.index,
            dst,
            size,
        });
        Ok(())
    }
    fn launch(
        &self,
        kernel: KernelId,
        args: &[usize],
        config: &LaunchConfig,
        queue: QueueId,
    ) -> Result<()> {
        self.state.check_fault(OpKind::Launch)?;
        self.state
            .last_launch_version
            .store(config.version, Ordering::SeqCst);
        let name = self
            .state
            .kernel_names
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(kernel.0)
            .cloned()
            .unwrap_or_default();
        let f = self
            .state
            .kernels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&name)
            .cloned();
        if let Some(lang) = config.language {
            let params = if lang.size == 0 {
                Vec::new()
            } else {
                // SAFETY: the caller's buffer of `size` bytes lives for the call.
                unsafe { std::slice::from_raw_parts(lang.data as *const u8, lang.size) }.to_vec()
            };
            self.state.tick(cost::LAUNCH);
            self.state.record(Op::LanguageLaunch {
                device: self.index,
                kernel: name,
                params,
                grid: config.num_teams,
                block: config.thread_limit,
                shared: config.dyn_cgroup_mem,
                queue,
            });
            return Ok(());
        }
        if let Some(f) = f {
            f(&self.state.memory, args);
        }
        self.state.tick(cost::LAUNCH);
        self.state.record(Op::Launch {
            device: self.index,
            kernel: name,
            args: args.to_vec(),
            queue,
        });
        Ok(())
    }
    fn create_queue(&self) -> Result<QueueId> {
        self.state.check_fault(OpKind::CreateQueue)?;
        let queue = QueueId(self.token());
        self.state.record(Op::CreateQueue {
            device: self.index,
            queue,
        });
        Ok(queue)
    }
    fn destroy_queue(&self, _queue: QueueId) -> Result<()> {
        Ok(())
    }
    fn synchronize(&self, queue: QueueId) -> Result<()> {
        self.state.check_fault(OpKind::Synchronize)?;
        self.state.record(Op::Synchronize {
            device: self.index,
            queue,
        });
        self.state.synchronized(queue);
        Ok(())
    }
    fn query(&self, queue: QueueId) -> Result<bool> {
        self.state.check_fault(OpKind::Query)?;
        let done = !self.state.busy.load(Ordering::SeqCst);
        if done {
            self.state.record(Op::Completed {
                device: self.index,
                queue,
            });
            self.state.synchronized(queue);
        }
        Ok(done)
    }
    /// A pending timestamp on a queue, like a CUDA event: it may only be resolved after the
    /// queue was synchronised (or found done), which catches a core that reads it too early.
    fn timestamp(&self, queue: Option<QueueId>) -> Result<Timestamp> {
        let at = self.state.clock.load(Ordering::Relaxed);
        let Some(queue) = queue else {
            return Ok(Timestamp::At(at));
        };
        let token = self.token();
        let syncs = self
            .state
            .syncs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&queue)
            .copied()
            .unwrap_or(0);
        self.state
            .stamps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token, (queue, syncs, at));
        self.state.record(Op::Timestamp {
            device: self.index,
            queue,
            at,
        });
        Ok(Timestamp::Pending(token))
    }
    fn resolve_timestamp(&self, ts: Timestamp) -> Result<u64> {
        let token = match ts {
            Timestamp::At(t) => return Ok(t),
            Timestamp::Pending(token) => token,
        };
        let mut stamps = self.state.stamps.lock().unwrap_or_else(|e| e.into_inner());
        let Some(&(queue, syncs, at)) = stamps.get(&token) else {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("mock: unknown or already resolved timestamp {token}"),
            ));
        };
        let now = self
            .state
            .syncs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&queue)
            .copied()
            .unwrap_or(0);
        if now <= syncs {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("mock: timestamp {token} resolved before its queue was synchronised"),
            ));
        }
        stamps.remove(&token);
        Ok(at)
    }
    fn device_time(&self) -> u64 {
        self.state.clock.load(Ordering::Relaxed)
    }
    fn create_event(&self) -> Result<EventId> {
        self.state.check_fault(OpKind::CreateEvent)?;
        Ok(EventId(self.token()))
    }
    fn destroy_event(&self, _event: EventId) -> Result<()> {
        Ok(())
    }
    fn record_event(&self, event: EventId, queue: QueueId) -> Result<()> {
        self.state.check_fault(OpKind::RecordEvent)?;
        self.state.record(Op::RecordEvent {
            device: self.index,
            event,
            queue,
        });
        Ok(())
    }
    fn wait_event(&self, event: EventId, queue: QueueId) -> Result<()> {
        self.state.check_fault(OpKind::WaitEvent)?;
        self.state.record(Op::WaitEvent {
            device: self.index,
            event,
            queue,
        });
        Ok(())
    }
}
