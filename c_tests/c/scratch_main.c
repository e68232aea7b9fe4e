/* The work space an unsorted check keeps between calls, and
 * hurray_release_scratch, in a process of its own: nothing else takes from
 * or gives to the library's pool here, so the byte counts are exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray_coo.h"

#define N 200000u

static int failures = 0;
#define CHECK(cond)                                                    \
    do {                                                               \
        if (!(cond)) {                                                 \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                \
        }                                                              \
    } while (0)

static uint64_t *idx;
static double *vals;

static hurray_status create(uint32_t threads) {
    const uint64_t shape[2] = {N / 1000, 1000};
    hurray_coo_parts p;
    hurray_coo_options o;
    hurray_coo *coo = NULL;
    hurray_status st;
    memset(&p, 0, sizeof p);
    memset(&o, 0, sizeof o);
    p.type_tag = HURRAY_TYPE_FLOAT64;
    p.rank = 2;
    p.shape = shape;
    p.nnz = N;
    p.is_sorted = false;
    p.values = vals;
    p.values_bytes = N * sizeof(double);
    p.indices = idx;
    p.indices_bytes = 2 * N * sizeof(uint64_t);
    o.size = sizeof o;
    o.threads = threads;
    st = hurray_coo_create(&p, &o, &coo);
    hurray_coo_free(coo);
    return st;
}

int main(void) {
    size_t k, kept;
    idx = aligned_alloc(64, 2 * N * sizeof(uint64_t));
    vals = aligned_alloc(64, N * sizeof(double));
    if (!idx || !vals) return 2;
    for (k = 0; k < N; k++) { /* a permutation of the 200 x 1000 positions */
        uint64_t pos = (k * 7919u) % N;
        idx[2 * k] = pos / 1000;
        idx[2 * k + 1] = pos % 1000;
        vals[k] = (double)k;
    }
    CHECK(hurray_release_scratch() == 0); /* a fresh process keeps nothing */

    /* One thread: one scatter buffer of at least 4 bytes per entry (the
     * keys of this shape fit the 4-byte pass), kept. */
    CHECK(create(1) == HURRAY_OK);
    kept = hurray_release_scratch();
    CHECK(kept >= 4 * (size_t)N && kept <= 8 * (size_t)N);
    CHECK(hurray_release_scratch() == 0);

    /* A kept buffer holds the last check's contents; the next check must
     * not read them: the same answers, duplicate or not, as on fresh
     * memory. */
    CHECK(create(1) == HURRAY_OK);
    CHECK(create(1) == HURRAY_OK);
    idx[2 * (N - 1)] = idx[2 * 5];
    idx[2 * (N - 1) + 1] = idx[2 * 5 + 1];
    CHECK(create(1) == HURRAY_ERR_DUPLICATE);
    CHECK(strstr(hurray_last_error_message(), "entry 199999 duplicates entry 5") != NULL);
    CHECK(create(2) == HURRAY_ERR_DUPLICATE);
    CHECK(strstr(hurray_last_error_message(), "entry 199999 duplicates entry 5") != NULL);
    /* A duplicate runs the 8-byte pass after the 4-byte one: both kept. */
    kept = hurray_release_scratch();
    CHECK(kept >= 12 * (size_t)N);
    CHECK(create(2) == HURRAY_ERR_DUPLICATE); /* and after a release */
    CHECK(strstr(hurray_last_error_message(), "entry 199999 duplicates entry 5") != NULL);

    /* Two threads scatter into a buffer each: both kept, half the entries
     * (and at least 4 bytes per entry) in each. */
    idx[2 * (N - 1)] = ((N - 1) * 7919u % N) / 1000;
    idx[2 * (N - 1) + 1] = ((N - 1) * 7919u % N) % 1000;
    hurray_release_scratch();
    CHECK(create(2) == HURRAY_OK);
    kept = hurray_release_scratch();
    CHECK(kept >= 4 * (size_t)N && kept <= 8 * (size_t)N);
    CHECK(create(1) == HURRAY_OK);

    free(idx);
    free(vals);
    if (failures == 0) printf("scratch: ok\n");
    return failures == 0 ? 0 : 1;
}
