/* C tests of assembly, re-assembly and conversion, as a solver calls them. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctest.h"

/* Rank-2 triplets as a solver holds them: one int32 array per dimension
 * (dims[0] rows, dims[1] columns, counted from base) and n float64 values. */
/* A 3x3 FEM-style assembly: 1-based int32 triplets, one array per
 * dimension, with duplicates to sum and a negative index to skip. */
static int test_fem_assembly_sum_and_plan(void) {
    int failures = 0;
    const uint64_t shape[2] = {3, 3};
    const int32_t rows[7] = {1, 1, 2, 2, 3, 1, -1};
    const int32_t cols[7] = {1, 2, 2, 2, 3, 1, 2};
    const double vals[7] = {1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 99.0};
    const void *dims[2] = {rows, cols};
    hurray_triplets t;
    hurray_coo *coo = NULL;
    hurray_assembly_plan *plan = NULL;
    double out[4], d = 0.0;
    bool found = false;
    const uint64_t q[2] = {0, 0};
    t = ctest_triplets_i32_f64(shape, 7, dims, 1, vals);

    /* Without SKIP_NEGATIVE the negative index is an error, 1-based. */
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, 0, 1), &coo, &plan),
                 HURRAY_ERR_INDEX_OUT_OF_BOUNDS, "triplet 7: coordinate -1 in dimension 1");
    CHECK(coo == NULL && plan == NULL);
    /* ERROR policy names both duplicates, 1-based. */
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(HURRAY_DUP_ERROR, HURRAY_ASSEMBLE_SKIP_NEGATIVE, 1), &coo,
                                     &plan),
                 HURRAY_ERR_DUPLICATE, "triplet 4 duplicates triplet 3 at (2, 2)");
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, HURRAY_ASSEMBLE_SKIP_NEGATIVE, 1), &coo,
                                     &plan),
                 HURRAY_OK, "");
    CHECK(hurray_coo_nnz(coo) == 4 && hurray_coo_is_sorted(coo));
    CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 2, &d, &found), HURRAY_OK, "");
    CHECK(found && d == 11.0);
    CHECK(hurray_assembly_plan_triplets(plan) == 7 && hurray_assembly_plan_nnz(plan) == 4);
    {
        /* The handle speaks the caller's base in later messages. */
        const uint64_t bad[2] = {3, 0};
        CHECK_STATUS(hurray_coo_lookup_f64(coo, bad, 2, &d, NULL), HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                     "query coordinate 4 in dimension 1");
    }
    /* Re-assembly with new values: no sort, same order as CSR. */
    {
        const double v2[7] = {2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 1e300};
        const double want[4] = {22.0, 4.0, 14.0, 10.0};
        size_t k;
        CHECK_STATUS(hurray_assembly_plan_apply(plan, v2, sizeof v2, out, sizeof out, 2), HURRAY_OK, "");
        for (k = 0; k < 4; k++) {
            CHECK(out[k] == want[k]);
        }
        CHECK_STATUS(hurray_assembly_plan_apply(plan, v2, 8, out, sizeof out, 1),
                     HURRAY_ERR_BUFFER_SIZE, "7 triplets of float64");
        CHECK_STATUS(hurray_assembly_plan_apply(NULL, v2, sizeof v2, out, sizeof out, 1),
                     HURRAY_ERR_NULL_POINTER, "plan");
    }
    /* The plan cannot apply in place: values and out_values that share
     * memory are refused before either is touched. */
    {
        double v3[7] = {2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 1e300};
        CHECK_STATUS(hurray_assembly_plan_apply(plan, v3, sizeof v3, v3, 4 * sizeof(double), 1),
                     HURRAY_ERR_INVALID_ARGUMENT, "out_values (32 bytes at");
        CHECK_STATUS(hurray_assembly_plan_apply(plan, v3, sizeof v3, v3 + 3, 4 * sizeof(double), 1),
                     HURRAY_ERR_INVALID_ARGUMENT, "and values (56 bytes at");
        CHECK(v3[0] == 2.0 && v3[3] == 8.0 && v3[6] == 1e300);
    }
    hurray_assembly_plan_free(plan);
    hurray_assembly_plan_free(NULL);
    hurray_coo_free(coo);
    return failures;
}

