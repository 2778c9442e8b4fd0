//! Tool events: the hook points at which tools observe the runtime.
//!
//! The runtime reports here what it does (devices initialised, images loaded, constructs
//! begun and ended, device memory allocated, copied and freed, kernels submitted) and, for
//! devices a tool traces, when each operation ran on the device. Subscribers receive the
//! events: the OMPT interface (`omptarget-abi`, `entry/ompt/`) and the profiler (`profile.rs`).
//!
//! Cost with no subscriber: a construct reads [`Tools::active`] once (one relaxed atomic
//! load); every hook point inside it tests a field of its `AsyncInfo` that is `None`.
//!
//! Identifiers: every construct and operation gets a correlation id from one counter
//! starting at 1 (the profiler's keys); a subscriber may keep its own word per construct and
//! per operation (`tool_data`, OMPT's `target_data` and `host_op_id`). The OMPT subscriber
//! keeps the ids its tool sees in those words (LLVM's ids: drawn only for the non-EMI
//! callbacks it dispatches), not these.

pub mod profile;
mod scope;

pub(crate) use scope::ToolCtx;
pub use scope::{ApiCall, SubmitScope, api_codeptr};

use crate::device::Device;
use omptarget_plugin::QueueId;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Which end of an operation or a construct an event marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Begin,
    End,
}

/// The kind of a construct (OpenMP's `target`, `target enter data`, `target exit data`,
/// `target update`; `target data` is an enter and an exit, as in LLVM).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstructKind {
    Target,
    EnterData,
    ExitData,
    Update,
}

/// The kind of a data operation (OMPT's `ompt_target_data_op_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataOpKind {
    Alloc,
    TransferToDevice,
    TransferFromDevice,
    Delete,
    Associate,
    Disassociate,
}

/// One construct, from its begin event to its end event (and to the completion of its
/// queued work, which may come later for `nowait`). Shared between the construct's
/// `AsyncInfo` and the entry point that began it; its address never changes.
pub struct Region {
    pub kind: ConstructKind,
    pub nowait: bool,
    /// The OpenMP device number.
    pub device: i32,
    /// The return address of the entry point the program called (OMPT's `codeptr_ra`).
    pub codeptr: usize,
    /// The runtime's correlation id.
    pub id: u64,
    /// libomp's `ompt_data_t` of the encountering task and of the target task (OMPT's
    /// `task_data`, `target_task_data`), filled by the OMPT subscriber at the begin event.
    pub task: AtomicUsize,
    pub target_task: AtomicUsize,
    /// The construct's `ident_t` location string (`;file;function;line;col;;`, a C string in
    /// the program), 0 when unknown.
    pub loc: usize,
    /// The word a tool owns for this construct (OMPT's `target_data`).
    tool_data: UnsafeCell<u64>,
    /// Whether a tool traces the device (operations get device timestamps).
    pub traced: bool,
}

// SAFETY: `tool_data` is written only by the tool, through `tool_data_ptr`, from callbacks
// dispatched for this construct, which run one at a time (a construct's operations are
// issued by one thread at a time); everything else is immutable or atomic.
unsafe impl Sync for Region {}
// SAFETY: see above.
unsafe impl Send for Region {}

impl Region {
    /// The tool's word (OMPT's `ompt_data_t *target_data`), stable for the construct's life.
    pub fn tool_data_ptr(&self) -> *mut u64 {
        self.tool_data.get()
    }
    /// The value the tool stored in its word.
    pub fn tool_data(&self) -> u64 {
        // SAFETY: a plain read of a word the tool writes only inside callbacks of this
        // construct, which do not run concurrently with the runtime's use of it.
        unsafe { std::ptr::read_volatile(self.tool_data.get()) }
    }
}

/// One data operation (OMPT's `ompt_callback_target_data_op[_emi]` arguments).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataOp {
    pub kind: DataOpKind,
    pub src: usize,
    pub src_device: i32,
    pub dst: usize,
    pub dst_device: i32,
    pub bytes: usize,
    pub codeptr: usize,
    /// The runtime's correlation id.
    pub id: u64,
    /// The word a tool owns for this operation (OMPT's `host_op_id` of the EMI callback).
    pub tool_data: u64,
}

/// A kernel submission (OMPT's `ompt_callback_target_submit[_emi]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submit {
    pub requested_teams: u32,
    /// The kernel's device symbol.
    pub kernel: &'static str,
    pub id: u64,
    pub tool_data: u64,
}

