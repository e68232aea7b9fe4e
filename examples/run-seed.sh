#!/usr/bin/env bash
# Builds libhurray_coo (release) and the C seed example against the shared
# library, as a user would, and runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)" >&2; exit 1; }
if ! command -v cc >/dev/null || ! command -v make >/dev/null; then
  echo "installing gcc and make" >&2
  apt-get update -qq && apt-get install -y -qq gcc make
fi
target="${CARGO_TARGET_DIR:-$PWD/target}"
make --quiet build >/dev/null   # cargo build --release, plus the soname link
mkdir -p "$target/example"
cc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude examples/seed.c \
  -L"$target/release" -lhurray_coo -Wl,-rpath,"$target/release" -o "$target/example/seed"
"$target/example/seed"
