//! Every symbol LLVM 19's `libomptarget.so.19.1` exports, versioned `VERS1.0` by
//! `libomptarget.map`, one file per family (as LLVM's `interface.cpp`, `api.cpp` and its
//! registration code): constructs (`interface`), registration, the `omp_*`/`llvm_omp_*`
//! routines (`api`), mapper components (`mapper`) and tool interfaces (`tools`). This file
//! holds what they share: the runtime value and the decoding of construct arguments.

mod api;
mod interface;
mod interop;
mod language;
mod mapper;
mod ompt;
mod registration;
mod tools;

pub use api::*;
pub use interface::*;
pub use interop::*;
pub use language::*;
pub use mapper::*;
pub use registration::*;
pub use tools::*;

use crate::ffi::{BinDesc, Ident, KernelArgs, export, export_ra};
use omptarget_core::image::{Abi, OffloadEntry};
use omptarget_core::message::{fatal, report};
use omptarget_core::ops::held;
use omptarget_core::plugin::{AllocKind, LanguageArgs, LaunchConfig};
use omptarget_core::tools::ConstructKind;
use omptarget_core::trace::{self, Region, SourceLoc};
use omptarget_core::{AsyncInfo, Config, Device, Error, MapArgs, Runtime};
use std::cell::Cell;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::{Arc, OnceLock};

const OFFLOAD_SUCCESS: c_int = 0;
const OFFLOAD_FAIL: c_int = !0;

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The process's runtime, created on first use.
///
/// It is built outside the `OnceLock`: building loads the CUDA driver and looks up libomp's
/// symbols (both take the dynamic loader's lock), and a thread registering a library holds
/// that lock while it asks for the runtime. If two threads build at once, the first stays.
#[inline]
pub fn runtime() -> &'static Runtime {
    match RUNTIME.get() {
        Some(rt) => rt,
        None => create_runtime(),
    }
}

/// Creates the runtime, then connects to libomp's OMPT (as LLVM does before initialising its
/// devices), outside the runtime's initialisation: libomp may initialise itself then, and a
/// tool call back into us.
#[cold]
fn create_runtime() -> &'static Runtime {
    let config = Config::from_env();
    let plugins = crate::plugins::default_plugins(&config);
    let built = Runtime::new(config, plugins, Box::new(crate::host::Libomp::new()))
        .with_process_abi(registration::process_abi());
    let mut created = false;
    let rt = RUNTIME.get_or_init(|| {
        created = true;
        built
    });
    if created {
        register_fork_handler();
        install_panic_hook();
        ompt::connect(rt);
    }
    rt
}

/// A `fork()`ed child starts with no construct of the parent's other threads in flight
/// (they do not exist there), so that its exit does not wait for them.
fn register_fork_handler() {
    extern "C" fn in_child() {
        if let Some(rt) = RUNTIME.get() {
            rt.after_fork_in_child();
        }
    }
    // SAFETY: the handler is a plain function that stays loaded as long as this library
    // (glibc forgets a library's handlers when it is unloaded); it only stores atomics.
    unsafe {
        libc::pthread_atfork(None, None, Some(in_child));
    }
}

/// `file:line:col` of an `ident_t` (`psource` = `;file;function;line;col;;`).
fn source_of(loc: *const Ident) -> SourceLoc {
    if loc.is_null() {
        return SourceLoc::default();
    }
    // SAFETY: a non-null ident_t comes from clang and lives as long as the program, and so
    // does its psource string (read only when a location is printed).
    unsafe { SourceLoc::from_c_psource((*loc).psource) }
}

