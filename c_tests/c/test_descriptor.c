/* C tests of the descriptor reader/writer and statistics. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc64.h"
#include "ctest.h"

/* The reference implementation's seed descriptor (vectors/seed_f32_4x4_sorted.bin). */
static const uint8_t SEED_DESC[93] = {
    0x48, 0x52, 0x52, 0x59, 0x01, 0x00, 0x5d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x06,
    0x02, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x0c, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

static const float SEED_VALUES[3] = {1.5f, -0.5f, 2.0f};
static const uint64_t SEED_INDICES[6] = {0, 1, 2, 0, 3, 3};

typedef struct {
    float *values;
    uint64_t *indices;
} bufs;

static bufs seed_bufs(void) {
    bufs b;
    b.values = alloc64(SEED_VALUES, sizeof SEED_VALUES, 0);
    b.indices = alloc64(SEED_INDICES, sizeof SEED_INDICES, 0);
    return b;
}

static void bufs_free(bufs b) {
    free64(b.values);
    free64(b.indices);
}

static hurray_status from_desc(const uint8_t *d, size_t len, bufs b, uint32_t flags,
                               hurray_coo **out) {
    return hurray_coo_from_descriptor(d, len, b.values, sizeof SEED_VALUES, b.indices,
                                      sizeof SEED_INDICES, flags, out);
}

static int test_writer_reproduces_the_reference_bytes(void) {
    int failures = 0;
    const uint64_t shape[2] = {4, 4};
    bufs b = seed_bufs();
    hurray_coo *coo = NULL;
    uint8_t out[256];
    size_t len = 0, written = 0;

    CHECK_STATUS(ctest_create(0x03, 2, shape, 3, true, b.values, 12, b.indices, 48, 0, &coo),
                 HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_descriptor_size(coo, 0, &len), HURRAY_OK, "");
    CHECK(len == 93);
    CHECK_STATUS(hurray_coo_encode_descriptor(coo, 0, out, sizeof out, &written), HURRAY_OK, "");
    CHECK(written == 93 && memcmp(out, SEED_DESC, 93) == 0);
    CHECK_STATUS(hurray_coo_descriptor_size(coo, HURRAY_DESCRIPTOR_STATISTICS_COUNTS, &len),
                 HURRAY_OK, "");
    CHECK(len == 165);
    /* Too small: a clear error carrying the size needed; nothing written. */
    memset(out, 0xEE, sizeof out);
    CHECK_STATUS(hurray_coo_encode_descriptor(coo, 0, out, 92, &written),
                 HURRAY_ERR_BUFFER_TOO_SMALL, "93 are needed");
    CHECK(written == 93 && out[0] == 0xEE);
    CHECK_STATUS(hurray_coo_encode_descriptor(coo, 0, NULL, 0, &written),
                 HURRAY_ERR_BUFFER_TOO_SMALL, "");
    CHECK(written == 93);
    CHECK_STATUS(hurray_coo_encode_descriptor(coo, 3, out, sizeof out, &written),
                 HURRAY_ERR_INVALID_FLAGS, "");
    CHECK_STATUS(hurray_coo_encode_descriptor(coo, 0, out, sizeof out, NULL),
                 HURRAY_ERR_NULL_POINTER, "out_written");
    CHECK_STATUS(hurray_coo_descriptor_size(NULL, 0, &len), HURRAY_ERR_NULL_POINTER, "coo");
    hurray_coo_free(coo);
    bufs_free(b);
    return failures;
}

static int test_reader_builds_a_validated_handle(void) {
    int failures = 0;
    bufs b = seed_bufs();
    hurray_coo *coo = NULL;
    hurray_descriptor_info info;
    hurray_statistics st;
    bool present = true;
    const uint64_t q[2] = {3, 3};
    double d = 0;
    bool found = false;

    CHECK_STATUS(hurray_descriptor_inspect(SEED_DESC, sizeof SEED_DESC, 0, &info), HURRAY_OK, "");
    CHECK(info.version_major == 1 && info.descriptor_length == 93 && info.type_tag == 0x03);
    CHECK(info.rank == 2 && info.shape[0] == 4 && info.shape[1] == 4 && info.shape[2] == 0);
    CHECK(info.nnz == 3 && info.is_sorted);
    CHECK(info.values_bytes == 12 && info.indices_bytes == 48 && info.values_alignment == 64);

    CHECK_STATUS(from_desc(SEED_DESC, sizeof SEED_DESC, b, 0, &coo), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 2, &d, &found), HURRAY_OK, "");
    CHECK(found && d == 2.0);
    CHECK(hurray_coo_values(coo, NULL) == (const void *)b.values); /* zero-copy */
    CHECK(hurray_coo_descriptor_flags(coo) == 0);
    CHECK_STATUS(hurray_coo_descriptor_statistics(coo, &st, &present), HURRAY_OK, "");
    CHECK(!present);
    hurray_coo_free(coo);

    /* The same tensor with a counts-only statistics section. */
    {
        uint8_t with_stats[200];
        size_t n = 0;
        hurray_coo *src = NULL;
        CHECK_STATUS(from_desc(SEED_DESC, sizeof SEED_DESC, b, 0, &src), HURRAY_OK, "");
        CHECK_STATUS(hurray_coo_encode_descriptor(src, HURRAY_DESCRIPTOR_STATISTICS_COUNTS,
                                                  with_stats, sizeof with_stats, &n),
                     HURRAY_OK, "");
        CHECK_STATUS(from_desc(with_stats, n, b, HURRAY_COO_COPY, &coo), HURRAY_OK, "");
        CHECK(hurray_coo_descriptor_flags(coo) == HURRAY_DESCRIPTOR_HAS_STATISTICS);
        CHECK_STATUS(hurray_coo_descriptor_statistics(coo, &st, &present), HURRAY_OK, "");
        CHECK(present && st.computed_mask == (HURRAY_STAT_NNZ | HURRAY_STAT_SPARSITY));
        CHECK(st.nnz == 3 && st.sparsity_ratio == 0.8125);
        hurray_coo_free(coo);
        /* A statistics nnz that disagrees with the layout is refused. */
        with_stats[93 + 8] = 4;
        CHECK_STATUS(from_desc(with_stats, n, b, 0, &coo), HURRAY_ERR_INVALID_STATISTICS,
                     "statistics nnz 4 differs");
        CHECK(coo == NULL);
        hurray_coo_free(src);
    }
    bufs_free(b);
    return failures;
}

