#!/usr/bin/env bash
# The GPU performance rows that miss their goals (docs/PERFORMANCE.md), probed on the GPU
# machine in one call (each part bounded in time):
# nowait32x4MiB under both runtimes with the OpenMP team's spin time and our waits varied,
# the driver-call profile of the open rows, the small-copy alternatives, and the ompt_trace
# record order. Output: stdout (and $OUT/probe-rows.txt when OUT is set).
#   run  command: "OUT=$OUT bash gpu/probe-rows.sh"   carry: ["gpu/out-pack"]
# Modes (env), each instead of the default probe:
#   ROWS="A B"  the named rows alternating with LLVM 19, and a profile of each
#   NOWAIT=1    nowait32x4MiB run to run, KMP_BLOCKTIME varied
#   PREV=1      all scenarios in one process, gpu/out/prev's runtime (copy one there by hand
#               before packing) against ours, and a profile of each
#   ORDER=1     nowait32x4MiB after each scenario that precedes it in the table
#   SPIN=1      nowait32x4MiB with the OpenMP threads varied (hidden helpers, KMP_BLOCKTIME)
#   TABLE=1     nowait32x4MiB in all-scenario processes and after tofrom64MiB_pageable, with
#               the profile's staging counters and the table's lock
#   TRACE=N     ompt_trace N times under each runtime, counting unordered records
#   PLACE=1     each process pinned to one vCPU (taskset; PLACE_CPUS, default every CPU twice):
#               host_clock (the CPU's speed, ns per dependent multiply-add) then empty and
#               arrays16x1KiB under ours, host_clock and empty under LLVM 19: whether a
#               process's latency follows the CPU it runs on, and that CPU's speed
#   BIMODAL=1   process by process: the raw-driver small-copies probe (no OpenMP runtime),
#               with the arrays packed in one pinned buffer or one page each; ours on empty and
#               arrays16x1KiB and LLVM 19 on empty, each after host_memlat (the process's host
#               memory latency): whether a process's latency level is the machine's or ours
#               (docs/results/gpu-2026-12-02e-probes.txt ran an older form of this mode: no
#               host_memlat, and ours again under setarch -R instead of LLVM 19), with the main thread's counters
#               (SCEN_COUNTERS=1: cycles, instructions, cache and TLB misses, clock, CPU share);
#               BIMODAL_RUNS processes (8)
#   HELPERS=1   empty and arrays16x1KiB process by process with libomp's hidden helper threads
#               off, one OpenMP thread, or neither: whether the latency level follows libomp's
#               threads
#   CPU=1       nowait32x4MiB and arrays16x1KiB process by process under both runtimes, with
#               each process's CPU time and context switches and the machine's busy, idle and
#               steal time over it: whether the spread is the CPU's (spinning threads, a
#               noisy host) or ours
set -u
cd "$(dirname "$0")/.."
source gpu/unpack.sh
unpack_out || exit 1
llvm19_dir L
G=gpu/out
NV=/usr/local/nvidia/lib64
B=$G/bench/gpu_scenarios
log=${OUT:-/tmp}/probe-rows.txt
exec > >(tee "$log") 2>&1
echo "== $(nproc) cores; build: $(head -3 $G/BUILD-INFO.txt | tr '\n' ' ')"
t() { timeout 120 env "$@" 2>&1 | grep -E "^scenario=" | head -3; }
ours() { t LD_LIBRARY_PATH=$G/ours:$NV "$@"; }
llvm() { t LD_LIBRARY_PATH=$L:$NV "$@"; }
# Result lines on one line, without the fields the probes below do not compare.
short() { sed -E 's/ (min_us|reps|iters|result|arrays|bytes)=[^ ]*//g; s/(scenario|probe)=//' | tr '\n' ' '; }

