#!/usr/bin/env bash
# Processes sharing one GPU (the pool's sharing policy, docs/GPU.md), on the GPU machine, with what gpu/build.sh built:
# bench/gpu_share under our runtime and LLVM 19's. Every test prints PASS or FAIL.
#
# usage: bash gpu/share.sh [TEST...]   (default: all)
#   issue      A maps 80 GiB then idles 6 s; B starts 2 s later and maps 80 GiB (ours)
#   alternate  A and B alternate 4 phases of 80 GiB each, 1.25 s apart (ours)
#   eight      8 processes × 15 GiB in 4 phases at random offsets, 20 runs (ours)
#   mixed      one process under LLVM 19 and one under ours, both orders
#   latency    how long after an idle process's last region its memory is available to
#              another (B starts 0.3 s after A's 80 GiB region, cap off: B's region time)
#   oom        A holds 100 GiB for 8 s; B asks 80 GiB at 2 s: B waits, then fails with a
#              message naming what other processes hold; and a 4 TiB request fails at once
# env: GPU_OUT (gpu/out), LLVM19_DIR (unpacked from GPU_OUT/llvm19.tar.xz), EXTRA_LIB
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 2
source gpu/unpack.sh
gpu_setup || exit 2
OURS=$(cd "$G/ours" && pwd)
P=$G/bench/gpu_share
W=$(mktemp -d)
fails=0

# proc NAME RUNTIME(ours|llvm) ARGS...: starts gpu_share in the background, output in $W/NAME
proc() {
  local name=$1 rt=$2 lib=$OURS
  shift 2
  [[ $rt == llvm ]] && lib=$LLVM19_DIR
  ( LD_LIBRARY_PATH=$lib:$EXTRA timeout 120 "$P" "$@" > "$W/$name.out" 2> "$W/$name.err"; echo $? > "$W/$name.rc" ) &
}
verdict() { # TEST NAMES...: PASS when every process exited 0 and every phase checked ok
  local t=$1 ok=1 n
  shift
  for n in "$@"; do
    if [[ $(cat "$W/$n.rc") != 0 ]] || grep -q WRONG "$W/$n.out"; then
      ok=0
      echo "   $n: exit $(cat "$W/$n.rc"); stderr: $(tr '\n' ' ' < "$W/$n.err" | cut -c1-400)"
    fi
  done
  if ((ok)); then echo "PASS $t"; else echo "FAIL $t"; fails=$((fails + 1)); fi
}

t_issue() {
  proc A ours 80 2 6000 0 A
  sleep 2
  proc B ours 80 1 0 0 B
  wait
  cat "$W/A.out" "$W/B.out"
  verdict issue A B
}

t_alternate() {
  proc A ours 80 4 2500 0 A
  proc B ours 80 4 2500 1250 B
  wait
  cat "$W/A.out" "$W/B.out" | sort -t= -k5 -n
  verdict alternate A B
}

t_eight() {
  local run i names=() failed_runs=0
  for run in $(seq 1 20); do
    names=()
    for i in $(seq 1 8); do
      proc "e$i" ours 15 4 $((RANDOM % 1000)) $((RANDOM % 1000)) "r$run-p$i"
      names+=("e$i")
    done
    wait
    for i in "${names[@]}"; do
      if [[ $(cat "$W/$i.rc") != 0 ]] || grep -q WRONG "$W/$i.out"; then
        failed_runs=$((failed_runs + 1))
        echo "   run $run $i: exit $(cat "$W/$i.rc"): $(tr '\n' ' ' < "$W/$i.err" | cut -c1-300)"
        break
      fi
    done
  done
  echo "   eight: $((20 - failed_runs))/20 runs with all 8 processes' 4 phases ok"
  if ((failed_runs == 0)); then echo "PASS eight"; else echo "FAIL eight"; fails=$((fails + 1)); fi
}

t_mixed() {
  proc A llvm 80 2 6000 0 A-llvm
  sleep 2
  proc B ours 80 1 0 0 B-ours
  wait
  verdict "mixed (LLVM first)" A B
  proc A ours 80 2 6000 0 A-ours
  sleep 2
  proc B llvm 80 1 0 0 B-llvm
  wait
  verdict "mixed (ours first)" A B
}

t_latency() {
  local cap
  for cap in default off; do
    local e=()
    [[ $cap == off ]] && e=(env OMPTARGET_RS_CUDA_POOL_RELEASE_THRESHOLD=18446744073709551615)
    ( LD_LIBRARY_PATH=$OURS:$EXTRA "${e[@]}" timeout 60 "$P" 80 2 4000 0 A > "$W/A.out" 2> "$W/A.err"; echo $? > "$W/A.rc" ) &
    # B is ready (context created) before A's region ends: start it 0.3 s after A's first phase.
    ( LD_LIBRARY_PATH=$OURS:$EXTRA "${e[@]}" timeout 60 "$P" 80 1 0 300 B > "$W/B.out" 2> "$W/B.err"; echo $? > "$W/B.rc" ) &
    wait
    echo "   cap $cap: $(grep -h 'phase=0' "$W/A.out" "$W/B.out" | tr '\n' ' ')"
    verdict "latency (cap $cap)" A B
  done
}

t_oom() {
  proc A ours 100 1 0 0 A 8000
  sleep 2
  local t0
  t0=$(date +%s%N)
  proc B ours 80 1 0 0 B
  wait
  echo "   B took $((($(date +%s%N) - t0) / 1000000)) ms; B exit $(cat "$W/B.rc"); its stderr:"
  sed 's/^/     /' "$W/B.err" | head -n 12
  if [[ $(cat "$W/A.rc") == 0 && $(cat "$W/B.rc") != 0 ]] && grep -q 'other processes and contexts hold about' "$W/B.err"; then
    echo "PASS oom (B fails, naming what others hold)"
  else
    echo "FAIL oom"; fails=$((fails + 1))
  fi
  proc H ours 4096 1 0 0 H
  wait
  echo "   4 TiB: exit $(cat "$W/H.rc"); $(grep -m1 'out of memory' "$W/H.err")"
}

tests=("$@")
((${#tests[@]})) || tests=(issue alternate eight mixed latency oom)
for t in "${tests[@]}"; do
  echo "== $t"
  "t_$t"
done
rm -rf "$W"
echo "== share: $fails failed"
exit $((fails > 0))
