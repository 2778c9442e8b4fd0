#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ (libFuzzer, AddressSanitizer, LeakSanitizer) for
# SECONDS each, one after the other, starting from the committed corpora (fuzz/corpus/T,
# read only: new inputs go to a temporary folder). Any crash, panic, leak or input slower than
# 10 s fails the run and leaves the input under fuzz/artifacts/T/.
#
# usage: scripts/fuzz.sh [SECONDS=45] [TARGET...]   (default: every target)
#   targets: entry_table device_image map_args
# The stable toolchain builds the targets through RUSTC_BOOTSTRAP=1; cargo-fuzz is installed
# with `cargo install cargo-fuzz --locked` when missing. Longer runs: docs/TESTING.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-45}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(entry_table device_image map_args)
export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi
cd fuzz
cargo fuzz build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for t in "${targets[@]}"; do
  mkdir -p "$work/$t" "artifacts/$t"
  echo "== fuzz $t for ${seconds}s"
  if target/x86_64-unknown-linux-gnu/release/"$t" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="artifacts/$t/" \
      "$work/$t" "corpus/$t" > "$work/$t.log" 2>&1; then
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/$t.log" | tr '\n' ' '
    echo
  else
    status=1
    echo "fuzz: $t FAILED; the input is in fuzz/artifacts/$t/"
    grep -avE '^#[0-9]+' "$work/$t.log" | tail -n 40
  fi
done
exit "$status"
