//! Where the runtime's life cycle meets the tools: devices registered and finalised, images
//! loaded and unloaded, constructs begun and ended.

use super::Runtime;
use crate::device::{Device, lock};
use crate::error::Result;
use crate::ops::AsyncInfo;
use crate::tools::{ConstructKind, DataOpKind, DeviceLoad, Region, ToolCtx};
use std::sync::Arc;
use std::sync::atomic::Ordering;

impl Runtime {
    /// Devices added by a registration (all devices again after a finalisation) are
    /// initialised for tools.
    pub(crate) fn tools_devices_registered(&self, new: &[Arc<Device>]) {
        if !self.tools.active() {
            return;
        }
        let all;
        let devices = if self.tools.finalized.swap(false, Ordering::AcqRel) {
            all = self.devices();
            &all[..]
        } else {
            new
        };
        for d in devices.iter().filter(|d| d.backend().is_ok()) {
            self.tools.device_initialize(d);
        }
    }

    /// Images loaded on `device` (binary key, the image's address in the program, its size).
    pub(crate) fn tools_images_loaded(&self, device: &Device, loaded: &[(usize, usize, usize)]) {
        if loaded.is_empty() || !self.tools.active() {
            return;
        }
        for &(key, host_addr, bytes) in loaded {
            let module_id = lock(&self.tools.modules).load(device.id, key);
            self.tools.device_load(&DeviceLoad {
                device: device.id as i32,
                host_addr,
                bytes,
                module_id,
            });
        }
    }

    /// Binary `key`'s image left `device`.
    pub(crate) fn tools_image_unloaded(&self, device: &Device, key: usize) {
        let id = lock(&self.tools.modules).unload(device.id, key);
        if let Some(id) = id {
            self.tools.device_unload(device.id as i32, id);
        }
    }

    /// The last binary went away: every initialised device is finalised for tools.
    pub(crate) fn tools_devices_finalized(&self) {
        if !self.tools.active() {
            return;
        }
        self.tools.finalized.store(true, Ordering::Release);
        for d in self.devices() {
            if d.backend().is_ok() {
                self.tools.device_finalize(d.id as i32);
            }
        }
        self.tools.finish();
    }

    /// The tool state of a new AsyncInfo on `dev` (out of line: the hot path has no tool).
    #[cold]
    #[inline(never)]
    pub(crate) fn tool_ctx(&self, dev: &Device) -> Option<Box<ToolCtx>> {
        Some(ToolCtx::new(
            self.tools.clone(),
            self.initial_device() as i32,
            dev.id as i32,
        ))
    }

    /// Begins a construct for tools (`None` when no tool listens): its begin event is
    /// dispatched and `ai`'s operations belong to it. The caller ends it with
    /// [`Runtime::end_construct`] when the entry point returns.
    pub fn begin_construct(
        &self,
        ai: &mut AsyncInfo,
        kind: ConstructKind,
        nowait: bool,
        codeptr: usize,
    ) -> Option<Arc<Region>> {
        self.begin_construct_at(ai, kind, nowait, codeptr, 0)
    }

    /// [`Runtime::begin_construct`] with the construct's location (`ident_t::psource`, 0 when
    /// unknown), which profiles name constructs by.
    pub fn begin_construct_at(
        &self,
        ai: &mut AsyncInfo,
        kind: ConstructKind,
        nowait: bool,
        codeptr: usize,
        loc: usize,
    ) -> Option<Arc<Region>> {
        if !self.tools.active() {
            return None;
        }
        let device = ai.device_id() as i32;
        let tool = ai.tool.get_or_insert_with(|| {
            ToolCtx::new(self.tools.clone(), self.initial_device() as i32, device)
        });
        let region = self
            .tools
            .begin_construct(kind, nowait, device, codeptr, loc);
        tool.set_region(region.clone());
        Some(region)
    }

    /// Ends a construct begun with [`Runtime::begin_construct`].
    #[inline]
    pub fn end_construct(&self, region: Option<Arc<Region>>) {
        if let Some(r) = region {
            self.tools.end_construct(&r);
        }
    }

    /// A data operation of an `omp_target_*` routine on `dev` (no queue): `f` does it and
    /// returns the address an allocation got. `(src, dst, bytes)` are the event's fields, the
    /// device numbers follow from `kind` as LLVM 19 reports them.
    pub(crate) fn api_op(
        &self,
        dev: &Device,
        kind: DataOpKind,
        (src, dst, bytes): (usize, usize, usize),
        result: &mut usize,
        f: impl FnOnce() -> Result<usize>,
    ) -> Result<()> {
        if !self.tools.active() {
            *result = f()?;
            return Ok(());
        }
        let host = self.initial_device() as i32;
        let id = dev.id as i32;
        let (src_dev, dst_dev) = match kind {
            DataOpKind::Delete => (id, -1),
            DataOpKind::TransferFromDevice => (id, host),
            _ => (host, id),
        };
        let mut t = ToolCtx::new(self.tools.clone(), host, id);
        let backend = dev.backend()?;
        let op = t.op_begin(backend, None, kind, src, src_dev, dst, dst_dev, bytes);
        let r = f();
        let got = matches!(kind, DataOpKind::Alloc).then(|| *r.as_ref().unwrap_or(&0));
        t.op_end(backend, None, op, got);
        t.complete(Some(backend));
        *result = r?;
        Ok(())
    }
}
