#!/usr/bin/env bash
# The launch-geometry suite on the GPU, case by case: each of tests/c/launch_geometry*.c,
# teams_many_tile.c and launch_registers.c (ABI v7 builds from gpu/build.sh) runs under LLVM
# 19's runtime and ours, with LIBOMPTARGET_INFO=16, whose "Launching
# kernel NAME with B blocks and T threads in MODE mode" lines give the geometry each runtime
# chose for every launch. A case agrees when both its output line and its launch line are the
# same under both runtimes. Prints a table (program, cases, launches, agreeing, differing) and
# the first differing lines; the outputs go to $OUT/geometry (default /tmp/gpu-geometry).
#
# usage: bash gpu/geometry.sh          (on the GPU machine; gpu/verify.sh a runs it)
# env: GPU_OUT (gpu/out), LLVM19_DIR, EXTRA_LIB (/usr/local/nvidia/lib64), OUT,
#      OURS_DIR (the folder of our libomptarget.so.19.1; default gpu/out/ours),
#      PROGRAMS (space-separated names to run; default all)
# Exit status: 0 when every case agrees, 1 otherwise, 2 when nothing could run.
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 2
source gpu/unpack.sh
gpu_setup || exit 2
[[ -n $LLVM19_DIR ]] || { echo "geometry.sh: no LLVM 19 runtime (gpu/out/llvm19.tar.xz)"; exit 2; }
OURS=${OURS_DIR:-$G/ours}
W=${OUT:-/tmp/gpu-geometry}/geometry
mkdir -p "$W"
status=0
# env_of PROGRAM: the `// ENV:` assignments of its source, as gpu/build.sh's manifest holds them
env_of() { awk -F'\t' -v p="$1" '$1 == p { print $2 }' "$G/manifest.tsv" 2>/dev/null | sed 's/^-$//'; }
# pairs_differing A B: lines at the same position that differ, counting lines only one has
pairs_differing() {
  awk 'NR == FNR { a[FNR] = $0; n = FNR; next } { m = FNR; if (!(FNR in a) || a[FNR] != $0) d++ }
       END { if (n > m) d += n - m; print d + 0 }' "$1" "$2"
}
printf '%-36s %6s %8s %7s %7s\n' program cases launches agree differ
for bin in "$G"/v7/launch_geometry* "$G"/v7/teams_many_tile "$G"/v7/launch_registers "$G"/v7/dynamic_shared_memory; do
  [[ -x $bin ]] || continue
  p=$(basename "$bin")
  [[ -n ${PROGRAMS:-} && " $PROGRAMS " != *" $p "* ]] && continue
  read -r -a env <<< "$(env_of "$p")"
  for rt in llvm19 ours; do
    lib=$OURS; [[ $rt == llvm19 ]] && lib=$LLVM19_DIR
    # One run: the cases on stdout, LIBOMPTARGET_INFO=16's launch lines on stderr.
    env "${env[@]}" LIBOMPTARGET_INFO=16 LD_LIBRARY_PATH="$lib:$EXTRA" timeout 300 "$bin" \
      > "$W/$p.$rt.out" 2> "$W/$p.$rt.err"
    echo $? > "$W/$p.$rt.rc"
    grep -o 'Launching kernel .*' "$W/$p.$rt.err" > "$W/$p.$rt.launches"
  done
  cases=$(wc -l < "$W/$p.llvm19.out")
  launches=$(wc -l < "$W/$p.llvm19.launches")
  # Case by case: output lines, then launch lines, paired by position (a line only one
  # runtime printed differs too).
  differ=$(( $(pairs_differing "$W/$p.llvm19.out" "$W/$p.ours.out") \
           + $(pairs_differing "$W/$p.llvm19.launches" "$W/$p.ours.launches") ))
  rcs="$(cat "$W/$p.llvm19.rc")/$(cat "$W/$p.ours.rc")"
  [[ $(cat "$W/$p.llvm19.rc") != "$(cat "$W/$p.ours.rc")" ]] && differ=$((differ + 1))
  agree=$((cases + launches - differ)); ((agree < 0)) && agree=0
  printf '%-36s %6d %8d %7d %7d  exit %s\n' "$p" "$cases" "$launches" "$agree" "$differ" "$rcs"
  if ((differ)); then
    status=1
    diff "$W/$p.llvm19.out" "$W/$p.ours.out" | head -n 8 | cut -c1-220
    diff "$W/$p.llvm19.launches" "$W/$p.ours.launches" | head -n 8 | cut -c1-220
  fi
done
# Teams that ran for num_teams(N) in the CUDA-style tile program, and its wrong elements.
echo "== teams_many_tile: omp_get_num_teams and wrong elements per num_teams(N)"
tile_cols() { sed -nE 's/^num_teams\(([0-9]+)\) thread_limit.*omp_get_num_teams=([0-9]+).*wrong=([0-9]+).*/\1 \2 \3/p' "$1"; }
paste -d ' ' <(tile_cols "$W/teams_many_tile.llvm19.out" 2>/dev/null) <(tile_cols "$W/teams_many_tile.ours.out" 2>/dev/null) |
  awk '{ printf "num_teams(%s): LLVM 19 %s teams, %s wrong | ours %s teams, %s wrong\n", $1, $2, $3, $5, $6 }'
(cd "${OUT:-/tmp/gpu-geometry}" && tar czf geometry.tgz geometry) 2>/dev/null
exit $status
