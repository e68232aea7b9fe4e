/* Distributed assembly under mpirun (1, 2, 4 ranks): a FEM matrix whose
 * element contributions are scattered over the ranks (1-based int32
 * triplets, as Fortran holds them) assembles, on every rank, into exactly
 * the rows a single-process assembly of all triplets gives (bit for bit);
 * re-assembly through the plan with new values equals a fresh assembly and
 * sends exactly the values that cross ranks; a duplicate across ranks and
 * an out-of-bounds row on one rank give the same status and message on
 * every rank. Exit status 0 when every check passed on every rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray_coo_mpi.h"

#include "mpitest.h"

#define M 24 /* M x M squares, two triangles each */
#define NODES ((M + 1) * (M + 1))

/* The triplets rank r contributes: the elements e with e % size == r, 9
 * entries each (1-based rows and columns), values scaled by `scale`. */
static uint64_t triplets_of(int r, double scale, int32_t *rows, int32_t *cols, double *vals) {
    uint64_t n = 0;
    int e = 0;
    for (int y = 0; y < M; y++) {
        for (int x = 0; x < M; x++) {
            for (int t = 0; t < 2; t++, e++) {
                int v[3];
                int p0 = y * (M + 1) + x;
                if (e % size != r) continue;
                v[0] = p0;
                v[1] = t ? p0 + M + 2 : p0 + 1;
                v[2] = t ? p0 + M + 1 : p0 + M + 2;
                for (int a = 0; a < 3; a++) {
                    for (int b = 0; b < 3; b++) {
                        rows[n] = v[a] + 1;
                        cols[n] = v[b] + 1;
                        /* SPD: stiffness-like off-diagonals, a heavy diagonal. */
                        vals[n] = scale * (a == b ? 4.0 + 0.01 * (double)e : -0.5 - 0.001 * (double)(e % 7));
                        n++;
                    }
                }
            }
        }
    }
    return n;
}

static hurray_triplets as_triplets(const int32_t **dims, uint64_t n, const double *vals,
                                   const uint64_t *shape) {
    hurray_triplets t;
    memset(&t, 0, sizeof t);
    t.rank = 2;
    t.shape = shape;
    t.n = n;
    t.index_type = HURRAY_INDEX_INT32;
    t.index_base = 1;
    t.dim_indices = (const void *const *)dims;
    t.dim_indices_bytes = n * sizeof(int32_t);
    t.type_tag = HURRAY_TYPE_FLOAT64;
    t.values = vals;
    t.values_bytes = n * sizeof(double);
    return t;
}

/* Single-process reference: all ranks' triplets in rank order, assembled,
 * cut at the distributed blocks; this rank's part. */
static hurray_coo *reference(double scale, const uint64_t *bounds) {
    const size_t cap = (size_t)2 * M * M * 9;
    int32_t *rows = malloc(cap * sizeof *rows), *cols = malloc(cap * sizeof *cols);
    double *vals = malloc(cap * sizeof *vals);
    const uint64_t shape[2] = {NODES, NODES};
    uint64_t n = 0;
    hurray_coo *whole = NULL, *mine = NULL;
    hurray_coo **parts = calloc((size_t)size, sizeof *parts);
    for (int r = 0; r < size; r++) n += triplets_of(r, scale, rows + n, cols + n, vals + n);
    {
        const int32_t *dims[2] = {rows, cols};
        hurray_triplets t = as_triplets(dims, n, vals, shape);
        const hurray_assemble_options sum = {sizeof(hurray_assemble_options), HURRAY_DUP_SUM, 0, 1};
        CHECK(hurray_coo_assemble(&t, &sum, &whole, NULL) == HURRAY_OK);
    }
    CHECK(hurray_coo_partition(whole, HURRAY_PARTITION_BOUNDARIES, (uint32_t)size, bounds, parts) ==
          HURRAY_OK);
    for (int k = 0; k < size; k++) {
        if (k == me) mine = parts[k];
        else hurray_coo_free(parts[k]);
    }
    free(parts);
    hurray_coo_free(whole);
    free(rows);
    free(cols);
    free(vals);
    return mine;
}

static int same(const hurray_coo *a, const hurray_coo *b) {
    size_t va = 0, vb = 0, ia = 0, ib = 0;
    const void *pa = hurray_coo_values(a, &va), *pb = hurray_coo_values(b, &vb);
    const uint64_t *xa = hurray_coo_indices(a, &ia), *xb = hurray_coo_indices(b, &ib);
    return va == vb && ia == ib && (va == 0 || memcmp(pa, pb, va) == 0) &&
           (ia == 0 || memcmp(xa, xb, ia) == 0) && hurray_coo_shape(a)[0] == hurray_coo_shape(b)[0];
}

static void expect(hurray_status st, hurray_status want, const char *needle) {
    const char *msg = hurray_mpi_last_error_message();
    if (st != want || (needle != NULL && strstr(msg, needle) == NULL)) {
        fprintf(stderr, "rank %d: got %s (%s), expected %s with \"%s\"\n", me,
                hurray_status_name(st), msg, hurray_status_name(want), needle ? needle : "");
        failures++;
    }
}