static int test_reader_rejections(void) {
    int failures = 0;
    bufs b = seed_bufs();
    hurray_coo *coo = (hurray_coo *)(uintptr_t)1;
    uint8_t d[93];
    size_t cut;

    memcpy(d, SEED_DESC, sizeof d);
    d[61 + 12] = 0x01; /* values buffer on CUDA */
    CHECK_STATUS(from_desc(d, sizeof d, b, 0, &coo), HURRAY_ERR_UNSUPPORTED_DEVICE,
                 "buffer 0 (values) is on CUDA");
    CHECK(coo == NULL);
    memcpy(d, SEED_DESC, sizeof d);
    d[15] = 0x07;
    CHECK_STATUS(from_desc(d, sizeof d, b, 0, &coo), HURRAY_ERR_INVALID_LAYOUT,
                 "layout tag 0x07 is CSR, not COO (0x06)");
    memcpy(d, SEED_DESC, sizeof d);
    d[0] = 'h';
    CHECK_STATUS(from_desc(d, sizeof d, b, 0, &coo), HURRAY_ERR_INVALID_MAGIC, "HRRY");
    memcpy(d, SEED_DESC, sizeof d);
    d[4] = 2;
    CHECK_STATUS(from_desc(d, sizeof d, b, 0, &coo), HURRAY_ERR_VERSION_MISMATCH, "version 2.0");
    memcpy(d, SEED_DESC, sizeof d);
    d[13] = 0x40;
    CHECK_STATUS(from_desc(d, sizeof d, b, 0, &coo), HURRAY_ERR_RESERVED_BITS, "reserved bits");
    /* Passed buffers must have the declared sizes. */
    CHECK_STATUS(hurray_coo_from_descriptor(SEED_DESC, sizeof SEED_DESC, b.values, 8, b.indices,
                                            48, 0, &coo),
                 HURRAY_ERR_BUFFER_SIZE, "declared byte_size needs exactly 12");
    /* The descriptor's tensor is validated like hurray_coo_create's. */
    {
        uint64_t *dup = alloc64(SEED_INDICES, sizeof SEED_INDICES, 0);
        dup[4] = 2;
        dup[5] = 0;
        CHECK_STATUS(hurray_coo_from_descriptor(SEED_DESC, sizeof SEED_DESC, b.values, 12, dup, 48,
                                                0, &coo),
                     HURRAY_ERR_DUPLICATE, "entry 2 duplicates entry 1 at (2, 0)");
        free64(dup);
    }
    CHECK_STATUS(from_desc(NULL, 93, b, 0, &coo), HURRAY_ERR_NULL_POINTER, "bytes");
    CHECK_STATUS(from_desc(SEED_DESC, sizeof SEED_DESC, b, 0x20, &coo), HURRAY_ERR_INVALID_FLAGS,
                 "");
    /* Every truncation is a clean, named error. */
    for (cut = 0; cut < sizeof SEED_DESC; cut++) {
        hurray_descriptor_info info;
        coo = (hurray_coo *)(uintptr_t)1;
        CHECK(from_desc(SEED_DESC, cut, b, 0, &coo) == HURRAY_ERR_TRUNCATED);
        CHECK(coo == NULL);
        CHECK(hurray_descriptor_inspect(SEED_DESC, cut, 0, &info) == HURRAY_ERR_TRUNCATED);
    }
    bufs_free(b);
    return failures;
}

