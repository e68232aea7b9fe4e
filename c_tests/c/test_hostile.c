/* A table of hostile calls, each with the status and message it must get,
 * and the handle out-pointer checked to be NULL after every failure. */
#include <stdint.h>
#include <string.h>

#include "alloc64.h"
#include "ctest.h"

enum buf { B_GOOD, B_NULL, B_MISALIGNED };
enum shp { S_GOOD, S_NULL, S_ZERO, S_DYNAMIC, S_HUGE };

typedef struct {
    const char *name;
    uint8_t tag;
    uint32_t rank;
    enum shp shape;
    uint64_t nnz;
    bool sorted;
    enum buf values;
    size_t values_bytes;
    enum buf indices;
    size_t indices_bytes;
    uint32_t flags;
    hurray_status expect;
    const char *needle;
} create_case;

/* The seed tensor: float32 [4, 4], 3 entries, 12 + 48 bytes. */
static const create_case CREATE_CASES[] = {
    {"valid seed", 0x03, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48, 0, HURRAY_OK, ""},
    {"NULL shape", 0x03, 2, S_NULL, 3, true, B_GOOD, 12, B_GOOD, 48, 0, HURRAY_ERR_NULL_POINTER,
     "shape is NULL"},
    {"NULL values", 0x03, 2, S_GOOD, 3, true, B_NULL, 12, B_GOOD, 48, 0,
     HURRAY_ERR_NULL_POINTER, "values is NULL but its byte count is not 0"},
    {"NULL indices", 0x03, 2, S_GOOD, 3, true, B_GOOD, 12, B_NULL, 48, 0,
     HURRAY_ERR_NULL_POINTER, "indices is NULL"},
    {"values too short", 0x03, 2, S_GOOD, 3, true, B_GOOD, 8, B_GOOD, 48, 0,
     HURRAY_ERR_BUFFER_SIZE, "values buffer is 8 bytes"},
    {"values too long", 0x03, 2, S_GOOD, 3, true, B_GOOD, 16, B_GOOD, 48, 0,
     HURRAY_ERR_BUFFER_SIZE, "exactly 12 bytes"},
    {"indices too short", 0x03, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 40, 0,
     HURRAY_ERR_BUFFER_SIZE, "indices buffer is 40 bytes"},
    {"indices too long", 0x03, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 56, 0,
     HURRAY_ERR_BUFFER_SIZE, "exactly 48 bytes"},
    {"nnz*rank*8 overflows", 0x03, 2, S_GOOD, (uint64_t)1 << 61, true, B_GOOD, 12, B_GOOD, 48, 0,
     HURRAY_ERR_OVERFLOW, "nnz * rank * 8"},
    {"nnz near 2^64", 0x03, 2, S_GOOD, UINT64_MAX - 1, true, B_GOOD, 12, B_GOOD, 48, 0,
     HURRAY_ERR_OVERFLOW, "overflow"},
    {"nnz near 2^64, bool", 0x20, 1, S_GOOD, UINT64_MAX, true, B_GOOD, 12, B_GOOD, 48, 0,
     HURRAY_ERR_OVERFLOW, "overflow"},
    {"length beyond address space", 0x03, 2, S_GOOD, 3, true, B_GOOD, SIZE_MAX, B_GOOD, 48, 0,
     HURRAY_ERR_OVERFLOW, "address space"},
    {"rank 0", 0x03, 0, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48, 0, HURRAY_ERR_INVALID_RANK,
     "scalar"},
    {"rank 65", 0x03, 65, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48, 0, HURRAY_ERR_INVALID_RANK,
     "rank 65"},
    {"rank 2^32-1", 0x03, UINT32_MAX, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48, 0,
     HURRAY_ERR_INVALID_RANK, "rank 4294967295"},
    {"zero extent", 0x03, 2, S_ZERO, 3, true, B_GOOD, 12, B_GOOD, 48, 0,
     HURRAY_ERR_INDEX_OUT_OF_BOUNDS, "shape[0] = 0"},
    {"zero extent, empty", 0x03, 2, S_ZERO, 0, true, B_NULL, 0, B_NULL, 0, 0, HURRAY_OK, ""},
    {"UINT64_MAX extent", 0x03, 2, S_DYNAMIC, 3, true, B_GOOD, 12, B_GOOD, 48, 0,
     HURRAY_ERR_INVALID_SHAPE, "UINT64_MAX"},
    {"huge extents", 0x03, 2, S_HUGE, 3, true, B_GOOD, 12, B_GOOD, 48, 0, HURRAY_OK, ""},
    {"misaligned values", 0x03, 2, S_GOOD, 3, true, B_MISALIGNED, 12, B_GOOD, 48, 0,
     HURRAY_ERR_MISALIGNED, "HURRAY_COO_COPY"},
    {"misaligned indices", 0x03, 2, S_GOOD, 3, true, B_GOOD, 12, B_MISALIGNED, 48, 0,
     HURRAY_ERR_MISALIGNED, "indices buffer"},
    {"misaligned, copied", 0x03, 2, S_GOOD, 3, true, B_MISALIGNED, 12, B_MISALIGNED, 48,
     HURRAY_COO_COPY, HURRAY_OK, ""},
    {"unknown flag bit 5", 0x03, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48, 0x20,
     HURRAY_ERR_INVALID_FLAGS, "0x00000020"},
    {"all flag bits", 0x03, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48, UINT32_MAX,
     HURRAY_ERR_INVALID_FLAGS, "0xFFFFFFE0"},
    {"all known flags", 0x03, 2, S_GOOD, 3, false, B_GOOD, 12, B_GOOD, 48,
     HURRAY_COO_COPY | HURRAY_COO_PERMISSIVE | HURRAY_COO_INDEX | HURRAY_COO_ONE_BASED_MESSAGES |
         HURRAY_COO_INDEX_VALUES,
     HURRAY_OK, ""},
    {"tag 0x00", 0x00, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48, 0, HURRAY_ERR_INVALID_TYPE,
     "invalid"},
    {"tag 0xFF permissive", 0xFF, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48,
     HURRAY_COO_PERMISSIVE, HURRAY_ERR_INVALID_TYPE, "0xFF"},
    {"reserved 0x47", 0x47, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48, 0,
     HURRAY_ERR_INVALID_TYPE, "reserved"},
    {"reserved 0xA0", 0xA0, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48, 0,
     HURRAY_ERR_INVALID_TYPE, "reserved"},
    {"private 0xF7", 0xF7, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48, 0,
     HURRAY_ERR_INVALID_TYPE, "private"},
    {"unassigned 0x30", 0x30, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48, 0,
     HURRAY_ERR_INVALID_TYPE, "not assigned"},
    {"private 0xF7 permissive", 0xF7, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48,
     HURRAY_COO_PERMISSIVE, HURRAY_OK, ""},
    {"wrong type size", 0x04, 2, S_GOOD, 3, true, B_GOOD, 12, B_GOOD, 48, 0,
     HURRAY_ERR_BUFFER_SIZE, "nnz 3 of float64"},
};

