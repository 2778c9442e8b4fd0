//! The NVIDIA backend: implements omptarget-plugin's `Plugin` and `Device` traits over the CUDA
//! driver API, loaded at run time. It depends only on omptarget-plugin, cudarc's `driver::sys`
//! (raw bindings, called only through `driver.rs`) and libc.
//!
//! Without `libcuda` the plugin reports 0 devices, quietly. With memory-pool support
//! (`CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED`), device memory is allocated and freed
//! stream-ordered (`cuMemAllocAsync` / `cuMemFreeAsync`) from the device's default pool, whose
//! release threshold is raised so freed memory stays cached for reuse.
//!
//! The rooms, as LLVM's CUDA plugin and its plugin interface divide them: `plugin` (probing,
//! image compatibility), `device` (one GPU and its context, with `device/module`, `memory`,
//! `record`, `copy`, `launch` and `queue` for its operations), and the parts those use:
//! `driver` (every driver call, returning `Result`), `image`, `kernel` (kernel metadata and
//! launch geometry), `pool` and `blocks` (the memory pool's policy and small-block cache),
//! `staging` (pinned buffers for pageable copies) and `timing` (traced operations' events).

mod blocks;
mod config;
mod device;
mod driver;
pub mod image;
mod kernel;
mod plugin;
mod pool;
mod staging;
mod timing;
mod wait;

pub use config::CudaConfig;
pub use device::launch::{launch_param_buffer, param_bytes};
pub use driver::compute_sanitizer_attached;
pub use plugin::{CudaPlugin, why_no_devices};
