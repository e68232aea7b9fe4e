/* C tests of shards through the header: a handle created as the block of a
 * parent, global lookups, the box in the descriptor, partition by rows and
 * concatenation, and hostile arguments. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctest.h"

/* float64 4x3 block at (10, 5) of a 20x10 parent:
 * local (0,1)=1, (1,0)=2, (3,2)=3, sorted. */
static const double VALS[3] = {1.0, 2.0, 3.0};
static const uint64_t IDX[6] = {0, 1, 1, 0, 3, 2};
static const uint64_t SHAPE[2] = {4, 3};
static const uint64_t PARENT[2] = {20, 10};
static const uint64_t OFFSET[2] = {10, 5};

static int test_shard_handle_and_global_lookups(void) {
    int failures = 0;
    hurray_coo *s = (hurray_coo *)&failures;
    const uint64_t bad_offset[2] = {17, 5};
    const uint64_t g[2] = {13, 7}, outside[2] = {14, 7};
    uint64_t local[2] = {0, 0};
    const uint64_t *p = NULL, *o = NULL;
    bool present = false, found = false;
    double v = 0.0;
    CHECK_STATUS(ctest_create_with(HURRAY_TYPE_FLOAT64, 2, SHAPE, 3, true, VALS, sizeof VALS, IDX, sizeof IDX, HURRAY_COO_COPY, 1, NULL, NULL, PARENT, bad_offset, &s),
                 HURRAY_ERR_INVALID_SHAPE, "dimension 0: offset 17 + extent 4 exceeds parent extent 20");
    CHECK(s == NULL);
    CHECK_STATUS(ctest_create_with(HURRAY_TYPE_FLOAT64, 2, SHAPE, 3, true, VALS, sizeof VALS, IDX, sizeof IDX, HURRAY_COO_COPY, 1, NULL, NULL, NULL, OFFSET, &s),
                 HURRAY_ERR_NULL_POINTER, "parent_shape");
    CHECK_STATUS(ctest_create_with(HURRAY_TYPE_FLOAT64, 2, SHAPE, 3, true, VALS, sizeof VALS, IDX, sizeof IDX, HURRAY_COO_COPY, 1, NULL, NULL, PARENT, OFFSET, &s),
                 HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_shard(s, &p, &o, &present), HURRAY_OK, "");
    CHECK(present && p[0] == 20 && o[1] == 5);
    CHECK_STATUS(hurray_coo_to_local(s, g, 2, local), HURRAY_OK, "");
    CHECK(local[0] == 3 && local[1] == 2);
    CHECK_STATUS(hurray_coo_lookup_global_f64(s, g, 2, &v, &found), HURRAY_OK, "");
    CHECK(found && v == 3.0);
    CHECK_STATUS(hurray_coo_lookup_global_f64(s, outside, 2, &v, &found), HURRAY_ERR_OUTSIDE_SHARD,
                 "global coordinate 14 in dimension 0 is outside this shard's box, which holds 10 "
                 "to 13 of the parent's 20");
    {
        const uint64_t g3[3] = {13, 7, 0};
        CHECK_STATUS(hurray_coo_lookup_global_f64(s, g3, 3, &v, &found), HURRAY_ERR_RANK_MISMATCH,
                     "rank 3 but the tensor has rank 2");
    }
    CHECK_STATUS(hurray_coo_lookup_global_f64(s, g, 2, NULL, &found), HURRAY_ERR_NULL_POINTER,
                 "out_value");
    CHECK_STATUS(hurray_coo_to_local(s, g, 2, NULL), HURRAY_ERR_NULL_POINTER, "out_local");
    {
        /* The box is in the descriptor the handle writes. */
        uint8_t buf[512];
        size_t n = 0;
        hurray_descriptor_info info;
        CHECK_STATUS(hurray_coo_encode_descriptor(s, 0, buf, sizeof buf, &n), HURRAY_OK, "");
        CHECK_STATUS(hurray_descriptor_inspect(buf, n, 0, &info), HURRAY_OK, "");
        CHECK(info.flags & HURRAY_DESCRIPTOR_HAS_SHARD);
    }
    hurray_coo_free(s);
    return failures;
}

static void count_release(void *ctx) { (*(int *)ctx)++; }

static int test_shard_release_runs_once(void) {
    int failures = 0, calls = 0;
    hurray_coo *s = NULL;
    const uint64_t bad_offset[2] = {17, 5};
    /* Borrowed: at free. Copied: before return. Failed: before return. */
    CHECK_STATUS(ctest_create_with(HURRAY_TYPE_FLOAT64, 2, SHAPE, 3, true, VALS, sizeof VALS, IDX, sizeof IDX, HURRAY_COO_COPY, 1, count_release, &calls, PARENT, OFFSET, &s),
                 HURRAY_OK, "");
    CHECK(calls == 1);
    hurray_coo_free(s);
    CHECK(calls == 1);
    CHECK_STATUS(ctest_create_with(HURRAY_TYPE_FLOAT64, 2, SHAPE, 3, true, VALS, sizeof VALS, IDX, sizeof IDX, HURRAY_COO_COPY, 1, count_release, &calls, PARENT, bad_offset, &s),
                 HURRAY_ERR_INVALID_SHAPE, "exceeds parent extent");
    CHECK(calls == 2);
    return failures;
}

