#!/usr/bin/env bash
# Runs our benchmark and the peers on the same data, in one run, and prints
# one table of ratios (ours vs each peer) and one per issue-11 target. "ours"
# is libhurray_coo called from C through the header (bench/peers/capi_peer.c,
# gcc -O3 -march=native), beside a C streaming sum of the same index bytes;
# the Rust-call rows of cargo bench stay, labelled "ours (Rust call)". Installs what it needs:
# GraphBLAS and Eigen from Debian, scipy from PyPI.
#   bench/peers/run.sh            # ~1M non-zeros
#   bench/peers/run.sh --full     # ~1M and ~30M
set -euo pipefail
cd "$(dirname "$0")/../.."
need=()
[ -e /usr/include/GraphBLAS.h ] || need+=(libgraphblas-dev)
[ -d /usr/include/eigen3 ] || need+=(libeigen3-dev)
command -v g++ >/dev/null || need+=(g++)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need[@]}"
fi
python3 -c "import scipy" 2>/dev/null || pip install -q scipy numpy
out="${CARGO_TARGET_DIR:-$PWD/target}/bench-peers"
rm -rf "$out"; mkdir -p "$out/data"
quick="--quick"; [ "${1:-}" = "--full" ] && quick=""
echo "== data, and the Rust-call rows and hurray-core (cargo bench)"
cargo bench -q --bench coo -- $quick --export "$out/data" | tee "$out/ours.md"
ids=$(cd "$out/data" && ls *.meta | sed 's/\.meta$//' | sort)
echo "== ours through the C header, the C stream and the peers on: $ids"
cargo build --release -q -p hurray-coo
lib="${CARGO_TARGET_DIR:-$PWD/target}/release"
# The loader asks for the soname (libhurray_coo.so.<ABI>); cargo builds the
# unversioned name only.
ln -sf libhurray_coo.so "$lib/libhurray_coo.so.$(sed -n 's/^#define HURRAY_COO_ABI_VERSION \([0-9]*\).*/\1/p' include/hurray_coo.h)"
gcc -O3 -march=native -std=c11 -Iinclude -Ibench/peers bench/peers/capi_peer.c \
  -L"$lib" -lhurray_coo -Wl,-rpath,"$lib" -o "$out/capi_peer"
gcc -O3 -march=native -std=c11 bench/peers/graphblas_peer.c -o "$out/graphblas_peer" -lgraphblas
g++ -O3 -march=native -DNDEBUG -std=c++17 -I/usr/include/eigen3 bench/peers/eigen_peer.cpp -o "$out/eigen_peer"
# The validate rows take 41 repetitions (the stream as many, side by side):
# a sorted check of 1M entries takes ~0.3 ms, where a median of 3 moves by
# a third between runs (BENCHMARKS.md, "the sorted check, measured with
# enough repetitions").
export HURRAY_VALIDATE_REPS="${HURRAY_VALIDATE_REPS:-41}"
{
  # The Rust-call rows stay, labelled; "ours" is what a C caller gets.
  sed 's/^ours\t/ours (Rust call)\t/' "$out/data/ours.tsv"
  "$out/capi_peer" "$out/data" $ids 2> "$out/callcost.txt"
  "$out/graphblas_peer" "$out/data" $ids
  "$out/eigen_peer" "$out/data" $ids
  python3 bench/peers/scipy_peer.py "$out/data" $ids
  python3 bench/peers/numpy_peer.py "$out/data" $ids
} > "$out/all.tsv"
python3 bench/peers/table.py "$out/all.tsv"
echo
cat "$out/callcost.txt"
