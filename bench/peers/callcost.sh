#!/usr/bin/env bash
# Instructions per call beyond the work (issue 11, target 5): callgrind over
# bench/peers/callcost.c, which calls hurray_coo_nnz and hurray_coo_lookup_f64
# (on a 1-entry tensor: no index, HURRAY_COO_INDEX, HURRAY_COO_INDEX_VALUES)
# and creates (and frees) that tensor 100,000 times each. Prints instructions per call, inclusive of the
# library's functions (the lookup's own work on a 1-entry tensor included).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind; }
cargo build --release -q -p hurray-coo
lib="${CARGO_TARGET_DIR:-$PWD/target}/release"
out="${CARGO_TARGET_DIR:-$PWD/target}/callcost"
mkdir -p "$out"
# The loader asks for the soname (libhurray_coo.so.<ABI>), which cargo does
# not create beside the library; make installs it, and so does this line.
abi=$(sed -n 's/^#define HURRAY_COO_ABI_VERSION \([0-9]*\).*/\1/p' include/hurray_coo.h)
ln -sf libhurray_coo.so "$lib/libhurray_coo.so.$abi"
gcc -O2 -fno-ipa-icf -std=c11 -Iinclude bench/peers/callcost.c -L"$lib" -lhurray_coo -Wl,-rpath,"$lib" -o "$out/callcost"
valgrind -q --tool=callgrind --callgrind-out-file="$out/callgrind.out" "$out/callcost"
# Inclusive instructions of each loop function, per iteration (the loop's
# own few instructions included).
callgrind_annotate --inclusive=yes --threshold=100 "$out/callgrind.out" 2>/dev/null | python3 -c '
import re, sys
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) .*:(loop_[a-z_]+)[. ]", line)
    if m:
        n = int(m.group(1).replace(",", ""))
        print(f"{m.group(2)}: {n / 100000:.1f} instructions per iteration")
'
# The call's own share (NULL checks, panic barrier, message bookkeeping,
# writing the outputs): instructions on lines of src/ffi/, per lookup call,
# except src/ffi/probe.rs, which is the lookup's work on its shortest path.
callgrind_annotate "$out/callgrind.out" 2>/dev/null | python3 -c '
import re, sys
ffi = 0
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) .*src/ffi/(?!probe\.rs)\w+\.rs:(hurray_coo_lookup_f64|hurray_coo::ffi::lookup::lookup_f64_(general|checked))\b", line)
    if m:
        ffi += int(m.group(1).replace(",", ""))
print(f"hurray_coo_lookup_f64, lines of src/ffi/: {ffi / 300000:.1f} instructions per call (3 x 100,000 calls)")
'
