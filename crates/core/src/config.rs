//! Configuration read once from the environment. The README lists every variable with its
//! default.

use std::env;

/// `LIBOMPTARGET_INFO` bits.
pub mod info {
    pub const KERNEL_ARGS: u32 = 0x01;
    pub const MAPPING_EXISTS: u32 = 0x02;
    pub const DUMP_TABLE: u32 = 0x04;
    pub const MAPPING_CHANGED: u32 = 0x08;
    pub const KERNEL_GEOMETRY: u32 = 0x10;
    pub const DATA_TRANSFER: u32 = 0x20;
    /// List items without a device counterpart (LLVM's `OMP_INFOTYPE_EMPTY_MAPPING`).
    pub const EMPTY_MAPPING: u32 = 0x40;
}

#[derive(Clone, Debug)]
pub struct Config {
    /// `LIBOMPTARGET_INFO` (bit mask, default 0).
    pub info: u32,
    /// `LIBOMPTARGET_DEBUG` (level, default 0): our own trace lines on stderr.
    pub debug: u32,
    /// `LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD` (bytes, default 8 KiB; 0 disables).
    pub memory_manager_threshold: usize,
    /// `LIBOMPTARGET_MAP_FORCE_ATOMIC` (default true).
    pub map_force_atomic: bool,
    /// `LIBOMPTARGET_NUM_INITIAL_STREAMS` (default 1).
    pub num_initial_streams: usize,
    /// `OMPTARGET_DISABLE_HOST_PLUGIN` (default false).
    pub disable_host_plugin: bool,
    /// `OMP_NUM_TEAMS` (0 = unset).
    pub num_teams: i32,
    /// `OMP_TEAMS_THREAD_LIMIT` (0 = unset).
    pub teams_thread_limit: i32,
    /// `OMP_TEAM_LIMIT` (0 = unset).
    pub team_limit: i32,
    /// `LIBOMPTARGET_STACK_SIZE` (bytes, 0 = device default).
    pub stack_size: usize,
    /// `LIBOMPTARGET_HEAP_SIZE` (bytes, 0 = device default).
    pub heap_size: usize,
    /// `LIBOMPTARGET_PROFILE` (file name for a profile, unset = none).
    pub profile: Option<String>,
    /// `OMPTARGET_RS_CUDA_POOL_RELEASE_THRESHOLD` (bytes the CUDA memory pool keeps cached
    /// across synchronisations; default `None`: a quarter of the device's memory).
    pub cuda_pool_release_threshold: Option<u64>,
    /// `OMPTARGET_RS_CUDA_POOL_IDLE_MS` (default 1000; 0: never): idle time after which the
    /// CUDA memory pool gives its cached memory back to the device.
    pub cuda_pool_idle_ms: u64,
    /// `OMPTARGET_RS_CUDA_POOL_LOW_WATER` (bytes; default `None`: 1/32 of the device, at
    /// least 1 GiB; 0: never): below this much free device memory the pool gives back what no
    /// allocation uses.
    pub cuda_pool_low_water: Option<u64>,
    /// `OMPTARGET_RS_CUDA_OOM_WAIT_MS` (default 3000; 0: fail at once): how long a CUDA
    /// allocation that found the device full waits for other processes to give memory back.
    pub cuda_oom_wait_ms: u64,
    /// `OMPTARGET_RS_CUDA_MEMORY_POOL` (default true): stream-ordered allocation on CUDA.
    pub cuda_memory_pool: bool,
    /// `OMPTARGET_RS_DISABLE_CUDA_PLUGIN` (default false).
    pub disable_cuda_plugin: bool,
    /// `OMPTARGET_RS_CUDA_BLOCKING_SYNC` (default false; LLVM's behaviour when true): an
    /// inactive primary context gets `CU_CTX_SCHED_BLOCKING_SYNC`.
    pub cuda_blocking_sync: bool,
    /// `OMPTARGET_RS_CUDA_POOL_PREALLOCATE` (bytes, default 256 MiB; 0 disables): the CUDA
    /// memory pool is grown by this much when the device initialises.
    pub cuda_pool_preallocate: usize,
    /// `OMPTARGET_RS_CUDA_STAGING_LIMIT` (bytes, default 512 MiB; 0 disables): pinned memory
    /// the CUDA plugin may keep for staging copies to and from pageable host memory.
    pub cuda_staging_limit: usize,
    /// `OMPTARGET_RS_CUDA_BATCH_COPIES` (default true): small copies of a construct reach the
    /// CUDA driver in one batch per direction.
    pub cuda_batch_copies: bool,
    /// `OMPTARGET_QUERY_COUNT_THRESHOLD` (default 5): pending `nowait` queries a thread makes
    /// before it blocks on a construct instead of polling it.
    pub query_count_threshold: i64,
    /// `OMPTARGET_QUERY_COUNT_MAX` (default 10): the largest value of that count.
    pub query_count_max: i64,
    /// `OMPTARGET_QUERY_COUNT_BACKOFF_FACTOR` (default 0.5): the count is multiplied by this
    /// each time a construct completes.
    pub query_count_backoff_factor: f64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            info: 0,
            debug: 0,
            memory_manager_threshold: omptarget_plugin::memory_manager::DEFAULT_THRESHOLD,
            map_force_atomic: true,
            num_initial_streams: 1,
            disable_host_plugin: false,
            num_teams: 0,
            teams_thread_limit: 0,
            team_limit: 0,
            stack_size: 0,
            heap_size: 0,
            profile: None,
            cuda_pool_release_threshold: None,
            cuda_pool_idle_ms: 1000,
            cuda_pool_low_water: None,
            cuda_oom_wait_ms: 3000,
            cuda_memory_pool: true,
            disable_cuda_plugin: false,
            cuda_blocking_sync: false,
            cuda_pool_preallocate: 256 << 20,
            cuda_staging_limit: 512 << 20,
            cuda_batch_copies: true,
            query_count_threshold: 5,
            query_count_max: 10,
            query_count_backoff_factor: 0.5,
        }
    }
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()
    } else {
        s.parse().ok()
    }
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

