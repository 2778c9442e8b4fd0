#!/usr/bin/env bash
# Installs what building and testing need, if it is missing: clang-19 and clang-22 (the
# compilers of the C programs), libomp-19-dev (LLVM 19's libomp and its libomptarget, the clang-19
# oracle), libffi-dev and Open MPI; then unpacks LLVM 22's runtime (the clang-22 oracle) into
# build/llvm22 (scripts/llvm22.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v clang-19 >/dev/null || need+=(clang-19)
command -v clang-22 >/dev/null || need+=(clang-22)
[[ -f /usr/lib/llvm-19/lib/libomptarget.so.19.1 ]] || need+=(libomp-19-dev)
[[ -f /usr/include/ffi.h || -f /usr/include/x86_64-linux-gnu/ffi.h ]] || need+=(libffi-dev)
# Open MPI for the MPI example and its test (crates/abi/tests/mpi.rs).
command -v mpicc >/dev/null || need+=(openmpi-bin libopenmpi-dev)
sudo=; [[ $(id -u) == 0 ]] || sudo=sudo
updated=0
if ((${#need[@]})); then
  echo "installing: ${need[*]}" >&2
  $sudo apt-get update -qq
  updated=1
  $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! scripts/llvm22.sh 2>/dev/null; then
  ((updated)) || $sudo apt-get update -qq
  scripts/llvm22.sh
fi
