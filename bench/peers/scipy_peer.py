"""scipy.sparse on the exported datasets (rank 2), single-threaded.

validate: coo_array(...) then sum_duplicates() (sorts and merges duplicates:
          scipy's canonicalisation, the step that finds duplicates).
batch:    csr[rows, cols] fancy indexing of the 1M queries (vectorised in C;
          a Python loop of single lookups would be far slower).
"""
import os
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

d = sys.argv[1]
for ident in sys.argv[2:]:
    meta = open(os.path.join(d, ident + ".meta")).read().split()
    rank, nnz = int(meta[0]), int(meta[1])
    if rank != 2:
        continue
    shape = tuple(int(x) for x in meta[3:3 + rank])
    idx = np.fromfile(os.path.join(d, ident + ".idx"), dtype="<u8").reshape(nnz, rank)
    val = np.fromfile(os.path.join(d, ident + ".val"), dtype="<f8")
    rows, cols = idx[:, 0].astype(np.int64), idx[:, 1].astype(np.int64)
    times = []
    for _ in range(3):
        t = time.perf_counter()
        a = sp.coo_array((val, (rows, cols)), shape=shape)
        a.sum_duplicates()
        times.append((time.perf_counter() - t) * 1e3)
    print(f"scipy\tvalidate\t{ident}\t{statistics.median(times):.4f}")
    qpath = os.path.join(d, ident + ".q")
    if os.path.exists(qpath):
        q = np.fromfile(qpath, dtype="<u8").reshape(-1, rank).astype(np.int64)
        csr = sp.coo_array((val, (rows, cols)), shape=shape).tocsr()
        times = []
        for _ in range(3):
            t = time.perf_counter()
            csr[q[:, 0], q[:, 1]]
            times.append((time.perf_counter() - t) * 1e3)
        print(f"scipy\tbatch\t{ident}\t{statistics.median(times):.4f}")
    sys.stdout.flush()
