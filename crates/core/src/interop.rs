//! Interop objects (OpenMP 5.2 §14): a program's handle on a device's own API (its device,
//! context and, for `targetsync`, a queue on which the program may put foreign work).
//!
//! Ordering. The queue of a `targetsync` object is taken out of the device's queue pool for
//! the object's life, so no construct of ours ever enqueues work on it, and it returns to the
//! pool only once drained. `interop use` and `interop destroy` complete the program's foreign
//! work on the queue ([`Interop::complete_foreign_work`]) before they complete themselves (the
//! C boundary runs that in a deferred task for `nowait`): a later construct that depends on
//! them starts only then, so its copies, its kernels and its stream-ordered frees, all
//! enqueued when it starts, come after the foreign work. LLVM 19 does not wait there.

use crate::device::{Device, lock};
use crate::error::{DeviceContext, Error, Result};
use crate::runtime::Runtime;
use omptarget_plugin::{ForeignRuntime, QueueId};
use std::ffi::CStr;
use std::sync::Arc;

/// The interop type an `init` clause asks for (clang's `kmp_interop_type_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InteropKind {
    /// `init(target: ...)`: the device's handles.
    Target,
    /// `init(targetsync: ...)`: the handles and a queue for foreign work.
    TargetSync,
}

impl InteropKind {
    /// From clang's `kmp_interop_type_t` (1 device/`target`, 2 `targetsync`).
    pub fn from_clang(ty: i32) -> Option<Self> {
        match ty {
            1 => Some(InteropKind::Target),
            2 => Some(InteropKind::TargetSync),
            _ => None,
        }
    }

    /// From LLVM 22's `kmp_interop_type_t` of `__tgt_interop_get` (0 `target`, 1
    /// `targetsync`).
    pub fn from_llvm22(ty: i32) -> Option<Self> {
        match ty {
            0 => Some(InteropKind::Target),
            1 => Some(InteropKind::TargetSync),
            _ => None,
        }
    }
}

/// `omp_ifr_cuda` and `omp_ifr_cuda_driver` (OpenMP Additional Definitions).
const FR_CUDA: i64 = 1;
const FR_CUDA_DRIVER: i64 = 2;

/// The foreign runtime an object presents for a `prefer_type` list of foreign-runtime ids: the
/// first the device supports, else its own. A CUDA driver device also serves the CUDA runtime
/// API (`omp_ifr_cuda`): its primary context is the runtime API's, its streams are
/// `cudaStream_t`s and its ordinal is the runtime's device number.
pub fn select_foreign(own: &ForeignRuntime, prefers: &[i64]) -> ForeignRuntime {
    for &p in prefers {
        if p == own.id {
            return own.clone();
        }
        if p == FR_CUDA && own.id == FR_CUDA_DRIVER {
            return ForeignRuntime {
                id: FR_CUDA,
                name: c"cuda",
                device_type: c"int (cudaGetDevice's device number)",
                context_type: c"CUcontext (the device's primary context)",
                queue_type: c"cudaStream_t",
                ..own.clone()
            };
        }
    }
    own.clone()
}

/// A completion callback of `ompx_interop_add_completion_callback` (LLVM 22): the C function
/// `void (*)(omp_interop_t, void *)` and its data, as addresses; the C boundary calls them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompletionCallback {
    pub function: usize,
    pub data: usize,
}

/// `omp_interop_property_t`: the properties every interop object has (OpenMP 5.2 Table 14.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Property {
    FrId = -1,
    FrName = -2,
    Vendor = -3,
    VendorName = -4,
    DeviceNum = -5,
    Platform = -6,
    Device = -7,
    DeviceContext = -8,
    TargetSync = -9,
}

/// `omp_interop_rc_t`: what a property query returns in its `rc` argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rc {
    NoValue = 1,
    Success = 0,
    Empty = -1,
    OutOfRange = -2,
    TypeInt = -3,
    TypePtr = -4,
    TypeStr = -5,
    Other = -6,
}

/// The C type of a property, as the query routines see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertyType {
    Int,
    Ptr,
    Str,
}

/// A property's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    Ptr(usize),
    Str(&'static CStr),
}

/// Implementation-defined properties (ids 0 and up): none.
pub const NUM_IMPLEMENTATION_PROPERTIES: i32 = 0;

impl Property {
    pub fn from_id(id: i32) -> Option<Self> {
        use Property::*;
        Some(match id {
            -1 => FrId,
            -2 => FrName,
            -3 => Vendor,
            -4 => VendorName,
            -5 => DeviceNum,
            -6 => Platform,
            -7 => Device,
            -8 => DeviceContext,
            -9 => TargetSync,
            _ => return None,
        })
    }

