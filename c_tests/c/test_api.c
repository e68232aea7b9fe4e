/* C tests of the libhurray_coo API, as a C caller uses it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc64.h"
#include "ctest.h"
#include "hurray_coo_probe.h"

static const uint64_t SEED_SHAPE[2] = {4, 4};
static const float SEED_VALUES[3] = {1.5f, -0.5f, 2.0f};
static const uint64_t SEED_INDICES[6] = {0, 1, 2, 0, 3, 3};

/* A fixture: aligned copies of the seed's buffers. */
typedef struct {
    float *values;
    uint64_t *indices;
} seed_bufs;

static seed_bufs seed_alloc(void) {
    seed_bufs b;
    b.values = alloc64(SEED_VALUES, sizeof SEED_VALUES, 0);
    b.indices = alloc64(SEED_INDICES, sizeof SEED_INDICES, 0);
    return b;
}

static void seed_release(seed_bufs b) {
    free64(b.values);
    free64(b.indices);
}

static hurray_status seed_create(seed_bufs b, uint32_t flags, hurray_coo **out) {
    return ctest_create(0x03, 2, SEED_SHAPE, 3, true, b.values, sizeof SEED_VALUES, b.indices, sizeof SEED_INDICES, flags, out);
}

static int test_seed_example(void) {
    int failures = 0;
    seed_bufs b = seed_alloc();
    hurray_coo *coo = NULL;
    const uint64_t present[2] = {2, 0};
    const uint64_t absent[2] = {1, 2};
    float f = 0.0f;
    double d = 0.0;
    bool found = false;
    size_t nbytes = 0;

    CHECK_STATUS(seed_create(b, HURRAY_COO_BORROW, &coo), HURRAY_OK, "");
    CHECK(coo != NULL);
    CHECK(strcmp(hurray_last_error_message(), "") == 0);
    CHECK_STATUS(hurray_coo_validate(coo, 1), HURRAY_OK, "");

    CHECK(hurray_coo_rank(coo) == 2);
    CHECK(hurray_coo_shape(coo)[0] == 4 && hurray_coo_shape(coo)[1] == 4);
    CHECK(hurray_coo_nnz(coo) == 3);
    CHECK(hurray_coo_type_tag(coo) == 0x03);
    CHECK(hurray_coo_is_sorted(coo));
    CHECK(hurray_coo_flags(coo) == 0);
    /* Zero-copy: the handle reads the caller's memory in place. */
    CHECK(hurray_coo_values(coo, &nbytes) == (const void *)b.values);
    CHECK(nbytes == 12);
    CHECK(hurray_coo_indices(coo, &nbytes) == b.indices);
    CHECK(nbytes == 48);
    CHECK(hurray_coo_values(coo, NULL) == (const void *)b.values);

    CHECK(hurray_coo_index_bytes(coo) == 0); /* no HURRAY_COO_INDEX */
    CHECK(hurray_coo_index_bytes(NULL) == 0);
    CHECK_STATUS(hurray_coo_lookup(coo, present, 2, &f, sizeof f, &found), HURRAY_OK, "");
    CHECK(found && f == -0.5f);
    CHECK_STATUS(hurray_coo_lookup_f64(coo, present, 2, &d, &found), HURRAY_OK, "");
    CHECK(found && d == -0.5);
    f = 42.0f;
    CHECK_STATUS(hurray_coo_lookup(coo, absent, 2, &f, sizeof f, &found), HURRAY_OK, "");
    CHECK(!found && f == 0.0f);
    CHECK_STATUS(hurray_coo_lookup_f64(coo, absent, 2, &d, NULL), HURRAY_OK, "");
    CHECK(d == 0.0);

    /* The library never wrote to the borrowed buffers. */
    CHECK(memcmp(b.values, SEED_VALUES, sizeof SEED_VALUES) == 0);
    CHECK(memcmp(b.indices, SEED_INDICES, sizeof SEED_INDICES) == 0);
    hurray_coo_free(coo);

    /* With HURRAY_COO_INDEX: a hash table within the documented bound; same answers. */
    CHECK_STATUS(seed_create(b, HURRAY_COO_INDEX, &coo), HURRAY_OK, "");
    CHECK(hurray_coo_flags(coo) == HURRAY_COO_INDEX);
    CHECK(hurray_coo_index_bytes(coo) > 0 && hurray_coo_index_bytes(coo) <= 16 * 3 + 256);
    CHECK_STATUS(hurray_coo_lookup(coo, present, 2, &f, sizeof f, &found), HURRAY_OK, "");
    CHECK(found && f == -0.5f);
    CHECK_STATUS(hurray_coo_lookup(coo, absent, 2, &f, sizeof f, &found), HURRAY_OK, "");
    CHECK(!found && f == 0.0f);
    hurray_coo_free(coo);

    /* With HURRAY_COO_INDEX_VALUES: the index keeps each value beside its
     * key (reported by the flags, counted in the index bytes); same answers. */
    CHECK_STATUS(seed_create(b, HURRAY_COO_INDEX_VALUES, &coo), HURRAY_OK, "");
    CHECK(hurray_coo_flags(coo) == (HURRAY_COO_INDEX | HURRAY_COO_INDEX_VALUES));
    CHECK(hurray_coo_index_bytes(coo) > 0 && hurray_coo_index_bytes(coo) <= 32 * 3 + 512);
    CHECK_STATUS(hurray_coo_lookup_f64(coo, present, 2, &d, &found), HURRAY_OK, "");
    CHECK(found && d == -0.5);
    d = 42.0;
    CHECK_STATUS(hurray_coo_lookup_f64(coo, absent, 2, &d, &found), HURRAY_OK, "");
    CHECK(!found && d == 0.0);
    CHECK_STATUS(hurray_coo_lookup(coo, present, 2, &f, sizeof f, &found), HURRAY_OK, "");
    CHECK(found && f == -0.5f);
    hurray_coo_free(coo);
    seed_release(b);
    return failures;
}

static int test_copy_mode_owns_its_memory(void) {
    int failures = 0;
    seed_bufs b = seed_alloc();
    hurray_coo *coo = NULL;
    const uint64_t q[2] = {3, 3};
    double d = 0.0;
    bool found = false;
    const void *v;
    size_t nbytes = 0;

    CHECK_STATUS(seed_create(b, HURRAY_COO_COPY, &coo), HURRAY_OK, "");
    CHECK(hurray_coo_flags(coo) == HURRAY_COO_COPY);
    v = hurray_coo_values(coo, &nbytes);
    CHECK(v != (const void *)b.values && nbytes == 12);
    CHECK(((uintptr_t)v % 64u) == 0);
    CHECK(((uintptr_t)hurray_coo_indices(coo, NULL) % 64u) == 0);
    /* The caller may scribble on and free its arrays at once. */
    memset(b.values, 0xFF, sizeof SEED_VALUES);
    memset(b.indices, 0xFF, sizeof SEED_INDICES);
    seed_release(b);
    CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 2, &d, &found), HURRAY_OK, "");
    CHECK(found && d == 2.0);
    CHECK_STATUS(hurray_coo_validate(coo, 1), HURRAY_OK, "");
    hurray_coo_free(coo);

    /* Copy mode accepts misaligned (but otherwise valid) buffers. */
    {
        float *mv = alloc64(SEED_VALUES, sizeof SEED_VALUES, 4);
        uint64_t *mi = alloc64(SEED_INDICES, sizeof SEED_INDICES, 8);
        CHECK_STATUS(ctest_create(0x03, 2, SEED_SHAPE, 3, true, mv, 12, mi, 48, HURRAY_COO_COPY, &coo),
                     HURRAY_OK, "");
        CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 2, &d, &found), HURRAY_OK, "");
        CHECK(found && d == 2.0);
        hurray_coo_free(coo);
        CHECK_STATUS(ctest_create(0x03, 2, SEED_SHAPE, 3, true, mv, 12, mi, 48, HURRAY_COO_BORROW, &coo),
                     HURRAY_ERR_MISALIGNED, "HURRAY_COO_COPY");
        CHECK(coo == NULL);
        free64(mv);
        free64(mi);
    }
    return failures;
}

#define SENTINEL ((hurray_coo *)(uintptr_t)0x1)

static int test_null_pointers_never_crash(void) {
    int failures = 0;
    seed_bufs b = seed_alloc();
    hurray_coo *coo = SENTINEL;
    const uint64_t q[2] = {0, 1};
    float f;
    double d;
    bool found;
    uint64_t n;

    CHECK_STATUS(seed_create(b, 0, NULL), HURRAY_ERR_NULL_POINTER, "out");
    CHECK_STATUS(ctest_create(0x03, 2, NULL, 3, true, b.values, 12, b.indices, 48, 0, &coo),
                 HURRAY_ERR_NULL_POINTER, "shape");
    CHECK(coo == NULL);
    coo = SENTINEL;
    CHECK_STATUS(ctest_create(0x03, 2, SEED_SHAPE, 3, true, NULL, 12, b.indices, 48, 0, &coo),
                 HURRAY_ERR_NULL_POINTER, "values");
    CHECK(coo == NULL);
    coo = SENTINEL;
    CHECK_STATUS(ctest_create(0x03, 2, SEED_SHAPE, 3, true, b.values, 12, NULL, 48, 0, &coo),
                 HURRAY_ERR_NULL_POINTER, "indices");
    CHECK(coo == NULL);

    /* An empty tensor may pass NULL buffers. */
    CHECK_STATUS(ctest_create(0x03, 2, SEED_SHAPE, 0, true, NULL, 0, NULL, 0, 0, &coo),
                 HURRAY_OK, "");
    CHECK(hurray_coo_nnz(coo) == 0);
    CHECK_STATUS(hurray_coo_validate(coo, 1), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_lookup(coo, q, 2, &f, sizeof f, &found), HURRAY_OK, "");
    CHECK(!found);
    hurray_coo_free(coo);

    CHECK_STATUS(hurray_coo_validate(NULL, 1), HURRAY_ERR_NULL_POINTER, "coo");
    CHECK_STATUS(hurray_coo_lookup(NULL, q, 2, &f, sizeof f, &found), HURRAY_ERR_NULL_POINTER,
                 "coo");
    CHECK_STATUS(hurray_coo_lookup_f64(NULL, q, 2, &d, &found), HURRAY_ERR_NULL_POINTER, "coo");
    CHECK_STATUS(seed_create(b, 0, &coo), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_lookup(coo, NULL, 2, &f, sizeof f, &found), HURRAY_ERR_NULL_POINTER,
                 "index");
    CHECK_STATUS(hurray_coo_lookup(coo, q, 2, NULL, 4, &found), HURRAY_ERR_NULL_POINTER,
                 "out_value");
    CHECK_STATUS(hurray_coo_lookup_f64(coo, NULL, 2, &d, &found), HURRAY_ERR_NULL_POINTER,
                 "index");
    CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 2, NULL, &found), HURRAY_ERR_NULL_POINTER,
                 "out_value");
    CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 2, &d, NULL), HURRAY_OK, "");
    CHECK(d == 1.5);
    hurray_coo_free(coo);

    CHECK(hurray_coo_rank(NULL) == 0);
    CHECK(hurray_coo_nnz(NULL) == 0);
    CHECK(hurray_coo_shape(NULL) == NULL);
    CHECK(hurray_coo_type_tag(NULL) == 0);
    CHECK(!hurray_coo_is_sorted(NULL));
    CHECK(hurray_coo_flags(NULL) == 0);
    n = 7;
    CHECK(hurray_coo_values(NULL, (size_t *)&n) == NULL);
    CHECK(hurray_coo_indices(NULL, NULL) == NULL);
    CHECK_STATUS(hurray_type_values_bytes(0x03, 3, NULL), HURRAY_ERR_NULL_POINTER, "out_bytes");
    hurray_coo_free(NULL);
    seed_release(b);
    return failures;
}

