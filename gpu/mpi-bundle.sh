#!/usr/bin/env bash
# Packs Debian's Open MPI (launcher, libraries, components, help files, PMIx and the shared
# libraries they need that an Ubuntu CUDA image may lack) into one folder that runs from
# anywhere, for the GPU machine, which has no compilers and no package access.
# usage: gpu/mpi-bundle.sh DEST
# use there: source DEST/env.sh; mpirun --oversubscribe --allow-run-as-root -np N PROGRAM
set -euo pipefail
dest=${1:?usage: gpu/mpi-bundle.sh DEST}
src_lib=/usr/lib/x86_64-linux-gnu
[[ -x /usr/bin/orterun ]] || { echo "mpi-bundle: Open MPI is not installed (apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib/x86_64-linux-gnu" "$dest/share" "$dest/deps"
cp -L /usr/bin/orterun "$dest/bin/mpirun"
cp -L /usr/bin/orted "$dest/bin/" 2>/dev/null || true
# Libraries and components, at the same place below the prefix as in Debian's layout, so that
# OPAL_PREFIX relocates every path Open MPI derives from its prefix.
mkdir -p "$dest/lib/x86_64-linux-gnu/openmpi"
cp -a "$src_lib/openmpi/lib" "$dest/lib/x86_64-linux-gnu/openmpi/"
rm -rf "$dest/lib/x86_64-linux-gnu/openmpi/lib/pkgconfig" "$dest"/lib/x86_64-linux-gnu/openmpi/lib/*java* \
  "$dest"/lib/x86_64-linux-gnu/openmpi/lib/*.a
# One machine, shared memory and TCP: the network-fabric components (and the large libraries
# behind them: UCX, libfabric, PSM, verbs) stay behind; Open MPI skips components it lacks.
find "$dest/lib/x86_64-linux-gnu/openmpi/lib" \( -name '*ucx*' -o -name '*ofi*' -o -name '*psm*' \
  -o -name '*verbs*' -o -name '*openib*' -o -name '*usnic*' -o -name '*portals*' -o -name '*oshmem*' \
  -o -name 'mca_spml*' -o -name 'mca_sshmem*' -o -name 'mca_scoll*' -o -name 'mca_atomic*' \
  -o -name 'mca_memheap*' -o -name '*ompitrace*' -o -name '*monitoring*' \) -delete
mkdir -p "$dest/lib/x86_64-linux-gnu/pmix2"
cp -a "$src_lib/pmix2/lib" "$dest/lib/x86_64-linux-gnu/pmix2/"
[[ -d $src_lib/pmix2/share ]] && cp -a "$src_lib/pmix2/share" "$dest/lib/x86_64-linux-gnu/pmix2/"
rm -f "$dest"/lib/x86_64-linux-gnu/pmix2/lib/*.a
cp -a /usr/share/openmpi "$dest/share/"
[[ -d /usr/share/pmix ]] && cp -a /usr/share/pmix "$dest/share/"
# The real files behind Debian's library symlinks in /usr/lib/x86_64-linux-gnu.
for l in libmpi.so.40 libopen-pal.so.40 libopen-rte.so.40 libpmix.so.2; do
  [[ -e $src_lib/$l ]] && cp -L "$src_lib/$l" "$dest/deps/"
done
# Every shared library any of these needs, except the C runtime the GPU machine has.
mapfile -t elves < <(find "$dest" -type f \( -name '*.so*' -o -path '*/bin/*' \))
for f in "${elves[@]}"; do
  ldd "$f" 2>/dev/null | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  case $(basename "$lib") in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s*|libstdc++*) ;;
    *) [[ -e $dest/deps/$(basename "$lib") ]] || cp -L "$lib" "$dest/deps/" ;;
  esac
done
cat > "$dest/env.sh" <<'EOF'
# Source me: puts the bundled Open MPI first.
_d=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export OPAL_PREFIX=$_d PMIX_INSTALL_PREFIX=$_d/lib/x86_64-linux-gnu/pmix2
export PATH=$_d/bin:$PATH
export LD_LIBRARY_PATH=$_d/lib/x86_64-linux-gnu/openmpi/lib:$_d/lib/x86_64-linux-gnu/pmix2/lib:$_d/deps:${LD_LIBRARY_PATH:-}
# A single machine: no ssh/rsh agent, shared memory and TCP only (no InfiniBand stacks).
export OMPI_MCA_plm_rsh_agent= OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1 OMPI_MCA_osc=^ucx
unset _d
EOF
du -sh "$dest"