/// An image loaded on a device (OMPT's `ompt_callback_device_load`).
#[derive(Clone, Debug)]
pub struct DeviceLoad {
    pub device: i32,
    /// Where the image's bytes lie in the host program.
    pub host_addr: usize,
    pub bytes: usize,
    /// The loaded image's id on its device: 0 for the device's first image, then 1, 2, …
    /// (`Modules`).
    pub module_id: u64,
}

/// What a trace record describes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordKind {
    DataOp {
        kind: DataOpKind,
        src: usize,
        src_device: i32,
        dst: usize,
        dst_device: i32,
        bytes: usize,
        codeptr: usize,
    },
    Kernel {
        requested_teams: u32,
        granted_teams: u32,
        /// The kernel's device symbol.
        name: &'static str,
    },
}

/// One operation as it ran on a traced device, with device timestamps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// The traced device whose buffer gets the record.
    pub device: i32,
    /// Device time (ns, see `omptarget_plugin::Device::device_time`) at the start and end.
    pub start: u64,
    pub end: u64,
    /// The OS thread id (`gettid`) of the thread that issued the operation.
    pub thread_id: u64,
    /// The queue the operation ran on (a backend queue handle), `None` for operations
    /// without one (they ran on the calling thread).
    pub queue: Option<usize>,
    /// The construct's correlation id and tool word, if the operation belongs to one.
    pub region_id: u64,
    pub region_tool_data: u64,
    /// The operation's correlation id and tool word (the EMI callback's `host_op_id`).
    pub op_id: u64,
    pub op_tool_data: u64,
    pub kind: RecordKind,
}

/// A receiver of tool events. Every method has an empty default. Callbacks run on the thread
/// that does the work, with no runtime lock held: a subscriber may call back into the
/// runtime.
pub trait Subscriber: Send + Sync {
    /// A device was initialised (OMPT: `ompt_callback_device_initialize`).
    fn device_initialize(&self, _device: &Arc<Device>) {}
    /// A device is finalised (its last image went away).
    fn device_finalize(&self, _device: i32) {}
    fn device_load(&self, _load: &DeviceLoad) {}
    fn device_unload(&self, _device: i32, _module_id: u64) {}
    fn construct(&self, _endpoint: Endpoint, _region: &Region) {}
    /// `region` is `None` for operations of `omp_target_*` routines.
    fn data_op(&self, _endpoint: Endpoint, _region: Option<&Region>, _op: &mut DataOp) {}
    fn submit(&self, _endpoint: Endpoint, _region: &Region, _submit: &mut Submit) {}
    /// Whether this subscriber wants trace records of `device` (checked once per construct).
    fn traces(&self, _device: i32) -> bool {
        false
    }
    /// A traced operation completed (called once its device timestamps are known, which for
    /// queued work is after the queue was synchronised).
    fn record(&self, _record: &TraceRecord) {}
    /// The last image went away (the program ends, or unloads its last library): every
    /// device was finalised.
    fn finish(&self) {}
}

const SLOTS: usize = 4;

/// The module ids of the images loaded on each device. Ids count per device from 0 in load
/// order and are never reused: the first image a device loads is module 0 (what LLVM 19 and
/// 22 pass for every image), and each later image on that device (a shared library's, or
/// one registered again after a `dlclose`) gets an id no other image of the device had, which
/// `device_unload` repeats.
#[derive(Debug, Default)]
pub(crate) struct Modules {
    /// (device, binary key, module id) of each image loaded now.
    loaded: Vec<(usize, usize, u64)>,
    /// The next module id of each device, by device number.
    next: Vec<u64>,
}

impl Modules {
    /// Records binary `key`'s image as loaded on `device`; returns its module id.
    pub(crate) fn load(&mut self, device: usize, key: usize) -> u64 {
        if self.next.len() <= device {
            self.next.resize(device + 1, 0);
        }
        let id = self.next[device];
        self.next[device] += 1;
        self.loaded.push((device, key, id));
        id
    }

    /// Forgets binary `key`'s image on `device`; returns its module id if it was loaded.
    pub(crate) fn unload(&mut self, device: usize, key: usize) -> Option<u64> {
        let at = self
            .loaded
            .iter()
            .position(|&(d, k, _)| d == device && k == key)?;
        Some(self.loaded.swap_remove(at).2)
    }
}

