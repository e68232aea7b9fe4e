"""The numpy and scipy peers of bench/peers/assembly.cpp, on the same FEM
triplets (same mesh, same order, same values): a vectorised numpy assembly
(argsort of the linear keys + np.add.reduceat), scipy's
coo_array(...).tocsr() (which sums duplicates), and values-only re-assembly
with numpy (np.add.at over a precomputed map, and np.bincount)."""
import sys
import time

import numpy as np
import scipy.sparse as sp


def fem(m):
    k = np.array([1, -0.5, -0.5, -0.5, 0.5, 0, -0.5, 0, 0.5]) + 1e-3 * np.where(
        np.arange(9) % 4 == 0, 2.0, 1.0)
    a, b, half = np.meshgrid(np.arange(m), np.arange(m), np.arange(2), indexing="ij")
    n0 = (a * (m + 1) + b).ravel()
    half = half.ravel()
    tri = np.stack([np.where(half == 1, n0 + m + 2, n0), np.where(half == 1, n0 + m + 1, n0 + 1),
                    np.where(half == 1, n0 + 1, n0 + m + 1)], axis=1)
    i = np.repeat(tri, 3, axis=1).ravel().astype(np.int32)
    j = np.tile(tri, (1, 3)).ravel().astype(np.int32)
    v = np.tile(k, len(n0))
    return i, j, v, (m + 1) * (m + 1)


def median(reps, f):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return sorted(t)[len(t) // 2]


def numpy_assemble(i, j, v, n):
    key = i.astype(np.int64) * n + j
    order = np.argsort(key, kind="stable")
    k = key[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    return k[starts], np.add.reduceat(v[order], starts)


def main():
    m = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    i, j, v, n = fem(m)
    print(f"\nnumpy {np.__version__} and scipy {__import__('scipy').__version__}, "
          f"fem (element order): {len(v)} triplets, order {n}\n")
    print("| peer | ms |\n|---|---:|")
    rng = np.random.default_rng(42)
    perm = rng.permutation(len(v))
    for name, (a, b, c) in [("fem", (i, j, v)), ("permuted", (i[perm], j[perm], v[perm]))]:
        t_np = median(reps, lambda: numpy_assemble(a, b, c, n))
        t_sp = median(reps, lambda: sp.coo_array((c, (a, b)), shape=(n, n)).tocsr())
        print(f"| {name}: numpy argsort + add.reduceat | {t_np * 1e3:.2f} |")
        print(f"| {name}: scipy coo_array(...).tocsr() | {t_sp * 1e3:.2f} |")
    keys, _ = numpy_assemble(i, j, v, n)
    mp = np.searchsorted(keys, i.astype(np.int64) * n + j)
    v2 = v * 1.5
    out = np.zeros(len(keys))

    def add_at():
        out[:] = 0
        np.add.at(out, mp, v2)

    t_at = median(reps, add_at)
    t_bc = median(reps, lambda: np.bincount(mp, weights=v2, minlength=len(keys)))
    print(f"| values only: numpy np.add.at over a map | {t_at * 1e3:.2f} |")
    print(f"| values only: numpy np.bincount over a map | {t_bc * 1e3:.2f} |")


if __name__ == "__main__":
    main()
