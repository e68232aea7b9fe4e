#!/usr/bin/env python3
"""Sorted, duplicate-free tensors of rank 4, 5 and 6 (1M entries each,
uniform random coordinates) in the exported-dataset layout that
capi_peer.c reads (.meta, .idx, .val), for the sorted check at ranks the
solver sets do not reach:
    python3 bench/peers/high_rank_data.py DIR
    HURRAY_VALIDATE_REPS=41 target/bench-lookup/capi_peer DIR rank4_sorted rank5_sorted rank6_sorted
Pure Python (no numpy), seeded: the same files on every machine."""
import array
import os
import random
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "target/bench-lookup/high-rank"
os.makedirs(out, exist_ok=True)
rng = random.Random(1)
for rank, n, side in [(4, 1_000_000, 100), (5, 1_000_000, 40), (6, 1_000_000, 20)]:
    keys = sorted({rng.randrange(side**rank) for _ in range(int(n * 1.03))})[:n]
    idx = array.array("Q")
    for k in keys:
        c = [0] * rank
        for d in range(rank - 1, -1, -1):
            c[d] = k % side
            k //= side
        idx.extend(c)
    name = os.path.join(out, f"rank{rank}_sorted")
    with open(name + ".idx", "wb") as f:
        idx.tofile(f)
    with open(name + ".val", "wb") as f:
        array.array("d", [1.0] * len(keys)).tofile(f)
    with open(name + ".meta", "w") as f:
        f.write(f"{rank} {len(keys)} 1 " + " ".join([str(side)] * rank) + "\n")
    print(name, len(keys))
