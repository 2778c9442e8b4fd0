#!/usr/bin/env bash
# The questions the runtime's next GPU changes wait on, in one device call, with what
# gpu/build.sh built (carry ["gpu/out-pack"]):
#   1. whether launches can leave a small-copy region's critical path: `omptarget-suite probe
#      gated-copies` (modes launched, gated, graph, graph-update, graph-update2; crates/suite/src/gated.rs)
#      with no host work and with 4 µs standing in for each half of a region, after the
#      CPU's speed (`host_clock`);
#   2. whether streaming stores help the host side of large staged copies on this machine:
#      `memcpy_bw` (memcpy against streaming in 1 MiB pieces), then gpu/opt-in.sh with
#      OMPTARGET_RS_CUDA_STREAMING_STORES=0 and with OMPTARGET_RS_CUDA_STREAMING_MIN=4194304
#      against the default on the rows they concern.
# Prints everything to stdout; ~4 minutes.
# usage: bash gpu/launch-probes.sh      env: RUNS (opt-in's, 3), GPU_OUT, EXTRA_LIB
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 2
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
source gpu/unpack.sh
gpu_setup || exit 2
echo "== host_clock"
LD_LIBRARY_PATH="$G/ours:$EXTRA" timeout 60 "$G/bench/gpu_scenarios" host_clock 5 1
for work in 0 4; do
  echo "== probe gated-copies 1000 5 $work"
  LD_LIBRARY_PATH="$EXTRA" timeout 120 "$G/bin/omptarget-suite" probe gated-copies 1000 5 "$work"
done
echo "== memcpy_bw 16"
timeout 120 "$G/bin/memcpy_bw" 16
echo "== opt-in: streaming stores (off, and from 4 MiB copies on)"
SETTINGS="OMPTARGET_RS_CUDA_STREAMING_STORES=0 OMPTARGET_RS_CUDA_STREAMING_MIN=4194304" \
  SCENARIOS=host_clock,tofrom64MiB_pageable,nowait32x4MiB,beside_fixed4MiB RUNS=${RUNS:-3} \
  bash gpu/opt-in.sh
