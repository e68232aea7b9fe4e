#!/usr/bin/env bash
# Hurray files: open + validated handle of a sorted tensor through the C
# header against a C streaming read of the same index bytes (-O3
# -march=native), on the Matrix Market files of bench/peers/text.py.
#   bench/peers/file.sh [--large] [--reps N]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet -p hurray-coo
lib="${CARGO_TARGET_DIR:-$PWD/target}/release"
ln -sf libhurray_coo.so "$lib/libhurray_coo.so.$(sed -n 's/^#define HURRAY_COO_ABI_VERSION \([0-9]*\).*/\1/p' include/hurray_coo.h)"
cc -std=c99 -O3 -march=native -Wall -Wextra -Werror -Iinclude -Ibench/peers bench/peers/file.c \
  -L"$lib" -lhurray_coo -Wl,-rpath,"$lib" -o "$lib/bench-file"
python3 -c "import numpy, scipy" 2>/dev/null || python3 -m pip install -q numpy scipy
echo "commit $(git rev-parse --short HEAD), $(date -u +%F' '%H:%M) UTC, $(nproc) cores"
large=""; reps=5
while [ $# -gt 0 ]; do
  case "$1" in
    --large) large="--large" ;;
    --reps) reps="$2"; shift ;;
  esac
  shift
done
files=$(python3 bench/peers/text.py --only-generate $large)
"$lib/bench-file" "$reps" $files | python3 bench/peers/file_table.py
