//! Kernels on the CUDA plugin without a GPU: the core and the CUDA plugin on the fake driver of
//! `tests/fakecuda`, with real sm_90 cubins registered (clang 19 and nvlink made them; the
//! fake loads any image and runs no kernel).
//!
//! - A kernel that faults: the fake's `FAKECUDA_FAULT_LAUNCH=N` makes the Nth launch fault as
//!   a wild store does on a GPU: the launch succeeds, and from then on the context answers
//!   every call with `CUDA_ERROR_ILLEGAL_ADDRESS` (a "sticky" error). A program ends there (the
//!   offload policy aborts it; `tests/c/err_kernel_fault.c` compares that with LLVM 19 on a
//!   GPU); what the runtime must do meanwhile is fail each construct with the driver's reason,
//!   never panic or hang, and still come apart at the end.
//! - A kernel that prints: the driver writes device `printf` output only at synchronising
//!   calls, so when an image may print, a region whose wait found its work complete by polling
//!   synchronises its stream before it returns (`tests/c/device_printf.c` compares the output's
//!   order with LLVM 19 on a GPU); an image that cannot print costs no such call.
//! - An image linked with LLVM's GPU C library (its `__llvm_libc_rpc_client`): LLVM's plugins
//!   serve its calls from the host; this runtime runs no such server, so it refuses the image
//!   when it loads it, saying why, where a kernel would otherwise wait forever.
//!
//! The driver is found through `LD_LIBRARY_PATH`, which the loader reads at start-up: each
//! test builds the fake and runs itself again with the fake's folder in front.
#![cfg(feature = "cuda")]

use omptarget_core::Runtime;
use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::{AllocKind, LaunchConfig};
use omptarget_core::trace::SourceLoc;
use std::time::Duration;

mod cuda_fake;
use cuda_fake::{one_item, runtime_with, runtime_with_image, test_cubin};

#[path = "../../../tests/fakecuda/run.rs"]
mod fake_run;
use fake_run::{in_child, on_fake};

const REASON: &str = "an illegal memory access was encountered";

/// Everything after this must end within `secs`; a hang is a failure, not a stuck test run.
fn watchdog(secs: u64) {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(secs));
        eprintln!("still running after {secs} s (a hang)");
        std::process::exit(3);
    });
}

/// A region over one `i32` at `x` (`tofrom`): `Ok` when it launched and completed; a `nowait`
/// one is polled until done or failed.
fn region(rt: &Runtime, kernel: usize, x: usize, nowait: bool) -> omptarget_core::Result<()> {
    let dev = rt.device(0)?;
    let mut ai = rt.async_info(&dev);
    if nowait {
        ai.track_copies_home();
    }
    let config = LaunchConfig {
        version: 3,
        ..Default::default()
    };
    let ty = mt::TO | mt::FROM | mt::TARGET_PARAM;
    let launched = one_item(x, ty, |args| {
        rt.target(&dev, kernel, args, &config, &SourceLoc::default(), &mut ai)
    });
    if let Err(e) = launched {
        // A failed construct still waits for what it queued (as a blocking one does).
        let _ = ai.synchronize();
        return Err(e);
    }
    if nowait {
        while !ai.is_done()? {
            std::thread::yield_now();
        }
    }
    ai.synchronize()
}

fn fault_on_the_fake_driver() {
    watchdog(60);
    let (rt, key, kernel) = runtime_with(
        "api_is_present.sm_90.abi7.cubin",
        Some(c"__omp_offloading_fe00_510096_main_l45"),
    );
    let x = Box::leak(Box::new(1i32)) as *mut i32 as usize;
    // The first launch runs; the second faults (FAKECUDA_FAULT_LAUNCH=2).
    region(&rt, kernel, x, false).expect("the first region runs");
    let e = region(&rt, kernel, x, false).expect_err("the faulting region fails");
    assert!(
        format!("{e:?}").contains(REASON),
        "the driver's reason reaches the error: {e:?}"
    );
    // Every later construct fails (the context is unusable), and says why.
    for nowait in [false, true] {
        let e = region(&rt, kernel, x, nowait).expect_err("a region after the fault fails");
        assert!(format!("{e:?}").contains(REASON), "{e:?}");
    }
    let mut v = 0i32;
    let host = &mut v as *mut i32 as usize;
    if let Ok(d) = rt.target_alloc(64, 0, AllocKind::Device) {
        assert!(
            rt.target_memcpy(d, host, 4, 0, 0, 0, rt.initial_device())
                .is_err(),
            "a copy after the fault fails"
        );
        let _ = rt.target_free(d, 0, AllocKind::Device);
    }
    // No mapping is left behind by the failed constructs.
    let dev = rt.device(0).unwrap();
    assert!(
        dev.mappings().is_empty(),
        "the failed constructs left mappings: {:?}",
        dev.mappings()
    );
    drop(dev);
    rt.unregister(key);
    drop(rt);
    println!("fault test: every construct after the fault failed with the driver's reason");
}

#[test]
fn a_faulting_kernel_fails_its_construct_and_the_runtime_still_comes_apart() {
    if in_child() {
        fault_on_the_fake_driver();
        return;
    }
    on_fake(
        "a_faulting_kernel_fails_its_construct_and_the_runtime_still_comes_apart",
        &[("FAKECUDA_FAULT_LAUNCH", "2")],
        "fault test: every construct after the fault failed",
    );
}