    /// The property's name (OpenMP 5.2 Table 14.1), for `omp_get_interop_name`.
    pub fn name(self) -> &'static CStr {
        use Property::*;
        match self {
            FrId => c"fr_id",
            FrName => c"fr_name",
            Vendor => c"vendor",
            VendorName => c"vendor_name",
            DeviceNum => c"device_num",
            Platform => c"platform",
            Device => c"device",
            DeviceContext => c"device_context",
            TargetSync => c"targetsync",
        }
    }

    /// The routine that returns it. `device` is an integer (`CUdevice`), as the OpenMP
    /// Additional Definitions give it for CUDA; `omp_get_interop_ptr` also returns it, as LLVM
    /// 19 does (see [`Interop::get`]).
    pub fn ty(self) -> PropertyType {
        use Property::*;
        match self {
            FrId | Vendor | DeviceNum | Device => PropertyType::Int,
            FrName | VendorName => PropertyType::Str,
            Platform | DeviceContext | TargetSync => PropertyType::Ptr,
        }
    }

    /// The type's description for objects of no foreign runtime (`omp_interop_none`).
    fn generic_type_desc(self) -> &'static CStr {
        use Property::*;
        match self {
            FrId => c"omp_interop_fr_t (intptr_t): the foreign runtime's id",
            FrName | VendorName => c"const char *",
            Vendor => c"intptr_t: the vendor's id",
            DeviceNum => c"int: the OpenMP device number",
            Platform | DeviceContext | TargetSync => c"void *",
            Device => c"intptr_t",
        }
    }
}

impl Rc {
    /// `omp_get_interop_rc_desc`.
    pub fn description(code: i32) -> Option<&'static CStr> {
        Some(match code {
            1 => c"parameters valid, no meaningful value available",
            0 => c"successful",
            -1 => c"the interop object is omp_interop_none",
            -2 => c"the property id is out of range",
            -3 => c"the property is an integer: use omp_get_interop_int",
            -4 => c"the property is a pointer: use omp_get_interop_ptr",
            -5 => c"the property is a string: use omp_get_interop_str",
            -6 => c"other error",
            _ => return None,
        })
    }

    fn for_type(ty: PropertyType) -> Self {
        match ty {
            PropertyType::Int => Rc::TypeInt,
            PropertyType::Ptr => Rc::TypePtr,
            PropertyType::Str => Rc::TypeStr,
        }
    }
}

/// An interop object. The C boundary hands programs an `Arc` of it as `omp_interop_t`.
pub struct Interop {
    device: Arc<Device>,
    kind: InteropKind,
    foreign: ForeignRuntime,
    /// The `targetsync` queue (out of the device's pool while the object lives).
    queue: Option<QueueId>,
    /// Callbacks to run when the object's foreign work next completes (then forgotten).
    callbacks: std::sync::Mutex<Vec<CompletionCallback>>,
}

impl std::fmt::Debug for Interop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interop")
            .field("device", &self.device.id)
            .field("kind", &self.kind)
            .field("queue", &self.queue)
            .finish()
    }
}

impl Interop {
    /// The OpenMP device number.
    pub fn device_num(&self) -> usize {
        self.device.id
    }

    pub fn kind(&self) -> InteropKind {
        self.kind
    }

    /// The `targetsync` queue.
    pub fn queue(&self) -> Option<QueueId> {
        self.queue
    }

    /// The foreign runtime's id (`omp_ipr_fr_id`).
    pub fn foreign_id(&self) -> i64 {
        self.foreign.id
    }

    /// Adds a callback for the next completion of the object's foreign work (LLVM 22's
    /// `ompx_interop_add_completion_callback`).
    pub fn add_completion_callback(&self, cb: CompletionCallback) {
        self.callbacks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(cb);
    }

