#!/usr/bin/env bash
# Soak and load run of tests/soak/soak.c (no leak or slowdown over long runs): CONSTRUCTS constructs from
# THREADS threads, every result checked, host RSS sampled by the program (it fails unless RSS
# is flat after warm-up) and, where nvidia-smi exists, the GPU's used memory sampled every
# 0.5 s (it must not grow after warm-up either).
#
# usage: tests/soak/run.sh [CONSTRUCTS=1000000] [THREADS=16] [SAMPLES=20]
# env: SOAK_BIN  a prebuilt soak binary (on the GPU machine: gpu/out/soak/soak, from
#                gpu/build.sh); default: compile tests/soak/soak.c for the host device
#      SOAK_LIB  folder holding libomptarget.so.19.1 to run under (default: ours, built
#                with cargo --release; on the GPU machine gpu/out/ours)
#      EXTRA_LIB folder(s) after it in LD_LIBRARY_PATH (default /usr/local/nvidia/lib64)
#      SOAK_LLVM=1  also run under LLVM 19's runtime (/usr/lib/llvm-19/lib), for comparison
set -euo pipefail
cd "$(dirname "$0")/../.."
constructs=${1:-1000000} threads=${2:-16} samples=${3:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bin=${SOAK_BIN:-}
if [[ -z $bin ]]; then
  scripts/deps.sh
  bin=$work/soak
  clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 tests/soak/soak.c -o "$bin"
fi
lib=${SOAK_LIB:-}
if [[ -z $lib ]]; then
  cargo build --release --locked -p omptarget-abi >&2
  lib=$work/lib
  mkdir -p "$lib"
  ln -s "$PWD/target/release/libomptarget.so" "$lib/libomptarget.so.19.1"
fi
extra=${EXTRA_LIB:-/usr/local/nvidia/lib64}

run() { # NAME LIBDIR
  local name=$1 dir=$2 smi_pid= rc=0
  echo "== soak under $name: $constructs constructs, $threads threads"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$work/gpu.$name" &
    smi_pid=$!
  fi
  LD_LIBRARY_PATH=$dir:$extra "$bin" "$constructs" "$threads" "$samples" | tee "$work/out.$name" || rc=$?
  if [[ -n $smi_pid ]]; then
    kill "$smi_pid" 2>/dev/null || true
    wait "$smi_pid" 2>/dev/null || true
    # Used GPU memory (MiB) after the first quarter of the samples, at least two (warm-up: the
    # first samples come before the runtime made its context and memory pool; a run of 4 s
    # with 2 samples a second once counted the empty device as the start): the last sample
    # over 64 MiB above the lowest is a leak.
    awk -v name="$name" '{ v[NR] = $1 } END {
      # Samples after the process ended (back at the first sample, taken before it started)
      # are not part of the run.
      n = NR; while (n > 1 && v[n] <= v[1]) n--
      skip = int(n / 4); if (skip < 2) skip = 2; if (skip >= n) skip = n - 1
      min = 1e18; max = 0
      for (i = skip + 1; i <= n; i++) { if (v[i] < min) min = v[i]; if (v[i] > max) max = v[i] }
      # Growth is the run'"'"'s last sample above the lowest after warm-up: the memory pool gives
      # cached memory back while the run goes on (793 -> 532 MiB seen), which is no leak.
      printf "soak: GPU memory used under %s: %d samples of the run, after warm-up %d..%d MiB, last %d MiB: %s\n",
        name, n, min, max, v[n], (v[n] - min <= 64 ? "flat" : "GROWING")
      exit (v[n] - min > 64) }' "$work/gpu.$name" || rc=1
  fi
  return "$rc"
}

status=0
run ours "$lib" || status=1
if [[ ${SOAK_LLVM:-0} == 1 ]]; then
  run llvm19 /usr/lib/llvm-19/lib || true
fi
exit "$status"
