#!/usr/bin/env bash
# Matrix Market read/write: libhurray_coo through the C header against
# scipy.io.mmread/mmwrite (fast_matrix_market) on the same files, one run.
#   bench/peers/text.sh            # ~1.2M entries per matrix
#   bench/peers/text.sh --large    # ~20M entries per matrix
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet -p hurray-coo
lib="${CARGO_TARGET_DIR:-$PWD/target}/release"
ln -sf libhurray_coo.so "$lib/libhurray_coo.so.$(sed -n 's/^#define HURRAY_COO_ABI_VERSION \([0-9]*\).*/\1/p' include/hurray_coo.h)"
cc -std=c99 -O3 -march=native -Wall -Wextra -Werror -Iinclude bench/peers/text.c \
  -L"$lib" -lhurray_coo -Wl,-rpath,"$lib" -o "$lib/bench-text"
python3 -c "import numpy, scipy" 2>/dev/null || python3 -m pip install -q numpy scipy
echo "commit $(git rev-parse --short HEAD), $(date -u +%F' '%H:%M) UTC, $(nproc) cores"
python3 bench/peers/text.py "$lib/bench-text" "$@"
