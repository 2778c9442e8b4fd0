#!/usr/bin/env bash
# Instructions and atomic instructions per region (callgrind) and heap allocations per region (valgrind) of
# bench/host_regions.c on the host device, under ours and LLVM 19: counts, unlike times, do not
# depend on the machine's load. Each count is the difference of two region counts, so start-up
# cancels out; libomp's own start-up (ompt_libomp_connect), which varies by ~280,000
# instructions from run to run, is left out (scripts/callgrind-sum.awk). Run
# scripts/bench-host.sh first (it builds target/bench/host_regions).
# usage: scripts/count-host.sh
set -euo pipefail
cd "$(dirname "$0")/.."
B=target/bench/host_regions
[[ -x $B ]] || { echo "run scripts/bench-host.sh first" >&2; exit 1; }
echo "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD); $B (release)"
# Instructions and atomic (bus-locked: lock acquisitions and releases, reference counts)
# instructions, the second from callgrind's --collect-bus.
f=$(mktemp)
trap 'rm -f "$f"' EXIT
ir() { # lib scenario regions: "instructions atomics"
  LD_LIBRARY_PATH=$1 valgrind --tool=callgrind --collect-bus=yes --callgrind-out-file="$f" \
    $B "$2" 1 "$3" > /dev/null 2>&1
  awk -f scripts/callgrind-sum.awk "$f" | awk '{ print $1, $3 }'
}
allocs() { # lib scenario regions
  LD_LIBRARY_PATH=$1 valgrind $B "$2" 1 "$3" 2>&1 >/dev/null |
    sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ,
}
for lib in ours:target/bench/lib llvm19:/usr/lib/llvm-19/lib; do
  name=${lib%%:*} dir=${lib#*:}
  for s in empty map64; do
    read -r a ga <<< "$(ir "$dir" $s 5000)"
    read -r b gb <<< "$(ir "$dir" $s 15000)"
    echo "callgrind $name $s: N=5000 $a, N=15000 $b instructions; per region (difference / 10000): $(((b - a) / 10000)); atomic instructions per region: $(((gb - ga) / 10000))"
    c=$(allocs "$dir" $s 1000) d=$(allocs "$dir" $s 2000)
    echo "valgrind $name $s: N=1000 $c, N=2000 $d heap allocations; per region (difference / 1000): $(((d - c) / 1000))"
  done
done
