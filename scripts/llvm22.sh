#!/usr/bin/env bash
# Prepares LLVM 22's OpenMP runtime beside the system's LLVM 19 one, in build/llvm22 (ignored by
# git): Debian's libomp-22-dev conflicts with libomp-19-dev, so its package and liboffload-22
# are downloaded and unpacked instead of installed. Needs clang-22 (which brings libLLVM 22,
# libomptarget.so.22.1's dependency) and libomp-19-dev (Debian's LLVM 22 runtime uses LLVM 19's
# libomp.so.5: liboffload-22 depends on libomp5-19).
#
#   build/llvm22/lib      libomptarget.so.22.1 (LLVM 22's), and the link-time names
#                         libomptarget.so and libomp.so: `clang-22 -L build/llvm22/lib`
#   build/llvm22/include  LLVM 22's omp.h:                  `clang-22 -I build/llvm22/include`
#   build/llvm22/both     LLVM 22's runtime under both names, .19.1 and .22.1: it serves a
#                         process whose program and libraries come from clang 19 and clang 22
#
# A clang-22 program built with those flags NEEDs libomptarget.so.22.1; LD_LIBRARY_PATH picks the
# runtime: build/llvm22/lib for LLVM 22's, a folder with our library under that name for ours.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$PWD/build/llvm22
if [[ -e $dir/lib/libomptarget.so.22.1 && -e $dir/include/omp.h && -e $dir/both/libomptarget.so.19.1 ]]; then
  exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/debs" "$dir/lib" "$dir/both"
(cd "$dir/debs" && apt-get download liboffload-22 libomp-22-dev 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
shopt -s nullglob
debs=("$dir"/debs/*.deb)
if ((${#debs[@]} != 2)); then
  echo "llvm22.sh: apt-get download liboffload-22 libomp-22-dev failed (is bookworm-security in the apt sources, and apt-get update done?)" >&2
  exit 1
fi
for d in "${debs[@]}"; do dpkg -x "$d" "$dir/root"; done
llvm=$dir/root/usr/lib/llvm-22
ln -s "$llvm/lib/libomptarget.so.22.1" "$dir/lib/libomptarget.so.22.1"
ln -s libomptarget.so.22.1 "$dir/lib/libomptarget.so"
ln -s "$llvm/lib/libomptarget.so.22.1" "$dir/both/libomptarget.so.22.1"
ln -s "$llvm/lib/libomptarget.so.22.1" "$dir/both/libomptarget.so.19.1"
# The package's libomp.so points at the system's libomp.so.5 by a relative path that does not
# resolve outside /usr: point at the installed one.
ln -s /usr/lib/x86_64-linux-gnu/libomp.so.5 "$dir/lib/libomp.so"
ln -s "$llvm/lib/clang/22/include" "$dir/include"
echo "LLVM 22's runtime: $dir/lib, headers: $dir/include" >&2
