/* libhurray_coo_mpi: distributed validation of sharded COO tensors
 * (hurray_mpi_validate). See hurray_coo_mpi.h for the contract. */
#define _POSIX_C_SOURCE 200112L
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What each rank tells every other: fixed size, sent as bytes (every rank
 * runs the same build of this library, so the layout agrees). */
typedef struct record {
    int32_t status;
    uint32_t rank;
    uint8_t type_tag;
    uint8_t is_shard;
    uint8_t pad[6];
    uint64_t nnz;
    uint64_t parent[HURRAY_MAX_RANK];
    uint64_t offset[HURRAY_MAX_RANK];
    uint64_t shape[HURRAY_MAX_RANK];
    hurray_statistics stats;
    char msg[MSG_LEN];
} record;

static void local_record(const hurray_coo *local, record *r) {
    const uint64_t *parent = NULL, *offset = NULL, *shape;
    bool present = false;
    uint32_t d;
    memset(r, 0, sizeof *r);
    if (local == NULL) {
        r->status = HURRAY_ERR_NULL_POINTER;
        snprintf(r->msg, MSG_LEN, "local is NULL");
        return;
    }
    r->status = hurray_coo_validate(local, 1);
    if (r->status != HURRAY_OK) {
        copy_text(r->msg, MSG_LEN, hurray_last_error_message());
    }
    r->rank = hurray_coo_rank(local);
    r->type_tag = hurray_coo_type_tag(local);
    r->nnz = hurray_coo_nnz(local);
    shape = hurray_coo_shape(local);
    if (hurray_coo_shard(local, &parent, &offset, &present) != HURRAY_OK) present = false;
    r->is_shard = present;
    for (d = 0; d < r->rank && d < HURRAY_MAX_RANK; d++) {
        r->shape[d] = shape[d];
        r->parent[d] = present ? parent[d] : shape[d];
        r->offset[d] = present ? offset[d] : 0;
    }
    if (r->status == HURRAY_OK && hurray_coo_statistics(local, &r->stats) != HURRAY_OK) {
        memset(&r->stats, 0, sizeof r->stats);
    }
}

static void shape_text(char *buf, size_t n, const uint64_t *s, uint32_t rank) {
    size_t at = 0;
    uint32_t d;
    buf[0] = '\0';
    for (d = 0; d < rank && at + 24 < n; d++) {
        at += (size_t)snprintf(buf + at, n - at, d ? " x %llu" : "%llu", (unsigned long long)s[d]);
    }
}

static int boxes_overlap(const record *a, const record *b) {
    uint32_t d;
    for (d = 0; d < a->rank; d++) {
        uint64_t la = a->offset[d], ha = a->offset[d] + a->shape[d];
        uint64_t lb = b->offset[d], hb = b->offset[d] + b->shape[d];
        if (!(la < hb && lb < ha)) return 0;
    }
    return 1;
}

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 wide;
#else
typedef long double wide;
#endif

/* The element count of a box, exactly when it fits (else *exact = 0). */
static wide exact_volume(const uint64_t *s, uint32_t rank, int *exact) {
    wide v = 1;
    uint32_t d;
    for (d = 0; d < rank; d++) {
        if (s[d] != 0 && v > ((wide)-1) / s[d]) *exact = 0;
        v *= s[d];
    }
    return v;
}

static double volume(const uint64_t *s, uint32_t rank) {
    double v = 1.0;
    uint32_t d;
    for (d = 0; d < rank; d++) v *= (double)s[d];
    return v;
}

/* The parent's statistics from every rank's own (each over its box). */
static void reduce_statistics(const record *all, int n, hurray_statistics *out) {
    const uint32_t range = HURRAY_STAT_VALUE_RANGE, moments = HURRAY_STAT_VALUE_STATS;
    uint32_t mask = HURRAY_STAT_NNZ | HURRAY_STAT_NAN_INF | range | moments;
    double total = volume(all[0].parent, all[0].rank), mean = 0.0, m2 = 0.0;
    int i, any = 0;
    memset(out, 0, sizeof *out);
    for (i = 0; i < n; i++) out->nnz += all[i].nnz;
    if (total > 0) {
        mask |= HURRAY_STAT_SPARSITY;
        out->sparsity_ratio = 1.0 - (double)out->nnz / total;
    }
    for (i = 0; i < n; i++) {
        const hurray_statistics *s = &all[i].stats;
        double v = volume(all[i].shape, all[i].rank);
        if (v == 0) continue;
        if (!(s->computed_mask & HURRAY_STAT_NAN_INF)) mask &= ~(uint32_t)HURRAY_STAT_NAN_INF;
        out->has_nan |= s->has_nan;
        out->has_inf |= s->has_inf;
        if (!(s->computed_mask & range)) {
            mask &= ~range;
        } else if (!any) {
            out->value_min = s->value_min;
            out->value_max = s->value_max;
        } else {
            out->value_min = fmin(out->value_min, s->value_min);
            out->value_max = fmax(out->value_max, s->value_max);
        }
        if (!(s->computed_mask & moments) || s->has_nan) mask &= ~moments;
        mean += v * s->value_mean;
        any = 1;
    }
    if (!any) mask &= ~(range | moments | (uint32_t)HURRAY_STAT_NAN_INF);
    if (mask & range) out->value_abs_max = fmax(fabs(out->value_min), fabs(out->value_max));
    if (mask & moments) {
        mean /= total;
        for (i = 0; i < n; i++) {
            const hurray_statistics *s = &all[i].stats;
            double v = volume(all[i].shape, all[i].rank), dm = s->value_mean - mean;
            if (v == 0) continue;
            m2 += v * (s->value_stddev * s->value_stddev + dm * dm);
        }
        out->value_mean = mean;
        out->value_stddev = sqrt(m2 / total);
        if (!isfinite(out->value_mean) || !isfinite(out->value_stddev)) mask &= ~moments;
    }
    out->computed_mask = mask;
}

