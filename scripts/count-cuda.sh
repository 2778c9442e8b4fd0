#!/usr/bin/env bash
# Instructions and atomic instructions (lock acquisitions and releases, reference counts:
# callgrind --collect-bus) per region of bench/gpu_scenarios.c on the CUDA path of our runtime,
# on a machine without a GPU: a fake driver (tests/fakecuda/fakecuda.c, built here as
# target/fakecuda/libcuda.so.1) does copies and fills at once in host memory and runs no
# kernel but the plugin's staging copy kernel. Counts, unlike times, do not depend on the
# machine's load. Each count is the difference of two region counts, so start-up cancels out;
# libomp's own start-up (ompt_libomp_connect) is left out of both, as it varies by ~280,000
# instructions between runs (it reads /proc/PID/maps when an earlier process with the same pid
# left its /dev/shm/__KMP_REGISTERED_LIB_PID_UID file behind). The instructions spent inside
# the fake driver (its bookkeeping, and the copies a GPU's DMA engines would make) are shown
# apart. Needs target/release/libomptarget.so (cargo build --release --locked -p
# omptarget-abi) and gpu/out/bench/gpu_scenarios (gpu/build.sh).
# usage: scripts/count-cuda.sh [--annotate SCENARIO]   (keeps that scenario's two callgrind
#        files in target/fakecuda/ for callgrind_annotate)
set -euo pipefail
cd "$(dirname "$0")/.."
B=gpu/out/bench/gpu_scenarios
L=target/release/libomptarget.so
out=target/fakecuda
annotate=
case ${1:-} in
  '') ;;
  --annotate) annotate=${2:-} ;;
  *) sed -n '13,14p' "$0" >&2; exit 2 ;;
esac
if [[ -n ${1:-} && ! $annotate =~ ^(empty|map64B|arrays16x1KiB)$ ]]; then
  echo "--annotate takes one of the scenarios: empty, map64B, arrays16x1KiB" >&2
  exit 2
fi
[[ -x $B ]] || { echo "$B is missing: gpu/build.sh builds it" >&2; exit 1; }
[[ -f $L ]] || { echo "$L is missing: cargo build --release --locked -p omptarget-abi" >&2; exit 1; }
mkdir -p "$out/lib"
cc -O2 -g -Wall -Wextra -shared -fPIC -o "$out/libcuda.so.1" tests/fakecuda/fakecuda.c -lpthread
ln -sf libcuda.so.1 "$out/libcuda.so"
ln -sf "$PWD/$L" "$out/lib/libomptarget.so.19.1"
# The fake driver first; libomp.so.5 is LLVM 19's from the system's paths.
lib=$out:$out/lib
# A region that cannot offload is an error, never a run on the host.
export OMP_TARGET_OFFLOAD=MANDATORY
echo "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD); $B; $L built $(date -u -r "$L" +%FT%TZ)"
# The regions run on the CUDA plugin's device: its start-up line (LIBOMPTARGET_INFO) and one
# cuLaunchKernel per region in its driver-call profile (14 regions: 4 warm-up, 10 measured).
seen=$(LD_LIBRARY_PATH=$lib LIBOMPTARGET_INFO=16 OMPTARGET_RS_PROFILE=1 "$B" empty 1 1000 2>&1 >/dev/null)
launches=$(sed -n 's/^ *cuLaunchKernel  *\([0-9]*\) calls.*/\1/p' <<< "$seen")
if ! grep -q '^CUDA device 0 info' <<< "$seen" || [[ $launches != 14 ]]; then
  printf 'the regions did not run on the fake CUDA device:\n%s\n' "$seen" >&2
  exit 1
fi
grep -m1 '^CUDA device 0 info' <<< "$seen"
grep -m1 'Launching kernel' <<< "$seen"
echo "$launches cuLaunchKernel calls for 14 regions (OMPTARGET_RS_PROFILE=1)"
# One run under callgrind: its instructions less libomp's start-up, and those in calls into the
# fake driver (from the call records' inclusive costs).
cg() { # scenario reps
  local f=$out/callgrind.$1.$2
  if ! LD_LIBRARY_PATH=$lib valgrind --tool=callgrind --collect-bus=yes --callgrind-out-file="$f" "$B" "$1" "$2" 1 \
    > /dev/null 2> "$f.log"; then
    cat "$f.log" >&2
    exit 1
  fi
  awk -f scripts/callgrind-sum.awk "$f"
  [[ $1 == "$annotate" ]] || rm -f "$f" "$f.log"
}
# scenario, its iterations per repetition, the two repetition counts: N = 4 warm-up regions +
# repetitions x iterations (report() in bench/gpu_scenarios.c; scale 1).
for row in "empty 10000 1 2" "map64B 10000 1 2" "arrays16x1KiB 1000 2 6"; do
  read -r s iters r1 r2 <<< "$row"
  n1=$((4 + r1 * iters)) n2=$((4 + r2 * iters)) d=$(((r2 - r1) * iters))
  one=$(cg "$s" "$r1") two=$(cg "$s" "$r2")
  read -r a fa ga <<< "$one"
  read -r b fb gb <<< "$two"
  echo "callgrind ours+fakecuda $s: N=$n1 $a, N=$n2 $b instructions; per region (difference / $d): $(((b - a) / d)), of which $(((fb - fa) / d)) in the fake driver; atomic instructions per region: $(((gb - ga) / d))"
done
if [[ -n $annotate ]]; then
  echo "kept: $(ls "$out"/callgrind."$annotate".* | grep -v '\.log$' | tr '\n' ' ')(callgrind_annotate --inclusive=yes FILE)"
fi
