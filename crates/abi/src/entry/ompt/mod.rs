//! OMPT for target constructs (OpenMP 5.2 §19): the connection with libomp's OMPT, as LLVM 19
//! makes it, and the tool callbacks of devices, constructs, data operations and kernel
//! submissions, dispatched from the runtime's tool events (`omptarget_core::tools`).
//!
//! Connection: when the runtime is created we look up libomp's `ompt_libomp_connect` and call
//! it with our initializer. libomp calls that initializer only when a tool is active and has
//! registered `ompt_callback_device_initialize`; it hands us its lookup function, through
//! which we find `ompt_get_callback` (the tool's callbacks by event code),
//! `ompt_get_task_data` and `ompt_get_target_task_data`. libomp calls our finalizer after the
//! tool's: no callback follows it.
//!
//! Beyond LLVM 19: device tracing (`trace.rs`), offered through the lookup function passed
//! to `ompt_callback_device_initialize`.

mod trace;

use super::runtime;
use crate::ffi::export;
use omptarget_core::Runtime;
use omptarget_core::tools::{
    ConstructKind, DataOp, DataOpKind, DeviceLoad, Endpoint, Region, Submit, Subscriber,
    TraceRecord,
};
use std::cell::Cell;
use std::ffi::{CString, c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

// ---------------------------------------------------------------- codeptr_ra

// The thread-local word the entry-point trampolines (`ffi::export_ra!`) store their return
// address in: initial-exec TLS, so a trampoline needs no call (the library is loaded with the
// program, which has static TLS room for it).
#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".globl omptarget_rs_codeptr",
    ".hidden omptarget_rs_codeptr",
    ".type omptarget_rs_codeptr,@object",
    ".size omptarget_rs_codeptr, 8",
    ".p2align 3",
    "omptarget_rs_codeptr:",
    ".zero 8",
    ".popsection",
);

/// The return address of the last `export_ra!` entry point this thread entered: the
/// program's call site of the construct or routine running now.
pub(crate) fn return_address() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let ra: usize;
        // SAFETY: reads the thread's own initial-exec TLS word defined above.
        unsafe {
            std::arch::asm!(
                "mov {off}, qword ptr [rip + omptarget_rs_codeptr@gottpoff]",
                "mov {ra}, qword ptr fs:[{off}]",
                off = out(reg) _,
                ra = lateout(reg) ra,
                options(nostack, readonly, preserves_flags),
            );
        }
        ra
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

// ---------------------------------------------------------------- C layouts (omp-tools.h)

type InterfaceFn = unsafe extern "C" fn();
type LookupFn = unsafe extern "C" fn(*const c_char) -> Option<InterfaceFn>;
type InitializeFn = unsafe extern "C" fn(LookupFn, c_int, *mut u64) -> c_int;
type FinalizeFn = unsafe extern "C" fn(*mut u64);
type GetCallbackFn = unsafe extern "C" fn(c_int, *mut Option<InterfaceFn>) -> c_int;
type GetDataFn = unsafe extern "C" fn() -> *mut u64;

/// `ompt_start_tool_result_t`.
#[repr(C)]
pub struct StartToolResult {
    initialize: Option<InitializeFn>,
    finalize: Option<FinalizeFn>,
    tool_data: u64,
}

type DeviceInitializeCb =
    unsafe extern "C" fn(c_int, *const c_char, *mut c_void, LookupFn, *const c_char);
type DeviceFinalizeCb = unsafe extern "C" fn(c_int);
type DeviceLoadCb = unsafe extern "C" fn(
    c_int,
    *const c_char,
    i64,
    *mut c_void,
    usize,
    *mut c_void,
    *mut c_void,
    u64,
);
type DeviceUnloadCb = unsafe extern "C" fn(c_int, u64);
type TargetEmiCb =
    unsafe extern "C" fn(c_int, c_int, c_int, *mut u64, *mut u64, *mut u64, *const c_void);
