#!/usr/bin/env bash
# MPI ranks sharing the GPU (issue #15).
#   here:  gpu/mpi.sh build        builds gpu/out/mpi (gpu/build.sh calls it): examples/mpi/*.c
#                                  for sm_90 (and for the host device, for a dry run here), and
#                                  Open MPI packed to run anywhere (gpu/mpi-bundle.sh), as
#                                  ompi.tar.xz (~3 MB); the runtime is gpu/out/ours
#   there: bash gpu/mpi.sh run     (device tool, carry ["gpu/out"]) runs mpi_stencil with
#                                  1, 2, 4 and 8 ranks on the one GPU, each must print check: OK
# env (build): OFFLOAD_CC (../shared/tools/offload-cc), CUDA_V7 (~/.cache/omptarget-cuda)
# env (run):   MPI_ARGS (grid and iterations, default "4096 500"), EXTRA_LIB (/usr/local/nvidia/lib64),
#              MPI_SUFFIX=.host runs the host-device build (a dry run without a GPU)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${GPU_OUT:-gpu/out}/mpi
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
    mkdir -p /tmp/omptarget-ompi && tar -C /tmp/omptarget-ompi -xJf "$out/ompi.tar.xz"
    source /tmp/omptarget-ompi/ompi/env.sh
    lib=$(cd "$out/../ours" && pwd):${EXTRA_LIB:-/usr/local/nvidia/lib64}
    read -ra args <<< "${MPI_ARGS:-4096 500}"
    fails=0
    for n in 1 2 4 8; do
      echo "== mpi_stencil, $n rank(s) on the GPU"
      if ! LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH timeout 300 mpirun --oversubscribe --allow-run-as-root \
          -np "$n" -x LD_LIBRARY_PATH -x OMP_TARGET_OFFLOAD=MANDATORY "$out/bin/mpi_stencil${MPI_SUFFIX:-}" "${args[@]}" 2>&1 | tee /tmp/mpi.$n \
          || ! grep -q 'check: OK' /tmp/mpi.$n; then
        echo "FAIL mpi_stencil $n ranks"; fails=$((fails + 1))
      fi
    done
    echo "== mpi: $fails failed"
    exit $((fails > 0))
    ;;
  *) sed -n '2,9p' "$0"; exit 2 ;;
esac