static int test_round_trip_between_handles(void) {
    int failures = 0;
    const uint64_t shape[3] = {5, 6, 7};
    const double vals[4] = {1.0, -2.0, 3.5, 1e30};
    const uint64_t idx[12] = {4, 0, 6, 0, 5, 1, 2, 2, 2, 0, 0, 0};
    double *av = alloc64(vals, sizeof vals, 0);
    uint64_t *ai = alloc64(idx, sizeof idx, 0);
    hurray_coo *a = NULL, *c = NULL;
    uint8_t desc[512];
    size_t n = 0, vb = 0, ib = 0;
    const void *v;
    const uint64_t *i;
    unsigned k;

    CHECK_STATUS(ctest_create(0x04, 3, shape, 4, false, av, sizeof vals, ai, sizeof idx, 0, &a),
                 HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_encode_descriptor(a, HURRAY_DESCRIPTOR_STATISTICS_FULL, desc,
                                              sizeof desc, &n),
                 HURRAY_OK, "");
    v = hurray_coo_values(a, &vb);
    i = hurray_coo_indices(a, &ib);
    CHECK_STATUS(hurray_coo_from_descriptor(desc, n, v, vb, i, ib, 0, &c), HURRAY_OK, "");
    CHECK(hurray_coo_rank(c) == 3 && hurray_coo_nnz(c) == 4 && !hurray_coo_is_sorted(c));
    for (k = 0; k < 4; k++) {
        double x = 0;
        bool found = false;
        CHECK(hurray_coo_lookup_f64(c, &idx[3 * k], 3, &x, &found) == HURRAY_OK);
        CHECK(found && x == vals[k]);
    }
    {
        hurray_statistics s, declared;
        bool present = false;
        CHECK_STATUS(hurray_coo_statistics(c, &s), HURRAY_OK, "");
        CHECK_STATUS(hurray_coo_descriptor_statistics(c, &declared, &present), HURRAY_OK, "");
        /* The declared section is exactly what was computed when encoding. */
        CHECK(present && declared.computed_mask == s.computed_mask && declared.nnz == s.nnz);
        CHECK(declared.value_mean == s.value_mean && declared.value_stddev == s.value_stddev);
        CHECK(declared.value_min == s.value_min && declared.value_abs_max == s.value_abs_max);
        CHECK(declared.has_nan == s.has_nan && declared.has_inf == s.has_inf);
        CHECK(s.nnz == 4 && s.value_min == -2.0 && s.value_max == 1e30);
        CHECK(s.sparsity_ratio == 1.0 - 4.0 / 210.0);
        CHECK((s.computed_mask & HURRAY_STAT_VALUE_STATS) != 0);
        CHECK(fabs(s.value_mean - (1e30 + 2.5) / 210.0) < 1e16);
        CHECK_STATUS(hurray_coo_statistics(c, NULL), HURRAY_ERR_NULL_POINTER, "out");
    }
    hurray_coo_free(c);
    hurray_coo_free(a);
    free64(av);
    free64(ai);
    return failures;
}