type TargetCb = unsafe extern "C" fn(c_int, c_int, c_int, *mut u64, u64, *const c_void);
type DataOpEmiCb = unsafe extern "C" fn(
    c_int,
    *mut u64,
    *mut u64,
    *mut u64,
    c_int,
    *mut c_void,
    c_int,
    *mut c_void,
    c_int,
    usize,
    *const c_void,
);
type DataOpCb = unsafe extern "C" fn(
    u64,
    u64,
    c_int,
    *mut c_void,
    c_int,
    *mut c_void,
    c_int,
    usize,
    *const c_void,
);
type SubmitEmiCb = unsafe extern "C" fn(c_int, *mut u64, *mut u64, c_uint);
type SubmitCb = unsafe extern "C" fn(u64, u64, c_uint);

/// `ompt_callbacks_t` codes of the events we dispatch.
mod code {
    pub const TARGET: i32 = 8;
    pub const TARGET_DATA_OP: i32 = 9;
    pub const TARGET_SUBMIT: i32 = 10;
    pub const DEVICE_INITIALIZE: i32 = 12;
    pub const DEVICE_FINALIZE: i32 = 13;
    pub const DEVICE_LOAD: i32 = 14;
    pub const DEVICE_UNLOAD: i32 = 15;
    pub const TARGET_EMI: i32 = 33;
    pub const TARGET_DATA_OP_EMI: i32 = 34;
    pub const TARGET_SUBMIT_EMI: i32 = 35;
}

const SCOPE_BEGIN: c_int = 1;
const SCOPE_END: c_int = 2;

fn endpoint(e: Endpoint) -> c_int {
    match e {
        Endpoint::Begin => SCOPE_BEGIN,
        Endpoint::End => SCOPE_END,
    }
}

/// `ompt_target_t`: a construct with `nowait` has its `_nowait` kind (OpenMP 5.2: "ompt_target
/// or ompt_target_nowait if the nowait clause is present"; LLVM 19 never reports those).
fn target_kind(kind: ConstructKind, nowait: bool) -> c_int {
    let k = match kind {
        ConstructKind::Target => 1,
        ConstructKind::EnterData => 2,
        ConstructKind::ExitData => 3,
        ConstructKind::Update => 4,
    };
    if nowait { k + 8 } else { k }
}

/// `ompt_target_data_op_t`.
fn data_op_kind(kind: DataOpKind) -> c_int {
    match kind {
        DataOpKind::Alloc => 1,
        DataOpKind::TransferToDevice => 2,
        DataOpKind::TransferFromDevice => 3,
        DataOpKind::Delete => 4,
        DataOpKind::Associate => 5,
        DataOpKind::Disassociate => 6,
    }
}

// ---------------------------------------------------------------- connection

/// What libomp gave us when it connected.
struct Libomp {
    lookup: LookupFn,
    get_callback: Option<GetCallbackFn>,
    get_task_data: Option<GetDataFn>,
    get_target_task_data: Option<GetDataFn>,
}

static LIBOMP: OnceLock<Libomp> = OnceLock::new();
static SUBSCRIBER: OnceLock<Arc<Ompt>> = OnceLock::new();
/// Finalizers of plugins connected through `ompt_libomptarget_connect`.
static CONNECTED: Mutex<Vec<FinalizeFn>> = Mutex::new(Vec::new());

static RESULT: StartToolResult = StartToolResult {
    initialize: Some(initialize),
    finalize: Some(finalize),
    tool_data: 0,
};

unsafe extern "C" fn initialize(
    lookup: LookupFn,
    _initial_device: c_int,
    _data: *mut u64,
) -> c_int {
    let find = |name: &std::ffi::CStr| {
        // SAFETY: libomp's lookup takes a NUL-terminated name.
        unsafe { lookup(name.as_ptr()) }
    };
    // SAFETY: libomp's entry points by these names have these signatures (omp-tools.h).
    let libomp = unsafe {
        Libomp {
            lookup,
            get_callback: find(c"ompt_get_callback").map(|f| std::mem::transmute(f)),
            get_task_data: find(c"ompt_get_task_data").map(|f| std::mem::transmute(f)),
            get_target_task_data: find(c"ompt_get_target_task_data")
                .map(|f| std::mem::transmute(f)),
        }
    };
    let _ = LIBOMP.set(libomp);
    0
}

