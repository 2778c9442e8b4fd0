//! The state all devices of a mock plugin share, which tests keep to script and inspect.

use crate::faults::{CallFaults, OpKind};
use crate::lock;
use crate::log::Op;
use crate::memory::Memory;
use omptarget_plugin::QueueId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A kernel: gets the device memory and its argument words.
pub type KernelFn = Arc<dyn Fn(&Memory, &[usize]) + Send + Sync>;

/// Shared state of a mock plugin: tests keep an `Arc` to inspect and script it.
pub struct MockState {
    pub memory: Memory,
    pub(crate) log: Mutex<Vec<Op>>,
    pub(crate) faults: Mutex<HashMap<OpKind, usize>>,
    pub(crate) counts: Mutex<HashMap<OpKind, usize>>,
    /// Faultable calls of any kind since `fail_call`, the position to fail (0: none), and the
    /// kinds of the calls that were failed that way.
    pub(crate) calls: Mutex<CallFaults>,
    /// Blocks whose free was refused by an injected fault: still allocated, by design.
    pub(crate) refused: Mutex<Vec<usize>>,
    pub(crate) kernels: Mutex<HashMap<String, KernelFn>>,
    pub(crate) kernel_names: Mutex<Vec<String>>,
    /// Blocks of each loaded module's globals, freed when it is unloaded.
    pub(crate) module_globals: Mutex<HashMap<usize, Vec<usize>>>,
    /// Initial bytes of globals, by symbol name (as an image's data section would hold).
    pub(crate) global_init: Mutex<HashMap<String, Vec<u8>>>,
    pub(crate) next_addr: AtomicUsize,
    pub(crate) next_token: AtomicUsize,
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
    /// [`cost`](crate::cost)), so traced durations are exact and tests can check them.
    pub clock: AtomicU64,
    /// Pending timestamps: token → (queue, its synchronisation count when taken, time).
    pub(crate) stamps: Mutex<HashMap<usize, (QueueId, u64, u64)>>,
    /// How often each queue was synchronised (or found done).
    pub(crate) syncs: Mutex<HashMap<QueueId, u64>>,
    /// Queues whose work reads or writes host memory until they complete (models CUDA's
    /// landings of staged copies from the device, and DMA from unstaged host memory).
    pub(crate) touching_host: Mutex<std::collections::HashSet<QueueId>>,
    /// While set, copies to the device read host memory until their queue completes (like
    /// DMA from pinned memory); otherwise only copies from the device do.
    pub host_dma: std::sync::atomic::AtomicBool,
    /// While set, a synchronisation would give memory back to the device
    /// (`completion_releases_memory`, like a CUDA pool over its release threshold).
    pub pool_over_threshold: std::sync::atomic::AtomicBool,
    /// Host → device copies from this many bytes up are staged ahead (`Device::prestage`,
    /// like the CUDA plugin's pinned buffers); `usize::MAX`: never.
    pub prestage_min: AtomicUsize,
    /// What each thread staged ahead: the range and the bytes as they were then.
    pub(crate) prestaged: Mutex<HashMap<std::thread::ThreadId, Prestaged>>,
    /// Prestages made, and those a copy used.
    pub prestages: AtomicUsize,
    pub prestages_used: AtomicUsize,
    /// Called at the start of every copy from the device (tests use it to act while the
    /// runtime is inside the copy, e.g. to see which of its locks are held).
    pub on_copy_from_device: Mutex<Option<CopyHook>>,
    /// Called at the start of every synchronisation (tests use it to act while another
    /// thread waits for a queue).
    pub on_synchronize: Mutex<Option<CopyHook>>,
    /// Called after a copy is staged ahead (its bytes taken).
    pub on_prestage: Mutex<Option<CopyHook>>,
}

/// A hook run inside a copy from the device ([`MockState::on_copy_from_device`]) or a
/// synchronisation ([`MockState::on_synchronize`]), or after a copy is staged ahead
/// ([`MockState::on_prestage`]).
pub type CopyHook = Arc<dyn Fn() + Send + Sync>;

/// A copy staged ahead: the host range (begin, bytes) and its bytes when staged.
pub(crate) type Prestaged = (usize, usize, Vec<u8>);

impl MockState {
    /// A fresh state: no memory, no log, no faults, the clock at 1 ms.
    pub(crate) fn new(stream_ordered: bool, asynchronous: bool) -> Self {
        MockState {
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
            touching_host: Mutex::new(std::collections::HashSet::new()),
            host_dma: std::sync::atomic::AtomicBool::new(false),
            pool_over_threshold: std::sync::atomic::AtomicBool::new(false),
            prestage_min: AtomicUsize::new(usize::MAX),
            prestaged: Mutex::new(HashMap::new()),
            prestages: AtomicUsize::new(0),
            prestages_used: AtomicUsize::new(0),
            on_copy_from_device: Mutex::new(None),
            on_synchronize: Mutex::new(None),
            on_prestage: Mutex::new(None),
        }
    }
    /// Buffers staged ahead and not given back yet (by any thread).
    pub fn prestaged_now(&self) -> usize {
        crate::lock(&self.prestaged).len()
    }
    /// A device address for a new block of `size` bytes, past every block given out before
    /// (blocks start on 256-byte boundaries).
    pub(crate) fn fresh_addr(&self, size: usize) -> usize {
        self.next_addr
            .fetch_add(size.next_multiple_of(256), Ordering::Relaxed)
    }
    /// Gives the global called `name` these initial bytes in every image loaded from now on.
    pub fn set_global(&self, name: &str, bytes: &[u8]) {
        lock(&self.global_init).insert(name.to_owned(), bytes.to_vec());
    }
    /// Registers the kernel called `name` in every mock image.
    pub fn add_kernel(&self, name: &str, f: impl Fn(&Memory, &[usize]) + Send + Sync + 'static) {
        lock(&self.kernels).insert(name.to_owned(), Arc::new(f));
    }
}
