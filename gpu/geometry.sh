#!/usr/bin/env bash
# The launch-geometry suite on the GPU, case by case: each of tests/c/launch_geometry*.c,
# teams_many_tile.c and launch_registers.c (ABI v7 builds from gpu/build.sh) runs under LLVM
# 19's runtime and ours, once as it is and once with LIBOMPTARGET_INFO=16, whose "Launching
# kernel NAME with B blocks and T threads in MODE mode" lines give the geometry each runtime
# chose for every launch. A case agrees when both its output line and its launch line are the
# same under both runtimes. Prints a table (program, cases, launches, agreeing, differing) and
# the first differing lines; the outputs go to $OUT/geometry (default /tmp/gpu-geometry).
#
# usage: bash gpu/geometry.sh          (on the GPU machine; gpu/verify.sh a runs it)
# env: GPU_OUT (gpu/out), LLVM19_DIR, EXTRA_LIB (/usr/local/nvidia/lib64), OUT,
#      OURS_DIR (the folder of our libomptarget.so.19.1; default gpu/out/ours)
# Exit status: 0 when every case agrees, 1 otherwise, 2 when nothing could run.
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 2
source gpu/unpack.sh
unpack_out || exit 2
G=${GPU_OUT:-gpu/out}
EXTRA=${EXTRA_LIB:-/usr/local/nvidia/lib64}
[[ -n ${LLVM19_DIR:-} ]] || llvm19_dir LLVM19_DIR
[[ -n $LLVM19_DIR ]] || { echo "geometry.sh: no LLVM 19 runtime (gpu/out/llvm19.tar.xz)"; exit 2; }
OURS=${OURS_DIR:-$G/ours}
W=${OUT:-/tmp/gpu-geometry}/geometry
mkdir -p "$W"
status=0
# env_of PROGRAM: the `// ENV:` assignments of its source, as gpu/build.sh's manifest holds them
env_of() { awk -F'\t' -v p="$1" '$1 == p { print $2 }' "$G/manifest.tsv" 2>/dev/null | sed 's/^-$//'; }
printf '%-32s %6s %8s %7s %7s\n' program cases launches agree differ
for bin in "$G"/v7/launch_geometry* "$G"/v7/teams_many_tile "$G"/v7/launch_registers; do
  [[ -x $bin ]] || continue
  p=$(basename "$bin")
  read -r -a env <<< "$(env_of "$p")"
  for rt in llvm19 ours; do
    lib=$OURS; [[ $rt == llvm19 ]] && lib=$LLVM19_DIR
    env "${env[@]}" LD_LIBRARY_PATH="$lib:$EXTRA" timeout 300 "$bin" > "$W/$p.$rt.out" 2> "$W/$p.$rt.err"
    echo $? > "$W/$p.$rt.rc"
    env "${env[@]}" LIBOMPTARGET_INFO=16 LD_LIBRARY_PATH="$lib:$EXTRA" timeout 300 "$bin" \
      > /dev/null 2> "$W/$p.$rt.info"
    grep -o 'Launching kernel .*' "$W/$p.$rt.info" > "$W/$p.$rt.launches"
  done
  cases=$(wc -l < "$W/$p.llvm19.out")
  launches=$(wc -l < "$W/$p.llvm19.launches")
  # Case by case: output lines, then launch lines, paired by position.
  differ=$(( $(paste -d '\037' "$W/$p.llvm19.out" "$W/$p.ours.out" | awk -F'\037' '$1 != $2' | wc -l) \
           + $(paste -d '\037' "$W/$p.llvm19.launches" "$W/$p.ours.launches" | awk -F'\037' '$1 != $2' | wc -l) ))
  rcs="$(cat "$W/$p.llvm19.rc")/$(cat "$W/$p.ours.rc")"
  (( $(wc -l < "$W/$p.ours.out") != cases || $(wc -l < "$W/$p.ours.launches") != launches )) && differ=$((differ + 1))
  [[ $(cat "$W/$p.llvm19.rc") != "$(cat "$W/$p.ours.rc")" ]] && differ=$((differ + 1))
  printf '%-32s %6d %8d %7d %7d  exit %s\n' "$p" "$cases" "$launches" $((cases + launches - differ < 0 ? 0 : cases + launches - differ)) "$differ" "$rcs"
  if ((differ)); then
    status=1
    diff "$W/$p.llvm19.out" "$W/$p.ours.out" | head -n 8 | cut -c1-220
    diff "$W/$p.llvm19.launches" "$W/$p.ours.launches" | head -n 8 | cut -c1-220
  fi
done
# The issue's probe: teams that ran for num_teams(N) (teams_many_tile's lines).
echo "== teams that ran (teams_many_tile, omp_get_num_teams / wrong elements), llvm19 | ours"
paste -d '|' <(grep -o 'num_teams([0-9]*) thread_limit.*omp_get_num_teams=[0-9]*\|wrong=[0-9]*' "$W/teams_many_tile.llvm19.out" 2>/dev/null | paste -d ' ' - -) \
  <(grep -o 'omp_get_num_teams=[0-9]*\|wrong=[0-9]*' "$W/teams_many_tile.ours.out" 2>/dev/null | paste -d ' ' - -)
(cd "${OUT:-/tmp/gpu-geometry}" && tar czf geometry.tgz geometry) 2>/dev/null
exit $status
