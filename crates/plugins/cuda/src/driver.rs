//! The only module that calls the CUDA driver: each call returns `Result`, and a panic inside
//! cudarc's loader (a symbol missing from an old driver) becomes an error, never an unwind.

use cudarc::driver::sys;
use omptarget_plugin::{Error, ErrorKind, Result};
use std::panic::{AssertUnwindSafe, catch_unwind};

pub use sys::{CUcontext, CUdevice, CUdeviceptr, CUmodule, CUstream};

/// Runs a driver call, turning a non-success code or a loader panic into an error that names
/// the call.
pub fn call(what: &'static str, f: impl FnOnce() -> sys::CUresult) -> Result<()> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(sys::CUresult::CUDA_SUCCESS) => Ok(()),
        Ok(code) => Err(Error::new(
            if code == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                ErrorKind::OutOfMemory
            } else {
                ErrorKind::Backend
            },
            format!("{what} failed: {}", describe(code)),
        )),
        Err(_) => Err(Error::new(
            ErrorKind::Backend,
            format!("{what}: the CUDA driver lacks this entry point"),
        )),
    }
}

/// `cuStreamQuery`/`cuEventQuery`: `Ok(true)` when done, `Ok(false)` when still running.
pub fn query(what: &'static str, f: impl FnOnce() -> sys::CUresult) -> Result<bool> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(sys::CUresult::CUDA_SUCCESS) => Ok(true),
        Ok(sys::CUresult::CUDA_ERROR_NOT_READY) => Ok(false),
        Ok(code) => Err(Error::new(
            ErrorKind::Backend,
            format!("{what} failed: {}", describe(code)),
        )),
        Err(_) => Err(Error::new(
            ErrorKind::Backend,
            format!("{what}: missing entry point"),
        )),
    }
}

/// The driver's name and text for an error code.
pub fn describe(code: sys::CUresult) -> String {
    let mut name: *const std::ffi::c_char = std::ptr::null();
    let mut text: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: both calls write a pointer to a static string (or leave it null).
    let ok = catch_unwind(AssertUnwindSafe(|| unsafe {
        sys::cuGetErrorName(code, &mut name);
        sys::cuGetErrorString(code, &mut text);
    }))
    .is_ok();
    let to_str = |p: *const std::ffi::c_char| {
        if p.is_null() {
            None
        } else {
            // SAFETY: the driver returns NUL-terminated static strings.
            Some(
                unsafe { std::ffi::CStr::from_ptr(p) }
                    .to_string_lossy()
                    .into_owned(),
            )
        }
    };
    match (ok, to_str(name), to_str(text)) {
        (true, Some(n), Some(t)) => format!("{n} ({t})"),
        (true, Some(n), None) => n,
        _ => format!("CUDA error {}", code as i32),
    }
}

/// Whether the driver library can be loaded at all (cudarc's other calls panic without it).
pub fn driver_present() -> bool {
    // SAFETY: only probes for the library.
    catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false)
}

/// Sets `ctx` current on this thread unless it already is (the driver keeps the current
/// context per thread; every device operation needs its own).
pub fn make_current(ctx: CUcontext) -> Result<()> {
    thread_local! {
        static CURRENT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }
    if CURRENT.with(|c| c.get()) == ctx as usize {
        return Ok(());
    }
    // SAFETY: ctx is a retained primary context.
    call("cuCtxSetCurrent", || unsafe { sys::cuCtxSetCurrent(ctx) })?;
    CURRENT.with(|c| c.set(ctx as usize));
    Ok(())
}

pub fn attribute(dev: CUdevice, attr: sys::CUdevice_attribute) -> Result<i32> {
    let mut v = 0;
    // SAFETY: writes one int.
    call("cuDeviceGetAttribute", || unsafe {
        sys::cuDeviceGetAttribute(&mut v, attr, dev)
    })?;
    Ok(v)
}
