//! What the tests of the core and the CUDA plugin on the fake driver share (`held_cuda_fake.rs`,
//! `kernels_cuda_fake.rs`): a runtime with a real sm_90 cubin registered, and the arguments of a
//! construct over one `i32`.

use omptarget_core::image::OffloadEntry;
use omptarget_core::{Config, MapArgs, NoHostRuntime, Runtime};
use omptarget_plugin_cuda::{CudaConfig, CudaPlugin};
use std::ffi::CStr;
use std::path::Path;
use std::sync::Arc;

/// A runtime on the CUDA plugin with `cubin` (a file of `crates/plugins/cuda/tests/data`, which
/// clang 19 and nvlink made; the fake loads any image) registered, with `kernel` as a region
/// when given: the runtime, the image's key (for `unregister`) and the region's host address
/// (0 without a kernel).
pub fn runtime_with(cubin: &str, kernel: Option<&'static CStr>) -> (Runtime, usize, usize) {
    let made = runtime_with_image(test_cubin(cubin), kernel);
    assert!(made.0.device(0).is_ok(), "the fake GPU is device 0");
    made
}

/// The bytes of a file of `crates/plugins/cuda/tests/data`.
pub fn test_cubin(cubin: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../crates/plugins/cuda/tests/data")
        .join(cubin);
    std::fs::read(path).unwrap()
}

/// [`runtime_with`] for an image's bytes, which it does not load.
pub fn runtime_with_image(
    bytes: Vec<u8>,
    kernel: Option<&'static CStr>,
) -> (Runtime, usize, usize) {
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(CudaPlugin::new(CudaConfig::default()))],
        Box::new(NoHostRuntime),
    );
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    let key = Box::leak(Box::new(0u64)) as *const u64 as usize;
    let region = kernel.map_or(0, |_| Box::leak(Box::new(0u8)) as *const u8 as usize);
    let entries = kernel
        .map(|name| OffloadEntry {
            addr: region,
            name,
            size: 0,
            flags: 0,
            data: 0,
        })
        .into_iter()
        .collect();
    rt.register(key, &[bytes], entries);
    (rt, key, region)
}

/// Runs `f` with the arguments of one item: the `i32` at `x`, map type `ty`.
pub fn one_item<R>(x: usize, ty: u64, f: impl FnOnce(&mut MapArgs<'_>) -> R) -> R {
    let mut bases = [x];
    let begins = [x];
    let sizes = [4i64];
    let types = [ty as i64];
    let mut args = MapArgs {
        bases: &mut bases,
        begins: &begins,
        sizes: &sizes,
        types: &types,
        names: None,
        mappers: None,
    };
    f(&mut args)
}
