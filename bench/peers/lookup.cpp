// Single lookups in one process, on the same queries, rounds interleaved
// (issue 23): what a C or C++ caller gets from libhurray_coo through its
// headers, against the sparse-matrix libraries it could link instead.
//   call          hurray_coo_lookup_f64 per query (HURRAY_COO_INDEX handle)
//   probe         hurray_coo_probe_f64 (hurray_coo_probe.h, inlined into
//                 this loop) over hurray_coo_lookup_view, no index
//   probe_index   the same on the HURRAY_COO_INDEX handle
//   window8_index experiment: probe_index with a branch-free scan of a
//                 fixed 8-entry window (probe_window below)
//   lean_index    experiment: the header's scan with the view's checks and
//                 widths taken once per loop (probe_lean, lean_loop)
//   lean_checked_index  the same with every check made per query, as a
//                 per-call probe must (lean_checked_loop)
//   eigen32/64    Eigen SparseMatrix<double, RowMajor, int32 / int64>::coeff
//                 (int32 only when the flattened matrix fits it)
//   graphblas     GrB_Matrix_extractElement_FP64, one thread
//   line2_index   experiment: probe_index over records holding an entry's
//                 low bits and value side by side (probe_line below)
//   call_values   hurray_coo_lookup_f64 on a HURRAY_COO_INDEX_VALUES handle
//   batch_index / batch_values   hurray_coo_lookup_batch, one thread, on
//                 those handles
//   batch_model   experiment: batch_index's pipeline written here in C++
//                 over the lookup view (batch_model below: the same four
//                 stages eight queries apart, no query checked against the
//                 shape), to tell the pipeline's bound from the library's
//                 instructions
// Rank 3 tensors are the peers' flattened matrices (i, j * n2 + k). Every
// method's sum of answers must agree (checked; a mismatch is an error).
// Prints "method<TAB>dataset<TAB>ms" (median of the rounds) per line.
#include <Eigen/Sparse>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

extern "C" {
#include "common.h"
#include "create.h"
#include <GraphBLAS.h>
}
#include "hurray_coo.h"
#include "hurray_coo_probe.h"

static void *aligned_copy(const void *src, size_t n) {
    void *p = nullptr;
    if (posix_memalign(&p, 64, n ? n : 64) != 0) return nullptr;
    std::memcpy(p, src, n);
    return p;
}

template <typename I>
static Eigen::SparseMatrix<double, Eigen::RowMajor, I> eigen_matrix(const dataset &d, uint64_t cols) {
    std::vector<Eigen::Triplet<double, I>> t;
    t.reserve(d.nnz);
    const uint64_t n2 = d.rank == 3 ? d.shape[2] : 1;
    for (uint64_t k = 0; k < d.nnz; k++) {
        const uint64_t *e = &d.idx[d.rank * k];
        t.emplace_back((I)e[0], (I)(d.rank == 3 ? e[1] * n2 + e[2] : e[1]), d.val[k]);
    }
    Eigen::SparseMatrix<double, Eigen::RowMajor, I> A((I)d.shape[0], (I)cols);
    A.setFromTriplets(t.begin(), t.end());
    A.makeCompressed();
    return A;
}

/* nq probes of rank R through view v; the sum of the answers. */
template <uint32_t R>
static double probe_loop(const hurray_lookup_view *v, const uint64_t *q, uint64_t nq) {
    double s = 0, x;
    bool f;
    for (uint64_t k = 0; k < nq; k++) {
        hurray_coo_probe_f64(v, q + k * R, R, &x, &f);
        s += x;
    }
    return s;
}

/* Experiment (issue 23, "branch-free scan"): hurray_coo_probe_f64 with the
 * bucket scan replaced by a fixed window of W low-bit entries compared
 * without a data-dependent branch (the count of entries below the query's
 * is the position; an equal one is a hit). Buckets of more than W entries,
 * a window that would pass the last entry, and every other case take the
 * header's probe. The same answers (the sums are checked). */
template <uint32_t R, typename L, unsigned W>
static inline double probe_window(const hurray_lookup_view *v, const uint64_t *index) {
    uint64_t key;
    if (hurray_coo_probe_key_(v, index, R, &key)) {
        const uint64_t b = key >> v->shift;
        const uint32_t *o = (const uint32_t *)v->offsets;
        const uint64_t lo = o[b], n = o[b + 1] - lo;
        if (n <= W && lo + W <= v->nnz) {
            const L *l = (const L *)v->low + lo;
            const L want = (L)(key & ((UINT64_C(1) << v->shift) - 1));
            unsigned below = 0, eq = 0;
            for (unsigned j = 0; j < W; j++) {
                const unsigned in = j < n;
                below += in & (l[j] < want);
                eq |= in & (l[j] == want);
            }
            const double x = v->values_f64[lo + (eq ? below : 0)];
            return eq ? x : 0.0;
        }
    }
    double x;
    bool f;
    hurray_coo_probe_f64(v, index, R, &x, &f);
    return x;
}