/* Every rank's record, into *out (size of them). Every rank reaches the
 * allgather or none: they agree first on whether each could allocate its
 * receive buffer. Collective. */
static hurray_status gather_records(const record *mine, int size, MPI_Comm comm, record **out) {
    record *all = (record *)calloc((size_t)size, sizeof *all);
    int ok = all != NULL, all_ok = 0;
    *out = NULL;
    if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
        free(all);
        return fail(HURRAY_ERR_INTERNAL, "MPI_Allreduce failed");
    }
    if (!all_ok) {
        free(all);
        return fail(HURRAY_ERR_ALLOC,
                    "a rank cannot allocate %d records of %d bytes for the allgather", size,
                    (int)sizeof(record));
    }
    if (MPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE, comm) !=
        MPI_SUCCESS) {
        free(all);
        return fail(HURRAY_ERR_INTERNAL, "MPI_Allgather failed");
    }
    *out = all;
    return HURRAY_OK;
}

/* The first rank whose shard failed its own checks, or that differs from
 * rank 0 in element type, rank or parent shape, into *failing (-1 for
 * none); the status and message say why. Every rank decides from the same
 * bytes. */
static hurray_status check_agreement(const record *all, int size, int *failing) {
    char a[256], b[256];
    int i;
    for (i = 0; i < size; i++) {
        if (all[i].status != HURRAY_OK) {
            *failing = i;
            return fail(all[i].status, "rank %d: %s", i, all[i].msg);
        }
    }
    for (i = 1; i < size; i++) {
        *failing = i;
        if (all[i].type_tag != all[0].type_tag)
            return fail(HURRAY_ERR_INVALID_TYPE,
                        "rank %d holds element type 0x%02X, rank 0 holds 0x%02X: the shards of "
                        "one tensor share its type",
                        i, all[i].type_tag, all[0].type_tag);
        if (all[i].rank != all[0].rank)
            return fail(HURRAY_ERR_RANK_MISMATCH,
                        "rank %d holds a rank-%u shard, rank 0 a rank-%u shard", i, all[i].rank,
                        all[0].rank);
        if (memcmp(all[i].parent, all[0].parent, all[0].rank * sizeof(uint64_t)) != 0) {
            shape_text(a, sizeof a, all[i].parent, all[i].rank);
            shape_text(b, sizeof b, all[0].parent, all[0].rank);
            return fail(HURRAY_ERR_INVALID_SHAPE,
                        "rank %d's shard is part of a %s parent, rank 0's of a %s parent", i, a,
                        b);
        }
    }
    *failing = -1;
    return HURRAY_OK;
}

/* The boxes are pairwise disjoint and cover the parent exactly (their
 * volumes add up to its volume: exact integers when they fit 128 bits);
 * *failing gets the second rank of an overlapping pair. */
static hurray_status check_boxes(const record *all, int size, int *failing) {
    char a[256], b[256];
    double covered = 0.0, whole;
    wide covered_exact = 0;
    int exact = 1, i, j;
    for (i = 0; i < size; i++) {
        for (j = i + 1; j < size; j++) {
            if (boxes_overlap(&all[i], &all[j])) {
                shape_text(a, sizeof a, all[i].offset, all[i].rank);
                shape_text(b, sizeof b, all[j].offset, all[j].rank);
                *failing = j;
                return fail(HURRAY_ERR_INVALID_SHAPE,
                            "the boxes of rank %d (offset %s) and rank %d (offset %s) overlap: "
                            "entries in the overlap would be duplicates across ranks",
                            i, a, j, b);
            }
        }
        covered += volume(all[i].shape, all[i].rank);
        covered_exact += exact_volume(all[i].shape, all[i].rank, &exact);
    }
    whole = volume(all[0].parent, all[0].rank);
    if (exact ? covered_exact != exact_volume(all[0].parent, all[0].rank, &exact)
              : covered != whole) {
        shape_text(a, sizeof a, all[0].parent, all[0].rank);
        return fail(HURRAY_ERR_INVALID_SHAPE,
                    "the %d shards' boxes cover %.17g of the %.17g elements of the %s parent: "
                    "shards must cover the parent exactly",
                    size, covered, whole, a);
    }
    return HURRAY_OK;
}

hurray_status hurray_mpi_validate(const hurray_coo *local, MPI_Comm comm, hurray_mpi_report *out) {
    record mine, *all = NULL;
    int size = 0, me = 0, failing = -1;
    uint32_t d;
    hurray_status st;
    last_message[0] = '\0';
    if (out != NULL) {
        memset(out, 0, sizeof *out);
        out->failing_rank = -1;
    }
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &me) != MPI_SUCCESS)
        return fail(HURRAY_ERR_INTERNAL, "MPI_Comm_size or MPI_Comm_rank failed");
    local_record(local, &mine);
    if ((st = gather_records(&mine, size, comm, &all)) != HURRAY_OK) return st;
    st = check_agreement(all, size, &failing);
    if (st == HURRAY_OK) st = check_boxes(all, size, &failing);
    if (out != NULL) out->failing_rank = failing;
    if (st == HURRAY_OK && out != NULL) {
        out->rank = all[0].rank;
        for (d = 0; d < all[0].rank; d++) out->parent_shape[d] = all[0].parent[d];
        out->ranks = size;
        reduce_statistics(all, size, &out->statistics);
        out->global_nnz = out->statistics.nnz;
    }
    free(all);
    return st;
}
