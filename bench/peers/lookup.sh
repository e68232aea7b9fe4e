#!/usr/bin/env bash
# Single lookups from C++ through the headers (the ABI call, and the inline
# probe of include/hurray_coo_probe.h with and without HURRAY_COO_INDEX)
# against Eigen coeff (int32 and int64 indices) and GraphBLAS
# extractElement, in one process, rounds interleaved (bench/peers/lookup.cpp).
# Installs Eigen and GraphBLAS from Debian. Prints median ms per 1M lookups
# and each peer's time over ours (above 1: ours is faster); window8_index is
# an experiment (a branch-free scan), its time over the probe's.
#   bench/peers/lookup.sh            # the ~1M-entry sorted tensors
#   bench/peers/lookup.sh --full     # and the ~30M ones
set -euo pipefail
cd "$(dirname "$0")/../.."
need=()
[ -e /usr/include/GraphBLAS.h ] || [ -e /usr/include/suitesparse/GraphBLAS.h ] || need+=(libgraphblas-dev)
[ -d /usr/include/eigen3 ] || need+=(libeigen3-dev)
command -v g++ >/dev/null || need+=(g++)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need[@]}"
fi
out="${CARGO_TARGET_DIR:-$PWD/target}/bench-lookup"
mkdir -p "$out/data"
quick="--quick"; [ "${1:-}" = "--full" ] && quick=""
if ! ls "$out/data"/*.q >/dev/null 2>&1 || [ -z "$quick" ]; then
  echo "== data (cargo bench --export)"
  cargo bench -q --bench coo -- $quick --export "$out/data" > "$out/ours.md"
fi
cargo build --release -q -p hurray-coo
lib="${CARGO_TARGET_DIR:-$PWD/target}/release"
ln -sf libhurray_coo.so "$lib/libhurray_coo.so.$(sed -n 's/^#define HURRAY_COO_ABI_VERSION \([0-9]*\).*/\1/p' include/hurray_coo.h)"
g++ -O3 -march=native -DNDEBUG -std=c++17 -I/usr/include/eigen3 -Iinclude -Ibench/peers \
  bench/peers/lookup.cpp -L"$lib" -lhurray_coo -lgraphblas -Wl,-rpath,"$lib" -o "$out/lookup"
ids=$(cd "$out/data" && ls *.q | sed 's/\.q$//' | sort)
"$out/lookup" "$out/data" $ids | tee "$out/lookup.tsv"
python3 - "$out/lookup.tsv" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    m, d, ms = line.split("\t")
    rows.setdefault(d, {})[m] = float(ms)
nan = float("nan")
print("\n| tensor | call ms | call_values | probe_index | eigen32 | eigen64 | graphblas | best Eigen / call | best Eigen / call_values | best Eigen / probe_index | graphblas / call | graphblas / probe_index |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for d, r in rows.items():
    c, cv, p = r["call"], r["call_values"], r["probe_index"]
    eig = min(v for k, v in r.items() if k.startswith("eigen"))
    print(f"| {d} | {c:.1f} | {cv:.1f} | {p:.1f} | {r.get('eigen32', nan):.1f} | {r['eigen64']:.1f} "
          f"| {r['graphblas']:.1f} | {eig / c:.2f} | {eig / cv:.2f} | {eig / p:.2f} | {r['graphblas'] / c:.2f} "
          f"| {r['graphblas'] / p:.2f} |")
print("\n| tensor | batch_index ms | batch_values | batch_model | best Eigen / batch_index | best Eigen / batch_values | best Eigen / batch_model | line2_index / probe_index | window8_index / probe_index |")
print("|---|---|---|---|---|---|---|---|---|")
for d, r in rows.items():
    p = r["probe_index"]
    eig = min(v for k, v in r.items() if k.startswith("eigen"))
    bm = r.get("batch_model", nan)
    print(f"| {d} | {r['batch_index']:.1f} | {r['batch_values']:.1f} | {bm:.1f} | {eig / r['batch_index']:.2f} "
          f"| {eig / r['batch_values']:.2f} | {eig / bm:.2f} | {r.get('line2_index', nan) / p:.2f} | {r['window8_index'] / p:.2f} |")
PY