    /// The callbacks to run now that the foreign work has completed, in the order they were
    /// added; the object forgets them.
    pub fn take_completion_callbacks(&self) -> Vec<CompletionCallback> {
        std::mem::take(&mut *self.callbacks.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Completes the object's foreign work ([`Interop::complete_foreign_work`]) and hands back
    /// the callbacks to run now; when the wait fails they stay for the next completion. Every
    /// completion goes through here: `use`, `destroy`/`release`, a synchronisation point.
    pub fn complete(&self) -> Result<Vec<CompletionCallback>> {
        self.complete_foreign_work()?;
        Ok(self.take_completion_callbacks())
    }

    /// Waits for the work the program queued on the `targetsync` queue (nothing to do for a
    /// `target` object): `interop use` and `interop destroy` complete only after it.
    pub fn complete_foreign_work(&self) -> Result<()> {
        let Some(q) = self.queue else { return Ok(()) };
        self.device.backend()?.synchronize(q).on(
            self.device.id,
            "waiting for the work queued on an interop object",
        )
    }

    /// A property's value and the query's `rc` for a routine returning `want`: the value
    /// when the property has that type and a value; else `None` with the reason.
    pub fn get(&self, id: i32, want: PropertyType) -> (Option<Value>, Rc) {
        let Some(p) = Property::from_id(id) else {
            return (None, Rc::OutOfRange);
        };
        let value = self.value(p);
        match (p.ty(), want, value) {
            (t, w, Some(v)) if t == w => (Some(v), Rc::Success),
            // LLVM 19 returns the device handle from omp_get_interop_ptr: programs written
            // for it keep working.
            (PropertyType::Int, PropertyType::Ptr, Some(Value::Int(d)))
                if p == Property::Device =>
            {
                (Some(Value::Ptr(d as usize)), Rc::Success)
            }
            (t, w, _) if t != w => (None, Rc::for_type(t)),
            _ => (None, Rc::NoValue),
        }
    }

    fn value(&self, p: Property) -> Option<Value> {
        let f = &self.foreign;
        match p {
            Property::FrId => Some(Value::Int(f.id)),
            Property::FrName => Some(Value::Str(f.name)),
            Property::Vendor => Some(Value::Int(f.vendor)),
            Property::VendorName => Some(Value::Str(f.vendor_name)),
            Property::DeviceNum => Some(Value::Int(self.device.id as i64)),
            Property::Platform => f.platform.map(Value::Ptr),
            Property::Device => f.device.map(Value::Int),
            Property::DeviceContext => f.device_context.map(Value::Ptr),
            Property::TargetSync => self.queue.map(|q| Value::Ptr(q.0)),
        }
    }

    /// `omp_get_interop_type_desc`: the C type of the property's value in this object's
    /// foreign runtime.
    pub fn type_desc(this: Option<&Self>, id: i32) -> Option<&'static CStr> {
        let p = Property::from_id(id)?;
        let Some(i) = this else {
            return Some(p.generic_type_desc());
        };
        let f = &i.foreign;
        Some(match p {
            Property::Platform => f.platform_type,
            Property::Device => f.device_type,
            Property::DeviceContext => f.context_type,
            Property::TargetSync => f.queue_type,
            _ => p.generic_type_desc(),
        })
    }
}

impl Drop for Interop {
    fn drop(&mut self) {
        let Some(q) = self.queue.take() else { return };
        // The queue goes back to the pool drained; one that cannot be waited for is destroyed
        // instead (a later construct must never inherit foreign work it knows nothing of).
        match self.device.backend() {
            Ok(b) if b.synchronize(q).is_ok() => self.device.release_queue(q),
            Ok(b) => {
                let _ = b.destroy_queue(q);
            }
            Err(_) => {}
        }
    }
}

/// A runtime-owned interop object of [`Runtime::interop_implicit`].
pub(crate) struct ImplicitInterop {
    gtid: i32,
    object: Arc<Interop>,
    /// Used since the thread's last synchronisation point.
    dirty: bool,
}

impl Runtime {
    /// `interop init`: an interop object of `kind` for device `device_id` (−1: the default
    /// device). Fails when the device has no foreign runtime (the host device, as in LLVM 19),
    /// names no device, or offloading is disabled.
    pub fn interop_init(&self, device_id: i64, kind: InteropKind) -> Result<Arc<Interop>> {
        self.interop_init_preferring(device_id, kind, &[])
    }

    /// `interop init` with a `prefer_type` list of foreign-runtime ids (LLVM 22's
    /// `__tgt_interop_get`): the object presents the first the device supports
    /// ([`select_foreign`]).
    pub fn interop_init_preferring(
        &self,
        device_id: i64,
        kind: InteropKind,
        prefers: &[i64],
    ) -> Result<Arc<Interop>> {
        let (device, foreign) = self.interop_device(device_id, prefers)?;
        self.new_interop(device, kind, foreign)
    }

    /// The device an interop object for `device_id` (−1: the default device) belongs to, and
    /// the foreign runtime it presents for `prefers`.
    fn interop_device(
        &self,
        device_id: i64,
        prefers: &[i64],
    ) -> Result<(Arc<Device>, ForeignRuntime)> {
        if self.policy() == crate::runtime::Policy::Disabled {
            return Err(Error::InvalidArgument(
                "offloading is disabled: no device for an interop object".into(),
            ));
        }
        let id = if device_id == -1 {
            self.default_device()
        } else {
            device_id
        };
        let device = self.device_unloaded(id)?;
        let Some(own) = device.backend()?.foreign_runtime() else {
            return Err(Error::NoForeignRuntime { device: device.id });
        };
        let foreign = select_foreign(&own, prefers);
        Ok((device, foreign))
    }

