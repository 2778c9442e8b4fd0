#!/usr/bin/env bash
# Miri (undefined-behaviour checker) on the pure parts: the mapping table and its model-based
# property test, OffloadBinary parsing and entry-table decoding, configuration parsing
# (omptarget-core's unit tests), and the memory manager and argument words (omptarget-plugin).
# Miri ships only with nightly toolchains: the script installs nightly with the miri
# component when it is missing (rustup's distribution server must be reachable).
#
# usage: scripts/miri.sh [test filter]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  echo "== installing the nightly toolchain with miri"
  rustup toolchain install nightly --profile minimal --component miri,rust-src
fi
cargo +nightly miri setup
# Isolation stays on; the configuration tests read no environment under Miri's defaults.
cargo +nightly miri test --locked -p omptarget-core --lib -- "$@"
cargo +nightly miri test --locked -p omptarget-plugin --lib -- "$@"