static int test_assembly_arguments_are_checked(void) {
    int failures = 0;
    const uint64_t shape[1] = {4};
    const uint64_t idx[2] = {1, 3};
    const int8_t vals[2] = {100, 100};
    hurray_triplets t;
    hurray_coo *coo = (hurray_coo *)1;
    memset(&t, 0, sizeof t);
    t.rank = 1;
    t.shape = shape;
    t.n = 2;
    t.index_type = HURRAY_INDEX_UINT64;
    t.indices = idx;
    t.indices_bytes = sizeof idx;
    t.type_tag = HURRAY_TYPE_INT8;
    t.values = vals;
    t.values_bytes = 2;
    CHECK_STATUS(hurray_coo_assemble(NULL, CTEST_ASSEMBLY(0, 0, 1), &coo, NULL), HURRAY_ERR_NULL_POINTER, "triplets");
    CHECK(coo == NULL);
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(9, 0, 1), &coo, NULL), HURRAY_ERR_INVALID_ARGUMENT,
                 "duplicate policy 9 is not accepted");
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(0, 8, 1), &coo, NULL), HURRAY_ERR_INVALID_FLAGS,
                 "hurray_coo_assemble takes 0 or any of HURRAY_ASSEMBLE_SKIP_NEGATIVE (0x1), "
                 "HURRAY_ASSEMBLE_DROP_ZEROS (0x2) and HURRAY_ASSEMBLE_ROUNDED_SUM (0x4)");
    {
        /* NULL options are the defaults (HURRAY_DUP_ERROR, no flags, one
         * thread); a short size is refused and nothing else is read. */
        hurray_assemble_options short_options = {0};
        short_options.size = sizeof short_options - 1;
        CHECK_STATUS(hurray_coo_assemble(&t, NULL, &coo, NULL), HURRAY_OK, "");
        CHECK(coo != NULL && hurray_coo_nnz(coo) == 2);
        hurray_coo_free(coo);
        CHECK_STATUS(hurray_coo_assemble(&t, &short_options, &coo, NULL),
                     HURRAY_ERR_INVALID_ARGUMENT, "options->size is");
        CHECK(coo == NULL);
    }
    t.index_type = 7;
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(0, 0, 1), &coo, NULL), HURRAY_ERR_INVALID_ARGUMENT,
                 "index type 7 is not accepted");
    t.index_type = HURRAY_INDEX_UINT64;
    {
        /* 1-based triplets passed as 0-based: the message names the fix. */
        const uint64_t one_based[2] = {1, 4};
        t.indices = one_based;
        CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(0, 0, 1), &coo, NULL), HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                     "triplet 1: coordinate 4 in dimension 0 is out of bounds (valid 0 to 3); if "
                     "these triplets count from 1, set index_base to 1");
        t.indices = idx;
    }
    t.index_base = 2;
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(0, 0, 1), &coo, NULL), HURRAY_ERR_INVALID_ARGUMENT,
                 "index base 2 is not accepted");
    t.index_base = 0;
    t.dim_indices = (const void *const *)(const void *)&t; /* both given */
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(0, 0, 1), &coo, NULL), HURRAY_ERR_NULL_POINTER,
                 "exactly one of them");
    t.dim_indices = NULL;
    /* A byte length that contradicts n: refused before anything is read. */
    t.indices_bytes = 8;
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(0, 0, 1), &coo, NULL), HURRAY_ERR_BUFFER_SIZE,
                 "triplet indices buffer is 8 bytes but 2 uint64 coordinates needs exactly 16");
    t.indices_bytes = sizeof idx;
    t.values_bytes = 3;
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(0, 0, 1), &coo, NULL), HURRAY_ERR_BUFFER_SIZE,
                 "2 triplets of int8");
    t.values_bytes = 2;
    {
        /* int8 100 + 100 overflows: an error, never a wrap. */
        const uint64_t same[2] = {1, 1};
        t.indices = same;
        t.indices_bytes = sizeof same;
        CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, 0, 1), &coo, NULL), HURRAY_ERR_OVERFLOW,
                     "the SUM of triplets 0 to 1 at (1) overflows int8");
        CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(HURRAY_DUP_MAX, 0, 1), &coo, NULL), HURRAY_OK, "");
        hurray_coo_free(coo);
    }
    /* A pattern: no values, bool true at each coordinate. */
    t.indices = idx;
    t.indices_bytes = sizeof idx;
    t.type_tag = HURRAY_PATTERN;
    t.values = NULL;
    t.values_bytes = 0;
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(0, 0, 1), &coo, NULL), HURRAY_OK, "");
    CHECK(hurray_coo_type_tag(coo) == HURRAY_TYPE_BOOL && hurray_coo_nnz(coo) == 2);
    hurray_coo_free(coo);
    coo = NULL;
    {
        /* A pattern given values (a zero-initialised struct whose type_tag
         * was forgotten): refused, never assembled with the values dropped. */
        static const double six[6] = {1, 2, 3, 4, 5, 6};
        hurray_assembly_plan *plan = (hurray_assembly_plan *)&plan;
        t.values = six;
        t.values_bytes = sizeof six;
        CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(0, 0, 1), &coo, &plan), HURRAY_ERR_BUFFER_SIZE,
                     "triplets->values buffer is 48 bytes but type_tag HURRAY_PATTERN");
        CHECK(coo == NULL && plan == NULL);
        /* A NULL out: the plan out-pointer is still set to NULL, as the
         * header promises for every failure. */
        t.values = NULL;
        t.values_bytes = 0;
        plan = (hurray_assembly_plan *)&plan;
        CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(0, 0, 1), NULL, &plan), HURRAY_ERR_NULL_POINTER, "out");
        CHECK(plan == NULL);
    }
    return failures;
}

/* CSR in int32 base 0 and CSC in int64 base 1 of
 *   [1 0 2]
 *   [0 0 3]
 * from an unsorted handle, then back. */
/* Packed uint64 coordinates (rank per entry) and float64 values. */
static hurray_triplets packed_f64(uint32_t rank, const uint64_t *shape, uint64_t n,
                                  const uint64_t *idx, size_t idx_bytes, const double *vals,
                                  size_t vals_bytes) {
    hurray_triplets t;
    memset(&t, 0, sizeof t);
    t.rank = rank;
    t.shape = shape;
    t.n = n;
    t.index_type = HURRAY_INDEX_UINT64;
    t.indices = idx;
    t.indices_bytes = idx_bytes;
    t.type_tag = HURRAY_TYPE_FLOAT64;
    t.values = vals;
    t.values_bytes = vals_bytes;
    return t;
}

