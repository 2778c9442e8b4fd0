//! Kernel metadata (`<kernel>_kernel_environment` of clang 19's device runtime) and launch
//! geometry, following LLVM 19's CUDA plugin rule for rule, so programs see the same team and
//! thread counts (`tests/c/launch_geometry*.c` compare them with LLVM 19's, case by case).
//!
//! The limits and where they come from:
//! - blocks: the device's `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X` (2^31 - 1 on sm_90), lowered by
//!   `OMP_NUM_TEAMS`, which LLVM 19 applies as a maximum, also to a `num_teams` clause;
//! - threads per block: `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X`, lowered by
//!   `OMP_TEAMS_THREAD_LIMIT`, by the kernel's own maximum (its environment's `MaxThreads`) and
//!   by what its registers allow (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`);
//! - without clauses: 3200 blocks (`GV_Default_Num_Teams` of LLVM's NVPTX grid values) and 128
//!   threads (`GV_Default_WG_Size`), or the kernel's `MinThreads` when it asks for more;
//! - a bare kernel (`ompx_bare`: no kernel environment) gets its clauses as they are, unclamped,
//!   as CUDA launches do: a thread count its registers do not allow fails the launch with the
//!   driver's "too many resources requested for launch" instead of silently running fewer
//!   threads than the kernel's index arithmetic assumes.
//!
//! `OMP_TEAM_LIMIT` has no effect on device launches, as in LLVM 19 (whose plugin reads it and
//! uses it nowhere).

use crate::CudaConfig;
use cudarc::driver::sys::CUfunction;
use omptarget_plugin::LaunchConfig;

/// `OMPTgtExecModeFlags`.
const EXEC_GENERIC: u8 = 1;
const EXEC_SPMD: u8 = 2;

/// LLVM's NVPTX grid values that the device does not override.
const DEFAULT_NUM_TEAMS: u32 = 3200;
const DEFAULT_THREADS: u32 = 128;
/// `getMinThreadsForLowTripCountLoop`.
const MIN_THREADS_LOW_TRIP_COUNT: u32 = 32;