static int test_structural_errors_name_the_culprit(void) {
    int failures = 0;
    seed_bufs b = seed_alloc();
    hurray_coo *coo = SENTINEL;
    uint64_t shape65[65];
    const uint64_t dyn_shape[2] = {4, UINT64_MAX};
    size_t i;
    for (i = 0; i < 65; i++) {
        shape65[i] = 2;
    }

    CHECK_STATUS(seed_create(b, 0x20, &coo), HURRAY_ERR_INVALID_FLAGS, "0x00000020");
    CHECK(coo == NULL);
    coo = SENTINEL;
    CHECK_STATUS(seed_create(b, 0x80000001u, &coo), HURRAY_ERR_INVALID_FLAGS, "0x80000000");
    CHECK(coo == NULL);
    CHECK_STATUS(ctest_create(0x03, 0, SEED_SHAPE, 3, true, b.values, 12, b.indices, 48, 0, &coo),
                 HURRAY_ERR_INVALID_RANK, "rank 0");
    CHECK_STATUS(ctest_create(0x03, 65, shape65, 3, true, b.values, 12, b.indices, 48, 0, &coo),
                 HURRAY_ERR_INVALID_RANK, "rank 65");
    CHECK_STATUS(ctest_create(0x03, UINT32_MAX, shape65, 3, true, b.values, 12, b.indices, 48, 0, &coo),
                 HURRAY_ERR_INVALID_RANK, "rank 4294967295");
    CHECK_STATUS(ctest_create(0x03, 2, dyn_shape, 3, true, b.values, 12, b.indices, 48, 0, &coo),
                 HURRAY_ERR_INVALID_SHAPE, "dimension 1");
    CHECK_STATUS(ctest_create(0x03, 2, SEED_SHAPE, 3, true, b.values, 11, b.indices, 48, 0, &coo),
                 HURRAY_ERR_BUFFER_SIZE, "values buffer is 11 bytes");
    CHECK_STATUS(ctest_create(0x03, 2, SEED_SHAPE, 3, true, b.values, 12, b.indices, 40, 0, &coo),
                 HURRAY_ERR_BUFFER_SIZE, "exactly 48 bytes");
    /* nnz * rank * 8 overflows: refused before anything is read. */
    CHECK_STATUS(ctest_create(0x03, 2, SEED_SHAPE, UINT64_MAX / 8, true, b.values, 12, b.indices, 48, 0, &coo),
                 HURRAY_ERR_OVERFLOW, "nnz * rank * 8");
    CHECK_STATUS(ctest_create(0x03, 2, SEED_SHAPE, UINT64_MAX, true, b.values, 12, b.indices, 48, 0, &coo),
                 HURRAY_ERR_OVERFLOW, "");
    /* A length that cannot be a real buffer. */
    CHECK_STATUS(ctest_create(0x03, 2, SEED_SHAPE, 3, true, b.values, SIZE_MAX, b.indices, 48, 0, &coo),
                 HURRAY_ERR_OVERFLOW, "values");
    CHECK(coo == NULL);
    seed_release(b);
    return failures;
}

static int test_data_errors_name_entry_dimension_and_values(void) {
    int failures = 0;
    hurray_coo *coo = SENTINEL;
    const uint64_t shape[2] = {4, 20};
    float *vals = alloc64(NULL, 18 * sizeof(float), 0);
    uint64_t idx[36];
    uint64_t *aidx;
    uint64_t i;

    /* 18 distinct entries (i / 5, i mod 5 + 10), then entry 3 = (2, 0) and
     * entry 17 = (2, 0): the example message. */
    for (i = 0; i < 18; i++) {
        idx[2 * i] = i / 5;
        idx[2 * i + 1] = i % 5 + 10;
    }
    idx[6] = 2;
    idx[7] = 0;
    idx[34] = 2;
    idx[35] = 0;
    aidx = alloc64(idx, sizeof idx, 0);
    CHECK_STATUS(ctest_create(0x03, 2, shape, 18, false, vals, 72, aidx, sizeof idx, 0, &coo),
                 HURRAY_ERR_DUPLICATE, "entry 17 duplicates entry 3 at (2, 0)");
    CHECK(coo == NULL);

    /* Permissive mode accepts it; validate still finds it. */
    CHECK_STATUS(ctest_create(0x03, 2, shape, 18, false, vals, 72, aidx, sizeof idx, HURRAY_COO_PERMISSIVE, &coo),
                 HURRAY_OK, "");
    CHECK(hurray_coo_flags(coo) == HURRAY_COO_PERMISSIVE);
    CHECK_STATUS(hurray_coo_validate(coo, 1), HURRAY_ERR_DUPLICATE,
                 "entry 17 duplicates entry 3 at (2, 0)");
    hurray_coo_free(coo);

    /* Out of bounds: entry 5's second coordinate 20 with shape[1] = 20. */
    aidx[11] = 20;
    CHECK_STATUS(ctest_create(0x03, 2, shape, 18, false, vals, 72, aidx, sizeof idx, 0, &coo),
                 HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                 "entry 5 at (1, 20): coordinate 20 in dimension 1 is out of bounds (shape[1] = 20)");
    free64(aidx);

    /* Sorted order violated at entry 1. */
    {
        const uint64_t unsorted[4] = {3, 3, 0, 1};
        uint64_t *u = alloc64(unsorted, sizeof unsorted, 0);
        CHECK_STATUS(ctest_create(0x03, 2, shape, 2, true, vals, 8, u, 32, 0, &coo),
                     HURRAY_ERR_NOT_SORTED, "entry 1 at (0, 1) is not after entry 0 at (3, 3)");
        CHECK(coo == NULL);
        free64(u);
    }
    free64(vals);
    return failures;
}

static int test_every_type_tag(void) {
    int failures = 0;
    const uint64_t shape[1] = {8};
    unsigned tag;
    int known = 0;
    for (tag = 0; tag <= 0xFF; tag++) {
        hurray_coo *coo = SENTINEL;
        uint64_t bytes = 0;
        hurray_status strict = ctest_create((uint8_t)tag, 1, shape, 0, true, NULL, 0, NULL, 0, 0, &coo);
        const char *name = hurray_type_name((uint8_t)tag);
        CHECK(name != NULL);
        if (strict == HURRAY_OK) {
            known++;
            CHECK(strcmp(name, "unknown") != 0);
            CHECK(hurray_type_values_bytes((uint8_t)tag, 4, &bytes) == HURRAY_OK && bytes > 0);
            hurray_coo_free(coo);
            continue;
        }
        CHECK(strict == HURRAY_ERR_INVALID_TYPE);
        CHECK(coo == NULL);
        CHECK(strcmp(name, "unknown") == 0);
        CHECK(hurray_type_values_bytes((uint8_t)tag, 4, &bytes) == HURRAY_ERR_INVALID_TYPE);
        if (tag == 0x00 || tag == 0xFF) {
            CHECK_STATUS(ctest_create((uint8_t)tag, 1, shape, 0, true, NULL, 0, NULL, 0, HURRAY_COO_PERMISSIVE, &coo),
                         HURRAY_ERR_INVALID_TYPE, "invalid");
            CHECK(coo == NULL);
        } else {
            /* Accepted in permissive mode, values never interpreted. */
            const unsigned char opaque[3] = {1, 2, 3};
            const uint64_t idx[1] = {5};
            uint64_t *aidx = alloc64(idx, sizeof idx, 0);
            unsigned char *av = alloc64(opaque, 3, 0);
            const uint64_t q[1] = {5};
            unsigned char out[16];
            double d;
            CHECK_STATUS(ctest_create((uint8_t)tag, 1, shape, 1, true, av, 3, aidx, 8, HURRAY_COO_PERMISSIVE, &coo),
                         HURRAY_OK, "");
            CHECK_STATUS(hurray_coo_lookup(coo, q, 1, out, sizeof out, NULL),
                         HURRAY_ERR_UNSUPPORTED_TYPE, "never interpreted");
            CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 1, &d, NULL), HURRAY_ERR_UNSUPPORTED_TYPE,
                         "permissive");
            CHECK_STATUS(hurray_coo_validate(coo, 1), HURRAY_ERR_INVALID_TYPE, "type tag 0x");
            hurray_coo_free(coo);
            free64(aidx);
            free64(av);
        }
    }
    CHECK(known == 26);
    CHECK(strcmp(hurray_type_name(0x43), "float4_e2m1") == 0);
    {
        uint64_t bytes = 0;
        CHECK(hurray_type_values_bytes(0x44, 5, &bytes) == HURRAY_OK && bytes == 6);
        CHECK(hurray_type_values_bytes(0x20, 9, &bytes) == HURRAY_OK && bytes == 2);
        CHECK(hurray_type_values_bytes(0x51, 2, &bytes) == HURRAY_OK && bytes == 32);
        CHECK_STATUS(hurray_type_values_bytes(0x04, UINT64_MAX, &bytes), HURRAY_ERR_OVERFLOW,
                     "values buffer size");
    }
    return failures;
}