/// Runs a construct's entry point: an internal error (a panic) inside it is reported and is a
/// failure of that construct under the offload policy, as every other failure is: fatal under
/// `MANDATORY` (and `DEFAULT` with devices), never a silent host fallback.
///
/// The construct is counted while it runs, so that the program's exit does not unload an
/// image under it (`omptarget_core::runtime`'s exit.rs).
///
/// There is no `catch_unwind` here: it would catch a foreign unwind too (glibc's forced
/// unwind of a cancelled thread inside a region on the host device, a C++ exception), and
/// abort the process ("FATAL: exception not rethrown"). The entry points are
/// `extern "C-unwind"`, so a foreign unwind passes through, and every frame it crosses gives
/// back what it holds (the construct's count, locks, its queue). A panic is handled where
/// it starts instead, by the panic hook ([`on_panic`]): it reports the construct's internal
/// error and applies the policy before anything unwinds.
fn construct_guard<R>(
    name: &'static str,
    loc: *const Ident,
    f: impl FnOnce(&'static Runtime, &omptarget_core::runtime::ConstructScope<'static>) -> R,
) -> R {
    let rt = runtime();
    // While the exit drains, a construct inside a libomp task (created before the exit
    // began) still runs.
    let running = rt.construct_scope(Some((name, loc as usize)), || {
        crate::host::target_async_handle().is_some()
    });
    #[cfg(debug_assertions)]
    debug_panic_in(name);
    f(rt, &running)
}

/// Installs [`on_panic`] ahead of the hook in place (this library's own copy of the Rust
/// standard library has its own hook: the program's Rust code, if any, is not affected).
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !on_panic(info) {
            previous(info);
        }
    }));
}

/// A panic inside a construct: reported as the construct's internal error, then a failure
/// under the policy, before the panic unwinds (no frame of the host program may see a Rust
/// panic). Returns false outside constructs.
fn on_panic(info: &std::panic::PanicHookInfo<'_>) -> bool {
    let Some((name, loc)) = omptarget_core::runtime::current_construct() else {
        return false;
    };
    let what = info
        .payload()
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    report(format_args!("internal error in {name}: {what}"));
    // The policy's fatal error, as `Runtime::handle_outcome` gives it, without its dump of
    // the mapping tables: the panicking frame may hold a table's lock.
    report(format_args!(
        "Consult https://openmp.llvm.org/design/Runtimes.html for debugging options."
    ));
    let loc = source_of(loc as *const Ident);
    if loc.is_known() {
        eprint!("{loc}: ");
    } else {
        report(format_args!(
            "Source location information not present. Compile with -g or -gline-tables-only."
        ));
    }
    // Also under a policy that would let the program fall back to the host: there is no
    // failure value to return from here, and the panic must not reach the program's frames.
    fatal(
        1,
        "failure of target construct while offloading is mandatory",
    )
}

/// Debug builds only (the test suite's): `OMPTARGET_RS_DEBUG_PANIC=ENTRY_POINT` makes that
/// entry point fail with an internal error, so the tests can show what the program sees.
#[cfg(debug_assertions)]
fn debug_panic_in(name: &str) {
    static TARGET: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let target = TARGET.get_or_init(|| std::env::var("OMPTARGET_RS_DEBUG_PANIC").ok());
    if target.as_deref() == Some(name) {
        panic!("OMPTARGET_RS_DEBUG_PANIC={name}");
    }
}

fn outcome(rt: &Runtime, ok: bool, loc: *const Ident) {
    if ok {
        return;
    }
    rt.handle_outcome(false, &source_of(loc));
}

/// LLVM's fatal error for a device number that names no device, in the words of the runtime
/// of the caller's ABI (LLVM 22 reports its `INVALID_VALUE` error code first).
fn invalid_device(abi: Abi, id: i64, count: usize) -> ! {
    let text = match abi {
        Abi::Llvm19 => format!("Device number '{id}' out of range, only {count} devices available"),
        Abi::Llvm22 => format!(
            "\"invalid value\" device number '{id}' out of range, only {count} devices available"
        ),
    };
    fatal(id as i32, &text)
}

/// Resolves the device of a construct; `None` means "run on the host" (offload disabled, or
/// the initial device), after LLVM's policy checks.
fn construct_device(rt: &Runtime, device_id: i64, loc: *const Ident) -> Option<Arc<Device>> {
    match rt.device_for_construct(device_id) {
        Ok(d) => d,
        Err(Error::InvalidDevice { id, count }) if count > 0 => {
            invalid_device(rt.abi_at(loc as usize), id, count)
        }
        Err(e) => {
            if !matches!(e, Error::InvalidDevice { .. }) {
                report(format_args!("{e}"));
            }
            outcome(rt, false, loc);
            None
        }
    }
}