unsafe extern "C" fn finalize(_data: *mut u64) {
    // libomp finalizes the tool first: nothing may reach it from now on.
    if let Some(ompt) = SUBSCRIBER.get() {
        ompt.finalized.store(true, Ordering::Release);
    }
    if let Some(rt) = super::RUNTIME.get() {
        rt.tools.set_active(false);
    }
    let finalizers = std::mem::take(&mut *CONNECTED.lock().unwrap_or_else(|e| e.into_inner()));
    for f in finalizers {
        // SAFETY: a finalizer a plugin gave `ompt_libomptarget_connect`.
        unsafe { f(std::ptr::null_mut()) };
    }
}

type ConnectFn = unsafe extern "C" fn(*const StartToolResult);

/// Connects with libomp's OMPT (once, when the runtime is created). A tool that registered
/// target callbacks then receives them.
pub(crate) fn connect(rt: &'static Runtime) {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
    let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"ompt_libomp_connect".as_ptr()) };
    if sym.is_null() {
        return;
    }
    // SAFETY: libomp's `ompt_libomp_connect(ompt_start_tool_result_t *)`.
    let connect: ConnectFn = unsafe { std::mem::transmute(sym) };
    // SAFETY: RESULT lives for the process; libomp keeps the pointer and calls its finalize
    // at exit. No runtime lock is held here (libomp may initialise, and a tool call us).
    unsafe { connect(&RESULT) };
    let Some(libomp) = LIBOMP.get() else { return };
    let Some(get) = libomp.get_callback else {
        return;
    };
    let cb = |which: i32| {
        let mut f: Option<InterfaceFn> = None;
        // SAFETY: libomp's ompt_get_callback fills `f` when the tool registered `which`.
        let ok = unsafe { get(which, &mut f) };
        if ok != 0 { f } else { None }
    };
    // SAFETY: each callback the tool registered for a code has that code's signature.
    let callbacks = unsafe {
        Callbacks {
            device_initialize: cb(code::DEVICE_INITIALIZE).map(|f| std::mem::transmute(f)),
            device_finalize: cb(code::DEVICE_FINALIZE).map(|f| std::mem::transmute(f)),
            device_load: cb(code::DEVICE_LOAD).map(|f| std::mem::transmute(f)),
            device_unload: cb(code::DEVICE_UNLOAD).map(|f| std::mem::transmute(f)),
            target_emi: cb(code::TARGET_EMI).map(|f| std::mem::transmute(f)),
            target: cb(code::TARGET).map(|f| std::mem::transmute(f)),
            data_op_emi: cb(code::TARGET_DATA_OP_EMI).map(|f| std::mem::transmute(f)),
            data_op: cb(code::TARGET_DATA_OP).map(|f| std::mem::transmute(f)),
            submit_emi: cb(code::TARGET_SUBMIT_EMI).map(|f| std::mem::transmute(f)),
            submit: cb(code::TARGET_SUBMIT).map(|f| std::mem::transmute(f)),
        }
    };
    let ompt = Arc::new(Ompt {
        callbacks,
        finalized: AtomicBool::new(false),
        devices: RwLock::new(Vec::new()),
        tracing: AtomicBool::new(false),
        next_id: AtomicU64::new(1),
    });
    if SUBSCRIBER.set(ompt.clone()).is_ok() {
        rt.tools.subscribe(ompt);
    }
}

// ---------------------------------------------------------------- the subscriber

