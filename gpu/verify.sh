#!/usr/bin/env bash
# A whole GPU verification in three device calls (each well inside the 600 s limit), with what
# gpu/build.sh built (carry ["gpu/out-pack"]: the packed programs, unpacked here first). Logs go to $OUT (the device tool returns them; at
# most 8 files), a short summary to stdout.
#
# usage: bash gpu/verify.sh a   examples, tools, conformance (v7 vs LLVM 19, v8), the launch
#                               geometry case by case (gpu/geometry.sh), GPU sharing tests, soak
#                               10^6 constructs x 16 threads   (~9.5 min: run it with timeout_s 600;
#                               where the call's time runs out, `bash gpu/share.sh oom` is the test
#                               left, a call of its own)
#        bash gpu/verify.sh b   MPI stencil, compute-sanitizer (4 tools x 2 runtimes, as far as
#                               B_SAN_BUDGET_S allows), the perf table           (~9 min)
#        bash gpu/verify.sh c   the generated mapping matrix (tests/c/map_matrix*.c), which a
#                               leaves out: 30-260 s a program on the GPU        (~9 min)
# env: OUT (where logs go; default /tmp/gpu-verify), A_BUDGET_S (240), C_BUDGET_S (520), B_SAN_BUDGET_S (190),
#      B_PERF_BUDGET_S (190), PERF_RUNS (2)
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 2
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
source gpu/unpack.sh
unpack_out || exit 2
out=${OUT:-/tmp/gpu-verify}
mkdir -p "$out"
logs=/tmp/gpu-verify-logs
rm -rf "$logs"
t0=$(date +%s)
step() { echo "== $1 ($(($(date +%s) - t0)) s)"; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader 2>&1 | head -n 2
head -n 3 gpu/out/BUILD-INFO.txt | tail -n 2
case ${1:-} in
  a)
    # The examples and tools first (a minute): the conformance programs take what the budget
    # leaves (192 of them no longer all fit in 240 s, and the examples came last and were cut).
    step "suite: examples tools conformance"
    EXCLUDE=map_matrix JOBS=8 BUDGET_S=${A_BUDGET_S:-240} OUT=$logs bash gpu/run.sh examples tools conformance > "$out/suite-a.log" 2>&1
    echo "suite rc=$?"
    step "launch geometry, case by case"
    OUT=$logs timeout 400 bash gpu/geometry.sh > "$out/geometry.log" 2>&1
    echo "geometry rc=$?"
    (cd "$logs" && tar czf "$out/logs-a.tgz" .) 2>/dev/null
    # The soak (seconds) before the sharing tests (~4 min), which end the call's time.
    step "soak"
    SOAK_BIN=gpu/out/soak/soak SOAK_LIB=gpu/out/ours timeout 120 tests/soak/run.sh 1000000 16 20 > "$out/soak.log" 2>&1
    echo "soak rc=$?"
    step "share"
    timeout 240 bash gpu/share.sh > "$out/share.log" 2>&1
    echo "share rc=$?"
    step "summary"
    grep -E '^(conformance v|examples|tools|== done|INCOMPLETE|SKIP)' "$out/suite-a.log" | cut -c1-200
    head -n 40 "$out/geometry.log" | cut -c1-200
    grep -E '^(PASS|FAIL)|B took|^ +(omptarget|4 TiB|eight)' "$out/share.log" | cut -c1-300
    tail -n 4 "$out/soak.log" | cut -c1-200
    ;;
  b)
    step "mpi"
    timeout 160 bash gpu/mpi.sh run > "$out/mpi.log" 2>&1
    echo "mpi rc=$?"
    step "suite: sanitize"
    SAN_JOBS=16 BUDGET_S=${B_SAN_BUDGET_S:-190} OUT=$logs/san bash gpu/run.sh sanitize > "$out/suite-san.log" 2>&1
    echo "sanitize rc=$?"
    step "suite: perf"
    PERF_RUNS=${PERF_RUNS:-2} BUDGET_S=${B_PERF_BUDGET_S:-190} OUT=$logs/perf bash gpu/run.sh perf > "$out/suite-perf.log" 2>&1
    echo "perf rc=$?"
    (cd "$logs" && tar czf "$out/logs-b.tgz" .) 2>/dev/null
    step "summary"
    grep -E '^(== mpi|ours |llvm19 )' "$out/mpi.log"
    grep -E '^(sanitize|== done|INCOMPLETE)' "$out/suite-san.log" | cut -c1-200
    sed -n '/^scenario /,/^(median/p' "$out/suite-perf.log" | cut -c1-140
    grep -E '^(GCC 12 on the GPU|gcc run )' "$out/suite-perf.log" | cut -c1-160
    sed -n '/^overhead: /,/^(us per/p' "$out/suite-perf.log" | cut -c1-140
    grep -E '^(goal |perf .*SKIP)' "$out/suite-perf.log" | cut -c1-140
    ;;
  c)
    step "suite: the mapping matrix"
    FILTER=map_matrix TIMEOUT_S=300 JOBS=8 BUDGET_S=${C_BUDGET_S:-520} OUT=$logs bash gpu/run.sh conformance > "$out/suite-c.log" 2>&1
    echo "suite rc=$?"
    (cd "$logs" && tar czf "$out/logs-c.tgz" .) 2>/dev/null
    step "summary"
    grep -E '^(conformance v|== done|INCOMPLETE|SKIP)|FAIL' "$out/suite-c.log" | cut -c1-200
    ;;
  *) sed -n '2,13p' "$0"; exit 2 ;;
esac
step "end"
