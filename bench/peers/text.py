"""Matrix Market read/write: libhurray_coo (C driver bench/peers/text.c,
through the header) against scipy.io.mmread/mmwrite (fast_matrix_market in
C++, using every core) on the same generated files, in one run.

  python3 bench/peers/text.py <driver> [--large] [--reps N] [--dir D]

Files: a 2-D Poisson 5-point matrix, a 3-D 27-point FEM stencil and a
power-law graph, about 1.2M entries each (--large: about 20M), random
float64 values written by scipy (shortest round-trip text)."""
import argparse
import os
import subprocess
import time

import numpy as np
import scipy.io as sio
import scipy.sparse as sp


def poisson(n_target):
    k = int(np.sqrt(n_target / 5))
    t = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(k, k))
    i = sp.identity(k)
    return (sp.kron(i, t) + sp.kron(t, i)).tocoo()


def fem(n_target):
    m = int(round((n_target / 27) ** (1 / 3)))
    t = sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(m, m))
    return sp.kron(sp.kron(t, t), t).tocoo()


def laplacian3d(n_target):
    """The 7-point 3-D Laplacian, stored symmetric (the lower triangle)."""
    m = int(round((n_target / 7) ** (1 / 3)))
    t = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(m, m))
    i = sp.identity(m)
    return (sp.kron(sp.kron(i, i), t) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(t, i), i)).tocoo()


# One fresh process: mmread(path).tocsr() with fast_matrix_market on
# `threads`, timed inside (imports excluded); prints seconds and peak RSS
# (VmHWM, the process's own: ru_maxrss would keep this script's peak).
SCIPY_CSR = """
import re, sys, time
import scipy.io, scipy.io._fast_matrix_market as fmm
fmm.PARALLELISM = int(sys.argv[2])
t0 = time.perf_counter()
a = scipy.io.mmread(sys.argv[1]).tocsr()
t = time.perf_counter() - t0
peak = re.search(r"VmHWM:\\s*(\\d+) kB", open("/proc/self/status").read()).group(1)
print(t, peak, a.nnz)
"""


def fresh(cmd, reps):
    """Best time of `reps` fresh processes, their largest peak RSS (MB), the entries."""
    best, rss, nnz = 1e30, 0, 0
    for _ in range(reps):
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
        best, rss, nnz = min(best, float(out[0])), max(rss, int(out[1]) / 1024), int(out[2])
    return best, rss, nnz


def powerlaw(n_target, rng):
    n = n_target // 8
    src = rng.integers(0, n, n_target)
    dst = np.minimum((n * rng.pareto(1.2, n_target) / 50).astype(np.int64), n - 1)
    a = sp.coo_array((np.ones(n_target), (src, dst)), shape=(n, n)).tocsr().tocoo()
    return a


def best(f, reps):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("driver", nargs="?")
    ap.add_argument("--only-generate", action="store_true",
                    help="write the files (if missing) and print their paths")
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--csr-only", action="store_true",
                    help="only the file-to-CSR table (fresh processes, peak memory)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/hurray-text-bench")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    n = 20_000_000 if a.large else 1_200_000
    rng = np.random.default_rng(3)
    files = []
    for name, m in [("poisson", poisson(n)), ("fem", fem(n)), ("powerlaw", powerlaw(n, rng))]:
        m.data = rng.standard_normal(m.nnz)
        path = os.path.join(a.dir, f"{name}-{m.nnz}.mtx")
        if not os.path.exists(path):
            sio.mmwrite(path, m)
        files.append(path)
    lap = laplacian3d(n // 2)
    sym = os.path.join(a.dir, f"laplacian3d-symmetric-{lap.nnz}.mtx")
    if not os.path.exists(sym):
        sio.mmwrite(sym, lap, symmetry="symmetric")
    if a.only_generate:
        print(" ".join(files))
        return
    if a.csr_only:
        csr_table(a, [files[0], sym])
        return
    ours = {}
    out = subprocess.run([a.driver, str(a.reps)] + files, check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        f, op, th, sec, _ = line.split()
        ours[(f, op, int(th))] = float(sec)
    print(f"{'file':28} {'MB':>7} {'scipy read':>10} {'ours 1T':>8} {'ours 2T':>8} "
          f"{'1T/scipy':>8} {'2T/scipy':>8} {'2T/1T':>6} {'GB/s 1T':>7} | "
          f"{'scipy write':>11} {'ours 1T':>7} {'ours 2T':>7} {'1T/sc':>6} {'2T/sc':>6}")
    for f in files:
        size = os.path.getsize(f)
        rd = best(lambda: sio.mmread(f), a.reps)
        tmp = f + ".scipy-out.mtx"
        m = sio.mmread(f)
        wr = best(lambda: sio.mmwrite(tmp, m), a.reps)
        os.remove(tmp)
        r1, r2 = ours[(f, "read", 1)], ours[(f, "read", 2)]
        w1, w2 = ours[(f, "write", 1)], ours[(f, "write", 2)]
        print(f"{os.path.basename(f):28} {size / 1e6:7.1f} {rd:10.3f} {r1:8.3f} {r2:8.3f} "
              f"{rd / r1:8.2f} {rd / r2:8.2f} {r1 / r2:6.2f} {size / r1 / 1e9:7.2f} | "
              f"{wr:11.3f} {w1:7.3f} {w2:7.3f} {wr / w1:6.2f} {wr / w2:6.2f}")
    print("ratios > 1: libhurray_coo faster. scipy uses every core; 'ours 1T' one thread.")
    print()
    csr_table(a, [files[0], sym])


def csr_table(a, files):
    print("file to int32 CSR, a fresh process per run (best time of the runs, largest peak RSS):")
    print("ours, handle: hurray_coo_read_mtx_file + hurray_coo_export_compressed; ours, direct: "
          "hurray_read_mtx_compressed_size + hurray_read_mtx_compressed; scipy: "
          "mmread(f).tocsr() with scipy.io._fast_matrix_market.PARALLELISM = threads")
    print(f"{'file':34} {'threads':>7} {'scipy s':>8} {'handle s':>8} {'direct s':>8} "
          f"{'sc/hndl':>7} {'sc/dir':>6} {'scipy MB':>9} {'hndl MB':>8} {'dir MB':>7}")
    for f in files:
        for th in (1, 2):
            sc, sc_mb, sc_n = fresh(["python3", "-c", SCIPY_CSR, f, str(th)], a.reps)
            us, us_mb, us_n = fresh([a.driver, "csr", str(th), f], a.reps)
            di, di_mb, di_n = fresh([a.driver, "direct", str(th), f], a.reps)
            assert sc_n == us_n == di_n, (f, sc_n, us_n, di_n)
            print(f"{os.path.basename(f):34} {th:7} {sc:8.3f} {us:8.3f} {di:8.3f} "
                  f"{sc / us:7.2f} {sc / di:6.2f} {sc_mb:9.0f} {us_mb:8.0f} {di_mb:7.0f}")
    print("ratio > 1: libhurray_coo faster.")


if __name__ == "__main__":
    main()
