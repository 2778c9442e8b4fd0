//! Held `nowait` constructs on the CUDA plugin without a GPU: the core and the CUDA plugin on
//! the fake driver of `tests/fakecuda`, whose streams answer their first queries "not ready"
//! (`FAKECUDA_BUSY_QUERIES`), so a `nowait` construct stays in its task's slot with its
//! staged copy back not landed, as on a GPU. A construct that then copies the same host
//! memory in must first complete the held one (`ops/held.rs`): it must copy in what the held
//! construct copied back, not what the memory held before. No kernel runs on the fake: the
//! device copy is written with `omp_target_memcpy`'s routine.
//!
//! The driver is found through `LD_LIBRARY_PATH`, which the loader reads at start-up: the
//! test builds the fake and runs itself again with the fake's folder in front.
#![cfg(feature = "cuda")]

use omptarget_core::ops::held;
use omptarget_core::ops::map_type as mt;
use omptarget_core::{MapArgs, Runtime};
use std::ffi::c_void;

mod cuda_fake;
use cuda_fake::{one_item, runtime_with};

#[path = "../../../tests/fakecuda/run.rs"]
mod fake_run;
use fake_run::{in_child, on_fake};

const NAME: &str = "a_copy_in_completes_the_held_construct_first_on_the_cuda_plugin";

/// One construct over one `i32` item on device 0: `op` with its AsyncInfo; a `nowait` one
/// (`tracked`) still running is left held (its slot value returned), others complete.
fn construct(
    rt: &Runtime,
    x: usize,
    ty: u64,
    nowait: bool,
    op: impl FnOnce(&Runtime, &omptarget_core::Device, &mut MapArgs<'_>, &mut omptarget_core::AsyncInfo),
) -> Option<usize> {
    let dev = rt.device(0).unwrap();
    let mut ai = rt.async_info(&dev);
    if nowait {
        ai.track_copies_home();
    }
    one_item(x, ty, |args| op(rt, &dev, args, &mut ai));
    if nowait && !ai.is_done().unwrap() {
        return Some(held::hold(ai) as usize);
    }
    ai.synchronize().unwrap();
    None
}

/// The device copy of `x` (mapped), read or written through the runtime's memcpy routine.
fn device_value(rt: &Runtime, x: usize, write: Option<i32>) -> i32 {
    let dev = rt.device(0).unwrap();
    let d = rt.mapped_ptr(&dev, x).expect("mapped");
    let mut v = write.unwrap_or(0);
    let host = &mut v as *mut i32 as usize;
    let (dst, src, dst_dev, src_dev) = match write {
        Some(_) => (d, host, 0, rt.initial_device()),
        None => (host, d, rt.initial_device(), 0),
    };
    rt.target_memcpy(dst, src, 4, 0, 0, dst_dev, src_dev)
        .unwrap();
    v
}

fn on_the_fake_driver() {
    let (rt, key, _) = runtime_with("api_is_present.sm_90.abi7.cubin", None);
    let x = Box::leak(Box::new(1i32)) as *mut i32 as usize;
    let enter = |rt: &Runtime, dev: &_, args: &mut MapArgs<'_>, ai: &mut _| {
        rt.data_begin(dev, args, ai).unwrap()
    };
    let exit = |rt: &Runtime, dev: &_, args: &mut MapArgs<'_>, ai: &mut _| {
        rt.data_end(dev, args, ai).unwrap()
    };
    // `enter data map(to: x)`: the device copy is 1; the device then computes 5.
    construct(&rt, x, mt::TO, false, enter);
    device_value(&rt, x, Some(5));
    // `exit data map(from: x) nowait`: held, its copy back (5) not landed yet.
    let a = construct(&rt, x, mt::FROM, true, exit).expect("held: the stream is busy");
    // SAFETY: `x` is a leaked i32.
    assert_eq!(
        unsafe { *(x as *const i32) },
        1,
        "the copy back has not landed"
    );
    // `enter data map(to: x)` on another thread: it completes the held construct first and
    // copies in 5.
    std::thread::scope(|s| {
        s.spawn(|| construct(&rt, x, mt::TO, false, enter));
    });
    assert_eq!(
        unsafe { *(x as *const i32) },
        5,
        "the held construct's copy back landed"
    );
    assert_eq!(
        device_value(&rt, x, None),
        5,
        "the copy in read what landed"
    );
    // The task's poll finds it complete.
    // SAFETY: `a` is still in its slot.
    assert!(unsafe { held::poll(a as *mut c_void, false) }.unwrap());
    construct(&rt, x, mt::DELETE, false, exit);
    let dev = rt.device(0).unwrap();
    assert!(dev.mappings().is_empty());
    drop(dev);
    rt.unregister(key);
    println!("fake driver: the held construct completed first");
}

#[test]
fn a_copy_in_completes_the_held_construct_first_on_the_cuda_plugin() {
    if in_child() {
        on_the_fake_driver();
        return;
    }
    on_fake(
        NAME,
        &[("FAKECUDA_BUSY_QUERIES", "3")],
        "fake driver: the held construct completed first",
    );
}