static int test_csr_csc_dense_and_back(void) {
    int failures = 0;
    const uint64_t shape[2] = {2, 3};
    const uint64_t idx[6] = {1, 2, 0, 2, 0, 0};
    const double vals[3] = {3.0, 2.0, 1.0};
    hurray_triplets t;
    hurray_coo *coo = NULL, *back = NULL;
    size_t ob = 0, ib = 0, vb = 0;
    t = packed_f64(2, shape, 3, idx, sizeof idx, vals, sizeof vals);
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(0, 0, 1), &coo, NULL), HURRAY_OK, "");
    CHECK_STATUS(ctest_compressed_size(coo, HURRAY_FORMAT_CSR, HURRAY_INDEX_INT32, &ob, &ib, &vb),
                 HURRAY_OK, "");
    CHECK(ob == 12 && ib == 12 && vb == 24);
    {
        int32_t rp[3], ci[3];
        double v[3];
        CHECK_STATUS(ctest_export_compressed(coo, HURRAY_FORMAT_CSR, HURRAY_INDEX_INT32, 0, rp,
                                                  sizeof rp, ci, sizeof ci, v, sizeof v, 1),
                     HURRAY_OK, "");
        CHECK(rp[0] == 0 && rp[1] == 2 && rp[2] == 3);
        CHECK(ci[0] == 0 && ci[1] == 2 && ci[2] == 2);
        CHECK(v[0] == 1.0 && v[1] == 2.0 && v[2] == 3.0);
        CHECK_STATUS(ctest_export_compressed(coo, HURRAY_FORMAT_CSR, HURRAY_INDEX_INT32, 0, rp,
                                                  sizeof rp - 4, ci, sizeof ci, v, sizeof v, 1),
                     HURRAY_ERR_BUFFER_SIZE, "offsets");
        CHECK_STATUS(ctest_from_compressed(HURRAY_FORMAT_CSR, 2, 3, HURRAY_INDEX_INT32, 0, rp,
                                                sizeof rp, ci, sizeof ci, HURRAY_TYPE_FLOAT64, v,
                                                sizeof v, 1, &back),
                     HURRAY_OK, "");
        CHECK(back != NULL && hurray_coo_nnz(back) == 3);
        {
            size_t n1 = 0, n2 = 0;
            const void *a = hurray_coo_indices(coo, &n1);
            const void *b = hurray_coo_indices(back, &n2);
            CHECK(n1 == n2 && memcmp(a, b, n1) == 0);
        }
        hurray_coo_free(back);
        back = NULL;
    }
    {
        /* Offsets past the entries inside the array (the last one right):
         * INVALID_OFFSETS naming the row, never a panic caught at the
         * barrier. */
        const int64_t bad1[4] = {0, 2, 7, 5}, bad2[4] = {0, (int64_t)1 << 62, 2, 5};
        const int64_t ci[5] = {0, 1, 2, 3, 0};
        const double v[5] = {1, 2, 3, 4, 5};
        CHECK_STATUS(ctest_from_compressed(HURRAY_FORMAT_CSR, 3, 4, HURRAY_INDEX_INT64, 0, bad1,
                                                sizeof bad1, ci, sizeof ci, HURRAY_TYPE_FLOAT64, v,
                                                sizeof v, 1, &back),
                     HURRAY_ERR_INVALID_OFFSETS, "row 1: offsets[2] = 7 is past the end of the 5");
        CHECK(back == NULL);
        CHECK_STATUS(ctest_from_compressed(HURRAY_FORMAT_CSR, 3, 4, HURRAY_INDEX_INT64, 0, bad2,
                                                sizeof bad2, ci, sizeof ci, HURRAY_TYPE_FLOAT64, v,
                                                sizeof v, 1, &back),
                     HURRAY_ERR_INVALID_OFFSETS, "row 0: offsets[1] = 4611686018427387904");
        CHECK(back == NULL);
    }
    {
        int64_t cp[4], ri[3];
        double v[3];
        CHECK_STATUS(ctest_export_compressed(coo, HURRAY_FORMAT_CSC, HURRAY_INDEX_INT64, 1, cp,
                                                  sizeof cp, ri, sizeof ri, v, sizeof v, 1),
                     HURRAY_OK, "");
        CHECK(cp[0] == 1 && cp[1] == 2 && cp[2] == 2 && cp[3] == 4);
        CHECK(ri[0] == 1 && ri[1] == 1 && ri[2] == 2);
        CHECK(v[0] == 1.0 && v[1] == 2.0 && v[2] == 3.0);
    }
    {
        double dense[6];
        size_t bytes = 0;
        CHECK_STATUS(hurray_coo_dense_size(coo, &bytes), HURRAY_OK, "");
        CHECK(bytes == sizeof dense);
        CHECK_STATUS(hurray_coo_export_dense(coo, dense, sizeof dense, 2), HURRAY_OK, "");
        CHECK(dense[0] == 1.0 && dense[1] == 0.0 && dense[2] == 2.0);
        CHECK(dense[3] == 0.0 && dense[4] == 0.0 && dense[5] == 3.0);
    }
    CHECK_STATUS(ctest_export_compressed(coo, 9, HURRAY_INDEX_INT32, 0, NULL, 0, NULL, 0, NULL, 0, 1),
                 HURRAY_ERR_INVALID_ARGUMENT, "format 9 is not accepted");
    hurray_coo_free(coo);
    return failures;
}

