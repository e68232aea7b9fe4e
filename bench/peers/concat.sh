#!/usr/bin/env bash
# hurray_coo_concat against the number of shards, called from C through the
# header (bench/peers/concat.c): 2,048 to 1,048,576 row-block shards.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -q -p hurray-coo
lib="${CARGO_TARGET_DIR:-$PWD/target}/release"
out="${CARGO_TARGET_DIR:-$PWD/target}/concat"
mkdir -p "$out"
gcc -O2 -std=gnu11 -Iinclude bench/peers/concat.c "$lib/libhurray_coo.a" -lpthread -ldl -lm \
  -o "$out/concat"
for k in 2048 8192 65536 262144 1048576; do "$out/concat" "$k"; done
