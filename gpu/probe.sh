#!/usr/bin/env bash
# A quick performance probe on the GPU machine: each example 3 times under each runtime,
# alternating, and the launch geometry both runtimes choose for the stencil's kernels.
set -u
cd "$(dirname "$0")/.."
G=${GPU_OUT:-gpu/out}
L=/tmp/omptarget-llvm19/llvm19
[[ -d $L ]] || { mkdir -p /tmp/omptarget-llvm19 && tar -C /tmp/omptarget-llvm19 -xJf "$G/llvm19.tar.xz"; }
NV=/usr/local/nvidia/lib64
for ex in saxpy reduction stencil; do
  for i in 1 2 3; do
    for rt in llvm ours; do
      lib=$L; [[ $rt == ours ]] && lib=$G/ours
      t=$(LD_LIBRARY_PATH=$lib:$NV "$G/examples/$ex" | grep -o 'time: [0-9.]*' | cut -d' ' -f2)
      echo "$ex $rt $t"
    done
  done
done
for rt in llvm ours; do
  lib=$L; [[ $rt == ours ]] && lib=$G/ours
  echo "-- stencil launches under $rt"
  LD_LIBRARY_PATH=$lib:$NV LIBOMPTARGET_INFO=16 "$G/examples/stencil" 2>&1 | grep Launching | sort | uniq -c | head -5
done
for ex in reduction stencil; do
  echo "-- $ex: our driver-call profile (OMPTARGET_RS_PROFILE=1), memory pool on, then off"
  LD_LIBRARY_PATH=$G/ours:$NV OMPTARGET_RS_PROFILE=1 "$G/examples/$ex" 2>&1 | grep -E "time:|calls" | head -14
  LD_LIBRARY_PATH=$G/ours:$NV OMPTARGET_RS_CUDA_MEMORY_POOL=0 "$G/examples/$ex" 2>&1 | grep -E "time:"
done