/* Mode orders: entries of a rank-3 tensor sorted by modes (2, 0, 1). */
static int test_sort_modes(void) {
    int failures = 0;
    const uint64_t shape[3] = {2, 2, 2};
    const uint64_t idx[9] = {0, 0, 1, 1, 1, 0, 0, 1, 0};
    const double vals[3] = {1.0, 2.0, 3.0};
    const uint32_t modes[3] = {2, 0, 1}, bad[3] = {0, 0, 1};
    hurray_triplets t;
    hurray_coo *coo = NULL, *s = NULL;
    size_t nb = 0;
    t = packed_f64(3, shape, 3, idx, sizeof idx, vals, sizeof vals);
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(0, 0, 1), &coo, NULL), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_sort_modes(coo, modes, 3, 2, &s), HURRAY_OK, "");
    {
        /* By (k, i, j): (0,1,0)=3 [k0], (1,1,0)=2 [k0], (0,0,1)=1 [k1]. */
        const uint64_t *got = hurray_coo_indices(s, &nb);
        const double *v = hurray_coo_values(s, &nb);
        CHECK(got[0] == 0 && got[1] == 1 && got[2] == 0 && v[0] == 3.0);
        CHECK(got[3] == 1 && got[4] == 1 && got[5] == 0 && v[1] == 2.0);
        CHECK(got[6] == 0 && got[7] == 0 && got[8] == 1 && v[2] == 1.0);
        CHECK(!hurray_coo_is_sorted(s));
    }
    hurray_coo_free(s);
    CHECK_STATUS(hurray_coo_sort_modes(coo, bad, 3, 1, &s), HURRAY_ERR_INVALID_ARGUMENT,
                 "not a permutation");
    CHECK_STATUS(hurray_coo_sort_modes(coo, modes, 2, 1, &s), HURRAY_ERR_RANK_MISMATCH, "rank 2");
    CHECK(s == NULL);
    hurray_coo_free(coo);
    return failures;
}

/* Triplets straight into CSR and CSC (hurray_assemble_compressed): the
 * result of assemble + export, nothing written past it, a plan in the
 * CSC order, and the refusals. */
