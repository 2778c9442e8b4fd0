//! The raw floor of each GPU scenario of `bench/gpu_scenarios.c`: the same device work done
//! directly with the CUDA driver API, with the cheapest means the hardware offers
//! (stream-ordered allocation from a warm pool, pinned host buffers, one stream per host
//! thread or task, one synchronisation per region) and hand-written kernels. No runtime
//! bookkeeping: what is left over in a runtime's time above this is the runtime's own cost.
//!
//! The kernels are PTX, compiled by the driver at load time, so this needs no CUDA toolkit.

use cudarc::driver::sys::{self, CUdeviceptr, CUfunction, CUresult, CUstream};
use std::ffi::c_void;
use std::time::Instant;

const MIB: usize = 1 << 20;

mod beside;
pub(crate) use beside::PAGEABLE;
mod scenarios;
pub use scenarios::run;

pub(crate) fn ck(what: &str, r: CUresult) -> Result<(), String> {
    if r == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} failed: {r:?}"))
    }
}

/// `fill(a, n)`: `a[i] = (double)i` for every `i < n` (grid-stride); `touchK(p0..pK-1)`:
/// one thread adds 1.0 to the first double of each of K buffers; `empty()`.
fn ptx() -> String {
    let mut s = String::from(
        ".version 7.8\n.target sm_90\n.address_size 64\n\n\
         .visible .entry empty()\n{\n  ret;\n}\n\n\
         .visible .entry fill(.param .u64 a, .param .u64 n)\n{\n\
         \x20 .reg .pred p;\n  .reg .b64 r<8>;\n  .reg .b32 t<4>;\n  .reg .f64 d;\n\
         \x20 ld.param.u64 r1, [a];\n  ld.param.u64 r2, [n];\n  cvta.to.global.u64 r1, r1;\n\
         \x20 mov.u32 t0, %ctaid.x;\n  mov.u32 t1, %ntid.x;\n  mov.u32 t2, %tid.x;\n\
         \x20 mul.wide.u32 r3, t0, t1;\n  cvt.u64.u32 r4, t2;\n  add.u64 r3, r3, r4;\n\
         \x20 mov.u32 t3, %nctaid.x;\n  mul.wide.u32 r5, t3, t1;\n\
         LOOP:\n  setp.ge.u64 p, r3, r2;\n  @p bra DONE;\n  cvt.rn.f64.u64 d, r3;\n\
         \x20 shl.b64 r6, r3, 3;\n  add.u64 r7, r1, r6;\n  st.global.f64 [r7], d;\n\
         \x20 add.u64 r3, r3, r5;\n  bra LOOP;\nDONE:\n  ret;\n}\n",
    );
    for k in [1, 16] {
        let params: Vec<String> = (0..k).map(|i| format!(".param .u64 p{i}")).collect();
        s.push_str(&format!(
            "\n.visible .entry touch{k}({})\n{{\n  .reg .b64 r;\n  .reg .f64 d;\n",
            params.join(", ")
        ));
        for i in 0..k {
            s.push_str(&format!(
                "  ld.param.u64 r, [p{i}];\n  cvta.to.global.u64 r, r;\n  ld.global.f64 d, [r];\n  add.f64 d, d, 0d3FF0000000000000;\n  st.global.f64 [r], d;\n"
            ));
        }
        s.push_str("  ret;\n}\n");
    }
    // `copyk(table)`: block b copies table[b] = {src, dst, words} (u64 each), one 8-byte word
    // per thread and step, through generic addresses (device memory or mapped pinned host
    // memory alike): the scatter/gather kernel of `omptarget-suite probe small-copies`.
    s.push_str(
        "\n.visible .entry copyk(.param .u64 table)\n{\n\
         \x20 .reg .pred p;\n  .reg .b64 c<10>;\n  .reg .b32 u<3>;\n\
         \x20 ld.param.u64 c1, [table];\n  mov.u32 u0, %ctaid.x;\n  mul.wide.u32 c2, u0, 24;\n\
         \x20 add.u64 c2, c1, c2;\n  ld.u64 c3, [c2];\n  ld.u64 c4, [c2+8];\n  ld.u64 c5, [c2+16];\n\
         \x20 mov.u32 u1, %tid.x;\n  cvt.u64.u32 c6, u1;\n  mov.u32 u2, %ntid.x;\n  cvt.u64.u32 c7, u2;\n\
         CLOOP:\n  setp.ge.u64 p, c6, c5;\n  @p bra CDONE;\n  shl.b64 c8, c6, 3;\n\
         \x20 add.u64 c9, c3, c8;\n  ld.u64 c0, [c9];\n  add.u64 c9, c4, c8;\n  st.u64 [c9], c0;\n\
         \x20 add.u64 c6, c6, c7;\n  bra CLOOP;\nCDONE:\n  ret;\n}\n",
    );
    // `spin(ns)`: one thread waits until the device's clock (%globaltimer, ns) has advanced by
    // `ns`: the floor of kernel1s.
    s.push_str(
        "\n.visible .entry spin(.param .u64 ns)\n{\n\
         \x20 .reg .pred p;\n  .reg .b64 g<4>;\n\
         \x20 ld.param.u64 g0, [ns];\n  mov.u64 g1, %globaltimer;\n\
         SPIN:\n  mov.u64 g2, %globaltimer;\n  sub.u64 g3, g2, g1;\n  setp.lt.u64 p, g3, g0;\n\
         \x20 @p bra SPIN;\n  ret;\n}\n",
    );
    s.push('\0');
    s
}

