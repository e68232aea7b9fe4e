/* Distributed validation under mpirun (1, 2, 4 ranks): a 2-D Poisson
 * matrix partitioned by rows validates and reduces to the single-process
 * statistics; an overlap of boxes, a disagreement of parent shapes, an
 * out-of-bounds entry on one rank, a duplicate across ranks, a gap and a
 * NULL handle each give the same status and message on every rank; a
 * Hurray file read in row blocks (one per rank) gives the same blocks and
 * catches a file that lies about its order on every rank.
 * Exit status 0 when every check passed on this rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hurray_coo_mpi.h"

#include "mpitest.h"

#define K 30 /* grid side: K*K rows */

/* Rank 0 writes text to path; every rank waits for it. */
static void write_text(const char *path, const char *text) {
    if (me == 0) {
        FILE *fp = fopen(path, "w");
        CHECK(fp != NULL);
        if (fp != NULL) {
            fputs(text, fp);
            fclose(fp);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* hurray_mpi_read_mtx of path agrees with the one-process read on every
 * rank: the same status; on failure the one-process message (path, line,
 * column) inside the distributed one; on success this rank's row block of
 * the one-process result (ROWS_EQUAL), bit for bit. */
static void read_mtx_like_one_process(const char *path, const char *what, uint32_t policy) {
    hurray_coo *mine = (hurray_coo *)&failures, *ref = NULL;
    hurray_text_options o = {sizeof(hurray_text_options), 0, 0, 1, 0, 0};
    hurray_status want;
    char one[512];
    hurray_status got;
    o.duplicates_policy = policy;
    want = hurray_coo_read_mtx_file(path, &o, NULL, &ref);
    snprintf(one, sizeof one, "%s", hurray_last_error_message());
    got = hurray_mpi_read_mtx(path, policy, 0, HURRAY_MPI_ROWS_EQUAL, NULL, MPI_COMM_WORLD, NULL,
                              &mine);
    if (got != want || (want != HURRAY_OK && strstr(hurray_mpi_last_error_message(), one) == NULL)) {
        fprintf(stderr, "rank %d: %s: distributed %s (%s), one process %s (%s)\n", me, what,
                hurray_status_name(got), hurray_mpi_last_error_message(), hurray_status_name(want),
                one);
        failures++;
    }
    if (want != HURRAY_OK) {
        CHECK(mine == NULL);
    } else if (mine != NULL && got == HURRAY_OK) {
        hurray_coo **parts = calloc((size_t)size, sizeof *parts);
        size_t a = 0, b = 0, va = 0, vb = 0;
        CHECK(hurray_coo_partition(ref, HURRAY_PARTITION_EQUAL_ROWS, (uint32_t)size, NULL, parts) ==
              HURRAY_OK);
        CHECK(hurray_coo_nnz(mine) == hurray_coo_nnz(parts[me]));
        {
            const void *ia = hurray_coo_indices(mine, &a), *ib = hurray_coo_indices(parts[me], &b);
            const void *xa = hurray_coo_values(mine, &va), *xb = hurray_coo_values(parts[me], &vb);
            CHECK(a == b && (a == 0 || memcmp(ia, ib, a) == 0));
            CHECK(va == vb && (va == 0 || memcmp(xa, xb, va) == 0));
        }
        for (int k = 0; k < size; k++) hurray_coo_free(parts[k]);
        free(parts);
        hurray_coo_free(mine);
    }
    hurray_coo_free(ref);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The K^2 x K^2 five-point Laplacian, sorted, built on every rank. */
static hurray_coo *poisson(void) {
    const uint64_t n = K * K, shape[2] = {K * K, K * K};
    double *v = malloc(5 * n * sizeof *v);
    uint64_t *idx = malloc(10 * n * sizeof *idx);
    uint64_t r, e = 0;
    hurray_coo *coo = NULL;
    for (r = 0; r < n; r++) {
        const int64_t cols[5] = {(int64_t)r - K, (int64_t)r - 1, (int64_t)r, (int64_t)r + 1,
                                 (int64_t)r + K};
        int c;
        for (c = 0; c < 5; c++) {
            if (cols[c] < 0 || cols[c] >= (int64_t)n) continue;
            if ((c == 1 && r % K == 0) || (c == 3 && r % K == K - 1)) continue;
            idx[2 * e] = r;
            idx[2 * e + 1] = (uint64_t)cols[c];
            v[e] = c == 2 ? 4.0 + (double)r * 1e-3 : -1.0;
            e++;
        }
    }
    if (mpitest_create(HURRAY_TYPE_FLOAT64, 2, shape, e, true, v, e * sizeof *v, idx, 2 * e * sizeof *idx, HURRAY_COO_COPY, NULL, NULL, &coo) != HURRAY_OK)
        coo = NULL;
    free(v);
    free(idx);
    return coo;
}

/* This rank's part of `whole` cut by `mode`. */
static hurray_coo *my_part(const hurray_coo *whole, uint32_t mode) {
    hurray_coo **parts = calloc((size_t)size, sizeof *parts);
    hurray_coo *mine = NULL;
    int k;
    if (hurray_coo_partition(whole, mode, (uint32_t)size, NULL, parts) == HURRAY_OK) {
        for (k = 0; k < size; k++) {
            if (k == me) mine = parts[k];
            else hurray_coo_free(parts[k]);
        }
    }
    free(parts);
    return mine;
}

/* A copy of `part` with its box moved to `offset` and, when `shape` is
 * not NULL, a different local shape / parent. Permissive when asked. */
static hurray_coo *reshard(const hurray_coo *part, const uint64_t *offset, const uint64_t *shape,
                           const uint64_t *parent, uint32_t flags) {
    const uint64_t *p = NULL, *o = NULL;
    bool present = false;
    size_t vb = 0, ib = 0;
    const void *v = hurray_coo_values(part, &vb);
    const uint64_t *idx = hurray_coo_indices(part, &ib);
    hurray_coo *out = NULL;
    hurray_coo_shard(part, &p, &o, &present);
    if (mpitest_create(HURRAY_TYPE_FLOAT64, 2, shape ? shape : hurray_coo_shape(part), hurray_coo_nnz(part), true, v, vb, idx, ib, HURRAY_COO_COPY | flags, parent ? parent : p, offset ? offset : o, &out) != HURRAY_OK) {
        fprintf(stderr, "rank %d: reshard: %s\n", me, hurray_last_error_message());
        return NULL;
    }
    return out;
}

/* Validate collectively and check the status and message on this rank. */
static void expect(const hurray_coo *local, hurray_status want, const char *needle, int culprit) {
    hurray_mpi_report rep;
    hurray_status st = hurray_mpi_validate(local, MPI_COMM_WORLD, &rep);
    const char *msg = hurray_mpi_last_error_message();
    if (st != want || (needle != NULL && strstr(msg, needle) == NULL)) {
        fprintf(stderr, "rank %d: got %s (%s), expected %s with \"%s\"\n", me,
                hurray_status_name(st), msg, hurray_status_name(want), needle ? needle : "");
        failures++;
    }
    if (want != HURRAY_OK) CHECK(rep.failing_rank == culprit);
}

int main(int argc, char **argv) {
    hurray_coo *whole, *part, *bad;
    hurray_mpi_report rep;
    hurray_statistics s;
    char needle[128];
    int total = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    whole = poisson();
    CHECK(whole != NULL);
    hurray_coo_statistics(whole, &s);

    /* Row blocks, equal and balanced: valid, and the reduced statistics
     * are the single-process ones. */
    for (uint32_t mode = 0; mode < 2; mode++) {
        part = my_part(whole, mode);
        CHECK(part != NULL);
        CHECK(hurray_mpi_validate(part, MPI_COMM_WORLD, &rep) == HURRAY_OK);
        CHECK(rep.global_nnz == hurray_coo_nnz(whole) && rep.ranks == size);
        CHECK(rep.rank == 2 && rep.parent_shape[0] == K * K && rep.failing_rank == -1);
        CHECK(rep.statistics.computed_mask == s.computed_mask);
        CHECK(rep.statistics.value_min == s.value_min && rep.statistics.value_max == s.value_max);
        CHECK(fabs(rep.statistics.value_mean - s.value_mean) <= 1e-12 * fabs(s.value_mean));
        CHECK(fabs(rep.statistics.value_stddev - s.value_stddev) <= 1e-9 * s.value_stddev);
        CHECK(fabs(rep.statistics.sparsity_ratio - s.sparsity_ratio) <= 1e-15);
        hurray_coo_free(part);
    }
    part = my_part(whole, HURRAY_PARTITION_EQUAL_ROWS);

    /* An out-of-bounds entry on the last rank (a permissive handle). */
    {
        size_t vb = 0, ib = 0;
        const void *v = hurray_coo_values(part, &vb);
        const uint64_t *idx = hurray_coo_indices(part, &ib);
        uint64_t *copy = malloc(ib);
        const uint64_t *p = NULL, *o = NULL;
        bool present = false;
        memcpy(copy, idx, ib);
        if (me == size - 1) copy[1] = K * K + 3; /* entry 0, column */
        hurray_coo_shard(part, &p, &o, &present);
        CHECK(mpitest_create(HURRAY_TYPE_FLOAT64, 2, hurray_coo_shape(part), hurray_coo_nnz(part), true, v, vb, copy, ib, HURRAY_COO_COPY | HURRAY_COO_PERMISSIVE, p, o, &bad) == HURRAY_OK);
        snprintf(needle, sizeof needle, "rank %d: entry 0 at (", size - 1);
        expect(bad, HURRAY_ERR_INDEX_OUT_OF_BOUNDS, needle, size - 1);
        CHECK(strstr(hurray_mpi_last_error_message(), "coordinate 903 in dimension 1 is out of "
                                                       "bounds") != NULL);
        hurray_coo_free(bad);
        free(copy);
        total++;
    }
    /* A NULL handle on rank 0. */
    expect(me == 0 ? NULL : part, HURRAY_ERR_NULL_POINTER, "rank 0: local is NULL", 0);
    if (size > 1) {
        /* The last rank's parent is one row taller. */
        const uint64_t taller[2] = {K * K + 1, K * K};
        bad = me == size - 1 ? reshard(part, NULL, NULL, taller, 0) : part;
        snprintf(needle, sizeof needle, "rank %d's shard is part of a %d x %d parent", size - 1,
                 K * K + 1, K * K);
        expect(bad, HURRAY_ERR_INVALID_SHAPE, needle, size - 1);
        if (bad != part) hurray_coo_free(bad);
        /* Rank 1 holds rank 0's box again: the same entries on two ranks. */
        {
            hurray_coo *zero = NULL;
            hurray_coo **parts = calloc((size_t)size, sizeof *parts);
            hurray_coo_partition(whole, HURRAY_PARTITION_EQUAL_ROWS, (uint32_t)size, NULL, parts);
            zero = parts[0];
            for (int k = 1; k < size; k++) hurray_coo_free(parts[k]);
            free(parts);
            bad = me == 1 ? zero : part;
            expect(bad, HURRAY_ERR_INVALID_SHAPE,
                   "the boxes of rank 0 (offset 0 x 0) and rank 1 (offset 0 x 0) overlap: entries "
                   "in the overlap would be duplicates across ranks",
                   1);
            hurray_coo_free(zero);
        }
        /* Rank 1's box slides down one row into rank 2's (or past the end). */
        {
            const uint64_t *p = NULL, *o = NULL;
            bool present = false;
            uint64_t off[2];
            hurray_coo_shard(part, &p, &o, &present);
            off[0] = o[0] + (me == 1 && size > 2 ? 1 : 0);
            off[1] = 0;
            bad = me == 1 && size > 2 ? reshard(part, off, NULL, NULL, 0) : part;
            if (size > 2) expect(bad, HURRAY_ERR_INVALID_SHAPE, "overlap", 2);
            if (bad != part) hurray_coo_free(bad);
        }
    }
    /* The last rank's box one row short: a row of the parent is nobody's. */
    {
        const uint64_t *sh = hurray_coo_shape(part);
        const uint64_t shorter[2] = {sh[0] - 1, sh[1]};
        size_t vb = 0, ib = 0;
        /* Only the rows that remain: drop the last row's entries. */
        const void *v = hurray_coo_values(part, &vb);
        const uint64_t *idx = hurray_coo_indices(part, &ib);
        uint64_t n = hurray_coo_nnz(part), keep = n;
        const uint64_t *p = NULL, *o = NULL;
        bool present = false;
        hurray_coo_shard(part, &p, &o, &present);
        while (keep > 0 && idx[2 * (keep - 1)] == sh[0] - 1) keep--;
        if (me == size - 1) {
            CHECK(mpitest_create(HURRAY_TYPE_FLOAT64, 2, shorter, keep, true, v, keep * sizeof(double), idx, 2 * keep * sizeof(uint64_t), HURRAY_COO_COPY, p, o, &bad) == HURRAY_OK);
        } else {
            bad = part;
        }
        snprintf(needle, sizeof needle, "the %d shards' boxes cover %d of the %d elements", size,
                 K * K * K * K - K * K, K * K * K * K);
        expect(bad, HURRAY_ERR_INVALID_SHAPE, needle, -1);
        if (bad != part) hurray_coo_free(bad);
    }
    /* Parallel reading of a Hurray file: each rank reads its row block;
     * the blocks are the single-process tensor's, and validate together. */
    {
        char path[256];
        hurray_file_writer *w = NULL;
        hurray_coo *mine = NULL, *lax = NULL;
        hurray_file *f = NULL;
        unsigned long long job = 0;
        if (me == 0) job = (unsigned long long)getpid();
        MPI_Bcast(&job, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        snprintf(path, sizeof path, "/tmp/hurray-mpi-read-%llu.hrry", job);
        if (me == 0) {
            CHECK(hurray_file_writer_create(path, 0, 0, &w) == HURRAY_OK);
            CHECK(hurray_file_writer_add(w, "A", whole) == HURRAY_OK);
            CHECK(hurray_file_writer_finish(w) == HURRAY_OK);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (uint32_t own = HURRAY_MPI_ROWS_EQUAL; own <= HURRAY_MPI_ROWS_BALANCED; own++) {
            uint64_t lo, *bounds = calloc((size_t)size + 1, sizeof *bounds);
            hurray_coo **parts = calloc((size_t)size, sizeof *parts);
            const uint64_t *p = NULL, *o = NULL;
            bool present = false;
            size_t a = 0, b = 0;
            CHECK(hurray_mpi_read_hrry(path, "A", own, NULL, MPI_COMM_WORLD, &mine) == HURRAY_OK);
            if (mine == NULL) {
                fprintf(stderr, "rank %d: %s\n", me, hurray_mpi_last_error_message());
                break;
            }
            CHECK(hurray_mpi_validate(mine, MPI_COMM_WORLD, &rep) == HURRAY_OK);
            CHECK(rep.global_nnz == hurray_coo_nnz(whole));
            hurray_coo_shard(mine, &p, &o, &present);
            lo = o[0];
            MPI_Allgather(&lo, 1, MPI_UINT64_T, bounds, 1, MPI_UINT64_T, MPI_COMM_WORLD);
            bounds[size] = K * K;
            CHECK(hurray_coo_partition(whole, HURRAY_PARTITION_BOUNDARIES, (uint32_t)size, bounds,
                                       parts) == HURRAY_OK);
            CHECK(memcmp(hurray_coo_indices(mine, &a), hurray_coo_indices(parts[me], &b), a) == 0 &&
                  a == b);
            for (int k = 0; k < size; k++) hurray_coo_free(parts[k]);
            free(parts);
            free(bounds);
            hurray_coo_free(mine);
            mine = NULL;
        }
        /* A file that lies about its order: two entries swapped in place.
         * Some rank's block fails, and every rank says so. */
        if (me == 0) {
            hurray_file_tensor info;
            FILE *fp;
            uint64_t e[4];
            CHECK(hurray_file_open(path, HURRAY_FILE_READ_INTO_MEMORY, &f) == HURRAY_OK);
            CHECK(hurray_file_tensor_info(f, 0, &info) == HURRAY_OK);
            CHECK(hurray_file_get(f, "A", HURRAY_COO_PERMISSIVE, &lax) == HURRAY_OK);
            {
                size_t vb = 0;
                long at;
                (void)hurray_coo_values(lax, &vb);
                at = (long)(info.data_offset + (vb + 4095) / 4096 * 4096 + 16 * 100);
                hurray_coo_free(lax);
                hurray_file_close(f);
                fp = fopen(path, "r+b");
                fseek(fp, at, SEEK_SET);
                CHECK(fread(e, 8, 4, fp) == 4);
                fseek(fp, at, SEEK_SET);
                fwrite(e + 2, 8, 2, fp); /* entry 101 where entry 100 was */
                fwrite(e, 8, 2, fp);
                fclose(fp);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        {
            hurray_status st = hurray_mpi_read_hrry(path, "A", HURRAY_MPI_ROWS_EQUAL, NULL,
                                                    MPI_COMM_WORLD, &mine);
            CHECK(st == HURRAY_ERR_NOT_SORTED && mine == NULL);
            CHECK(strstr(hurray_mpi_last_error_message(), "entry 101 at (") != NULL);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) remove(path);
    }
    /* Parallel reading of a Matrix Market file: a symmetric file (lower
     * triangle stored, a comment in the header), each rank parsing its
     * byte range; the result is the one-process read, cut the same way. */
    {
        char path[200];
        unsigned long long job = 0, entry_lines = 0;
        hurray_coo *mine = NULL, *ref = NULL;
        uint32_t sym = 99;
        const uint64_t n = K * K;
        if (me == 0) job = (unsigned long long)getpid();
        MPI_Bcast(&job, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        snprintf(path, sizeof path, "/tmp/hurray-mpi-read-%llu.mtx", job);
        if (me == 0) {
            FILE *fp = fopen(path, "w");
            uint64_t r, lines = 0;
            for (r = 0; r < n; r++) lines += 1 + (r >= 1 && r % K != 0) + (r >= K);
            entry_lines = (unsigned long long)lines;
            fprintf(fp, "%%%%MatrixMarket matrix coordinate real symmetric\n%% a 2-D Laplacian\n");
            fprintf(fp, "%llu %llu %llu\n", (unsigned long long)n, (unsigned long long)n,
                    (unsigned long long)lines);
            for (r = 0; r < n; r++) {
                if (r >= K) fprintf(fp, "%llu %llu -1\n", (unsigned long long)r + 1, (unsigned long long)(r - K) + 1);
                if (r >= 1 && r % K != 0) fprintf(fp, "%llu %llu -1\n", (unsigned long long)r + 1, (unsigned long long)r);
                fprintf(fp, "%llu %llu %.17g\n", (unsigned long long)r + 1, (unsigned long long)r + 1, 4.0 + (double)r * 1e-3);
            }
            fclose(fp);
        }
        MPI_Bcast(&entry_lines, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        CHECK(hurray_mpi_read_mtx(path, HURRAY_DUP_ERROR, 0, HURRAY_MPI_ROWS_EQUAL, NULL,
                                  MPI_COMM_WORLD, &sym, &mine) == HURRAY_OK);
        if (mine == NULL) fprintf(stderr, "rank %d: %s\n", me, hurray_mpi_last_error_message());
        CHECK(sym == HURRAY_MTX_SYMMETRIC);
        CHECK(hurray_coo_read_mtx_file(path, NULL, NULL, &ref) == HURRAY_OK);
        if (mine != NULL && ref != NULL) {
            hurray_coo **parts = calloc((size_t)size, sizeof *parts);
            size_t a = 0, b = 0, va = 0, vb = 0;
            CHECK(hurray_mpi_validate(mine, MPI_COMM_WORLD, &rep) == HURRAY_OK);
            CHECK(rep.global_nnz == hurray_coo_nnz(ref) && hurray_coo_nnz(ref) == hurray_coo_nnz(whole));
            CHECK(hurray_coo_partition(ref, HURRAY_PARTITION_EQUAL_ROWS, (uint32_t)size, NULL, parts) ==
                  HURRAY_OK);
            CHECK(memcmp(hurray_coo_indices(mine, &a), hurray_coo_indices(parts[me], &b), a) == 0 && a == b);
            CHECK(memcmp(hurray_coo_values(mine, &va), hurray_coo_values(parts[me], &vb), va) == 0 && va == vb);
            for (int k = 0; k < size; k++) hurray_coo_free(parts[k]);
            free(parts);
        }
        hurray_coo_free(mine);
        hurray_coo_free(ref);
        mine = NULL;
        /* A line past the declared entries: every rank names its file line. */
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            FILE *fp = fopen(path, "a");
            fprintf(fp, "3 2 x\n");
            fclose(fp);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        {
            char needle[512];
            hurray_status st = hurray_mpi_read_mtx(path, HURRAY_DUP_ERROR, 0,
                                                   HURRAY_MPI_ROWS_EQUAL, NULL, MPI_COMM_WORLD,
                                                   NULL, &mine);
            CHECK(st == HURRAY_ERR_PARSE && mine == NULL);
            /* 3 header lines, the entry lines, then the extra one (beyond
             * the size line's count, as the one-process read says). */
            snprintf(needle, sizeof needle,
                     "%s: line %llu, column 1: one entry more than the %llu the size line (line 3) "
                     "declares (found '3')",
                     path, entry_lines + 4, entry_lines);
            if (strstr(hurray_mpi_last_error_message(), needle) == NULL)
                fprintf(stderr, "rank %d: %s lacks %s\n", me, hurray_mpi_last_error_message(), needle);
            CHECK(strstr(hurray_mpi_last_error_message(), needle) != NULL);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) remove(path);
    }
    /* Matrix Market files where the distributed read once differed from
     * the one-process read: ranks whose byte range holds no entry line
     * (0 entries on 2 ranks, 3 on 4), comment lines between entries, a
     * size line declaring one entry more or one fewer than the file holds,
     * a bad token within the declared entries. */
    {
        char path[200];
        unsigned long long job = 0;
        static const char *const cases[][2] = {
            {"no entries", "%%MatrixMarket matrix coordinate real general\n4 4 0\n"},
            {"three entries", "%%MatrixMarket matrix coordinate real general\n4 4 3\n"
                              "1 1 1\n2 2 2\n4 3 3\n"},
            {"comments between entries",
             "%%MatrixMarket matrix coordinate real general\n% head\n4 4 4\n1 1 1\n% one\n"
             "2 2 2\n  % two, indented\n\n3 1 5\n% three\n4 4 4\n% tail\n"},
            {"one entry more than declared", "%%MatrixMarket matrix coordinate real general\n"
                                             "4 4 3\n1 1 1\n2 2 2\n% c\n3 3 3\n4 4 4\n"},
            {"one entry fewer than declared", "%%MatrixMarket matrix coordinate real general\n"
                                              "4 4 5\n1 1 1\n2 2 2\n3 3 3\n4 4 4\n"},
            {"a bad token, and one entry more", "%%MatrixMarket matrix coordinate real general\n"
                                                "4 4 2\n1 1 1\n2 2 x\n3 3 3\n"},
            {"an extra entry that is also bad", "%%MatrixMarket matrix coordinate real general\n"
                                                "4 4 2\n1 1 1\n2 2 2\n3 3 x\n"},
            {"symmetric, comments", "%%MatrixMarket matrix coordinate real symmetric\n4 4 3\n"
                                    "1 1 1\n% c\n2 1 2\n4 3 3\n"},
        };
        /* Duplicates under HURRAY_DUP_ERROR, the two lines far apart (in
         * different ranks' byte ranges from 2 ranks on): the same message
         * as one process, path and file lines. */
        static const char *const dups[][2] = {
            {"a duplicate across ranges", "%%MatrixMarket matrix coordinate real general\n"
                                          "% c\n4 4 6\n3 2 1\n1 1 1\n2 2 2\n% c\n"
                                          "4 4 4\n4 1 3\n3 2 5\n"},
            {"a mirrored duplicate across ranges",
             "%%MatrixMarket matrix coordinate real symmetric\n4 4 5\n2 1 1\n3 3 2\n"
             "4 4 3\n4 3 3\n1 2 5\n"},
        };
        if (me == 0) job = (unsigned long long)getpid();
        MPI_Bcast(&job, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        snprintf(path, sizeof path, "/tmp/hurray-mpi-edges-%llu.mtx", job);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            write_text(path, cases[c][1]);
            read_mtx_like_one_process(path, cases[c][0], HURRAY_DUP_SUM);
        }
        for (size_t c = 0; c < sizeof dups / sizeof dups[0]; c++) {
            write_text(path, dups[c][1]);
            read_mtx_like_one_process(path, dups[c][0], HURRAY_DUP_ERROR);
            read_mtx_like_one_process(path, dups[c][0], HURRAY_DUP_MAX);
        }
        if (me == 0) remove(path);
    }
    /* Given row boundaries are checked when reading a Hurray file, as
     * hurray_mpi_assemble checks them: one row short, or not from row 0. */
    {
        char path[200];
        unsigned long long job = 0;
        uint64_t *b = calloc((size_t)size + 1, sizeof *b);
        hurray_coo *mine = (hurray_coo *)&failures;
        if (me == 0) job = (unsigned long long)getpid();
        MPI_Bcast(&job, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        snprintf(path, sizeof path, "/tmp/hurray-mpi-bounds-%llu.hrry", job);
        if (me == 0) {
            hurray_file_writer *w = NULL;
            CHECK(hurray_file_writer_create(path, 0, 0, &w) == HURRAY_OK);
            CHECK(hurray_file_writer_add(w, "A", whole) == HURRAY_OK);
            CHECK(hurray_file_writer_finish(w) == HURRAY_OK);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k <= size; k++) b[k] = (uint64_t)K * K * (uint64_t)k / (uint64_t)size;
        CHECK(hurray_mpi_read_hrry(path, "A", HURRAY_MPI_ROWS_GIVEN, b, MPI_COMM_WORLD, &mine) ==
              HURRAY_OK);
        hurray_coo_free(mine);
        b[size] = K * K - 1;
        CHECK(hurray_mpi_read_hrry(path, "A", HURRAY_MPI_ROWS_GIVEN, b, MPI_COMM_WORLD, &mine) ==
              HURRAY_ERR_INVALID_ARGUMENT);
        CHECK(mine == NULL);
        CHECK(strstr(hurray_mpi_last_error_message(), "end at the row extent 900") != NULL);
        b[size] = K * K;
        b[0] = 1;
        CHECK(hurray_mpi_read_hrry(path, "A", HURRAY_MPI_ROWS_GIVEN, b, MPI_COMM_WORLD, &mine) ==
              HURRAY_ERR_INVALID_ARGUMENT);
        CHECK(mine == NULL);
        free(b);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) remove(path);
    }
    /* And a valid one again afterwards: no state left over. */
    CHECK(hurray_mpi_validate(part, MPI_COMM_WORLD, NULL) == HURRAY_OK);
    CHECK(hurray_mpi_last_error_message()[0] == '\0');
    hurray_coo_free(part);
    hurray_coo_free(whole);
    {
        int all = 0;
        MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (me == 0) printf("%d ranks: %s (%d failed checks)\n", size, all ? "FAILED" : "ok", all);
        MPI_Finalize();
        return all != 0;
    }
}
