#!/usr/bin/env bash
# Process exit, fork and deep copies on the GPU, under LLVM 19's runtime, ours, and optionally
# another build of ours (OLD_DIR, e.g. one from before a change): `target nowait` regions in
# flight at exit (`return`, `exit()`, `exit()` from another thread; each must end at once with
# nothing on stderr), and the deep copy of N structs in one array, by hand and through a
# mapper (enter and exit seconds; 10^5 structs only where the runtime is not quadratic).
# The programs come from gpu/build.sh (gpu/out/stress); exit_lib_global_dtor and
# exit_own_image_late run in the conformance suite.
#
# usage: bash gpu/exit-checks.sh       env: GPU_OUT (gpu/out), LLVM19_DIR, EXTRA_LIB, OLD_DIR
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 2
source gpu/unpack.sh
gpu_setup || exit 2
S=$G/stress
status=0
runtimes="llvm19 ours"; [[ -n ${OLD_DIR:-} ]] && runtimes="llvm19 old ours"
for rt in $runtimes; do
  case $rt in llvm19) LP=$LLVM19_DIR ;; old) LP=$OLD_DIR ;; ours) LP=$G/ours ;; esac
  echo "== $rt"
  for m in return exit thread; do
    s=$(date +%s%N)
    LD_LIBRARY_PATH=$LP:$EXTRA timeout 60 "$S/exit_with_nowait" "$m" > /tmp/ec.out 2> /tmp/ec.err
    rc=$?; e=$(date +%s%N)
    echo "exit_with_nowait $m: rc=$rc $(( (e - s) / 1000000 )) ms stdout=$(tr '\n' ' ' < /tmp/ec.out) stderr=$(head -c 1500 /tmp/ec.err | tr '\n' ' ')"
    [[ $rt == ours && ( $rc != 0 || -s /tmp/ec.err ) ]] && status=1
  done
  s=$(date +%s%N)
  LD_LIBRARY_PATH=$LP:$EXTRA timeout 60 "$S/fork_during_region" > /tmp/ec.out 2> /tmp/ec.err
  rc=$?; e=$(date +%s%N)
  echo "fork_during_region: rc=$rc $(( (e - s) / 1000000 )) ms stdout=$(tr '\n' ' ' < /tmp/ec.out) stderr=$(head -c 600 /tmp/ec.err | tr '\n' ' ')"
  [[ $rt == ours && ( $rc != 0 || -s /tmp/ec.err ) ]] && status=1
  for m in manual mapper; do
    for n in 20000 100000; do
      # LLVM 19's exit is quadratic (minutes at 10^5): its enter alone at 10^5, and ours the same way.
      [[ $rt != ours && $n == 100000 ]] || echo "deep_copy $m $n: $(LD_LIBRARY_PATH=$LP:$EXTRA timeout 120 "$S/deep_copy" "$m" "$n" 2>&1 | tr '\n' ' ')"
      [[ $n == 100000 ]] && echo "deep_copy $m $n enter only: $(LD_LIBRARY_PATH=$LP:$EXTRA timeout 120 "$S/deep_copy" "$m" "$n" enter 2>&1 | tr '\n' ' ')"
    done
  done
  # What of the resident memory the pinned staging buffers hold: without them, and with small
  # copies packed into one arena per stream.
  if [[ $rt == ours ]]; then
    for v in OMPTARGET_RS_CUDA_STAGING_LIMIT=0 OMPTARGET_RS_CUDA_PACK_COPIES=1; do
      echo "deep_copy mapper 20000, $v: $(env "$v" LD_LIBRARY_PATH=$LP:$EXTRA timeout 120 "$S/deep_copy" mapper 20000 2>&1 | tr '\n' ' ')"
      echo "deep_copy manual 100000 enter only, $v: $(env "$v" LD_LIBRARY_PATH=$LP:$EXTRA timeout 120 "$S/deep_copy" manual 100000 enter 2>&1 | tr '\n' ' ')"
    done
  fi
done
exit $status
