#!/usr/bin/env bash
# Runs, on the GPU machine, what gpu/build.sh built (carried as gpu/out): no compiler needed.
#
# usage: gpu/run.sh [MODE...]          (from the repository root or anywhere)
#   conformance  (default) each tests/c program's ABI v7 binary under LLVM 19 and under ours:
#                exit status and stdout must agree (stderr too, addresses → 0xADDR, for
#                STDERR programs); DIVERGENCE programs: ours must print NAME.expected and
#                exit 0, LLVM must not print it. Then each ABI v8 binary under ours: status,
#                stdout (and normalised stderr for STDERR programs) must equal the v7 run's.
#   examples     examples/ under ours and LLVM with OMP_TARGET_OFFLOAD=MANDATORY
#   bench        `omptarget bench` for each bench/ binary, LLVM vs ours
#   sanitize     each v7 binary under ours with compute-sanitizer --tool memcheck
#   perf         the GPU performance table: bench/gpu_scenarios under LLVM 19 and ours with
#                each scenario's driver floor (`omptarget bench --floor`), the 64 B row with
#                LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD=0, ours without staging, per-scenario
#                driver-call profiles, kernel geometry and (with ncu) kernel durations
#   all          conformance examples bench sanitize
# env: GPU_OUT     what build.sh made (default gpu/out; gpu/out-host for a dry run here)
#      LLVM19_DIR  LLVM 19's runtime folder (default: GPU_OUT/llvm19, unpacked from
#                  GPU_OUT/llvm19.tar.xz on first use; else /usr/lib/llvm-19/lib)
#      EXTRA_LIB   folder(s) after the runtime in LD_LIBRARY_PATH (default /usr/local/nvidia/lib64)
#      TIMEOUT_S   per program run (60)   JOBS  programs at once (4)
#      BUDGET_S    whole script (540): work not started by then is reported as skipped
#      FILTER      substring of program names to run   BENCH_ARGS  (default: all 5 10000)
#      BENCH_RUNS  (3)   SAN_TIMEOUT_S (180)
# Logs (at most 8 files) go to $OUT, else /tmp/gpu-run; a compact summary ends the output.
# Exit status: 0 when every comparison agreed, 1 otherwise.

# ------------------------------------------------------------------ per-program worker
# Called by xargs as `run.sh __one NAME` (or __san NAME) with the settings exported below.

# The one line allowed to differ: LLVM sets an inactive primary context to blocking
# synchronisation and says so under LIBOMPTARGET_INFO 0x10; we keep the driver's default
# scheduling, which makes every synchronisation ~16 us faster (docs/GPU.md), and say that.
norm() { sed -E 's/0x[0-9a-fA-F]+/0xADDR/g; /^CUDA device [0-9]+ info: The primary context is inactive/d' "$1"; }

# tmo LIMIT: LIMIT seconds, or less so that no run outlives the deadline (at least 5)
tmo() {
  local r=$((DEADLINE - $(date +%s)))
  if ((r < $1)); then echo $((r > 5 ? r : 5)); else echo "$1"; fi
}