pub(crate) struct Gpu {
    empty: CUfunction,
    fill: CUfunction,
    touch1: CUfunction,
    pub(crate) touch16: CUfunction,
    pub(crate) copyk: CUfunction,
    spin: CUfunction,
    ctx: sys::CUcontext,
    /// While set, every launch is bracketed by two events, kept in `timed` (the kernels' own
    /// device time, `kernel_us`). Untimed launches only read the flag: the floor stays free of
    /// locks.
    timing: std::sync::atomic::AtomicBool,
    timed: std::sync::Mutex<Vec<(sys::CUevent, sys::CUevent)>>,
}

fn event_new() -> Result<sys::CUevent, String> {
    let mut e: sys::CUevent = std::ptr::null_mut();
    // SAFETY: creates a timing event in the current context.
    ck("cuEventCreate", unsafe { sys::cuEventCreate(&mut e, 0) })?;
    Ok(e)
}

pub(crate) fn event_record(e: sys::CUevent, s: CUstream) -> Result<(), String> {
    // SAFETY: records a live event on a live stream.
    ck("cuEventRecord", unsafe { sys::cuEventRecord(e, s) })
}

/// An event whose synchronisation blocks the waiting thread (it sleeps until the work is done
/// instead of spinning on the CPU), without timing.
pub(crate) fn blocking_event() -> Result<sys::CUevent, String> {
    let mut e: sys::CUevent = std::ptr::null_mut();
    let flags = sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC as u32
        | sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
    // SAFETY: creates an event in the current context.
    ck("cuEventCreate", unsafe {
        sys::cuEventCreate(&mut e, flags)
    })?;
    Ok(e)
}

/// Records `e` on `s` and waits for it (blocking, for a blocking event).
fn record_and_wait(e: sys::CUevent, s: CUstream) -> Result<(), String> {
    event_record(e, s)?;
    // SAFETY: waits for a recorded live event.
    ck("cuEventSynchronize", unsafe { sys::cuEventSynchronize(e) })
}

/// Whether the work before `e` on its stream is done (without waiting).
pub(crate) fn event_done(e: sys::CUevent) -> Result<bool, String> {
    // SAFETY: queries a live event.
    match unsafe { sys::cuEventQuery(e) } {
        CUresult::CUDA_SUCCESS => Ok(true),
        CUresult::CUDA_ERROR_NOT_READY => Ok(false),
        r => Err(format!("cuEventQuery failed: {r:?}")),
    }
}

/// The process's CPU time so far, user + system of all its threads (the driver's included), in
/// seconds.
pub(crate) fn cpu_s() -> f64 {
    // SAFETY: getrusage writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always valid.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

// SAFETY: driver handles may be used from any thread once the context is current there (the
// threads of the 8-thread scenario make it current first).
unsafe impl Sync for Gpu {}

pub(crate) fn stream_new() -> Result<CUstream, String> {
    let mut s: CUstream = std::ptr::null_mut();
    // SAFETY: creates a stream in the current context.
    ck("cuStreamCreate", unsafe {
        sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)
    })?;
    Ok(s)
}

pub(crate) fn pinned(size: usize) -> Result<usize, String> {
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: a pinned allocation, freed at process exit.
    ck("cuMemAllocHost", unsafe {
        sys::cuMemAllocHost_v2(&mut p, size)
    })?;
    Ok(p as usize)
}

