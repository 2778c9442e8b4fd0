#!/usr/bin/env bash
# A quick performance probe on the GPU machine: each example 3 times under each runtime,
# alternating (and ours with pool pre-allocation off), with whole-process wall time, then
# our driver-call profile of one example.
set -u
cd "$(dirname "$0")/.."
G=${GPU_OUT:-gpu/out}
L=/tmp/omptarget-llvm19/llvm19
[[ -d $L ]] || { mkdir -p /tmp/omptarget-llvm19 && tar -C /tmp/omptarget-llvm19 -xJf "$G/llvm19.tar.xz"; }
NV=/usr/local/nvidia/lib64
run() { # label lib env... -- exe
  local label=$1 lib=$2; shift 2
  local t0=$(date +%s%N)
  local t=$(env LD_LIBRARY_PATH=$lib:$NV "$@" | grep -o 'time: [0-9.]*' | cut -d' ' -f2)
  local t1=$(date +%s%N)
  printf '%-10s %-22s region %8s ms   process %6d ms\n' "$ex" "$label" "$t" $(( (t1 - t0) / 1000000 ))
}
for ex in saxpy reduction stencil; do
  for i in 1 2 3; do
    run llvm "$L" "$G/examples/$ex"
    run ours "$G/ours" "$G/examples/$ex"
    run ours-noprealloc "$G/ours" OMPTARGET_RS_CUDA_POOL_PREALLOCATE=0 "$G/examples/$ex"
    run ours-nopool "$G/ours" OMPTARGET_RS_CUDA_MEMORY_POOL=0 "$G/examples/$ex"
  done
done
echo "-- reduction: our driver-call profile"
LD_LIBRARY_PATH=$G/ours:$NV OMPTARGET_RS_PROFILE=1 "$G/examples/reduction" 2>&1 | grep -E "time:|calls" | head -12