static int test_lookup_contract(void) {
    int failures = 0;
    hurray_coo *coo = NULL;
    const uint64_t shape[1] = {100};
    /* int4, 5 entries: 1, -2, 7, -8, 3 -> nibbles 0x1, 0xE, 0x7, 0x8, 0x3 */
    const unsigned char nibbles[3] = {0xE1, 0x87, 0x03};
    const uint64_t idx[5] = {2, 10, 50, 70, 99};
    unsigned char *av = alloc64(nibbles, 3, 0);
    uint64_t *aidx = alloc64(idx, sizeof idx, 0);
    const uint64_t q70[1] = {70};
    const uint64_t q2d[2] = {70, 0};
    const uint64_t q100[1] = {100};
    unsigned char byte = 0;
    double d = 0;
    bool found = false;

    CHECK_STATUS(ctest_create(0x48, 1, shape, 5, true, av, 3, aidx, sizeof idx, 0, &coo),
                 HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_lookup(coo, q70, 1, &byte, 1, &found), HURRAY_OK, "");
    CHECK(found && byte == 0x8);
    CHECK_STATUS(hurray_coo_lookup_f64(coo, q70, 1, &d, &found), HURRAY_OK, "");
    CHECK(found && d == -8.0);
    CHECK_STATUS(hurray_coo_lookup(coo, q2d, 2, &byte, 1, &found), HURRAY_ERR_RANK_MISMATCH,
                 "query has rank 2 but the tensor has rank 1");
    CHECK_STATUS(hurray_coo_lookup(coo, q100, 1, &byte, 1, &found), HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                 "coordinate 100 in dimension 0");
    CHECK_STATUS(hurray_coo_lookup_f64(coo, q100, 1, &d, &found), HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                 "shape[0] = 100");
    CHECK_STATUS(hurray_coo_lookup(coo, q70, 1, &byte, 0, &found), HURRAY_ERR_BUFFER_TOO_SMALL,
                 "1 are needed");
    hurray_coo_free(coo);

    /* complex128: raw bytes yes, a double no. */
    {
        const double z[2] = {1.0, -2.0};
        double *az = alloc64(z, sizeof z, 0);
        double outz[2] = {0, 0};
        const uint64_t q[1] = {2};
        CHECK_STATUS(ctest_create(0x51, 1, shape, 1, true, az, 16, aidx, 8, 0, &coo),
                     HURRAY_OK, "");
        CHECK_STATUS(hurray_coo_lookup(coo, q, 1, outz, 8, NULL), HURRAY_ERR_BUFFER_TOO_SMALL,
                     "16 are needed");
        CHECK_STATUS(hurray_coo_lookup(coo, q, 1, outz, sizeof outz, &found), HURRAY_OK, "");
        CHECK(found && outz[0] == 1.0 && outz[1] == -2.0);
        CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 1, &d, &found), HURRAY_ERR_UNSUPPORTED_TYPE,
                     "complex");
        hurray_coo_free(coo);
        free64(az);
    }
    /* float16 with an infinity and a NaN. */
    {
        const uint16_t h[2] = {0x7C00, 0x7E01};
        uint16_t *ah = alloc64(h, sizeof h, 0);
        const uint64_t q0[1] = {2};
        const uint64_t q1[1] = {10};
        CHECK_STATUS(ctest_create(0x01, 1, shape, 2, true, ah, 4, aidx, 16, 0, &coo),
                     HURRAY_OK, "");
        CHECK_STATUS(hurray_coo_lookup_f64(coo, q0, 1, &d, NULL), HURRAY_OK, "");
        CHECK(isinf(d) && d > 0);
        CHECK_STATUS(hurray_coo_lookup_f64(coo, q1, 1, &d, NULL), HURRAY_OK, "");
        CHECK(isnan(d));
        hurray_coo_free(coo);
        free64(ah);
    }
    free64(av);
    free64(aidx);
    return failures;
}

static int test_status_names_and_messages(void) {
    int failures = 0;
    static const struct {
        hurray_status code;
        const char *name;
    } table[] = {
        {HURRAY_OK, "HURRAY_OK"},
        {HURRAY_ERR_INVALID_MAGIC, "HURRAY_ERR_INVALID_MAGIC"},
        {HURRAY_ERR_VERSION_MISMATCH, "HURRAY_ERR_VERSION_MISMATCH"},
        {HURRAY_ERR_INVALID_LAYOUT, "HURRAY_ERR_INVALID_LAYOUT"},
        {HURRAY_ERR_INVALID_TYPE, "HURRAY_ERR_INVALID_TYPE"},
        {HURRAY_ERR_BUFFER_TOO_SMALL, "HURRAY_ERR_BUFFER_TOO_SMALL"},
        {HURRAY_ERR_NULL_POINTER, "HURRAY_ERR_NULL_POINTER"},
        {HURRAY_ERR_INTERNAL_PANIC, "HURRAY_ERR_INTERNAL_PANIC"},
        {HURRAY_ERR_INVALID_SYNC_MODE, "HURRAY_ERR_INVALID_SYNC_MODE"},
        {HURRAY_ERR_INTERNAL, "HURRAY_ERR_INTERNAL"},
        {HURRAY_ERR_INDEX_OUT_OF_BOUNDS, "HURRAY_ERR_INDEX_OUT_OF_BOUNDS"},
        {HURRAY_ERR_INVALID_RANK, "HURRAY_ERR_INVALID_RANK"},
        {HURRAY_ERR_INVALID_SHAPE, "HURRAY_ERR_INVALID_SHAPE"},
        {HURRAY_ERR_BUFFER_SIZE, "HURRAY_ERR_BUFFER_SIZE"},
        {HURRAY_ERR_MISALIGNED, "HURRAY_ERR_MISALIGNED"},
        {HURRAY_ERR_DUPLICATE, "HURRAY_ERR_DUPLICATE"},
        {HURRAY_ERR_NOT_SORTED, "HURRAY_ERR_NOT_SORTED"},
        {HURRAY_ERR_RANK_MISMATCH, "HURRAY_ERR_RANK_MISMATCH"},
        {HURRAY_ERR_OVERFLOW, "HURRAY_ERR_OVERFLOW"},
        {HURRAY_ERR_ALLOC, "HURRAY_ERR_ALLOC"},
        {HURRAY_ERR_INVALID_FLAGS, "HURRAY_ERR_INVALID_FLAGS"},
        {HURRAY_ERR_NONZERO_PADDING, "HURRAY_ERR_NONZERO_PADDING"},
        {HURRAY_ERR_UNSUPPORTED_TYPE, "HURRAY_ERR_UNSUPPORTED_TYPE"},
        {HURRAY_ERR_INVALID_VALUE, "HURRAY_ERR_INVALID_VALUE"},
        {HURRAY_ERR_TRUNCATED, "HURRAY_ERR_TRUNCATED"},
        {HURRAY_ERR_RESERVED_BITS, "HURRAY_ERR_RESERVED_BITS"},
        {HURRAY_ERR_UNSUPPORTED_DEVICE, "HURRAY_ERR_UNSUPPORTED_DEVICE"},
        {HURRAY_ERR_INVALID_BUFFER_HANDLE, "HURRAY_ERR_INVALID_BUFFER_HANDLE"},
        {HURRAY_ERR_INVALID_STATISTICS, "HURRAY_ERR_INVALID_STATISTICS"},
        {HURRAY_ERR_UNSUPPORTED_FEATURE, "HURRAY_ERR_UNSUPPORTED_FEATURE"},
        {HURRAY_ERR_PARSE, "HURRAY_ERR_PARSE"},
        {HURRAY_ERR_IO, "HURRAY_ERR_IO"},
        {HURRAY_ERR_CORRUPT_FILE, "HURRAY_ERR_CORRUPT_FILE"},
        {HURRAY_ERR_CHECKSUM, "HURRAY_ERR_CHECKSUM"},
        {HURRAY_ERR_NOT_FOUND, "HURRAY_ERR_NOT_FOUND"},
        {HURRAY_ERR_INVALID_ARGUMENT, "HURRAY_ERR_INVALID_ARGUMENT"},
        {HURRAY_ERR_OUTSIDE_SHARD, "HURRAY_ERR_OUTSIDE_SHARD"},
    };
    size_t i;
    int code;
    for (i = 0; i < sizeof table / sizeof table[0]; i++) {
        CHECK(strcmp(hurray_status_name(table[i].code), table[i].name) == 0);
    }
    for (code = -100; code <= 100; code++) {
        CHECK(hurray_status_name(code) != NULL);
    }
    CHECK(strcmp(hurray_status_name(1), "HURRAY_ERR_UNKNOWN_STATUS") == 0);
    CHECK(strcmp(hurray_status_name(-9), "HURRAY_ERR_UNKNOWN_STATUS") == 0);
    CHECK(strcmp(hurray_status_name(INT32_MIN), "HURRAY_ERR_UNKNOWN_STATUS") == 0);
    /* A failure sets the message; the next success clears it. */
    CHECK(hurray_coo_validate(NULL, 1) == HURRAY_ERR_NULL_POINTER);
    CHECK(strstr(hurray_last_error_message(), "coo is NULL") != NULL);
    {
        uint64_t bytes;
        CHECK(hurray_type_values_bytes(0x03, 1, &bytes) == HURRAY_OK);
    }
    CHECK(hurray_last_error_message() != NULL);
    CHECK(strcmp(hurray_last_error_message(), "") == 0);
    return failures;
}

static int test_versions_agree(void) {
    int failures = 0;
    char buf[32];
    CHECK(hurray_coo_abi_version() == HURRAY_COO_ABI_VERSION);
    CHECK(hurray_coo_version_number() == HURRAY_COO_VERSION_NUMBER);
    CHECK(HURRAY_COO_VERSION_NUMBER == HURRAY_COO_VERSION_MAJOR * 1000000 +
                                           HURRAY_COO_VERSION_MINOR * 1000 +
                                           HURRAY_COO_VERSION_PATCH);
    snprintf(buf, sizeof buf, "%d.%d.%d", HURRAY_COO_VERSION_MAJOR, HURRAY_COO_VERSION_MINOR,
             HURRAY_COO_VERSION_PATCH);
    CHECK(strcmp(hurray_coo_version_string(), buf) == 0);
    return failures;
}

/* Release callback bookkeeping. */
static int release_calls;
static void *release_seen;
static void count_release(void *ctx) {
    release_calls++;
    release_seen = ctx;
}