static int test_partition_and_concat(void) {
    int failures = 0;
    hurray_coo *whole = NULL, *parts[3] = {NULL, NULL, NULL}, *back = NULL;
    const uint64_t bounds[4] = {0, 1, 1, 4}, bad_bounds[4] = {0, 2, 1, 4};
    const uint64_t q[2] = {3, 2};
    double v = 0.0;
    bool found = false;
    CHECK_STATUS(ctest_create(HURRAY_TYPE_FLOAT64, 2, SHAPE, 3, true, VALS, sizeof VALS, IDX, sizeof IDX, HURRAY_COO_COPY, &whole),
                 HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_partition(whole, HURRAY_PARTITION_BOUNDARIES, 3, bounds, parts),
                 HURRAY_OK, "");
    CHECK(hurray_coo_nnz(parts[0]) == 1 && hurray_coo_nnz(parts[1]) == 0 &&
          hurray_coo_nnz(parts[2]) == 2);
    CHECK(hurray_coo_shape(parts[2])[0] == 3);
    CHECK_STATUS(hurray_coo_lookup_global_f64(parts[2], q, 2, &v, &found), HURRAY_OK, "");
    CHECK(found && v == 3.0);
    CHECK_STATUS(hurray_coo_concat((const hurray_coo *const *)parts, 3, &back), HURRAY_OK, "");
    CHECK(hurray_coo_nnz(back) == 3 && hurray_coo_is_sorted(back));
    CHECK_STATUS(hurray_coo_lookup_f64(back, q, 2, &v, &found), HURRAY_OK, "");
    CHECK(found && v == 3.0);
    hurray_coo_free(back);
    for (int k = 0; k < 3; k++) hurray_coo_free(parts[k]);
    CHECK_STATUS(hurray_coo_partition(whole, HURRAY_PARTITION_BALANCED_NNZ, 2, NULL, parts),
                 HURRAY_OK, "");
    CHECK(hurray_coo_nnz(parts[0]) + hurray_coo_nnz(parts[1]) == 3);
    hurray_coo_free(parts[0]);
    hurray_coo_free(parts[1]);
    /* Hostile arguments: every slot NULL afterwards. */
    parts[0] = parts[1] = parts[2] = (hurray_coo *)&failures;
    CHECK_STATUS(hurray_coo_partition(whole, HURRAY_PARTITION_BOUNDARIES, 3, bad_bounds, parts),
                 HURRAY_ERR_INVALID_ARGUMENT, "never decrease");
    CHECK(parts[0] == NULL && parts[2] == NULL);
    CHECK_STATUS(hurray_coo_partition(whole, 9, 3, NULL, parts), HURRAY_ERR_INVALID_ARGUMENT,
                 "partition mode 9");
    CHECK_STATUS(hurray_coo_partition(whole, HURRAY_PARTITION_BOUNDARIES, 3, NULL, parts),
                 HURRAY_ERR_NULL_POINTER, "boundaries");
    CHECK_STATUS(hurray_coo_partition(whole, HURRAY_PARTITION_EQUAL_ROWS, 0, NULL, parts),
                 HURRAY_ERR_INVALID_ARGUMENT, "not 0");
    CHECK_STATUS(hurray_coo_partition(whole, 0, 2, NULL, NULL), HURRAY_ERR_NULL_POINTER,
                 "out_shards");
    CHECK_STATUS(hurray_coo_concat(NULL, 2, &back), HURRAY_ERR_NULL_POINTER, "shards");
    {
        const hurray_coo *one[1] = {whole};
        back = (hurray_coo *)&failures;
        CHECK_STATUS(hurray_coo_concat(one, 1, &back), HURRAY_ERR_INVALID_ARGUMENT,
                     "not a shard");
        CHECK(back == NULL);
    }
    hurray_coo_free(whole);
    return failures;
}

static const struct {
    const char *name;
    ctest_fn fn;
} TESTS[] = {
    {"shard_handle_and_global_lookups", test_shard_handle_and_global_lookups},
    {"partition_and_concat", test_partition_and_concat},
    {"shard_release_runs_once", test_shard_release_runs_once},
};

size_t ctest_shard_count(void);
const char *ctest_shard_name(size_t i);
int ctest_shard_run(size_t i);

size_t ctest_shard_count(void) { return sizeof TESTS / sizeof TESTS[0]; }
const char *ctest_shard_name(size_t i) { return i < ctest_shard_count() ? TESTS[i].name : NULL; }
int ctest_shard_run(size_t i) { return i < ctest_shard_count() ? TESTS[i].fn() : -1; }