/// The subscribers and the correlation-id counter, one per runtime.
pub struct Tools {
    active: AtomicBool,
    subscribers: [OnceLock<Arc<dyn Subscriber>>; SLOTS],
    next_id: AtomicU64,
    /// Module ids of loaded images.
    pub(crate) modules: Mutex<Modules>,
    /// Devices were finalised (the last binary went away); a new registration initialises
    /// them again.
    pub(crate) finalized: AtomicBool,
}

impl Default for Tools {
    fn default() -> Self {
        Self {
            active: AtomicBool::new(false),
            subscribers: Default::default(),
            next_id: AtomicU64::new(1),
            modules: Mutex::new(Modules::default()),
            finalized: AtomicBool::new(false),
        }
    }
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tools")
            .field("active", &self.active())
            .finish()
    }
}

impl Tools {
    /// Whether any subscriber listens: the one check the hot path makes.
    #[inline]
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// Adds a subscriber (at most four per process); returns false when full.
    pub fn subscribe(&self, s: Arc<dyn Subscriber>) -> bool {
        let mut s = Some(s);
        for slot in &self.subscribers {
            let mut taken = false;
            slot.get_or_init(|| {
                taken = true;
                s.take().expect("given once")
            });
            if taken {
                self.active.store(true, Ordering::Release);
                return true;
            }
        }
        false
    }

    /// Stops (`false`) or resumes event delivery to every subscriber (OMPT's finalisation
    /// ends it: no callback may follow the tool's finalizer).
    pub fn set_active(&self, on: bool) {
        let any = self.subscribers.iter().any(|s| s.get().is_some());
        self.active.store(on && any, Ordering::Release);
    }

    pub(crate) fn each(&self, mut f: impl FnMut(&dyn Subscriber)) {
        for slot in &self.subscribers {
            match slot.get() {
                Some(s) => f(s.as_ref()),
                None => break,
            }
        }
    }

    /// A new correlation id.
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Whether any subscriber traces `device`.
    pub fn traced(&self, device: i32) -> bool {
        let mut any = false;
        self.each(|s| any |= s.traces(device));
        any
    }

    pub(crate) fn device_initialize(&self, device: &Arc<Device>) {
        if self.active() {
            self.each(|s| s.device_initialize(device));
        }
    }

    pub(crate) fn device_finalize(&self, device: i32) {
        if self.active() {
            self.each(|s| s.device_finalize(device));
        }
    }

    pub(crate) fn device_load(&self, load: &DeviceLoad) {
        if self.active() {
            self.each(|s| s.device_load(load));
        }
    }

    pub(crate) fn device_unload(&self, device: i32, module_id: u64) {
        if self.active() {
            self.each(|s| s.device_unload(device, module_id));
        }
    }

    /// Begins a construct on `device`: a new [`Region`], with the begin event dispatched.
    pub fn begin_construct(
        &self,
        kind: ConstructKind,
        nowait: bool,
        device: i32,
        codeptr: usize,
        loc: usize,
    ) -> Arc<Region> {
        let region = Arc::new(Region {
            kind,
            nowait,
            device,
            codeptr,
            id: self.next_id(),
            task: AtomicUsize::new(0),
            target_task: AtomicUsize::new(0),
            loc,
            tool_data: UnsafeCell::new(0),
            traced: self.traced(device),
        });
        self.each(|s| s.construct(Endpoint::Begin, &region));
        region
    }

    /// Ends a construct (the entry point returns; work of a `nowait` construct may still
    /// be queued, and its later operations still name the region).
    pub fn end_construct(&self, region: &Region) {
        if self.active() {
            self.each(|s| s.construct(Endpoint::End, region));
        }
    }

    fn record(&self, r: &TraceRecord) {
        self.each(|s| s.record(r));
    }

    pub(crate) fn finish(&self) {
        if self.active() {
            self.each(|s| s.finish());
        }
    }
}

thread_local! {
    static THREAD_ID: u64 = {
        // SAFETY: gettid has no preconditions.
        (unsafe { libc::gettid() }) as u64
    };
}

/// The OS id of the calling thread (what trace records carry as `thread_id`).
pub fn thread_id() -> u64 {
    THREAD_ID.with(|t| *t)
}

/// A queue and the device whose timestamps mark it, for a traced operation.
pub(crate) type TimedQueue = Option<QueueId>;