static int test_release_callback_runs_exactly_once(void) {
    int failures = 0;
    seed_bufs b = seed_alloc();
    hurray_coo *coo = NULL;
    int token = 0;

    /* Borrowed: at free, not before. */
    release_calls = 0;
    CHECK_STATUS(ctest_create_with(0x03, 2, SEED_SHAPE, 3, true, b.values, 12, b.indices, 48, 0, 1, count_release, &token, NULL, NULL, &coo),
                 HURRAY_OK, "");
    CHECK(release_calls == 0);
    CHECK_STATUS(hurray_coo_validate(coo, 1), HURRAY_OK, "");
    hurray_coo_free(coo);
    CHECK(release_calls == 1 && release_seen == &token);

    /* Copy: right after the copy, before create returns. */
    release_calls = 0;
    CHECK_STATUS(ctest_create_with(0x03, 2, SEED_SHAPE, 3, true, b.values, 12, b.indices, 48, HURRAY_COO_COPY, 1, count_release, &token, NULL, NULL, &coo),
                 HURRAY_OK, "");
    CHECK(release_calls == 1);
    hurray_coo_free(coo);
    CHECK(release_calls == 1);

    /* Failure: before create returns, whatever failed. */
    release_calls = 0;
    CHECK_STATUS(ctest_create_with(0x03, 2, SEED_SHAPE, 3, true, b.values, 11, b.indices, 48, 0, 1, count_release, NULL, NULL, NULL, &coo),
                 HURRAY_ERR_BUFFER_SIZE, "");
    CHECK(release_calls == 1 && release_seen == NULL && coo == NULL);
    CHECK_STATUS(ctest_create_with(0x03, 2, SEED_SHAPE, 3, true, b.values, 12, b.indices, 48, 0, 1, count_release, NULL, NULL, NULL, NULL),
                 HURRAY_ERR_NULL_POINTER, "out");
    CHECK(release_calls == 2);
    CHECK_STATUS(ctest_create_with(0x03, 2, SEED_SHAPE, 3, true, b.values, 12, b.indices, 48, 0x20, 1, count_release, NULL, NULL, NULL, &coo),
                 HURRAY_ERR_INVALID_FLAGS, "");
    CHECK(release_calls == 3);

    /* No callback is fine. */
    CHECK_STATUS(ctest_create_with(0x03, 2, SEED_SHAPE, 3, true, b.values, 12, b.indices, 48, 0, 1, NULL, &token, NULL, NULL, &coo),
                 HURRAY_OK, "");
    hurray_coo_free(coo);
    CHECK(release_calls == 3);
    seed_release(b);
    return failures;
}

static int test_rank_64_and_huge_shapes(void) {
    int failures = 0;
    uint64_t shape[64];
    uint64_t idx[128];
    uint64_t q[64];
    double vals[2] = {3.0, 4.0};
    double *av = alloc64(vals, sizeof vals, 0);
    uint64_t *aidx;
    hurray_coo *coo = NULL;
    double d = 0;
    bool found = false;
    int i;
    for (i = 0; i < 64; i++) {
        shape[i] = (uint64_t)1 << 40; /* 2^2560 elements */
        idx[i] = 0;
        idx[64 + i] = (uint64_t)i;
        q[i] = (uint64_t)i;
    }
    aidx = alloc64(idx, sizeof idx, 0);
    CHECK_STATUS(ctest_create(0x04, 64, shape, 2, true, av, 16, aidx, sizeof idx, 0, &coo),
                 HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 64, &d, &found), HURRAY_OK, "");
    CHECK(found && d == 4.0);
    hurray_coo_free(coo);
    free64(aidx);
    free64(av);
    return failures;
}

/* An export into the memory a borrowed handle reads (its values or its
 * indices) is refused before anything is written; the same export into
 * arrays of its own works. */
static int test_exports_apart_from_the_handle(void) {
    int failures = 0;
    const uint64_t shape[2] = {2, 3}, idx[6] = {0, 0, 0, 2, 1, 2};
    const double vals[3] = {1.0, 2.0, 3.0};
    double *av = alloc64(NULL, 16 * sizeof(double), 0), dense[6];
    uint64_t *ai = alloc64(NULL, 16 * sizeof(uint64_t), 0), offs[3], cols[3];
    hurray_coo *coo = NULL;
    if (av == NULL || ai == NULL) return 1;
    memcpy(av, vals, sizeof vals);
    memcpy(ai, idx, sizeof idx);
    CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT64, 2, shape, 3, true, av, sizeof vals, ai, sizeof idx, 0, &coo),
                 HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_export_dense(coo, av, sizeof dense, 1), HURRAY_ERR_INVALID_ARGUMENT,
                 "and the handle's values (24 bytes at");
    CHECK_STATUS(hurray_coo_export_dense(coo, ai + 5, sizeof dense, 1), HURRAY_ERR_INVALID_ARGUMENT,
                 "and the handle's indices (48 bytes at");
    CHECK_STATUS(ctest_export_compressed(coo, HURRAY_FORMAT_CSR, HURRAY_INDEX_UINT64, 0, offs, sizeof offs, cols,
                                         sizeof cols, av, 3 * sizeof(double), 1),
                 HURRAY_ERR_INVALID_ARGUMENT, "c->values (24 bytes at");
    CHECK_STATUS(ctest_export_compressed(coo, HURRAY_FORMAT_CSR, HURRAY_INDEX_UINT64, 0, ai + 6, sizeof offs, cols,
                                         sizeof cols, dense, 3 * sizeof(double), 1),
                 HURRAY_OK, "");
    CHECK_STATUS(ctest_export_compressed(coo, HURRAY_FORMAT_CSR, HURRAY_INDEX_UINT64, 0, ai + 4, sizeof offs, cols,
                                         sizeof cols, dense, 3 * sizeof(double), 1),
                 HURRAY_ERR_INVALID_ARGUMENT, "c->offsets (24 bytes at");
    CHECK(memcmp(av, vals, sizeof vals) == 0 && memcmp(ai, idx, sizeof idx) == 0);
    CHECK(ai[6] == 0 && ai[7] == 2 && ai[8] == 3 && cols[0] == 0 && cols[1] == 2 && cols[2] == 2);
    CHECK_STATUS(hurray_coo_export_dense(coo, dense, sizeof dense, 1), HURRAY_OK, "");
    CHECK(dense[0] == 1.0 && dense[2] == 2.0 && dense[5] == 3.0 && dense[1] == 0.0);
    hurray_coo_free(coo);
    free64(av);
    free64(ai);
    return failures;
}

static int test_batch_lookup(void) {
    int failures = 0;
    enum { N = 20000 };
    const uint64_t shape[2] = {300, 302};
    static uint64_t idx[2 * 900];
    static double vals[900];
    static uint64_t queries[2 * N];
    static double out[N], out_mt[N];
    static bool found[N], found_mt[N];
    uint64_t q8[8];
    hurray_coo *coo = NULL;
    uint64_t *ai;
    double *av;
    size_t k, n = 0;
    unsigned s = 12345;
    for (k = 0; k < 900; k++) { /* a sorted diagonal band */
        idx[2 * k] = k / 3;
        idx[2 * k + 1] = k / 3 + k % 3;
        vals[k] = (double)k;
    }
    ai = alloc64(idx, sizeof idx, 0);
    av = alloc64(vals, sizeof vals, 0);
    CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT64, 2, shape, 900, true, av, sizeof vals, ai, sizeof idx, 0, &coo),
                 HURRAY_OK, "");
    for (k = 0; k < N; k++) {
        s = s * 1103515245u + 12345u;
        queries[2 * k] = (s >> 8) % 300;
        queries[2 * k + 1] = k % 2 ? queries[2 * k] + (s >> 20) % 3 : (s >> 4) % 300;
        if (queries[2 * k + 1] >= 302) {
            queries[2 * k + 1] = 301;
        }
    }
    CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, N, 2, out, found, 1), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, N, 2, out_mt, found_mt, 4), HURRAY_OK, "");
    for (k = 0; k < N; k++) {
        double d = -1;
        bool f = false;
        CHECK(hurray_coo_lookup_f64(coo, &queries[2 * k], 2, &d, &f) == HURRAY_OK);
        if (out[k] != d || found[k] != f || out_mt[k] != d || found_mt[k] != f) {
            failures++;
            fprintf(stderr, "batch query %zu differs\n", k);
            break;
        }
        n += f;
    }
    CHECK(n > N / 4); /* the queries hit often enough to mean something */
    /* out_found may be NULL; n == 0 needs no pointers at all. */
    CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, 10, 2, out, NULL, 0), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_lookup_batch(coo, NULL, 0, 2, NULL, NULL, 8), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_lookup_batch(coo, NULL, 1, 2, out, NULL, 0), HURRAY_ERR_NULL_POINTER,
                 "queries is NULL");
    CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, 1, 2, NULL, NULL, 0),
                 HURRAY_ERR_NULL_POINTER, "out_values");
    CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, 1, 3, out, NULL, 0),
                 HURRAY_ERR_RANK_MISMATCH, "rank 3");
    CHECK_STATUS(hurray_coo_lookup_batch(coo, (const uint64_t *)((const char *)queries + 4), 1, 2,
                                         out, NULL, 0),
                 HURRAY_ERR_MISALIGNED, "queries");
    CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, SIZE_MAX, 2, out, NULL, 0),
                 HURRAY_ERR_OVERFLOW, "queries");
    queries[2 * 7 + 1] = 302;
    CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, N, 2, out, found, 2),
                 HURRAY_ERR_INDEX_OUT_OF_BOUNDS, "query 7: coordinate 302 in dimension 1");
    CHECK_STATUS(hurray_coo_lookup_batch(NULL, queries, 1, 2, out, NULL, 0),
                 HURRAY_ERR_NULL_POINTER, "coo");
    queries[2 * 7 + 1] = 3;
    /* An output sharing memory with the queries, the other output or the
     * buffers the (borrowed) handle reads is refused, nothing written. */
    out[0] = -7;
    memcpy(q8, queries, sizeof q8);
    CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, 4, 2, (double *)(void *)queries, NULL, 0),
                 HURRAY_ERR_INVALID_ARGUMENT, "and queries (64 bytes at");
    CHECK(memcmp(q8, queries, sizeof q8) == 0);
    CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, 4, 2, out, (bool *)(void *)(out + 3), 0),
                 HURRAY_ERR_INVALID_ARGUMENT, "out_values (32 bytes at");
    CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, 4, 2, av + 10, NULL, 0), HURRAY_ERR_INVALID_ARGUMENT,
                 "the handle's values");
    CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, 4, 2, out, (bool *)(void *)ai, 0),
                 HURRAY_ERR_INVALID_ARGUMENT, "the handle's indices");
    CHECK(out[0] == -7 && vals[10] == 10.0 && av[10] == 10.0);
    /* Apart, the same arrays work. */
    CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, 4, 2, out, (bool *)(void *)(out + 4), 0), HURRAY_OK,
                 "");
    hurray_coo_free(coo);
    free64(ai);
    free64(av);
    return failures;
}

static int test_hash_index(void) {
    int failures = 0;
    enum { N = 5000 };
    const uint64_t shape[2] = {1000, 1000};
    static uint64_t idx[2 * N];
    static float vals[N];
    uint64_t *ai;
    float *av;
    hurray_coo *coo = NULL;
    size_t k;
    for (k = 0; k < N; k++) { /* unsorted, distinct */
        idx[2 * k] = (k * 7919u) % 1000u;
        idx[2 * k + 1] = k / 5;
        vals[k] = (float)k;
    }
    ai = alloc64(idx, sizeof idx, 0);
    av = alloc64(vals, sizeof vals, 0);
    CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT32, 2, shape, N, false, av, sizeof vals, ai, sizeof idx, HURRAY_COO_INDEX, &coo),
                 HURRAY_OK, "");
    CHECK(hurray_coo_flags(coo) == HURRAY_COO_INDEX);
    CHECK(hurray_coo_index_bytes(coo) > 0 && hurray_coo_index_bytes(coo) <= 16 * N + 256);
    for (k = 0; k < N; k += 7) {
        double d = -1;
        bool found = false;
        CHECK(hurray_coo_lookup_f64(coo, &idx[2 * k], 2, &d, &found) == HURRAY_OK);
        CHECK(found && d == (double)k);
    }
    {
        const uint64_t absent[2] = {999, 999};
        double d = -1;
        bool found = true;
        CHECK(hurray_coo_lookup_f64(coo, absent, 2, &d, &found) == HURRAY_OK && !found && d == 0);
    }
    hurray_coo_free(coo);
    free64(ai);
    free64(av);
    return failures;
}

