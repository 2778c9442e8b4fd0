//! The composition root: which backends a process has. The core knows only the `Plugin`
//! trait; this crate (the library, and the `omptarget` command through it) names the
//! concrete plugins and hands them in.

use omptarget_core::Config;
use omptarget_core::plugin::Plugin;
use std::sync::Arc;

/// The plugins of a normal run, in device-numbering order.
pub fn default_plugins(config: &Config) -> Vec<Arc<dyn Plugin>> {
    let mut plugins: Vec<Arc<dyn Plugin>> = Vec::new();
    // LLVM's order: GPUs first, the host device last.
    #[cfg(feature = "cuda")]
    if !config.disable_cuda_plugin {
        let cuda = omptarget_plugin_cuda::CudaConfig {
            num_teams: config.num_teams.max(0) as u32,
            teams_thread_limit: config.teams_thread_limit.max(0) as u32,
            shared_memory_size: config.shared_memory_size,
            device_rtl_debug: config.device_rtl_debug,
            stack_size: config.stack_size,
            heap_size: config.heap_size,
            pool_release_threshold: config.cuda_pool_release_threshold,
            pool_idle_ms: config.cuda_pool_idle_ms,
            pool_low_water: config.cuda_pool_low_water,
            oom_wait_ms: config.cuda_oom_wait_ms,
            use_memory_pool: config.cuda_memory_pool,
            blocking_sync: config.cuda_blocking_sync,
            spin_us: config.cuda_spin_us,
            pack_copies: config.cuda_pack_copies,
            streaming_stores: config.cuda_streaming_stores,
            streaming_min: config.cuda_streaming_min,
            pool_preallocate: config.cuda_pool_preallocate,
            pool_idle_keep: config.cuda_pool_idle_keep,
            record_va: config.cuda_record_va,
            staging_limit: config.cuda_staging_limit,
            staging_threads: config.cuda_staging_threads,
            small_block_threshold: config.memory_manager_threshold,
            batch_copies: config.cuda_batch_copies,
            copy_kernel: config.cuda_copy_kernel,
            info: config.info,
        };
        plugins.push(Arc::new(omptarget_plugin_cuda::CudaPlugin::new(cuda)));
    }
    if !config.disable_host_plugin {
        plugins.push(Arc::new(omptarget_plugin_host::HostPlugin));
    }
    plugins
}
