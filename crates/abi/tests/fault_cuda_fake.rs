//! A kernel that faults, on the CUDA plugin without a GPU: the core and the CUDA plugin on the
//! fake driver of `tests/fakecuda`, whose `FAKECUDA_FAULT_LAUNCH=N` makes the Nth kernel
//! launch fault as a wild store does on a GPU: the launch succeeds, and from then on the
//! context answers every call with `CUDA_ERROR_ILLEGAL_ADDRESS` (a "sticky" error). A program
//! ends there (the offload policy aborts it, `tests/c/err_kernel_fault.c` compares that with
//! LLVM 19 on a GPU); what the runtime must do meanwhile is fail each construct with the
//! driver's reason, never panic or hang, and still come apart at the end: later regions,
//! `nowait` regions, memory routines and the unregistration all answer, within a watchdog.
#![cfg(feature = "cuda")]

use omptarget_core::image::OffloadEntry;
use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::{AllocKind, LaunchConfig};
use omptarget_core::trace::SourceLoc;
use omptarget_core::{Config, MapArgs, NoHostRuntime, Runtime};
use omptarget_plugin_cuda::{CudaConfig, CudaPlugin};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

#[path = "../../../tests/fakecuda/run.rs"]
mod fake_run;
use fake_run::{in_child, on_fake};

const NAME: &str = "a_faulting_kernel_fails_its_construct_and_the_runtime_still_comes_apart";
/// A kernel of the cubin below.
const KERNEL: &std::ffi::CStr = c"__omp_offloading_fe00_510096_main_l45";
const REASON: &str = "an illegal memory access was encountered";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A region over one `i32` at `x` (`tofrom`): `Ok` when it launched and completed; a `nowait`
/// one is polled until done or failed.
fn region(rt: &Runtime, kernel: usize, x: usize, nowait: bool) -> omptarget_core::Result<()> {
    let dev = rt.device(0)?;
    let mut bases = [x];
    let begins = [x];
    let sizes = [4i64];
    let types = [(mt::TO | mt::FROM | mt::TARGET_PARAM) as i64];
    let mut args = MapArgs {
        bases: &mut bases,
        begins: &begins,
        sizes: &sizes,
        types: &types,
        names: None,
        mappers: None,
    };
    let mut ai = rt.async_info(&dev);
    if nowait {
        ai.track_copies_home();
    }
    let config = LaunchConfig {
        version: 3,
        ..Default::default()
    };
    let launched = rt.target(
        &dev,
        kernel,
        &mut args,
        &config,
        &SourceLoc::default(),
        &mut ai,
    );
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

fn on_the_fake_driver() {
    // Everything below must end; a hang is a failure, not a stuck test run.
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(60));
        eprintln!("fault test: still running after 60 s (a hang after the fault)");
        std::process::exit(3);
    });
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(CudaPlugin::new(CudaConfig::default()))],
        Box::new(NoHostRuntime),
    );
    // A real sm_90 cubin (clang 19 and nvlink made it): the fake loads any image.
    let cubin: &'static [u8] = Box::leak(
        std::fs::read(
            repo().join("crates/plugins/cuda/tests/data/api_is_present.sm_90.abi7.cubin"),
        )
        .unwrap()
        .into_boxed_slice(),
    );
    let kernel = Box::leak(Box::new(0u8)) as *const u8 as usize;
    let key = Box::leak(Box::new(0u64)) as *const u64 as usize;
    let entry = OffloadEntry {
        addr: kernel,
        name: KERNEL,
        size: 0,
        flags: 0,
        data: 0,
    };
    rt.register(key, &[cubin], vec![entry]);
    assert!(rt.device(0).is_ok(), "the fake GPU is device 0");
    let x = Box::leak(Box::new(1i32)) as *mut i32 as usize;

    // The first launch runs; the second faults (FAKECUDA_FAULT_LAUNCH=2).
    region(&rt, kernel, x, false).expect("the first region runs");
    let e = region(&rt, kernel, x, false).expect_err("the faulting region fails");
    assert!(
        format!("{e:#}").contains(REASON) || format!("{e:?}").contains(REASON),
        "the driver's reason reaches the error: {e:?}"
    );
    // Every later construct fails (the context is unusable), and says why.
    for nowait in [false, true] {
        let e = region(&rt, kernel, x, nowait).expect_err("a region after the fault fails");
        assert!(format!("{e:?}").contains(REASON), "{e:?}");
    }
    let mut v = 0i32;
    let host = &mut v as *mut i32 as usize;
    let d = rt.target_alloc(64, 0, AllocKind::Device);
    if let Ok(d) = d {
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
    println!(
        "fault test: every construct after the fault failed with the driver's reason; the runtime came apart"
    );
}

#[test]
fn a_faulting_kernel_fails_its_construct_and_the_runtime_still_comes_apart() {
    if in_child() {
        on_the_fake_driver();
        return;
    }
    on_fake(
        NAME,
        &[("FAKECUDA_FAULT_LAUNCH", "2")],
        "fault test: every construct after the fault failed",
    );
}