/* A sorted, validated tensor: HURRAY_COO_INDEX is the bucket directory, at
 * most 8 bytes per entry, and every answer (single, batch, hit or miss)
 * equals the one of a handle without an index (which searches through its
 * own directory, built on the first lookup and not counted). */
static int test_sorted_index(void) {
    int failures = 0;
    enum { N = 6000 };
    const uint64_t shape[2] = {3000, 4000};
    static uint64_t idx[2 * N], queries[2 * 2 * N];
    static double vals[N], out[2 * N];
    static bool found_b[2 * N];
    uint64_t *ai;
    double *av;
    hurray_coo *indexed = NULL, *plain = NULL;
    size_t k;
    for (k = 0; k < N; k++) { /* sorted: rows 0, 1, 2, ...; a dense row 7 */
        idx[2 * k] = k < 3000 ? 7 : 8 + (k - 3000) / 3;
        idx[2 * k + 1] = k < 3000 ? k : ((k - 3000) % 3) * 1300 + (k % 11);
        vals[k] = 0.5 + (double)k;
    }
    for (k = 0; k < 2 * N; k++) { /* every entry, and as many neighbours */
        size_t e = k % N;
        queries[2 * k] = idx[2 * e];
        queries[2 * k + 1] = k < N ? idx[2 * e + 1] : (idx[2 * e + 1] + 1 + k % 5) % 4000;
    }
    ai = alloc64(idx, sizeof idx, 0);
    av = alloc64(vals, sizeof vals, 0);
    CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT64, 2, shape, N, true, av, sizeof vals, ai, sizeof idx, HURRAY_COO_INDEX, &indexed),
                 HURRAY_OK, "");
    CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT64, 2, shape, N, true, av, sizeof vals, ai, sizeof idx, 0, &plain),
                 HURRAY_OK, "");
    CHECK(hurray_coo_flags(indexed) == HURRAY_COO_INDEX);
    CHECK(hurray_coo_index_bytes(indexed) > 0 && hurray_coo_index_bytes(indexed) <= 8 * N);
    for (k = 0; k < 2 * N; k++) {
        double a = -1, b = -2;
        bool fa = false, fb = true;
        CHECK(hurray_coo_lookup_f64(indexed, &queries[2 * k], 2, &a, &fa) == HURRAY_OK);
        CHECK(hurray_coo_lookup_f64(plain, &queries[2 * k], 2, &b, &fb) == HURRAY_OK);
        CHECK(a == b && fa == fb);
        if (k < N) CHECK(fa && a == vals[k]);
    }
    CHECK(hurray_coo_index_bytes(plain) == 0);
    CHECK(hurray_coo_lookup_batch(indexed, queries, 2 * N, 2, out, found_b, 1) == HURRAY_OK);
    for (k = 0; k < 2 * N; k++) {
        double b = -2;
        bool fb = true;
        CHECK(hurray_coo_lookup_f64(plain, &queries[2 * k], 2, &b, &fb) == HURRAY_OK);
        CHECK(out[k] == b && found_b[k] == fb);
    }
    hurray_coo_free(indexed);
    hurray_coo_free(plain);
    free64(ai);
    free64(av);
    return failures;
}

/* element-types.md: float8_e8m0 codes 0x00 and 0xFF MUST NOT be data; a
 * reader MUST treat the tensor as invalid. Permissive lookups read them as
 * NaN (the spec calls them NaN), the raw lookup returns the stored code. */
static int test_e8m0_reserved_codes(void) {
    int failures = 0;
    const uint64_t shape[1] = {8};
    const uint64_t idx[4] = {0, 1, 2, 3};
    const uint8_t bad_codes[2] = {0x00, 0xFF};
    size_t k;
    for (k = 0; k < 2; k++) {
        uint8_t vals[4] = {0x7F, 0x80, 0x01, 0xFE};
        void *v;
        uint64_t *ix = alloc64(idx, sizeof idx, 0);
        hurray_coo *coo = (hurray_coo *)1;
        char needle[64];
        double d = 0.0;
        bool found = false;
        uint8_t raw = 0;
        const uint64_t q[1] = {2};
        vals[2] = bad_codes[k];
        v = alloc64(vals, sizeof vals, 0);
        snprintf(needle, sizeof needle, "entry 2: value code 0x%02X", bad_codes[k]);
        CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT8_E8M0, 1, shape, 4, true, v, 4, ix, 32, 0, &coo),
                     HURRAY_ERR_INVALID_VALUE, needle);
        CHECK(coo == NULL);
        CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT8_E8M0, 1, shape, 4, true, v, 4, ix, 32, HURRAY_COO_PERMISSIVE, &coo),
                     HURRAY_OK, "");
        CHECK_STATUS(hurray_coo_validate(coo, 1), HURRAY_ERR_INVALID_VALUE, needle);
        CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 1, &d, &found), HURRAY_OK, "");
        CHECK(found && isnan(d));
        CHECK_STATUS(hurray_coo_lookup(coo, q, 1, &raw, 1, &found), HURRAY_OK, "");
        CHECK(found && raw == bad_codes[k]);
        hurray_coo_free(coo);
        free64(v);
        free64(ix);
    }
    return failures;
}

/* xorshift64, one step. */
static uint64_t next_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* One probe and one library call on the same query: the same status, the
 * same message on failure, the same value and found flag on success. */
static int probe_agrees(const hurray_lookup_view *v, hurray_coo *coo, const uint64_t *q,
                        uint32_t rank) {
    int failures = 0;
    double a = -1.0, b = -2.0;
    bool fa = false, fb = true;
    char msg[512];
    hurray_status sa = hurray_coo_probe_f64(v, q, rank, &a, &fa);
    snprintf(msg, sizeof msg, "%s", hurray_last_error_message());
    {
        hurray_status sb = hurray_coo_lookup_f64(coo, q, rank, &b, &fb);
        CHECK(sa == sb);
        if (sa == HURRAY_OK && sb == HURRAY_OK) {
            CHECK(fa == fb && memcmp(&a, &b, sizeof a) == 0);
        } else {
            CHECK(strcmp(msg, hurray_last_error_message()) == 0);
        }
    }
    return failures;
}

/* hurray_coo_probe.h: the inline probe answers what hurray_coo_lookup_f64
 * answers, on random sorted tensors of rank 1-4 (small, wide and huge
 * shapes, a crowded bucket), with and without an index, permissive with a
 * true and a false claim of order, float64 and float32; and it answers in
 * place where the view has a directory (a copy of the view whose coo is
 * NULL still answers), calling the library where it has none. */