/* Experiment: the header's branchy scan, with the view's checks and widths
 * taken once per loop instead of once per query (the probe's instruction
 * count against Eigen's, BENCHMARKS.md). */
template <uint32_t R, typename L>
static inline double probe_lean(const hurray_lookup_view *v, const uint64_t *index) {
    uint64_t key;
    if (hurray_coo_probe_key_(v, index, R, &key)) {
        const uint64_t b = key >> v->shift;
        const uint32_t *o = (const uint32_t *)v->offsets;
        const uint64_t lo = o[b], hi = o[b + 1];
        if (hi - lo <= 32) {
            const L *l = (const L *)v->low;
            const L want = (L)(key & ((UINT64_C(1) << v->shift) - 1));
            uint64_t at = 0;
            int found = 0;
            for (uint64_t i = lo; i < hi; i++) {
                if (l[i] >= want) {
                    at = i;
                    found = l[i] == want;
                    break;
                }
            }
            const double x = v->values_f64[at];
            return found ? x : 0.0;
        }
    }
    double x;
    bool f;
    hurray_coo_probe_f64(v, index, R, &x, &f);
    return x;
}

template <uint32_t R>
static double lean_loop(const hurray_lookup_view *v, const uint64_t *q, uint64_t nq) {
    double s = 0;
    if (v->version != HURRAY_LOOKUP_VIEW_VERSION || v->offset_bytes != 4 || v->values_f64 == nullptr ||
        v->rank != R || v->shift >= 64 || (v->low_bytes != 2 && v->low_bytes != 4))
        return probe_loop<R>(v, q, nq);
    if (v->low_bytes == 2)
        for (uint64_t k = 0; k < nq; k++) s += probe_lean<R, uint16_t>(v, q + k * R);
    else
        for (uint64_t k = 0; k < nq; k++) s += probe_lean<R, uint32_t>(v, q + k * R);
    return s;
}

/* The same with every check made per query, as a per-call probe must. */
template <uint32_t R>
static double lean_checked_loop(const hurray_lookup_view *v, const uint64_t *q, uint64_t nq) {
    double s = 0;
    for (uint64_t k = 0; k < nq; k++) {
        const uint64_t *x = q + k * R;
        if (v->version == HURRAY_LOOKUP_VIEW_VERSION && v->offset_bytes == 4 && v->values_f64 != nullptr &&
            v->rank == R && v->shift < 64) {
            if (v->low_bytes == 4) {
                s += probe_lean<R, uint32_t>(v, x);
                continue;
            }
            if (v->low_bytes == 2) {
                s += probe_lean<R, uint16_t>(v, x);
                continue;
            }
        }
        double y;
        bool f;
        hurray_coo_probe_f64(v, x, R, &y, &f);
        s += y;
    }
    return s;
}

template <uint32_t R, unsigned W>
static double window_loop(const hurray_lookup_view *v, const uint64_t *q, uint64_t nq) {
    double s = 0;
    if (v->version != HURRAY_LOOKUP_VIEW_VERSION || v->offset_bytes != 4 || v->values_f64 == nullptr ||
        v->rank != R || (v->low_bytes != 2 && v->low_bytes != 4))
        return probe_loop<R>(v, q, nq);
    if (v->low_bytes == 2)
        for (uint64_t k = 0; k < nq; k++) s += probe_window<R, uint16_t, W>(v, q + k * R);
    else
        for (uint64_t k = 0; k < nq; k++) s += probe_window<R, uint32_t, W>(v, q + k * R);
    return s;
}


/* Experiment (issue 23, "low bits and value in one line"): the index's
 * bucket directory over records that hold an entry's low position bits and
 * its value side by side (packed: 10 or 12 bytes), so that a hit waits for
 * two lines (offsets, record) instead of three (offsets, low bits, value). */
template <typename L>
struct __attribute__((packed)) line_rec {
    L low;
    double value;
};

template <typename L>
static std::vector<line_rec<L>> line_records(const hurray_lookup_view *v) {
    std::vector<line_rec<L>> r(v->nnz + 1);
    for (uint64_t i = 0; i < v->nnz; i++) {
        r[i].low = ((const L *)v->low)[i];
        r[i].value = v->values_f64[i];
    }
    return r;
}

