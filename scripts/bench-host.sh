#!/usr/bin/env bash
# Host-device benchmark: the same binary (bench/host_regions.c) under LLVM 19's runtime and
# ours, alternating, in one run; per-region medians and the ratio LLVM/ours.
# usage: scripts/bench-host.sh [runs] [reps] [regions]
# (then bench/many_items.c: one construct of 10^4..10^6 items, 3 runs of 3 reps)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
runs=${1:-5} reps=${2:-7} regions=${3:-20000}
cargo build --release --locked -p omptarget-abi -p omptarget-suite
out=target/bench
mkdir -p "$out/lib"
ln -sf "$PWD/target/release/libomptarget.so" "$out/lib/libomptarget.so.19.1"
clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 bench/host_regions.c -o "$out/host_regions"
# The CPU's speed (ns per step of a dependent multiply-add; times follow it), and the load.
clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 bench/gpu_scenarios.c -o "$out/gpu_scenarios"
LD_LIBRARY_PATH=$out/lib "$out/gpu_scenarios" host_clock 5 1
uptime
target/release/omptarget-suite bench "$out/host_regions" --ours "$out/lib" --runs "$runs" -- all "$reps" "$regions"
# One construct of many items: enter data and exit data of 10^4, 10^5 and 10^6
# distinct 4-byte items, µs per construct (not per region), LLVM 19 vs ours.
clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 bench/many_items.c -o "$out/many_items"
target/release/omptarget-suite bench "$out/many_items" --ours "$out/lib" --runs 3 -- 3 10000 100000 1000000