static int test_lookup_probe(void) {
    int failures = 0;
    enum { MAXN = 400, CASES = 240 };
    static uint64_t keys[MAXN], idx[4 * MAXN];
    static double vals[MAXN];
    static float vals32[MAXN];
    uint64_t rng = 0xC0FFEE;
    int c, in_place = 0, delegated = 0;
    for (c = 0; c < CASES; c++) {
        uint32_t rank = 1 + (uint32_t)(c % 4), d;
        uint64_t shape[4], elements = 1, n, i, k, q[4];
        int kind = (c / 4) % 4; /* small, wide, huge, crowded */
        int mode = (c / 16) % 6; /* plain, index, index+values, permissive true/false, float32 */
        uint32_t flags = mode == 1 ? HURRAY_COO_INDEX
                         : mode == 2 ? HURRAY_COO_INDEX_VALUES
                         : mode == 3 || mode == 4 ? HURRAY_COO_PERMISSIVE
                                                  : 0;
        uint64_t *ai;
        void *av;
        hurray_coo *coo = NULL;
        hurray_lookup_view v, w, vw;
        uint64_t *wide;
        bool crowded = kind == 3 && rank >= 2;
        for (d = 0; d < rank; d++) {
            shape[d] = kind == 0   ? 1 + next_rand(&rng) % 12
                       : kind == 1 ? (UINT64_C(1) << 12) + next_rand(&rng) % (UINT64_C(1) << 8)
                       : kind == 2 ? (UINT64_C(1) << (60 / rank)) - next_rand(&rng) % 7
                                   : 64;
            elements *= shape[d];
        }
        n = next_rand(&rng) % MAXN;
        for (i = 0; i < n; i++) {
            keys[i] = next_rand(&rng) % elements;
            if (crowded && i % 2 == 0) {
                keys[i] = 5 * shape[rank - 1] + i / 2 % shape[rank - 1]; /* row 5: dense */
            }
        }
        qsort(keys, (size_t)n, sizeof keys[0], cmp_u64);
        for (i = 0, k = 0; i < n; i++) {
            if (k == 0 || keys[i] != keys[k - 1]) keys[k++] = keys[i];
        }
        n = k;
        for (i = 0; i < n; i++) {
            uint64_t rest = keys[i];
            for (d = rank; d-- > 0;) {
                idx[i * rank + d] = rest % shape[d];
                rest /= shape[d];
            }
            vals[i] = 0.25 + (double)i;
            vals32[i] = (float)vals[i];
        }
        if (mode == 4 && n >= 2) { /* claims sorted, is not */
            for (d = 0; d < rank; d++) {
                uint64_t t = idx[d];
                idx[d] = idx[(n - 1) * rank + d];
                idx[(n - 1) * rank + d] = t;
            }
        }
        ai = alloc64(idx, (size_t)(8 * rank * n), 0);
        av = mode == 5 ? alloc64(vals32, (size_t)(4 * n), 0) : alloc64(vals, (size_t)(8 * n), 0);
        CHECK_STATUS(ctest_create(mode == 5 ? HURRAY_TYPE_FLOAT32 : HURRAY_TYPE_FLOAT64, rank,
                                  shape, n, true, av, (size_t)((mode == 5 ? 4 : 8) * n), ai,
                                  (size_t)(8 * rank * n), flags, &coo),
                     HURRAY_OK, "");
        memset(&v, 0xAB, sizeof v);
        v.size = sizeof v;
        CHECK_STATUS(hurray_coo_lookup_view(coo, &v), HURRAY_OK, "");
        CHECK(v.version == HURRAY_LOOKUP_VIEW_VERSION && v.rank == rank && v.nnz == n &&
              v.coo == coo && v.reserved == 0);
        CHECK((v.values_f64 != NULL) == (mode != 5 && n > 0));
        if (n > 0 && (mode == 0 || mode == 3)) CHECK(v.offset_bytes == 4 && v.low_bytes == 0);
        if (n > 0 && mode == 1 && (kind == 0 || (kind == 1 && rank <= 2))) CHECK(v.offset_bytes == 4 && v.low_bytes != 0);
        if (mode == 4 && n >= 3) CHECK(v.offset_bytes == 0);
        w = v;
        w.coo = NULL;
        /* The 8-byte offsets (tensors past 2^32 entries): the same offsets
         * widened, read by the documented layout, give the same answers. */
        wide = NULL;
        vw = w;
        if (v.offset_bytes == 4) {
            uint64_t buckets = v.shift >= 64 ? 1 : ((elements - 1) >> v.shift) + 1, b;
            wide = (uint64_t *)malloc((size_t)(8 * (buckets + 1)));
            CHECK(wide != NULL);
            if (wide != NULL) {
                for (b = 0; b <= buckets; b++) wide[b] = ((const uint32_t *)v.offsets)[b];
                CHECK(wide[buckets] == n);
                vw.offsets = wide;
                vw.offset_bytes = 8;
            }
        }
        for (k = 0; k < 3 * n + 40; k++) {
            int outside = k >= 3 * n && k % 4 == 0;
            for (d = 0; d < rank; d++) {
                q[d] = k < n ? idx[k * rank + d] : next_rand(&rng) % shape[d];
                if (k >= n && k < 2 * n && d == rank - 1) q[d] = (idx[(k - n) * rank + d] + 1) % shape[d];
            }
            if (outside) q[k % rank] = shape[k % rank] + (k & 1 ? 0 : UINT64_C(1) << 62);
            failures += probe_agrees(&v, coo, q, rank);
            if (v.offset_bytes != 0 && v.values_f64 != NULL && !outside) {
                double a = -1.0, b = -2.0;
                bool fa = false, fb = true;
                hurray_status st = hurray_coo_probe_f64(&w, q, rank, &a, &fa);
                CHECK(hurray_coo_lookup_f64(coo, q, rank, &b, &fb) == HURRAY_OK);
                if (!crowded) CHECK(st == HURRAY_OK);
                if (st == HURRAY_OK) {
                    CHECK(fa == fb && a == b);
                    in_place++;
                } else {
                    CHECK(st == HURRAY_ERR_NULL_POINTER); /* a long bucket: the call */
                    delegated++;
                }
                if (wide != NULL) {
                    double c8 = -3.0;
                    bool f8 = false;
                    hurray_status s8 = hurray_coo_probe_f64(&vw, q, rank, &c8, &f8);
                    CHECK(s8 == st);
                    if (s8 == HURRAY_OK) CHECK(f8 == fb && c8 == b);
                }
            }
        }
        free(wide);
        /* Arguments the probe hands to the call, with its status and message. */
        q[0] = 0;
        failures += probe_agrees(&v, coo, q, rank + 1);
        failures += probe_agrees(&v, coo, NULL, rank);
        {
            double x = 0.0;
            CHECK_STATUS(hurray_coo_probe_f64(&v, q, rank, NULL, NULL), HURRAY_ERR_NULL_POINTER, "out_value");
            CHECK_STATUS(hurray_coo_probe_f64(NULL, q, rank, &x, NULL), HURRAY_ERR_NULL_POINTER, "coo");
            w = v;
            w.version = HURRAY_LOOKUP_VIEW_VERSION + 1; /* a view of another layout: the call */
            w.offsets = NULL;
            failures += probe_agrees(&w, coo, q, rank);
        }
        hurray_coo_free(coo);
        free64(ai);
        free64(av);
    }
    CHECK(in_place > 10000 && delegated > 0);
    {
        hurray_lookup_view v;
        const uint64_t shape[1] = {4};
        hurray_coo *coo = NULL;
        CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT64, 1, shape, 0, true, NULL, 0, NULL, 0, 0, &coo),
                     HURRAY_OK, "");
        v.size = sizeof v - 1;
        CHECK_STATUS(hurray_coo_lookup_view(coo, &v), HURRAY_ERR_BUFFER_TOO_SMALL, "sizeof(hurray_lookup_view)");
        CHECK_STATUS(hurray_coo_lookup_view(coo, NULL), HURRAY_ERR_NULL_POINTER, "out");
        v.size = sizeof v;
        CHECK_STATUS(hurray_coo_lookup_view(NULL, &v), HURRAY_ERR_NULL_POINTER, "coo");
        CHECK_STATUS(hurray_coo_lookup_view(coo, &v), HURRAY_OK, "");
        CHECK(v.offset_bytes == 0 && v.values_f64 == NULL && v.nnz == 0);
        hurray_coo_free(coo);
    }
    return failures;
}

/* One definition of a lookup on data that was never validated: the
 * lowest-numbered entry with the query's coordinates. Single, indexed and
 * batch lookups (1 and 2 threads) agree with it on random permissive data
 * with wrong flags, duplicates and entries outside the shape. */
static int test_unvalidated_lookups_agree(void) {
    int failures = 0;
    uint64_t rng = 0x1234567;
    int round;
    for (round = 0; round < 200; round++) {
        uint64_t shape[2], n, i, nq = 0;
        uint64_t flat[2 * 16], queries[2 * 64];
        double vals[16], out[64];
        bool found_b[64];
        int idx_flag;
        shape[0] = 1 + next_rand(&rng) % 4;
        shape[1] = 1 + next_rand(&rng) % 4;
        n = next_rand(&rng) % 16;
        for (i = 0; i < n; i++) {
            uint64_t extra = next_rand(&rng) % 8 == 0; /* sometimes outside the shape */
            flat[2 * i] = next_rand(&rng) % (shape[0] + extra);
            flat[2 * i + 1] = next_rand(&rng) % shape[1];
            vals[i] = (double)i + 1.0;
        }
        {
            uint64_t a, b;
            for (a = 0; a < shape[0]; a++)
                for (b = 0; b < shape[1]; b++) {
                    queries[2 * nq] = a;
                    queries[2 * nq + 1] = b;
                    nq++;
                }
        }
        for (idx_flag = 0; idx_flag < 3; idx_flag++) {
            uint64_t *ix = alloc64(n ? flat : NULL, 16 * n, 0);
            double *vv = alloc64(n ? vals : NULL, 8 * n, 0);
            hurray_coo *coo = NULL;
            uint64_t k;
            /* none, HURRAY_COO_INDEX, HURRAY_COO_INDEX_VALUES (the index
             * keeps the first entry's value of each key) */
            const uint32_t idx_flags[3] = {0, HURRAY_COO_INDEX, HURRAY_COO_INDEX_VALUES};
            uint32_t flags = HURRAY_COO_PERMISSIVE | idx_flags[idx_flag];
            CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT64, 2, shape, n, (next_rand(&rng) & 1) != 0, n ? vv : NULL, 8 * n, n ? ix : NULL, 16 * n, flags, &coo),
                         HURRAY_OK, "");
            CHECK_STATUS(hurray_coo_lookup_batch(coo, queries, nq, 2, out, found_b, (uint32_t)(1 + round % 2)),
                         HURRAY_OK, "");
            for (k = 0; k < nq; k++) {
                double want = 0.0, d = -1.0;
                bool want_found = false, got_found = true;
                for (i = 0; i < n; i++) {
                    if (flat[2 * i] == queries[2 * k] && flat[2 * i + 1] == queries[2 * k + 1]) {
                        want = vals[i];
                        want_found = true;
                        break;
                    }
                }
                CHECK_STATUS(hurray_coo_lookup_f64(coo, &queries[2 * k], 2, &d, &got_found),
                             HURRAY_OK, "");
                CHECK(d == want && got_found == want_found);
                CHECK(out[k] == want && found_b[k] == want_found);
            }
            hurray_coo_free(coo);
            free64(ix);
            free64(vv);
        }
    }
    return failures;
}

/* Validated handles of every lookup kind (no index: the sorted search;
 * HURRAY_COO_INDEX; HURRAY_COO_INDEX_VALUES), float64 and float32, ranks 1
 * to 4: hurray_coo_lookup_f64 answers every coordinate of the shape as a
 * scan of the entries does, and refuses what it must, with the query
 * aligned or not. Covers the library's fast path and its checked path. */
static int test_validated_lookups_agree(void) {
    int failures = 0;
    uint64_t rng = 0x5eed;
    int round;
    for (round = 0; round < 24; round++) {
        const uint32_t rank = 1 + (uint32_t)round % 4;
        const bool f32 = round % 3 == 2;
        uint64_t shape[4] = {1, 1, 1, 1}, total = 1, n = 0, k, e;
        uint64_t flat[4 * 200];
        double vals[200];
        float vals32[200];
        uint32_t d, fi;
        for (d = 0; d < rank; d++) {
            shape[d] = 1 + next_rand(&rng) % 6;
            total *= shape[d];
        }
        /* Each element of the shape, in order, stored with probability 1/2:
         * sorted, distinct, inside the shape. */
        for (k = 0; k < total && n < 200; k++) {
            uint64_t rest = k;
            if (next_rand(&rng) % 2) continue;
            for (d = rank; d-- > 0;) {
                flat[n * rank + d] = rest % shape[d];
                rest /= shape[d];
            }
            vals[n] = (double)n + 1.5;
            vals32[n] = (float)n + 1.5f;
            n++;
        }
        for (fi = 0; fi < 3; fi++) {
            const uint32_t flags[3] = {0, HURRAY_COO_INDEX, HURRAY_COO_INDEX_VALUES};
            uint64_t *ix = alloc64(n ? flat : NULL, 8 * rank * n, 0);
            void *vv = f32 ? alloc64(n ? (const void *)vals32 : NULL, 4 * n, 0)
                           : alloc64(n ? (const void *)vals : NULL, 8 * n, 0);
            uint64_t q[5];
            uint64_t *skewed = alloc64(NULL, 8 * 6, 0);
            hurray_coo *coo = NULL;
            CHECK_STATUS(ctest_create(f32 ? HURRAY_TYPE_FLOAT32 : HURRAY_TYPE_FLOAT64, rank, shape, n, true, n ? vv : NULL, (f32 ? 4 : 8) * n, n ? ix : NULL, 8 * rank * n, flags[fi], &coo),
                         HURRAY_OK, "");
            for (k = 0; k < total; k++) {
                uint64_t rest = k;
                double want = 0.0, got = -1.0, got2 = -1.0;
                bool want_found = false, found = true, found2 = true;
                for (d = rank; d-- > 0;) {
                    q[d] = rest % shape[d];
                    rest /= shape[d];
                }
                for (e = 0; e < n; e++) {
                    if (memcmp(&flat[e * rank], q, 8 * rank) == 0) {
                        want = vals[e];
                        want_found = true;
                    }
                }
                CHECK_STATUS(hurray_coo_lookup_f64(coo, q, rank, &got, &found), HURRAY_OK, "");
                CHECK(got == want && found == want_found);
                /* The same query 4 bytes off alignment: the checked path. */
                memcpy((char *)skewed + 4, q, 8 * rank);
                CHECK_STATUS(hurray_coo_lookup_f64(coo, (const uint64_t *)((char *)skewed + 4),
                                                   rank, &got2, &found2),
                             HURRAY_OK, "");
                CHECK(got2 == want && found2 == want_found);
            }
            /* Outside the shape, in the last dimension: refused, outputs kept. */
            for (d = 0; d < rank; d++) q[d] = 0;
            q[rank - 1] = shape[rank - 1];
            {
                double keep = 7.0;
                CHECK_STATUS(hurray_coo_lookup_f64(coo, q, rank, &keep, NULL),
                             HURRAY_ERR_INDEX_OUT_OF_BOUNDS, "");
                CHECK(keep == 7.0);
                q[rank - 1] = 0;
                CHECK_STATUS(hurray_coo_lookup_f64(coo, q, rank + 1, &keep, NULL),
                             HURRAY_ERR_RANK_MISMATCH, "");
                CHECK_STATUS(hurray_coo_lookup_f64(coo, q, rank, NULL, NULL),
                             HURRAY_ERR_NULL_POINTER, "out_value");
                CHECK(keep == 7.0);
            }
            hurray_coo_free(coo);
            free64(ix);
            free64(vv);
            free64(skewed);
        }
    }
    return failures;
}

