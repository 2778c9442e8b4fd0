#!/usr/bin/env bash
# MPI ranks sharing the GPU, as large offload codes run.
#   here:  gpu/mpi.sh build        builds gpu/out/mpi (gpu/build.sh calls it): examples/mpi/*.c
#                                  for sm_90 (and for the host device, for a dry run here), and
#                                  Open MPI packed to run anywhere (gpu/mpi-bundle.sh), as
#                                  ompi.tar.xz (~3 MB); the runtime is gpu/out/ours
#   there: bash gpu/mpi.sh run     (device tool, carry ["gpu/out"]) runs mpi_stencil with
#                                  1, 2, 4 and 8 ranks on the one GPU, each must print check: OK
#          bash gpu/mpi.sh profile one rank under each runtime, then ours with its driver-call
#                                  profile, without staging and without pool pre-allocation
# env (build): OFFLOAD_CC (../shared/tools/offload-cc), CUDA_V7 (~/.cache/omptarget-cuda)
# env (run):   MPI_ARGS (grid and iterations, default "4096 500"), EXTRA_LIB (/usr/local/nvidia/lib64),
#              MPI_LLVM19 (LLVM 19's unpacked bundle; default: gpu/out/llvm19.tar.xz unpacked by
#              gpu/unpack.sh): each rank count runs under it too, for the time table,
#              MPI_SUFFIX=.host runs the host-device build (a dry run without a GPU),
#              MPI_RANKS (rank counts, default "1 2 4 8"), MPI_TIMEOUT (seconds per run, 300)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${GPU_OUT:-gpu/out}/mpi
# For `run` and `profile`: gpu/out and Open MPI unpacked and on the path; sets lib (ours and the
# driver), args (the stencil's) and llvm (LLVM 19's folder with the driver, empty without it).
prepare_run() {
  source gpu/unpack.sh
  unpack_out
  mkdir -p /tmp/omptarget-ompi && tar -C /tmp/omptarget-ompi -xJf "$out/ompi.tar.xz"
  source /tmp/omptarget-ompi/ompi/env.sh
  local extra=${EXTRA_LIB:-/usr/local/nvidia/lib64}
  lib=$(cd "$out/../ours" && pwd):$extra
  read -ra args <<< "${MPI_ARGS:-4096 500}"
  llvm=${MPI_LLVM19:-}
  [[ -n $llvm ]] || llvm19_dir llvm
  [[ -n $llvm ]] && llvm=$llvm:$extra
  export PMIX_MCA_pcompress_base_silence_warning=1
}
case ${1:-} in
  build)
    tools=$(cd .. && pwd)/shared/tools
    [[ -d $tools ]] || tools=/work/shared/tools
    cc=${OFFLOAD_CC:-$tools/offload-cc}
    cuda=${CUDA_V7:-$HOME/.cache/omptarget-cuda}
    command -v mpicc >/dev/null || { echo "mpi.sh: no mpicc (apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 1; }
    rm -rf "$out"; mkdir -p "$out/bin"
    read -ra mflags <<< "$(mpicc --showme:compile) $(mpicc --showme:link)"
    for src in examples/mpi/*.c; do
      name=$(basename "$src" .c)
      "$cc" --target sm_90 --cuda "$cuda" -O2 "$src" -o "$out/bin/$name" "${mflags[@]}" -lm
      "$cc" --target host -O2 "$src" -o "$out/bin/$name.host" "${mflags[@]}" -lm
    done
    tmp=$(mktemp -d)
    gpu/mpi-bundle.sh "$tmp/ompi" > /dev/null
    tar -C "$tmp" -cf - ompi | xz -T0 -6 > "$out/ompi.tar.xz"
    rm -rf "$tmp"
    du -sh "$out"
    ;;
  run)
    prepare_run
    fails=0
    # LLVM 19 beside ours when its bundle is there, for the times.
    runtimes=(ours); [[ -n $llvm ]] && runtimes+=(llvm19)
    table=()
    for n in ${MPI_RANKS:-1 2 4 8}; do
      for rt in "${runtimes[@]}"; do
        l=$lib; [[ $rt == llvm19 ]] && l=$llvm
        echo "== mpi_stencil, $n rank(s) on the GPU, $rt"
        # Device memory each rank's process holds (context, pool, data), sampled every 0.2 s.
        smi=; command -v nvidia-smi >/dev/null && { (while sleep 0.2; do
          nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits; done) \
          > "/tmp/smi.$rt.$n" 2>/dev/null & smi=$!; }
        if ! LD_LIBRARY_PATH=$l:${LD_LIBRARY_PATH:-} timeout "${MPI_TIMEOUT:-300}" mpirun --oversubscribe --allow-run-as-root \
            -np "$n" -x LD_LIBRARY_PATH -x OMP_TARGET_OFFLOAD=MANDATORY "$out/bin/mpi_stencil${MPI_SUFFIX:-}" "${args[@]}" 2>&1 | tee "/tmp/mpi.$rt.$n" \
            || ! grep -q 'check: OK' "/tmp/mpi.$rt.$n"; then
          echo "FAIL mpi_stencil $n ranks under $rt"; [[ $rt == ours ]] && fails=$((fails + 1))
        fi
        # (wait returns the sampler's 143 after the kill: not a failure of the run)
        mem=-; if [[ -n $smi ]]; then kill "$smi" 2>/dev/null || true; wait "$smi" 2>/dev/null || true
          mem=$(awk -F', *' '$2 > m {m = $2} END {print m ? m " MiB" : "-"}' "/tmp/smi.$rt.$n"); fi
        table+=("$(printf '%-6s %5s  %-10s %s' "$rt" "$n" "$mem" "$(grep -m1 '^time:' "/tmp/mpi.$rt.$n" | cut -c7-)")")
      done
    done
    echo "== mpi_stencil ${args[*]}: runtime, ranks, most device memory one rank held, time of the iterations (start-up)"
    printf '%s\n' "${table[@]}"
    echo "== mpi: $fails failed"
    exit $((fails > 0))
    ;;
  profile)
    # One rank, where ours was slower than LLVM 19 (docs/SCALING.md): the time under each
    # runtime, then ours with its driver-call profile (OMPTARGET_RS_PROFILE=1) as it is, without
    # staging copies, and without pool pre-allocation. (A profile longer than head's 24 lines
    # ends its pipeline with SIGPIPE: `|| true` keeps `set -e -o pipefail` from stopping here.)
    prepare_run
    one() { # LABEL LIB ENV...
      local label=$1 l=$2; shift 2
      echo "== 1 rank, $label"
      local xs=(-x LD_LIBRARY_PATH -x OMP_TARGET_OFFLOAD=MANDATORY) kv
      for kv in "$@"; do xs+=(-x "$kv"); done
      LD_LIBRARY_PATH=$l:${LD_LIBRARY_PATH:-} timeout 120 mpirun --oversubscribe --allow-run-as-root -np 1 \
        "${xs[@]}" "$out/bin/mpi_stencil${MPI_SUFFIX:-}" "${args[@]}" 2>&1 | grep -E '^(time|check)|calls' | head -n 24 || true
    }
    [[ -n $llvm ]] && one "LLVM 19" "$llvm"
    one "ours" "$lib"
    one "ours, profile" "$lib" OMPTARGET_RS_PROFILE=1
    one "ours, no staging" "$lib" OMPTARGET_RS_CUDA_STAGING_LIMIT=0
    one "ours, no pool pre-allocation" "$lib" OMPTARGET_RS_CUDA_POOL_PREALLOCATE=0
    [[ -n $llvm ]] && one "LLVM 19 again" "$llvm"
    ;;
  *) sed -n '2,9p' "$0"; exit 2 ;;
esac