struct Callbacks {
    device_initialize: Option<DeviceInitializeCb>,
    device_finalize: Option<DeviceFinalizeCb>,
    device_load: Option<DeviceLoadCb>,
    device_unload: Option<DeviceUnloadCb>,
    target_emi: Option<TargetEmiCb>,
    target: Option<TargetCb>,
    data_op_emi: Option<DataOpEmiCb>,
    data_op: Option<DataOpCb>,
    submit_emi: Option<SubmitEmiCb>,
    submit: Option<SubmitCb>,
}

/// One device as tools see it: `ompt_device_t *` points at it (it lives for the process).
pub(crate) struct OmptDevice {
    pub(crate) id: i32,
    kind: CString,
    pub(crate) trace: trace::DeviceTrace,
}

/// The OMPT subscriber of the runtime's tool events.
pub(crate) struct Ompt {
    callbacks: Callbacks,
    finalized: AtomicBool,
    /// Every device initialised for the tool; never shrinks (tools keep the pointers).
    devices: RwLock<Vec<Option<Arc<OmptDevice>>>>,
    /// Some device's trace was started (constructs look at their device's trace only then).
    pub(crate) tracing: AtomicBool,
    /// The ids of the non-EMI callbacks (`target_id`, `host_op_id`), as LLVM makes them: one
    /// counter from 1, drawn only where a non-EMI callback is dispatched without its EMI
    /// form (a region's id at its begin event, an operation's at its begin), so a tool sees
    /// the numbers LLVM's runtime gives it, whichever callbacks it registered.
    next_id: AtomicU64,
}

thread_local! {
    /// What `target_data` points at for operations outside constructs (LLVM passes its
    /// thread's idle region data, whose value is 0).
    static NO_TARGET_DATA: Cell<u64> = const { Cell::new(0) };
}

impl Ompt {
    fn live(&self) -> bool {
        !self.finalized.load(Ordering::Acquire)
    }

    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The device a tool's `ompt_device_t *` names, if it is one of ours.
    pub(crate) fn device(&self, handle: *const c_void) -> Option<Arc<OmptDevice>> {
        let devices = self.devices.read().unwrap_or_else(|e| e.into_inner());
        devices
            .iter()
            .flatten()
            .find(|d| Arc::as_ptr(d).cast::<c_void>() == handle)
            .cloned()
    }

    fn device_by_id(&self, id: i32) -> Option<Arc<OmptDevice>> {
        let devices = self.devices.read().unwrap_or_else(|e| e.into_inner());
        usize::try_from(id)
            .ok()
            .and_then(|i| devices.get(i))
            .and_then(Option::clone)
    }
}

fn task_data(f: Option<GetDataFn>) -> usize {
    // SAFETY: libomp's ompt_get_task_data / ompt_get_target_task_data take no arguments.
    f.map_or(0, |f| unsafe { f() } as usize)
}

impl Subscriber for Ompt {
    fn device_initialize(&self, device: &Arc<omptarget_core::Device>) {
        if !self.live() {
            return;
        }
        let id = device.id as i32;
        let dev = match self.device_by_id(id) {
            Some(d) => d,
            None => {
                let kind = device
                    .backend()
                    .map(|b| b.compute_unit_kind())
                    .unwrap_or_default();
                let d = Arc::new(OmptDevice {
                    id,
                    kind: CString::new(kind).unwrap_or_default(),
                    trace: trace::DeviceTrace::default(),
                });
                let mut devices = self.devices.write().unwrap_or_else(|e| e.into_inner());
                let at = id.max(0) as usize;
                if devices.len() <= at {
                    devices.resize(at + 1, None);
                }
                devices[at] = Some(d.clone());
                drop(devices);
                d
            }
        };
        if let Some(cb) = self.callbacks.device_initialize {
            // SAFETY: the tool's callback, with a handle that lives for the process and our
            // lookup function.
            unsafe {
                cb(
                    id,
                    dev.kind.as_ptr(),
                    Arc::as_ptr(&dev) as *mut c_void,
                    trace::lookup,
                    std::ptr::null(),
                )
            };
        }
    }

