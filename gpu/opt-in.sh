#!/usr/bin/env bash
# The CUDA plugin's wait and copy settings against its defaults, on the GPU machine, with what
# gpu/build.sh built (carry ["gpu/out-pack"]): each setting and the default run the same
# scenarios of bench/gpu_scenarios.c in alternation, RUNS times each, and each run's
# `scenario=` lines are printed with the process's CPU time (bash `time`: user and system
# seconds of the whole process). Then, once per runtime (ours, ours with the driver's waits,
# LLVM 19), which threads take the CPU in each scenario (bench/gpu_scenarios.c's
# GPU_SCENARIOS_THREAD_CPU). docs/CONFIGURATION.md says what each setting does:
#   OMPTARGET_RS_CUDA_SPIN_US=-1     every wait is the driver's synchronisation (spins for as
#                                    long as the device works; the default until 2026-12)
#   OMPTARGET_RS_CUDA_SPIN_US=0      every wait sleeps at once (LLVM's way, without its
#                                    blocking-sync context)
#   OMPTARGET_RS_CUDA_PACK_COPIES=0  a pinned buffer per small copy
#   OMPTARGET_RS_CUDA_STREAMING_STORES=0  memcpy for the host side of staged copies of 8 MiB
#                                    and more
#   OMPTARGET_RS_CUDA_STREAMING_MIN=4194304  non-temporal stores from 4 MiB copies on (the
#                                    two are not in the default list: SETTINGS=... with
#                                    SCENARIOS=host_clock,nowait32x4MiB,tofrom64MiB_pageable,beside_fixed4MiB)
#
# usage: bash gpu/opt-in.sh        env: RUNS (3), SCENARIOS (a list), GPU_OUT, EXTRA_LIB,
#                                  SETTINGS (the list above)
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 2
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
source gpu/unpack.sh
gpu_setup || exit 2
sc=$G/bench/gpu_scenarios
scen=${SCENARIOS:-host_clock,empty,map64B,alloc64MiB_kernel,alloc1GiB_kernel,enter_kernel_exit64MiB,arrays16x1KiB,nowait32x4MiB,threads16_map64B,threads128_map64B,kernel1s}
settings=${SETTINGS:-OMPTARGET_RS_CUDA_SPIN_US=-1 OMPTARGET_RS_CUDA_SPIN_US=0 OMPTARGET_RS_CUDA_PACK_COPIES=0}
TIMEFORMAT="cpu: %U s user, %S s system, %R s wall"
for run in $(seq 1 "${RUNS:-3}"); do
  for setting in default $settings; do
    echo "== run $run: $setting"
    envs=()
    [[ $setting != default ]] && envs=("$setting")
    { time env "${envs[@]}" LD_LIBRARY_PATH="$G/ours:$EXTRA" timeout 300 "$sc" "$scen" 5 1; } 2>&1
  done
done
# Which threads take the CPU: the same scenarios once more per runtime with
# GPU_SCENARIOS_THREAD_CPU=1, which prints after each scenario a `threads=` line (CPU µs over
# its timed repetitions, summed by thread name).
echo "== CPU µs per thread name over each scenario's timed repetitions"
for rt in ours "ours OMPTARGET_RS_CUDA_SPIN_US=-1" llvm19; do
  lib=$G/ours; envs=()
  [[ $rt == llvm19 ]] && lib=$LLVM19_DIR
  [[ $rt == ours\ * ]] && envs=("${rt#ours }")
  echo "-- $rt"
  env "${envs[@]}" GPU_SCENARIOS_THREAD_CPU=1 LD_LIBRARY_PATH="$lib:$EXTRA" timeout 300 "$sc" "$scen" 5 1 2>&1 |
    awk '/^scenario=/ { split($1, a, "="); name = a[2]; cpu = $NF } /^threads=/ { print name, cpu, $0 }'
done