/// Per-device launch limits after the environment's overrides.
#[derive(Clone, Copy, Debug)]
pub struct DeviceLimits {
    pub warp_size: u32,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X`.
    pub max_threads: u32,
    /// `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X`.
    pub max_blocks: u32,
    pub hardware_parallelism: u64,
}

/// The limits the launch rules use.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub warp_size: u32,
    pub thread_limit: u32,
    pub block_limit: u32,
}

impl DeviceLimits {
    /// Applies `OMP_NUM_TEAMS` (a maximum, as LLVM 19's `GV_Max_Teams`) and
    /// `OMP_TEAMS_THREAD_LIMIT`.
    pub fn with_environment(self, c: &CudaConfig) -> LimitsWithEnv {
        let mut block_limit = self.max_blocks.max(1);
        if c.num_teams > 0 {
            block_limit = block_limit.min(c.num_teams);
        }
        let mut thread_limit = self.max_threads.max(1);
        if c.teams_thread_limit > 0 {
            thread_limit = thread_limit.min(c.teams_thread_limit);
        }
        LimitsWithEnv {
            device: self,
            limits: Limits {
                warp_size: self.warp_size,
                thread_limit,
                block_limit,
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
    /// No kernel environment: an `ompx_bare` kernel (LLVM 19's `IsBareKernel`).
    bare: bool,
    /// `MaxNumThreads` before the device's thread limit: the kernel environment's
    /// `MaxThreads` and what the function's registers allow.
    max_threads: u32,
    /// The kernel environment's `MinThreads` (0: none).
    min_threads: u32,
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
    /// MaxThreads, MinTeams, MaxTeams, ReductionDataSize, ReductionBufferLength) and the
    /// function's `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`. Without an environment the kernel
    /// is bare and its configuration LLVM 19's default: SPMD, no bounds, no reduction.
    /// (`MinTeams`/`MaxTeams` take no part in LLVM 19's launch rule.)
    pub fn new(func: CUfunction, env: Option<&[u8]>, func_max_threads: u32) -> Self {
        let (bare, exec_mode, min_threads, max_threads, reduction_bytes) = match env {
            Some(b) if b.len() >= 28 => {
                let data = i32_at(b, 20).max(0) as usize;
                let length = i32_at(b, 24).max(0) as usize;
                (false, b[2], i32_at(b, 4), i32_at(b, 8), data * length)
            }
            _ => (true, EXEC_SPMD, -1, -1, 0),
        };
        let mut max = func_max_threads.max(1);
        if max_threads > 0 {
            max = max.min(max_threads as u32);
        }
        Self {
            func,
            exec_mode,
            bare,
            max_threads: max,
            min_threads: min_threads.max(0) as u32,
            reduction_bytes,
            param_bytes: std::sync::OnceLock::new(),
        }
    }

    /// An `ompx_bare` kernel: launched with its clauses in all three dimensions (LLVM 22's
    /// multi-dimensional `num_teams(x, y, z)` / `thread_limit(x, y, z)`; clang 19 passes 0
    /// for y and z, launched as 1).
    pub fn is_bare(&self) -> bool {
        self.bare
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

    /// (blocks, threads per block) for a launch: LLVM 19's `getNumThreads` and `getNumBlocks`.
    pub fn geometry(&self, d: &LimitsWithEnv, c: &LaunchConfig) -> (u32, u32) {
        let l = d.limits;
        let clause_threads = c.thread_limit[0];
        let clause_teams = c.num_teams[0];
        // The entry point turns clang's -1 (a region without `teams`) into one team.
        let clause_teams = if clause_teams == u32::MAX {
            1
        } else {
            clause_teams
        };
        // MaxNumThreads: the device's limit, the kernel's, its registers'.
        let max_threads = self.max_threads.min(l.thread_limit).max(1);
        // PreferredNumThreads: the default, or the kernel's minimum when larger.
        let preferred = DEFAULT_THREADS.max(self.min_threads);
        let mut threads = if self.bare && clause_threads > 0 {
            clause_threads
        } else if clause_threads > 0 {
            let asked = if self.is_generic() {
                clause_threads.wrapping_add(l.warp_size)
            } else {
                clause_threads
            };
            asked.min(max_threads)
        } else {
            preferred.min(max_threads)
        };
        if clause_teams > 0 {
            let blocks = if self.bare {
                clause_teams
            } else {
                clause_teams.min(l.block_limit)
            };
            return (blocks, threads);
        }
        let default_blocks = u64::from(DEFAULT_NUM_TEAMS);
        let trip = c.tripcount;
        let mut trip_blocks = u64::MAX;
        if trip > 0 {
            if self.is_spmd() {
                let min_threads = MIN_THREADS_LOW_TRIP_COUNT.min(threads);
                if trip >= default_blocks * u64::from(threads) || clause_threads > 0 {
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
        // LLVM 19 narrows the preferred count to 32 bits before the block limit.
        let preferred_blocks = trip_blocks.min(default_blocks) as u32;
        (preferred_blocks.min(l.block_limit).max(1), threads.max(1))
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
            hardware_parallelism: 132 * 64,
        }
        .with_environment(&CudaConfig::default())
    }

    fn env(mode: u8, min_threads: i32, max_threads: i32) -> Vec<u8> {
        let mut env = vec![0u8; 48];
        env[2] = mode;
        env[4..8].copy_from_slice(&min_threads.to_le_bytes());
        env[8..12].copy_from_slice(&max_threads.to_le_bytes());
        env[16..20].copy_from_slice(&(-1i32).to_le_bytes());
        env
    }

    fn kernel(mode: u8) -> KernelInfo {
        KernelInfo::new(std::ptr::null_mut(), Some(&env(mode, -1, -1)), 1024)
    }

    fn launch(teams: u32, threads: u32, tripcount: u64) -> LaunchConfig {
        LaunchConfig {
            version: 3,
            num_teams: [teams, 0, 0],
            thread_limit: [threads, 0, 0],
            tripcount,
            ..Default::default()
        }
    }

    #[test]
    fn spmd_loops_get_one_iteration_per_thread() {
        let k = kernel(EXEC_SPMD);
        assert_eq!(k.geometry(&limits(), &launch(0, 0, 1 << 24)), (3200, 128));
        let (b, t) = k.geometry(&limits(), &launch(0, 0, 1000));
        assert!(u64::from(b) * u64::from(t) >= 1000 && t == 32, "{b} {t}");
        // A thread_limit clause keeps its threads and sizes the grid by the trip count.
        assert_eq!(k.geometry(&limits(), &launch(0, 64, 1 << 20)), (3200, 64));
        assert_eq!(k.geometry(&limits(), &launch(0, 64, 1000)), (16, 64));
    }

    #[test]
    fn a_region_without_teams_gets_one_block() {
        assert_eq!(
            kernel(3).geometry(&limits(), &launch(u32::MAX, 0, 0)),
            (1, 128)
        );
    }

    #[test]
    fn clauses_win_and_generic_mode_adds_a_warp() {
        let c = launch(7, 64, 0);
        assert_eq!(kernel(EXEC_SPMD).geometry(&limits(), &c), (7, 64));
        assert_eq!(kernel(EXEC_GENERIC).geometry(&limits(), &c), (7, 96));
        assert_eq!(kernel(3).geometry(&limits(), &c), (7, 64));
        // Generic mode's extra warp counts against the limit.
        assert_eq!(
            kernel(EXEC_GENERIC).geometry(&limits(), &launch(1, 1024, 0)),
            (1, 1024)
        );
    }

    #[test]
    fn num_teams_is_launched_up_to_the_grid_limit() {
        let k = kernel(EXEC_SPMD);
        for teams in [
            65_535,
            65_536,
            65_537,
            200_000,
            1_000_000,
            1 << 20,
            i32::MAX as u32,
        ] {
            assert_eq!(k.geometry(&limits(), &launch(teams, 0, 0)).0, teams);
        }
        assert_eq!(
            k.geometry(&limits(), &launch(u32::MAX - 1, 0, 0)).0,
            i32::MAX as u32
        );
    }

    #[test]
    fn omp_num_teams_is_a_maximum_and_teams_thread_limit_caps_threads() {
        let env = CudaConfig {
            num_teams: 5,
            teams_thread_limit: 256,
            ..Default::default()
        };
        let l = limits().device.with_environment(&env);
        let k = kernel(EXEC_GENERIC);
        assert_eq!(k.geometry(&l, &launch(0, 0, 0)), (5, 128));
        // LLVM 19 applies it to a num_teams clause too.
        assert_eq!(k.geometry(&l, &launch(7, 0, 0)), (5, 128));
        assert_eq!(k.geometry(&l, &launch(3, 1000, 0)), (3, 256));
        // The default team count the trip-count rule starts from stays 3200.
        let l = limits().device.with_environment(&CudaConfig {
            num_teams: 70_000,
            ..Default::default()
        });
        assert_eq!(
            kernel(EXEC_SPMD).geometry(&l, &launch(0, 0, 3200 * 64)),
            (3200, 64)
        );
        assert_eq!(
            kernel(EXEC_SPMD).geometry(&l, &launch(100_000, 0, 0)).0,
            70_000
        );
    }

    #[test]
    fn kernel_bounds_and_registers_limit_threads() {
        // MaxThreads 256 in the environment; registers allowing 512.
        let k = KernelInfo::new(std::ptr::null_mut(), Some(&env(EXEC_SPMD, -1, 256)), 512);
        assert_eq!(k.geometry(&limits(), &launch(1, 1024, 0)), (1, 256));
        let k = KernelInfo::new(std::ptr::null_mut(), Some(&env(EXEC_SPMD, -1, -1)), 384);
        assert_eq!(k.geometry(&limits(), &launch(1, 1024, 0)), (1, 384));
        // MinThreads above the default is the preferred count.
        let k = KernelInfo::new(std::ptr::null_mut(), Some(&env(EXEC_SPMD, 256, -1)), 1024);
        assert_eq!(k.geometry(&limits(), &launch(1, 0, 0)), (1, 256));
    }

    #[test]
    fn bare_kernels_get_their_clauses_unclamped() {
        let k = KernelInfo::new(std::ptr::null_mut(), None, 256);
        assert_eq!(k.mode_name(), "SPMD");
        assert_eq!(
            k.geometry(&limits(), &launch(70_000, 1024, 0)),
            (70_000, 1024)
        );
        let l = limits().device.with_environment(&CudaConfig {
            num_teams: 5,
            ..Default::default()
        });
        assert_eq!(k.geometry(&l, &launch(9, 64, 0)), (9, 64));
    }
}