static int test_shard_and_quantization_sections(void) {
    int failures = 0;
    bufs b = seed_bufs();
    hurray_coo *coo = NULL;
    uint8_t d[93 + 32];
    const uint64_t parent[2] = {8, 12};
    const uint64_t offset[2] = {4, 8};
    const uint64_t *p = NULL, *o = NULL;
    bool present = false;

    memcpy(d, SEED_DESC, 93);
    memcpy(d + 93, parent, 16);
    memcpy(d + 109, offset, 16);
    d[10] = 0x02; /* HAS_SHARD */
    d[6] = 93 + 32;
    CHECK_STATUS(from_desc(d, sizeof d, b, 0, &coo), HURRAY_OK, "");
    CHECK(hurray_coo_descriptor_flags(coo) == HURRAY_DESCRIPTOR_HAS_SHARD);
    CHECK_STATUS(hurray_coo_shard(coo, &p, &o, &present), HURRAY_OK, "");
    CHECK(present && p[0] == 8 && p[1] == 12 && o[0] == 4 && o[1] == 8);
    hurray_coo_free(coo);
    d[109 + 8] = 9; /* offset 9 + extent 4 > 12 */
    CHECK_STATUS(from_desc(d, sizeof d, b, 0, &coo), HURRAY_ERR_INVALID_SHAPE,
                 "offset 9 + extent 4 exceeds parent extent 12");

    /* No shard: present false, pointers NULL. */
    CHECK_STATUS(from_desc(SEED_DESC, 93, b, 0, &coo), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_shard(coo, &p, &o, &present), HURRAY_OK, "");
    CHECK(!present && p == NULL && o == NULL);
    hurray_coo_free(coo);

    /* Quantization: refused strictly, skipped and reported permissively. */
    {
        uint8_t q[93 + 8];
        const uint32_t qlen = 4;
        memcpy(q, SEED_DESC, 93);
        memcpy(q + 93, &qlen, 4);
        memset(q + 97, 0x5A, 4);
        q[10] = 0x01;
        q[6] = 93 + 8;
        CHECK_STATUS(from_desc(q, sizeof q, b, 0, &coo), HURRAY_ERR_UNSUPPORTED_FEATURE,
                     "HURRAY_COO_PERMISSIVE skips it");
        CHECK_STATUS(from_desc(q, sizeof q, b, HURRAY_COO_PERMISSIVE, &coo), HURRAY_OK, "");
        CHECK(hurray_coo_descriptor_flags(coo) == HURRAY_DESCRIPTOR_HAS_QUANTIZATION);
        hurray_coo_free(coo);
        {
            hurray_descriptor_info info;
            CHECK_STATUS(hurray_descriptor_inspect(q, sizeof q, HURRAY_COO_PERMISSIVE, &info),
                         HURRAY_OK, "");
            CHECK(info.quantization_bytes == 4);
        }
    }
    bufs_free(b);
    return failures;
}

