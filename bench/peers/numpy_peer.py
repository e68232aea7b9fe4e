"""numpy, vectorised, on the exported datasets (any rank): the check a
Python user writes for a COO tensor, the strongest peer for unsorted
validation (issue 11).

validate: bounds (every coordinate below its extent), then linear keys
          (row-major, in uint64 when the element count fits, else a
          lexicographic sort of the coordinate rows), np.sort, and an
          adjacent compare for duplicates; for a tensor flagged sorted,
          strictly increasing keys instead of the sort.
"""
import os
import statistics
import sys
import time

import numpy as np

d = sys.argv[1]
for ident in sys.argv[2:]:
    meta = open(os.path.join(d, ident + ".meta")).read().split()
    rank, nnz, flagged = int(meta[0]), int(meta[1]), meta[2] == "1"
    shape = np.array([int(x) for x in meta[3:3 + rank]], dtype=np.uint64)
    idx = np.fromfile(os.path.join(d, ident + ".idx"), dtype="<u8").reshape(nnz, rank)
    fits = float(np.prod(shape.astype(np.float64))) < 2.0**64
    strides = np.ones(rank, dtype=np.uint64)
    for k in range(rank - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]

    def check():
        if not (idx < shape).all():
            return False
        if fits:
            keys = idx @ strides if rank > 1 else idx[:, 0]
            if flagged:
                return bool((keys[1:] > keys[:-1]).all())
            keys = np.sort(keys)
            return not bool((keys[1:] == keys[:-1]).any())
        order = np.lexsort(idx.T[::-1])
        s = idx[order]
        return not bool((s[1:] == s[:-1]).all(axis=1).any())

    times = []
    for _ in range(3):
        t = time.perf_counter()
        ok = check()
        times.append((time.perf_counter() - t) * 1e3)
    if not ok:
        print(f"numpy check failed on {ident}", file=sys.stderr)
    print(f"numpy\tvalidate\t{ident}\t{statistics.median(times):.4f}")
    sys.stdout.flush()
