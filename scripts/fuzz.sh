#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer (cargo fuzz) on the stable toolchain:
# -s none (instrumenting Rust with ASan needs nightly; coverage works on
# stable). Each target runs for FUZZ_SECONDS (default 60) from the committed
# seeds plus the local corpus (fuzz/corpus, not committed), with a fixed seed.
#   scripts/fuzz.sh            # all targets, 60 s each
#   FUZZ_SECONDS=600 scripts/fuzz.sh descriptor
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
secs="${FUZZ_SECONDS:-60}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(create descriptor lookup assemble text file)
cd fuzz
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  echo "== fuzz $t for ${secs}s"
  # Hurray files align buffers to 4096 bytes: a file with a tensor is
  # longer than libFuzzer's default 4096-byte inputs.
  extra=()
  [ "$t" = file ] && extra=(-max_len=20000)
  cargo fuzz run "$t" -s none -O "corpus/$t" "seeds/$t" -- \
    -seed=1 -max_total_time="$secs" -print_final_stats=1 -timeout=10 "${extra[@]}"
done
