#!/usr/bin/env bash
# Host-device benchmark: the same binary (bench/host_regions.c) under LLVM 19's runtime and
# ours, alternating, in one run; per-region medians and the ratio LLVM/ours.
# usage: scripts/bench-host.sh [runs] [reps] [regions]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
runs=${1:-5} reps=${2:-7} regions=${3:-20000}
cargo build --release --locked -p omptarget-abi -p omptarget-suite
out=target/bench
mkdir -p "$out/lib"
ln -sf "$PWD/target/release/libomptarget.so" "$out/lib/libomptarget.so.19.1"
clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 bench/host_regions.c -o "$out/host_regions"
target/release/omptarget-suite bench "$out/host_regions" --ours "$out/lib" --runs "$runs" -- all "$reps" "$regions"