/// The fake's count of `cuStreamSynchronize` calls (`fakecuda_stream_syncs`).
fn stream_syncs() -> u64 {
    // SAFETY: the fake driver is loaded (the runtime's plugin opened it); its counter takes
    // no argument and returns an unsigned long.
    unsafe {
        let lib = libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        assert!(!lib.is_null(), "the fake driver is loaded");
        let f = libc::dlsym(lib, c"fakecuda_stream_syncs".as_ptr());
        assert!(!f.is_null(), "the fake driver counts synchronisations");
        let f: extern "C" fn() -> libc::c_ulong = std::mem::transmute(f);
        let n = f() as u64;
        libc::dlclose(lib);
        n
    }
}

/// Synchronisations made by `n` regions (half blocking, half `nowait`) of `kernel`.
fn syncs_of_regions(rt: &Runtime, kernel: usize, n: usize) -> u64 {
    let x = Box::leak(Box::new(1i32)) as *mut i32 as usize;
    let before = stream_syncs();
    for i in 0..n {
        region(rt, kernel, x, i % 2 == 1).unwrap();
    }
    stream_syncs() - before
}

fn print_on_the_fake_driver() {
    watchdog(60);
    // An image whose kernels call `vprintf`: each region synchronises its stream, blocking
    // and `nowait` alike (the fake's streams are complete at once: every wait ends polling).
    let (rt, key, kernel) = runtime_with(
        "device_printf.sm_90.abi7.cubin",
        Some(c"__omp_offloading_fe00_5122e6_main_l24"),
    );
    let printing = syncs_of_regions(&rt, kernel, 10);
    assert!(
        printing >= 10,
        "10 regions of a printing image made {printing} stream synchronisations"
    );
    // The 11th launch faults (FAKECUDA_FAULT_LAUNCH=11): its stream is synchronised too, as a
    // failed `assert` prints before it traps.
    let x = Box::leak(Box::new(1i32)) as *mut i32 as usize;
    let before = stream_syncs();
    region(&rt, kernel, x, false).expect_err("the 11th launch faults");
    assert!(
        stream_syncs() > before,
        "the faulting region's stream was not synchronised"
    );
    rt.unregister(key);
    drop(rt);
    println!("print test: {printing} synchronisations for 10 regions of a printing image");
}

fn no_print_on_the_fake_driver() {
    watchdog(60);
    // An image that cannot print: its regions end polling, with no synchronising call.
    let (rt, key, kernel) = runtime_with(
        "api_is_present.sm_90.abi7.cubin",
        Some(c"__omp_offloading_fe00_510096_main_l45"),
    );
    let silent = syncs_of_regions(&rt, kernel, 10);
    assert_eq!(
        silent, 0,
        "10 regions of an image that cannot print made {silent} stream synchronisations"
    );
    rt.unregister(key);
    drop(rt);
    println!("print test: no synchronisation for regions of an image that cannot print");
}

#[test]
fn a_printing_image_has_its_output_written_when_each_region_ends() {
    if in_child() {
        print_on_the_fake_driver();
        return;
    }
    on_fake(
        "a_printing_image_has_its_output_written_when_each_region_ends",
        &[("FAKECUDA_FAULT_LAUNCH", "11")],
        "print test: ",
    );
}

#[test]
fn an_image_that_cannot_print_costs_no_synchronisation() {
    if in_child() {
        no_print_on_the_fake_driver();
        return;
    }
    on_fake(
        "an_image_that_cannot_print_costs_no_synchronisation",
        &[],
        "print test: no synchronisation",
    );
}

/// `cubin` with one symbol renamed to `__llvm_libc_rpc_client` in its string table, as an
/// image linked with LLVM's GPU C library defines it (`libcgpu` cannot be built here).
fn with_gpu_libc(cubin: &[u8]) -> Vec<u8> {
    let old = b"\0__omp_rtl_assume_no_thread_state\0";
    let client = b"__llvm_libc_rpc_client\0";
    let at = cubin
        .windows(old.len())
        .position(|w| w == old)
        .expect("the cubin names __omp_rtl_assume_no_thread_state")
        + 1;
    let mut v = cubin.to_vec();
    v[at..at + client.len()].copy_from_slice(client);
    v
}

fn gpu_libc_on_the_fake_driver() {
    watchdog(60);
    let bytes = with_gpu_libc(&test_cubin("api_is_present.sm_90.abi7.cubin"));
    let (rt, key, kernel) =
        runtime_with_image(bytes, Some(c"__omp_offloading_fe00_510096_main_l45"));
    let why = rt.device(0).expect_err("the image is refused").to_string();
    for words in [
        "__llvm_libc_rpc_client",
        "RPC server",
        "loading the device image",
    ] {
        assert!(why.contains(words), "{words:?} not in {why:?}");
    }
    // Each construct meets the same refusal; nothing is mapped, and the runtime comes apart.
    let x = Box::leak(Box::new(1i32)) as *mut i32 as usize;
    let again = region(&rt, kernel, x, false).expect_err("a region is refused too");
    assert!(
        again.to_string().contains("__llvm_libc_rpc_client"),
        "{again}"
    );
    rt.unregister(key);
    drop(rt);
    println!("gpu libc test: refused at load: {why}");
}

#[test]
fn an_image_linked_with_llvms_gpu_libc_is_refused_at_load_with_the_reason() {
    if in_child() {
        gpu_libc_on_the_fake_driver();
        return;
    }
    on_fake(
        "an_image_linked_with_llvms_gpu_libc_is_refused_at_load_with_the_reason",
        &[],
        "gpu libc test: refused at load",
    );
}
