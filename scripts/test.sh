#!/usr/bin/env bash
# Runs every test of the project: Rust unit, rule, oracle and header tests,
# and the C/C++ tests (built with the cc crate) including the link-as-a-user
# test. Installs what a fresh machine lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)" >&2; exit 1; }
missing=()
command -v cc >/dev/null || missing+=(gcc)
command -v c++ >/dev/null || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}" >&2
  apt-get update -qq && apt-get install -y -qq "${missing[@]}"
fi
cargo test --workspace