/* The seed descriptor with `extra` bytes appended under descriptor flag
 * `flag` (descriptor_length adjusted). Returns its length. */
static size_t seed_with_section(uint8_t *out, uint32_t flag, const uint8_t *extra, size_t n) {
    uint32_t len = (uint32_t)(93 + n);
    memcpy(out, SEED_DESC, 93);
    memcpy(out + 93, extra, n);
    out[10] |= (uint8_t)flag;
    memcpy(out + 6, &len, 4);
    return len;
}

/* Every buffer of a descriptor MUST share device tag and memory class
 * (buffer-protocol.md); the composite-member and extension-type sections'
 * MUSTs (metadata.md) hold in permissive mode too. */
static int test_colocation_composite_and_extension_sections(void) {
    int failures = 0;
    bufs b = seed_bufs();
    uint8_t d[160];
    hurray_coo *coo = (hurray_coo *)1;
    hurray_descriptor_info info;
    uint32_t modes[2] = {0, HURRAY_COO_PERMISSIVE};
    size_t m;
    for (m = 0; m < 2; m++) {
        uint8_t sec[20];
        size_t len;
        /* Host-pinned values, standard indices. */
        memcpy(d, SEED_DESC, 93);
        d[61 + 14] = 1;
        CHECK_STATUS(hurray_descriptor_inspect(d, 93, modes[m], &info),
                     HURRAY_ERR_INVALID_BUFFER_HANDLE, "must share device tag and memory class");
        CHECK_STATUS(from_desc(d, 93, b, modes[m], &coo), HURRAY_ERR_INVALID_BUFFER_HANDLE,
                     "buffer 1 (indices) has device tag 0x00 and memory class 0 (standard)");
        CHECK(coo == NULL);
        /* Both host-pinned: fine. */
        d[77 + 14] = 1;
        CHECK_STATUS(from_desc(d, 93, b, modes[m], &coo), HURRAY_OK, "");
        hurray_coo_free(coo);
        /* Composite member: role 0x02 is reserved, reserved bytes must be 0. */
        memset(sec, 0, sizeof sec);
        sec[0] = 0x02;
        len = seed_with_section(d, HURRAY_DESCRIPTOR_HAS_COMPOSITE_MEMBER, sec, 16);
        CHECK_STATUS(hurray_descriptor_inspect(d, len, modes[m], &info), HURRAY_ERR_RESERVED_BITS,
                     "member_role at descriptor offset 93 is 0x02");
        CHECK_STATUS(from_desc(d, len, b, modes[m], &coo), HURRAY_ERR_RESERVED_BITS,
                     "member_role");
        sec[0] = 0x01;
        sec[9] = 0x10;
        len = seed_with_section(d, HURRAY_DESCRIPTOR_HAS_COMPOSITE_MEMBER, sec, 16);
        CHECK_STATUS(hurray_descriptor_inspect(d, len, modes[m], &info), HURRAY_ERR_RESERVED_BITS,
                     "offset 102 is 0x10");
        sec[9] = 0;
        len = seed_with_section(d, HURRAY_DESCRIPTOR_HAS_COMPOSITE_MEMBER, sec, 16);
        CHECK_STATUS(from_desc(d, len, b, modes[m], &coo), HURRAY_OK, "");
        CHECK(hurray_coo_descriptor_flags(coo) == HURRAY_DESCRIPTOR_HAS_COMPOSITE_MEMBER);
        hurray_coo_free(coo);
    }
    /* Extension type of a private tag (permissive only): bit_width 4 with
     * packing_factor 1 is malformed; a valid one sizes the values buffer. */
    {
        uint8_t sec[20];
        size_t len;
        uint32_t w = 4;
        memset(sec, 0, sizeof sec);
        memcpy(sec, &w, 4);
        sec[4] = 1;
        len = seed_with_section(d, HURRAY_DESCRIPTOR_HAS_EXTENSION_TYPE, sec, 20);
        d[14] = 0xF3;
        CHECK_STATUS(hurray_descriptor_inspect(d, len, HURRAY_COO_PERMISSIVE, &info),
                     HURRAY_ERR_INVALID_TYPE, "bit_width 4 needs packing_factor 2, not 1");
        sec[4] = 2;
        len = seed_with_section(d, HURRAY_DESCRIPTOR_HAS_EXTENSION_TYPE, sec, 20);
        d[14] = 0xF3;
        /* The seed declares 12 value bytes; 3 int4-like elements need 2. */
        CHECK_STATUS(hurray_descriptor_inspect(d, len, HURRAY_COO_PERMISSIVE, &info),
                     HURRAY_ERR_BUFFER_SIZE, "needs exactly 2 bytes");
        d[61] = 2;
        CHECK_STATUS(hurray_descriptor_inspect(d, len, HURRAY_COO_PERMISSIVE, &info), HURRAY_OK,
                     "");
        CHECK(info.values_bytes == 2 && info.type_tag == 0xF3);
    }
    bufs_free(b);
    return failures;
}

