#!/usr/bin/env bash
# The README's way of using the runtime with one's own programs, run as a new user runs it:
# build, `omptarget install` into a fresh prefix, compile an example with
# clang-19, run it with LD_LIBRARY_PATH=PREFIX/lib and nothing else (a bare environment), and
# `omptarget doctor` on it: no problem with ours first, LLVM's runtime named (exit 1) when it
# is first. Then the Lmod modulefile, where Lmod is installed (CI installs it), and the
# Spack recipe's install step (packaging/spack/check.sh, both variants).
#
# usage: scripts/install-check.sh [--no-spack]
set -euo pipefail
cd "$(dirname "$0")/.."
spack=1; [[ ${1:-} == --no-spack ]] && spack=0
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "install-check: $*" >&2; exit 1; }

echo "== cargo build --release -p omptarget-abi -p omptarget-cli"
cargo build --release -p omptarget-abi -p omptarget-cli
echo "== omptarget install --prefix $prefix"
target/release/omptarget install --prefix "$prefix"
echo "== a clang-19 program, run with LD_LIBRARY_PATH=$prefix/lib only"
clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 examples/saxpy.c -o "$work/saxpy"
out=$(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$prefix/lib" LD_DEBUG=files "$work/saxpy" 2> "$work/err")
echo "$out"
grep -q 'check: OK' <<< "$out" || fail "the program failed"
grep -q 'ran on: offload device' <<< "$out" || fail "the program did not offload"
grep -q "calling init: $prefix/lib/libomptarget.so.19.1" "$work/err" || fail "the program did not load $prefix/lib/libomptarget.so.19.1"

echo "== omptarget doctor (ours first): no problem"
env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$prefix/lib" "$prefix/bin/omptarget" doctor "$work/saxpy" | tee "$work/doctor"
grep -q 'omptarget-rs (this installation)' "$work/doctor" || fail "doctor did not find this installation"
echo "== omptarget doctor (LLVM's runtime first): the problem and its fix"
if env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="/usr/lib/llvm-19/lib:$prefix/lib" "$prefix/bin/omptarget" doctor "$work/saxpy" > "$work/doctor"; then
  cat "$work/doctor"; fail "doctor found no problem with LLVM's runtime first"
fi
grep -A1 'not omptarget-rs' "$work/doctor"
grep -q "fix: export LD_LIBRARY_PATH=$prefix/lib:" "$work/doctor" || fail "doctor gave no fix"

echo "== upgrade in place"
again=$(target/release/omptarget install --prefix "$prefix")
[[ $again == upgraded* ]] || fail "a second install did not upgrade: $again"

if [[ -f /usr/share/lmod/lmod/init/bash ]]; then
  echo "== Lmod: module load omptarget-rs"
  # shellcheck disable=SC1091
  lmod_out=$(env -i PATH=/usr/bin:/bin HOME="$work" bash -c "source /usr/share/lmod/lmod/init/bash && module use '$prefix/share/modulefiles' && module load omptarget-rs && echo \"LD=\$LD_LIBRARY_PATH\" && command -v omptarget && '$work/saxpy'")
  echo "$lmod_out"
  grep -q "^LD=$prefix/lib" <<< "$lmod_out" || fail "the module does not prepend LD_LIBRARY_PATH"
  grep -q "^$prefix/bin/omptarget$" <<< "$lmod_out" || fail "the module does not prepend PATH"
  grep -q 'check: OK' <<< "$lmod_out" || fail "the program failed under the module"
else
  echo "== Lmod not installed (apt-get install lmod): modulefile not loaded"
fi

if ((spack)); then
  echo "== Spack recipe: install() with a stand-in spack, both variants"
  packaging/spack/check.sh '~cuda' '+cuda'
fi
echo "== install-check: ok"