impl Gpu {
    pub(crate) fn new() -> Result<Self, String> {
        // SAFETY: probing for the library; the other calls need it.
        if !std::panic::catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false) {
            return Err("no CUDA driver (libcuda.so) on this machine".into());
        }
        // SAFETY: plain driver calls writing to locals; the PTX text is NUL-terminated.
        unsafe {
            ck("cuInit", sys::cuInit(0))?;
            let mut dev = 0;
            ck("cuDeviceGet", sys::cuDeviceGet(&mut dev, 0))?;
            let mut ctx = std::ptr::null_mut();
            ck(
                "cuDevicePrimaryCtxRetain",
                sys::cuDevicePrimaryCtxRetain(&mut ctx, dev),
            )?;
            ck("cuCtxSetCurrent", sys::cuCtxSetCurrent(ctx))?;
            let mut pool = std::ptr::null_mut();
            ck(
                "cuDeviceGetDefaultMemPool",
                sys::cuDeviceGetDefaultMemPool(&mut pool, dev),
            )?;
            let mut threshold = u64::MAX;
            ck(
                "cuMemPoolSetAttribute",
                sys::cuMemPoolSetAttribute(
                    pool,
                    sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                    (&raw mut threshold).cast(),
                ),
            )?;
            let text = ptx();
            let mut module = std::ptr::null_mut();
            ck(
                "cuModuleLoadData",
                sys::cuModuleLoadData(&mut module, text.as_ptr().cast()),
            )?;
            let get = |name: &str| -> Result<CUfunction, String> {
                let c = std::ffi::CString::new(name).expect("no NUL");
                let mut f = std::ptr::null_mut();
                ck(
                    "cuModuleGetFunction",
                    sys::cuModuleGetFunction(&mut f, module, c.as_ptr()),
                )?;
                Ok(f)
            };
            Ok(Self {
                empty: get("empty")?,
                fill: get("fill")?,
                touch1: get("touch1")?,
                touch16: get("touch16")?,
                copyk: get("copyk")?,
                spin: get("spin")?,
                ctx,
                timing: std::sync::atomic::AtomicBool::new(false),
                timed: std::sync::Mutex::new(Vec::new()),
            })
        }
    }

    pub(crate) fn launch(
        &self,
        f: CUfunction,
        blocks: u32,
        threads: u32,
        args: &mut [usize],
        s: CUstream,
    ) -> Result<(), String> {
        // The kernels take at most 16 parameters (touch16): their pointers on the stack, so a
        // floor launch allocates nothing.
        let mut slots = [std::ptr::null_mut::<c_void>(); 16];
        let n = args.len();
        if n > slots.len() {
            return Err(format!(
                "{n} kernel arguments: the floor's kernels take at most 16"
            ));
        }
        for (slot, a) in slots.iter_mut().zip(args.iter_mut()) {
            *slot = (a as *mut usize).cast();
        }
        let params = &mut slots[..n];
        if !self.timing.load(std::sync::atomic::Ordering::Relaxed) {
            return self.launch_untimed(f, blocks, threads, params, s);
        }
        let (a, b) = (event_new()?, event_new()?);
        event_record(a, s)?;
        self.launch_untimed(f, blocks, threads, params, s)?;
        event_record(b, s)?;
        self.timed
            .lock()
            .map_err(|_| "timing lock poisoned")?
            .push((a, b));
        Ok(())
    }

    fn launch_untimed(
        &self,
        f: CUfunction,
        blocks: u32,
        threads: u32,
        params: &mut [*mut c_void],
        s: CUstream,
    ) -> Result<(), String> {
        // SAFETY: one pointer-sized parameter per kernel parameter, all u64.
        ck("cuLaunchKernel", unsafe {
            sys::cuLaunchKernel(
                f,
                blocks,
                1,
                1,
                threads,
                1,
                1,
                0,
                s,
                if params.is_empty() {
                    std::ptr::null_mut()
                } else {
                    params.as_mut_ptr()
                },
                std::ptr::null_mut(),
            )
        })
    }

    /// Runs `f` with every launch timed by events and returns the kernels' mean device time
    /// in µs (`None` when `f` launched nothing).
    fn kernel_us(&self, f: impl FnOnce() -> Result<(), String>) -> Result<Option<f64>, String> {
        use std::sync::atomic::Ordering;
        self.timing.store(true, Ordering::Relaxed);
        let r = f();
        self.timing.store(false, Ordering::Relaxed);
        let pairs = std::mem::take(&mut *self.timed.lock().map_err(|_| "timing lock poisoned")?);
        // SAFETY: waits for all work of the current context.
        let synced = ck("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() });
        let mut total_ms = 0f64;
        let mut failed = None;
        for &(a, b) in &pairs {
            let mut ms = 0f32;
            // SAFETY: both events were recorded and have completed (synchronised above);
            // each is destroyed once.
            unsafe {
                if let Err(e) = ck("cuEventElapsedTime", sys::cuEventElapsedTime(&mut ms, a, b)) {
                    failed.get_or_insert(e);
                }
                sys::cuEventDestroy_v2(a);
                sys::cuEventDestroy_v2(b);
            }
            total_ms += f64::from(ms);
        }
        r?;
        synced?;
        if let Some(e) = failed {
            return Err(e);
        }
        Ok((!pairs.is_empty()).then(|| total_ms * 1e3 / pairs.len() as f64))
    }

    fn fill(&self, a: CUdeviceptr, bytes: usize, s: CUstream) -> Result<(), String> {
        let n = bytes / 8;
        let blocks = n.div_ceil(256).min(1 << 20) as u32;
        self.launch(self.fill, blocks, 256, &mut [a as usize, n], s)
    }
}