/* hurray_coo_values / hurray_coo_indices: NULL for an empty buffer, the
 * caller's own pointer when borrowed, 64-byte aligned always. */
static int test_empty_buffers_are_null(void) {
    int failures = 0;
    const uint64_t shape[2] = {0, 5};
    uint32_t flags[2] = {HURRAY_COO_BORROW, HURRAY_COO_COPY};
    size_t k;
    for (k = 0; k < 2; k++) {
        hurray_coo *coo = NULL;
        size_t bytes = 99;
        uint8_t dummy[8];
        /* An empty buffer passed as a non-NULL pointer (the spec allows both). */
        CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT32, 2, shape, 0, true, dummy + 1, 0, (const uint64_t *)(void *)(dummy + 1), 0, flags[k], &coo),
                     HURRAY_OK, "");
        CHECK(hurray_coo_values(coo, &bytes) == NULL && bytes == 0);
        bytes = 99;
        CHECK(hurray_coo_indices(coo, &bytes) == NULL && bytes == 0);
        hurray_coo_free(coo);
    }
    {
        seed_bufs b = seed_alloc();
        hurray_coo *coo = NULL;
        size_t bytes = 0;
        CHECK_STATUS(seed_create(b, 0, &coo), HURRAY_OK, "");
        CHECK(hurray_coo_values(coo, &bytes) == b.values && bytes == 12);
        CHECK(hurray_coo_indices(coo, &bytes) == b.indices && bytes == 48);
        hurray_coo_free(coo);
        CHECK_STATUS(seed_create(b, HURRAY_COO_COPY, &coo), HURRAY_OK, "");
        CHECK(((uintptr_t)hurray_coo_values(coo, &bytes) % 64) == 0 && bytes == 12);
        hurray_coo_free(coo);
        seed_release(b);
    }
    return failures;
}

/* The mean merges the implicit zeros without cancellation: shape 2^64
 * elements, values {1.5, -0.5}, mean 1/2^64 = 5.42e-20. */
static int test_statistics_at_extreme_sparsity(void) {
    int failures = 0;
    const uint64_t shape[2] = {UINT64_C(1) << 32, UINT64_C(1) << 32};
    const double vals[2] = {1.5, -0.5};
    const uint64_t idx[4] = {0, 0, 7, 9};
    double *v = alloc64(vals, sizeof vals, 0);
    uint64_t *ix = alloc64(idx, sizeof idx, 0);
    hurray_coo *coo = NULL;
    hurray_statistics s;
    CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT64, 2, shape, 2, true, v, 16, ix, 32, 0, &coo),
                 HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_statistics(coo, &s), HURRAY_OK, "");
    CHECK(s.computed_mask & HURRAY_STAT_VALUE_STATS);
    CHECK(fabs(s.value_mean - ldexp(1.0, -64)) <= 1e-12 * ldexp(1.0, -64));
    /* Population variance: (1.5^2 + 0.5^2) / 2^64 - mean^2 = 2.5 / 2^64. */
    CHECK(fabs(s.value_stddev - sqrt(ldexp(2.5, -64))) <= 1e-9 * sqrt(ldexp(2.5, -64)));
    hurray_coo_free(coo);
    free64(v);
    free64(ix);
    return failures;
}

/* HURRAY_COO_ONE_BASED_MESSAGES: messages count from 1 for the handle's
 * creation and every later call; statuses and the API stay as they are. */
static int test_one_based_messages(void) {
    int failures = 0;
    const uint64_t shape[2] = {4, 4};
    const float vals[3] = {1.5f, -0.5f, 2.0f};
    const uint64_t dup_idx[6] = {0, 1, 2, 0, 2, 0};
    seed_bufs b = seed_alloc();
    hurray_coo *coo = NULL;
    const uint64_t q[2] = {4, 0};
    double d;
    CHECK_STATUS(ctest_create(0x03, 2, shape, 3, false, vals, 12, dup_idx, 48, HURRAY_COO_COPY | HURRAY_COO_ONE_BASED_MESSAGES, &coo),
                 HURRAY_ERR_DUPLICATE, "entry 3 duplicates entry 2 at (3, 1) [entries");
    CHECK_STATUS(seed_create(b, HURRAY_COO_ONE_BASED_MESSAGES, &coo), HURRAY_OK, "");
    CHECK(hurray_coo_flags(coo) == HURRAY_COO_ONE_BASED_MESSAGES);
    CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 2, &d, NULL), HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                 "query coordinate 5 in dimension 1 is out of bounds (valid 1 to 4)");
    {
        double out[2];
        const uint64_t qs[4] = {0, 0, 0, 9};
        CHECK_STATUS(hurray_coo_lookup_batch(coo, qs, 2, 2, out, NULL, 1),
                     HURRAY_ERR_INDEX_OUT_OF_BOUNDS, "query 2: coordinate 10 in dimension 2");
    }
    hurray_coo_free(coo);
    /* Without the flag, the same call speaks 0-based. */
    CHECK_STATUS(seed_create(b, 0, &coo), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 2, &d, NULL), HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                 "query coordinate 4 in dimension 0 is out of bounds (shape[0] = 4)");
    hurray_coo_free(coo);
    seed_release(b);
    return failures;
}

/* The last error's place as fields (hurray_last_error_position): the
 * numbers the message names, for a program to read without parsing text. */
static hurray_error_position last_position(void) {
    hurray_error_position p;
    memset(&p, 0xA5, sizeof p);
    p.size = sizeof p;
    (void)hurray_last_error_position(&p);
    return p;
}