int main(int argc, char **argv) {
    const size_t cap = (size_t)2 * M * M * 9;
    int32_t *rows, *cols;
    double *vals, *vals2;
    const uint64_t shape[2] = {NODES, NODES};
    uint64_t n, *bounds;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rows = malloc((cap + 1) * sizeof *rows);
    cols = malloc((cap + 1) * sizeof *cols);
    vals = malloc((cap + 1) * sizeof *vals);
    vals2 = malloc(cap * sizeof *vals2);
    bounds = calloc((size_t)size + 1, sizeof *bounds);
    n = triplets_of(me, 1.0, rows, cols, vals);
    for (uint32_t own = HURRAY_MPI_ROWS_EQUAL; own <= HURRAY_MPI_ROWS_BALANCED; own++) {
        const int32_t *dims[2] = {rows, cols};
        hurray_triplets t = as_triplets(dims, n, vals, shape);
        hurray_coo *shard = NULL, *ref = NULL, *again = NULL;
        hurray_mpi_plan *plan = NULL;
        const uint64_t *parent = NULL, *offset = NULL;
        bool present = false;
        uint64_t lo, crossing = 0;
        size_t vb = 0;
        expect(hurray_mpi_assemble(&t, HURRAY_DUP_SUM, 0, own, NULL, MPI_COMM_WORLD, &shard, &plan),
               HURRAY_OK, NULL);
        if (shard == NULL) break;
        CHECK(hurray_coo_shard(shard, &parent, &offset, &present) == HURRAY_OK && present);
        CHECK(parent[0] == NODES && offset[1] == 0);
        lo = offset[0];
        MPI_Allgather(&lo, 1, MPI_UINT64_T, bounds, 1, MPI_UINT64_T, MPI_COMM_WORLD);
        bounds[size] = NODES;
        CHECK(hurray_mpi_validate(shard, MPI_COMM_WORLD, NULL) == HURRAY_OK);
        ref = reference(1.0, bounds);
        CHECK(ref != NULL && same(shard, ref));
        hurray_coo_free(ref);
        /* New values through the plan: a fresh assembly's, bit for bit. */
        for (uint64_t i = 0; i < n; i++) vals2[i] = 2.5 * vals[i];
        {
            size_t out_bytes = 0;
            void *out;
            (void)hurray_coo_values(shard, &out_bytes);
            out = malloc(out_bytes ? out_bytes : 1);
            expect(hurray_mpi_plan_apply(plan, vals2, n * sizeof(double), out, out_bytes),
                   HURRAY_OK, NULL);
            ref = reference(2.5, bounds);
            CHECK(memcmp(out, hurray_coo_values(ref, &vb), out_bytes) == 0 && vb == out_bytes);
            hurray_coo_free(ref);
            {
                hurray_triplets t2 = as_triplets(dims, n, vals2, shape);
                expect(hurray_mpi_assemble(&t2, HURRAY_DUP_SUM, 0, HURRAY_MPI_ROWS_GIVEN, bounds,
                                           MPI_COMM_WORLD, &again, NULL),
                       HURRAY_OK, NULL);
                CHECK(again != NULL &&
                      memcmp(out, hurray_coo_values(again, &vb), out_bytes) == 0);
                hurray_coo_free(again);
            }
            expect(hurray_mpi_plan_apply(plan, vals2, 8, out, out_bytes), HURRAY_ERR_BUFFER_SIZE,
                   "values_bytes is 8");
            free(out);
        }
        /* Bytes sent: the values whose rows other ranks own. */
        for (uint64_t i = 0; i < n; i++) {
            uint64_t r = (uint64_t)rows[i] - 1;
            crossing += !(bounds[me] <= r && r < bounds[me + 1]);
        }
        CHECK(hurray_mpi_plan_bytes_sent(plan) == crossing * sizeof(double));
        if (size == 1) CHECK(hurray_mpi_plan_bytes_sent(plan) == 0);
        hurray_mpi_plan_free(plan);
        hurray_coo_free(shard);
    }
    /* A duplicate across ranks under HURRAY_DUP_ERROR: rank r holds
     * (2r+1, 1) and (2r+2, 2) (1-based), the last rank also (1, 1), which
     * is rank 0's first triplet. Messages count from 1, as the triplets do.
     * Every rank learns it from row 1's owner, with
     * both triplets named as their ranks numbered them. */
    {
        int32_t dr[3], dc[3];
        double dv[3] = {1.0, 2.0, 3.0};
        const int32_t *dims[2] = {dr, dc};
        const uint64_t dshape[2] = {2 * (uint64_t)size, 2};
        uint64_t m = 2;
        hurray_coo *shard = (hurray_coo *)&failures;
        char needle[160];
        hurray_triplets t;
        dr[0] = 2 * me + 1;
        dc[0] = 1;
        dr[1] = 2 * me + 2;
        dc[1] = 2;
        if (me == size - 1) {
            dr[2] = 1;
            dc[2] = 1;
            m = 3;
        }
        t = as_triplets(dims, m, dv, dshape);
        expect(hurray_mpi_assemble(&t, HURRAY_DUP_ERROR, 0, HURRAY_MPI_ROWS_EQUAL, NULL,
                                   MPI_COMM_WORLD, &shard, NULL),
               HURRAY_ERR_DUPLICATE, "rank 0: triplet ");
        snprintf(needle, sizeof needle, "is rank %d's triplet 3", size - 1); /* 1-based */
        if (size > 1) {
            CHECK(strstr(hurray_mpi_last_error_message(), needle) != NULL);
            CHECK(strstr(hurray_mpi_last_error_message(), "is rank 0's triplet 1") != NULL);
        } else {
            /* One rank assembles its own triplets: its numbers as they are. */
            CHECK(strstr(hurray_mpi_last_error_message(), "triplet 3 duplicates triplet 1") != NULL);
        }
        CHECK(strstr(hurray_mpi_last_error_message(), "at (1, 1)") != NULL); /* 1-based */
        CHECK(shard == NULL);
    }
    /* An out-of-bounds row on the last rank. */
    {
        const int32_t *dims[2] = {rows, cols};
        hurray_coo *shard = (hurray_coo *)&failures;
        char needle[128];
        hurray_triplets t;
        int32_t keep = rows[3];
        if (me == size - 1) rows[3] = NODES + 5;
        t = as_triplets(dims, n, vals, shape);
        /* Triplet 4, counted from 1 as the triplets are. */
        snprintf(needle, sizeof needle, "rank %d: triplet 4: %scoordinate %d", size - 1,
                 size > 1 ? "row " : "", NODES + 5);
        expect(hurray_mpi_assemble(&t, HURRAY_DUP_SUM, 0, HURRAY_MPI_ROWS_EQUAL, NULL,
                                   MPI_COMM_WORLD, &shard, NULL),
               HURRAY_ERR_INDEX_OUT_OF_BOUNDS, needle);
        CHECK(shard == NULL);
        rows[3] = keep;
        /* Ranks that disagree on the policy. */
        expect(hurray_mpi_assemble(&t, me == 0 ? HURRAY_DUP_SUM : HURRAY_DUP_FIRST, 0,
                                   HURRAY_MPI_ROWS_EQUAL, NULL, MPI_COMM_WORLD, &shard, NULL),
               size > 1 ? HURRAY_ERR_INVALID_ARGUMENT : HURRAY_OK,
               size > 1 ? "differs from rank 0's" : NULL);
        if (size == 1) hurray_coo_free(shard);
    }
    /* A rank with no triplets passes n = 0 and both index arrays NULL (the
     * header allows it), with and without SKIP_NEGATIVE: the others' entries
     * are assembled, nothing is read through the NULLs. Rank 0 holds (1, 1)
     * = 2 and (2, 2) = 3 (1-based); the rest hold nothing. A pattern given
     * values is refused, as hurray_coo_assemble refuses it. */
    for (uint32_t skip = 0; skip <= HURRAY_ASSEMBLE_SKIP_NEGATIVE; skip += HURRAY_ASSEMBLE_SKIP_NEGATIVE) {
        int32_t er[2] = {1, 2}, ec[2] = {1, 2};
        double ev[2] = {2.0, 3.0};
        const uint64_t eshape[2] = {4, 4};
        hurray_coo *shard = NULL;
        uint64_t local = 0, total = 0;
        hurray_triplets t;
        memset(&t, 0, sizeof t);
        t.rank = 2;
        t.shape = eshape;
        t.index_type = HURRAY_INDEX_INT32;
        t.index_base = 1;
        t.type_tag = HURRAY_TYPE_FLOAT64;
        if (me == 0) {
            const int32_t *dims[2] = {er, ec};
            t = as_triplets(dims, 2, ev, eshape);
            t.index_base = 1;
        }
        expect(hurray_mpi_assemble(&t, HURRAY_DUP_SUM, skip, HURRAY_MPI_ROWS_EQUAL, NULL,
                                   MPI_COMM_WORLD, &shard, NULL),
               HURRAY_OK, NULL);
        if (shard != NULL) local = hurray_coo_nnz(shard);
        MPI_Allreduce(&local, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        CHECK(total == 2);
        hurray_coo_free(shard);
        shard = (hurray_coo *)&failures;
        t.type_tag = HURRAY_PATTERN;
        expect(hurray_mpi_assemble(&t, HURRAY_DUP_SUM, skip, HURRAY_MPI_ROWS_EQUAL, NULL,
                                   MPI_COMM_WORLD, &shard, NULL),
               HURRAY_ERR_BUFFER_SIZE, "type_tag HURRAY_PATTERN");
        CHECK(shard == NULL);
    }
    free(rows);
    free(cols);
    free(vals);
    free(vals2);
    free(bounds);
    {
        int all = 0;
        MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (me == 0) printf("%d ranks: %s (%d failed checks)\n", size, all ? "FAILED" : "ok", all);
        MPI_Finalize();
        return all != 0;
    }
}