    fn device_finalize(&self, device: i32) {
        if !self.live() {
            return;
        }
        // A trace still running hands its last records over before the device goes.
        if let Some(d) = self.device_by_id(device) {
            d.trace.stop(device);
        }
        if let Some(cb) = self.callbacks.device_finalize {
            // SAFETY: the tool's callback.
            unsafe { cb(device) };
        }
    }

    fn device_load(&self, load: &DeviceLoad) {
        if !self.live() {
            return;
        }
        if let Some(cb) = self.callbacks.device_load {
            // SAFETY: the tool's callback; as LLVM 19, no file name, offset, VMA or device
            // address (the image lives in the program's memory).
            unsafe {
                cb(
                    load.device,
                    std::ptr::null(),
                    0,
                    std::ptr::null_mut(),
                    load.bytes,
                    load.host_addr as *mut c_void,
                    std::ptr::null_mut(),
                    load.module_id,
                )
            };
        }
    }

    fn device_unload(&self, device: i32, module_id: u64) {
        if !self.live() {
            return;
        }
        if let Some(cb) = self.callbacks.device_unload {
            // SAFETY: the tool's callback.
            unsafe { cb(device, module_id) };
        }
    }

    fn construct(&self, ep: Endpoint, r: &Region) {
        if !self.live() {
            return;
        }
        let libomp = LIBOMP.get();
        if ep == Endpoint::Begin {
            r.task.store(
                task_data(libomp.and_then(|l| l.get_task_data)),
                Ordering::Relaxed,
            );
            r.target_task.store(
                task_data(libomp.and_then(|l| l.get_target_task_data)),
                Ordering::Relaxed,
            );
        }
        let kind = target_kind(r.kind, r.nowait);
        let task = r.task.load(Ordering::Relaxed) as *mut u64;
        let codeptr = r.codeptr as *const c_void;
        if let Some(cb) = self.callbacks.target_emi {
            let target_task = r.target_task.load(Ordering::Relaxed) as *mut u64;
            // SAFETY: the tool's callback; `tool_data_ptr` stays valid for the construct.
            unsafe {
                cb(
                    kind,
                    endpoint(ep),
                    r.device,
                    task,
                    target_task,
                    r.tool_data_ptr(),
                    codeptr,
                )
            };
        } else if let Some(cb) = self.callbacks.target {
            // Without the EMI form the region's word holds the runtime's id (LLVM keeps it in
            // the same `target_data`): the non-EMI data-op and submit callbacks of the
            // construct pass it as their `target_id`, as an EMI data-op callback would see it.
            if ep == Endpoint::Begin {
                // SAFETY: the region's word, valid for the construct, written between its
                // callbacks only.
                unsafe { *r.tool_data_ptr() = self.next_id() };
            }
            // SAFETY: the tool's callback.
            unsafe { cb(kind, endpoint(ep), r.device, task, r.tool_data(), codeptr) };
        }
    }

    fn data_op(&self, ep: Endpoint, r: Option<&Region>, op: &mut DataOp) {
        if !self.live() {
            return;
        }
        let kind = data_op_kind(op.kind);
        let (src, dst) = (op.src as *mut c_void, op.dst as *mut c_void);
        let codeptr = op.codeptr as *const c_void;
        if let Some(cb) = self.callbacks.data_op_emi {
            let target_task = r.map_or(0, |r| r.target_task.load(Ordering::Relaxed)) as *mut u64;
            let target_data = match r {
                Some(r) => r.tool_data_ptr(),
                None => NO_TARGET_DATA.with(|c| {
                    c.set(0);
                    c.as_ptr()
                }),
            };
            // SAFETY: the tool's callback; the pointers are valid for the call (the op's
            // word lives until its end event).
            unsafe {
                cb(
                    endpoint(ep),
                    target_task,
                    target_data,
                    &mut op.tool_data,
                    kind,
                    src,
                    op.src_device,
                    dst,
                    op.dst_device,
                    op.bytes,
                    codeptr,
                )
            };
        } else if let (Some(cb), Endpoint::Begin) = (self.callbacks.data_op, ep) {
            // LLVM's ids: a fresh operation id, and the construct's word as the target id
            // (the id of the non-EMI target callback, or what the tool set in the EMI one).
            op.tool_data = self.next_id();
            let target_id = r.map_or(0, |r| r.tool_data());
            // SAFETY: the tool's callback.
            unsafe {
                cb(
                    target_id,
                    op.tool_data,
                    kind,
                    src,
                    op.src_device,
                    dst,
                    op.dst_device,
                    op.bytes,
                    codeptr,
                )
            };
        }
    }