pub(crate) fn alloc(size: usize, s: CUstream) -> Result<CUdeviceptr, String> {
    let mut p = 0;
    // SAFETY: stream-ordered allocation.
    ck("cuMemAllocAsync", unsafe {
        sys::cuMemAllocAsync(&mut p, size, s)
    })?;
    Ok(p)
}

pub(crate) fn free(p: CUdeviceptr, s: CUstream) -> Result<(), String> {
    // SAFETY: frees a stream-ordered allocation after the stream's work.
    ck("cuMemFreeAsync", unsafe { sys::cuMemFreeAsync(p, s) })
}

pub(crate) fn h2d(d: CUdeviceptr, h: usize, size: usize, s: CUstream) -> Result<(), String> {
    // SAFETY: copies from a live host buffer into a live device allocation.
    ck("cuMemcpyHtoDAsync", unsafe {
        sys::cuMemcpyHtoDAsync_v2(d, h as *const c_void, size, s)
    })
}

pub(crate) fn d2h(h: usize, d: CUdeviceptr, size: usize, s: CUstream) -> Result<(), String> {
    // SAFETY: copies from a live device allocation into a live host buffer.
    ck("cuMemcpyDtoHAsync", unsafe {
        sys::cuMemcpyDtoHAsync_v2(h as *mut c_void, d, size, s)
    })
}

pub(crate) fn sync(s: CUstream) -> Result<(), String> {
    // SAFETY: waits for a live stream.
    ck("cuStreamSynchronize", unsafe {
        sys::cuStreamSynchronize(s)
    })
}

/// One host thread per stream in `streams`, each with the context current, running
/// `work(thread index, its stream)`; the first error wins.
fn on_threads(
    gpu: &Gpu,
    streams: &[CUstream],
    work: impl Fn(usize, CUstream) -> Result<(), String> + Sync,
) -> Result<(), String> {
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = streams
            .iter()
            .enumerate()
            .map(|(i, &st)| {
                let st = st as usize;
                scope.spawn(move || -> Result<(), String> {
                    // SAFETY: makes the retained context current on this thread.
                    ck("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(gpu.ctx) })?;
                    work(i, st as CUstream)
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().map_err(|_| "thread panicked".to_string())?)
    })
}

/// The device work of one `map(tofrom: 64 B)` region from the pinned buffer at `host`, queued
/// on `st` (not waited for).
fn map64_work(gpu: &Gpu, host: usize, st: CUstream) -> Result<(), String> {
    let a = alloc(64, st)?;
    h2d(a, host, 64, st)?;
    gpu.launch(gpu.touch1, 1, 1, &mut [a as usize], st)?;
    d2h(host, a, 64, st)?;
    free(a, st)
}

/// One round of `nowait32x4MiB`'s device work, queued: on each stream a region of 4 MiB
/// (allocate, copy from `input`, kernel, copy to `output`, free), then `after(r, stream)`.
fn nowait_round(
    gpu: &Gpu,
    streams: &[CUstream],
    input: usize,
    output: usize,
    mut after: impl FnMut(usize, CUstream) -> Result<(), String>,
) -> Result<(), String> {
    for (r, &st) in streams.iter().enumerate() {
        let a = alloc(4 * MIB, st)?;
        h2d(a, input + r * 4 * MIB, 4 * MIB, st)?;
        gpu.fill(a, 4 * MIB, st)?;
        d2h(output + r * 4 * MIB, a, 4 * MIB, st)?;
        free(a, st)?;
        after(r, st)?;
    }
    Ok(())
}

/// One `map(tofrom: 64 B)` region, waited for.
fn map64_region(gpu: &Gpu, host: usize, st: CUstream) -> Result<(), String> {
    map64_work(gpu, host, st)?;
    sync(st)
}

/// One scenario: `f(iters)` runs `iters` iterations of `per` regions each.
struct Scenario<'a> {
    name: &'static str,
    iters: usize,
    per: usize,
    f: Box<dyn Fn(usize) -> Result<(), String> + 'a>,
}

/// What `measure` gives: the median and minimum over the repetitions of the mean time per
/// region (µs), the CPU time per region over them (µs), and how many repetitions of how many
/// iterations it timed.
struct Timed {
    median: f64,
    min: f64,
    cpu_us: f64,
    reps: usize,
    iters: usize,
}

/// The iterations a scenario times at `scale` (which divides them, as in gpu_scenarios.c).
fn scaled(iters: usize, scale: usize) -> usize {
    (iters / scale.max(1)).max(1)
}

/// A scenario's repetitions: kernel1s (one region of a second each) has at most 3, as in
/// gpu_scenarios.c.
fn reps_for(name: &str, reps: usize) -> usize {
    if name == "kernel1s" {
        reps.min(3)
    } else {
        reps
    }
}

/// Times `s`: a warm-up, the start barrier of `bench --procs` (procs.rs; nothing when not
/// started by it), then `reps` repetitions.
fn measure(s: &Scenario<'_>, reps: usize, scale: usize) -> Result<Timed, String> {
    let iters = scaled(s.iters, scale);
    let reps = reps_for(s.name, reps);
    (s.f)(iters.min(4))?;
    crate::procs::start_barrier();
    let cpu0 = cpu_s();
    let mut t = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t0 = Instant::now();
        (s.f)(iters)?;
        t.push(t0.elapsed().as_secs_f64() * 1e6 / (iters * s.per) as f64);
    }
    let cpu_us = (cpu_s() - cpu0) * 1e6 / (reps * iters * s.per) as f64;
    t.sort_by(f64::total_cmp);
    Ok(Timed {
        median: t[t.len() / 2],
        min: t[0],
        cpu_us,
        reps,
        iters,
    })
}

