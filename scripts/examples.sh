#!/usr/bin/env bash
# The main job: builds the runtime, compiles the example programs with clang-19 (or, with
# `--clang 22`, clang-22 against LLVM 22's headers from scripts/llvm22.sh) and runs them on our
# runtime, on the best device present: an NVIDIA GPU when one is visible and a CUDA toolchain
# folder exists (see docs/GPU.md; clang-19 builds only), else the x86_64 host device.
set -euo pipefail
cd "$(dirname "$0")/.."
clang=19
while (($#)); do
  case $1 in
    --clang) clang=$2; shift 2 ;;
    *) echo "examples.sh: unknown argument $1 (usage: examples.sh [--clang 19|22])" >&2; exit 2 ;;
  esac
done
[[ $clang == 19 || $clang == 22 ]] || { echo "examples.sh: --clang 19 or 22" >&2; exit 2; }
scripts/deps.sh
cargo build --release --locked -p omptarget-abi -p omptarget-cli
out=target/examples
mkdir -p "$out/lib"
# One library under both names: clang-19 programs need libomptarget.so.19.1, clang-22 ones
# libomptarget.so.22.1.
for v in 19.1 22.1; do ln -sf "$PWD/target/release/libomptarget.so" "$out/lib/libomptarget.so.$v"; done
cc=(clang-19)
[[ $clang == 22 ]] && cc=(clang-22 -I build/llvm22/include -L build/llvm22/lib)

target=host
if [[ $clang == 19 ]] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 \
   && [[ -x ${OFFLOAD_CUDA_ROOT:-$HOME/.cache/omptarget-cuda}/bin/ptxas ]]; then
  target=sm_90
fi
echo "== omptarget info"
target/release/omptarget info
echo "== examples, clang-$clang, offload target: $target"
status=0
for src in examples/*.c; do
  name=$(basename "$src" .c)
  if [[ $target == host ]]; then
    "${cc[@]}" -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 "$src" -o "$out/$name"
  else
    ../shared/tools/offload-cc --target "$target" -O2 "$src" -o "$out/$name"
  fi
  echo "-- $name"
  LD_LIBRARY_PATH="$PWD/$out/lib:${LD_LIBRARY_PATH:-}" OMP_TARGET_OFFLOAD=MANDATORY "$out/$name" || status=1
done
# MPI: examples/mpi/*.c with Open MPI's compiler flags, 2 ranks sharing the device.
if command -v mpicc >/dev/null; then
  read -ra mflags <<< "$(mpicc --showme:compile) $(mpicc --showme:link)"
  for src in examples/mpi/*.c; do
    name=$(basename "$src" .c)
    if [[ $target == host ]]; then
      "${cc[@]}" -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 "$src" -o "$out/$name" "${mflags[@]}" -lm
    else
      ../shared/tools/offload-cc --target "$target" -O2 "$src" -o "$out/$name" "${mflags[@]}" -lm
    fi
    echo "-- $name (mpirun -np 2)"
    LD_LIBRARY_PATH="$PWD/$out/lib:${LD_LIBRARY_PATH:-}" OMP_TARGET_OFFLOAD=MANDATORY \
      mpirun --oversubscribe --allow-run-as-root -np 2 -x LD_LIBRARY_PATH -x OMP_TARGET_OFFLOAD "$out/$name" || status=1
  done
fi
exit $status