if [[ -n ${TABLE:-} ]]; then
  # Why nowait32x4MiB is slower in the table's all-scenario processes than alone: three of
  # each kind, with the profile's staging counters and the table's lock.
  for i in 1 2 3; do
    for w in nowait32x4MiB tofrom64MiB_pageable,nowait32x4MiB all; do
      echo "-- $w (run $i)"
      timeout 150 env LD_LIBRARY_PATH=$G/ours:$NV OMPTARGET_RS_PROFILE=1 $B $w 3 1 2>&1 |
        grep -E "^scenario=nowait|without a staging|cuMemAllocHost|cuStreamSynchronize|cuEventSynchronize|mapping table|staging buffers" | cut -c1-170
    done
  done
  for th in 1000000 1; do
    echo -n "-- OMPTARGET_QUERY_COUNT_THRESHOLD=$th: "; ours OMPTARGET_QUERY_COUNT_THRESHOLD=$th $B nowait32x4MiB 3 1
  done
  exit 0
fi
if [[ -n ${BIMODAL:-} ]]; then
  echo "kernel $(uname -r); THP $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>&1); PMUs: $(ls /sys/bus/event_source/devices | tr '\n' ' '); perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)"
  for i in $(seq ${BIMODAL_RUNS:-8}); do
    echo "run $i: raw $(timeout 60 env LD_LIBRARY_PATH=$NV $G/bin/omptarget-suite probe small-copies 2>&1 |
      grep -E "mode=(none|zero-copy|zero-copy-scattered)" | short)| ours $(ours SCEN_COUNTERS=1 $B host_memlat,empty,arrays16x1KiB 3 4 | short)| llvm19 $(llvm SCEN_COUNTERS=1 $B host_memlat,empty 3 4 | short)"
  done
  exit 0
fi
if [[ -n ${HELPERS:-} ]]; then
  for i in 1 2 3 4 5 6 7 8; do
    echo "run $i: default $(ours $B empty,arrays16x1KiB 3 4 | short)| no hidden helpers $(ours LIBOMP_USE_HIDDEN_HELPER_TASK=0 $B empty,arrays16x1KiB 3 4 | short)| OMP_NUM_THREADS=1 $(ours OMP_NUM_THREADS=1 $B empty,arrays16x1KiB 3 4 | short)"
  done
  exit 0
fi
if [[ -n ${PLACE:-} ]]; then
  # Each process pinned to one vCPU, with that CPU's speed (host_clock) measured first in it:
  # the latency level follows it (docs/PERFORMANCE.md, "Why the latency rows vary").
  for c in ${PLACE_CPUS:-$(seq 0 $(($(nproc) - 1))) $(seq 0 $(($(nproc) - 1)))}; do
    echo "cpu=$c ours $(ours taskset -c $c $B host_clock,empty,arrays16x1KiB 3 4 | short)| llvm19 $(llvm taskset -c $c $B host_clock,empty 3 4 | short)"
  done
  echo "unpinned $(ours $B host_clock,empty,arrays16x1KiB 3 4 | short)"
  exit 0
fi
if [[ -n ${CPU:-} ]]; then
  # /proc/stat's cpu line: busy (user nice system irq softirq), idle (idle iowait), steal; in
  # ticks (USER_HZ), summed over the machine's CPUs.
  stat() { awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6, $9}' /proc/stat; }
  tm=$(command -v /usr/bin/time || true)
  one() { # label, env..., then the scenario list
    local label=$1 b0 i0 s0 b1 i1 s1 out; shift
    read -r b0 i0 s0 < <(stat)
    if [[ -n $tm ]]; then
      out=$(timeout 120 $tm -f "proc_cpu_s=%U+%S ivcsw=%c vcsw=%w wall_s=%e" env "$@" 2>&1)
    else
      out=$( { TIMEFORMAT="proc_cpu_s=%U+%S wall_s=%R"; time timeout 120 env "$@"; } 2>&1)
    fi
    read -r b1 i1 s1 < <(stat)
    echo "$label $(grep -E "^scenario=" <<< "$out" | short)$(grep -oE "proc_cpu_s.*" <<< "$out") machine_busy=$((b1 - b0)) idle=$((i1 - i0)) steal=$((s1 - s0))"
  }
  echo "== USER_HZ ticks over all $(nproc) CPUs; /usr/bin/time: ${tm:-none}"
  for i in 1 2 3 4; do
    one "llvm19" LD_LIBRARY_PATH=$L:$NV $B nowait32x4MiB 3 1
    one "ours" LD_LIBRARY_PATH=$G/ours:$NV $B nowait32x4MiB 3 1
    one "ours OMP_NUM_THREADS=4" OMP_NUM_THREADS=4 LD_LIBRARY_PATH=$G/ours:$NV $B nowait32x4MiB 3 1
    one "ours KMP_BLOCKTIME=0" KMP_BLOCKTIME=0 LD_LIBRARY_PATH=$G/ours:$NV $B nowait32x4MiB 3 1
    one "ours BLOCKING_SYNC" OMPTARGET_RS_CUDA_BLOCKING_SYNC=1 LD_LIBRARY_PATH=$G/ours:$NV $B nowait32x4MiB 3 1
    one "ours arrays16" LD_LIBRARY_PATH=$G/ours:$NV $B arrays16x1KiB 3 1
    one "ours tofrom,arrays16,nowait" LD_LIBRARY_PATH=$G/ours:$NV $B tofrom64MiB_pageable,arrays16x1KiB,nowait32x4MiB 3 1
  done
  for i in 1 2; do
    echo "-- profile nowait32x4MiB (run $i)"
    timeout 100 env LD_LIBRARY_PATH=$G/ours:$NV OMPTARGET_RS_PROFILE=1 $B nowait32x4MiB 3 1 2>&1 |
      grep -E "^scenario|cuMemcpy|host copy|cuMemAlloc|cuStream|cuEvent|cuPointer|held" | cut -c1-170
  done
  exit 0
