#!/usr/bin/env bash
# Installs what building and testing need, if it is missing: clang-19 (the compiler of the C
# programs), libomp-19-dev (LLVM 19's libomp and its libomptarget, the oracle), libffi-dev and
# Open MPI.
set -euo pipefail
need=()
command -v clang-19 >/dev/null || need+=(clang-19)
[[ -f /usr/lib/llvm-19/lib/libomptarget.so.19.1 ]] || need+=(libomp-19-dev)
[[ -f /usr/include/ffi.h || -f /usr/include/x86_64-linux-gnu/ffi.h ]] || need+=(libffi-dev)
# Open MPI for the MPI example and its test (crates/abi/tests/mpi.rs).
command -v mpicc >/dev/null || need+=(openmpi-bin libopenmpi-dev)
if ((${#need[@]})); then
  echo "installing: ${need[*]}" >&2
  sudo=; [[ $(id -u) == 0 ]] || sudo=sudo
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