    fn submit(&self, ep: Endpoint, r: &Region, s: &mut Submit) {
        if !self.live() {
            return;
        }
        if let Some(cb) = self.callbacks.submit_emi {
            // SAFETY: the tool's callback.
            unsafe {
                cb(
                    endpoint(ep),
                    r.tool_data_ptr(),
                    &mut s.tool_data,
                    s.requested_teams,
                )
            };
        } else if let (Some(cb), Endpoint::Begin) = (self.callbacks.submit, ep) {
            // As for data operations: the next id of the same counter, and the construct's word.
            s.tool_data = self.next_id();
            // SAFETY: the tool's callback.
            unsafe { cb(r.tool_data(), s.tool_data, s.requested_teams) };
        }
    }

    fn traces(&self, device: i32) -> bool {
        self.tracing.load(Ordering::Relaxed)
            && self.live()
            && self.device_by_id(device).is_some_and(|d| d.trace.on())
    }

    fn record(&self, r: &TraceRecord) {
        if !self.live() {
            return;
        }
        if let Some(d) = self.device_by_id(r.device) {
            let c = &self.callbacks;
            let ids = trace::IdSource {
                target: c.target_emi.is_some() || c.target.is_some(),
                data_op: c.data_op_emi.is_some() || c.data_op.is_some(),
                submit: c.submit_emi.is_some() || c.submit.is_some(),
            };
            d.trace.push(r, d.id, ids);
        }
    }
}

/// Begins a construct for tools, when one listens: its return address is the entry point's.
pub(crate) fn begin(
    rt: &Runtime,
    ai: &mut omptarget_core::AsyncInfo,
    kind: ConstructKind,
    nowait: bool,
    loc: *const crate::ffi::Ident,
) -> Option<Arc<Region>> {
    if !ai.has_tools() {
        return None;
    }
    // SAFETY: a non-null ident_t comes from clang and lives as long as the program.
    let psource = if loc.is_null() {
        0
    } else {
        unsafe { (*loc).psource as usize }
    };
    rt.begin_construct_at(ai, kind, nowait, return_address(), psource)
}

/// Marks the thread as inside an `omp_target_*` routine for tools, when one listens.
pub(crate) fn api_call() -> Option<omptarget_core::tools::ApiCall> {
    runtime()
        .tools
        .active()
        .then(|| omptarget_core::tools::ApiCall::enter(return_address()))
}

export! {
    /// A plugin connects to our OMPT (LLVM 19's plugins did so from their own libraries):
    /// once we are connected to libomp, its initializer gets libomp's lookup function and its
    /// finalizer runs when ours does.
    fn ompt_libomptarget_connect(result: *mut StartToolResult) {
        if result.is_null() || SUBSCRIBER.get().is_none() {
            return;
        }
        let Some(libomp) = LIBOMP.get() else { return };
        // SAFETY: a non-null ompt_start_tool_result_t from the caller.
        let r = unsafe { &*result };
        if let Some(fini) = r.finalize {
            CONNECTED.lock().unwrap_or_else(|e| e.into_inner()).push(fini);
        }
        if let Some(init) = r.initialize {
            // SAFETY: the caller's initializer, as LLVM calls it.
            unsafe { init(libomp.lookup, 0, std::ptr::null_mut()) };
        }
    }
}