fi
if [[ -n ${TRACE:-} ]]; then
  # ompt_trace's `unordered=` flake: TRACE runs under each runtime (the previous one in
  # gpu/out/prev, when there), counting the runs with an unordered record and keeping the
  # first such run's records (OMPT_TRACE_DUMP=1) for each.
  for r in prev ours; do
    [[ -f $G/$r/libomptarget.so.19.1 ]] || continue
    bad=0
    for ((i = 0; i < TRACE; i++)); do
      o=$(LD_LIBRARY_PATH=$G/$r:$NV OMP_TOOL_LIBRARIES=$G/bin/libompt_trace_tool.so OMPT_TRACE_DUMP=1 \
          timeout 20 $G/v7/ompt_trace 2> /tmp/trace-dump.txt)
      if grep -q "unordered=[1-9]" <<< "$o"; then
        bad=$((bad + 1))
        ((bad == 1)) && { echo "-- $r: first unordered run ($i)"; echo "$o" | grep unordered; head -40 /tmp/trace-dump.txt; }
      fi
    done
    echo "== $r: $bad of $TRACE runs with an unordered record"
  done
  exit 0
fi
if [[ -n ${SPIN:-} ]]; then
  # nowait32x4MiB alone with the program's OpenMP threads varied (spinning team threads
  # compete for the 16 cores with the hidden helpers that run the target tasks), with the
  # profile's lines for the stream calls and the table's lock.
  pr() {
    echo "-- $*"
    timeout 100 env LD_LIBRARY_PATH=$G/ours:$NV OMPTARGET_RS_PROFILE=1 "$@" $B nowait32x4MiB 3 1 2>&1 |
      grep -E "^scenario|cuMemcpy(DtoH|HtoD)Async|host copy|mapping table" | cut -c1-170
  }
  for i in 1 2 3; do
    [[ -f $G/prev/libomptarget.so.19.1 ]] && { echo -n "prev "; t LD_LIBRARY_PATH=$G/prev:$NV $B nowait32x4MiB 3 1; }
    echo -n "ours "; ours $B nowait32x4MiB 3 1
  done
  pr X=1; pr KMP_BLOCKTIME=0; pr OMP_WAIT_POLICY=passive
  pr LIBOMP_NUM_HIDDEN_HELPER_THREADS=4; pr LIBOMP_NUM_HIDDEN_HELPER_THREADS=16
  echo -n "llvm19 "; llvm $B nowait32x4MiB 3 1
  echo -n "llvm19 KMP_BLOCKTIME=0 "; llvm KMP_BLOCKTIME=0 $B nowait32x4MiB 3 1
  for e in X=1 KMP_BLOCKTIME=0 X=2; do
    echo "-- all, $e"; timeout 150 env LD_LIBRARY_PATH=$G/ours:$NV $e $B all 3 1 2>&1 | grep -E "nowait|tofrom|arrays"
  done
  exit 0
