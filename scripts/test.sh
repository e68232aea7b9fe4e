#!/usr/bin/env bash
# Runs every test of the project, installing what a fresh machine lacks:
#  1. cargo test: Rust unit, rule, oracle, descriptor/interop, assembly,
#     conversion, ABI, header, bindings and fuzz-replay tests; the C/C++
#     suites (cc crate); the link, allocation-failure, ctypes, README-block,
#     GraphBLAS/Eigen/PETSc client and install-prefix consumer tests (C with
#     pkg-config, C++ with CMake, Fortran); the MPI layer under mpirun with
#     1, 2 and 4 ranks (Open MPI, and MPICH beside it);
#  2. the C suites again under AddressSanitizer + UndefinedBehaviorSanitizer;
#  3. the C suites under valgrind memcheck (no leaks, no errors);
#  4. the thread stress test under valgrind helgrind (no data races).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)" >&2; exit 1; }
missing=()
command -v cc >/dev/null || missing+=(gcc)
command -v c++ >/dev/null || missing+=(g++)
command -v make >/dev/null || missing+=(make)
command -v valgrind >/dev/null || missing+=(valgrind)
command -v gfortran >/dev/null || missing+=(gfortran)
command -v cmake >/dev/null || missing+=(cmake)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v python3 >/dev/null || missing+=(python3)
command -v readelf >/dev/null || missing+=(binutils)
[ -e /usr/include/GraphBLAS.h ] || missing+=(libgraphblas-dev)
[ -d /usr/include/eigen3 ] || missing+=(libeigen3-dev)
pkg-config --exists petsc 2>/dev/null || missing+=(petsc-dev)
command -v mpicc >/dev/null && command -v mpirun >/dev/null || missing+=(libopenmpi-dev openmpi-bin)
command -v mpicc.mpich >/dev/null || missing+=(libmpich-dev mpich)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
python3 -c "import numpy, scipy" 2>/dev/null || python3 -m pip install -q numpy scipy
target="${CARGO_TARGET_DIR:-$PWD/target}"

echo "== 1/4 cargo test --workspace"
cargo test --workspace

echo "== 2/4 C tests under ASan + UBSan"
HURRAY_CTEST_SANITIZE=address,undefined HURRAY_SKIP_RLIMIT_TESTS=1 \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  cargo test -p hurray-coo-c-tests --test c_api

echo "== 3/4 C tests under valgrind memcheck"
HURRAY_SKIP_RLIMIT_TESTS=1 \
CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect" \
  cargo test -p hurray-coo-c-tests --test c_api

echo "== 4/4 thread stress under valgrind helgrind"
cargo build --quiet -p hurray-coo
mkdir -p "$target/stress"
cc -std=c99 -O1 -g -pthread -Iinclude -Ic_tests/c c_tests/c/stress_main.c \
  c_tests/c/test_threads.c c_tests/c/alloc64.c -L"$target/debug" -lhurray_coo \
  -Wl,-rpath,"$target/debug" -o "$target/stress/stress"
valgrind -q --tool=helgrind --error-exitcode=99 "$target/stress/stress"
echo "1 passed, 0 failed: helgrind thread stress"