impl Config {
    /// Reads the environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|k| env::var(k).ok())
    }

    /// Reads configuration through `get` (the environment, or a test's map).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let d = Self::default();
        let int = |k: &str| get(k).as_deref().and_then(parse_int);
        let flag =
            |k: &str, default: bool| get(k).as_deref().and_then(parse_bool).unwrap_or(default);
        Self {
            // LLVM reads LIBOMPTARGET_INFO as a signed integer: -1 turns every bit on.
            info: int("LIBOMPTARGET_INFO").map_or(d.info, |v| v as u32),
            debug: int("LIBOMPTARGET_DEBUG").map_or(d.debug, |v| v.max(0) as u32),
            memory_manager_threshold: int("LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD")
                .map_or(d.memory_manager_threshold, |v| v.max(0) as usize),
            map_force_atomic: flag("LIBOMPTARGET_MAP_FORCE_ATOMIC", d.map_force_atomic),
            num_initial_streams: int("LIBOMPTARGET_NUM_INITIAL_STREAMS")
                .map_or(d.num_initial_streams, |v| v.max(0) as usize),
            disable_host_plugin: flag("OMPTARGET_DISABLE_HOST_PLUGIN", d.disable_host_plugin),
            num_teams: int("OMP_NUM_TEAMS").map_or(0, |v| v.max(0) as i32),
            teams_thread_limit: int("OMP_TEAMS_THREAD_LIMIT").map_or(0, |v| v.max(0) as i32),
            team_limit: int("OMP_TEAM_LIMIT").map_or(0, |v| v.max(0) as i32),
            stack_size: int("LIBOMPTARGET_STACK_SIZE").map_or(0, |v| v.max(0) as usize),
            heap_size: int("LIBOMPTARGET_HEAP_SIZE").map_or(0, |v| v.max(0) as usize),
            profile: get("LIBOMPTARGET_PROFILE"),
            cuda_pool_release_threshold: get("OMPTARGET_RS_CUDA_POOL_RELEASE_THRESHOLD")
                .and_then(|v| v.trim().parse().ok())
                .or(d.cuda_pool_release_threshold),
            cuda_pool_idle_ms: int("OMPTARGET_RS_CUDA_POOL_IDLE_MS")
                .map_or(d.cuda_pool_idle_ms, |v| v.max(0) as u64),
            cuda_pool_low_water: int("OMPTARGET_RS_CUDA_POOL_LOW_WATER")
                .map(|v| v.max(0) as u64)
                .or(d.cuda_pool_low_water),
            cuda_oom_wait_ms: int("OMPTARGET_RS_CUDA_OOM_WAIT_MS")
                .map_or(d.cuda_oom_wait_ms, |v| v.max(0) as u64),
            cuda_memory_pool: flag("OMPTARGET_RS_CUDA_MEMORY_POOL", d.cuda_memory_pool),
            disable_cuda_plugin: flag("OMPTARGET_RS_DISABLE_CUDA_PLUGIN", d.disable_cuda_plugin),
            cuda_blocking_sync: flag("OMPTARGET_RS_CUDA_BLOCKING_SYNC", d.cuda_blocking_sync),
            cuda_pool_preallocate: int("OMPTARGET_RS_CUDA_POOL_PREALLOCATE")
                .map_or(d.cuda_pool_preallocate, |v| v.max(0) as usize),
            cuda_staging_limit: int("OMPTARGET_RS_CUDA_STAGING_LIMIT")
                .map_or(d.cuda_staging_limit, |v| v.max(0) as usize),
            cuda_batch_copies: flag("OMPTARGET_RS_CUDA_BATCH_COPIES", d.cuda_batch_copies),
            query_count_threshold: int("OMPTARGET_QUERY_COUNT_THRESHOLD")
                .unwrap_or(d.query_count_threshold),
            query_count_max: int("OMPTARGET_QUERY_COUNT_MAX").unwrap_or(d.query_count_max),
            query_count_backoff_factor: get("OMPTARGET_QUERY_COUNT_BACKOFF_FACTOR")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(d.query_count_backoff_factor),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn reads_values_and_keeps_defaults() {
        let vars: HashMap<&str, &str> = [
            ("LIBOMPTARGET_INFO", "-1"),
            ("LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD", "0"),
            ("LIBOMPTARGET_MAP_FORCE_ATOMIC", "FALSE"),
            ("OMPTARGET_DISABLE_HOST_PLUGIN", "1"),
            ("OMP_NUM_TEAMS", "0x10"),
        ]
        .into();
        let c = Config::from_lookup(|k| vars.get(k).map(|v| v.to_string()));
        assert_eq!(c.info, u32::MAX);
        assert_eq!(c.memory_manager_threshold, 0);
        assert!(!c.map_force_atomic);
        assert!(c.disable_host_plugin);
        assert_eq!(c.num_teams, 16);
        assert_eq!(c.num_initial_streams, 1);
        let d = Config::from_lookup(|_| None);
        assert!(d.map_force_atomic);
        assert_eq!(d.memory_manager_threshold, 8192);
    }
}