fi
if [[ -n ${ORDER:-} ]]; then
  # nowait32x4MiB after the scenarios that run before it in the table, one process each
  # (gpu_scenarios takes a comma list), with the profile: what changes in the table's process.
  lscpu | grep -E "^(Model name|Socket|Core|Thread|NUMA|CPU\(s\))" ; nvidia-smi topo -m 2>&1 | head -4
  pre=(empty,map64B,alloc64MiB_kernel,alloc1GiB_kernel,enter_kernel_exit64MiB
       threads8_alloc64MiB tofrom64MiB_pageable arrays16x1KiB)
  for i in 1 2; do
    echo "-- alone (run $i)"; ours $B nowait32x4MiB 3 1
    for p in "${pre[@]}"; do echo "-- after $p (run $i)"; ours $B $p,nowait32x4MiB 3 1 | grep nowait; done
  done
  for p in nowait32x4MiB tofrom64MiB_pageable,nowait32x4MiB threads8_alloc64MiB,nowait32x4MiB; do
    echo "-- profile $p"
    timeout 150 env LD_LIBRARY_PATH=$G/ours:$NV OMPTARGET_RS_PROFILE=1 $B $p 3 1 2>&1 |
      grep -vE " (cuModule|cuDevice|cuFunc|cuCtx|cuInit|cuMemPool)" | head -40
  done
  for i in 1 2; do
    echo -n "-- OMP_PROC_BIND=spread OMP_PLACES=cores alone: "; ours OMP_PROC_BIND=spread OMP_PLACES=cores $B nowait32x4MiB 3 1
  done
  exit 0
fi
if [[ -n ${PREV:-} ]]; then
  # All scenarios in one process (as the perf table runs them), the previous runtime
  # (gpu/out/prev, copied there by hand before packing) against this one, alternating; then
  # one profile of each, for the copies that found no staging buffer.
  [[ -f $G/prev/libomptarget.so.19.1 ]] || { echo "no $G/prev"; exit 1; }
  for i in 1 2; do
    for r in prev ours; do
      echo "-- $r all (run $i)"
      timeout 150 env LD_LIBRARY_PATH=$G/$r:$NV $B all 3 1 2>&1 | grep -E "^scenario=" | cut -c1-110
    done
  done
  for r in prev ours; do
    echo "-- $r all, OMPTARGET_RS_PROFILE=1"
    timeout 150 env LD_LIBRARY_PATH=$G/$r:$NV OMPTARGET_RS_PROFILE=1 $B all 3 1 2>&1 |
      grep -E "without a staging|host copy|cuMemAllocHost|cuEventSynchronize|MemcpyHtoDAsync|MemcpyDtoHAsync" | head -12
  done
  exit 0
fi
if [[ -n ${NOWAIT:-} ]]; then
  # nowait32x4MiB run to run (each process alternating), with the team's spin time varied.
  for i in 1 2 3 4; do
    echo -n "llvm19 "; llvm $B nowait32x4MiB 3 1
    echo -n "ours   "; ours $B nowait32x4MiB 3 1
    echo -n "ours KMP_BLOCKTIME=0 "; ours KMP_BLOCKTIME=0 $B nowait32x4MiB 3 1
  done
  timeout 120 env LD_LIBRARY_PATH=$G/ours:$NV OMPTARGET_RS_PROFILE=1 $B nowait32x4MiB 3 1 2>&1 | grep -E "scenario|calls|held|buffer" | head -40
  exit 0
fi
if [[ -n ${ROWS:-} ]]; then
  # Only the open rows, alternating, plus one profile of each of ours.
  for s in $ROWS; do
    for i in 1 2 3; do
      echo -n "llvm19 "; llvm $B $s 3 1
      echo -n "ours   "; ours $B $s 3 1
    done
    if [[ $s == tofrom64MiB_pageable ]]; then
      for n in 4 12 16 8; do echo -n "ours staging threads $n "; ours OMPTARGET_RS_CUDA_STAGING_THREADS=$n $B $s 3 1; done
    fi
    echo "-- profile $s"
    timeout 120 env LD_LIBRARY_PATH=$G/ours:$NV OMPTARGET_RS_PROFILE=1 $B $s 3 1 2>&1 | grep -E "scenario|calls|held" | head -14
  done
  exit 0
