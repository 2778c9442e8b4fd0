#!/usr/bin/env bash
# Runs, on the GPU machine, what gpu/build.sh built (carried as gpu/out): no compiler needed.
# The work (runs, time limits, comparisons, tables) is `omptarget-suite run`
# (crates/suite/src/run); this maps the environment onto its options. gpu/README.md says how
# to read the result.
#
# usage: gpu/run.sh [MODE...]
#   conformance  (default) each tests/c program's ABI v7 binary under LLVM 19 and ours, then
#                its ABI v8 binary under ours against the v7 run
#   examples     examples/ under ours and LLVM with OMP_TARGET_OFFLOAD=MANDATORY
#   bench        `omptarget-suite bench` for each scenario benchmark of bench/, LLVM vs ours
#   sanitize     compute-sanitizer's tools on each v7 binary under ours and LLVM 19
#   perf         the GPU performance table (gpu_scenarios, floors, CPU time per region, the
#                host loop beside target nowait regions, 8 processes at once, profiles, ncu)
#   tools        the tool interfaces: interop_stream (ours must print "all ok", LLVM 19
#                reported), record/replay across runtimes, the profile of overlap.c
#   all          conformance examples bench sanitize
# env: GPU_OUT (gpu/out)  OUT (logs, else /tmp/gpu-run)  LLVM19_DIR (folder or .tar.xz)
#      EXTRA_LIB (/usr/local/nvidia/lib64)  TIMEOUT_S (60)  JOBS (4)  BUDGET_S (540)  FILTER, EXCLUDE (name parts, comma-separated)
#      BENCH_ARGS ("all 5 10000")  BENCH_RUNS (3)  BENCH_TIMEOUT_S (300)  PERF_RUNS (3)
#      PERF_GCC (1; 0: no GCC 12 column in perf)
#      SAN_TOOLS (memcheck,initcheck,synccheck,racecheck)  SAN_JOBS (cores, <= 16)  SAN_TIMEOUT_S (180)
#      SANITIZER (compute-sanitizer's path)  SUITES (more suite folders, space-separated)
# Exit status: 0 when every comparison agreed, 1 otherwise, 2 when nothing could run.
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 2
source gpu/unpack.sh
unpack_out || exit 2
G=${GPU_OUT:-gpu/out}
suite=$G/bin/omptarget-suite
for b in "$suite" "$G/bin/omptarget"; do
  [[ -f $b ]] || { echo "run.sh: $b is missing: run gpu/build.sh first (and carry gpu/out)"; exit 2; }
  chmod u+x "$b"  # in case a transfer dropped the execute bits
done
opts=(--out "$G" --logs "${OUT:-/tmp/gpu-run}")
opt() { [[ -n ${!1:-} ]] && opts+=("$2" "${!1}"); return 0; }
opt LLVM19_DIR --llvm; opt EXTRA_LIB --extra-lib; opt TIMEOUT_S --timeout-s; opt JOBS --jobs
opt BUDGET_S --budget-s; opt FILTER --filter; opt EXCLUDE --exclude; opt BENCH_ARGS --bench-args; opt BENCH_RUNS --bench-runs
opt BENCH_TIMEOUT_S --bench-timeout-s; opt PERF_RUNS --perf-runs; opt PERF_GCC --perf-gcc; opt SAN_TOOLS --san-tools
opt SAN_JOBS --san-jobs; opt SAN_TIMEOUT_S --san-timeout-s; opt SANITIZER --sanitizer
for s in ${SUITES:-}; do opts+=(--suite "$s"); done
exec "$suite" run "${opts[@]}" -- "$@"