template <uint32_t R, typename L>
static inline double probe_line(const hurray_lookup_view *v, const line_rec<L> *rec, const uint64_t *index) {
    uint64_t key;
    if (hurray_coo_probe_key_(v, index, R, &key)) {
        const uint64_t b = key >> v->shift;
        const uint32_t *o = (const uint32_t *)v->offsets;
        const uint64_t lo = o[b], hi = o[b + 1];
        if (hi - lo <= 32) {
            const L want = (L)(key & ((UINT64_C(1) << v->shift) - 1));
            for (uint64_t i = lo; i < hi; i++) {
                const L k = rec[i].low;
                if (k >= want) return k == want ? rec[i].value : 0.0;
            }
            return 0.0;
        }
    }
    double x;
    bool f;
    hurray_coo_probe_f64(v, index, R, &x, &f);
    return x;
}

template <uint32_t R, typename L>
static double line_loop(const hurray_lookup_view *v, const line_rec<L> *rec, const uint64_t *q, uint64_t nq) {
    double s = 0;
    for (uint64_t k = 0; k < nq; k++) s += probe_line<R, L>(v, rec, q + k * R);
    return s;
}

// The batch's pipeline over the index view, in the caller's code (an
// experiment, not a way to use the library: it skips the checks the call
// makes). Stages DIST queries apart: the bucket's offsets asked for; the
// offsets read and the run's low bits asked for; the run scanned (binary
// search past 32 entries, as the library) and the value asked for; the
// value read. Queries are inside the shape (the bench's are).
template <uint32_t R, typename L>
static double batch_model(const hurray_lookup_view *v, const uint64_t *q, uint64_t nq, double *out) {
    constexpr uint64_t DIST = 8, RING = 4 * DIST;
    const uint32_t *off = static_cast<const uint32_t *>(v->offsets);
    const L *low = static_cast<const L *>(v->low);
    const double *val = v->values_f64;
    const unsigned sh = v->shift;
    const uint64_t mask = (uint64_t{1} << sh) - 1;
    uint64_t key[RING];
    uint32_t lo[RING], hi[RING];
    int64_t at[RING];
    for (uint64_t k = 0; k < nq + 3 * DIST; k++) {
        if (k < nq) {
            const uint64_t *c = q + k * R;
            uint64_t x = 0;
            for (uint32_t d = 0; d < R; d++) x += c[d] * v->strides[d];
            key[k % RING] = x;
            __builtin_prefetch(off + (x >> sh));
        }
        if (k >= DIST && k - DIST < nq) {
            const uint64_t j = (k - DIST) % RING, b = key[j] >> sh;
            lo[j] = off[b];
            hi[j] = off[b + 1];
            __builtin_prefetch(low + lo[j]);
        }
        if (k >= 2 * DIST && k - 2 * DIST < nq) {
            const uint64_t j = (k - 2 * DIST) % RING;
            const L w = static_cast<L>(key[j] & mask);
            int64_t a = -1;
            uint32_t l0 = lo[j], h0 = hi[j];
            if (h0 - l0 <= 32) {
                for (uint32_t i = l0; i < h0; i++)
                    if (low[i] == w) {
                        a = i;
                        break;
                    }
            } else {
                while (l0 < h0) {
                    const uint32_t mid = l0 + (h0 - l0) / 2;
                    if (low[mid] < w) l0 = mid + 1;
                    else h0 = mid;
                }
                if (l0 < hi[j] && low[l0] == w) a = l0;
            }
            at[j] = a;
            if (a >= 0) __builtin_prefetch(val + a);
        }
        if (k >= 3 * DIST && k - 3 * DIST < nq) {
            const int64_t a = at[(k - 3 * DIST) % RING];
            out[k - 3 * DIST] = a >= 0 ? val[a] : 0.0;
        }
    }
    double s = 0;
    for (uint64_t k = 0; k < nq; k++) s += out[k];
    return s;
}

