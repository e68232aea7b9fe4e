/*
 * libhurray_coo: the inline lookup probe. Written by hand (it holds code,
 * which cbindgen does not generate); it reads only the documented view of
 * hurray_coo.h (hurray_lookup_view, HURRAY_LOOKUP_VIEW_VERSION) and
 * calls only hurray_coo_lookup_f64.
 *
 * Why: a lookup through the ABI costs a call and its checks (about 100
 * instructions on a sorted float64 tensor of rank 2 or 3, whose calls run
 * this same probe inside the library, more on other tensors); the probe
 * below is inlined into the caller's loop, as a
 * C++ library's coeff() is, and reads the same cache lines the library
 * would. It answers what hurray_coo_lookup_f64 answers, on every handle:
 * whatever the view cannot answer in place (no directory, a type other
 * than float64, a query outside the shape, a NULL pointer, a rank that
 * differs, a long bucket, a view of another version) it hands to
 * hurray_coo_lookup_f64, which then also sets the message.
 *
 *     hurray_lookup_view v = {0};
 *     v.size = sizeof v;
 *     if (hurray_coo_lookup_view(coo, &v) != HURRAY_OK) ...
 *     for (...) st = hurray_coo_probe_f64(&v, coords, rank, &value, &found);
 *
 * The view stays valid until hurray_coo_free(coo); any number of threads
 * may probe through one view at once.
 */
#ifndef HURRAY_COO_PROBE_H
#define HURRAY_COO_PROBE_H

#include "hurray_coo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Not part of the API: the linear position of index (rank coordinates) in
 * *key, and whether every coordinate is inside the shape. Ranks 1 to 3 are
 * written out (strides[rank - 1] is 1), so the probe in a caller's loop is
 * a few instructions; others take the loop. */
static inline int hurray_coo_probe_key_(const hurray_lookup_view *v, const uint64_t *index,
                                        uint32_t rank, uint64_t *key) {
    const uint64_t *sh = v->shape, *st = v->strides;
    uint32_t d;
    int inside = 1;
    uint64_t k = 0;
    switch (rank) {
    case 1:
        *key = index[0];
        return index[0] < sh[0];
    case 2:
        *key = index[0] * st[0] + index[1];
        return (index[0] < sh[0]) & (index[1] < sh[1]);
    case 3:
        *key = index[0] * st[0] + index[1] * st[1] + index[2];
        return (index[0] < sh[0]) & (index[1] < sh[1]) & (index[2] < sh[2]);
    default:
        for (d = 0; d < rank; d++) {
            inside &= index[d] < sh[d];
            k += index[d] * st[d];
        }
        *key = k;
        return inside;
    }
}

/*
 * The element of view->coo at index (rank coordinates) as a double, and
 * whether it is stored: exactly what
 * hurray_coo_lookup_f64(view->coo, index, rank, out_value, out_found)
 * returns and writes, including every status and message (such calls are
 * that function's own; see it in hurray_coo.h). view: filled by
 * hurray_coo_lookup_view (NULL: HURRAY_ERR_NULL_POINTER). out_found may be
 * NULL.
 *
 * In place (no call) when the view has a directory (offset_bytes not 0),
 * float64 values, and the query is inside the shape with at most 32
 * entries in its bucket (the index keeps one bucket per 4 entries, the
 * directory without an index one per entry): rank multiply-adds, two
 * offsets, then a scan of
 * the bucket's low position bits (or its entries' positions; both
 * increase within a bucket, so the scan stops at the first one not below
 * the query's), and one value read (its line asked for with the low bits,
 * under GCC and Clang).
 *
 * Thread safety: as hurray_coo_lookup_f64; reads the view, never writes it.
 */
static inline hurray_status hurray_coo_probe_f64(const hurray_lookup_view *view,
                                                 const uint64_t *index,
                                                 uint32_t rank,
                                                 double *out_value,
                                                 bool *out_found) {
    const hurray_lookup_view *v = view;
    uint64_t key;
    if (v == NULL) {
        return hurray_coo_lookup_f64(NULL, index, rank, out_value, out_found);
    }
    if (v->version == HURRAY_LOOKUP_VIEW_VERSION && v->offset_bytes != 0 &&
        v->values_f64 != NULL && index != NULL && out_value != NULL && rank == v->rank &&
        hurray_coo_probe_key_(v, index, rank, &key)) {
        uint64_t b = v->shift >= 64 ? 0 : key >> v->shift;
        uint64_t lo, hi;
        if (v->offset_bytes == 4) {
            const uint32_t *o = (const uint32_t *)v->offsets;
            lo = o[b];
            hi = o[b + 1];
        } else {
            const uint64_t *o = (const uint64_t *)v->offsets;
            lo = o[b];
            hi = o[b + 1];
        }
        if (hi - lo <= 32) {
            uint64_t i, at = 0;
            int found = 0;
#if defined(__GNUC__) || defined(__clang__)
            /* The bucket's first value is fetched while its low bits are
             * (lo <= nnz: at most one past the end, and a prefetch never
             * faults), so a hit waits for two lines in turn, not three. */
            __builtin_prefetch(v->values_f64 + lo);
#endif
            if (v->low_bytes == 2) {
                const uint16_t *l = (const uint16_t *)v->low;
                uint16_t want = (uint16_t)(key & ((UINT64_C(1) << v->shift) - 1));
                for (i = lo; i < hi; i++) {
                    if (l[i] >= want) {
                        at = i;
                        found = l[i] == want;
                        break;
                    }
                }
            } else if (v->low_bytes == 4) {
                const uint32_t *l = (const uint32_t *)v->low;
                uint32_t want = (uint32_t)(key & ((UINT64_C(1) << v->shift) - 1));
                for (i = lo; i < hi; i++) {
                    if (l[i] >= want) {
                        at = i;
                        found = l[i] == want;
                        break;
                    }
                }
            } else {
                for (i = lo; i < hi; i++) {
                    uint64_t k;
                    hurray_coo_probe_key_(v, v->indices + i * rank, rank, &k);
                    if (k >= key) {
                        at = i;
                        found = k == key;
                        break;
                    }
                }
            }
            {
                /* at is an entry of the tensor whether or not it is the
                 * query's (entry 0 for an empty bucket; the view has values
                 * only when nnz > 0): the read does not wait for found. */
                double x = v->values_f64[at];
                *out_value = found ? x : 0.0;
            }
            if (out_found != NULL) {
                *out_found = found != 0;
            }
            return HURRAY_OK;
        }
    }
    return hurray_coo_lookup_f64(v->coo, index, rank, out_value, out_found);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HURRAY_COO_PROBE_H */