fi
echo "== nowait32x4MiB: spin time of the team (KMP_BLOCKTIME) and our waits"
for round in 1 2; do
  for bt in default 0; do
    e=(); [[ $bt == default ]] || e=(KMP_BLOCKTIME=$bt)
    echo "-- round $round KMP_BLOCKTIME=$bt"
    echo -n "llvm19 "; llvm "${e[@]}" $B nowait32x4MiB 3 1
    echo -n "ours   "; ours "${e[@]}" $B nowait32x4MiB 3 1
    echo -n "ours blocking-sync "; ours "${e[@]}" OMPTARGET_RS_CUDA_BLOCKING_SYNC=1 $B nowait32x4MiB 3 1
  done
done
echo -n "ours OMP_NUM_THREADS=8 "; ours OMP_NUM_THREADS=8 $B nowait32x4MiB 3 1
echo -n "llvm OMP_NUM_THREADS=8 "; llvm OMP_NUM_THREADS=8 $B nowait32x4MiB 3 1
echo -n "ours OMP_NUM_THREADS=1 "; ours OMP_NUM_THREADS=1 $B nowait32x4MiB 3 1
echo -n "llvm OMP_NUM_THREADS=1 "; llvm OMP_NUM_THREADS=1 $B nowait32x4MiB 3 1

echo "== profiles (OMPTARGET_RS_PROFILE=1)"
for s in nowait32x4MiB arrays16x1KiB tofrom64MiB_pageable; do
  echo "-- $s"
  timeout 120 env LD_LIBRARY_PATH=$G/ours:$NV OMPTARGET_RS_PROFILE=1 $B $s 3 1 2>&1 | head -70
done

echo "== rows, alternating (3 each)"
for s in arrays16x1KiB tofrom64MiB_pageable; do
  for i in 1 2 3; do
    echo -n "llvm19 "; llvm $B $s 3 1
    echo -n "ours   "; ours $B $s 3 1
  done
done
echo "== small-copy alternatives"
timeout 120 env LD_LIBRARY_PATH=$G/ours:$NV $G/bin/omptarget-suite probe small-copies 2>&1 | tail -15

echo "== host copy bandwidth (probe host-copies)"
timeout 120 env LD_LIBRARY_PATH=$NV $G/bin/omptarget-suite probe host-copies 3 2>&1 | tail -20

echo "== map_many_small_odd (v7, v8) against LLVM 19"
for v in v7 v8; do
  for p in map_many_small_odd; do
    a=$(timeout 60 env LD_LIBRARY_PATH=$L:$NV $G/$v/$p 2>&1); ra=$?
    b=$(timeout 60 env LD_LIBRARY_PATH=$G/ours:$NV $G/$v/$p 2>&1); rb=$?
    if [[ $v == v8 ]]; then a=$(timeout 60 env LD_LIBRARY_PATH=$L:$NV $G/v7/$p 2>&1); fi
    [[ "$a" == "$b" && $ra == $rb ]] && echo "$v $p agree (rc $rb)" || { echo "$v $p DIFFER rc $ra/$rb"; diff <(echo "$a") <(echo "$b") | head; }
  done
done

echo "== ompt_trace record order (OMPT_TRACE_DUMP=1)"
tool=$(ls $G/bin/*ompt_trace* $G/v7/*ompt_trace_tool* 2>/dev/null | head -1)
echo "tool: $tool"
for i in 1 2 3; do
  timeout 60 env LD_LIBRARY_PATH=$G/ours:$NV OMP_TOOL_LIBRARIES=$tool OMPT_TRACE_DUMP=1 $G/v7/ompt_trace > /tmp/trace$i.txt 2>&1
  grep -E "unordered=" /tmp/trace$i.txt | head -3
  if grep -q "unordered=[1-9]" /tmp/trace$i.txt; then
    awk '/^record/ { split($4,t,"="); split($6,s,"="); if (t[2] in last && s[2] < last[t[2]]) { print "OUT OF ORDER after: " prev[t[2]]; print "           this: " $0 } last[t[2]]=s[2]; prev[t[2]]=$0 }' /tmp/trace$i.txt | head -10
    cp /tmp/trace$i.txt ${OUT:-/tmp}/trace-unordered.txt
  fi
done
echo "== done"