/* The README sizes a consumer's allocations from inspect alone: every size it
 * reports is checked, and it takes no flag but HURRAY_COO_PERMISSIVE. */
static int test_inspect_checks_what_it_reports(void) {
    int failures = 0;
    uint8_t d[93];
    hurray_descriptor_info info;
    uint64_t huge = UINT64_C(1) << 60;
    memcpy(d, SEED_DESC, 93);
    memcpy(d + 77, &huge, 8);
    CHECK_STATUS(hurray_descriptor_inspect(d, 93, 0, &info), HURRAY_ERR_BUFFER_SIZE,
                 "the declared indices buffer is 1152921504606846976 bytes but nnz 3 x rank 2 x 8 "
                 "needs exactly 48");
    memcpy(d, SEED_DESC, 93);
    d[61] = 13;
    CHECK_STATUS(hurray_descriptor_inspect(d, 93, 0, &info), HURRAY_ERR_BUFFER_SIZE,
                 "nnz 3 of float32 needs exactly 12");
    CHECK_STATUS(hurray_descriptor_inspect(SEED_DESC, 93, HURRAY_COO_COPY, &info),
                 HURRAY_ERR_INVALID_FLAGS, "takes 0 or HURRAY_COO_PERMISSIVE");
    CHECK_STATUS(hurray_descriptor_inspect(SEED_DESC, 93, HURRAY_COO_INDEX, &info),
                 HURRAY_ERR_INVALID_FLAGS, "bits 0x00000004");
    CHECK_STATUS(hurray_descriptor_inspect(SEED_DESC, 93, HURRAY_COO_PERMISSIVE, &info),
                 HURRAY_OK, "");
    CHECK(info.values_bytes == 12 && info.indices_bytes == 48);
    return failures;
}

static const struct {
    const char *name;
    ctest_fn fn;
} TESTS[] = {
    {"colocation_composite_and_extension_sections", test_colocation_composite_and_extension_sections},
    {"inspect_checks_what_it_reports", test_inspect_checks_what_it_reports},
    {"writer_reproduces_the_reference_bytes", test_writer_reproduces_the_reference_bytes},
    {"reader_builds_a_validated_handle", test_reader_builds_a_validated_handle},
    {"reader_rejections", test_reader_rejections},
    {"round_trip_between_handles", test_round_trip_between_handles},
    {"shard_and_quantization_sections", test_shard_and_quantization_sections},
};

size_t ctest_descriptor_count(void);
const char *ctest_descriptor_name(size_t i);
int ctest_descriptor_run(size_t i);

size_t ctest_descriptor_count(void) { return sizeof TESTS / sizeof TESTS[0]; }
const char *ctest_descriptor_name(size_t i) {
    return i < ctest_descriptor_count() ? TESTS[i].name : NULL;
}
int ctest_descriptor_run(size_t i) { return i < ctest_descriptor_count() ? TESTS[i].fn() : -1; }