# run_prog TAG BIN LIBDIR NAME ENV ARGS [WRAPPER...]: outputs in $W/r/NAME.TAG.{out,err,rc,lib}
run_prog() {
  local tag=$1 bin=$2 libdir=$3 name=$4 envs=$5 args=$6
  shift 6
  local p=$W/r/$name.$tag e=() a=()
  envs=${envs//@TOOLS@/$G/bin}  # OMPT tool libraries (build.sh's TOOL directive)
  [[ $envs != - ]] && read -ra e <<< "$envs"
  [[ $args != - ]] && read -ra a <<< "$args"
  rm -f "$p".trace.*
  (
    cd "$W/cwd" || exit 1
    timeout -k 5 "$(tmo "$TO")" env -u LIBOMPTARGET_INFO -u OMP_TARGET_OFFLOAD \
      LD_LIBRARY_PATH="$libdir:$EXTRA_LIB" LD_DEBUG=libs LD_DEBUG_OUTPUT="$p.trace" "${e[@]}" \
      "$@" "$bin" "${a[@]}" > "$p.out" 2> "$p.err"
  ) 2>/dev/null  # no "Aborted" notes from bash: the status is recorded
  echo $? > "$p.rc"
  # Which libomptarget.so.19.1 the loader initialised (as crates/abi/tests/conformance.rs checks).
  cat "$p".trace.* 2>/dev/null | sed -n 's/.*calling init: \(.*libomptarget\.so\.19\.1\)[[:space:]]*$/\1/p' \
    | tail -n 1 > "$p.lib"
  rm -f "$p".trace.*
}

status_of() { # TAG-prefix → "exit N" / "signal N" / "timeout"
  local rc
  rc=$(cat "$1.rc")
  if ((rc == 124)); then echo timeout
  elif ((rc > 128)); then echo "signal $((rc - 128))"
  else echo "exit $rc"; fi
}

loaded_from() { # PREFIX DIR: ok if the initialised library lies in DIR
  local got
  got=$(cat "$1.lib")
  [[ -n $got && $(dirname "$(readlink -f "$got")") == "$(readlink -f "$2")" ]]
}

one() {
  local name=$1 line envs args flags lib v7 v8 r res8=-
  r=$W/r/$name
  line=$(awk -F'\t' -v n="$name" '$1 == n' "$G/manifest.tsv")
  IFS=$'\t' read -r _ envs args flags lib <<< "$line"
  v7=$G/v7/$name v8=$G/v8/$name
  if (($(date +%s) > DEADLINE)); then
    printf '%s\tSKIP(time)\t-\t-\t-\n' "$name" > "$r.res"; return
  fi
  if [[ ! -x $v7 ]]; then
    printf '%s\tSKIP(no-v7-binary)\t-\t-\t-\n' "$name" > "$r.res"; return
  fi
  run_prog llvm "$v7" "$LLVM" "$name" "$envs" "$args"
  run_prog ours "$v7" "$OURS" "$name" "$envs" "$args"
  local sl so res why=()
  sl=$(status_of "$r.llvm") so=$(status_of "$r.ours")
  loaded_from "$r.llvm" "$LLVM" || why+=("llvm-run-loaded:$(cat "$r.llvm.lib")")
  loaded_from "$r.ours" "$OURS" || why+=("ours-run-loaded:$(cat "$r.ours.lib")")
  [[ $so == timeout ]] && why+=(ours-timeout)
  if [[ $so == timeout || $sl == timeout ]] && (($(date +%s) >= DEADLINE)); then
    printf '%s\tSKIP(time)\t%s\t%s\t-\n' "$name" "$sl" "$so" > "$r.res"; return
  fi
  if [[ $flags == *DIVERGENCE* ]]; then
    local exp=$G/expected/$name.expected
    if [[ ! -f $exp ]]; then why+=(no-expected)
    else
      [[ $so == "exit 0" ]] || why+=(ours-status)
      cmp -s "$exp" "$r.ours.out" || why+=(ours-stdout-vs-expected)
      cmp -s "$exp" "$r.llvm.out" && why+=(llvm-now-agrees)
    fi
    ((${#why[@]})) && res="FAIL(div:$(IFS=,; echo "${why[*]}"))" || res=ok-div
  else
    [[ $sl == "$so" ]] || why+=(status)
    cmp -s "$r.llvm.out" "$r.ours.out" || why+=(stdout)
    if [[ $flags == *STDERR* ]] && ! cmp -s <(norm "$r.llvm.err") <(norm "$r.ours.err"); then
      why+=(stderr)
    fi
    ((${#why[@]})) && res="FAIL($(IFS=,; echo "${why[*]}"))" || res=ok
  fi
  # ABI v8: ours only; must behave as the v7 binary did under ours.
  if [[ ! -x $v8 ]]; then res8="SKIP(no-v8-binary)"
  elif (($(date +%s) > DEADLINE)); then res8="SKIP(time)"
  else
    run_prog v8 "$v8" "$OURS" "$name" "$envs" "$args"
    local s8 w8=()
    s8=$(status_of "$r.v8")
    loaded_from "$r.v8" "$OURS" || w8+=(loaded)
    [[ $s8 == "$so" ]] || w8+=(status)
    cmp -s "$r.ours.out" "$r.v8.out" || w8+=(stdout)
    if [[ $flags == *STDERR* ]] && ! cmp -s <(norm "$r.ours.err") <(norm "$r.v8.err"); then
      w8+=(stderr)
    fi
    ((${#w8[@]})) && res8="FAIL($(IFS=,; echo "${w8[*]}"))" || res8=ok
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$res" "$sl" "$so" "$res8" > "$r.res"
}

san() {
  local name=$1 line envs args flags lib r res
  r=$W/s/$name
  line=$(awk -F'\t' -v n="$name" '$1 == n' "$G/manifest.tsv")
  IFS=$'\t' read -r _ envs args flags lib <<< "$line"
  if (($(date +%s) > DEADLINE)); then printf '%s\tSKIP(time)\t-\n' "$name" > "$r.res"; return; fi
  [[ -x $G/v7/$name ]] || { printf '%s\tSKIP(no-binary)\t-\n' "$name" > "$r.res"; return; }
  TO=$SAN_TO run_prog san "$G/v7/$name" "$OURS" "san/$name" "$envs" "$args" \
    "$SANITIZER" --tool memcheck --print-limit 20 --target-processes all
  local p=$W/r/san/$name.san summary st
  st=$(status_of "$p")
  summary=$(grep -h 'ERROR SUMMARY' "$p.out" "$p.err" | tail -n 1 | sed 's/^=* *//')
  if [[ -z $summary ]]; then res="NOSUM($st)"  # no ERROR SUMMARY line: listed, not failed
  elif [[ $summary == *"ERROR SUMMARY: 0 errors"* ]]; then res=ok
  else res="FAIL($(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' <<< "$summary")-errors)"; fi
  printf '%s\t%s\t%s\n' "$name" "$res" "$st" > "$r.res"
}

if [[ ${1:-} == __one ]]; then one "$2"; exit 0; fi
if [[ ${1:-} == __san ]]; then san "$2"; exit 0; fi

# ------------------------------------------------------------------ set-up
set -uo pipefail
SELF=$(readlink -f "$0")
cd "$(dirname "$SELF")/.." || exit 2
START=$(date +%s)
G=${GPU_OUT:-gpu/out}
[[ -f $G/manifest.tsv ]] || { echo "run.sh: $G/manifest.tsv is missing: run gpu/build.sh first (and carry gpu/out)"; exit 2; }
G=$(cd "$G" && pwd)
# In case a transfer dropped the execute bits.
chmod u+x "$G"/v7/* "$G"/v8/* "$G"/examples/* "$G"/bench/* "$G"/bin/* 2>/dev/null
LOGDIR=${OUT:-/tmp/gpu-run}
mkdir -p "$LOGDIR"
W=$(mktemp -d /tmp/gpu-run.XXXXXX)
mkdir -p "$W/r/san" "$W/s" "$W/cwd"
EXTRA_LIB=${EXTRA_LIB:-/usr/local/nvidia/lib64}
TO=${TIMEOUT_S:-60}
SAN_TO=${SAN_TIMEOUT_S:-180}
JOBS=${JOBS:-4}
DEADLINE=$((START + ${BUDGET_S:-540}))
FILTER=${FILTER:-}
OURS=$G/ours
modes=("$@")
((${#modes[@]})) || modes=(conformance)
[[ " ${modes[*]} " == *" all "* ]] && modes=(conformance examples bench sanitize)

SUMMARY=$LOGDIR/summary.txt
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
failed=0
incomplete=0

# LLVM 19's runtime: carried as a .tar.xz (unpacked it is ~190 MB), unpacked outside the
# repository (inside gpu/out it would be carried back next time, over the 64 MiB limit).
if [[ -n ${LLVM19_DIR:-} ]]; then LLVM=$LLVM19_DIR
elif [[ -f $G/llvm19.tar.xz ]]; then
  u=${LLVM_UNPACK:-/tmp/omptarget-llvm19}
  stamp=$(stat -c '%s' "$G/llvm19.tar.xz")
  if [[ $(cat "$u/stamp" 2>/dev/null) != "$stamp" || ! -f $u/llvm19/libomptarget.so.19.1 ]]; then
    rm -rf "$u"; mkdir -p "$u"
    tar -C "$u" -xJf "$G/llvm19.tar.xz" || { echo "run.sh: cannot unpack $G/llvm19.tar.xz"; exit 2; }
    echo "$stamp" > "$u/stamp"
  fi
  LLVM=$u/llvm19
else LLVM=/usr/lib/llvm-19/lib; fi
LLVM=$(cd "$LLVM" && pwd) || exit 2
[[ -f $LLVM/libomptarget.so.19.1 ]] || { echo "run.sh: no libomptarget.so.19.1 in $LLVM"; exit 2; }

SANITIZER=$(command -v compute-sanitizer || true)
[[ -z $SANITIZER && -x /usr/local/cuda/bin/compute-sanitizer ]] && SANITIZER=/usr/local/cuda/bin/compute-sanitizer
[[ -z $SANITIZER ]] && SANITIZER=$(ls -d /usr/local/cuda*/bin/compute-sanitizer /usr/local/cuda*/compute-sanitizer/compute-sanitizer \
  /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -n 1)

export G W LLVM OURS EXTRA_LIB TO SAN_TO DEADLINE SANITIZER

{
  echo "== machine ($(date -u +%FT%TZ), kernel $(uname -r), $(nproc) cores)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -L
    nvidia-smi --query-gpu=driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/driver, memory, cc: /'
  else
    echo "nvidia-smi: not found (no GPU here)"
  fi
  echo "build: $(tr '\n' ';' < "$G/BUILD-INFO.txt" 2>/dev/null)"
  echo "GPU_OUT=$G"
  echo "ours: $OURS  llvm: $LLVM  extra: $EXTRA_LIB"
  echo "compute-sanitizer: ${SANITIZER:-none}   modes: ${modes[*]}   jobs: $JOBS"
  if [[ -s $G/compile-failures.txt ]]; then
    echo "compile failures at build time: $(grep -c '^== ' "$G/compile-failures.txt")"
    grep '^== ' "$G/compile-failures.txt" | cut -c1-160
  fi
  echo "== omptarget info (ours)"
  LD_LIBRARY_PATH=$OURS:$EXTRA_LIB timeout 60 "$G/bin/omptarget" info 2>&1 | head -n 30
} 2>&1 | tee "$LOGDIR/machine.log" | tee -a "$SUMMARY"

names() { awk -F'\t' -v f="$FILTER" '!/^#/ && (f == "" || index($1, f) > 0) {print $1}' "$G/manifest.tsv"; }

show_run() { # PREFIX LABEL: full record of one run
  local p=$1
  echo "--- $2: $(status_of "$p")  (loaded: $(cat "$p.lib" 2>/dev/null))"
  echo "stdout:"; sed 's/^/  | /' "$p.out"
  echo "stderr:"; sed 's/^/  | /' "$p.err"
}

# ------------------------------------------------------------------ conformance
conformance() {
  say "== conformance: v7 binaries under LLVM 19 vs ours, then v8 under ours (timeout ${TO}s, $JOBS at once)"
  names | xargs -P "$JOBS" -I{} bash "$SELF" __one {}
  local res=$LOGDIR/results.tsv log=$LOGDIR/conformance.log n=0 nok=0 nfail=0 nskip=0 n8ok=0 n8fail=0
  printf '# name\tv7: llvm-vs-ours\tllvm status\tours status\tv8 vs v7 (ours)\n' > "$res"
  : > "$log"
  while read -r name; do
    local r=$W/r/$name
    [[ -f $r.res ]] || printf '%s\tFAIL(not-run)\t-\t-\t-\n' "$name" > "$r.res"
    cat "$r.res" >> "$res"
    local v7res v8res line envs args flags
    IFS=$'\t' read -r _ v7res _ _ v8res < "$r.res"
    line=$(awk -F'\t' -v n="$name" '$1 == n' "$G/manifest.tsv")
    IFS=$'\t' read -r _ envs args flags _ <<< "$line"
    n=$((n + 1))
    case $v7res in ok*) nok=$((nok + 1)) ;; SKIP*) nskip=$((nskip + 1)) ;; *) nfail=$((nfail + 1)) ;; esac
    [[ $v7res == "SKIP(time)" || $v8res == "SKIP(time)" ]] && incomplete=1
    case $v8res in ok*) n8ok=$((n8ok + 1)) ;; FAIL*) n8fail=$((n8fail + 1)) ;; esac
    {
      echo "=================== $name  v7: $v7res  v8: $v8res  (env: $envs; args: $args; flags: $flags)"
      if [[ -f $r.ours.rc ]]; then
        show_run "$r.llvm" "LLVM 19 (v7)"
        show_run "$r.ours" "ours (v7)"
        if [[ $v8res == FAIL* ]]; then show_run "$r.v8" "ours (v8)"
        elif [[ -f $r.v8.rc ]]; then echo "--- ours (v8): as ours (v7)"; fi
        [[ -f $G/expected/$name.expected ]] && { echo "--- expected:"; sed 's/^/  | /' "$G/expected/$name.expected"; }
      fi
    } >> "$log"
  done < <(names)

  # Failures first (short), then the table, then the totals: the tail of the output is what
  # the device tool returns.
  local budget=4000
  while IFS=$'\t' read -r name v7res sl so v8res; do
    [[ $name == \#* ]] && continue
    [[ $v7res == FAIL* || $v8res == FAIL* ]] || continue
    local r=$W/r/$name chunk
    chunk=$(
      echo "-- $name: v7 $v7res, v8 $v8res"
      if [[ $v7res == FAIL* ]]; then
        if [[ -f $G/expected/$name.expected ]]; then
          diff <(cat "$G/expected/$name.expected") "$r.ours.out" | head -n 8 | sed 's/^/   exp|ours /'
        else
          diff "$r.llvm.out" "$r.ours.out" | head -n 8 | sed 's/^/   llvm|ours /'
          diff <(norm "$r.llvm.err") <(norm "$r.ours.err") | head -n 6 | sed 's/^/   stderr llvm|ours /'
        fi
      fi
      if [[ $v8res == FAIL* && -f $r.v8.rc ]]; then
        diff "$r.ours.out" "$r.v8.out" | head -n 6 | sed 's/^/   v7|v8 /'
        head -n 4 "$r.v8.err" | sed 's/^/   v8 stderr: /'
      fi
    )
    chunk=$(cut -c1-200 <<< "$chunk")
    if ((${#chunk} < budget)); then echo "$chunk"; budget=$((budget - ${#chunk}))
    else echo "-- $name: v7 $v7res, v8 $v8res (details in conformance.log)"; fi
  done < "$res" | tee -a "$SUMMARY"

  {
    echo "== conformance table, rows not ok in v7 or v8 (full table: results.tsv)"
    awk -F'\t' '!/^#/ && !($2 ~ /^ok/ && $5 == "ok") { printf "%-32s %-26s %-10s %-10s v8:%s\n", substr($1,1,32), $2, $3, $4, $5 }' "$res"
    awk -F'\t' '!/^#/ && $2 ~ /^ok/ && $5 == "ok" { n++; s = s " " $1 } END { print "ok in v7 and v8 (" n + 0 "):" s }' "$res" | fold -s -w 150
    echo "conformance v7 (LLVM 19 vs ours): $nok agree, $nfail FAIL, $nskip skipped, of $n" | tee -a "$W/totals"
    echo "conformance v8 (ours, vs v7 under ours): $n8ok agree, $n8fail FAIL" | tee -a "$W/totals"
  } | tee -a "$SUMMARY"
  ((nfail + n8fail)) && failed=1
}

# ------------------------------------------------------------------ examples
examples() {
  say "== examples (OMP_TARGET_OFFLOAD=MANDATORY), ours vs LLVM 19"
  local log=$LOGDIR/examples.log
  : > "$log"
  for bin in "$G"/examples/*; do
    [[ -x $bin ]] || continue
    local name
    name=$(basename "$bin")
    if (($(date +%s) > DEADLINE)); then say "$name: SKIP(time)"; incomplete=1; continue; fi
    local o=$W/ex.$name
    for rt in ours llvm; do
      local dir=$OURS
      [[ $rt == llvm ]] && dir=$LLVM
      (cd "$W/cwd" && OMP_TARGET_OFFLOAD=MANDATORY LD_LIBRARY_PATH=$dir:$EXTRA_LIB timeout -k 5 "$(tmo "$TO")" "$bin" > "$o.$rt.out" 2> "$o.$rt.err")
      echo $? > "$o.$rt.rc"
      { echo "--- $name under $rt: exit $(cat "$o.$rt.rc")"; cat "$o.$rt.out"; sed 's/^/stderr: /' "$o.$rt.err"; } >> "$log"
    done
    local verdict=ok
    [[ $(cat "$o.ours.rc") == 0 ]] || verdict="FAIL(ours exit $(cat "$o.ours.rc"))"
    [[ $(cat "$o.llvm.rc") == 0 ]] || verdict="$verdict (llvm exit $(cat "$o.llvm.rc"))"
    grep -q 'check: OK' "$o.ours.out" || [[ $verdict == FAIL* ]] || verdict="FAIL(no 'check: OK')"
    if ! cmp -s <(grep -v '^time:' "$o.llvm.out") <(grep -v '^time:' "$o.ours.out"); then
      [[ $verdict == ok ]] && verdict="FAIL(stdout differs)"
    fi
    [[ $verdict == FAIL* ]] && failed=1
    echo "example $name: $verdict" >> "$W/totals"
    {
      echo "$name: $verdict"
      echo "   ours: $(grep -E '^(ran on|time)' "$o.ours.out" | tr '\n' ' ')"
      echo "   llvm: $(grep -E '^(ran on|time)' "$o.llvm.out" | tr '\n' ' ')"
      [[ $verdict == ok ]] || head -n 4 "$o.ours.err" | cut -c1-200 | sed 's/^/   ours stderr: /'
    } | tee -a "$SUMMARY"
  done
}

# ------------------------------------------------------------------ bench
bench() {
  local args
  read -ra args <<< "${BENCH_ARGS:-all 5 10000}"
  say "== bench: omptarget bench --runs ${BENCH_RUNS:-3} -- ${args[*]}"
  local log=$LOGDIR/bench.log
  : > "$log"
  for bin in "$G"/bench/*; do
    [[ -x $bin ]] || continue
    if (($(date +%s) > DEADLINE)); then say "$(basename "$bin"): SKIP(time)"; incomplete=1; continue; fi
    say "-- $(basename "$bin")"
    (cd "$W/cwd" && timeout -k 5 "$(tmo "${BENCH_TIMEOUT_S:-300}")" "$G/bin/omptarget" bench "$bin" --ours "$OURS" --llvm "$LLVM" \
      --extra-lib-path "$EXTRA_LIB" --runs "${BENCH_RUNS:-3}" -- "${args[@]}") > "$W/bench.out" 2>&1
    local rc=$?
    cat "$W/bench.out" >> "$log"
    tail -n 12 "$W/bench.out" | cut -c1-200 | tee -a "$SUMMARY"
    grep -E 'x$' "$W/bench.out" | awk -v b="$(basename "$bin")" '{print "bench " b ": " $0}' >> "$W/totals"
    ((rc)) && { say "bench $(basename "$bin"): FAIL(exit $rc)"; failed=1; }
  done
}

# ------------------------------------------------------------------ perf
perf() {
  local sc=$G/bench/gpu_scenarios log=$LOGDIR/perf.log runs=${PERF_RUNS:-3}
  [[ -x $sc ]] || { say "perf: no $sc"; failed=1; return; }
  : > "$log"
  local ours_env=(env "LD_LIBRARY_PATH=$OURS:$EXTRA_LIB") llvm_env=(env "LD_LIBRARY_PATH=$LLVM:$EXTRA_LIB")
  say "== perf: gpu_scenarios under LLVM 19 and ours ($runs runs each, alternating) and the floors"
  (cd "$W/cwd" && timeout -k 5 "$(tmo 360)" "$G/bin/omptarget" bench "$sc" --ours "$OURS" --llvm "$LLVM" \
    --extra-lib-path "$EXTRA_LIB" --runs "$runs" --floor -- all 5 1) > "$W/perf.out" 2>&1 || { failed=1; say "perf: bench failed"; }
  tee -a "$SUMMARY" < "$W/perf.out" >> "$log"
  say "-- map64B with LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD=0"
  (cd "$W/cwd" && timeout -k 5 "$(tmo 200)" "$G/bin/omptarget" bench "$sc" --ours "$OURS" --llvm "$LLVM" \
    --extra-lib-path "$EXTRA_LIB" --runs "$runs" --env LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD=0 --tag mm_threshold0 \
    -- map64B 5 2) > "$W/perf.out" 2>&1 || { failed=1; say "perf: mm bench failed"; }
  tee -a "$SUMMARY" < "$W/perf.out" >> "$log"
  say "-- ours with OMPTARGET_RS_CUDA_STAGING_LIMIT=0 (the driver's pageable path), one run"
  (cd "$W/cwd" && OMPTARGET_RS_CUDA_STAGING_LIMIT=0 timeout -k 5 "$(tmo 120)" "${ours_env[@]}" "$sc" all 5 1) 2>&1 | tee -a "$SUMMARY" >> "$log"
  say "-- ours with OMPTARGET_RS_CUDA_BATCH_COPIES=0 (small copies one call each), one run"
  for s in map64B arrays16x1KiB; do
    (cd "$W/cwd" && OMPTARGET_RS_CUDA_BATCH_COPIES=0 timeout -k 5 "$(tmo 60)" "${ours_env[@]}" "$sc" "$s" 5 1) 2>&1 | tee -a "$SUMMARY" >> "$log"
  done
  say "-- ours with LLVM's blocking-sync context (OMPTARGET_RS_CUDA_BLOCKING_SYNC=1), one run"
  (cd "$W/cwd" && OMPTARGET_RS_CUDA_BLOCKING_SYNC=1 timeout -k 5 "$(tmo 120)" "${ours_env[@]}" "$sc" all 5 1) 2>&1 | tee -a "$SUMMARY" >> "$log"
  echo "-- driver-call profiles under ours (OMPTARGET_RS_PROFILE=1, one rep, scale 5)" | tee -a "$SUMMARY" >> "$log"
  local s
  for s in empty map64B alloc64MiB_kernel alloc1GiB_kernel threads8_alloc64MiB tofrom64MiB_pageable arrays16x1KiB nowait32x4MiB; do
    echo "--- $s" >> "$log"
    (cd "$W/cwd" && OMPTARGET_RS_PROFILE=1 timeout -k 5 "$(tmo 60)" "${ours_env[@]}" "$sc" "$s" 1 5) >> "$log" 2>&1
  done
  grep -A7 -E '^--- |^scenario=' "$log" | grep -E '^--- | calls ' | head -n 60 | cut -c1-110 | tee -a "$SUMMARY" > /dev/null
  echo "-- kernel geometry (LIBOMPTARGET_INFO=0x10, one region)" >> "$log"
  for s in alloc64MiB_kernel alloc1GiB_kernel; do
    for e in ours llvm; do
      local -n envv=${e}_env
      echo "--- $s $e" >> "$log"
      (cd "$W/cwd" && LIBOMPTARGET_INFO=16 timeout -k 5 "$(tmo 60)" "${envv[@]}" "$sc" "$s" 1 1000) 2>&1 | grep -m 2 -i 'launching' >> "$log"
    done
  done
  grep -A1 -E '^--- alloc' "$log" | cut -c1-200 | tee -a "$SUMMARY" > /dev/null
  if [[ -x $G/bin/memcpy_bw ]]; then
    echo "-- host memcpy bandwidth (bench/tools/memcpy_bw.c)" | tee -a "$SUMMARY" >> "$log"
    timeout -k 5 "$(tmo 60)" "$G/bin/memcpy_bw" 16 2>&1 | tr '\n' ' ' | tee -a "$SUMMARY" >> "$log"; echo | tee -a "$SUMMARY" >> "$log"
  fi
  echo "-- nowait32x4MiB under ours, 5 reps, with the driver-call profile" | tee -a "$SUMMARY" >> "$log"
  (cd "$W/cwd" && OMPTARGET_RS_PROFILE=1 timeout -k 5 "$(tmo 60)" "${ours_env[@]}" "$sc" nowait32x4MiB 5 1) 2>&1 | head -n 16 | cut -c1-110 | tee -a "$SUMMARY" >> "$log"
  echo "-- nowait32x4MiB under ours and LLVM with other settings (one run each)" | tee -a "$SUMMARY" >> "$log"
  local e
  for e in LIBOMP_NUM_HIDDEN_HELPER_THREADS=16 OMPTARGET_RS_CUDA_STAGING_LIMIT=2147483648 OMP_NUM_THREADS=4; do
    echo "$e ours: $(cd "$W/cwd" && timeout -k 5 "$(tmo 60)" env "$e" "${ours_env[@]}" "$sc" nowait32x4MiB 5 1 2>&1 | tr '\n' ' ')" | tee -a "$SUMMARY" >> "$log"
    echo "$e llvm: $(cd "$W/cwd" && timeout -k 5 "$(tmo 60)" env "$e" "${llvm_env[@]}" "$sc" nowait32x4MiB 5 1 2>&1 | tr '\n' ' ')" | tee -a "$SUMMARY" >> "$log"
  done
  local ncu; ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
  if [[ -n $ncu ]]; then
    echo "--- empty: clang's kernel under ours, then the floor's" >> "$log"
    (cd "$W/cwd" && timeout -k 5 "$(tmo 120)" "${ours_env[@]}" "$ncu" --clock-control none --metrics gpu__time_duration.sum -c 3 "$sc" empty 1 10000) 2>&1 | grep -E 'gpu__time_duration' | tail -n 2 >> "$log"
    (cd "$W/cwd" && timeout -k 5 "$(tmo 120)" env "LD_LIBRARY_PATH=$EXTRA_LIB" "$ncu" --clock-control none --metrics gpu__time_duration.sum -k empty -c 3 "$G/bin/omptarget" floor empty --reps 1) 2>&1 | grep -E 'gpu__time_duration' | tail -n 2 >> "$log"
    grep -A4 -E '^--- empty' "$log" | cut -c1-160 | tee -a "$SUMMARY" > /dev/null
    echo "-- kernel durations with ncu (gpu__time_duration.sum)" | tee -a "$SUMMARY" >> "$log"
    for s in alloc64MiB_kernel alloc1GiB_kernel; do
      echo "--- $s ours (clang's kernel)" >> "$log"
      (cd "$W/cwd" && timeout -k 5 "$(tmo 120)" "${ours_env[@]}" "$ncu" --clock-control none --metrics gpu__time_duration.sum -c 3 "$sc" "$s" 1 1000) 2>&1 | grep -E 'gpu__time_duration|==PROF==|Error' | tail -n 3 >> "$log"
      echo "--- $s floor (fill kernel)" >> "$log"
      (cd "$W/cwd" && timeout -k 5 "$(tmo 120)" env "LD_LIBRARY_PATH=$EXTRA_LIB" "$ncu" --clock-control none --metrics gpu__time_duration.sum -k fill -c 3 "$G/bin/omptarget" floor "$s" --reps 1) 2>&1 | grep -E 'gpu__time_duration|Error' | tail -n 3 >> "$log"
    done
    grep -A3 -E '^--- alloc.*(kernel|floor)' "$log" | cut -c1-160 | tee -a "$SUMMARY" > /dev/null
  fi
}

# ------------------------------------------------------------------ sanitize
sanitize() {
  if [[ -z $SANITIZER ]]; then say "== sanitize: compute-sanitizer not found: skipped"; return; fi
  say "== sanitize: v7 binaries under ours with $SANITIZER --tool memcheck (timeout ${SAN_TO}s)"
  # Probe once: on gVisor machines compute-sanitizer refuses the device ("Device not supported").
  local probe
  probe=$(names | grep -x reg_trivial || names | head -n 1)
  if [[ -n $probe ]]; then
    san "$probe"
    if grep -qiE 'Device not supported|not supported on this|error 999|Unable to (initialize|launch)' \
        "$W/r/san/$probe.san.out" "$W/r/san/$probe.san.err" 2>/dev/null; then
      say "compute-sanitizer cannot check this machine's GPU (gVisor runtime? kernel $(uname -r)):"
      grep -h -m 3 -iE 'not supported|error|unable' "$W/r/san/$probe.san.out" "$W/r/san/$probe.san.err" \
        | cut -c1-200 | sed 's/^/   /' | tee -a "$SUMMARY"
      echo "sanitize: compute-sanitizer unusable here, skipped" >> "$W/totals"
      return
    fi
  fi
  names | grep -vx "$probe" | xargs -P "$JOBS" -I{} bash "$SELF" __san {}
  local log=$LOGDIR/sanitize.log n=0 nok=0 nbad=0 bad=()
  : > "$log"
  while read -r name; do
    local r=$W/s/$name res st
    [[ -f $r.res ]] || printf '%s\tFAIL(not-run)\t-\n' "$name" > "$r.res"
    [[ $(cut -f2 "$r.res") == "SKIP(time)" ]] && incomplete=1
    IFS=$'\t' read -r _ res st < "$r.res"
    n=$((n + 1))
    [[ $res == ok ]] && nok=$((nok + 1))
    [[ $res == FAIL* ]] && nbad=$((nbad + 1))
    [[ $res == ok ]] || bad+=("$name:$res:$st")
    {
      echo "=================== $name: $res ($st)"
      [[ -f $W/r/san/$name.san.out ]] && { cat "$W/r/san/$name.san.out"; sed 's/^/stderr: /' "$W/r/san/$name.san.err"; }
    } >> "$log"
  done < <(names)
  local b budget=2500
  for b in "${bad[@]}"; do
    ((budget > 0)) || { say "   ... (more in sanitize.log)"; break; }
    say "   $b"; budget=$((budget - ${#b} - 400))
    local name=${b%%:*}
    grep -h -m 2 -E '^=+ +(Invalid|Program hit|Leaked|Error|Uninitialized|Race)' \
      "$W/r/san/$name.san.out" "$W/r/san/$name.san.err" 2>/dev/null | cut -c1-200 | sed 's/^/      /' | tee -a "$SUMMARY"
  done
  say "sanitize (memcheck, ours): $nok clean, $nbad with errors, of $n"
  echo "sanitize (memcheck, ours): $nok clean, $nbad with errors, of $n" >> "$W/totals"
  ((nbad)) && failed=1
}

for m in "${modes[@]}"; do
  case $m in
    conformance|examples|bench|sanitize|perf) $m ;;
    *) say "run.sh: unknown mode $m (conformance, examples, bench, sanitize, perf, all)"; failed=1 ;;
  esac
done

# Raw per-run outputs (without loader traces) for later reading.
tar -C "$W" -czf "$LOGDIR/runs.tar.gz" r ex.* bench.out 2>/dev/null
[[ -s $W/totals ]] && { say "== totals"; tee -a "$SUMMARY" < "$W/totals"; }
say "== done in $(($(date +%s) - START)) s; logs in $LOGDIR: $(cd "$LOGDIR" && ls | tr '\n' ' ')"
if ((failed)); then say "RESULT: FAIL"
elif ((incomplete)); then say "RESULT: INCOMPLETE (BUDGET_S ran out: see SKIP(time))"; failed=1
else say "RESULT: all agree"; fi
rm -rf "$W"
exit $failed
