//! Device tracing (OpenMP 5.2 §19.6): not offered yet.

use super::{InterfaceFn, LIBOMP};
use omptarget_core::tools::TraceRecord;
use std::ffi::c_char;

/// The tracing state of one device.
#[derive(Default)]
pub(crate) struct DeviceTrace {}

impl DeviceTrace {
    pub(crate) fn on(&self) -> bool {
        false
    }
    pub(crate) fn stop(&self, _device: i32) {}
    pub(crate) fn push(&self, _r: &TraceRecord, _emi: bool) {}
}

/// The lookup function given to `ompt_callback_device_initialize`: libomp's entry points.
pub(crate) unsafe extern "C" fn lookup(name: *const c_char) -> Option<InterfaceFn> {
    let libomp = LIBOMP.get()?;
    // SAFETY: forwarded to libomp's lookup with the tool's NUL-terminated name.
    unsafe { (libomp.lookup)(name) }
}
