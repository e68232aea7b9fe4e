#!/usr/bin/env bash
# Distributed assembly: libhurray_coo_mpi against PETSc's COO path
# (MatSetPreallocationCOO + MatSetValuesCOO, PETSc from Debian) on the same
# triplets and row blocks, 1 to 4 ranks, one table.
#   bench/peers/mpi.sh [M] [reps]     # M x M FEM grid (default 400: 2.9M triplets)
set -euo pipefail
cd "$(dirname "$0")/../.."
M="${1:-400}"; reps="${2:-3}"
command -v mpicc >/dev/null && pkg-config --exists petsc || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenmpi-dev openmpi-bin petsc-dev; }
make --no-print-directory build mpi >/dev/null
lib="${CARGO_TARGET_DIR:-$PWD/target}/release"
mpicc -std=c11 -O3 -march=native -Wall -Wextra -Iinclude -Impi/include bench/peers/mpi_assembly.c \
  $(pkg-config --cflags --libs petsc) -L"$lib" -lhurray_coo_mpi -lhurray_coo -lm \
  -Wl,-rpath,"$lib" -o "$lib/bench-mpi"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
echo "commit $(git rev-parse --short HEAD), $(date -u +%F' '%H:%M) UTC, $(nproc) cores, PETSc $(pkg-config --modversion petsc)"
printf "%5s %9s %9s | %9s %9s %9s | %9s %9s | %7s %7s | %s\n" ranks rows triplets \
  ours re-ours into-Mat petsc re-petsc asm/pet re/pet "bytes sent per re-assembly"
for p in 1 2 3 4; do
  mpirun -n "$p" "$lib/bench-mpi" "$M" "$reps" | while read -r P rows n a r i pa pr b; do
    python3 -c "
P,rows,n,a,r,i,pa,pr,b=$P,$rows,$n,$a,$r,$i,$pa,$pr,$b
print(f'{P:5d} {rows:9d} {n:9d} | {a*1e3:7.1f}ms {r*1e3:7.2f}ms {i*1e3:7.1f}ms | {pa*1e3:7.1f}ms {pr*1e3:7.2f}ms | {pa/a:7.2f} {pr/r:7.2f} | {b} ({b/8:.0f} values)')"
  done
done
echo "ratios: PETSc time / ours (above 1: we are faster); time of the slowest rank, best of $reps"
