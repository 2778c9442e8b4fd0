#!/usr/bin/env bash
# The CUDA plugin's opt-in settings against its defaults, on the GPU machine, with what
# gpu/build.sh built (carry ["gpu/out-pack"]): each setting and the default run the same
# scenarios of bench/gpu_scenarios.c in alternation, RUNS times each, and each run's
# `scenario=` lines are printed with the process's CPU time (bash `time`: user and system
# seconds of the whole process). A setting becomes a default only once this shows it no
# slower on any row and cheaper where it is meant to be (docs/CONFIGURATION.md says what
# each one does):
#   OMPTARGET_RS_CUDA_SPIN_US=100  waits poll, then sleep: less CPU per region on the rows
#                                  that wait long (nowait32x4MiB, alloc1GiB_kernel)
#   OMPTARGET_RS_CUDA_SPIN_US=0    every wait sleeps at once (LLVM's way, without its
#                                  blocking-sync context)
#   OMPTARGET_RS_CUDA_PACK_COPIES=1  small copies packed into one pinned arena per stream
#
# usage: bash gpu/opt-in.sh        env: RUNS (3), SCENARIOS (a list), GPU_OUT, EXTRA_LIB
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 2
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
source gpu/unpack.sh
gpu_setup || exit 2
sc=$G/bench/gpu_scenarios
scen=${SCENARIOS:-host_clock,empty,map64B,alloc64MiB_kernel,alloc1GiB_kernel,enter_kernel_exit64MiB,arrays16x1KiB,nowait32x4MiB,threads16_map64B,threads128_map64B}
TIMEFORMAT="cpu: %U s user, %S s system, %R s wall"
for run in $(seq 1 "${RUNS:-3}"); do
  for setting in default OMPTARGET_RS_CUDA_SPIN_US=100 OMPTARGET_RS_CUDA_SPIN_US=0 OMPTARGET_RS_CUDA_PACK_COPIES=1; do
    echo "== run $run: $setting"
    envs=()
    [[ $setting != default ]] && envs=("$setting")
    { time env "${envs[@]}" LD_LIBRARY_PATH="$G/ours:$EXTRA" timeout 300 "$sc" "$scen" 5 1; } 2>&1
  done
done
