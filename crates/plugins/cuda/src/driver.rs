//! The only module that calls the CUDA driver: each call returns `Result`, and a panic inside
//! cudarc's loader (a symbol missing from an old driver) becomes an error, never an unwind.

use cudarc::driver::sys;
use omptarget_plugin::{Error, ErrorKind, Result};
use std::panic::{AssertUnwindSafe, catch_unwind};

pub use sys::{CUcontext, CUdevice, CUdeviceptr, CUmodule, CUstream};

/// Runs a driver call, turning a non-success code or a loader panic into an error that names
/// the call.
pub fn call(what: &'static str, f: impl FnOnce() -> sys::CUresult) -> Result<()> {
    match guarded(what, f) {
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
    match guarded(what, f) {
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

/// Runs driver call `what`, timed under `OMPTARGET_RS_PROFILE=1`, with a panic inside cudarc's
/// loader caught (`Err`).
#[inline]
fn guarded(
    what: &'static str,
    f: impl FnOnce() -> sys::CUresult,
) -> std::thread::Result<sys::CUresult> {
    profile::timed(what, || catch_unwind(AssertUnwindSafe(f)))
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
#[inline]
pub fn make_current(ctx: CUcontext) -> Result<()> {
    if CURRENT.get() == ctx as usize {
        return Ok(());
    }
    set_current(ctx)
}

thread_local! {
    /// The context this thread made current last ([`make_current`]).
    static CURRENT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cold]
fn set_current(ctx: CUcontext) -> Result<()> {
    // SAFETY: ctx is a retained primary context.
    call("cuCtxSetCurrent", || unsafe { sys::cuCtxSetCurrent(ctx) })?;
    CURRENT.set(ctx as usize);
    Ok(())
}

/// Whether `ptr` is host memory the driver does not know (neither pinned, registered nor
/// managed): copies to and from it go through the driver's slower pageable path.
pub fn is_pageable(ptr: usize) -> bool {
    let mut ty = 0u32;
    let mut attr = sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    let mut data: [*mut std::ffi::c_void; 1] = [(&raw mut ty).cast()];
    // SAFETY: writes one unsigned int. Unlike cuPointerGetAttribute, this call succeeds for
    // memory CUDA does not know, leaving the type 0, so tools such as compute-sanitizer see
    // no failed API call.
    let r = guarded("cuPointerGetAttributes(MEMORY_TYPE)", || unsafe {
        sys::cuPointerGetAttributes(1, &mut attr, data.as_mut_ptr(), ptr as CUdeviceptr)
    });
    !matches!(r, Ok(sys::CUresult::CUDA_SUCCESS)) || ty == 0
}

/// Whether host address `ptr` is memory the driver maps for the device: pinned or
/// registered host memory, or managed memory.
pub fn mapped_for_device(ptr: usize) -> bool {
    let (mut ty, mut managed) = (0u32, 0u32);
    let mut attrs = [
        sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED,
    ];
    let mut data: [*mut std::ffi::c_void; 2] = [(&raw mut ty).cast(), (&raw mut managed).cast()];
    // SAFETY: writes two unsigned ints; unknown memory leaves them 0 (see `is_pageable`).
    let r = catch_unwind(AssertUnwindSafe(|| unsafe {
        sys::cuPointerGetAttributes(2, attrs.as_mut_ptr(), data.as_mut_ptr(), ptr as CUdeviceptr)
    }));
    matches!(r, Ok(sys::CUresult::CUDA_SUCCESS))
        && (managed != 0 || ty == sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32)
}

/// Whether NVIDIA's compute-sanitizer is attached to this process: its injection library
/// (`libsanitizer-collection.so` and friends) is loaded once the driver initialised. The
/// sanitizer does not see what `cuMemcpyBatchAsync` writes (measured on an H200, driver 580:
/// a kernel reading memory filled by a batch is reported by initcheck as reading
/// uninitialised memory, the same copies made one by one are not; `omptarget-suite probe
/// batch-copy`), so batching is left off while it watches (docs/GPU.md).
pub fn compute_sanitizer_attached() -> bool {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        found: *mut std::ffi::c_void,
    ) -> std::ffi::c_int {
        // SAFETY: the loader passes a valid info record; dlpi_name is null or a C string.
        let name = unsafe { (*info).dlpi_name };
        if !name.is_null() {
            // SAFETY: see above.
            let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_bytes();
            let file = name.rsplit(|&b| b == b'/').next().unwrap_or(name);
            if file.starts_with(b"libsanitizer-") {
                // SAFETY: `found` is the bool passed below.
                unsafe { *found.cast::<bool>() = true };
                return 1;
            }
        }
        0
    }
    let mut found = false;
    // SAFETY: dl_iterate_phdr calls `visit` with the loader's lock held; `visit` only reads.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut found).cast()) };
    found
}

pub fn attribute(dev: CUdevice, attr: sys::CUdevice_attribute) -> Result<i32> {
    let mut v = 0;
    // SAFETY: writes one int.
    call("cuDeviceGetAttribute", || unsafe {
        sys::cuDeviceGetAttribute(&mut v, attr, dev)
    })?;
    Ok(v)
}

/// A stream of the current context that does not synchronise with the legacy default stream
/// (every stream the plugin queues work on).
pub fn create_stream() -> Result<CUstream> {
    let mut s: CUstream = std::ptr::null_mut();
    // SAFETY: creates a stream in the current context, written to a local.
    call("cuStreamCreate", || unsafe {
        sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)
    })?;
    Ok(s)
}

/// An event of the current context without timing (for ordering and waits); with `sleeping`,
/// `cuEventSynchronize` on it sleeps instead of following the context's scheduling (wait.rs
/// polls before it sleeps).
pub fn create_event(sleeping: bool) -> Result<sys::CUevent> {
    let mut e: sys::CUevent = std::ptr::null_mut();
    let mut flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
    if sleeping {
        flags |= sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC as u32;
    }
    // SAFETY: creates an event without timing, written to a local.
    call("cuEventCreate", || unsafe {
        sys::cuEventCreate(&mut e, flags)
    })?;
    Ok(e)
}

/// `OMPTARGET_RS_PROFILE=1`: host time spent in each driver entry point, printed at exit
/// (before the table of locks found held, `omptarget_plugin::contention`).
pub mod profile {
    use omptarget_plugin::contention::{Lock, Site};
    use std::collections::HashMap;
    use std::time::Instant;

    /// Taken after every driver call while profiling: itself a place where threads meet, so
    /// counted like the others (a call's time is taken before it, so its waits show only here).
    static TOTALS_SITE: Site = Site::new("cuda: driver-call profile (profiling only)");
    /// Per entry point: calls, total and longest call in ns, and the calls by duration.
    type Totals = HashMap<&'static str, Calls>;
    static TOTALS: Lock<Option<Totals>> = Lock::new(&TOTALS_SITE, None);

    /// One entry point's calls: total and longest in ns, and in `by_log2[k]` how many
    /// took at least 2^k and less than 2^(k+1) ns (the last class: from 2^31 ns up), so a
    /// median and a 99th percentile can be told apart from the mean (a uniformly slower
    /// process and a few stalls look alike in a mean).
    #[derive(Default)]
    pub(super) struct Calls {
        total: u128,
        max: u128,
        by_log2: [u64; 32],
    }

    impl Calls {
        pub(super) fn add(&mut self, ns: u128) {
            self.total += ns;
            self.max = self.max.max(ns);
            let k = (127 - ns.max(1).leading_zeros() as usize).min(31);
            self.by_log2[k] += 1;
        }

        /// How many calls.
        fn n(&self) -> u64 {
            self.by_log2.iter().sum()
        }

        /// The upper end of the duration class holding the `q` quantile (0 < q <= 1), in ns
        /// (the longest call for the last class).
        pub(super) fn quantile(&self, q: f64) -> u128 {
            let want = ((self.n() as f64 * q).ceil() as u64).max(1);
            let mut seen = 0;
            for (k, &c) in self.by_log2.iter().enumerate() {
                seen += c;
                if seen >= want {
                    return if k == 31 { self.max } else { 1u128 << (k + 1) };
                }
            }
            self.max
        }
    }

    fn enabled() -> bool {
        use std::sync::atomic::{AtomicBool, Ordering};
        static ADDED: AtomicBool = AtomicBool::new(false);
        let on = omptarget_plugin::contention::profile::enabled();
        if on && !ADDED.load(Ordering::Relaxed) {
            ADDED.store(true, Ordering::Relaxed);
            omptarget_plugin::contention::profile::at_exit(print_at_exit);
        }
        on
    }

    fn start() -> Option<Instant> {
        enabled().then(Instant::now)
    }

    /// `f()`, counted under `what` while profiling.
    #[inline]
    pub fn timed<R>(what: &'static str, f: impl FnOnce() -> R) -> R {
        let started = start();
        let r = f();
        record(what, started);
        r
    }

    /// Counts a call that began at `started` (`None`: not profiling, nothing to do).
    #[inline]
    fn record(what: &'static str, started: Option<Instant>) {
        if let Some(t) = started {
            add(what, t);
        }
    }

    #[cold]
    fn add(what: &'static str, t: Instant) {
        let ns = t.elapsed().as_nanos();
        let mut totals = TOTALS.lock();
        totals
            .get_or_insert_with(HashMap::new)
            .entry(what)
            .or_default()
            .add(ns);
    }

    fn print_at_exit() {
        let totals = TOTALS.lock();
        let Some(t) = totals.as_ref() else { return };
        let mut rows: Vec<_> = t.iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1.total));
        eprintln!(
            "omptarget-rs profile (host time in CUDA driver calls; p50/p99: the upper end of \
             the power-of-two class holding them):"
        );
        let us = |ns: u128| ns as f64 / 1e3;
        for (name, c) in rows {
            eprintln!(
                "  {name:<40} {:>8} calls {:>12.1} us total {:>9.2} us/call {:>9.1} us max \
                 p50 <{:.1} p99 <{:.1} us",
                c.n(),
                us(c.total),
                us(c.total) / c.n() as f64,
                us(c.max),
                us(c.quantile(0.5)),
                us(c.quantile(0.99))
            );
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_profile_tells_the_median_from_the_tail() {
        let mut c = super::profile::Calls::default();
        // 98 calls of 3 us and two of 5 ms: the mean is 103 us, the median class 2-4 us.
        for _ in 0..98 {
            c.add(3_000);
        }
        c.add(5_000_000);
        c.add(5_000_000);
        assert_eq!(c.quantile(0.5), 4096);
        assert_eq!(c.quantile(0.98), 4096);
        assert_eq!(c.quantile(0.99), 1 << 23);
        assert_eq!(c.quantile(1.0), 1 << 23);
        let mut one = super::profile::Calls::default();
        one.add(0);
        assert_eq!(one.quantile(0.5), 2);
    }

    #[test]
    fn a_loaded_sanitizer_library_is_noticed() {
        assert!(
            !super::compute_sanitizer_attached(),
            "no sanitizer in a test"
        );
        // Stand in for compute-sanitizer's injection library: any shared object with its name.
        let dir = std::env::temp_dir().join(format!("omptarget-san-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let src = dir.join("s.c");
        let lib = dir.join("libsanitizer-collection.so");
        std::fs::write(&src, "int omptarget_test_symbol(void) { return 1; }\n").expect("write");
        let ok = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(&lib)
            .arg(&src)
            .status()
            .expect("cc runs");
        assert!(ok.success());
        // SAFETY: loads a trivial library we just built; it stays loaded for the test.
        let handle = unsafe { libloading::Library::new(&lib) }.expect("dlopen");
        assert!(super::compute_sanitizer_attached());
        std::mem::forget(handle);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
