#!/usr/bin/env bash
# A permissive handle that says it is sorted, against a validated one: create
# plus 1M single lookups through the C header (bench/peers/permissive.c).
#   bench/peers/permissive.sh [entries] [reps]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet -p hurray-coo
lib="${CARGO_TARGET_DIR:-$PWD/target}/release"
cc -std=c11 -O3 -march=native -Wall -Wextra -Werror -Iinclude -Ibench/peers bench/peers/permissive.c \
  -L"$lib" -lhurray_coo -Wl,-rpath,"$lib" -o "$lib/bench-permissive"
echo "commit $(git rev-parse --short HEAD), $(date -u +%F' '%H:%M) UTC, $(nproc) cores"
"$lib/bench-permissive" "${1:-1000000}" "${2:-3}"
