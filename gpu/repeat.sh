#!/usr/bin/env bash
# Runs conformance programs many times under LLVM 19's runtime and ours, alternating, and
# counts each distinct stdout: for programs whose result can depend on timing (libomp's task
# scheduling, copies back landing late), where one run in the suite says little.
#
# usage: bash gpu/repeat.sh [-n RUNS] NAME...   (NAME: a tests/c program, e.g.
#        nowait_in_reduction; run as the ABI 7 and the ABI 8 build)
# env: GPU_OUT (gpu/out), LLVM19_DIR, EXTRA_LIB, TIMEOUT_S (60 a run)
# Prints per program, ABI and runtime: "NAME v7 ours: 20 runs: 19x <stdout> | 1x <stdout>".
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 2
source gpu/unpack.sh
gpu_setup || exit 2
runs=20
if [[ ${1:-} == -n ]]; then runs=$2; shift 2; fi
[[ $# -gt 0 ]] || { echo "usage: bash gpu/repeat.sh [-n RUNS] NAME..."; exit 2; }
tmp=$(mktemp -d)
for name in "$@"; do
  for abi in v7 v8; do
    exe=$G/$abi/$name
    [[ -f $exe ]] || { echo "$name $abi: missing ($exe)"; continue; }
    chmod u+x "$exe"
    : > "$tmp/llvm19"; : > "$tmp/ours"
    for ((i = 0; i < runs; i++)); do
      for rt in llvm19 ours; do
        [[ $rt == llvm19 ]] && lp=$LLVM19_DIR || lp=$G/ours
        [[ $rt == llvm19 && -z $lp ]] && continue
        out=$(LD_LIBRARY_PATH=$lp:$EXTRA timeout "${TIMEOUT_S:-60}" "$exe" 2>/dev/null)
        echo "rc=$? $(tr '\n' ' ' <<< "$out")" >> "$tmp/$rt"
      done
    done
    for rt in llvm19 ours; do
      [[ -s $tmp/$rt ]] || continue
      echo "$name $abi $rt: $runs runs: $(sort "$tmp/$rt" | uniq -c | sort -rn |
        awk '{c = $1; $1 = ""; printf "%s%sx%s", (NR > 1 ? " | " : ""), c, $0}')"
    done
  done
done
rm -rf "$tmp"
