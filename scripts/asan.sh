#!/usr/bin/env bash
# The host conformance suite (tests/c, compared with LLVM 19 as in scripts/test.sh) with our
# runtime built with AddressSanitizer and LeakSanitizer: memory errors and leaks of ours that the C programs reach.
#
# The stable toolchain builds it through RUSTC_BOOTSTRAP=1 (-Zsanitizer=address, and
# -Zbuild-std so the standard library is instrumented too; that needs the rust-src
# component, added with rustup when missing; without it std stays uninstrumented and the
# script says so). The C programs are not instrumented and load our .so with dlopen-free
# linking, so the ASan runtime must come first in the process: clang 19's shared runtime is
# preloaded (LD_PRELOAD) into every run under ours (CONFORMANCE_OURS_PRELOAD), never into
# LLVM 19's runs. Any ASan or LSan report changes the exit status and fails the comparison.
#
# usage: scripts/asan.sh [CONFORMANCE_FILTER substring]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
export RUSTC_BOOTSTRAP=1
target=x86_64-unknown-linux-gnu
build_std=(-Zbuild-std)
if ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
  if ! rustup component add rust-src; then
    echo "asan.sh: the rust-src component cannot be installed: the standard library is not instrumented" >&2
    build_std=()
  fi
fi
# --target keeps build scripts and proc macros uninstrumented; a folder of its own keeps the
# normal build's artefacts.
RUSTFLAGS="-Zsanitizer=address" cargo build --release --locked -p omptarget-abi \
  --target "$target" "${build_std[@]}" --target-dir target/asan
lib=$PWD/target/asan/$target/release/libomptarget.so
[[ $(nm -D "$lib" | grep -c ' U __asan_report') -gt 0 ]] || { echo "asan.sh: $lib is not instrumented" >&2; exit 1; }
runtime=$(clang-19 -print-file-name=libclang_rt.asan-x86_64.so)
[[ -f $runtime ]] || { echo "asan.sh: clang 19's ASan runtime is missing ($runtime)" >&2; exit 1; }

export CONFORMANCE_OURS_LIB=$lib
export CONFORMANCE_OURS_PRELOAD=$runtime
# Leaks are reported at exit; the symbolizer names our frames. A request too large for the
# allocator returns NULL, as glibc does (the out-of-memory programs depend on it).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:exitcode=86:allocator_may_return_null=1}
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-19 || true)}
[[ -n $ASAN_SYMBOLIZER_PATH ]] || unset ASAN_SYMBOLIZER_PATH
export CONFORMANCE_FILTER=${1:-${CONFORMANCE_FILTER:-}}
echo "== conformance suite under the ASan build of ours ($lib, std instrumented: $([[ ${#build_std[@]} -gt 0 ]] && echo yes || echo no))"
cargo test --locked -p omptarget-abi --test conformance -- --nocapture
