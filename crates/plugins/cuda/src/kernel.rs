//! Kernel metadata (`<kernel>_kernel_environment` of clang 19's device runtime) and launch
//! geometry, following LLVM 19's rules so programs see the same team and thread counts.

use crate::CudaConfig;
use cudarc::driver::sys::CUfunction;
use omptarget_plugin::LaunchConfig;

/// `OMPTgtExecModeFlags`.
const EXEC_GENERIC: u8 = 1;
const EXEC_SPMD: u8 = 2;

/// LLVM's NVPTX grid values.
const DEFAULT_NUM_TEAMS: u32 = 3200;
const MAX_TEAMS: u32 = 1 << 16;
const DEFAULT_THREADS: u32 = 128;
/// `getMinThreadsForLowTripCountLoop`.
const MIN_THREADS_LOW_TRIP_COUNT: u32 = 32;

/// Per-device launch limits after the environment's overrides.
#[derive(Clone, Copy, Debug)]
pub struct DeviceLimits {
    pub warp_size: u32,
    pub max_threads: u32,
    pub max_blocks: u32,
    pub clock_khz: u64,
    pub hardware_parallelism: u64,
}

/// The limits the launch rules use.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub warp_size: u32,
    pub thread_limit: u32,
    pub block_limit: u32,
    pub default_blocks: u32,
}

impl DeviceLimits {
    /// Applies `OMP_TEAM_LIMIT`, `OMP_TEAMS_THREAD_LIMIT` and `OMP_NUM_TEAMS`.
    pub fn with_environment(self, c: &CudaConfig) -> LimitsWithEnv {
        let mut block_limit = MAX_TEAMS.min(self.max_blocks);
        if c.team_limit > 0 {
            block_limit = block_limit.min(c.team_limit);
        }
        let mut thread_limit = self.max_threads;
        if c.teams_thread_limit > 0 {
            thread_limit = thread_limit.min(c.teams_thread_limit);
        }
        let default_blocks = if c.num_teams > 0 {
            c.num_teams.min(block_limit)
        } else {
            DEFAULT_NUM_TEAMS.min(block_limit)
        };
        LimitsWithEnv {
            device: self,
            limits: Limits {
                warp_size: self.warp_size,
                thread_limit,
                block_limit,
                default_blocks,
            },
        }
    }
}

/// Device limits together with the launch limits derived from them.
#[derive(Clone, Copy, Debug)]
pub struct LimitsWithEnv {
    pub device: DeviceLimits,
    pub limits: Limits,
}

impl std::ops::Deref for LimitsWithEnv {
    type Target = DeviceLimits;
    fn deref(&self) -> &DeviceLimits {
        &self.device
    }
}

pub struct KernelInfo {
    pub func: CUfunction,
    exec_mode: u8,
    max_threads: u32,
    preferred_threads: u32,
    max_teams: i32,
    reduction_bytes: usize,
    /// The bytes of its parameters as the driver lays them out (`cuFuncGetParamInfo`: the last
    /// one's offset plus size), when the driver says. Asked on the first kernel-language
    /// launch only: finding the last parameter takes one call past it, which the driver
    /// answers with an error, and compute-sanitizer's memcheck reports every such error
    /// (it did for every OpenMP kernel when this was asked at lookup).
    pub param_bytes: std::sync::OnceLock<Option<usize>>,
}

// SAFETY: a CUfunction handle may be used from any thread with its context current.
unsafe impl Send for KernelInfo {}
unsafe impl Sync for KernelInfo {}

fn i32_at(b: &[u8], at: usize) -> i32 {
    b.get(at..at + 4)
        .map(|s| i32::from_le_bytes(s.try_into().expect("4 bytes")))
        .unwrap_or(-1)
}

impl KernelInfo {
    /// From the kernel's environment bytes (`ConfigurationEnvironmentTy` first: u8
    /// UseGenericStateMachine, u8 MayUseNestedParallelism, u8 ExecMode, then i32 MinThreads,
    /// MaxThreads, MinTeams, MaxTeams, ReductionDataSize, ReductionBufferLength).
    pub fn new(func: CUfunction, env: Option<&[u8]>, func_max_threads: u32) -> Self {
        let (exec_mode, max_threads, max_teams, reduction_bytes) = match env {
            Some(b) if b.len() >= 28 => {
                let data = i32_at(b, 20).max(0) as usize;
                let length = i32_at(b, 24).max(0) as usize;
                (b[2], i32_at(b, 8), i32_at(b, 16), data * length)
            }
            _ => (EXEC_GENERIC, -1, -1, 0),
        };
        let mut max = func_max_threads.max(1);
        if max_threads > 0 {
            max = max.min(max_threads as u32);
        }
        Self {
            func,
            exec_mode,
            max_threads: max,
            preferred_threads: DEFAULT_THREADS.min(max),
            max_teams,
            reduction_bytes,
            param_bytes: std::sync::OnceLock::new(),
        }
    }

    pub fn reduction_bytes(&self) -> usize {
        self.reduction_bytes
    }

