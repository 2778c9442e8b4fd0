//! The runtime's interop routines (`interop init`, `use`, `destroy`, LLVM 22's implicit
//! objects): finding the device, and the sets of live objects. The objects themselves are
//! `crate::interop`'s.

use super::{Policy, Runtime};
use crate::device::{Device, lock};
use crate::error::{Error, Result};
use crate::interop::{CompletionCallback, ImplicitInterop, Interop, InteropKind, select_foreign};
use omptarget_plugin::ForeignRuntime;
use std::sync::Arc;

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
        if self.policy() == Policy::Disabled {
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
        // The foreign runtime works on device memory by address: what parked constructs
        // queued completes first (parked.rs).
        let _ = self.complete_parked(Some(device.id));
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
        let interop = Arc::new(Interop::new(device, kind, foreign)?);
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
                && e.object.device_num() == device.id
                && e.object.kind() == kind
                && e.object.foreign_id() == foreign.id
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
