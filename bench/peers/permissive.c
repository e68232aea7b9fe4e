/* A driver written as a user would: create a handle over a sorted 1M-entry
 * matrix with HURRAY_COO_PERMISSIVE (to skip the O(nnz) checks), then 1M
 * single lookups (half of them misses), against the same on a validated
 * handle. The permissive time includes the first lookup's one check of the
 * claimed order (issue 23). Best of `reps` runs, in seconds.
 *   permissive [entries] [reps]   prints: what seconds */
#define _POSIX_C_SOURCE 200809L
#define _ISOC11_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "create.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv) {
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000, k, q, e = 0;
    int reps = argc > 2 ? atoi(argv[2]) : 3, r, mode;
    uint64_t shape[2] = {n / 500 + 1, 1000};
    /* The format's buffers are 64-byte aligned (borrowed, not copied). */
    uint64_t *idx = aligned_alloc(64, (16 * n + 63) / 64 * 64), *qs = malloc(16 * n);
    double *val = aligned_alloc(64, (8 * n + 63) / 64 * 64), sink = 0;
    if (!idx || !qs || !val) return 1;
    /* Every other key of the row-major order: sorted, distinct. */
    for (k = 0; k < n; k++) {
        uint64_t key = 2 * k;
        idx[2 * k] = key / shape[1];
        idx[2 * k + 1] = key % shape[1];
        val[k] = (double)k;
    }
    for (q = 0; q < n; q++) { /* half stored keys, half the keys between */
        uint64_t key = 2 * (next() % n) + (next() & 1);
        qs[2 * q] = key / shape[1];
        qs[2 * q + 1] = key % shape[1];
    }
    for (mode = 0; mode < 2; mode++) {
        double best = 1e30;
        uint64_t hits = 0;
        for (r = 0; r < reps; r++) {
            hurray_coo *h = NULL;
            double t0 = now(), t;
            hurray_status st = bench_create(HURRAY_TYPE_FLOAT64, 2, shape, n, true, val, 8 * n, idx,
                                            16 * n, mode ? HURRAY_COO_PERMISSIVE : 0, 1, &h);
            if (st != HURRAY_OK) {
                fprintf(stderr, "create: %s\n", hurray_last_error_message());
                return 1;
            }
            hits = 0;
            for (q = 0; q < n; q++) {
                double v;
                bool stored;
                if (hurray_coo_lookup_f64(h, qs + 2 * q, 2, &v, &stored) != HURRAY_OK) e++;
                hits += stored;
                sink += v;
            }
            t = now() - t0;
            if (t < best) best = t;
            hurray_coo_free(h);
        }
        printf("%s %.6f (%llu hits)\n", mode ? "permissive-create+lookups" : "strict-create+lookups",
               best, (unsigned long long)hits);
    }
    if (e) fprintf(stderr, "%llu lookups failed\n", (unsigned long long)e);
    return sink == 0.5 ? 2 : (e != 0);
}