static int test_hostile_creates(void) {
    int failures = 0;
    static const float vals[4] = {1.5f, -0.5f, 2.0f, 0.0f};
    static const uint64_t idx[7] = {0, 1, 2, 0, 3, 3, 0};
    float *good_v = alloc64(vals, sizeof vals, 0);
    uint64_t *good_i = alloc64(idx, sizeof idx, 0);
    float *skew_v = alloc64(vals, sizeof vals, 4);
    uint64_t *skew_i = alloc64(idx, sizeof idx, 8);
    uint64_t shapes[5][65];
    size_t c, d;
    for (d = 0; d < 65; d++) {
        shapes[S_GOOD][d] = 4;
        shapes[S_ZERO][d] = d == 0 ? 0 : 4;
        shapes[S_DYNAMIC][d] = d == 1 ? UINT64_MAX : 4;
        shapes[S_HUGE][d] = UINT64_MAX - 1;
        shapes[S_NULL][d] = 0;
    }
    for (c = 0; c < sizeof CREATE_CASES / sizeof CREATE_CASES[0]; c++) {
        const create_case *k = &CREATE_CASES[c];
        const void *v = k->values == B_GOOD ? (const void *)good_v
                        : k->values == B_NULL ? NULL
                                              : (const void *)skew_v;
        const uint64_t *i = k->indices == B_GOOD ? good_i : k->indices == B_NULL ? NULL : skew_i;
        const uint64_t *s = k->shape == S_NULL ? NULL : shapes[k->shape];
        hurray_coo *coo = (hurray_coo *)(uintptr_t)0x10;
        hurray_status st = ctest_create(k->tag, k->rank, s, k->nnz, k->sorted, v, k->values_bytes, i, k->indices_bytes, k->flags, &coo);
        const char *msg = hurray_last_error_message();
        if (st != k->expect) {
            fprintf(stderr, "case \"%s\": got %s (%s), expected %s\n", k->name,
                    hurray_status_name(st), msg, hurray_status_name(k->expect));
            failures++;
        } else if (st != HURRAY_OK && strstr(msg, k->needle) == NULL) {
            fprintf(stderr, "case \"%s\": message \"%s\" lacks \"%s\"\n", k->name, msg,
                    k->needle);
            failures++;
        }
        if (st != HURRAY_OK && coo != NULL) {
            fprintf(stderr, "case \"%s\": *out not NULL after failure\n", k->name);
            failures++;
        }
        if (st == HURRAY_OK) {
            CHECK(coo != NULL && coo != (hurray_coo *)(uintptr_t)0x10);
            /* Interleave: validate, look up, describe, free, free(NULL). */
            (void)hurray_coo_validate(coo, 1);
            hurray_coo_free(coo);
            hurray_coo_free(NULL);
        }
    }
    free64(good_v);
    free64(good_i);
    free64(skew_v);
    free64(skew_i);
    return failures;
}