    /// A live object (its `targetsync` queue out of the device's pool).
    fn new_interop(
        &self,
        device: Arc<Device>,
        kind: InteropKind,
        foreign: ForeignRuntime,
    ) -> Result<Arc<Interop>> {
        let queue = match kind {
            InteropKind::TargetSync => Some(device.acquire_queue()?),
            InteropKind::Target => None,
        };
        let interop = Arc::new(Interop {
            device,
            kind,
            foreign,
            queue,
            callbacks: std::sync::Mutex::new(Vec::new()),
        });
        lock(&self.interops).insert(Arc::as_ptr(&interop) as usize);
        Ok(interop)
    }

    /// An object for a construct that creates one implicitly (LLVM 22's `dispatch`, the
    /// `implicit` flag of `__tgt_interop_get`): the runtime owns it, one per thread (`gtid`),
    /// device, kind and foreign runtime, reused while it lives and completed at the thread's
    /// synchronisation points ([`Runtime::interop_target_sync`]). Returns its handle.
    pub fn interop_implicit(
        &self,
        gtid: i32,
        device_id: i64,
        kind: InteropKind,
        prefers: &[i64],
    ) -> Result<usize> {
        // Found before the table's lock is taken (finding it may initialise the device).
        let (device, foreign) = self.interop_device(device_id, prefers)?;
        if let Some(e) = lock(&self.implicit_interops).iter_mut().find(|e| {
            e.gtid == gtid
                && e.object.device.id == device.id
                && e.object.kind == kind
                && e.object.foreign.id == foreign.id
        }) {
            e.dirty = true;
            return Ok(Arc::as_ptr(&e.object) as usize);
        }
        let object = self.new_interop(device, kind, foreign)?;
        let handle = Arc::as_ptr(&object) as usize;
        // The live set's reference (what a program's handle would hold) is the runtime's.
        std::mem::forget(object.clone());
        lock(&self.implicit_interops).push(ImplicitInterop {
            gtid,
            object,
            dirty: true,
        });
        Ok(handle)
    }

    /// A thread's synchronisation point (LLVM 22's `__tgt_target_sync`, from libomp's
    /// `taskwait` and barriers): the implicit objects it used since the last one complete
    /// ([`Interop::complete`]). Returns each one's handle with the callbacks to run.
    pub fn interop_target_sync(&self, gtid: i32) -> Vec<(usize, Result<Vec<CompletionCallback>>)> {
        let dirty: Vec<Arc<Interop>> = lock(&self.implicit_interops)
            .iter_mut()
            .filter(|e| e.gtid == gtid && e.dirty)
            .map(|e| {
                e.dirty = false;
                e.object.clone()
            })
            .collect();
        // The waits happen outside the lock (they may block on the device).
        dirty
            .into_iter()
            .map(|o| (Arc::as_ptr(&o) as usize, o.complete()))
            .collect()
    }

    /// The interop object at `handle` (an [`Arc::into_raw`] of [`Runtime::interop_init`]'s
    /// result), if it is one that lives: `None` for `omp_interop_none`, a destroyed object
    /// or anything else.
    pub fn interop(&self, handle: usize) -> Option<Arc<Interop>> {
        let live = lock(&self.interops);
        if handle == 0 || !live.contains(&handle) {
            return None;
        }
        let ptr = handle as *const Interop;
        // SAFETY: `handle` is in the live set, so it came from Arc::into_raw of an object
        // whose handle reference has not been given back ([`Runtime::interop_release`]
        // removes it first, under the same lock).
        unsafe {
            Arc::increment_strong_count(ptr);
            Some(Arc::from_raw(ptr))
        }
    }

    /// Takes back the program's reference of a live object (`interop destroy`), which is no
    /// longer found by [`Runtime::interop`].
    pub fn interop_release(&self, handle: usize) -> Option<Arc<Interop>> {
        let mut live = lock(&self.interops);
        if handle == 0 || !live.remove(&handle) {
            return None;
        }
        // An implicit object released by hand leaves the runtime's table too.
        lock(&self.implicit_interops).retain(|e| Arc::as_ptr(&e.object) as usize != handle);
        // SAFETY: the handle was live: the program's reference, taken back once.
        Some(unsafe { Arc::from_raw(handle as *const Interop) })
    }

    /// `interop destroy` with no `nowait`: completes the object (its callbacks come back to
    /// run), then drops it (its queue returns to the pool).
    pub fn interop_destroy(&self, interop: Arc<Interop>) -> Result<Vec<CompletionCallback>> {
        let r = interop.complete();
        drop(interop);
        r
    }
}
