#!/usr/bin/env bash
# What one and two threads get from this machine's memory, with no library
# code (bench/peers/machine.c): the bound a "2 threads >= 1.7x one" target
# meets on a memory-bound operation. Run it beside the other benchmarks.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v gcc >/dev/null || { apt-get update -qq && apt-get install -y -qq gcc; }
out="${CARGO_TARGET_DIR:-$PWD/target}/machine"
mkdir -p "$out"
gcc -O3 -march=native -std=c11 -Wall -Wextra -Werror -pthread bench/peers/machine.c -o "$out/machine"
"$out/machine"