static int test_error_positions(void) {
    int failures = 0;
    const uint64_t shape[2] = {4, 4};
    const float vals[3] = {1.5f, -0.5f, 2.0f};
    const uint64_t oob_idx[6] = {0, 1, 2, 7, 3, 3};
    const uint64_t dup_idx[6] = {0, 1, 2, 0, 2, 0};
    hurray_coo *coo = NULL;
    hurray_error_position p;
    /* An out-of-bounds entry: entry 1, dimension 1, coordinate 7, at (2, 7). */
    CHECK_STATUS(ctest_create(0x03, 2, shape, 3, false, vals, 12, oob_idx, 48, HURRAY_COO_COPY, &coo),
                 HURRAY_ERR_INDEX_OUT_OF_BOUNDS, "entry 1 at (2, 7)");
    p = last_position();
    CHECK(p.status == HURRAY_ERR_INDEX_OUT_OF_BOUNDS && p.base == 0);
    CHECK(p.set == (HURRAY_POS_ENTRY | HURRAY_POS_DIM | HURRAY_POS_COORDINATE |
                    HURRAY_POS_COORDINATES));
    CHECK(p.entry == 1 && p.dim == 1 && p.coordinate == 7);
    CHECK(p.rank == 2 && p.coordinates[0] == 2 && p.coordinates[1] == 7);
    CHECK(strcmp(p.detail, hurray_last_error_message()) == 0);
    /* Reading it again changes nothing. */
    p = last_position();
    CHECK(p.status == HURRAY_ERR_INDEX_OUT_OF_BOUNDS && strstr(hurray_last_error_message(), "entry 1"));
    /* A duplicate, in the handle's 1-based counting. */
    CHECK_STATUS(ctest_create(0x03, 2, shape, 3, false, vals, 12, dup_idx, 48, HURRAY_COO_COPY | HURRAY_COO_ONE_BASED_MESSAGES, &coo),
                 HURRAY_ERR_DUPLICATE, "entry 3 duplicates entry 2 at (3, 1)");
    p = last_position();
    CHECK(p.status == HURRAY_ERR_DUPLICATE && p.base == 1);
    CHECK(p.set == (HURRAY_POS_ENTRY | HURRAY_POS_OTHER_ENTRY | HURRAY_POS_COORDINATES));
    CHECK(p.entry == 3 && p.other_entry == 2 && p.rank == 2);
    CHECK(p.coordinates[0] == 3 && p.coordinates[1] == 1);
    /* A triplet below the base: a negative coordinate as written. */
    {
        const int32_t rows[2] = {1, -4}, cols[2] = {1, 2};
        const void *dims[2] = {rows, cols};
        const double v[2] = {1, 2};
        hurray_triplets t;
        memset(&t, 0, sizeof t);
        t.rank = 2;
        t.shape = shape;
        t.n = 2;
        t.index_type = HURRAY_INDEX_INT32;
        t.index_base = 1;
        t.dim_indices = dims;
        t.dim_indices_bytes = sizeof rows;
        t.type_tag = HURRAY_TYPE_FLOAT64;
        t.values = v;
        t.values_bytes = sizeof v;
        CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(HURRAY_DUP_ERROR, 0, 1), &coo, NULL),
                     HURRAY_ERR_INDEX_OUT_OF_BOUNDS, "triplet 2: coordinate -4 in dimension 1");
        p = last_position();
        CHECK(p.base == 1 && p.entry == 2 && p.dim == 1 && (int64_t)p.coordinate == -4);
        CHECK(p.set == (HURRAY_POS_ENTRY | HURRAY_POS_DIM | HURRAY_POS_COORDINATE));
    }
    /* A parse error: line and column. */
    {
        static const char bad[] = "%%MatrixMarket matrix coordinate real general\n"
                                  "2 2 2\n1 1 1\n1 3 1\n";
        static const char dup[] = "%%MatrixMarket matrix coordinate real general\n"
                                  "2 2 2\n1 2 1\n% c\n1 2 5\n";
        CHECK_STATUS(hurray_coo_read_mtx(bad, strlen(bad), CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                     HURRAY_ERR_PARSE, "line 4, column 3: column index out of range");
        p = last_position();
        CHECK(p.status == HURRAY_ERR_PARSE && p.set == (HURRAY_POS_LINE | HURRAY_POS_COLUMN));
        CHECK(p.line == 4 && p.column == 3);
        CHECK(strncmp(p.detail, "column index out of range", 25) == 0);
        CHECK_STATUS(hurray_coo_read_mtx(dup, strlen(dup), CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                     HURRAY_ERR_DUPLICATE, "line 5 duplicates line 3");
        p = last_position();
        CHECK(p.set == (HURRAY_POS_LINE | HURRAY_POS_OTHER_LINE | HURRAY_POS_COORDINATES));
        CHECK(p.line == 5 && p.other_line == 3 && p.base == 1 && p.coordinates[1] == 2);
    }
    /* A corrupt descriptor: the byte offset. */
    {
        static const uint8_t junk[8] = {'H', 'R', 'R', 'X', 1, 0, 0, 0};
        hurray_descriptor_info info;
        CHECK(hurray_descriptor_inspect(junk, 3, 0, &info) != HURRAY_OK);
        p = last_position();
        CHECK(p.status == HURRAY_ERR_TRUNCATED && (p.set & HURRAY_POS_BYTE_OFFSET) &&
              p.byte_offset == 0);
    }
    /* After a success: nothing is set. */
    CHECK_STATUS(hurray_type_values_bytes(HURRAY_TYPE_FLOAT64, 1, &(uint64_t){0}), HURRAY_OK, "");
    p = last_position();
    CHECK(p.status == HURRAY_OK && p.set == 0 && p.detail != NULL && p.detail[0] == '\0');
    /* Hostile calls change nothing and never crash. */
    CHECK(hurray_last_error_position(NULL) == HURRAY_ERR_NULL_POINTER);
    p.size = sizeof p - 1;
    CHECK(hurray_last_error_position(&p) == HURRAY_ERR_BUFFER_SIZE);
    return failures;
}

static int options_releases;
static void options_release(void *ctx) { options_releases += ctx == (void *)&options_releases; }

/* hurray_coo_create's parts and options as a caller fills them: NULL
 * options are the defaults, a zeroed struct with its size too, options
 * combine (threads, a callback and a shard box at once), and bad options
 * are refused by name. */
static int test_create_options(void) {
    int failures = 0;
    seed_bufs b = seed_alloc();
    const uint64_t shape[2] = {4, 4}, parent[2] = {10, 4}, offset[2] = {6, 0};
    hurray_coo_parts p;
    hurray_coo_options o;
    hurray_coo *coo = (hurray_coo *)&failures;
    memset(&p, 0, sizeof p);
    p.type_tag = HURRAY_TYPE_FLOAT32;
    p.rank = 2;
    p.shape = shape;
    p.nnz = 3;
    p.is_sorted = true;
    p.values = b.values;
    p.values_bytes = 12;
    p.indices = b.indices;
    p.indices_bytes = 48;
    CHECK_STATUS(hurray_coo_create(&p, NULL, &coo), HURRAY_OK, "");
    CHECK(hurray_coo_flags(coo) == HURRAY_COO_BORROW && hurray_coo_nnz(coo) == 3);
    hurray_coo_free(coo);
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    CHECK_STATUS(hurray_coo_create(&p, &o, &coo), HURRAY_OK, "");
    hurray_coo_free(coo);
    /* Everything at once: copy, index, 2 threads, a callback, a shard box. */
    o.flags = HURRAY_COO_COPY | HURRAY_COO_INDEX;
    o.threads = 2;
    o.release = options_release;
    o.release_ctx = &options_releases;
    o.shard_parent_shape = parent;
    o.shard_offset = offset;
    options_releases = 0;
    CHECK_STATUS(hurray_coo_create(&p, &o, &coo), HURRAY_OK, "");
    CHECK(options_releases == 1); /* copied: released before returning */
    {
        const uint64_t *ps = NULL, *po = NULL;
        bool present = false;
        const uint64_t g[2] = {8, 0};
        double d = 0;
        CHECK_STATUS(hurray_coo_shard(coo, &ps, &po, &present), HURRAY_OK, "");
        CHECK(present && ps[0] == 10 && po[0] == 6);
        CHECK(hurray_coo_flags(coo) == (HURRAY_COO_COPY | HURRAY_COO_INDEX));
        CHECK_STATUS(hurray_coo_lookup_global_f64(coo, g, 2, &d, NULL), HURRAY_OK, "");
        CHECK(d == -0.5); /* local (2, 0) */
    }
    hurray_coo_free(coo);
    /* A failure calls the callback too, exactly once. */
    options_releases = 0;
    o.shard_parent_shape = shape; /* offset 6 + extent 4 > parent 4 */
    o.shard_offset = offset;
    CHECK_STATUS(hurray_coo_create(&p, &o, &coo), HURRAY_ERR_INVALID_SHAPE, "exceeds parent extent");
    CHECK(coo == NULL && options_releases == 1);
    /* Half a shard box, a size too small, NULL parts: refused by name. */
    o.shard_parent_shape = parent;
    o.shard_offset = NULL;
    options_releases = 0;
    CHECK_STATUS(hurray_coo_create(&p, &o, &coo), HURRAY_ERR_NULL_POINTER,
                 "a shard box needs both");
    CHECK(coo == NULL && options_releases == 1);
    o.shard_parent_shape = NULL;
    o.size = sizeof o - 1;
    coo = (hurray_coo *)&failures;
    CHECK_STATUS(hurray_coo_create(&p, &o, &coo), HURRAY_ERR_INVALID_ARGUMENT,
                 "options->size is");
    CHECK(coo == NULL);
    o.size = sizeof o;
    coo = (hurray_coo *)&failures;
    CHECK_STATUS(hurray_coo_create(NULL, &o, &coo), HURRAY_ERR_NULL_POINTER, "parts");
    CHECK(coo == NULL);
    CHECK_STATUS(hurray_coo_create(&p, NULL, NULL), HURRAY_ERR_NULL_POINTER, "out");
    seed_release(b);
    return failures;
}

/* Create and validate on threads: the same handle and the same first
 * violation as on one thread, on a tensor large enough to split. */
static int test_threaded_create_and_validate(void) {
    int failures = 0;
    const uint64_t n = 300000, shape[2] = {n + 7, 3};
    uint64_t *idx = malloc(2 * n * sizeof *idx);
    double *val = malloc(n * sizeof *val);
    void *xi, *xv;
    hurray_coo *one = NULL, *two = NULL;
    char msg1[256];
    uint64_t i;
    /* Unsorted (reversed) and distinct. */
    for (i = 0; i < n; i++) {
        idx[2 * i] = n - i;
        idx[2 * i + 1] = i % 3;
        val[i] = (double)i;
    }
    xi = alloc64(idx, 2 * n * sizeof *idx, 0);
    xv = alloc64(val, n * sizeof *val, 0);
    CHECK_STATUS(ctest_create_with(HURRAY_TYPE_FLOAT64, 2, shape, n, false, xv, n * sizeof *val, xi, 2 * n * sizeof *idx, 0, 2, NULL, NULL, NULL, NULL, &two),
                 HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_validate(two, 4), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_validate(NULL, 4), HURRAY_ERR_NULL_POINTER, "coo");
    hurray_coo_free(two);
    two = NULL;
    free64(xi);
    /* A duplicate near the end: the same message from 1 and 3 threads. */
    idx[2 * (n - 3)] = idx[2 * 5];
    idx[2 * (n - 3) + 1] = idx[2 * 5 + 1];
    xi = alloc64(idx, 2 * n * sizeof *idx, 0);
    CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT64, 2, shape, n, false, xv, n * sizeof *val, xi, 2 * n * sizeof *idx, 0, &one),
                 HURRAY_ERR_DUPLICATE, "entry 299997 duplicates entry 5");
    strncpy(msg1, hurray_last_error_message(), sizeof msg1 - 1);
    msg1[sizeof msg1 - 1] = '\0';
    CHECK_STATUS(ctest_create_with(HURRAY_TYPE_FLOAT64, 2, shape, n, false, xv, n * sizeof *val, xi, 2 * n * sizeof *idx, 0, 3, NULL, NULL, NULL, NULL, &two),
                 HURRAY_ERR_DUPLICATE, msg1);
    CHECK(one == NULL && two == NULL);
    free64(xi);
    free64(xv);
    free(idx);
    free(val);
    return failures;
}

static const struct {
    const char *name;
    ctest_fn fn;
} TESTS[] = {
    {"create_options", test_create_options},
    {"error_positions", test_error_positions},
    {"threaded_create_and_validate", test_threaded_create_and_validate},
    {"one_based_messages", test_one_based_messages},
    {"e8m0_reserved_codes", test_e8m0_reserved_codes},
    {"unvalidated_lookups_agree", test_unvalidated_lookups_agree},
    {"validated_lookups_agree", test_validated_lookups_agree},
    {"empty_buffers_are_null", test_empty_buffers_are_null},
    {"statistics_at_extreme_sparsity", test_statistics_at_extreme_sparsity},
    {"hash_index", test_hash_index},
    {"sorted_index", test_sorted_index},
    {"lookup_probe", test_lookup_probe},
    {"batch_lookup", test_batch_lookup},
    {"exports_apart_from_the_handle", test_exports_apart_from_the_handle},
    {"seed_example", test_seed_example},
    {"copy_mode_owns_its_memory", test_copy_mode_owns_its_memory},
    {"null_pointers_never_crash", test_null_pointers_never_crash},
    {"structural_errors_name_the_culprit", test_structural_errors_name_the_culprit},
    {"data_errors_name_entry_dimension_and_values",
     test_data_errors_name_entry_dimension_and_values},
    {"every_type_tag", test_every_type_tag},
    {"lookup_contract", test_lookup_contract},
    {"status_names_and_messages", test_status_names_and_messages},
    {"versions_agree", test_versions_agree},
    {"release_callback_runs_exactly_once", test_release_callback_runs_exactly_once},
    {"rank_64_and_huge_shapes", test_rank_64_and_huge_shapes},
};

/* Entry points for the Rust runner. */
size_t ctest_api_count(void);
const char *ctest_api_name(size_t i);
int ctest_api_run(size_t i);

size_t ctest_api_count(void) { return sizeof TESTS / sizeof TESTS[0]; }
const char *ctest_api_name(size_t i) { return i < ctest_api_count() ? TESTS[i].name : NULL; }
int ctest_api_run(size_t i) { return i < ctest_api_count() ? TESTS[i].fn() : -1; }