static int test_assemble_into_csr_and_csc(void) {
    int failures = 0;
    const uint64_t shape[2] = {3, 3};
    const int32_t rows[8] = {1, 1, 2, 2, 3, 1, -1, 2};
    const int32_t cols[8] = {1, 2, 2, 2, 3, 1, 2, 1};
    const double vals[8] = {1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 99.0, 6.0};
    const void *dims[2] = {rows, cols};
    hurray_triplets t;
    hurray_compressed c;
    hurray_assembly_plan *plan = NULL;
    int32_t o32[4], i32[8];
    int64_t o64[4], i64[8];
    double v[8];
    uint64_t nnz = 99;
    size_t k;
    t = ctest_triplets_i32_f64(shape, 8, dims, 1, vals);
    memset(&c, 0, sizeof c);
    c.format = HURRAY_FORMAT_CSR;
    c.index_type = HURRAY_INDEX_INT32;
    c.offsets = o32;
    c.offsets_bytes = sizeof o32;
    c.indices = i32;
    c.indices_bytes = sizeof i32; /* room for every triplet */
    c.values = v;
    c.values_bytes = sizeof v;
    memset(i32, 0x7F, sizeof i32);
    memset(v, 0x7F, sizeof v);
    CHECK_STATUS(hurray_assemble_compressed(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, HURRAY_ASSEMBLE_SKIP_NEGATIVE, 1),
                                            &c, &nnz, NULL),
                 HURRAY_OK, "");
    {
        const int32_t wo[4] = {0, 2, 4, 5}, wi[5] = {0, 1, 0, 1, 2};
        const double wv[5] = {11.0, 2.0, 6.0, 7.0, 5.0};
        CHECK(nnz == 5);
        CHECK(memcmp(o32, wo, sizeof wo) == 0 && memcmp(i32, wi, sizeof wi) == 0);
        CHECK(memcmp(v, wv, sizeof wv) == 0);
        /* Past the result: untouched. */
        CHECK(i32[5] == 0x7F7F7F7F && i32[7] == 0x7F7F7F7F);
        {
            unsigned char past[3 * sizeof(double)];
            memset(past, 0x7F, sizeof past);
            CHECK(memcmp(&v[5], past, sizeof past) == 0);
        }
    }
    /* CSC, int64, 1-based, with a plan whose order is the CSC values'. */
    c.format = HURRAY_FORMAT_CSC;
    c.index_type = HURRAY_INDEX_INT64;
    c.base = 1;
    c.offsets = o64;
    c.offsets_bytes = sizeof o64;
    c.indices = i64;
    c.indices_bytes = 5 * sizeof(int64_t); /* exactly the result */
    c.values_bytes = 5 * sizeof(double);
    CHECK_STATUS(hurray_assemble_compressed(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, HURRAY_ASSEMBLE_SKIP_NEGATIVE, 2),
                                            &c, &nnz, &plan),
                 HURRAY_OK, "");
    {
        const int64_t wo[4] = {1, 3, 5, 6}, wi[5] = {1, 2, 1, 2, 3};
        const double wv[5] = {11.0, 6.0, 2.0, 7.0, 5.0};
        const double v2[8] = {2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 1e300, 12.0};
        const double w2[5] = {22.0, 12.0, 4.0, 14.0, 10.0};
        double out[5];
        CHECK(nnz == 5 && plan != NULL);
        CHECK(memcmp(o64, wo, sizeof wo) == 0 && memcmp(i64, wi, sizeof wi) == 0);
        CHECK(memcmp(v, wv, sizeof wv) == 0);
        CHECK(hurray_assembly_plan_nnz(plan) == 5);
        CHECK_STATUS(hurray_assembly_plan_apply(plan, v2, sizeof v2, out, sizeof out, 1), HURRAY_OK, "");
        for (k = 0; k < 5; k++) CHECK(out[k] == w2[k]);
    }
    hurray_assembly_plan_free(plan);
    plan = NULL;
    /* One entry short: the count and the bytes needed. */
    c.indices_bytes = 4 * sizeof(int64_t);
    CHECK_STATUS(hurray_assemble_compressed(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, HURRAY_ASSEMBLE_SKIP_NEGATIVE, 1),
                                            &c, &nnz, &plan),
                 HURRAY_ERR_BUFFER_TOO_SMALL, "has 32 bytes but 40 are needed for the assembled CSC's 5 int64 indices");
    CHECK(nnz == 0 && plan == NULL);
    c.indices_bytes = 5 * sizeof(int64_t);
    /* The triplets' errors are hurray_coo_assemble's, in the caller's base. */
    CHECK_STATUS(hurray_assemble_compressed(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, 0, 1), &c, &nnz, NULL),
                 HURRAY_ERR_INDEX_OUT_OF_BOUNDS, "triplet 7: coordinate -1 in dimension 1");
    CHECK_STATUS(hurray_assemble_compressed(&t, CTEST_ASSEMBLY(HURRAY_DUP_ERROR, HURRAY_ASSEMBLE_SKIP_NEGATIVE, 1),
                                            &c, &nnz, NULL),
                 HURRAY_ERR_DUPLICATE, "triplet 4 duplicates triplet 3 at (2, 2)");
    /* Offsets of the wrong size, NULL arguments, rank 3. */
    c.offsets_bytes = 3 * sizeof(int64_t);
    CHECK_STATUS(hurray_assemble_compressed(&t, NULL, &c, &nnz, NULL), HURRAY_ERR_BUFFER_SIZE, "offsets");
    c.offsets_bytes = sizeof o64;
    CHECK_STATUS(hurray_assemble_compressed(&t, NULL, &c, NULL, NULL), HURRAY_ERR_NULL_POINTER, "out_nnz");
    CHECK_STATUS(hurray_assemble_compressed(&t, NULL, NULL, &nnz, NULL), HURRAY_ERR_NULL_POINTER, "c");
    CHECK_STATUS(hurray_assemble_compressed(NULL, NULL, &c, &nnz, NULL), HURRAY_ERR_NULL_POINTER, "triplets");
    c.format = 7;
    CHECK_STATUS(hurray_assemble_compressed(&t, NULL, &c, &nnz, NULL), HURRAY_ERR_INVALID_ARGUMENT, "format");
    c.format = HURRAY_FORMAT_CSR;
    /* Output arrays that share memory are refused before anything is
     * written; arrays that only touch are apart. */
    c.indices = (char *)o64 + 8;
    CHECK_STATUS(hurray_assemble_compressed(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, HURRAY_ASSEMBLE_SKIP_NEGATIVE, 1),
                                            &c, &nnz, NULL),
                 HURRAY_ERR_INVALID_ARGUMENT, "c->offsets (32 bytes at");
    CHECK(nnz == 0);
    CHECK_STATUS(hurray_read_mtx_compressed("no such file.mtx", NULL, &c, &nnz, NULL),
                 HURRAY_ERR_INVALID_ARGUMENT, "and c->indices (40 bytes at");
    {
        int64_t both[9]; /* offsets, then the indices right after them */
        const int64_t wo[4] = {1, 3, 5, 6}, wi[5] = {1, 2, 1, 2, 3}; /* CSR, 1-based */
        c.offsets = both;
        c.indices = both + 4;
        CHECK_STATUS(hurray_assemble_compressed(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, HURRAY_ASSEMBLE_SKIP_NEGATIVE, 1),
                                                &c, &nnz, NULL),
                     HURRAY_OK, "");
        CHECK(nnz == 5 && memcmp(both, wo, sizeof wo) == 0 && memcmp(both + 4, wi, sizeof wi) == 0);
        c.offsets = o64;
    }
    c.indices = i64;
    {
        const uint64_t shape3[3] = {3, 3, 3};
        hurray_triplets t3 = t;
        const void *dims3[3] = {rows, cols, cols};
        t3.rank = 3;
        t3.shape = shape3;
        t3.dim_indices = dims3;
        CHECK_STATUS(hurray_assemble_compressed(&t3, CTEST_ASSEMBLY(HURRAY_DUP_SUM, HURRAY_ASSEMBLE_SKIP_NEGATIVE, 1),
                                                &c, &nnz, NULL),
                     HURRAY_ERR_UNSUPPORTED_FEATURE, "rank 3");
    }
    /* A pattern into CSR without values. */
    t.type_tag = HURRAY_PATTERN;
    t.values = NULL;
    t.values_bytes = 0;
    c.index_type = HURRAY_INDEX_INT32;
    c.base = 0;
    c.offsets = o32;
    c.offsets_bytes = sizeof o32;
    c.indices = i32;
    c.indices_bytes = sizeof i32;
    c.values = NULL;
    c.values_bytes = 0;
    CHECK_STATUS(hurray_assemble_compressed(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, HURRAY_ASSEMBLE_SKIP_NEGATIVE, 1),
                                            &c, &nnz, NULL),
                 HURRAY_OK, "");
    {
        const int32_t wo[4] = {0, 2, 4, 5}, wi[5] = {0, 1, 0, 1, 2};
        CHECK(nnz == 5 && memcmp(o32, wo, sizeof wo) == 0 && memcmp(i32, wi, sizeof wi) == 0);
    }
    return failures;
}

/* HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT: element-by-element triplets of a
 * small triangle mesh (1-based, with repeats), assembled into int32 CSR
 * arrays with room for every triplet, give the same arrays as without the
 * flag, on 1 and 2 threads, and the room past the result was used. Arrays
 * that share memory with the triplets are refused. */
static int test_scratch_in_output(void) {
    /* 142,578 triplets: two threads' worth (65,536 each at least). */
    enum { SIDE = 90, N = (SIDE - 1) * (SIDE - 1) * 18, ROWS = SIDE * SIDE };
    int failures = 0;
    int32_t *r = malloc(N * sizeof *r), *cl = malloc(N * sizeof *cl);
    double *x = malloc(N * sizeof *x);
    int32_t *o[2], *ix[2];
    double *vx[2];
    const uint64_t shape[2] = {ROWS, ROWS};
    const void *dims[2];
    hurray_triplets t;
    hurray_compressed c;
    uint64_t nnz[2] = {0, 0};
    size_t n = 0, k;
    int a, b, run;
    uint32_t threads;
    for (k = 0; k < 2; k++) {
        o[k] = malloc((ROWS + 1) * sizeof(int32_t));
        ix[k] = malloc(N * sizeof(int32_t));
        vx[k] = malloc(N * sizeof(double));
    }
    if (!r || !cl || !x || !o[0] || !o[1] || !ix[0] || !ix[1] || !vx[0] || !vx[1]) {
        fprintf(stderr, "%s:%d: out of memory\n", __FILE__, __LINE__);
        return 1;
    }
    for (a = 0; a < SIDE - 1; a++) {
        for (b = 0; b < SIDE - 1; b++) {
            const int32_t n0 = a * SIDE + b + 1;
            const int32_t tri[2][3] = {{n0, n0 + 1, n0 + SIDE}, {n0 + 1, n0 + SIDE + 1, n0 + SIDE}};
            int h, p, q;
            for (h = 0; h < 2; h++)
                for (p = 0; p < 3; p++)
                    for (q = 0; q < 3; q++) {
                        r[n] = tri[h][p];
                        cl[n] = tri[h][q];
                        x[n] = (p == q ? 2.0 : -0.5) + 0.001 * (double)(n % 7);
                        n++;
                    }
        }
    }
    dims[0] = r;
    dims[1] = cl;
    t = ctest_triplets_i32_f64(shape, N, dims, 1, x);
    memset(&c, 0, sizeof c);
    c.format = HURRAY_FORMAT_CSR;
    c.index_type = HURRAY_INDEX_INT32;
    c.base = 1;
    c.offsets_bytes = (ROWS + 1) * sizeof(int32_t);
    c.indices_bytes = N * sizeof(int32_t);
    c.values_bytes = N * sizeof(double);
    for (threads = 1; threads <= 2; threads++) {
        for (run = 0; run < 2; run++) {
            memset(ix[run], 0x7F, N * sizeof(int32_t));
            memset(vx[run], 0x7F, N * sizeof(double));
            c.offsets = o[run];
            c.indices = ix[run];
            c.values = vx[run];
            CHECK_STATUS(hurray_assemble_compressed(
                             &t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, run ? HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT : 0, threads),
                             &c, &nnz[run], NULL),
                         HURRAY_OK, "");
        }
        CHECK(nnz[0] == nnz[1] && nnz[0] > 0 && nnz[0] < N);
        CHECK(memcmp(o[0], o[1], (ROWS + 1) * sizeof(int32_t)) == 0);
        CHECK(memcmp(ix[0], ix[1], nnz[0] * sizeof(int32_t)) == 0);
        CHECK(memcmp(vx[0], vx[1], nnz[0] * sizeof(double)) == 0);
        /* Without the flag nothing past the result is written; with it the
         * room served as work space. */
        CHECK(ix[0][N - 1] == 0x7F7F7F7F && ix[1][nnz[1]] != 0x7F7F7F7F);
    }
    /* The triplets' values inside c->values: refused, nothing assembled. */
    memcpy(vx[1], x, N * sizeof(double));
    t.values = vx[1] + 8;
    t.values_bytes = (N - 8) * sizeof(double);
    t.n = N - 8;
    t.dim_indices_bytes = (N - 8) * sizeof(int32_t);
    CHECK_STATUS(hurray_assemble_compressed(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, 0, 1), &c, &nnz[1], NULL),
                 HURRAY_ERR_INVALID_ARGUMENT, "triplets->values");
    CHECK(nnz[1] == 0);
    for (k = 0; k < 2; k++) {
        free(o[k]);
        free(ix[k]);
        free(vx[k]);
    }
    free(r);
    free(cl);
    free(x);
    return failures;
}

