/* The fixed cost of a call, in instructions (run under callgrind by
 * bench/peers/callcost.sh): N calls each of hurray_coo_nnz and of
 * hurray_coo_lookup_f64 on a 1-entry tensor without an index, with
 * HURRAY_COO_INDEX and with HURRAY_COO_INDEX_VALUES, and N creates (and
 * frees) of that tensor, each loop in its own function so that callgrind
 * counts it apart. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray_coo.h"
#include "create.h"

#define N 100000

static volatile double sink;

__attribute__((noinline)) static void loop_nnz(const hurray_coo *h) {
    uint64_t t = 0;
    for (int k = 0; k < N; k++) t += hurray_coo_nnz(h);
    sink = (double)t;
}

static inline void lookups(const hurray_coo *h) {
    const uint64_t q[2] = {0, 0};
    double x = 0, acc = 0;
    bool found;
    for (int k = 0; k < N; k++) {
        hurray_coo_lookup_f64(h, q, 2, &x, &found);
        acc += x;
    }
    sink = acc;
}

/* One function per kind of handle, so that callgrind counts each apart. */
__attribute__((noinline)) static void loop_lookup_plain(const hurray_coo *h) { lookups(h); }
__attribute__((noinline)) static void loop_lookup_index(const hurray_coo *h) { lookups(h); }
__attribute__((noinline)) static void loop_lookup_values(const hurray_coo *h) { lookups(h); }

/* Create and free a borrowed, validated 1-entry handle, N times. */
__attribute__((noinline)) static void loop_create(const uint64_t *shape, const double *v,
                                                  const uint64_t *i) {
    hurray_coo_parts p;
    memset(&p, 0, sizeof p);
    p.type_tag = HURRAY_TYPE_FLOAT64;
    p.rank = 2;
    p.shape = shape;
    p.nnz = 1;
    p.is_sorted = true;
    p.values = v;
    p.values_bytes = 8;
    p.indices = i;
    p.indices_bytes = 16;
    for (int k = 0; k < N; k++) {
        hurray_coo *h = NULL;
        if (hurray_coo_create(&p, NULL, &h) == HURRAY_OK) hurray_coo_free(h);
    }
}

int main(void) {
    const uint64_t shape[2] = {4, 4};
    const uint32_t flags[3] = {0, HURRAY_COO_INDEX, HURRAY_COO_INDEX_VALUES};
    double *v = aligned_alloc(64, 64);
    uint64_t *i = aligned_alloc(64, 64);
    if (!v || !i) return 1;
    v[0] = 1.0;
    i[0] = i[1] = 0;
    loop_create(shape, v, i);
    for (int f = 0; f < 3; f++) {
        hurray_coo *h = NULL;
        if (bench_create(HURRAY_TYPE_FLOAT64, 2, shape, 1, true, v, 8, i, 16, flags[f], 1, &h))
            return 1;
        if (f == 0) {
            loop_nnz(h);
            loop_lookup_plain(h);
        } else if (f == 1) {
            loop_lookup_index(h);
        } else {
            loop_lookup_values(h);
        }
        hurray_coo_free(h);
    }
    free(v);
    free(i);
    return 0;
}
