#!/usr/bin/env bash
# Runs every test: unit and property tests of each crate, and the C/C++ conformance suite
# (tests/c, each program under our runtime and LLVM 19's, outputs compared).
set -euo pipefail
cd "$(dirname "$0")/.."
# Text checks first (a second): no tracker numbers and no work-diary words in tracked files.
scripts/check-text.sh
scripts/deps.sh
# The conformance test runs the cdylib itself, which `cargo test` does not build.
cargo build --locked -p omptarget-abi
cargo test --workspace --locked "$@"