/* Many triplets in no order (values beyond the plan's 8 MiB staging
 * threshold): re-assembly through the plan gives, bit for bit, what a new
 * assembly of the new values gives, on 1 and 2 threads, and again on a
 * later call (which reuses the plan's staging buffer). */
static int test_large_shuffled_reassembly(void) {
    enum { N = 1200000, SIDE = 1500 };
    int failures = 0;
    const uint64_t shape[2] = {SIDE, SIDE};
    int32_t *r = malloc(N * sizeof(int32_t));
    int32_t *c = malloc(N * sizeof(int32_t));
    double *v1 = malloc(N * sizeof(double));
    double *v2 = malloc(N * sizeof(double));
    double *out = NULL;
    const void *dims[2] = {r, c};
    hurray_triplets t;
    hurray_coo *coo = NULL, *fresh = NULL;
    hurray_assembly_plan *plan = NULL;
    uint64_t s = 0x9E3779B97F4A7C15u, nnz = 0;
    size_t k, bytes = 0, fresh_bytes = 0;
    int round;
    CHECK(r && c && v1 && v2);
    if (!(r && c && v1 && v2)) goto done;
    for (k = 0; k < N; k++) {
        ctest_next(&s);
        r[k] = (int32_t)(s % SIDE);
        c[k] = (int32_t)((s >> 20) % SIDE);
        v1[k] = (double)(s >> 40) * 0.125;
        v2[k] = 1.0 / (double)((s >> 33) % 1000 + 1);
    }
    t = ctest_triplets_i32_f64(shape, N, dims, 0, v1);
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, 0, 1), &coo, &plan),
                 HURRAY_OK, "");
    if (coo == NULL || plan == NULL) goto done;
    nnz = hurray_assembly_plan_nnz(plan);
    CHECK(nnz == hurray_coo_nnz(coo) && nnz > N / 2 && nnz < N);
    t.values = v2;
    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, 0, 1), &fresh, NULL),
                 HURRAY_OK, "");
    if (fresh == NULL) goto done;
    out = malloc(nnz * sizeof(double));
    CHECK(out != NULL);
    if (out == NULL) goto done;
    for (round = 0; round < 3; round++) {
        const void *want = hurray_coo_values(fresh, &fresh_bytes);
        memset(out, 0x7F, nnz * sizeof(double));
        CHECK_STATUS(hurray_assembly_plan_apply(plan, v2, N * sizeof(double), out,
                                                nnz * sizeof(double), round == 1 ? 2u : 1u),
                     HURRAY_OK, "");
        CHECK(fresh_bytes == nnz * sizeof(double) && memcmp(out, want, fresh_bytes) == 0);
        /* The first values back again. */
        CHECK_STATUS(hurray_assembly_plan_apply(plan, v1, N * sizeof(double), out,
                                                nnz * sizeof(double), round == 1 ? 1u : 2u),
                     HURRAY_OK, "");
        want = hurray_coo_values(coo, &bytes);
        CHECK(bytes == fresh_bytes && memcmp(out, want, bytes) == 0);
    }
done:
    hurray_assembly_plan_free(plan);
    hurray_coo_free(coo);
    hurray_coo_free(fresh);
    free(out);
    free(r);
    free(c);
    free(v1);
    free(v2);
    return failures;
}

/* float8_e8m0 codes 0x00 and 0xFF are forbidden as data: refused with and
 * without a plan, and straight into CSR, with the same message (the
 * handle's entry holding the first one). */
static int test_forbidden_value_codes(void) {
    int failures = 0;
    const uint64_t shape[2] = {65, 3};
    const int32_t rows[3] = {0, 0, 1};
    const int32_t cols[3] = {2, 0, 1};
    const uint8_t codes[3] = {0x7F, 0xFF, 0x40};
    const void *dims[2] = {rows, cols};
    const uint32_t policies[3] = {HURRAY_DUP_FIRST, HURRAY_DUP_LAST, HURRAY_DUP_ERROR};
    hurray_triplets t = ctest_triplets_i32_f64(shape, 3, dims, 0, NULL);
    size_t k;
    t.type_tag = HURRAY_TYPE_FLOAT8_E8M0;
    t.values = codes;
    t.values_bytes = sizeof codes;
    for (k = 0; k < 3; k++) {
        hurray_coo *coo = NULL;
        hurray_assembly_plan *plan = NULL;
        int32_t offsets[66], indices[3];
        uint8_t values[3];
        const hurray_compressed c =
            ctest_compressed(HURRAY_FORMAT_CSR, HURRAY_INDEX_INT32, 0, offsets, sizeof offsets,
                             indices, sizeof indices, values, sizeof values);
        uint64_t nnz = 0;
        CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(policies[k], 0, 1), &coo, &plan),
                     HURRAY_ERR_INVALID_VALUE, "entry 0: value code 0xFF is reserved");
        CHECK(coo == NULL && plan == NULL);
        CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(policies[k], 0, 2), &coo, NULL),
                     HURRAY_ERR_INVALID_VALUE, "entry 0: value code 0xFF is reserved");
        CHECK(coo == NULL);
        CHECK_STATUS(hurray_assemble_compressed(&t, CTEST_ASSEMBLY(policies[k], 0, 1), &c, &nnz, NULL),
                     HURRAY_ERR_INVALID_VALUE, "entry 0: value code 0xFF is reserved");
    }
    return failures;
}