    fn is_spmd(&self) -> bool {
        self.exec_mode == EXEC_SPMD
    }

    fn is_generic(&self) -> bool {
        self.exec_mode == EXEC_GENERIC
    }

    pub fn mode_name(&self) -> &'static str {
        match self.exec_mode {
            EXEC_GENERIC => "Generic",
            EXEC_SPMD => "SPMD",
            _ => "Generic-SPMD",
        }
    }

    /// (blocks, threads per block) for a launch, LLVM 19's `getNumThreads`/`getNumBlocks`.
    pub fn geometry(&self, d: &LimitsWithEnv, c: &LaunchConfig) -> (u32, u32) {
        let l = d.limits;
        let max_threads = self.max_threads.min(l.thread_limit);
        let mut clause_threads = c.thread_limit[0];
        if clause_threads > 0 && self.is_generic() {
            clause_threads += l.warp_size;
        }
        let mut threads = if clause_threads > 0 {
            clause_threads.min(max_threads)
        } else {
            self.preferred_threads.min(max_threads)
        }
        .max(1);
        let user_threads = c.thread_limit[0] > 0;
        let mut blocks: u64 = if c.num_teams[0] == u32::MAX {
            // clang passes -1 for a region without a teams construct: one team.
            1
        } else if c.num_teams[0] > 0 {
            u64::from(c.num_teams[0].min(l.block_limit))
        } else {
            let default_blocks = u64::from(l.default_blocks);
            let trip = c.tripcount;
            let mut trip_blocks = u64::MAX;
            if trip > 0 {
                if self.is_spmd() {
                    let min_threads = MIN_THREADS_LOW_TRIP_COUNT.min(threads);
                    if trip >= default_blocks * u64::from(threads) || user_threads {
                        trip_blocks = (trip - 1) / u64::from(threads) + 1;
                    } else if trip >= default_blocks * u64::from(min_threads) {
                        let per_block = trip.div_ceil(default_blocks).next_power_of_two();
                        threads = threads.min(per_block as u32);
                        trip_blocks = (trip - 1) / u64::from(threads) + 1;
                    } else {
                        threads = threads.min(min_threads);
                        trip_blocks = (trip - 1) / u64::from(threads) + 1;
                    }
                } else {
                    trip_blocks = trip;
                }
            }
            trip_blocks
                .min(default_blocks)
                .min(u64::from(l.block_limit))
        };
        if self.max_teams > 0 {
            blocks = blocks.min(self.max_teams as u64);
        }
        (blocks.max(1) as u32, threads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> LimitsWithEnv {
        DeviceLimits {
            warp_size: 32,
            max_threads: 1024,
            max_blocks: i32::MAX as u32,
            clock_khz: 1_980_000,
            hardware_parallelism: 132 * 64,
        }
        .with_environment(&CudaConfig::default())
    }

    fn kernel(mode: u8) -> KernelInfo {
        let mut env = vec![0u8; 48];
        env[2] = mode;
        env[4..8].copy_from_slice(&(-1i32).to_le_bytes());
        env[8..12].copy_from_slice(&(-1i32).to_le_bytes());
        env[16..20].copy_from_slice(&(-1i32).to_le_bytes());
        KernelInfo::new(std::ptr::null_mut(), Some(&env), 1024)
    }

    #[test]
    fn spmd_loops_get_one_iteration_per_thread() {
        let k = kernel(EXEC_SPMD);
        let c = LaunchConfig {
            version: 3,
            tripcount: 1 << 24,
            ..Default::default()
        };
        assert_eq!(k.geometry(&limits(), &c), (3200, 128));
        let small = LaunchConfig {
            version: 3,
            tripcount: 1000,
            ..Default::default()
        };
        let (b, t) = k.geometry(&limits(), &small);
        assert!(u64::from(b) * u64::from(t) >= 1000 && t == 32, "{b} {t}");
    }

    #[test]
    fn a_region_without_teams_gets_one_block() {
        let c = LaunchConfig {
            version: 3,
            num_teams: [u32::MAX, 0, 0],
            ..Default::default()
        };
        assert_eq!(kernel(3).geometry(&limits(), &c), (1, 128));
    }

    #[test]
    fn clauses_win_and_generic_mode_adds_a_warp() {
        let c = LaunchConfig {
            version: 3,
            num_teams: [7, 0, 0],
            thread_limit: [64, 0, 0],
            ..Default::default()
        };
        assert_eq!(kernel(EXEC_SPMD).geometry(&limits(), &c), (7, 64));
        assert_eq!(kernel(EXEC_GENERIC).geometry(&limits(), &c), (7, 96));
        let env = CudaConfig {
            num_teams: 5,
            teams_thread_limit: 256,
            ..Default::default()
        };
        let l = limits().device.with_environment(&env);
        let c = LaunchConfig {
            version: 3,
            ..Default::default()
        };
        assert_eq!(kernel(EXEC_GENERIC).geometry(&l, &c), (5, 128));
    }
}
