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

use crate::device::Device;
use crate::error::{DeviceContext, Result};
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
    /// A new object on `device`; a `targetsync` one takes a queue out of the device's pool
    /// until it is dropped.
    pub(crate) fn new(
        device: Arc<Device>,
        kind: InteropKind,
        foreign: ForeignRuntime,
    ) -> Result<Self> {
        let queue = match kind {
            InteropKind::TargetSync => Some(device.acquire_queue()?),
            InteropKind::Target => None,
        };
        Ok(Self {
            device,
            kind,
            foreign,
            queue,
            callbacks: std::sync::Mutex::new(Vec::new()),
        })
    }

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
    pub(crate) gtid: i32,
    pub(crate) object: Arc<Interop>,
    /// Used since the thread's last synchronisation point.
    pub(crate) dirty: bool,
}