/* Sorted int32 and int64 triplets are written into the handle and checked
 * a block at a time on each thread: input broken late, past the first
 * blocks and in the second thread's range, by a repeat or a column past the
 * shape, gives what it would anywhere else (the repeat summed, the
 * coordinate named). */
static int test_sorted_input_broken_late(void) {
    enum { N = 200000, COLS = 5 };
    int failures = 0;
    const uint64_t shape[2] = {N / COLS, COLS};
    int32_t *rows = malloc(N * sizeof *rows), *cols = malloc(N * sizeof *cols);
    int64_t *rows64 = malloc(N * sizeof *rows64), *cols64 = malloc(N * sizeof *cols64);
    double *vals = malloc(N * sizeof *vals);
    const void *dims[2] = {rows, cols};
    const void *dims64[2] = {rows64, cols64};
    uint32_t th;
    int wide, kind;
    CHECK(rows && cols && rows64 && cols64 && vals);
    if (!rows || !cols || !rows64 || !cols64 || !vals) goto done;
    for (wide = 0; wide < 2; wide++) {
        for (th = 1; th <= 2; th++) {
            for (kind = 0; kind < 3; kind++) {
                hurray_triplets t = ctest_triplets_i32_f64(shape, N, dims, 0, vals);
                hurray_coo *coo = NULL;
                const uint64_t at[2] = {150000 / COLS, 150000 % COLS};
                double x = 0;
                bool found = false;
                int i;
                for (i = 0; i < N; i++) {
                    rows[i] = i / COLS;
                    cols[i] = i % COLS;
                    vals[i] = (double)i;
                }
                if (kind == 1) {
                    /* A repeat of the entry before: triplet 150001 onto 150000. */
                    rows[150001] = rows[150000];
                    cols[150001] = cols[150000];
                }
                if (kind == 2) cols[N - 2] = COLS; /* past the shape, near the end */
                if (wide) {
                    for (i = 0; i < N; i++) {
                        rows64[i] = rows[i];
                        cols64[i] = cols[i];
                    }
                    t.index_type = HURRAY_INDEX_INT64;
                    t.dim_indices = dims64;
                    t.dim_indices_bytes = (size_t)N * sizeof(int64_t);
                }
                if (kind == 2) {
                    CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, 0, th), &coo, NULL),
                                 HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                                 "triplet 199998: coordinate 5 in dimension 1 is out of bounds");
                    CHECK(coo == NULL);
                    continue;
                }
                CHECK_STATUS(hurray_coo_assemble(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, 0, th), &coo, NULL),
                             HURRAY_OK, "");
                if (coo == NULL) continue;
                CHECK(hurray_coo_nnz(coo) == (uint64_t)(kind == 1 ? N - 1 : N) && hurray_coo_is_sorted(coo));
                CHECK(hurray_coo_validate(coo, 1) == HURRAY_OK);
                CHECK(hurray_coo_lookup_f64(coo, at, 2, &x, &found) == HURRAY_OK && found);
                CHECK(x == (kind == 1 ? 150000.0 + 150001.0 : 150000.0));
                hurray_coo_free(coo);
            }
        }
    }
done:
    free(rows);
    free(cols);
    free(rows64);
    free(cols64);
    free(vals);
    return failures;
}

static const struct {
    const char *name;
    ctest_fn fn;
} TESTS[] = {
    {"sorted_input_broken_late", test_sorted_input_broken_late},
    {"forbidden_value_codes", test_forbidden_value_codes},
    {"assemble_into_csr_and_csc", test_assemble_into_csr_and_csc},
    {"scratch_in_output", test_scratch_in_output},
    {"sort_modes", test_sort_modes},
    {"fem_assembly_sum_and_plan", test_fem_assembly_sum_and_plan},
    {"large_shuffled_reassembly", test_large_shuffled_reassembly},
    {"assembly_arguments_are_checked", test_assembly_arguments_are_checked},
    {"csr_csc_dense_and_back", test_csr_csc_dense_and_back},
};

size_t ctest_assemble_count(void);
const char *ctest_assemble_name(size_t i);
int ctest_assemble_run(size_t i);

size_t ctest_assemble_count(void) { return sizeof TESTS / sizeof TESTS[0]; }
const char *ctest_assemble_name(size_t i) {
    return i < ctest_assemble_count() ? TESTS[i].name : NULL;
}
int ctest_assemble_run(size_t i) { return i < ctest_assemble_count() ? TESTS[i].fn() : -1; }