int main(int argc, char **argv) {
    // HURRAY_LOOKUP_ROUNDS=1 for a run under valgrind's cachegrind (the
    // simulated cache misses and mispredicted branches per method).
    const char *rounds_env = std::getenv("HURRAY_LOOKUP_ROUNDS");
    const int rounds = rounds_env ? std::max(1, std::atoi(rounds_env)) : 7;
    GrB_init(GrB_NONBLOCKING);
    GxB_Global_Option_set((GxB_Option_Field)GxB_NTHREADS, 1);
    for (int a = 2; a < argc; a++) {
        dataset d;
        if (load(argv[1], argv[a], &d) != 0 || !d.q || d.rank < 2 || d.rank > 3) continue;
        const uint32_t rank = (uint32_t)d.rank;
        const uint64_t n2 = rank == 3 ? d.shape[2] : 1, cols = d.shape[1] * n2;
        const size_t ib = d.nnz * rank * 8, vb = d.nnz * 8;
        uint64_t *idx = (uint64_t *)aligned_copy(d.idx, ib);
        double *val = (double *)aligned_copy(d.val, vb);
        hurray_coo *plain = nullptr, *indexed = nullptr;
        bench_create(HURRAY_TYPE_FLOAT64, rank, d.shape, d.nnz, d.sorted, val, vb, idx, ib, 0, 1, &plain);
        bench_create(HURRAY_TYPE_FLOAT64, rank, d.shape, d.nnz, d.sorted, val, vb, idx, ib,
                     HURRAY_COO_INDEX, 1, &indexed);
        hurray_coo *valued = nullptr;
        bench_create(HURRAY_TYPE_FLOAT64, rank, d.shape, d.nnz, d.sorted, val, vb, idx, ib,
                     HURRAY_COO_INDEX_VALUES, 1, &valued);
        hurray_lookup_view vp, vi;
        std::memset(&vp, 0, sizeof vp);
        std::memset(&vi, 0, sizeof vi);
        vp.size = vi.size = sizeof vp;
        if (!plain || !indexed || !valued || hurray_coo_lookup_view(plain, &vp) != HURRAY_OK ||
            hurray_coo_lookup_view(indexed, &vi) != HURRAY_OK) {
            std::fprintf(stderr, "%s: %s\n", argv[a], hurray_last_error_message());
            return 1;
        }
        auto A64 = eigen_matrix<std::int64_t>(d, cols);
        const bool fits32 = d.shape[0] < (1u << 31) && cols < (1u << 31);
        Eigen::SparseMatrix<double, Eigen::RowMajor, int> A32;
        if (fits32) A32 = eigen_matrix<int>(d, cols);
        GrB_Matrix G;
        {
            std::vector<GrB_Index> I(d.nnz), J(d.nnz);
            for (uint64_t k = 0; k < d.nnz; k++) {
                const uint64_t *e = &d.idx[rank * k];
                I[k] = e[0];
                J[k] = rank == 3 ? e[1] * n2 + e[2] : e[1];
            }
            GrB_Matrix_new(&G, GrB_FP64, d.shape[0], cols);
            GrB_Matrix_build_FP64(G, I.data(), J.data(), d.val, d.nnz, GrB_PLUS_FP64);
            GrB_Matrix_wait(G, GrB_MATERIALIZE);
        }
        const uint64_t *q = d.q;
        const uint64_t nq = d.nq;
        auto colq = [&](const uint64_t *c) { return rank == 3 ? c[1] * n2 + c[2] : c[1]; };
        struct method {
            std::string name;
            std::function<double()> run;
            std::vector<double> ms;
            double sum;
        };
        std::vector<method> m;
        // One hurray_coo_lookup_f64 per query on handle h.
        auto call = [&](const hurray_coo *h) {
            double s = 0, x;
            bool f;
            for (uint64_t k = 0; k < nq; k++) {
                hurray_coo_lookup_f64(h, q + k * rank, rank, &x, &f);
                s += x;
            }
            return s;
        };
        m.push_back({"call", [&] { return call(indexed); }, {}, 0});
        // The rank as a caller writes it: a constant (2 for a matrix).
        auto probe = [&](const hurray_lookup_view *v) {
            return rank == 2 ? probe_loop<2>(v, q, nq) : probe_loop<3>(v, q, nq);
        };
        m.push_back({"probe", [&] { return probe(&vp); }, {}, 0});
        m.push_back({"probe_index", [&] { return probe(&vi); }, {}, 0});
        m.push_back({"lean_index", [&] { return rank == 2 ? lean_loop<2>(&vi, q, nq) : lean_loop<3>(&vi, q, nq); },
                     {}, 0});
        m.push_back({"lean_checked_index",
                     [&] { return rank == 2 ? lean_checked_loop<2>(&vi, q, nq) : lean_checked_loop<3>(&vi, q, nq); },
                     {}, 0});
        std::vector<line_rec<uint16_t>> rec16;
        std::vector<line_rec<uint32_t>> rec32;
        const bool line_ok = vi.version == HURRAY_LOOKUP_VIEW_VERSION && vi.offset_bytes == 4 &&
                             vi.values_f64 != nullptr && vi.shift < 64 &&
                             (vi.low_bytes == 2 || vi.low_bytes == 4);
        if (line_ok && vi.low_bytes == 2) rec16 = line_records<uint16_t>(&vi);
        if (line_ok && vi.low_bytes == 4) rec32 = line_records<uint32_t>(&vi);
        if (line_ok)
            m.push_back({"line2_index", [&] {
                             if (vi.low_bytes == 2)
                                 return rank == 2 ? line_loop<2, uint16_t>(&vi, rec16.data(), q, nq)
                                                  : line_loop<3, uint16_t>(&vi, rec16.data(), q, nq);
                             return rank == 2 ? line_loop<2, uint32_t>(&vi, rec32.data(), q, nq)
                                              : line_loop<3, uint32_t>(&vi, rec32.data(), q, nq);
                         }, {}, 0});
        m.push_back({"call_values", [&] { return call(valued); }, {}, 0});
        // The batch call, one thread (its answers summed in query order).
        std::vector<double> bout(nq);
        auto batch = [&](const hurray_coo *h) {
            if (hurray_coo_lookup_batch(h, q, nq, rank, bout.data(), nullptr, 1) != HURRAY_OK) {
                std::fprintf(stderr, "batch: %s\n", hurray_last_error_message());
                std::exit(1);
            }
            double s = 0;
            for (uint64_t k = 0; k < nq; k++) s += bout[k];
            return s;
        };
        m.push_back({"batch_index", [&] { return batch(indexed); }, {}, 0});
        m.push_back({"batch_values", [&] { return batch(valued); }, {}, 0});
        if (line_ok)
            m.push_back({"batch_model", [&] {
                             if (vi.low_bytes == 2)
                                 return rank == 2 ? batch_model<2, uint16_t>(&vi, q, nq, bout.data())
                                                  : batch_model<3, uint16_t>(&vi, q, nq, bout.data());
                             return rank == 2 ? batch_model<2, uint32_t>(&vi, q, nq, bout.data())
                                              : batch_model<3, uint32_t>(&vi, q, nq, bout.data());
                         }, {}, 0});
        m.push_back({"window8_index", [&] {
                         return rank == 2 ? window_loop<2, 8>(&vi, q, nq) : window_loop<3, 8>(&vi, q, nq);
                     }, {}, 0});
        if (fits32)
            m.push_back({"eigen32", [&] {
                             double s = 0;
                             for (uint64_t k = 0; k < nq; k++)
                                 s += A32.coeff((int)q[k * rank], (int)colq(q + k * rank));
                             return s;
                         }, {}, 0});
        m.push_back({"eigen64", [&] {
                         double s = 0;
                         for (uint64_t k = 0; k < nq; k++)
                             s += A64.coeff((std::int64_t)q[k * rank], (std::int64_t)colq(q + k * rank));
                         return s;
                     }, {}, 0});
        m.push_back({"graphblas", [&] {
                         double s = 0, x;
                         for (uint64_t k = 0; k < nq; k++)
                             if (GrB_Matrix_extractElement_FP64(&x, G, q[k * rank], colq(q + k * rank)) ==
                                 GrB_SUCCESS)
                                 s += x;
                         return s;
                     }, {}, 0});
        for (int r = 0; r < rounds; r++) {
            // A different method first in each round: none always gets the
            // cache another one warmed.
            for (size_t j = 0; j < m.size(); j++) {
                method &x = m[(j + (size_t)r) % m.size()];
                double s = now_ms();
                x.sum = x.run();
                x.ms.push_back(now_ms() - s);
            }
        }
        for (auto &x : m) {
            std::sort(x.ms.begin(), x.ms.end());
            if (x.sum != m[0].sum) {
                std::fprintf(stderr, "%s on %s: sum %.17g, the call's %.17g\n", x.name.c_str(), argv[a],
                             x.sum, m[0].sum);
                return 1;
            }
            std::printf("%s\t%s\t%.3f\n", x.name.c_str(), argv[a], x.ms[x.ms.size() / 2]);
        }
        std::fprintf(stderr,
                     "%s: index view shift %u, offsets %u B, low bits %u B, %.2f B/entry; "
                     "Eigen's int32 CSR (row offsets, columns, values) %.2f B/entry\n",
                     argv[a], vi.shift, vi.offset_bytes, vi.low_bytes,
                     (double)hurray_coo_index_bytes(indexed) / (double)d.nnz,
                     (4.0 * (double)(d.shape[0] + 1) + 12.0 * (double)d.nnz) / (double)d.nnz);
        GrB_Matrix_free(&G);
        hurray_coo_free(plain);
        hurray_coo_free(indexed);
        hurray_coo_free(valued);
        std::free(idx);
        std::free(val);
    }
    GrB_finalize();
    return 0;
}
