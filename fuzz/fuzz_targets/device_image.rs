//! Device images as a registered descriptor holds them: OffloadBinary unwrapping, then what
//! each plugin decides from the bytes without loading them (the host plugin's ELF checks, the
//! CUDA plugin's cubin/PTX/fatbin classification, a cubin's symbol names, architecture parsing
//! and compatibility).
//! Nothing is loaded or executed. No panic, no out-of-bounds slice.

#![no_main]

use libfuzzer_sys::fuzz_target;
use omptarget_core::image::unwrap_image;
use omptarget_core::plugin::{ImageInfo, Plugin};
use omptarget_plugin_cuda::image as cuda_image;
use omptarget_plugin_host::{HostPlugin, elf_machine};
use std::sync::OnceLock;

fn cuda() -> &'static omptarget_plugin_cuda::CudaPlugin {
    static CUDA: OnceLock<omptarget_plugin_cuda::CudaPlugin> = OnceLock::new();
    CUDA.get_or_init(|| omptarget_plugin_cuda::CudaPlugin::new(Default::default()))
}

fuzz_target!(|data: &[u8]| {
    let Ok(images) = unwrap_image(data) else {
        return;
    };
    for image in images {
        let info = ImageInfo {
            bytes: image.bytes,
            triple: image.triple,
            arch: image.arch,
        };
        let _ = elf_machine(image.bytes);
        let _ = HostPlugin.is_compatible(&info);
        // The CUDA plugin reads a cubin's symbol names at load.
        if let Some(cuda_image::ImageKind::Cubin { .. }) = cuda_image::classify(image.bytes) {
            let _ = omptarget_plugin::elf::symbol_names(image.bytes);
        }
        if let Some(arch) = image.arch
            && let Some(sm) = cuda_image::parse_arch(arch)
        {
            let _ = cuda_image::runs_on(sm, 90);
        }
        let _ = cuda().is_compatible(&info);
        let _ = cuda().incompatibility(&info);
    }
});