static int test_hostile_queries(void) {
    int failures = 0;
    static const float vals[3] = {1.5f, -0.5f, 2.0f};
    static const uint64_t idx[6] = {0, 1, 2, 0, 3, 3};
    const uint64_t shape[2] = {4, 4};
    float *v = alloc64(vals, sizeof vals, 0);
    uint64_t *i = alloc64(idx, sizeof idx, 0);
    hurray_coo *coo = NULL;
    uint64_t q[64];
    unsigned char out[16];
    double d;
    bool found;
    uint32_t r;
    memset(q, 0, sizeof q);
    CHECK(ctest_create(0x03, 2, shape, 3, true, v, 12, i, 48, 0, &coo) == HURRAY_OK);
    /* Every wrong rank, including huge ones (never read past the tensor's). */
    for (r = 0; r < 70; r++) {
        if (r == 2) {
            continue;
        }
        CHECK(hurray_coo_lookup(coo, q, r, out, sizeof out, &found) == HURRAY_ERR_RANK_MISMATCH);
        CHECK(hurray_coo_lookup_f64(coo, q, r, &d, &found) == HURRAY_ERR_RANK_MISMATCH);
    }
    CHECK(hurray_coo_lookup(coo, q, UINT32_MAX, out, sizeof out, &found) ==
          HURRAY_ERR_RANK_MISMATCH);
    /* Out of bounds in each dimension, by one and by far. */
    {
        const uint64_t bad[4][2] = {{4, 0}, {0, 4}, {UINT64_MAX, 0}, {0, UINT64_MAX}};
        size_t k;
        for (k = 0; k < 4; k++) {
            CHECK_STATUS(hurray_coo_lookup(coo, bad[k], 2, out, sizeof out, &found),
                         HURRAY_ERR_INDEX_OUT_OF_BOUNDS, "out of bounds");
        }
    }
    /* Output buffers too small, of every size below the element's. */
    {
        size_t cap;
        for (cap = 0; cap < 4; cap++) {
            CHECK_STATUS(hurray_coo_lookup(coo, idx, 2, out, cap, &found),
                         HURRAY_ERR_BUFFER_TOO_SMALL, "4 are needed");
        }
    }
    /* NULL everywhere. */
    CHECK(hurray_coo_lookup(coo, NULL, 2, out, sizeof out, NULL) == HURRAY_ERR_NULL_POINTER);
    CHECK(hurray_coo_lookup(coo, idx, 2, NULL, 0, NULL) == HURRAY_ERR_NULL_POINTER);
    CHECK(hurray_coo_lookup_f64(coo, idx, 2, NULL, NULL) == HURRAY_ERR_NULL_POINTER);
    CHECK(hurray_coo_statistics(coo, NULL) == HURRAY_ERR_NULL_POINTER);
    CHECK(hurray_coo_descriptor_size(coo, 0, NULL) == HURRAY_ERR_NULL_POINTER);
    CHECK(hurray_coo_encode_descriptor(coo, 0, NULL, 0, NULL) == HURRAY_ERR_NULL_POINTER);
    CHECK(hurray_coo_descriptor_statistics(coo, NULL, NULL) == HURRAY_ERR_NULL_POINTER);
    CHECK(hurray_coo_shard(coo, NULL, NULL, NULL) == HURRAY_ERR_NULL_POINTER);
    CHECK(hurray_descriptor_inspect(NULL, 5, 0, NULL) == HURRAY_ERR_NULL_POINTER);
    CHECK(hurray_coo_from_descriptor(NULL, 0, NULL, 0, NULL, 0, 0, NULL) ==
          HURRAY_ERR_NULL_POINTER);
    {
        hurray_coo *o = (hurray_coo *)(uintptr_t)0x10;
        CHECK(hurray_coo_from_descriptor(NULL, 0, NULL, 0, NULL, 0, 0, &o) == HURRAY_ERR_TRUNCATED);
        CHECK(o == NULL);
    }
    /* The handle is still fine after all that. */
    CHECK(hurray_coo_lookup_f64(coo, idx + 2, 2, &d, &found) == HURRAY_OK && found && d == -0.5);
    {
        /* A query at an odd address is copied, not read in place: same answer. */
        unsigned char raw[3 * sizeof(uint64_t)];
        const void *odd = raw + 1;
        memcpy(raw + 1, idx + 2, 2 * sizeof(uint64_t));
        d = 0.0;
        found = false;
        CHECK(hurray_coo_lookup_f64(coo, (const uint64_t *)odd, 2, &d, &found) == HURRAY_OK &&
              found && d == -0.5);
        memcpy(raw + 1, idx + 2, sizeof(uint64_t));
        CHECK(hurray_coo_lookup(coo, (const uint64_t *)odd, 2, out, sizeof out, &found) ==
                  HURRAY_OK &&
              found);
    }
    hurray_coo_free(coo);
    hurray_coo_free(NULL);
    free64(v);
    free64(i);
    return failures;
}

size_t ctest_hostile_count(void);
const char *ctest_hostile_name(size_t i);
int ctest_hostile_run(size_t i);

size_t ctest_hostile_count(void) { return 2; }
const char *ctest_hostile_name(size_t i) {
    return i == 0 ? "hostile_creates" : i == 1 ? "hostile_queries" : NULL;
}
int ctest_hostile_run(size_t i) {
    return i == 0 ? test_hostile_creates() : i == 1 ? test_hostile_queries() : -1;
}