/// One scenario's floor: median µs per region, the CPU time per region and, when asked for,
/// the mean device time of its kernels (events around each launch, in a run of its own).
#[derive(Debug, Default)]
pub struct Floor {
    pub name: String,
    /// µs per region; for a `beside_` row, the host loop's time beside the regions (µs).
    pub median_us: f64,
    pub kernel_us: Option<f64>,
    /// CPU time per region, user + system of every thread of the process (the driver's
    /// included), over the timed repetitions.
    pub cpu_us: Option<f64>,
    /// `beside_` rows: the host loop's slowdown beside the regions, in percent.
    pub slowdown_pct: Option<f64>,
}

impl Floor {
    /// Whether this floor waits with a blocking-sync event (its thread sleeps until the device
    /// is done): only then is its CPU time a floor for a runtime's.
    pub fn blocking(&self) -> bool {
        self.name == "kernel1s" || self.name.ends_with(BLOCKING)
    }
}

/// The suffix of the floors that wait with a blocking-sync event instead of spinning in
/// `cuStreamSynchronize`: the CPU floors of their scenarios.
const BLOCKING: &str = "_blocking_sync";

/// The CPU floor of `scenario`'s region (µs): the CPU time of its blocking-sync floor, where one
/// is measured.
pub fn cpu_floor(
    floors: &std::collections::BTreeMap<String, Floor>,
    scenario: &str,
) -> Option<f64> {
    floors
        .get(&format!("{scenario}{BLOCKING}"))
        .or_else(|| floors.get(scenario))
        .filter(|f| f.blocking())
        .and_then(|f| f.cpu_us)
}

/// Whether `which` (comma-separated names, as gpu_scenarios.c takes them) selects the floor
/// `name`: by its name, or "all" for every floor but the `beside_` rows (which run only when
/// named, as in gpu_scenarios.c).
pub fn selected(which: &str, name: &str) -> bool {
    which
        .split(',')
        .any(|w| w == name || (w == "all" && !name.starts_with("beside_")))
}

/// The floors that `which` selects, with each named scenario's blocking-sync CPU floor added:
/// what `bench --floor` measures for the scenarios it runs.
pub fn with_cpu_floors(which: &str) -> String {
    let mut v: Vec<String> = which.split(',').map(String::from).collect();
    for w in which.split(',') {
        if w != "all" && !w.is_empty() && !w.ends_with(BLOCKING) {
            v.push(format!("{w}{BLOCKING}"));
        }
    }
    v.join(",")
}

#[cfg(test)]
mod tests;
