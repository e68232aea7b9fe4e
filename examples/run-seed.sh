#!/usr/bin/env bash
# Builds libhurray_coo (release) and the C seed example against the shared
# library, as a user would, and runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)" >&2; exit 1; }
if ! command -v cc >/dev/null; then
  echo "no C compiler found; installing gcc" >&2
  apt-get update -qq && apt-get install -y -qq gcc
fi
target="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --release --quiet -p hurray-coo
mkdir -p "$target/example"
cc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude examples/seed.c \
  -L"$target/release" -lhurray_coo -Wl,-rpath,"$target/release" -o "$target/example/seed"
"$target/example/seed"
