#!/usr/bin/env bash
# The long stress runs (the short ones are part of scripts/test.sh): 8 threads dlopen and
# dlclose a library with its own offload image 1,000 times while others run target regions,
# 50 runs, each killed and counted as a failure after 120 s.
#   scripts/stress.sh [cycles] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -p omptarget-abi
OMPTARGET_STRESS_CYCLES="${1:-1000}" OMPTARGET_STRESS_RUNS="${2:-50}" \
OMPTARGET_STRESS_TIMEOUT="${OMPTARGET_STRESS_TIMEOUT:-120}" \
    cargo test -p omptarget-abi --test stress -- --nocapture
