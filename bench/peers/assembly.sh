#!/usr/bin/env bash
# Assembly, re-assembly and CSR export through the C ABI against Eigen,
# GraphBLAS, PETSc, a C loop and a streaming copy, in one process (see
# bench/peers/assembly.cpp), then numpy and scipy on the same data
# (bench/peers/assembly_numpy.py). Installs GraphBLAS, Eigen and PETSc from
# Debian, numpy and scipy from PyPI.
#   bench/peers/assembly.sh            # 300 x 300 mesh: ~1.6M triplets
#   bench/peers/assembly.sh 1500 3     # 1500 x 1500 mesh: ~40M triplets
set -euo pipefail
cd "$(dirname "$0")/../.."
need=()
[ -e /usr/include/GraphBLAS.h ] || need+=(libgraphblas-dev)
[ -d /usr/include/eigen3 ] || need+=(libeigen3-dev)
pkg-config --exists petsc 2>/dev/null || need+=(petsc-dev)
command -v g++ >/dev/null || need+=(g++)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need[@]}"
fi
cargo build --release --quiet -p hurray-coo
ln -sf libhurray_coo.so "${CARGO_TARGET_DIR:-$PWD/target}/release/libhurray_coo.so.$(sed -n 's/^#define HURRAY_COO_ABI_VERSION \([0-9]*\).*/\1/p' include/hurray_coo.h)"
lib="${CARGO_TARGET_DIR:-$PWD/target}/release"
out="$lib/bench-assembly"
g++ -std=c++17 -O3 -march=native -DNDEBUG -Iinclude -I/usr/include/eigen3 \
  $(pkg-config --cflags petsc mpi) bench/peers/assembly.cpp -L"$lib" -lhurray_coo -lgraphblas \
  $(pkg-config --libs petsc mpi) -Wl,-rpath,"$lib" -o "$out"
echo "commit $(git rev-parse --short HEAD), $(date -u +%F' '%H:%M) UTC, $(nproc) cores"
"$out" "${1:-300}" "${2:-5}"
python3 -c "import numpy, scipy" 2>/dev/null || python3 -m pip install -q numpy scipy
python3 bench/peers/assembly_numpy.py "${1:-300}" "${2:-5}"