/// The AsyncInfo of a construct: for a `nowait` construct inside a libomp target task, the
/// one the task already holds (a task may issue several constructs) or a new one. Inlined,
/// so that the new one is built in the caller's frame instead of copied there.
#[inline(always)]
fn begin_async(rt: &Runtime, dev: &Arc<Device>, slot: Option<*mut *mut c_void>) -> AsyncInfo {
    if let Some(slot) = slot {
        // SAFETY: libomp's slot holds null or what `end_async` left there (`held::hold`).
        let held = unsafe { std::mem::replace(&mut *slot, std::ptr::null_mut()) };
        if !held.is_null() {
            // This construct (in flight itself) takes it over, or waits for it below.
            rt.note_held(-1);
            // SAFETY: see above; the pointer is taken out of the slot, so it is owned once.
            match unsafe { held::take(held) } {
                Ok(Some(ai)) if ai.device_id() == dev.id => return ai,
                Ok(Some(ai)) => {
                    let _ = ai.synchronize();
                }
                Ok(None) => {}
                Err(e) => report(format_args!("{e}")),
            }
        }
        let mut ai = rt.async_info(dev);
        ai.track_copies_home();
        return ai;
    }
    rt.async_info(dev)
}

/// Ends a blocking target region: it synchronises in place. Its AsyncInfo (~1 KiB of inline
/// records) is not moved, as passing it to [`end_async`] would (~100 instructions a region).
#[inline(always)]
fn end_in_place(ai: &mut AsyncInfo, r: Result<(), Error>) -> Result<(), Error> {
    let synced = ai.synchronize_in_place();
    r.and(synced)
}

/// Ends a data construct or a `nowait` construct: a data construct returns before its work
/// completes when that work allows ([`Runtime::finish_construct`]), else synchronises; a
/// `nowait` one that is still running is left in the task's slot for
/// `__tgt_target_nowait_query`. A failed construct synchronises in place.
#[inline(always)]
fn end_async(
    rt: &Runtime,
    mut ai: AsyncInfo,
    slot: Option<*mut *mut c_void>,
    r: Result<(), Error>,
) -> Result<(), Error> {
    if r.is_err() {
        return end_in_place(&mut ai, r);
    }
    let Some(slot) = slot else {
        return rt.finish_construct(ai);
    };
    if ai.is_done()? {
        return Ok(());
    }
    // SAFETY: the slot belongs to the current target task; libomp passes it back to
    // __tgt_target_nowait_query until we reset it.
    unsafe { *slot = held::hold(ai) };
    // Counted until a query finds it complete: the exit must not free what it uses.
    rt.note_held(1);
    Ok(())
}

/// Borrows clang's argument arrays. Null arrays with a non-zero count are rejected.
///
/// # Safety
/// Non-null arrays must hold `n` elements each and stay valid for `'a`.
unsafe fn map_args<'a>(
    n: i32,
    bases: *mut *mut c_void,
    begins: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    names: *mut *mut c_void,
    mappers: *mut *mut c_void,
) -> Option<MapArgs<'a>> {
    let n = usize::try_from(n).ok()?;
    if n == 0 {
        return Some(MapArgs {
            bases: &mut [],
            begins: &[],
            sizes: &[],
            types: &[],
            names: None,
            mappers: None,
        });
    }
    if bases.is_null() || begins.is_null() || sizes.is_null() || types.is_null() {
        report(format_args!(
            "invalid argument arrays: a base, pointer, size or type array is null for {n} arguments"
        ));
        return None;
    }
    // SAFETY: the caller guarantees n elements per non-null array; pointers and usize have the
    // same layout.
    unsafe {
        Some(MapArgs {
            bases: std::slice::from_raw_parts_mut(bases.cast::<usize>(), n),
            begins: std::slice::from_raw_parts(begins.cast::<usize>(), n),
            sizes: std::slice::from_raw_parts(sizes, n),
            types: std::slice::from_raw_parts(types, n),
            names: (!names.is_null()).then(|| std::slice::from_raw_parts(names.cast::<usize>(), n)),
            mappers: (!mappers.is_null())
                .then(|| std::slice::from_raw_parts(mappers.cast::<usize>(), n)),
        })
    }
}
